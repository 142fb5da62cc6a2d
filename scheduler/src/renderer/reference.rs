//! The single-threaded reference pipeline: every stage written again for obviousness, so
//! that tests can check the parallel pipeline output for output.
//!
//! It shares nothing with the stages it checks but the definitions they implement: the
//! key's state fields (dense ids), the frustum planes, the chunking constants and the
//! display lists the last frame used (patching is not re-derived). Keys are packed from
//! the documented bit positions, materials' variants are resolved from their records,
//! batches, chunks and commands come from plain loops.

use glam::Vec3;
use switchyard_backend::{
    Backend, Command, Digest, DrawIndexedIndirectArgs, DynamicOffsets, IndexFormat, DRAW_INDEXED_INDIRECT_SIZE,
};
use switchyard_kernels::cull::Frustum;

use super::gpu::GLOBALS_SLOT;
use super::Renderer;
use crate::batch::Batch;
use crate::material::PassKind;
use crate::patch::FrameList;
use crate::record::{CHUNK_BATCHES, CHUNK_DRAWS};
use crate::scene::CASTS_SHADOWS;
use crate::sort::key::SortKey;
use crate::view::View;

/// One view of a frame, stage by stage: what the parallel pipeline produced
/// ([`Renderer::view_output`]) or what the reference computes ([`Renderer::reference_frame`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewOutput {
    /// Visible dense object indices, ascending.
    pub visible: Vec<u32>,
    /// The sort key of each queue item, ascending.
    pub keys: Vec<SortKey>,
    /// Dense object indices in draw order.
    pub queue: Vec<u32>,
    /// Runs of equal state in the queue.
    pub batches: Vec<Batch>,
    /// Each chunk's commands, in order.
    pub chunks: Vec<Vec<Command>>,
    /// Indirect arguments per batch.
    pub args: Vec<DrawIndexedIndirectArgs>,
}

/// The single-threaded reference result of a frame (see [`Renderer::reference_frame`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceFrame {
    /// Per view, in the order given to `render`.
    pub views: Vec<ViewOutput>,
    /// Digest of the command stream (passes in submission order).
    pub digest: u64,
}

/// What a GPU-culled view gave its cull in the last frame, and where the GPU wrote.
#[derive(Clone, Debug)]
pub struct GpuCullView {
    /// The frustum the GPU tested against.
    pub frustum: Frustum,
    /// Bucket starts in `candidates` (buckets + 1 entries).
    pub starts: Vec<u32>,
    /// The candidates' dense object indices.
    pub candidates: Vec<u32>,
    /// The instance buffer (the visible candidates compacted, u32 each).
    pub instances: switchyard_backend::BufferId,
    /// The indirect buffer (one record per bucket).
    pub args: switchyard_backend::BufferId,
    /// The view was culled by occlusion: the first records (one per bucket) and the
    /// instances from 0 are phase 1's (visible last frame), the next records and the
    /// instances from `candidates.len()` phase 2's (visible now, not drawn by phase 1).
    pub occluded: bool,
}

impl<B: Backend> Renderer<B> {
    /// View `v`'s GPU cull in the last frame (`None` where it was culled on the CPU); for a
    /// view that drew a depth prepass's visible set, the prepass's.
    pub fn gpu_cull_view(&self, v: usize) -> Option<GpuCullView> {
        let w = self.frame.views.get(v).filter(|w| w.setup.gpu)?;
        // A view that drew a prepass's visible set: the prepass's cull.
        let w = w.setup.shares.map_or(w, |s| &self.frame.views[s.view]);
        let (b, rec) = (w.buckets.read(), w.recorded.read());
        let n = b.buckets.len();
        Some(GpuCullView {
            frustum: w.setup.frustum,
            starts: b.lists.get(..=n)?.to_vec(),
            candidates: b.lists.get(n + 1..)?.to_vec(),
            instances: rec.instance_buf.as_ref()?.id,
            args: rec.args_buf.as_ref()?.id,
            occluded: rec.late.on,
        })
    }

