//! The frame loop: one frame of the current plan, step by step (`render_frame`), and
//! [`Renderer::flush`], [`Renderer::read_color`]. What a frame is given, and its plan,
//! come from `input.rs`.

use std::time::Instant;

use glam::{Mat4, Vec3};
use switchyard_backend::{Backend, Command, Digest, PassDesc, PassSubmit, TextureId};

use super::gpu::GLOBALS_SLOT;
use super::input::check_targets;
use super::jobs::{CullInputs, EngineRecorded, FrameJobs, ViewFrame};
use super::plan::{self, Entry, FramePlan};
use super::Renderer;
use crate::error::RenderError;
use crate::frame_graph::Camera;
use crate::frame_graph::FrameGraph;
use crate::frame_graph::TargetId;
use crate::graph::Slot;
use crate::material::MaterialFrame;
use crate::patch::{PatchPart, PatchedLists};
use crate::profile;
use crate::sort::key;
use crate::stats::PassTraffic;
use crate::stats::{FrameStats, PacketLayout};
use crate::submit::{FramePacket, ViewUpload};

/// The frames: the graph set and the plan made from it, and every frame's per-pass
/// outputs and per-material data (`render.rs` runs the steps, `jobs.rs` the jobs).
pub(super) struct FrameState<B: Backend> {
    /// The graph set with `set_graph` and its generation (each `set_graph` adds one).
    pub(super) graph: Option<FrameGraph>,
    pub(super) graph_generation: u64,
    /// The engine's buffer bound to each of the graph's buffers (`bind_buffer`).
    pub(super) bound_buffers: Vec<Option<switchyard_backend::BufferId>>,
    /// The frame graph and job graph of the current frame configuration.
    pub(super) plan: Option<plan::FramePlan>,
    /// Per scene pass.
    pub(super) views: Vec<ViewFrame<B::Chunk>>,
    /// Per engine pass (fullscreen, callback, compute).
    pub(super) engine_passes: Vec<Slot<EngineRecorded<B::Chunk>>>,
    /// The cameras of a frame given as views.
    pub(super) view_cameras: Vec<Camera>,
    /// The patch jobs' outputs, indexed by [`crate::patch::PatchPart`].
    pub(super) patched: [Slot<PatchedLists>; 2],
    pub(super) mat_frames: Vec<MaterialFrame>,
    /// Counts the frames whose `mat_frames` differed from the frame's before.
    pub(super) mat_generation: u64,
    /// Each (shader, variant) pair of this frame to its shadow-pass state id (in order of use).
    pub(super) shadow_states: ahash::AHashMap<(u32, u32), u32>,
    /// The first indexed material of each shader, variant, blending and group
    /// (`MaterialFrame::batch_as`).
    pub(super) batch_groups: ahash::AHashMap<(u32, u32, bool, switchyard_backend::BindGroupId), u32>,
    /// Pass kinds some live material's shader lacks ([`PassKind::bit`]s): culls filter them.
    pub(super) lacking_passes: u8,
    /// The number of the last frame begun.
    pub(super) number: u64,
    /// This frame took a batch of uploads (a failed frame still carries it to the
    /// submission thread: `uploads.rs`).
    pub(super) batch_sent: bool,
    /// That batch until the frame's job graph has run: the upload thread stages it then,
    /// while the workers are idle, not on the cores they build the frame on.
    pub(super) pending_batch: Option<crate::upload::Batch>,
    /// A job to panic in and the frame (`fault-injection`).
    #[cfg(feature = "fault-injection")]
    pub(super) fault_panic: Option<(String, u64)>,
}

impl<B: Backend> FrameState<B> {
    /// No graph, no plan, no frame yet.
    pub(super) fn new() -> Self {
        Self {
            graph: None,
            graph_generation: 0,
            bound_buffers: Vec::new(),
            plan: None,
            views: Vec::new(),
            engine_passes: Vec::new(),
            view_cameras: Vec::new(),
            patched: Default::default(),
            mat_frames: Vec::new(),
            mat_generation: 0,
            shadow_states: ahash::AHashMap::new(),
            batch_groups: ahash::AHashMap::new(),
            lacking_passes: 0,
            number: 0,
            batch_sent: false,
            pending_batch: None,
            #[cfg(feature = "fault-injection")]
            fault_panic: None,
        }
    }
}

