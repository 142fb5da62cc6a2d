//! A lost device: the renderer notices it ([`RenderError::DeviceLost`]) and, given a new
//! backend, makes everything it owns on the GPU again from what it keeps on the CPU
//! ([`Renderer::recover`]).
//!
//! What it keeps for this: the scene (objects, transforms, bounds), where each mesh sits
//! in the shared buffers, each texture's size, each shader's WGSL and declarations, each
//! material's properties, keywords and texture, the frame graph, and the data of the
//! meshes and textures made with `CpuCopy::Keep`. What it makes again: the fixed buffers,
//! layouts and samplers (`gpu.rs`), the mesh buffers (kept meshes written into them), the
//! textures (kept texels written), the materials' bind groups; shader variants, pipelines
//! and display lists compile again on first use; the plan (targets, fullscreen pipelines)
//! is built again by the next frame. The data of every other mesh and texture the engine
//! supplies again (`copies.rs`: `RecoverStats::needs_data`).

use std::sync::Arc;
use std::time::Instant;

use switchyard_backend::{Backend, CreateError, Resource};

use super::copies::MeshCopy;
use super::gpu::FrameResources;
use super::groups::MaterialGroups;
use super::Renderer;
use crate::error::{InitError, RenderError, ResourceError};
use crate::gpu_buffer::GrowBuffer;
use crate::gpu_buffer::{buffer, Made};
use crate::submit::SubmitThread;