    /// The parallel pipeline's outputs of the last frame for view `v`.
    pub fn view_output(&self, v: usize) -> Option<ViewOutput> {
        let w = self.frame.views.get(v)?;
        let (sorted, rec) = (w.sorted.read(), w.recorded.read());
        let args = w.args.clone();
        Some(ViewOutput {
            visible: w.visible.read().to_vec(),
            keys: sorted.keys.iter().map(|&k| SortKey(k)).collect(),
            queue: sorted.queue.clone(),
            batches: w.batches.read().batches.clone(),
            chunks: rec.cmds.clone(),
            args,
        })
    }

    /// Computes the last rendered frame of `views` again with the plain single-threaded
    /// pipeline. Tests compare it with the parallel pipeline; benchmarks use it as the
    /// baseline.
    pub fn reference_frame(&self, views: &[View]) -> ReferenceFrame {
        let patched = self.frame.patched.each_ref().map(|p| p.read());
        let mut out = ReferenceFrame { views: Vec::with_capacity(views.len()), digest: 0 };
        for (v, view) in views.iter().enumerate() {
            let lists = &patched[crate::patch::PatchPart::of(view.pass) as usize].lists;
            out.views.push(self.reference_view(v, view, lists));
        }
        let mut digest = Digest::default();
        let entries = self.frame.plan.as_ref().map_or(&[][..], |p| &p.entries);
        for e in entries {
            let &super::plan::Entry::Scene(v) = e else { continue };
            digest.pass(&self.frame.views[v].setup.pass);
            for chunk in &out.views[v].chunks {
                digest.combine(Digest::of_commands(chunk));
            }
        }
        out.digest = digest.value();
        out
    }

    /// Per dense material: whether scene pass `v`'s queue holds its objects (its shader
    /// has the pass's entry points, its transparency fits the queue).
    fn in_queue(&self, v: usize) -> Vec<bool> {
        let lib = self.res.library.read();
        let setup = self.frame.views.get(v).map(|w| (w.setup.view.pass, w.setup.queue));
        lib.materials
            .iter()
            .map(|rec| {
                let (Some(rec), Some((pass, queue))) = (rec.as_ref(), setup) else { return rec.is_some() };
                let passes = &lib.shaders[rec.shader as usize].passes;
                let has_pass = match pass {
                    PassKind::Shadow => passes.shadow.is_some(),
                    PassKind::Forward | PassKind::Depth => passes.forward.is_some(),
                };
                has_pass
                    && match queue {
                        crate::frame_graph::Queue::All => true,
                        crate::frame_graph::Queue::Opaque => !rec.transparent,
                        crate::frame_graph::Queue::Transparent => rec.transparent,
                    }
            })
            .collect()
    }