impl<B: Backend> Renderer<B> {
    /// Runs one frame of the current plan: `cameras` fill its camera slots, `targets` its
    /// external targets (checked by the caller); `present`: the surface whose image the
    /// frame draws into, presented after its submit.
    pub(super) fn render_frame(
        &mut self,
        cameras: &[Camera],
        targets: &[(TargetId, TextureId)],
        present: Option<crate::submit::Present>,
    ) -> Result<FrameStats, RenderError> {
        if self.device.lost {
            return Err(RenderError::DeviceLost);
        }
        // The frame's steps borrow the plan beside the rest of the renderer.
        // (The callers made the plan: none would be a bug, reported rather than a panic.)
        let Some(mut plan) = self.frame.plan.take() else { return Err(RenderError::NoGraph) };
        let r = self.frame_steps(&mut plan, cameras, targets, present);
        self.frame.plan = Some(plan);
        self.note_lost(r)
    }

    fn frame_steps(
        &mut self,
        plan: &mut FramePlan,
        cameras: &[Camera],
        targets: &[(TargetId, TextureId)],
        present: Option<crate::submit::Present>,
    ) -> Result<FrameStats, RenderError> {
        let started = Instant::now();
        let busy_before = self.pool.busy.total_ns();
        profile::zone!("frame");
        check_targets(plan, &*self.res.backend, targets, (self.config.width, self.config.height))?;
        let waited = Instant::now();
        let mut packet = {
            profile::zone!("wait-frame-slot");
            self.device.take_packet()?
        };
        let slot_wait_ms = waited.elapsed().as_secs_f64() * 1e3;
        self.frame.number += 1;
        packet.frame = self.frame.number;
        if let Err(e) = self.release_retired() {
            self.device.submit.give_back(packet);
            return Err(e);
        }
        self.frame.batch_sent = false;
        let uploads = match self.take_uploads() {
            Ok(u) => u,
            Err(e) => {
                self.drop_frame(packet);
                return Err(e);
            }
        };
        packet.present = present.map(|p| (p, started));
        self.resolve_materials();
        let scenes = plan.scenes.len();
        self.write_globals(plan, cameras, &mut packet.globals.1);
        packet.globals.0 = Some(self.res.gpu.globals_buf);
        self.write_dirty_transforms(&mut packet);
        if let Err(e) = self.prepare_views(plan, cameras, targets) {
            self.drop_frame(packet);
            return Err(e);
        }
        let blocks_ms = self.refresh_cull_blocks();
        self.swap_uploads(&mut packet, scenes);
        let before_jobs = started.elapsed().as_secs_f64() * 1e3;
        let setup_ms = before_jobs - slot_wait_ms;
        let ran = self.run_jobs(plan, scenes);
        let jobs_ms = started.elapsed().as_secs_f64() * 1e3 - before_jobs;
        if !self.send_batch() {
            self.device.submit.give_back(packet);
            return Err(RenderError::SubmitThreadGone);
        }
        profile::zone!("gather");
        self.swap_uploads(&mut packet, scenes);
        let mut stats = FrameStats {
            cull_ms: blocks_ms,
            frame: self.frame.number,
            setup_ms,
            slot_wait_ms,
            jobs_ms,
            workers: self.pool.current_num_threads() as u32,
            ..FrameStats::default()
        };
        let error = ran.err().or_else(|| self.gather(plan, &mut packet, &mut stats));
        if let Some(e) = error {
            self.drop_frame(packet);
            return Err(e);
        }
        packet.batches = self.device.submit.uploads.sent;
        (stats.uploads, stats.upload_bytes) = (uploads, packet.upload_bytes() + uploads.bytes);
        if !self.device.submit.send(packet) {
            return Err(RenderError::SubmitThreadGone);
        }
        plan.last_frame = Some(self.frame.number);
        // This frame's stage outputs are kept by the next frame whose views cull from the same.
        for w in &mut self.frame.views[..plan.scenes.len()] {
            w.culled_from = w.culling.take();
        }
        // The cached passes that drew this frame: their maps now hold what they drew from.
        for (w, _) in self.frame.views.iter_mut().zip(&plan.scenes).filter(|(w, sp)| sp.cached && !w.setup.skip) {
            let drawing = std::mem::take(&mut w.drawing);
            w.drawing = w.drawn.replace(drawing).unwrap_or_default();
        }
        self.device.retired.sent(self.frame.number);
        if let Some(r) = &self.device.submit.reports.last {
            (stats.uploads.stage_ms, stats.uploads.wait_ms) = (r.stage_ms, r.upload_wait_ms);
            (stats.submitted_frame, stats.submit_ms, stats.gpu_wait_ms) = (r.frame, r.submit_ms, r.gpu_wait_ms);
            (stats.latency_ms, stats.late_acquire_ms, stats.present_skipped) = (r.latency_ms, r.acquire_ms, r.skipped);
        }
        stats.gpu = self.device.submit.reports.gpu;
        stats.frame_ms = started.elapsed().as_secs_f64() * 1e3;
        stats.busy_ms = self.pool.busy.total_ns().saturating_sub(busy_before) as f64 / 1e6;
        stats.plot();
        if !self.config.engine_profiler {
            profile::frame_mark();
        }
        Ok(stats)
    }

