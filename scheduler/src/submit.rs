//! The submission thread: the only thread that talks to the backend's queue.
//!
//! It receives finished frame packets through the ring of `switchyard-handoff` (a fixed
//! set of packets; at most frames-in-flight of them queued: back-pressure instead of
//! unbounded memory; the protocol is checked by a loom model in that crate), performs the
//! frame's uploads and submits its passes in order, keeps at most `frames_in_flight - 1`
//! frames on the GPU once it has handed a packet back (waiting for the oldest, timed as GPU
//! wait), and hands each packet back with its report so its memory is reused for a later
//! frame. It counts the frames finished on the GPU ([`SubmitThread::completed`]): the
//! renderer destroys what it gave up only after the frames that may read it
//! (`renderer/retire.rs`).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use switchyard_backend::{
    Acquired, Backend, BufferId, BufferWrite, SkipReason, SubmissionId, SubmitError, SurfaceError,
};
use switchyard_handoff::{ring, Consumer, Producer, Work};

use crate::stats::GpuTimes;

mod packet;
pub(crate) use packet::{FramePacket, Present, ViewUpload};

/// What the submission thread reports for one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitReport {
    /// Frame number.
    pub frame: u64,
    /// Uploads plus `submit` calls and the present, ms (a late acquire's wait apart:
    /// `acquire_ms`).
    pub submit_ms: f64,
    /// Time blocked on the GPU to respect the frames-in-flight limit, ms.
    pub gpu_wait_ms: f64,
    /// Time this thread waited for the upload thread to finish staging the batches the
    /// frame carries, ms (0 where they were ready, or there were none).
    pub upload_wait_ms: f64,
    /// Time the upload thread took to stage them, ms.
    pub stage_ms: f64,
    /// From the frame's render call to its image handed to the surface's present, ms
    /// (`None`: nothing presented).
    pub latency_ms: Option<f64>,
    /// Late acquire: how long this thread waited for the surface's image, after the
    /// frame's passes before the first one into it were submitted, ms (`None`: the frame
    /// acquired early, or presents nothing).
    pub acquire_ms: Option<f64>,
    /// Late acquire: no image for this frame, so its passes from the first one into the
    /// image on were dropped and nothing was presented (the frame's uploads and earlier
    /// passes were submitted).
    pub skipped: Option<SkipReason>,
    /// Late acquire: the surface was outdated or lost and configured again.
    pub reconfigured: bool,
    /// GPU time per pass of the newest frame this wait saw finish, where the backend
    /// times passes (an earlier frame than `frame`, or `frame` itself with one frame in
    /// flight).
    pub gpu: Option<GpuTimes>,
    /// The backend's answer.
    pub result: Result<(), SubmitError>,
}

/// The frame loop's end of the hand-off: the ring of frame packets
/// ([`switchyard_handoff::ring`], loom-checked), the thread, and what finished frames
/// reported.
pub(crate) struct SubmitThread<B: Backend> {
    ring: Option<Producer<Box<FramePacket<B::Chunk>>, SubmitReport>>,
    handle: Option<JoinHandle<()>>,
    /// What the finished frames reported.
    pub(crate) reports: Reports,
    /// The upload thread, whose batches this thread submits.
    pub(crate) uploads: crate::upload::UploadThread<B>,
    /// Every frame up to this one has finished on the GPU (or never reached it).
    completed: Arc<AtomicU64>,
}

/// What finished frames reported, as the frame loop collects them.
#[derive(Debug, Default)]
pub(crate) struct Reports {
    /// The latest finished frame's report.
    pub(crate) last: Option<SubmitReport>,
    /// The newest GPU times any report carried.
    pub(crate) gpu: Option<GpuTimes>,
    /// The first submission error not yet returned, and its frame.
    pub(crate) pending: Option<(u64, SubmitError)>,
    /// Surfaces configured again by late acquires (outdated or lost).
    pub(crate) reconfigures: u64,
}

impl Reports {
    fn note(&mut self, report: SubmitReport) {
        if let Err(e) = &report.result {
            self.pending.get_or_insert((report.frame, e.clone()));
        }
        if report.gpu.is_some() {
            self.gpu = report.gpu;
        }
        self.reconfigures += u64::from(report.reconfigured);
        self.last = Some(report);
    }
}

type Ring<C> = Producer<Box<FramePacket<C>>, SubmitReport>;

