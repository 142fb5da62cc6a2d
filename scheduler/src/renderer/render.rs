//! The frame loop: [`Renderer::render`], [`Renderer::flush`], [`Renderer::read_color`].

use std::time::Instant;

use glam::{Mat4, Vec3};
use switchyard_backend::*;
use switchyard_kernels::cull::Frustum;

use super::jobs::FrameJobs;
use super::plan::FramePlan;
use super::*;
use crate::submit::ViewUpload;

/// Rendering a frame failed. The next frame can still succeed.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum RenderError {
    /// A view is malformed (non-finite matrix, too many views, zero-size target).
    #[error("invalid view {index}: {what}")]
    InvalidView {
        /// View index.
        index: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// A job panicked; the frame was dropped.
    #[error("job `{job}` panicked: {message}")]
    JobPanicked {
        /// The job's name.
        job: String,
        /// The panic message.
        message: String,
    },
    /// Building a display list failed (pipeline creation).
    #[error("display list for material {material}: {source}")]
    DisplayList {
        /// Material dense index.
        material: u32,
        /// The cause.
        source: ResourceError,
    },
    /// A per-frame buffer (instances, indirect arguments) could not be created or grown.
    #[error("frame buffer: {0}")]
    FrameBuffer(CreateError),
    /// The backend rejected a recorded chunk (a scheduler bug).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The backend failed to submit.
    #[error(transparent)]
    Submit(#[from] SubmitError),
    /// Reading back failed.
    #[error(transparent)]
    Readback(#[from] ReadbackError),
    /// The submission thread is gone (it panicked or the renderer is shutting down).
    #[error("submission thread stopped")]
    SubmitThreadGone,
    /// The frame's job graph leaves two conflicting jobs unordered (a scheduler bug).
    #[error("job graph: {0}")]
    JobGraph(String),
    /// A target size of zero or over the device's limit.
    #[error("invalid target size {width}x{height} (each side 1..={maximum})")]
    InvalidSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// The device's largest texture side.
        maximum: u32,
    },
    /// The output texture given to [`Renderer::render_to`] does not fit.
    #[error("invalid output texture: {what}")]
    InvalidOutput {
        /// What is wrong.
        what: &'static str,
    },
    /// The frame's passes do not form a valid frame graph.
    #[error("frame graph: {0}")]
    FrameGraph(String),
}

fn validate_views(views: &[View]) -> Result<(), RenderError> {
    if views.is_empty() || views.len() > MAX_VIEWS {
        return Err(RenderError::InvalidView { index: 0, what: "between 1 and MAX_VIEWS views" });
    }
    let mut shadows = 0;
    for (i, v) in views.iter().enumerate() {
        if !v.view_proj.is_finite() || !v.eye.is_finite() || !v.far.is_finite() || v.far <= 0.0 {
            return Err(RenderError::InvalidView { index: i, what: "matrix, eye or far is not finite and positive" });
        }
        if v.pass == PassKind::Shadow {
            shadows += 1;
            if shadows > MAX_SHADOW_VIEWS {
                return Err(RenderError::InvalidView { index: i, what: "more than MAX_SHADOW_VIEWS shadow views" });
            }
        }
    }
    Ok(())
}

impl<B: Backend> Renderer<B> {
    /// Renders one frame of `views` and hands it to the submission thread.
    ///
    /// Shadow views are submitted before forward views (which sample their maps); the
    /// i-th shadow view renders into shadow map i. A submission error of an earlier frame
    /// is returned by the next call. On an error nothing of this frame reaches the backend.
    pub fn render(&mut self, views: &[View]) -> Result<FrameStats, RenderError> {
        self.render_frame(views, None)
    }

    /// Renders one frame of `views` like [`Renderer::render`], with forward views drawing
    /// into `output` instead of the renderer's own color target: an engine's texture
    /// (imported with `WgpuBackend::import_texture`, say) of the renderer's color format
    /// (RGBA8 sRGB) and size, usable as a render target. Anything else is an
    /// [`RenderError::InvalidOutput`] before any work is done.
    pub fn render_to(&mut self, views: &[View], output: TextureId) -> Result<FrameStats, RenderError> {
        let info =
            self.shared.backend.texture_info(output).ok_or(RenderError::InvalidOutput { what: "stale handle" })?;
        let invalid = |what| Err(RenderError::InvalidOutput { what });
        if info.format != self.shared.gpu.layouts.color_format {
            return invalid("format differs from the renderer's color format");
        }
        if (info.width, info.height) != (self.config.width, self.config.height) {
            return invalid("size differs from the renderer's target size");
        }
        if !info.usage.contains(TextureUsage::RENDER_TARGET) {
            return invalid("not usable as a render target");
        }
        self.render_frame(views, Some(output))
    }

    fn render_frame(&mut self, views: &[View], output: Option<TextureId>) -> Result<FrameStats, RenderError> {
        let started = Instant::now();
        let _z = profile::zone!("frame");
        validate_views(views)?;
        let mut packet = self.take_packet()?;
        self.frame += 1;
        packet.frame = self.frame;
        self.resolve_materials();
        self.write_globals(views, &mut packet.globals.1);
        packet.globals.0 = Some(self.shared.gpu.globals_buf);
        self.write_dirty_transforms(&mut packet);
        if let Err(e) = self.prepare_views(views, output) {
            self.drop_frame(packet);
            return Err(e);
        }
        let blocks_ms = self.refresh_cull_blocks();
        self.swap_uploads(&mut packet, views.len());
        let ran = self.run_jobs(views.len());
        self.swap_uploads(&mut packet, views.len());
        let mut stats = FrameStats { cull_ms: blocks_ms, frame: self.frame, ..FrameStats::default() };
        let error = ran.err().or_else(|| self.gather(views, &mut packet, &mut stats));
        if let Some(e) = error {
            self.drop_frame(packet);
            return Err(e);
        }
        if !self.submit.send(packet) {
            return Err(RenderError::SubmitThreadGone);
        }
        if let Some(r) = &self.last_report {
            (stats.submitted_frame, stats.submit_ms, stats.gpu_wait_ms) = (r.frame, r.submit_ms, r.gpu_wait_ms);
        }
        stats.frame_ms = started.elapsed().as_secs_f64() * 1e3;
        stats.plot();
        profile::frame_mark();
        Ok(stats)
    }

    /// Waits until every frame handed to the submission thread is finished on the GPU;
    /// returns a submission error of any of them.
    pub fn flush(&mut self) -> Result<Option<SubmitReport>, RenderError> {
        if !self.submit.flush() {
            return Err(RenderError::SubmitThreadGone);
        }
        self.collect_done(false);
        if let Some(e) = self.pending_error.take() {
            return Err(e.into());
        }
        Ok(self.last_report.clone())
    }

    /// Changes the size of the main targets (and of the output `render_to` expects) from the
    /// next frame on. Only the size-dependent targets are created again — the main color and
    /// depth targets; shadow maps, buffers, pipelines and display lists stay. Frames in
    /// flight finish on the old targets first. A zero size or one over the device's limit is
    /// an error and changes nothing; so is a failed creation (the old targets stay).
    pub fn resize(&mut self, width: u32, height: u32) -> Result<(), RenderError> {
        if (width, height) == (self.config.width, self.config.height) {
            return Ok(());
        }
        let max = self.shared.backend.caps().max_texture_size;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(RenderError::InvalidSize { width, height, maximum: max });
        }
        self.flush()?;
        let b = &*self.shared.backend;
        let (color, depth) = gpu::create_main_targets(b, width, height).map_err(RenderError::FrameBuffer)?;
        let gpu = &mut self.shared.gpu;
        let old = [std::mem::replace(&mut gpu.color, color), std::mem::replace(&mut gpu.depth, depth)];
        for t in old {
            let _ = b.destroy(Resource::Texture(t));
        }
        (self.config.width, self.config.height) = (width, height);
        // The passes name the new targets and the graph's sizes change: plan again.
        self.plan = None;
        Ok(())
    }

    /// Flushes, then reads the main color target back as RGBA8 (sRGB-encoded).
    pub fn read_color(&mut self) -> Result<Image, RenderError> {
        self.flush()?;
        Ok(self.shared.backend.read_rgba8(self.shared.gpu.color)?)
    }

    // ---- the steps of a frame ------------------------------------------------------

    /// A free frame packet: finished frames are collected first (waiting for one when all
    /// are in flight); an earlier frame's submission error is returned here.
    fn take_packet(&mut self) -> Result<Box<FramePacket<B::Chunk>>, RenderError> {
        self.collect_done(false);
        loop {
            if let Some(e) = self.pending_error.take() {
                return Err(e.into());
            }
            if let Some(p) = self.free_packets.pop() {
                return Ok(p);
            }
            if !self.collect_done(true) {
                return Err(RenderError::SubmitThreadGone);
            }
        }
    }

    /// Takes finished packets back; with `block`, waits for at least one. `false`: the
    /// submission thread is gone.
    fn collect_done(&mut self, block: bool) -> bool {
        let mut got = false;
        loop {
            let next = if block && !got { self.submit.done.recv().ok() } else { self.submit.done.try_recv().ok() };
            let Some((packet, report)) = next else { return got || !block };
            got = true;
            if let Err(e) = &report.result {
                self.pending_error.get_or_insert(e.clone());
            }
            self.last_report = Some(report);
            self.free_packets.push(packet);
        }
    }

    /// Per-material frame data: the variant (material | global keywords), the key hashes,
    /// and the shadow-pass state id shared by materials of equal shader and variant.
    fn resolve_materials(&mut self) {
        self.mat_frames.clear();
        self.shadow_states.clear();
        let lib = self.library.get_mut();
        for (m, rec) in lib.materials.iter().enumerate() {
            let Some(r) = rec else {
                self.mat_frames.push(MaterialFrame::default());
                continue;
            };
            let shader = &lib.shaders[r.shader as usize];
            let global = self.global_keywords.iter().filter_map(|k| shader.keyword_bit(k)).fold(0, |a, b| a | b);
            let variant = r.keyword_mask | global;
            let key = (r.shader, variant);
            let state = self.shadow_states.iter().position(|s| *s == key).unwrap_or_else(|| {
                self.shadow_states.push(key);
                self.shadow_states.len() - 1
            }) as u32;
            self.mat_frames.push(MaterialFrame::new(m as u32, variant, r.shader, r.transparent, state));
        }
    }

    /// Each view's globals block: its matrix, the shadow matrices, light, eye, fog, time.
    fn write_globals(&self, views: &[View], out: &mut Vec<u8>) {
        let mut shadow_vp = [Mat4::ZERO; MAX_SHADOW_VIEWS];
        let shadows = views.iter().filter(|v| v.pass == PassKind::Shadow).count();
        for (dst, v) in shadow_vp.iter_mut().zip(views.iter().filter(|v| v.pass == PassKind::Shadow)) {
            *dst = v.view_proj;
        }
        let time = self
            .globals
            .find("_Time")
            .map_or(0.0, |i| f32::from_le_bytes(self.globals.bytes(i)[..4].try_into().expect("an f32 is 4 bytes")));
        out.clear();
        out.resize(views.len() * GLOBALS_SLOT, 0);
        let l = &self.lighting;
        for (v, dst) in views.iter().zip(out.chunks_mut(GLOBALS_SLOT)) {
            let mut g = [0f32; 64];
            g[..16].copy_from_slice(&v.view_proj.to_cols_array());
            for (k, m) in shadow_vp.iter().enumerate() {
                g[16 + 16 * k..32 + 16 * k].copy_from_slice(&m.to_cols_array());
            }
            g[48..52].copy_from_slice(&l.direction.normalize_or(Vec3::NEG_Y).extend(0.0).to_array());
            g[52..56].copy_from_slice(&v.eye.extend(1.0).to_array());
            g[56..60].copy_from_slice(&l.fog_color.extend(1.0).to_array());
            g[60..64].copy_from_slice(&[time, l.fog_density, if shadows == 0 { 0.0 } else { l.shadow_strength }, 0.0]);
            dst.copy_from_slice(bytemuck::cast_slice(&g));
        }
    }

    /// The transforms of objects changed since the last frame, as writes into the
    /// persistent transform buffer.
    fn write_dirty_transforms(&mut self, packet: &mut FramePacket<B::Chunk>) {
        packet.transforms.0 = Some(self.shared.gpu.transforms_buf);
        packet.transforms.1.clear();
        packet.transform_writes.clear();
        let len = self.scene.objects.len();
        for (s, e) in self.scene.dirty.drain(..) {
            // Objects removed after being marked leave ranges past the end.
            let (s, e) = ((s as usize).min(len), (e as usize).min(len));
            if s >= e {
                continue;
            }
            let start = packet.transforms.1.len();
            let src = &self.scene.objects.transforms[s..e];
            packet.transforms.1.extend_from_slice(bytemuck::cast_slice(src));
            packet.transform_writes.push((s as u64 * gpu::TRANSFORM_SIZE, start..packet.transforms.1.len()));
        }
    }

    /// The views' setup (frustum, pass, slot), the job graph for them (built once per view
    /// configuration), and each view's instance and indirect buffers grown to the scene.
    fn prepare_views(&mut self, views: &[View], output: Option<TextureId>) -> Result<(), RenderError> {
        if !self.plan.as_ref().is_some_and(|p| p.fits(views)) {
            self.plan = Some(FramePlan::build(&self.shared.gpu, &self.config, views)?);
        }
        let plan = self.plan.as_ref().expect("built above");
        for (v, view) in views.iter().enumerate() {
            let frustum = Frustum::from_view_proj(&view.view_proj);
            let mut pass = plan.passes[v];
            if let (Some(c), Some(out)) = (pass.color.as_mut(), output) {
                c.texture = out;
            }
            let setup = ViewSetup { view: *view, frustum, pass, slot: v as u32 };
            match self.views.get_mut(v) {
                Some(w) => w.setup = setup,
                None => self.views.push(ViewFrame::new(setup)),
            }
        }
        // Instance and indirect buffers hold at most one entry per object. They grow here,
        // in submission order, so buffer handles do not depend on job timing.
        let need = self.scene.len().max(1024) as u64;
        let b = &*self.shared.backend;
        for &v in &plan.order {
            let rec = self.views[v].recorded.get_mut();
            grow(b, &mut rec.instance_buf, need * 4, BufferUsage::VERTEX, "instances")
                .and_then(|_| grow(b, &mut rec.args_buf, need * 20, BufferUsage::INDIRECT, "indirect"))
                .map_err(RenderError::FrameBuffer)?;
        }
        Ok(())
    }

    /// Block bounds of objects that changed since the last frame (culling's first level).
    fn refresh_cull_blocks(&mut self) -> f64 {
        let t = Instant::now();
        let _z = profile::zone!("cull-blocks");
        let scene = &mut self.scene;
        self.pool.install(|| scene.blocks.refresh(&scene.objects.cull_input()));
        t.elapsed().as_secs_f64() * 1e3
    }

    /// Moves the packet's upload memory for the first `views` views and the constants into
    /// the stage outputs that fill it, and back after the jobs (no copy: the vectors trade
    /// places).
    fn swap_uploads(&mut self, packet: &mut FramePacket<B::Chunk>, views: usize) {
        packet.views.resize_with(views, ViewUpload::default);
        for (w, up) in self.views.iter_mut().zip(&mut packet.views) {
            std::mem::swap(&mut w.recorded.get_mut().upload, up);
        }
        std::mem::swap(&mut self.patched.get_mut().constants, &mut packet.constants.1);
        packet.constants.0 = Some(self.shared.gpu.constants_buf);
    }

    /// Runs the frame's job graph on the pool.
    fn run_jobs(&mut self, views: usize) -> Result<(), RenderError> {
        let jobs = FrameJobs {
            shared: &self.shared,
            objects: &self.scene.objects,
            blocks: &self.scene.blocks,
            mat_frames: &self.mat_frames,
            globals: &self.globals,
            globals_version: self.globals_version,
            views: &self.views[..views],
            library: &self.library,
            patched: &self.patched,
        };
        let plan = self.plan.as_ref().expect("prepare_views built the plan");
        plan.jobs
            .run(&self.pool, &|j| jobs.run(j))
            .map_err(|p| RenderError::JobPanicked { job: p.job, message: p.message })
    }

    /// Moves the recorded chunks into the packet in submission order and sums the stats;
    /// returns the first stage error.
    fn gather(
        &mut self,
        views: &[View],
        packet: &mut FramePacket<B::Chunk>,
        stats: &mut FrameStats,
    ) -> Option<RenderError> {
        let patched = self.patched.get_mut();
        let mut error = patched.error.take();
        stats.patch_ms = patched.ms;
        stats.lists = patched.counts;
        stats.objects = self.scene.len() as u32;
        stats.views = views.len() as u32;
        packet.passes.resize_with(views.len(), || PassSubmit {
            desc: PassDesc { label: "", color: None, depth: None },
            chunks: Vec::new(),
        });
        let plan = self.plan.as_ref().expect("prepare_views built the plan");
        stats.pass_count = plan.order.len() as u32;
        for (traffic, bytes) in stats.passes.iter_mut().zip(&plan.graph.bytes) {
            *traffic = PassTraffic { loaded: bytes.loaded, stored: bytes.stored, resolved: bytes.resolved };
        }
        let mut digest = Digest::default();
        for (k, &v) in plan.order.iter().enumerate() {
            let w = &mut self.views[v];
            let (visible, sorted, batches) = (w.visible.get_mut(), w.sorted.get_mut(), w.batches.get_mut());
            stats.visible[v] = visible.len() as u32;
            stats.queue_items += sorted.queue.len() as u32;
            stats.batches += batches.batches.len() as u32;
            stats.cull_ms += visible.ms;
            stats.sort_ms += sorted.ms;
            stats.batch_ms += batches.ms;
            let rec = w.recorded.get_mut();
            error = error.or(rec.error.take());
            stats.draw_calls += rec.counts.draw_calls;
            stats.state_changes += rec.counts.state_changes;
            stats.record_ms += rec.ms;
            stats.chunks += rec.chunks.len() as u32;
            digest.pass(&w.setup.pass);
            rec.digests.iter().for_each(|d| digest.combine(*d));
            let p = &mut packet.passes[k];
            p.desc = w.setup.pass;
            p.chunks.clear();
            p.chunks.extend(rec.chunks.drain(..).flatten());
        }
        stats.digest = self.shared.digest.then(|| digest.value());
        stats.upload_bytes = packet.upload_bytes();
        error
    }

    /// Returns a packet whose frame failed: nothing of it reaches the backend, and the
    /// transforms it would have uploaded go with the next frame.
    fn drop_frame(&mut self, mut packet: Box<FramePacket<B::Chunk>>) {
        packet.passes.iter_mut().for_each(|p| p.chunks.clear());
        self.free_packets.push(packet);
        let n = self.scene.len() as u32;
        if n > 0 {
            self.scene.dirty.clear();
            self.scene.dirty.push((0, n));
        }
    }
}

/// Grows a per-view buffer to at least `need` bytes (they are in no bind group).
fn grow<B: Backend>(
    b: &B,
    g: &mut Option<GrowBuffer>,
    need: u64,
    usage: BufferUsage,
    label: &str,
) -> Result<(), CreateError> {
    if g.as_ref().is_some_and(|g| g.capacity >= need) {
        return Ok(());
    }
    let cap = need.next_power_of_two();
    let id = buffer(b, label, cap, usage)?;
    if let Some(old) = g.take() {
        let _ = b.destroy(Resource::Buffer(old.id));
    }
    *g = Some(GrowBuffer { id, capacity: cap });
    Ok(())
}