    // ---- the steps of a frame ------------------------------------------------------

    /// Releases what was given up before the frames that may still be queued or on the
    /// GPU: a frame `2 * frames_in_flight - 1` before this one has finished (see
    /// `retire.rs`; the completion count is checked, and waited for where a frame failed
    /// in between).
    fn release_retired(&mut self) -> Result<(), RenderError> {
        let upto = self.frame.number.saturating_sub(2 * self.config.frames_in_flight as u64 - 1);
        if let Some(stamp) = self.device.retired.due(upto) {
            if !self.device.submit.wait_completed(stamp) {
                return Err(RenderError::SubmitThreadGone);
            }
        }
        let s = &mut self.res;
        self.device.retired.release(upto, &*s.backend, &mut s.meshes);
        Ok(())
    }

    /// Per-material frame data: the variant (material | global keywords) and the shadow-pass
    /// state id (the key's pipeline field) shared by materials of equal shader and variant.
    fn resolve_materials(&mut self) {
        profile::zone!("resolve-materials");
        self.frame.shadow_states.clear();
        self.frame.batch_groups.clear();
        self.frame.lacking_passes = 0;
        let lib = self.res.library.get_mut();
        // Written over last frame's, each compared with the one it replaces.
        let frames = &mut self.frame.mat_frames;
        let mut changed = frames.len() != lib.materials.len();
        frames.resize(lib.materials.len(), MaterialFrame::default());
        let mut put = |m: usize, frame: MaterialFrame| {
            changed |= frames[m] != frame;
            frames[m] = frame;
        };
        for (m, rec) in lib.materials.iter().enumerate() {
            let Some(r) = rec else {
                put(m, MaterialFrame::default());
                continue;
            };
            let shader = &lib.shaders[r.shader as usize];
            let variant = r.keyword_mask | shader.declared_bits(self.res.global_keywords.iter().map(String::as_str));
            let key = (r.shader, variant);
            // A map, not a search per material (quadratic over 64k materials and many states).
            let next = self.frame.shadow_states.len() as u32;
            let state = *self.frame.shadow_states.entry(key).or_insert(next);
            let mut frame = crate::sort::material_frame(variant, r.shader, r.transparent, state);
            frame.passes = shader.passes.mask();
            if shader.materials == crate::material::MaterialBinding::Indexed {
                let first =
                    *self.frame.batch_groups.entry((r.shader, variant, r.transparent, r.group)).or_insert(m as u32);
                frame.batch_as = (first != m as u32).then_some(first);
            }
            self.frame.lacking_passes |= !frame.passes & 0b11;
            put(m, frame);
        }
        self.frame.mat_generation += u64::from(changed);
    }

