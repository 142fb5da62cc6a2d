//! The submission thread: the only thread that talks to the backend's queue.
//!
//! It receives finished frame packets over a bounded channel whose capacity is the
//! frames-in-flight limit (back-pressure instead of unbounded memory), performs the frame's
//! uploads and submits its passes in order, keeps at most `frames_in_flight` submissions
//! on the GPU (waiting for the oldest, timed as GPU wait), and hands each packet back so
//! its memory is reused for a later frame.

use std::ops::Range;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{bounded, Receiver, Sender};
use switchyard_backend::{
    Backend, BufferId, BufferWrite, DrawIndexedIndirectArgs, PassSubmit, SubmissionId, SubmitError,
};

/// One view's per-frame instance and indirect data.
#[derive(Debug, Default)]
pub(crate) struct ViewUpload {
    pub(crate) instance_buffer: Option<BufferId>,
    pub(crate) instances: Vec<u32>,
    pub(crate) args_buffer: Option<BufferId>,
    pub(crate) args: Vec<DrawIndexedIndirectArgs>,
}

/// Everything one frame hands to the submission thread. Reused across frames.
#[derive(Debug)]
pub(crate) struct FramePacket<C> {
    pub(crate) frame: u64,
    pub(crate) passes: Vec<PassSubmit<C>>,
    pub(crate) globals: (Option<BufferId>, Vec<u8>),
    pub(crate) constants: (Option<BufferId>, Vec<u8>),
    pub(crate) transforms: (Option<BufferId>, Vec<u8>),
    /// (byte offset in the transform buffer, range in `transforms.1`).
    pub(crate) transform_writes: Vec<(u64, Range<usize>)>,
    pub(crate) views: Vec<ViewUpload>,
}

impl<C> Default for FramePacket<C> {
    fn default() -> Self {
        Self {
            frame: 0,
            passes: Vec::new(),
            globals: (None, Vec::new()),
            constants: (None, Vec::new()),
            transforms: (None, Vec::new()),
            transform_writes: Vec::new(),
            views: Vec::new(),
        }
    }
}

impl<C> FramePacket<C> {
    pub(crate) fn upload_bytes(&self) -> u64 {
        let views: usize = self.views.iter().map(|v| v.instances.len() * 4 + v.args.len() * 20).sum();
        let transforms: usize = self.transform_writes.iter().map(|(_, r)| r.len()).sum();
        (self.globals.1.len() + self.constants.1.len() + transforms + views) as u64
    }
}

/// What the submission thread reports for one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitReport {
    /// Frame number.
    pub frame: u64,
    /// Uploads plus `submit` call, ms.
    pub submit_ms: f64,
    /// Time blocked on the GPU to respect the frames-in-flight limit, ms.
    pub gpu_wait_ms: f64,
    /// The backend's answer.
    pub result: Result<(), SubmitError>,
}

enum Msg<C> {
    Frame(Box<FramePacket<C>>),
    Flush(Sender<()>),
}

pub(crate) struct SubmitThread<B: Backend> {
    tx: Option<Sender<Msg<B::Chunk>>>,
    pub(crate) done: Receiver<(Box<FramePacket<B::Chunk>>, SubmitReport)>,
    handle: Option<JoinHandle<()>>,
}

impl<B: Backend> SubmitThread<B> {
    pub(crate) fn spawn(backend: Arc<B>, frames_in_flight: usize) -> std::io::Result<Self> {
        let (tx, rx) = bounded::<Msg<B::Chunk>>(frames_in_flight);
        let (done_tx, done) = bounded(frames_in_flight + 1);
        let handle = std::thread::Builder::new()
            .name("switchyard-submit".into())
            .spawn(move || run(&*backend, frames_in_flight, &rx, &done_tx))?;
        Ok(Self { tx: Some(tx), done, handle: Some(handle) })
    }

    /// Sends a packet; blocks while `frames_in_flight` packets are queued.
    pub(crate) fn send(&self, packet: Box<FramePacket<B::Chunk>>) -> bool {
        self.tx.as_ref().is_some_and(|tx| tx.send(Msg::Frame(packet)).is_ok())
    }

    /// Waits until every sent frame is submitted and finished on the GPU.
    pub(crate) fn flush(&self) -> bool {
        let (ack_tx, ack_rx) = bounded(1);
        self.tx.as_ref().is_some_and(|tx| tx.send(Msg::Flush(ack_tx)).is_ok()) && ack_rx.recv().is_ok()
    }
}

