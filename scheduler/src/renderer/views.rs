//! A frame's views made ready before its jobs run: each scene pass's camera, frustum,
//! pass and GPU-cull setup (`ViewSetup`), its engine passes' inputs, and every view's
//! instance, indirect and cull buffers grown in submission order.

use switchyard_backend::{Backend, BufferUsage, PassDesc, Resource, TextureId};

use super::jobs::{ViewFrame, ViewSetup};
use super::plan::{self, Entry, FramePlan};
use super::retire::Retiree;
use super::Renderer;
use crate::error::RenderError;
use crate::frame_graph::{Camera, TargetId};
use crate::profile;
use crate::record::SharedCull;
use crate::view::View;

impl<B: Backend> Renderer<B> {
    /// Each scene pass's setup (view, frustum, pass with this frame's external textures,
    /// slot) and instance and indirect buffers grown to the scene; each engine pass's
    /// backend pass, sampled textures and (fullscreen passes over external targets) this
    /// frame's bind group.
    pub(super) fn prepare_views(
        &mut self,
        plan: &mut FramePlan,
        cameras: &[Camera],
        targets: &[(TargetId, TextureId)],
    ) -> Result<(), RenderError> {
        profile::zone!("prepare-views");
        let given = |t: usize| targets.iter().find(|(id, _)| id.0 as usize == t).map(|&(_, tex)| tex);
        let external = |slot: Option<usize>| slot.and_then(given);
        let with_externals = |mut pass: PassDesc, e: &plan::ExternalSlots| {
            if let (Some(c), Some(t)) = (pass.color.as_mut(), external(e.color)) {
                c.texture = t;
            }
            if let (Some(d), Some(t)) = (pass.depth.as_mut(), external(e.depth)) {
                d.texture = t;
            }
            if let (Some(c), Some(t)) = (pass.color.as_mut(), external(e.resolve)) {
                c.resolve = Some(t);
            }
            pass
        };
        let b = &*self.res.backend;
        let (retired, meshes) = (&mut self.device.retired, &mut self.res.meshes);
        let bound = |i: usize| self.frame.bound_buffers.get(i).copied().flatten();
        let retire = |g: switchyard_backend::BindGroupId| retired.retire(Retiree::Resource(g.into()), b, meshes);
        let scene =
            plan.scene_buffers.as_mut().map(|s| s.inputs.group(b, |_| None, bound, retire).map(|g| (g, s.empty_group)));
        let scene_groups = scene.transpose()?;
        for (s, sp) in plan.scenes.iter().enumerate() {
            let c = &cameras[sp.camera];
            let view = View {
                // The pass's name is `pass.label` (owned by the plan).
                label: "",
                view_proj: c.view_proj,
                eye: c.eye,
                far: c.far,
                layer_mask: c.layer_mask,
                pass: sp.kind,
            };
            let setup = ViewSetup {
                view,
                frustum: c.frustum(),
                pass: with_externals(sp.pass.clone(), &sp.externals),
                group: sp.group,
                queue: sp.queue,
                slot: s as u32,
                gpu: self.res.gpu.cull.is_some() && crate::gpu_cull::culls_on_gpu(&view, sp.queue),
                occlude: sp.occlude,
                receivers: sp.receivers.and_then(|plan| {
                    let ((depth, size), camera, map) = (plan.depth, plan.camera, plan.map);
                    // A camera whose matrix has no inverse sees no receivers to unproject:
                    // its shadow view keeps every caster.
                    let clip_to_world = cameras[camera].view_proj.inverse();
                    let target = crate::occlusion::receiver_target(map);
                    let src = crate::occlusion::PyramidSource { depth, size, target };
                    clip_to_world.is_finite().then_some((src, clip_to_world))
                }),
                skip: false,
                keep: false,
                shares: None,
                cull_from: None,
                keep_raw: false,
                scene_groups,
            };
            match self.frame.views.get_mut(s) {
                Some(w) => w.setup = setup,
                None => self.frame.views.push(ViewFrame::new(setup)),
            }
            // Auto: the view's last frame decides (a new view starts on the CPU).
            let w = &mut self.frame.views[s];
            w.setup.gpu &= self.config.cull != crate::CullOn::Auto || w.dense;
            w.setup.occlude = w.setup.occlude.filter(|_| w.setup.gpu);
            let occlusion = self.res.gpu.cull.as_ref().is_some_and(|c| c.occlusion.is_some());
            w.setup.receivers = w.setup.receivers.filter(|_| w.setup.gpu && occlusion);
            if sp.cached {
                // What its map would be drawn from this frame, against what it holds.
                let d = &mut w.drawing;
                (d.view_proj, d.layer_mask, d.receivers) = (c.view_proj, c.layer_mask, c.receivers);
                d.seen_by = sp.receivers.map(|r| cameras[r.camera].view_proj);
                (d.edits, d.graph) = (self.scene.edits, self.frame.graph_generation);
                d.target = w.setup.pass.depth.as_ref().map_or_else(TextureId::default, |a| a.texture);
                d.mats = self.frame.mat_generation;
                w.setup.skip = w.drawn.as_ref() == Some(&w.drawing);
            }
        }
        for (o, op) in plan.engine_passes.iter_mut().enumerate() {
            let rec = self.frame.engine_passes[o].get_mut();
            rec.pass = with_externals(op.pass.clone(), &op.externals);
            rec.inputs.clear();
            for &t in &op.inputs {
                if let Some(tex) = plan.textures[t.0 as usize].or_else(|| given(t.0 as usize)) {
                    rec.inputs.push((t, tex));
                }
            }
            if let plan::EngineContent::Fullscreen { inputs: Some(inputs), .. } = &mut op.content {
                let (retired, meshes) = (&mut self.device.retired, &mut self.res.meshes);
                let retire = |g| retired.retire(Retiree::Resource(Resource::BindGroup(g)), b, meshes);
                let bound = |i: usize| self.frame.bound_buffers.get(i).copied().flatten();
                rec.input_group = Some(inputs.group(b, given, bound, retire)?);
            }
        }
        self.share_prepass_culls(plan);
        // Instance and indirect buffers hold at most one entry per object. They grow here,
        // in submission order, so buffer handles do not depend on job timing.
        let need = self.scene.len().max(1024) as u64;
        let s = &mut self.res;
        let b = &*s.backend;
        // The GPU writes a GPU-culled view's instances and records (and tests read them).
        let gpu_usage =
            if s.gpu.cull.is_some() { BufferUsage::STORAGE | BufferUsage::COPY_SRC } else { BufferUsage::NONE };
        for e in &plan.entries {
            let &Entry::Scene(v) = e else { continue };
            let w = &mut self.frame.views[v];
            if w.setup.shares.is_some() {
                // It draws from the prepass's buffers and culls nothing: none of its own
                // (those it had stay for when it culls again).
                continue;
            }
            let rec = w.recorded.get_mut();
            let mut gone = Vec::new();
            let (occlude, receivers) = (w.setup.occlude, w.setup.receivers);
            let gpu = s.gpu.cull.as_ref().filter(|_| w.setup.gpu).map(|c| {
                let pyramid =
                    occlude.map(|(depth, size)| crate::occlusion::PyramidSource { depth, size, target: size });
                (c, pyramid.or(receivers.map(|r| r.0)), occlude.is_some())
            });
            let made = rec.grow_buffers(b, need, gpu_usage, gpu, &mut gone);
            // What was replaced goes once the frames that may read it have finished.
            for r in gone {
                self.device.retired.retire(Retiree::Resource(r), b, &mut s.meshes);
            }
            made.map_err(RenderError::FrameBuffer)?;
        }
        // The prepasses' buffers, now grown, for the views that draw from them.
        for v in 0..plan.scenes.len() {
            let Some(shared) = self.frame.views[v].setup.shares else { continue };
            let rec = self.frame.views[shared.view].recorded.get_mut();
            let (Some(i), Some(a)) = (&rec.instance_buf, &rec.args_buf) else {
                unreachable!("the prepass's buffers were grown above");
            };
            let (instances, args) = (i.id, a.id);
            self.frame.views[v].setup.shares = Some(SharedCull { instances, args, ..shared });
        }
        Ok(())
    }

