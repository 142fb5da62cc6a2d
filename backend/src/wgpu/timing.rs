//! GPU time per pass, through wgpu-profiler.
//!
//! Where the device has `TIMESTAMP_QUERY`, each of a frame's first [`MAX_PASSES`] passes
//! is a scope of a [`wgpu_profiler::GpuProfiler`]: timed by the pass itself in the
//! `RenderBundle` encoding (the submission thread begins every pass: the pass's
//! timestamp writes), and between the pass's command buffers in the `CommandBuffer`
//! encoding (workers begin the passes; this needs `TIMESTAMP_QUERY_INSIDE_ENCODERS`, and
//! the driver may take such a timestamp a little before or after the neighbouring work).
//! The frame's command buffer resolves the queries; once the frame is submitted the
//! profiler's frame ends and its read-back buffers are mapped. When the frame is known
//! finished ([`crate::Backend::wait`]), [`PassTimer::complete`] takes the profiler's
//! results: [`crate::Backend::gpu_pass_times`] returns each pass's ms,
//! [`super::WgpuBackend::gpu_profile`] the scopes themselves (for wgpu-profiler's chrome
//! trace or puffin output), and with the `tracy` feature they become one GPU zone per pass.
//!
//! Frames overlap (a frame is encoded while earlier ones are on the GPU, and a frame that
//! fails between encoding and submission leaves its scopes behind), so each frame takes a
//! profiler of its own from a pool and gives it back once read: a profiler's frame holds
//! exactly one submission's passes, and a failed frame's profiler is dropped with its
//! scopes. Each profiler keeps its query sets and buffers, so once the pool holds one per
//! frame in flight, timing creates no GPU objects per frame.
//!
//! Tracy: wgpu-profiler's own Tracy output needs tracy-client 0.18, and Switchyard links
//! 0.19 (the protocol of the Tracy 0.14 tools), so the results go to a Tracy GPU context
//! of 0.19 here instead.
//!
//! What the pool of raw timestamps this replaced measured better: wgpu-profiler hands
//! out `f64` seconds of the GPU clock, and where that clock counts from far back (about
//! 1.8e18 ns on the H200, RUNS.md run 29) an `f64` holds it to about 0.24 µs, so scopes
//! and Tracy zones start and end on that grid. Passes of 0.1 ms and more do not show it;
//! nothing here needs finer.

use std::collections::VecDeque;

use parking_lot::Mutex;
use wgpu_profiler::{GpuProfiler, GpuProfilerQuery, GpuProfilerSettings, GpuTimerQueryResult};

use crate::SubmissionId;

/// Most passes per frame that are timed; later passes are not.
pub(super) const MAX_PASSES: usize = 64;

/// Frames whose timestamps are not read back yet, at most: an older one is dropped (a
/// device that stopped finishing work must not grow the pool without end).
const MAX_PENDING: usize = 16;

/// One frame's profiler and its open scope: passes are begun in order, each ended before
/// the next begins.
pub(super) struct Slot {
    profiler: GpuProfiler,
    /// The scope begun and not ended yet.
    open: Option<GpuProfilerQuery>,
    /// Passes begun.
    passes: usize,
}

/// A frame's timing between encoding and submission.
pub(super) struct Timed {
    profiler: GpuProfiler,
    #[cfg(feature = "tracy")]
    spans: Vec<Option<tracy_client::GpuSpan>>,
}

/// A submitted frame whose timestamps are not read yet.
struct Pending {
    submission: SubmissionId,
    timed: Timed,
}

/// What a read-back submission measured.
#[derive(Default)]
struct Read {
    submission: Option<SubmissionId>,
    ms: Vec<f64>,
    scopes: Vec<GpuTimerQueryResult>,
}

pub(super) struct PassTimer {
    device: wgpu::Device,
    /// Nanoseconds per timestamp tick.
    period: f32,
    pool: Mutex<Vec<GpuProfiler>>,
    pending: Mutex<VecDeque<Pending>>,
    /// The two newest submissions read back (a frame split around a late acquire is two
    /// submissions), the older one overwritten first.
    last: Mutex<[Read; 2]>,
    #[cfg(feature = "tracy")]
    tracy: Option<tracy_client::GpuContext>,
}

/// A profiler for one frame at a time: no debug groups (a scope may end in another
/// encoder than the one it began in: the `CommandBuffer` encoding's timestamps sit between
/// the passes' command buffers), and one pending frame (each frame has its own).
fn profiler(device: &wgpu::Device) -> GpuProfiler {
    let settings =
        GpuProfilerSettings { enable_timer_queries: true, enable_debug_groups: false, max_num_pending_frames: 1 };
    GpuProfiler::new(device, settings).expect("the settings above are valid")
}