impl<B: Backend> SubmitThread<B> {
    /// Starts the thread with `frames_in_flight` packets: at most that many wait for it,
    /// and it keeps at most that many submissions on the GPU.
    pub(crate) fn spawn(backend: Arc<B>, frames_in_flight: usize) -> std::io::Result<Self> {
        let packets = (0..frames_in_flight).map(|_| Box::default()).collect();
        let (ring, consumer) = ring(packets, frames_in_flight);
        let completed = Arc::new(AtomicU64::new(0));
        let done = completed.clone();
        let (staged_tx, staged_rx) = crossbeam_channel::unbounded();
        let uploads = crate::upload::UploadThread::spawn(backend.clone(), staged_tx)?;
        let handle = std::thread::Builder::new().name("switchyard-submit".into()).spawn(move || {
            let mut staged = StagedBatches { from: staged_rx, submitted: 0, wait_ms: 0.0, stage_ms: 0.0 };
            run(&*backend, frames_in_flight, &consumer, &done, &mut staged)
        })?;
        Ok(Self { ring: Some(ring), handle: Some(handle), reports: Reports::default(), uploads, completed })
    }

    /// Every frame up to this one has finished on the GPU, or never reached it (a failed
    /// submit).
    pub(crate) fn completed(&self) -> u64 {
        self.completed.load(Ordering::Acquire)
    }

    /// Waits until every frame up to `frame` has finished (a flush when one has not).
    /// `false`: the thread is gone.
    pub(crate) fn wait_completed(&mut self, frame: u64) -> bool {
        self.completed() >= frame || self.flush()
    }

    /// The ring and the reports, borrowed apart (the ring hands reports over as it
    /// collects).
    fn parts(&mut self) -> (&mut Ring<B::Chunk>, &mut Reports) {
        (self.ring.as_mut().expect("taken only in Drop"), &mut self.reports)
    }

    /// Takes back finished packets without waiting, noting their reports. `false`: the
    /// thread is gone.
    pub(crate) fn collect(&mut self) -> bool {
        let (ring, reports) = self.parts();
        ring.collect(&mut |r| reports.note(r))
    }

    /// A free packet, waiting for a finished frame's when all are in flight. `None`: the
    /// thread is gone.
    pub(crate) fn take(&mut self) -> Option<Box<FramePacket<B::Chunk>>> {
        let (ring, reports) = self.parts();
        ring.take(&mut |r| reports.note(r))
    }

    /// A packet whose frame was not sent goes back to the free list.
    pub(crate) fn give_back(&mut self, packet: Box<FramePacket<B::Chunk>>) {
        self.parts().0.give_back(packet);
    }

    /// Sends a packet; blocks while `frames_in_flight` packets are queued.
    pub(crate) fn send(&mut self, packet: Box<FramePacket<B::Chunk>>) -> bool {
        self.parts().0.send(packet).is_ok()
    }

    /// Waits until every sent frame is submitted and finished on the GPU.
    pub(crate) fn flush(&mut self) -> bool {
        let (ring, reports) = self.parts();
        ring.flush(&mut |r| reports.note(r))
    }
}

