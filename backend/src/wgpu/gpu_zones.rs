//! GPU zones for Tracy from wgpu timestamp queries (feature `tracy`).
//!
//! Each pass the submission thread opens gets a begin and end timestamp; once the
//! submission is known complete (`Backend::wait`), the timestamps are read back and
//! uploaded to a Tracy GPU context, one zone per pass named after it. Query sets and
//! read-back buffers are pooled. Only the `RenderBundle` encoding is covered: there the
//! submission thread begins every pass itself.

use std::collections::VecDeque;

use parking_lot::Mutex;

use crate::SubmissionId;

/// Most passes per frame with GPU zones.
const MAX_PASSES: u32 = 16;

pub(super) struct Slot {
    pub(super) queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

struct Pending {
    submission: SubmissionId,
    slot: Slot,
    spans: Vec<Option<tracy_client::GpuSpan>>,
}

pub(super) struct GpuZones {
    context: tracy_client::GpuContext,
    pool: Mutex<Vec<Slot>>,
    pending: Mutex<VecDeque<Pending>>,
}

fn slot(device: &wgpu::Device) -> Slot {
    let size = u64::from(MAX_PASSES) * 2 * 8;
    Slot {
        queries: device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("switchyard-gpu-zones"),
            ty: wgpu::QueryType::Timestamp,
            count: MAX_PASSES * 2,
        }),
        resolve: device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard-gpu-zones-resolve"),
            size,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        }),
        readback: device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard-gpu-zones-readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }),
    }
}

fn read(device: &wgpu::Device, s: &Slot, count: u32) -> Option<Vec<u64>> {
    let bytes = u64::from(count) * 8;
    let (tx, rx) = std::sync::mpsc::channel();
    s.readback.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).ok()?;
    rx.recv().ok()?.ok()?;
    let values = {
        let view = s.readback.get_mapped_range(0..bytes).ok()?;
        bytemuck::cast_slice::<u8, u64>(&view).to_vec()
    };
    s.readback.unmap();
    Some(values)
}

impl GpuZones {
    /// A GPU context calibrated with one timestamp, when Tracy runs and the device has
    /// timestamp queries.
    pub(super) fn new(device: &wgpu::Device, queue: &wgpu::Queue, backend: wgpu::Backend) -> Option<Self> {
        let client = tracy_client::Client::start();
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        // Calibrate: one empty pass writing a timestamp.
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
            timestamp_writes: Some(wgpu::RenderPassTimestampWrites {
                query_set: &s.queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
            occlusion_query_set: None,
            multiview_mask: None,
        }));
        enc.resolve_query_set(&s.queries, 0..2, &s.resolve, 0);
        enc.copy_buffer_to_buffer(&s.resolve, 0, &s.readback, 0, 16);
        queue.submit([enc.finish()]);
        let start = *read(device, &s, 2)?.first()?;
        let ty = match backend {
            wgpu::Backend::Vulkan => tracy_client::GpuContextType::Vulkan,
            wgpu::Backend::Gl => tracy_client::GpuContextType::OpenGL,
            wgpu::Backend::Dx12 => tracy_client::GpuContextType::Direct3D12,
            _ => tracy_client::GpuContextType::Invalid,
        };
        let context =
            client.new_gpu_context(Some("switchyard GPU"), ty, start as i64, queue.get_timestamp_period()).ok()?;
        Some(Self { context, pool: Mutex::new(vec![s]), pending: Mutex::new(VecDeque::new()) })
    }

    /// A slot for one frame's passes (at most [`MAX_PASSES`] get zones).
    pub(super) fn begin(&self, device: &wgpu::Device) -> Slot {
        self.pool.lock().pop().unwrap_or_else(|| slot(device))
    }

    /// Timestamp writes of pass `i`, if it gets a zone.
    pub(super) fn writes(slot: &Slot, i: usize) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        let i = u32::try_from(i).ok().filter(|&i| i < MAX_PASSES)?;
        Some(wgpu::RenderPassTimestampWrites {
            query_set: &slot.queries,
            beginning_of_pass_write_index: Some(2 * i),
            end_of_pass_write_index: Some(2 * i + 1),
        })
    }

    /// Opens and closes the CPU side of the zones and queues the resolve and copy.
    pub(super) fn end(&self, enc: &mut wgpu::CommandEncoder, slot: Slot, labels: &[&str], submission: SubmissionId) {
        let n = labels.len().min(MAX_PASSES as usize);
        if n == 0 {
            self.pool.lock().push(slot);
            return;
        }
        let spans = labels[..n]
            .iter()
            .map(|l| {
                let mut s = self.context.span_alloc(l, "submit", file!(), line!()).ok()?;
                s.end_zone();
                Some(s)
            })
            .collect::<Vec<_>>();
        let count = 2 * n as u32;
        enc.resolve_query_set(&slot.queries, 0..count, &slot.resolve, 0);
        enc.copy_buffer_to_buffer(&slot.resolve, 0, &slot.readback, 0, u64::from(count) * 8);
        self.pending.lock().push_back(Pending { submission, slot, spans });
    }

    /// Uploads the timestamps of every submission up to `done`.
    pub(super) fn complete(&self, device: &wgpu::Device, done: Option<SubmissionId>) {
        loop {
            let p = {
                let mut pending = self.pending.lock();
                match pending.front() {
                    Some(p) if done.is_none_or(|d| p.submission <= d) => pending.pop_front().expect("front exists"),
                    _ => return,
                }
            };
            if let Some(ts) = read(device, &p.slot, 2 * p.spans.len() as u32) {
                for (span, pair) in p.spans.iter().zip(ts.chunks(2)) {
                    if let Some(span) = span {
                        span.upload_timestamp_start(pair[0] as i64);
                        span.upload_timestamp_end(pair[1] as i64);
                    }
                }
            }
            self.pool.lock().push(p.slot);
        }
    }
}