impl<B: Backend> Renderer<B> {
    /// Replaces the backend — after a lost device ([`RenderError::DeviceLost`]), or to move
    /// to another adapter — and makes everything the renderer owns on the GPU again on the
    /// new one from what it keeps: buffers, layouts, samplers, meshes, textures, material
    /// bind groups; shader variants, pipelines and display lists compile again as frames
    /// use them, and the next frame builds the frame graph's targets. Handles (objects,
    /// meshes, materials, shaders, textures) stay valid. Textures and surfaces the engine
    /// gave (external targets, `render_to` outputs, `present_graph` surfaces) belong to
    /// the old device: give the new device's ones.
    ///
    /// Frames the old backend still holds are dropped with it. On an error (the new
    /// backend refuses something, or its limits are too small for the configuration) the
    /// renderer keeps its old backend and stays as it was; drop the new backend.
    pub fn recover(&mut self, backend: Arc<B>) -> Result<RecoverStats, InitError> {
        let t = Instant::now();
        self.config.check(&backend.caps())?;
        // The graph set must fit the new device too (its frames would fail otherwise).
        if let Some(graph) = &self.frame.graph {
            super::plan::compile(graph, (self.config.width, self.config.height), &backend.caps(), false)?;
        }
        let b = &*backend;
        // On an error nothing made here stays on the new backend.
        let (gpu_cull, cull_fallback) = crate::gpu_cull::resolve(self.config.cull, &b.caps());
        let (occlusion, occlusion_fallback) = crate::occlusion::resolve(self.config.occlusion, gpu_cull, &b.caps());
        let (count, count_fallback) = crate::gpu_cull::resolve_count(&self.config, &b.caps());
        let c = &self.config;
        let gpu = FrameResources::create(b, c.max_objects, c.max_materials, gpu_cull, occlusion, count)?;
        let mut m = Made::new(b);
        m.adopt(gpu.resources());
        let s = &self.res;
        let mut remake = |old: &GrowBuffer, label, usage| -> Result<GrowBuffer, InitError> {
            let id = m.add(buffer(b, label, old.capacity, usage))?;
            Ok(GrowBuffer { id, capacity: old.capacity })
        };
        let vertices = remake(&s.vertices, "mesh-vertices", super::meshes::MESH_VERTICES)?;
        let indices = remake(&s.indices, "mesh-indices", super::meshes::MESH_INDICES)?;
        // Kept meshes go into their ranges now; staged uploads go with the next frame as
        // before (into the new buffers); the others wait for the engine.
        let mut kept = 0;
        for (_, &d) in s.mesh_handles.iter() {
            if let MeshCopy::Kept(mesh) = &s.meshes.copies[d as usize] {
                let r = s.mesh_ranges[d as usize];
                b.write_buffer(vertices.id, r.base_vertex as u64 * 32, bytemuck::cast_slice(&mesh.vertices))?;
                b.write_buffer(indices.id, u64::from(r.first_index) * 4, bytemuck::cast_slice(&mesh.indices))?;
                kept += 1;
            }
        }
        let mut textures = std::collections::HashMap::new();
        for (h, tex) in self.res.textures.iter() {
            let levels = tex.texels.as_deref().map(|t| tex.spec.split(t));
            let id = m.add(super::textures::upload_texture(b, &tex.spec, levels.as_deref())).map_err(|e| match e {
                ResourceError::Backend(e) => InitError::Backend(e),
                ResourceError::Write(e) => InitError::Write(e),
                other => InitError::Backend(CreateError::Invalid(other.to_string())),
            })?;
            textures.insert(h, id);
        }
        // Materials' groups as on the old device: a queued texture's materials bind its
        // fallback (white without one) and hold its own group ahead.
        let mut groups = MaterialGroups::new(b, &gpu)?;
        let mut held = Vec::new();
        let id = |h| textures.get(&h).copied();
        let lib = self.res.library.get_mut();
        let made = lib.materials.iter().flatten().try_for_each(|rec| {
            let binding = lib.shaders[rec.shader as usize].materials;
            let tex = rec.texture.and_then(|h| Some((h, self.res.textures.get(h)?)));
            let (bound, ahead) = match tex {
                Some((h, t)) if t.queued => (t.fallback.and_then(id).unwrap_or(gpu.white), id(h)),
                Some((h, _)) => (id(h).unwrap_or(gpu.white), None),
                None => (gpu.white, None),
            };
            let group = groups.hold(b, &gpu, bound, binding)?;
            if let Some(a) = ahead {
                groups.hold(b, &gpu, a, binding)?;
            }
            held.push((group, bound, ahead));
            Ok::<_, CreateError>(())
        });
        m.adopt(groups.all().map(Resource::BindGroup));
        made?;
        let submit = SubmitThread::spawn(backend.clone(), self.config.frames_in_flight)
            .map_err(|e| InitError::Thread(e.to_string()))?;
        m.keep();

        // Everything is made: switch over. The old submission thread ends with its frames;
        // what the renderer made on the old backend is released there (what a lost device
        // still lets go of).
        drop(std::mem::replace(&mut self.device.submit, submit));
        self.give_up_backend();
        self.device.lost = false;
        for (h, id) in textures {
            let t = self.res.textures.get_mut(h).expect("made from the live textures");
            t.id = id;
            // A queued texture's levels are still in the queue.
            t.awaiting = t.texels.is_none() && !t.queued;
        }
        for c in &mut self.res.meshes.copies {
            if matches!(c, MeshCopy::Gpu) {
                *c = MeshCopy::Awaiting;
            }
        }
        let lib = self.res.library.get_mut();
        for (rec, (group, bound, ahead)) in lib.materials.iter_mut().flatten().zip(held) {
            (rec.group, rec.bound, rec.ahead) = (group, bound, ahead);
        }
        self.forget_lists();
        // Batches on their way went with the old device (their resources are listed).
        self.res.uploads.forget_in_flight();
        // Plans, per-view buffers and recorded chunks named the old device's objects.
        self.frame.views.clear();
        self.frame.engine_passes.clear();
        let n = self.scene.len() as u32;
        self.scene.dirty.clear();
        if n > 0 {
            self.scene.dirty.push((0, n));
        }
        let s = &mut self.res;
        s.multi_draw = self.config.multi_draw && backend.caps().multi_draw_indirect;
        s.cull_fallback = cull_fallback;
        s.occlusion_fallback = occlusion_fallback;
        s.count_fallback = count_fallback;
        (s.gpu, s.groups, s.vertices, s.indices) = (gpu, groups, vertices, indices);
        let old = std::mem::replace(&mut s.backend, backend);
        drop(old);
        Ok(RecoverStats {
            ms: t.elapsed().as_secs_f64() * 1e3,
            meshes: kept,
            textures: self.res.textures.iter().filter(|(_, t)| t.texels.is_some()).count(),
            needs_data: self.needs_data(),
            materials: self.res.library.get_mut().materials.iter().flatten().count(),
            objects: self.scene.len(),
        })
    }

