//! GPU time per pass, from timestamp queries.
//!
//! Where the device has `TIMESTAMP_QUERY`, each of a frame's first [`MAX_PASSES`] passes
//! gets a timestamp when it begins and one when it ends: written by the pass itself in
//! the `RenderBundle` encoding (the submission thread begins every pass), and between the
//! pass's command buffers in the `CommandBuffer` encoding (workers begin the passes; this
//! needs `TIMESTAMP_QUERY_INSIDE_ENCODERS`, and the driver may take such a timestamp a
//! little before or after the neighbouring work). The frame's command
//! buffer resolves them into a buffer and copies them into a read-back buffer, which is
//! mapped once the frame is submitted. When the frame is known finished
//! ([`crate::Backend::wait`]), [`PassTimer::complete`] reads them:
//! [`crate::Backend::gpu_pass_times`] returns them in ms, and with the `tracy` feature they
//! become one GPU zone per pass. Query sets and buffers are pooled: once the pool holds a
//! slot per frame in flight, timing allocates nothing per frame.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::SubmissionId;

/// Most passes per frame that are timed; later passes are not.
pub(super) const MAX_PASSES: u32 = 64;

/// Frames whose timestamps are not read back yet, at most: an older one is dropped (a
/// device that stopped finishing work must not grow the pool without end).
const MAX_PENDING: usize = 16;

/// The read-back buffer's mapping: not answered yet, mapped, failed.
const WAITING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

/// One frame's queries and buffers.
pub(super) struct Slot {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    mapped: Arc<AtomicU8>,
}

/// A frame's timing between encoding and submission.
pub(super) struct Timed {
    slot: Slot,
    passes: u32,
    #[cfg(feature = "tracy")]
    spans: Vec<Option<tracy_client::GpuSpan>>,
}

/// A submitted frame whose timestamps are not read yet.
struct Pending {
    submission: SubmissionId,
    timed: Timed,
}

pub(super) struct PassTimer {
    /// Nanoseconds per timestamp tick.
    period: f64,
    pool: Mutex<Vec<Slot>>,
    pending: Mutex<VecDeque<Pending>>,
    /// The two newest submissions read back and their passes' ms (a frame split around a
    /// late acquire is two submissions), the older one overwritten first.
    last: Mutex<[(Option<SubmissionId>, Vec<f64>); 2]>,
    #[cfg(feature = "tracy")]
    tracy: Option<tracy_client::GpuContext>,
}

fn slot(device: &wgpu::Device) -> Slot {
    let size = u64::from(MAX_PASSES) * 2 * 8;
    Slot {
        queries: device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("switchyard-pass-times"),
            ty: wgpu::QueryType::Timestamp,
            count: MAX_PASSES * 2,
        }),
        resolve: device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard-pass-times-resolve"),
            size,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        }),
        readback: device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard-pass-times-readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }),
        mapped: Arc::new(AtomicU8::new(WAITING)),
    }
}

impl PassTimer {
    /// A timer where the device has timestamp queries (`None` otherwise).
    pub(super) fn new(device: &wgpu::Device, queue: &wgpu::Queue, backend: wgpu::Backend) -> Option<Self> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let period = f64::from(queue.get_timestamp_period());
        #[cfg(not(feature = "tracy"))]
        let _ = backend;
        Some(Self {
            period,
            pool: Mutex::new(Vec::new()),
            pending: Mutex::new(VecDeque::new()),
            last: Mutex::new([(), ()].map(|()| (None, Vec::with_capacity(MAX_PASSES as usize)))),
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

    /// A slot for one frame's passes.
    pub(super) fn begin(&self, device: &wgpu::Device) -> Slot {
        self.pool.lock().pop().unwrap_or_else(|| slot(device))
    }

    /// Timestamp writes of pass `i`, when it is timed.
    pub(super) fn writes(slot: &Slot, i: usize) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        let i = u32::try_from(i).ok().filter(|&i| i < MAX_PASSES)?;
        Some(wgpu::RenderPassTimestampWrites {
            query_set: &slot.queries,
            beginning_of_pass_write_index: Some(2 * i),
            end_of_pass_write_index: Some(2 * i + 1),
        })
    }

    /// Writes timestamp `index` of a frame between its command buffers (the
    /// `CommandBuffer` encoding, where workers begin the passes; needs
    /// `TIMESTAMP_QUERY_INSIDE_ENCODERS`). Indices of passes past [`MAX_PASSES`] are skipped.
    pub(super) fn write(slot: &Slot, enc: &mut wgpu::CommandEncoder, index: usize) {
        if let Some(i) = u32::try_from(index).ok().filter(|&i| i < 2 * MAX_PASSES) {
            enc.write_timestamp(&slot.queries, i);
        }
    }

    /// Queues the resolve and copy of the frame's timestamps (`labels`: its passes).
    pub(super) fn end<'a>(
        &self,
        enc: &mut wgpu::CommandEncoder,
        slot: Slot,
        labels: impl ExactSizeIterator<Item = &'a str>,
    ) -> Option<Timed> {
        let passes = labels.len().min(MAX_PASSES as usize) as u32;
        if passes == 0 {
            self.pool.lock().push(slot);
            return None;
        }
        enc.resolve_query_set(&slot.queries, 0..2 * passes, &slot.resolve, 0);
        enc.copy_buffer_to_buffer(&slot.resolve, 0, &slot.readback, 0, u64::from(passes) * 16);
        #[cfg(not(feature = "tracy"))]
        drop(labels);
        #[cfg(feature = "tracy")]
        let spans = labels
            .take(passes as usize)
            .map(|l| {
                let mut s = self.tracy.as_ref()?.span_alloc(l, "submit", file!(), line!()).ok()?;
                s.end_zone();
                Some(s)
            })
            .collect();
        Some(Timed {
            slot,
            passes,
            #[cfg(feature = "tracy")]
            spans,
        })
    }