impl Slot {
    /// Begins the next pass's scope for the pass's own timestamp writes (`None` past
    /// [`MAX_PASSES`]); [`Slot::end_pass`] ends it once the pass has ended.
    pub(super) fn begin_pass(&mut self, enc: &mut wgpu::CommandEncoder, label: &str) -> Option<&GpuProfilerQuery> {
        let query = (self.passes < MAX_PASSES).then(|| self.profiler.begin_pass_query(label, enc))?;
        Some(self.open(query))
    }

    /// Begins the next pass's scope with a timestamp written into `enc`, ahead of the
    /// pass's command buffers (the `CommandBuffer` encoding; needs
    /// `TIMESTAMP_QUERY_INSIDE_ENCODERS`).
    pub(super) fn begin_between(&mut self, enc: &mut wgpu::CommandEncoder, label: &str) {
        if self.passes < MAX_PASSES {
            let query = self.profiler.begin_query(label, enc);
            self.open(query);
        }
    }

    fn open(&mut self, query: GpuProfilerQuery) -> &GpuProfilerQuery {
        debug_assert!(self.open.is_none(), "the previous pass's scope was ended");
        self.passes += 1;
        self.open.insert(query)
    }

    /// Ends the open scope, if any: after its pass has ended, in the encoder that follows
    /// it (where the scope took its own timestamp, its end is written there).
    pub(super) fn end_pass(&mut self, enc: &mut wgpu::CommandEncoder) {
        if let Some(query) = self.open.take() {
            self.profiler.end_query(enc, query);
        }
    }
}

impl PassTimer {
    /// A timer where the device has timestamp queries (`None` otherwise).
    pub(super) fn new(device: &wgpu::Device, queue: &wgpu::Queue, backend: wgpu::Backend) -> Option<Self> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        #[cfg(not(feature = "tracy"))]
        let _ = backend;
        Some(Self {
            device: device.clone(),
            period: queue.get_timestamp_period(),
            pool: Mutex::new(Vec::new()),
            pending: Mutex::new(VecDeque::new()),
            last: Mutex::new(Default::default()),
            #[cfg(feature = "tracy")]
            tracy: tracy_context(device, queue, backend),
        })
    }

    /// Whether passes become GPU zones in Tracy.
    pub(super) fn zones(&self) -> bool {
        #[cfg(feature = "tracy")]
        return self.tracy.is_some();
        #[cfg(not(feature = "tracy"))]
        false
    }

    /// A profiler for one frame's passes.
    pub(super) fn begin(&self) -> Slot {
        let profiler = self.pool.lock().pop().unwrap_or_else(|| profiler(&self.device));
        Slot { profiler, open: None, passes: 0 }
    }

    /// Queues the resolve and copy of the frame's timestamps (`labels`: its passes). Every
    /// scope must have been ended.
    pub(super) fn end<'a>(
        &self,
        enc: &mut wgpu::CommandEncoder,
        slot: Slot,
        labels: impl ExactSizeIterator<Item = &'a str>,
    ) -> Option<Timed> {
        let Slot { mut profiler, open, passes } = slot;
        debug_assert!(open.is_none(), "every pass's scope was ended");
        if passes == 0 {
            self.pool.lock().push(profiler);
            return None;
        }
        profiler.resolve_queries(enc);
        #[cfg(not(feature = "tracy"))]
        drop(labels);
        #[cfg(feature = "tracy")]
        let spans = labels
            .take(passes)
            .map(|l| {
                let mut s = self.tracy.as_ref()?.span_alloc(l, "submit", file!(), line!()).ok()?;
                s.end_zone();
                Some(s)
            })
            .collect();
        Some(Timed {
            profiler,
            #[cfg(feature = "tracy")]
            spans,
        })
    }

    /// The frame `timed` belongs to was submitted as `submission`: ends the profiler's
    /// frame, which maps its read-back buffers (answered once the GPU finished it).
    pub(super) fn submitted(&self, submission: SubmissionId, mut timed: Timed) {
        if timed.profiler.end_frame().is_err() {
            // A scope left open or unresolved (not expected: `end` resolves every one):
            // the profiler and its scopes are dropped.
            return;
        }
        let mut pending = self.pending.lock();
        if pending.len() >= MAX_PENDING {
            pending.pop_front();
        }
        pending.push_back(Pending { submission, timed });
    }

    /// Reads the timestamps of every submission up to `done` whose read-back was answered
    /// (the caller waited for `done`, which answers them).
    pub(super) fn complete(&self, done: SubmissionId) {
        loop {
            let mut p = {
                let mut pending = self.pending.lock();
                match pending.front() {
                    Some(p) if p.submission <= done => pending.pop_front().expect("front exists"),
                    _ => return,
                }
            };
            let Some(scopes) = p.timed.profiler.process_finished_frame(self.period) else {
                // Not answered yet: back to the front, read on a later wait.
                self.pending.lock().push_front(p);
                return;
            };
            self.read(p.submission, &p.timed, scopes);
            self.pool.lock().push(p.timed.profiler);
        }
    }

    fn read(&self, submission: SubmissionId, timed: &Timed, scopes: Vec<GpuTimerQueryResult>) {
        #[cfg(not(feature = "tracy"))]
        let _ = timed;
        if scopes.iter().any(|s| s.time.is_none()) {
            // A scope without timestamps (not expected where `Caps::gpu_timestamps`):
            // the submission counts as not timed.
            return;
        }
        let mut last = self.last.lock();
        let older = usize::from(last[1].submission < last[0].submission);
        let slot = &mut last[older];
        slot.submission = Some(submission);
        slot.ms.clear();
        slot.ms.extend(scopes.iter().filter_map(|s| s.time.as_ref()).map(|t| (t.end - t.start).max(0.0) * 1e3));
        #[cfg(feature = "tracy")]
        for (span, scope) in timed.spans.iter().zip(&scopes) {
            if let (Some(span), Some(t)) = (span, &scope.time) {
                // wgpu-profiler gives seconds (ticks × period); Tracy takes ticks.
                let ticks = |s: f64| (s * 1e9 / f64::from(self.period)).round() as i64;
                span.upload_timestamp_start(ticks(t.start));
                span.upload_timestamp_end(ticks(t.end));
            }
        }
        slot.scopes = scopes;
    }

    /// Each timed pass's GPU ms of `submission` into `out`, if it is one of the two newest read
    /// back.
    pub(super) fn pass_times(&self, submission: SubmissionId, out: &mut Vec<f64>) -> bool {
        let last = self.last.lock();
        let Some(read) = last.iter().find(|r| r.submission == Some(submission)) else { return false };
        out.clear();
        out.extend_from_slice(&read.ms);
        true
    }

    /// The scopes of the newest submission read back.
    pub(super) fn newest(&self) -> Option<(SubmissionId, Vec<GpuTimerQueryResult>)> {
        let last = self.last.lock();
        let read = last.iter().filter(|r| r.submission.is_some()).max_by_key(|r| r.submission)?;
        Some((read.submission?, read.scopes.clone()))
    }
}