    /// Destroys on the current backend everything the renderer made there — what it gave
    /// up and waits for frames, the plan, per-view buffers, materials' bind groups,
    /// textures, compiled shaders and pipelines, mesh buffers, the fixed objects — once no
    /// frame uses it: the submission thread must be flushed or gone. Handles that name them
    /// stay in the renderer's records (`recover` replaces them; `Drop` ends them).
    pub(super) fn give_up_backend(&mut self) {
        let s = &mut self.res;
        let b = &*s.backend;
        self.device.retired.flushed();
        self.device.retired.release(u64::MAX, b, &mut s.meshes);
        let mut gone: Vec<Resource> = Vec::new();
        if let Some(plan) = self.frame.plan.take() {
            gone.extend(plan.into_resources());
        }
        // The engine's buffers were the old backend's: bound again on the new one.
        self.frame.bound_buffers.iter_mut().for_each(|b| *b = None);
        for v in &mut self.frame.views {
            let rec = v.recorded.get_mut();
            gone.extend(
                [rec.instance_buf.take(), rec.args_buf.take()].into_iter().flatten().map(|g| Resource::Buffer(g.id)),
            );
            gone.extend(rec.gpu.take().into_iter().flat_map(|g| g.resources()));
            gone.extend(rec.occlusion.take().into_iter().flat_map(|o| o.resources()));
        }
        let lib = s.library.get_mut();
        gone.extend(s.groups.drain().map(Resource::BindGroup));
        for shader in &mut lib.shaders {
            gone.extend(shader.take_compiled());
        }
        gone.extend(s.textures.iter().map(|(_, t)| Resource::Texture(t.id)));
        // Removed textures kept for reuse (the release above pooled the last ones).
        gone.extend(s.meshes.pool.drain().map(Resource::Texture));
        gone.extend([Resource::Buffer(s.vertices.id), Resource::Buffer(s.indices.id)]);
        // Grown buffers whose copy no frame carried yet: the current ones hold nothing
        // without them, and the next backend's are made from the CPU copies.
        gone.extend(s.pending_copies.drain(..).map(|c| Resource::Buffer(c.src)));
        gone.extend(s.gpu.resources());
        for r in gone {
            // Each was made once and is given up once here.
            let _ = b.destroy(r);
        }
    }

    /// Whether the renderer saw its device lost and waits for [`Renderer::recover`]: every
    /// frame until then is a [`RenderError::DeviceLost`] that touches nothing. The scene
    /// can still be edited meanwhile.
    pub fn is_lost(&self) -> bool {
        self.device.lost
    }

    /// A device-lost error of any operation becomes [`RenderError::DeviceLost`] and marks
    /// the renderer lost.
    pub(super) fn note_lost<T>(&mut self, r: Result<T, RenderError>) -> Result<T, RenderError> {
        self.device.note_lost(r)
    }
}

/// What [`Renderer::recover`] made again, and how long it took.
#[derive(Clone, Debug, PartialEq)]
pub struct RecoverStats {
    /// Wall time of the call, ms.
    pub ms: f64,
    /// Meshes uploaded again from their kept data ([`CpuCopy::Keep`](super::CpuCopy::Keep)).
    pub meshes: usize,
    /// Textures uploaded again from their kept texels.
    pub textures: usize,
    /// The meshes and textures whose data the engine must supply again
    /// ([`Renderer::resupply_mesh`], [`Renderer::resupply_texture`]); until then such a
    /// mesh draws nothing and such a texture samples as transparent black.
    pub needs_data: Vec<super::NeedsData>,
    /// Materials whose bind groups were made again.
    pub materials: usize,
    /// Objects in the scene (their transforms upload with the next frame).
    pub objects: usize,
}