    fn reference_view(&self, v: usize, view: &View, lists: &[FrameList]) -> ViewOutput {
        let o = &self.scene.objects;
        let forward = view.pass != PassKind::Shadow;
        // Cull: every object against the frustum, its layer and (shadow views) its flags.
        let f = Frustum::from_view_proj(&view.view_proj);
        let in_queue = self.in_queue(v);
        let visible: Vec<u32> = (0..o.len())
            .filter(|&i| {
                (view.layer_mask >> o.layer[i]) & 1 == 1
                    && (forward || o.flags[i] & CASTS_SHADOWS != 0)
                    && in_queue[o.material[i] as usize]
                    && f.intersects(Vec3::new(o.cx[i], o.cy[i], o.cz[i]), Vec3::new(o.ex[i], o.ey[i], o.ez[i]))
            })
            .map(|i| i as u32)
            .collect();
        // Keys, packed from the documented layout; a stable sort. Each material's state
        // (shader, variant from its keywords and the global ones, transparency) once.
        let lib = self.res.library.read();
        let states: Vec<Option<(u32, u32, bool)>> = lib
            .materials
            .iter()
            .map(|rec| {
                rec.as_ref().map(|r| {
                    let shader = &lib.shaders[r.shader as usize];
                    let global = shader.declared_bits(self.res.global_keywords.iter().map(String::as_str));
                    (r.shader, r.keyword_mask | global, r.transparent)
                })
            })
            .collect();
        let state = |m: u32| states[m as usize].expect("objects use live materials");
        // What forward and depth batches of a material draw with: itself, or for an indexed
        // material the first indexed material of its state and bind group.
        let indexed = |m: usize| {
            lib.materials[m]
                .as_ref()
                .filter(|r| lib.shaders[r.shader as usize].materials == crate::material::MaterialBinding::Indexed)
                .map(|r| r.group)
        };
        let batch_material: Vec<u32> = (0..states.len())
            .map(|m| match indexed(m) {
                Some(group) => {
                    (0..m).find(|&f| indexed(f) == Some(group) && states[f] == states[m]).unwrap_or(m) as u32
                }
                None => m as u32,
            })
            .collect();
        // A pipeline state's id: where its (shader, variant) first occurs in material order.
        let mut seen: Vec<(u32, u32)> = Vec::new();
        let pipeline_ids: Vec<u64> = states
            .iter()
            .map(|s| {
                let Some((shader, variant, _)) = *s else { return 0 };
                let id = seen.iter().position(|&p| p == (shader, variant)).unwrap_or_else(|| {
                    seen.push((shader, variant));
                    seen.len() - 1
                });
                id as u64
            })
            .collect();
        let mut items: Vec<(u64, u32)> = visible
            .iter()
            .map(|&i| {
                let i = i as usize;
                let (_, _, transparent) = state(o.material[i]);
                let pipeline = pipeline_ids[o.material[i] as usize] & 0x7fff;
                let material = if forward { u64::from(batch_material[o.material[i] as usize]) & 0xffff } else { 0 };
                let mesh = u64::from(o.mesh[i]) & 0xfff;
                let d2 = (Vec3::new(o.cx[i], o.cy[i], o.cz[i]) - view.eye).length_squared();
                let layer = u64::from(o.layer[i]) << 60;
                let key = if transparent && forward {
                    // Linear in the distance up to the far plane.
                    let depth = ((d2.sqrt() / view.far.max(1e-6)).clamp(0.0, 1.0) * 65535.0) as u64;
                    layer | 1 << 59 | (65535 - depth) << 43 | pipeline << 28 | material << 12 | mesh
                } else {
                    // Log-spaced: the squared distance's exponent, then its top two mantissa bits.
                    let bits = u64::from(d2.to_bits());
                    let depth = ((bits >> 23) & 0xff) << 2 | ((bits >> 21) & 3);
                    layer | pipeline << 44 | material << 28 | mesh << 16 | depth
                };
                (key, i as u32)
            })
            .collect();
        items.sort_by_key(|p| p.0);
        let queue: Vec<u32> = items.iter().map(|p| p.1).collect();
        // Batches: a new one where the mesh or the draw state changes.
        let draw_state = |i: u32| {
            let m = o.material[i as usize];
            if forward {
                (batch_material[m as usize], 0, 0)
            } else {
                let (shader, variant, _) = state(m);
                (u32::MAX, shader, variant)
            }
        };
        let mut batches: Vec<Batch> = Vec::new();
        for (q, &i) in queue.iter().enumerate() {
            let same = q > 0
                && o.mesh[i as usize] == o.mesh[queue[q - 1] as usize]
                && draw_state(i) == draw_state(queue[q - 1]);
            match batches.last_mut() {
                Some(b) if same => b.count += 1,
                _ => batches.push(Batch {
                    first: q as u32,
                    count: 1,
                    mesh: o.mesh[i as usize],
                    material: match forward {
                        true => batch_material[o.material[i as usize] as usize],
                        false => o.material[i as usize],
                    },
                }),
            }
        }
        let meshes = &self.res.draw_ranges;
        let args: Vec<DrawIndexedIndirectArgs> = batches
            .iter()
            .map(|b| {
                let m = meshes[b.mesh as usize];
                DrawIndexedIndirectArgs {
                    index_count: m.index_count,
                    instance_count: b.count,
                    first_index: m.first_index,
                    base_vertex: m.base_vertex,
                    first_instance: b.first,
                }
            })
            .collect();
        let chunks = self.reference_chunks(v, view, lists, &batches, &args);
        ViewOutput { visible, keys: items.iter().map(|p| SortKey(p.0)).collect(), queue, batches, chunks, args }
    }