impl<B: Backend> Drop for SubmitThread<B> {
    fn drop(&mut self) {
        // Closing the ring lets the thread drain what is queued, wait for the GPU and exit.
        self.ring.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Frames handed to the backend and not known finished, oldest first: the submission
/// (`None`: the submit failed, nothing reached the GPU), the frame, how its passes lie in
/// the packet, and the submission of its first part where a late acquire split it in two.
type InFlight =
    std::collections::VecDeque<(Option<SubmissionId>, u64, crate::stats::PacketLayout, Option<SubmissionId>)>;

/// Waits for every frame in flight and counts them finished.
fn drain<B: Backend>(backend: &B, in_flight: &mut InFlight, completed: &AtomicU64) {
    while let Some((id, frame, _, _)) = in_flight.pop_front() {
        if let Some(id) = id {
            let _ = backend.wait(id);
        }
        completed.store(frame, Ordering::Release);
    }
}

fn run<B: Backend>(
    backend: &B,
    frames_in_flight: usize,
    ring: &Consumer<Box<FramePacket<B::Chunk>>, SubmitReport>,
    completed: &AtomicU64,
    staged: &mut StagedBatches<B::Staged>,
) {
    crate::profile::thread_name("switchyard-submit");
    let mut in_flight = InFlight::new();
    let mut writes: Vec<(BufferId, u64, usize, Range<usize>)> = Vec::new();
    let mut spare: Vec<BufferWrite<'static>> = Vec::new();
    let (mut pass_ms, mut rest_ms): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    while let Some(work) = ring.recv() {
        let mut packet = match work {
            Work::Item(p) => p,
            Work::Flush => {
                drain(backend, &mut in_flight, completed);
                if !ring.flushed() {
                    break;
                }
                continue;
            }
        };
        crate::profile::zone!("submit");
        let t0 = Instant::now();
        let present = packet.present.take();
        let mut late = Late::default();
        let submitted = match present {
            Some((p @ Present { late: Some(_), .. }, _)) => {
                submit_late(backend, &mut packet, p, &mut late, &mut writes, &mut spare, staged)
            }
            _ => {
                let all = packet.passes.len();
                submit_packet(backend, &mut packet, all, &mut writes, &mut spare, staged)
            }
        };
        // The image is presented once the frame that drew it is submitted; a frame that
        // failed gives it back unpresented. A late frame that failed after its first part
        // was submitted still has that part on the GPU: it is waited for like a frame.
        let on_gpu = submitted.as_ref().ok().copied().or(late.first);
        let mut latency_ms = None;
        let result = match (submitted, present) {
            (Ok(id), Some((p, started))) if late.skipped.is_none() => {
                crate::profile::zone!("present");
                let presented = backend.present(p.surface).map(|()| id).map_err(SubmitError::Present);
                latency_ms = presented.is_ok().then(|| started.elapsed().as_secs_f64() * 1e3);
                presented
            }
            (Err(e), Some((p, _))) => {
                backend.release_image(p.surface);
                Err(e)
            }
            (r, _) => r,
        };
        // The wait for a late-acquired image is reported apart.
        let submit_ms = t0.elapsed().as_secs_f64() * 1e3 - late.acquire_ms.unwrap_or(0.0);
        let t1 = Instant::now();
        // A failed frame counts too, so that a packet comes back only once every frame
        // `frames_in_flight - 1` before it has finished (the retire rule's premise).
        in_flight.push_back((on_gpu, packet.frame, packet.layout, late.timed_first()));
        let mut waited = Ok(());
        let mut gpu = None;
        crate::profile::zone!("wait-gpu");
        while in_flight.len() >= frames_in_flight.max(1) {
            let (oldest, frame, layout, first) = in_flight.pop_front().expect("non-empty");
            if let Some(id) = oldest {
                let w = backend.wait(id);
                // A frame split around a late acquire: its first part's passes, then the rest.
                let timed = match first {
                    None => backend.gpu_pass_times(id, &mut pass_ms),
                    Some(first) => {
                        let both =
                            backend.gpu_pass_times(first, &mut pass_ms) && backend.gpu_pass_times(id, &mut rest_ms);
                        if both {
                            pass_ms.extend_from_slice(&rest_ms);
                        }
                        both
                    }
                };
                if w.is_ok() && timed {
                    gpu = Some(GpuTimes::of_submitted(frame, layout, &pass_ms));
                }
                waited = waited.and(w);
            }
            completed.store(frame, Ordering::Release);
        }
        let result = result.and(waited).map(drop);
        let gpu_wait_ms = t1.elapsed().as_secs_f64() * 1e3;
        let report = SubmitReport {
            frame: packet.frame,
            submit_ms,
            gpu_wait_ms,
            upload_wait_ms: std::mem::take(&mut staged.wait_ms),
            stage_ms: std::mem::take(&mut staged.stage_ms),
            latency_ms,
            acquire_ms: late.acquire_ms,
            skipped: late.skipped,
            reconfigured: late.reconfigured,
            gpu,
            result,
        };
        if !ring.done(packet, report) {
            break;
        }
    }
    drain(backend, &mut in_flight, completed);
}

/// What a late acquire did.
#[derive(Default)]
struct Late {
    /// The submission of the uploads and the passes before the first one into the image.
    first: Option<SubmissionId>,
    /// The rest was submitted after it, and `first` holds timed passes: the frame's GPU
    /// times are `first`'s, then the rest's.
    split: bool,
    acquire_ms: Option<f64>,
    skipped: Option<SkipReason>,
    reconfigured: bool,
}

impl Late {
    /// The first part's submission where the frame's GPU times begin with it.
    fn timed_first(&self) -> Option<SubmissionId> {
        self.first.filter(|_| self.split)
    }
}

/// A late-acquired frame: its uploads and the passes before the first one into the image,
/// then the image acquired into the stand-in (an outdated or lost surface configured
/// again once), then the rest. Without an image the rest is dropped and the skip noted.
fn submit_late<B: Backend>(
    backend: &B,
    p: &mut FramePacket<B::Chunk>,
    present: Present,
    late: &mut Late,
    writes: &mut Vec<(BufferId, u64, usize, Range<usize>)>,
    spare: &mut Vec<BufferWrite<'static>>,
    staged: &mut StagedBatches<B::Staged>,
) -> Result<SubmissionId, SubmitError> {
    let (_, size) = present.late.expect("a late acquire");
    let split = p.passes.iter().position(|pass| present.draws_into_image(&pass.desc)).unwrap_or(p.passes.len());
    let first = submit_packet(backend, p, split, writes, spare, staged);
    let drop_rest = |p: &mut FramePacket<B::Chunk>| p.passes[split..].iter_mut().for_each(|pass| pass.chunks.clear());
    let first = match first {
        Ok(id) => id,
        Err(e) => {
            drop_rest(p);
            return Err(e);
        }
    };
    late.first = Some(first);
    let waited = Instant::now();
    let acquired = {
        crate::profile::zone!("acquire");
        match backend.acquire_late(present.surface, size) {
            Err(SurfaceError::Outdated | SurfaceError::Lost) => {
                late.reconfigured = true;
                backend
                    .configure_surface(present.surface, size.0, size.1)
                    .and_then(|()| backend.acquire_late(present.surface, size))
            }
            r => r,
        }
    };
    late.acquire_ms = Some(waited.elapsed().as_secs_f64() * 1e3);
    match acquired {
        Ok(Acquired::Image(_)) => {
            crate::profile::zone!("backend-submit");
            late.split = split > 0;
            backend.submit(&[], &mut p.passes[split..])
        }
        Ok(Acquired::Skip(reason)) => {
            late.skipped = Some(reason);
            drop_rest(p);
            Ok(first)
        }
        Err(e) => {
            drop_rest(p);
            Err(SubmitError::Present(e))
        }
    }
}

/// The upload thread's end: its staged batches, how many were submitted, and the wait
/// for them and their staging time since the last report.
pub(crate) struct StagedBatches<S> {
    from: crossbeam_channel::Receiver<crate::upload::Staged<S>>,
    submitted: u64,
    wait_ms: f64,
    stage_ms: f64,
}

impl<S> StagedBatches<S> {
    /// Submits every staged batch up to number `upto`, in order, waiting for the upload
    /// thread where it has not staged one yet.
    fn submit_through<B: Backend<Staged = S>>(&mut self, backend: &B, upto: u64) -> Result<(), SubmitError> {
        while self.submitted < upto {
            // Ready (the usual case), or waited for.
            let got = self.from.try_recv().or_else(|_| {
                let waited = Instant::now();
                crate::profile::zone!("wait-upload");
                let got = self.from.recv();
                self.wait_ms += waited.elapsed().as_secs_f64() * 1e3;
                got
            });
            let Ok((number, staged, ms)) = got else {
                return Err(SubmitError::Write(switchyard_backend::WriteError::Invalid("the upload thread is gone")));
            };
            self.submitted = number;
            self.stage_ms += ms;
            crate::profile::zone!("submit-uploads");
            backend.submit_staged(staged?)?;
        }
        Ok(())
    }
}

/// The packet's uploads and its first `passes` passes, submitted.
fn submit_packet<B: Backend>(
    backend: &B,
    p: &mut FramePacket<B::Chunk>,
    passes: usize,
    writes: &mut Vec<(BufferId, u64, usize, Range<usize>)>,
    spare: &mut Vec<BufferWrite<'static>>,
    staged: &mut StagedBatches<B::Staged>,
) -> Result<SubmissionId, SubmitError> {
    staged.submit_through(backend, p.batches)?;
    let uploads = {
        crate::profile::zone!("gather-uploads");
        // Each write's byte source: 0 globals, 1 constants, 2 transforms, 3 bounds, 4 the
        // objects' materials; views after.
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
        if let Some(b) = p.bounds.0 {
            for (off, r) in &p.transform_writes {
                writes.push((b, off / 2, 3, r.start / 2..r.end / 2));
            }
        }
        if let Some(b) = p.materials.0 {
            for (off, r) in &p.transform_writes {
                writes.push((b, off / 16, 4, r.start / 16..r.end / 16));
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
                        2 => &p.transforms.1[r.clone()],
                        3 => &bytemuck::cast_slice::<_, u8>(&p.bounds.1)[r.clone()],
                        _ => &bytemuck::cast_slice::<_, u8>(&p.materials.1)[r.clone()],
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
                    let lists = v.lists.0.filter(|_| !v.lists.1.is_empty()).map(|b| BufferWrite {
                        buffer: b,
                        offset: 0,
                        data: bytemuck::cast_slice(&v.lists.1),
                    });
                    let params = v.params.iter().chain(&v.late_params).map(|(b, offset, bytes)| BufferWrite {
                        buffer: *b,
                        offset: *offset,
                        data: &bytes[..],
                    });
                    let levels = v.levels.0.filter(|_| !v.levels.1.is_empty()).map(|b| BufferWrite {
                        buffer: b,
                        offset: 0,
                        data: &v.levels.1[..],
                    });
                    inst.into_iter().chain(args).chain(lists).chain(params).chain(levels)
                })),
        );
        uploads
    };
    crate::profile::zone!("backend-submit");
    let result = backend.submit(&uploads, &mut p.passes[..passes]);
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