    /// Marks each opaque forward view culled on the GPU that comes after a depth prepass
    /// of the same camera and queue, culled on the GPU too, as drawing the prepass's
    /// visible set (`RendererConfig::reuse_prepass_cull`): its candidates, buckets and
    /// batches are the prepass's (their keys and draw states do not depend on the pass
    /// kind), and by its pass the prepass's cull, both phases of it, is done. It is then
    /// not split for occlusion culling. Unless the prepass culls by frustum only and the
    /// view would cull by occlusion: that view culls on its own.
    fn share_prepass_culls(&mut self, plan: &FramePlan) {
        let occlusion = self.res.gpu.cull.as_ref().is_some_and(|c| c.occlusion.is_some());
        let mut prepasses: Vec<usize> = Vec::new();
        for e in &plan.entries {
            let &Entry::Scene(v) = e else { continue };
            let w = &self.frame.views[v];
            let s = &w.setup;
            if !(self.config.reuse_prepass_cull && s.gpu && s.queue == crate::frame_graph::Queue::Opaque) {
                continue;
            }
            match s.view.pass {
                crate::material::PassKind::Depth => prepasses.push(v),
                crate::material::PassKind::Forward => {
                    let camera = plan.scenes[v].camera;
                    let found = prepasses.iter().rev().copied().find(|&p| plan.scenes[p].camera == camera);
                    let Some(p) = found else { continue };
                    let split = occlusion && self.frame.views[p].setup.occlude.is_some();
                    if s.occlude.is_some() && !split {
                        continue;
                    }
                    let halves = 1 + usize::from(split);
                    let shared =
                        SharedCull { view: p, instances: Default::default(), args: Default::default(), halves };
                    let w = &mut self.frame.views[v];
                    (w.setup.shares, w.setup.occlude) = (Some(shared), None);
                }
                crate::material::PassKind::Shadow => {}
            }
        }
    }
}