impl<B: Backend> Drop for SubmitThread<B> {
    fn drop(&mut self) {
        // Closing the channel lets the thread drain what is queued, wait for the GPU and exit.
        self.tx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn run<B: Backend>(
    backend: &B,
    frames_in_flight: usize,
    rx: &Receiver<Msg<B::Chunk>>,
    done: &Sender<(Box<FramePacket<B::Chunk>>, SubmitReport)>,
) {
    crate::profile::thread_name("switchyard-submit");
    let mut in_flight: std::collections::VecDeque<SubmissionId> = std::collections::VecDeque::new();
    let mut writes: Vec<(BufferId, u64, usize, Range<usize>)> = Vec::new();
    let mut spare: Vec<BufferWrite<'static>> = Vec::new();
    for msg in rx {
        let mut packet = match msg {
            Msg::Frame(p) => p,
            Msg::Flush(ack) => {
                while let Some(id) = in_flight.pop_front() {
                    let _ = backend.wait(id);
                }
                let _ = ack.send(());
                continue;
            }
        };
        let _zone = crate::profile::zone!("submit");
        let t0 = Instant::now();
        let result = submit_packet(backend, &mut packet, &mut writes, &mut spare);
        let submit_ms = t0.elapsed().as_secs_f64() * 1e3;
        let t1 = Instant::now();
        let result = result.and_then(|id| {
            in_flight.push_back(id);
            while in_flight.len() >= frames_in_flight.max(1) {
                let oldest = in_flight.pop_front().expect("non-empty");
                backend.wait(oldest)?;
            }
            Ok(())
        });
        let gpu_wait_ms = t1.elapsed().as_secs_f64() * 1e3;
        let report = SubmitReport { frame: packet.frame, submit_ms, gpu_wait_ms, result };
        if done.send((packet, report)).is_err() {
            break;
        }
    }
    while let Some(id) = in_flight.pop_front() {
        let _ = backend.wait(id);
    }
}

fn submit_packet<B: Backend>(
    backend: &B,
    p: &mut FramePacket<B::Chunk>,
    writes: &mut Vec<(BufferId, u64, usize, Range<usize>)>,
    spare: &mut Vec<BufferWrite<'static>>,
) -> Result<SubmissionId, SubmitError> {
    // Which byte source each write reads: 0 globals, 1 constants, 2 transforms, 3+ views.
    writes.clear();
    for (src, (buf, bytes)) in [&p.globals, &p.constants].into_iter().enumerate() {
        if let (Some(b), false) = (buf, bytes.is_empty()) {
            writes.push((*b, 0, src, 0..bytes.len()));
        }
    }
    if let Some(b) = p.transforms.0 {
        for (off, r) in &p.transform_writes {
            writes.push((b, *off, 2, r.clone()));
        }
    }
    let mut uploads = recycle(std::mem::take(spare));
    uploads.extend(
        writes
            .iter()
            .map(|(buffer, offset, src, r)| {
                let data = match src {
                    0 => &p.globals.1[r.clone()],
                    1 => &p.constants.1[r.clone()],
                    _ => &p.transforms.1[r.clone()],
                };
                BufferWrite { buffer: *buffer, offset: *offset, data }
            })
            .chain(p.views.iter().flat_map(|v| {
                let inst = v.instance_buffer.filter(|_| !v.instances.is_empty()).map(|b| BufferWrite {
                    buffer: b,
                    offset: 0,
                    data: bytemuck::cast_slice(&v.instances),
                });
                let args = v.args_buffer.filter(|_| !v.args.is_empty()).map(|b| BufferWrite {
                    buffer: b,
                    offset: 0,
                    data: bytemuck::cast_slice(&v.args),
                });
                inst.into_iter().chain(args)
            })),
    );
    let result = backend.submit(&uploads, &mut p.passes);
    *spare = recycle(uploads);
    result
}

/// Empties a vector and reuses its allocation for another lifetime: an in-place collect
/// of an empty `vec::IntoIter` keeps the buffer, so the submission thread does not
/// allocate its upload list every frame.
fn recycle<'b>(mut v: Vec<BufferWrite<'_>>) -> Vec<BufferWrite<'b>> {
    v.clear();
    v.into_iter().map(|_| unreachable!("the vector is empty")).collect()
}