    /// Each scene pass's globals block: its camera's matrix, the matrices of the cameras
    /// that rendered its shadow maps, light, eye, fog, time.
    fn write_globals(&self, plan: &FramePlan, cameras: &[Camera], out: &mut Vec<u8>) {
        profile::zone!("globals");
        let globals = &self.res.globals;
        let time = globals
            .find("_Time")
            .map_or(0.0, |i| f32::from_le_bytes(globals.bytes(i)[..4].try_into().expect("an f32 is 4 bytes")));
        out.clear();
        out.resize(plan.scenes.len() * GLOBALS_SLOT, 0);
        let l = &self.res.lighting;
        for (s, dst) in plan.scenes.iter().zip(out.chunks_mut(GLOBALS_SLOT)) {
            let c = &cameras[s.camera];
            // The layout of `Globals` in shaders/lit.wgsl.
            const MAPS: usize = 16 + 16 * crate::frame_graph::MAX_SHADOW_MAPS;
            let mut g = [0f32; MAPS + 20];
            g[..16].copy_from_slice(&c.view_proj.to_cols_array());
            for (k, cam) in s.shadow_cameras.iter().enumerate() {
                let m = cam.map_or(Mat4::ZERO, |i| cameras[i].view_proj);
                g[16 + 16 * k..32 + 16 * k].copy_from_slice(&m.to_cols_array());
            }
            g[MAPS..MAPS + 4].copy_from_slice(&l.direction.normalize_or(Vec3::NEG_Y).extend(0.0).to_array());
            g[MAPS + 4..MAPS + 8].copy_from_slice(&c.eye.extend(1.0).to_array());
            g[MAPS + 8..MAPS + 12].copy_from_slice(&l.fog_color.extend(1.0).to_array());
            let strength = if s.shadowed { l.shadow_strength } else { 0.0 };
            g[MAPS + 12..MAPS + 16].copy_from_slice(&[time, l.fog_density, strength, 0.0]);
            let viewer = switchyard_kernels::cull::center_of_projection(&c.view_proj).unwrap_or(c.eye.extend(1.0));
            g[MAPS + 16..].copy_from_slice(&viewer.to_array());
            dst[..size_of_val(&g)].copy_from_slice(bytemuck::cast_slice(&g));
        }
    }

    /// Block bounds of objects that changed since the last frame (culling's first level).
    fn refresh_cull_blocks(&mut self) -> f64 {
        let t = Instant::now();
        profile::zone!("cull-blocks");
        let scene = &mut self.scene;
        // A worker's wake-up costs more than one word of blocks (or none).
        if scene.blocks.dirty_words() <= 1 {
            scene.blocks.refresh(&scene.objects.cull_input());
        } else {
            self.pool.install(|| scene.blocks.refresh(&scene.objects.cull_input()));
        }
        t.elapsed().as_secs_f64() * 1e3
    }

    /// Moves the packet's upload memory for the first `views` views and the constants into
    /// the stage outputs that fill it, and back after the jobs (the vectors trade places).
    fn swap_uploads(&mut self, packet: &mut FramePacket<B::Chunk>, views: usize) {
        packet.views.resize_with(views, ViewUpload::default);
        for (w, up) in self.frame.views.iter_mut().zip(&mut packet.views) {
            std::mem::swap(&mut w.recorded.get_mut().upload, up);
        }
        let patched = self.frame.patched[PatchPart::Forward as usize].get_mut();
        std::mem::swap(&mut patched.constants, &mut packet.constants.1);
        packet.constants.0 = Some(self.res.gpu.constants_buf);
    }