    /// Cuts the batches into chunks and records each: a chunk binds the view's state, then
    /// per state bucket the pipeline and material group where they change, then one
    /// multi-draw per bucket or one draw per batch.
    fn reference_chunks(
        &self,
        v: usize,
        view: &View,
        lists: &[FrameList],
        batches: &[Batch],
        args: &[DrawIndexedIndirectArgs],
    ) -> Vec<Vec<Command>> {
        let s = &self.res;
        let multi = s.multi_draw;
        let binding = |b: &Batch| {
            let l = &lists[b.material as usize];
            match view.pass {
                PassKind::Forward => (l.forward, Some((l.group, l.offset))),
                PassKind::Depth => (l.depth, Some((l.group, l.offset))),
                PassKind::Shadow => (l.shadow, None),
            }
        };
        // Chunk starts: at every multiple of CHUNK_BATCHES, and where the next draw call
        // would pass CHUNK_DRAWS.
        let mut starts = vec![0];
        let mut calls = 0;
        for i in 0..batches.len() {
            if i > 0 && i % CHUNK_BATCHES == 0 {
                starts.push(i);
                calls = 0;
            }
            let start = *starts.last().expect("non-empty");
            let mut new_call = !multi || i == start || binding(&batches[i]) != binding(&batches[i - 1]);
            if i > start && new_call && calls >= CHUNK_DRAWS {
                starts.push(i);
                calls = 0;
                new_call = true;
            }
            calls += usize::from(new_call);
        }
        starts.push(batches.len());
        if batches.is_empty() {
            starts.truncate(1);
        }
        let rec = self.frame.views[v].recorded.read();
        let (instances, indirect) = (
            rec.instance_buf.as_ref().map(|g| g.id).unwrap_or_default(),
            rec.args_buf.as_ref().map(|g| g.id).unwrap_or_default(),
        );
        let group = self.frame.views[v].setup.group;
        let mut chunks = Vec::new();
        for c in starts.windows(2) {
            let mut cmds = vec![
                Command::SetBindGroup { index: 0, group, offsets: DynamicOffsets::one(v as u32 * GLOBALS_SLOT as u32) },
                Command::SetVertexBuffer { slot: 0, buffer: s.vertices.id, offset: 0 },
                Command::SetVertexBuffer { slot: 1, buffer: instances, offset: 0 },
                Command::SetIndexBuffer { buffer: s.indices.id, format: IndexFormat::Uint32, offset: 0 },
            ];
            let (mut pipeline, mut material) = (None, None);
            let mut i = c[0];
            while i < c[1] {
                let (p, m) = binding(&batches[i]);
                if pipeline != Some(p) {
                    cmds.push(Command::SetPipeline(p));
                    pipeline = Some(p);
                }
                if let Some((g, off)) = m.filter(|&m| material != Some(m)) {
                    cmds.push(Command::SetBindGroup {
                        index: 1,
                        group: g,
                        offsets: off.map_or(DynamicOffsets::NONE, DynamicOffsets::one),
                    });
                    material = Some((g, off));
                }
                let mut j = i + 1;
                while j < c[1] && binding(&batches[j]) == (p, m) {
                    j += 1;
                }
                if multi {
                    cmds.push(Command::MultiDrawIndexedIndirect {
                        buffer: indirect,
                        offset: i as u64 * DRAW_INDEXED_INDIRECT_SIZE,
                        count: (j - i) as u32,
                    });
                } else {
                    cmds.extend(args[i..j].iter().map(|a| Command::DrawIndexed {
                        first_index: a.first_index,
                        index_count: a.index_count,
                        base_vertex: a.base_vertex,
                        first_instance: a.first_instance,
                        instance_count: a.instance_count,
                    }));
                }
                i = j;
            }
            chunks.push(cmds);
        }
        chunks
    }
}