/// A Tracy GPU context calibrated with one timestamp, when Tracy runs.
#[cfg(feature = "tracy")]
fn tracy_context(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    backend: wgpu::Backend,
) -> Option<tracy_client::GpuContext> {
    let client = tracy_client::Client::start();
    let mut p = profiler(device);
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("switchyard-gpu-zones-calibrate"),
        size: wgpu::Extent3d { width: 1, height: 1, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let mut enc = device.create_command_encoder(&Default::default());
    let query = p.begin_pass_query("calibrate", &mut enc);
    drop(enc.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: None,
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: &view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Discard },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: query.render_pass_timestamp_writes(),
        occlusion_query_set: None,
        multiview_mask: None,
    }));
    p.end_query(&mut enc, query);
    p.resolve_queries(&mut enc);
    queue.submit([enc.finish()]);
    p.end_frame().ok()?;
    device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).ok()?;
    let start = p.process_finished_frame(queue.get_timestamp_period())?.first()?.time.clone()?.start;
    let ty = match backend {
        wgpu::Backend::Vulkan => tracy_client::GpuContextType::Vulkan,
        wgpu::Backend::Gl => tracy_client::GpuContextType::OpenGL,
        wgpu::Backend::Dx12 => tracy_client::GpuContextType::Direct3D12,
        _ => tracy_client::GpuContextType::Invalid,
    };
    let period = queue.get_timestamp_period();
    let ticks = (start * 1e9 / f64::from(period)).round() as i64;
    client.new_gpu_context(Some("switchyard GPU"), ty, ticks, period).ok()
}

impl super::WgpuBackend {
    /// The GPU scopes of the newest submission whose times were read back (after a
    /// [`crate::Backend::wait`] that covered it), as wgpu-profiler gives them: one per
    /// timed pass, labelled with the pass's name, in seconds on the GPU's clock. Feed them
    /// to `wgpu_profiler::chrometrace::write_chrometrace` (or wgpu-profiler's puffin
    /// output). `None` where passes are not timed ([`crate::Caps::gpu_timestamps`]) or
    /// none was read back yet.
    pub fn gpu_profile(&self) -> Option<(SubmissionId, Vec<GpuTimerQueryResult>)> {
        self.timer.as_ref()?.newest()
    }
}