    /// Runs the frame's job graph on the pool.
    fn run_jobs(&mut self, plan: &FramePlan, views: usize) -> Result<(), RenderError> {
        let f = &mut self.frame;
        let exact_keys = key::exact(f.shadow_states.len(), f.mat_frames.len(), self.res.mesh_ranges.len());
        // A view culled on the CPU from what the last frame that reached the GPU thread
        // culled it from keeps its cull, sort and batch outputs: nothing they read changed.
        let (edits, mats, graph) = (self.scene.edits, f.mat_generation, f.graph_generation);
        for w in &mut f.views[..views] {
            let on_cpu = !w.setup.gpu && w.setup.shares.is_none();
            let (view, frustum, queue, objects) = (w.setup.view, w.setup.frustum, w.setup.queue, self.scene.len());
            w.culling = on_cpu.then_some(CullInputs { view, frustum, queue, edits, mats, graph, objects, exact_keys });
            // Until this frame reaches the GPU thread, nothing is known to be kept (a view
            // culled on the GPU drops its stamp too: its list is emptied this frame).
            let last = w.culled_from.take();
            w.setup.keep = w.culling.is_some() && last == w.culling;
            w.setup.keep_raw = false;
        }
        // A view culled on the CPU after an earlier view of its camera also culled on the
        // CPU takes that view's frustum test (its cull checks that planes and filter match).
        for v in 0..views {
            let (w, keep) = (&f.views, f.views[v].setup.keep);
            let from = plan.scenes[v].cull_from.filter(|&l| w[l].culling.is_some() && w[v].culling.is_some() && !keep);
            f.views[v].setup.cull_from = from;
            if let Some(l) = f.views[v].setup.cull_from {
                f.views[l].setup.keep_raw = true;
            }
        }
        let jobs = FrameJobs {
            res: &self.res,
            objects: &self.scene.objects,
            structure: self.scene.structure,
            blocks: &self.scene.blocks,
            mat_frames: &self.frame.mat_frames,
            lacking_passes: self.frame.lacking_passes,
            exact_keys,
            views: &self.frame.views[..views],
            engine_passes: &self.frame.engine_passes,
            engine_plans: &plan.engine_passes,
            frame: self.frame.number,
            patched: &self.frame.patched,
            panics: self.injected_panic(plan),
        };
        let ran = plan.jobs.run(self.pool.pool(), &|j| jobs.run(j));
        ran.map_err(|p| {
            // A job that panicked part-way may have left a display list half patched: the
            // next frame builds every list again (equal commands, the cache's invariant).
            self.forget_lists();
            RenderError::JobPanicked { job: p.job, message: p.message }
        })
    }

    /// Drops every material's display lists and the patch stage's state; the next frame
    /// rebuilds the lists it uses.
    pub(super) fn forget_lists(&mut self) {
        for rec in self.res.library.get_mut().materials.iter_mut().flatten() {
            rec.lists.clear();
        }
        for patched in &mut self.frame.patched {
            let patched = patched.get_mut();
            let constants = std::mem::take(&mut patched.constants);
            *patched = PatchedLists::default();
            patched.constants = constants;
        }
    }

    /// The job a test made panic this frame.
    #[cfg(feature = "fault-injection")]
    fn injected_panic(&self, plan: &FramePlan) -> Option<super::jobs::Job> {
        let (name, frame) = self.frame.fault_panic.as_ref()?;
        (*frame == self.frame.number).then(|| plan.jobs.job_named(name)).flatten()
    }

    #[cfg(not(feature = "fault-injection"))]
    fn injected_panic(&self, _plan: &FramePlan) -> Option<super::jobs::Job> {
        None
    }