    /// The frame `timed` belongs to was submitted as `submission`: maps its read-back
    /// buffer (answered once the GPU finished it).
    pub(super) fn submitted(&self, submission: SubmissionId, timed: Timed) {
        let flag = timed.slot.mapped.clone();
        flag.store(WAITING, Ordering::Relaxed);
        timed.slot.readback.map_async(wgpu::MapMode::Read, 0..u64::from(timed.passes) * 16, move |r| {
            flag.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
        });
        let mut pending = self.pending.lock();
        if pending.len() >= MAX_PENDING {
            pending.pop_front();
        }
        pending.push_back(Pending { submission, timed });
    }

    /// Reads the timestamps of every submission up to `done` whose mapping was answered
    /// (the caller waited for `done`, which answers them).
    pub(super) fn complete(&self, done: SubmissionId) {
        loop {
            let p = {
                let mut pending = self.pending.lock();
                match pending.front() {
                    Some(p) if p.submission <= done && p.timed.slot.mapped.load(Ordering::Acquire) != WAITING => {
                        pending.pop_front().expect("front exists")
                    }
                    _ => return,
                }
            };
            let Pending { submission, timed } = p;
            if timed.slot.mapped.load(Ordering::Acquire) == MAPPED {
                self.read(submission, &timed);
                timed.slot.readback.unmap();
            }
            self.pool.lock().push(timed.slot);
        }
    }

    fn read(&self, submission: SubmissionId, timed: &Timed) {
        let Ok(view) = timed.slot.readback.get_mapped_range(0..u64::from(timed.passes) * 16) else { return };
        let ticks: &[u64] = bytemuck::cast_slice(&view);
        let mut last = self.last.lock();
        let older = usize::from(last[1].0 < last[0].0);
        let slot = &mut last[older];
        slot.0 = Some(submission);
        slot.1.clear();
        slot.1.extend(ticks.chunks_exact(2).map(|t| t[1].saturating_sub(t[0]) as f64 * self.period / 1e6));
        #[cfg(feature = "tracy")]
        for (span, t) in timed.spans.iter().zip(ticks.chunks_exact(2)) {
            if let Some(span) = span {
                span.upload_timestamp_start(t[0] as i64);
                span.upload_timestamp_end(t[1] as i64);
            }
        }
    }

    /// Each timed pass's GPU ms of `submission` into `out`, if it is one of the two newest read
    /// back.
    pub(super) fn pass_times(&self, submission: SubmissionId, out: &mut Vec<f64>) -> bool {
        let last = self.last.lock();
        let Some((_, ms)) = last.iter().find(|(s, _)| *s == Some(submission)) else { return false };
        out.clear();
        out.extend_from_slice(ms);
        true
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
    let s = slot(device);
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
    drop(enc.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: None,
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: &view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Discard },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: PassTimer::writes(&s, 0),
        occlusion_query_set: None,
        multiview_mask: None,
    }));
    enc.resolve_query_set(&s.queries, 0..2, &s.resolve, 0);
    enc.copy_buffer_to_buffer(&s.resolve, 0, &s.readback, 0, 16);
    queue.submit([enc.finish()]);
    let (tx, rx) = std::sync::mpsc::channel();
    s.readback.map_async(wgpu::MapMode::Read, 0..16, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).ok()?;
    rx.recv().ok()?.ok()?;
    let start = {
        let view = s.readback.get_mapped_range(0..16).ok()?;
        bytemuck::cast_slice::<u8, u64>(&view)[0]
    };
    s.readback.unmap();
    let ty = match backend {
        wgpu::Backend::Vulkan => tracy_client::GpuContextType::Vulkan,
        wgpu::Backend::Gl => tracy_client::GpuContextType::OpenGL,
        wgpu::Backend::Dx12 => tracy_client::GpuContextType::Direct3D12,
        _ => tracy_client::GpuContextType::Invalid,
    };
    client.new_gpu_context(Some("switchyard GPU"), ty, start as i64, queue.get_timestamp_period()).ok()
}