    /// Moves the recorded chunks into the packet in submission order and sums the stats;
    /// returns the first stage error.
    fn gather(
        &mut self,
        plan: &FramePlan,
        packet: &mut FramePacket<B::Chunk>,
        stats: &mut FrameStats,
    ) -> Option<RenderError> {
        // Each part's time, counts and failure, taken: a part without views this frame
        // adds none, and the shadow part never skips on an earlier frame's failure.
        let mut error = None;
        (stats.patch_ms, stats.lists) = (0.0, Default::default());
        for patched in &mut self.frame.patched {
            let patched = patched.get_mut();
            error = error.or(patched.error.take());
            patched.failed = false;
            stats.patch_ms += std::mem::take(&mut patched.ms);
            stats.lists += std::mem::take(&mut patched.counts);
        }
        let made = (stats.lists.pipelines_created, stats.lists.shader_modules_created);
        if made != (0, 0) {
            let frame = self.frame.number;
            crate::profile::message(|| {
                format!("frame {frame}: created {} pipelines and {} shader modules (first use)", made.0, made.1)
            });
        }
        stats.objects = self.scene.len() as u32;

        stats.views = plan.scenes.len() as u32;
        // Views culled on the GPU: their dispatches in one compute pass before the others,
        // but for shadow views with receivers, whose culls run in a compute pass before
        // their own pass.
        let views = &self.frame.views[..plan.scenes.len()];
        let pre = |w: &ViewFrame<B::Chunk>| w.setup.gpu && w.recorded.read().pre;
        let cull = self.res.gpu.cull.as_ref().filter(|_| views.iter().any(|w| w.setup.gpu && !pre(w)));
        let first = usize::from(cull.is_some());
        // An occlusion-culled view's pass is split in two around a compute pass.
        let splits = views.iter().filter(|w| w.recorded.read().late.on).count();
        let passes = plan.entries.len() + first + 2 * splits + views.iter().filter(|w| pre(w)).count();
        packet.passes.resize_with(passes, || PassSubmit {
            desc: PassDesc { label: "".into(), color: None, depth: None, compute: false, native: None },
            chunks: Vec::new(),
        });
        packet.passes.truncate(passes);
        stats.pass_count = plan.entries.len() as u32;
        packet.layout = PacketLayout { culled: cull.is_some(), split: 0, pre: 0 };
        for (traffic, bytes) in stats.passes.iter_mut().zip(&plan.graph.bytes) {
            *traffic = PassTraffic { loaded: bytes.loaded, stored: bytes.stored, resolved: bytes.resolved };
        }
        (stats.target_bytes, stats.target_bytes_saved) = (plan.memory.bytes, plan.memory.saved);
        let mut digest = Digest::default();
        if let Some(cull) = cull {
            let p = &mut packet.passes[0];
            p.chunks.clear();
            p.desc.clone_from(&cull.pass);
            digest.pass(&cull.pass);
            for w in self.frame.views[..plan.scenes.len()].iter_mut().filter(|w| w.setup.gpu) {
                let rec = w.recorded.get_mut();
                if rec.pre {
                    continue;
                }
                if !rec.cull_cmds.is_empty() {
                    digest.combine(rec.cull_digest);
                }
                if let Some(c) = rec.cull_chunk.take() {
                    stats.chunks += 1;
                    let dispatches = rec.cull_cmds.iter().filter(|c| matches!(c, Command::Dispatch { .. }));
                    stats.dispatches += dispatches.count() as u32;
                    p.chunks.push(c);
                }
            }
        }
        let mut at = first;
        for (k, e) in plan.entries.iter().enumerate() {
            if let (&Entry::Scene(v), Some(cull)) = (e, &self.res.gpu.cull) {
                let w = &mut self.frame.views[v];
                let rec = w.recorded.get_mut();
                if w.setup.gpu && rec.pre {
                    // A shadow view with receivers: its receiver pyramid and cull first.
                    let p = &mut packet.passes[at];
                    at += 1;
                    p.chunks.clear();
                    p.desc.clone_from(&cull.receivers_pass);
                    digest.pass(&cull.receivers_pass);
                    if !rec.cull_cmds.is_empty() {
                        digest.combine(rec.cull_digest);
                    }
                    let dispatches = rec.cull_cmds.iter().filter(|c| matches!(c, Command::Dispatch { .. }));
                    stats.dispatches += dispatches.count() as u32;
                    if let Some(c) = rec.cull_chunk.take() {
                        stats.chunks += 1;
                        p.chunks.push(c);
                    }
                    stats.receiver_culled_views += 1;
                    packet.layout.pre |= 1 << k;
                }
            }
            let p = &mut packet.passes[at];
            at += 1;
            p.chunks.clear();
            match *e {
                Entry::Scene(v) => {
                    let w = &mut self.frame.views[v];
                    let (visible, sorted, batches) = (w.visible.get_mut(), w.sorted.get_mut(), w.batches.get_mut());
                    stats.visible[v] = visible.len() as u32;
                    if w.setup.gpu {
                        let buckets = w.buckets.get_mut();
                        let (candidates, n) = (buckets.candidates().len(), buckets.buckets.len());
                        stats.visible[v] = candidates as u32;
                        stats.gpu_culled_views += 1;
                        stats.shared_culls += u32::from(w.setup.shares.is_some());
                        stats.buckets_built += u32::from(buckets.rebuilt);
                        stats.batches += n as u32;
                        w.dense = candidates >= n * crate::gpu_cull::AUTO_TO_CPU as usize;
                    } else {
                        let n = batches.batches.len();
                        w.dense = visible.len() >= n.max(1) * crate::gpu_cull::AUTO_TO_GPU as usize;
                    }
                    stats.queue_items += sorted.queue.len() as u32;
                    stats.sorts_from_last_order += u32::from(sorted.from_last_order);
                    stats.sorts_nearly_in_order += u32::from(sorted.nearly_in_order());
                    stats.sorts_unchanged += u32::from(sorted.unchanged);
                    stats.culls_kept += u32::from(w.setup.keep);
                    stats.frustum_tests_taken += u32::from(!w.setup.keep && visible.took_frustum_test());
                    stats.culls_joined += u32::from(!w.setup.keep && visible.joined());
                    stats.batches += batches.batches.len() as u32;
                    stats.cull_ms += visible.ms;
                    stats.sort_ms += sorted.ms;
                    stats.batch_ms += batches.ms;
                    let rec = w.recorded.get_mut();
                    error = error.or(rec.error.take());
                    stats.record_ms += rec.ms;
                    p.desc.clone_from(&w.setup.pass);
                    if w.setup.skip {
                        // A cached pass whose map holds what it would draw (its record job
                        // recorded nothing): it keeps it.
                        if let Some(d) = &mut p.desc.depth {
                            d.load = switchyard_backend::LoadOp::Load;
                        }
                        stats.cached_passes += 1;
                    }
                    stats.draw_calls += rec.counts.draw_calls;
                    stats.state_changes += rec.counts.state_changes;
                    stats.chunks += rec.chunks.len() as u32;
                    p.chunks.extend(rec.chunks.drain(..).flatten());
                    if let (true, Some(cull)) = (rec.late.on, &self.res.gpu.cull) {
                        let late = &mut rec.late;
                        stats.chunks += late.chunks.len() as u32 + 1;
                        let dispatches = late.compute_cmds.iter().filter(|c| matches!(c, Command::Dispatch { .. }));
                        stats.dispatches += dispatches.count() as u32;
                        stats.occluded_views += 1;
                        let passes = &mut packet.passes[at - 1..at + 2];
                        crate::occlusion::split_pass(passes, &w.setup.pass, late, &cull.occlusion_pass);
                        packet.layout.split |= 1 << k;
                    }
                    digest.pass(&packet.passes[at - 1].desc);
                    rec.digests.iter().for_each(|d| digest.combine(*d));
                    if rec.late.on {
                        digest.pass(&packet.passes[at].desc);
                        digest.combine(rec.late.compute_digest);
                        digest.pass(&packet.passes[at + 1].desc);
                        rec.late.digests.iter().for_each(|d| digest.combine(*d));
                        at += 2;
                    }
                    #[cfg(feature = "reference")]
                    w.args.clone_from(&packet.views[v].args);
                }
                Entry::Engine(o) => {
                    let rec = self.frame.engine_passes[o].get_mut();
                    error = error.or(rec.error.take());
                    stats.record_ms += rec.ms;
                    stats.draw_calls += rec.draw_calls;
                    stats.dispatches += rec.dispatches;
                    stats.state_changes += rec.state_changes;
                    digest.pass(&rec.pass);
                    if let Some(d) = rec.digest {
                        digest.combine(d);
                    }
                    p.desc.clone_from(&rec.pass);
                    if let Some(c) = rec.chunk.take() {
                        stats.chunks += 1;
                        p.chunks.push(c);
                    }
                }
            }
        }
        stats.digest = self.res.digest.then(|| digest.value());
        error
    }
}
