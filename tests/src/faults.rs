//! [`FaultBackend`]: wraps any backend and fails on request — a submit, every call after a
//! lost device, a buffer or texture creation out of memory, a surface acquire (outdated,
//! lost, timed out, occluded) — or runs as a slow GPU; and
//! it watches what reaches it: submissions, frames in flight, live chunks, and each
//! submitted frame's command stream up to handle names ([`FaultBackend::frames`]).
//!
//! Only with the `fault-injection` feature.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use switchyard_backend::*;

/// A chunk of the wrapped backend, with the commands behind it and a live count.
#[derive(Debug)]
pub struct FaultChunk<C> {
    inner: C,
    pass: PassDesc,
    commands: Vec<Command>,
    _live: Live,
}

#[derive(Debug)]
struct Live(Arc<AtomicUsize>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// The wrapped backend and what it is told to do wrong.
#[derive(Debug)]
pub struct FaultBackend<B: Backend> {
    inner: B,
    /// Submit attempts so far.
    submits: AtomicU64,
    /// The submit attempt (1-based) that fails with a validation error (0: none).
    fail_submit: AtomicU64,
    /// The submit attempt from which the device is lost (0: none).
    lose_at_submit: AtomicU64,
    lost: AtomicBool,
    /// Buffer and texture creations from now until one fails out of memory (0: none).
    oom_in: AtomicU64,
    /// Render pipeline creations from now until the one that fails (0: none).
    fail_pipeline_in: AtomicU64,
    /// CPU writes (buffers and textures) from now until the one that loses the device (0:
    /// none).
    lose_in_writes: AtomicU64,
    /// GPU time of each submission.
    gpu_ms: AtomicU64,
    /// Finish times of the submissions on the modelled GPU, oldest first.
    queue: Mutex<VecDeque<(SubmissionId, Instant)>>,
    max_in_flight: AtomicUsize,
    live_chunks: Arc<AtomicUsize>,
    max_live_chunks: AtomicUsize,
    frames: Mutex<Vec<u64>>,
    /// What the next acquires answer instead of the wrapped backend, in order.
    acquires: Mutex<VecDeque<AcquireFault>>,
    configures: AtomicU64,
}

/// What an injected acquire answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireFault {
    /// `SurfaceError::Outdated`.
    Outdated,
    /// `SurfaceError::Lost`.
    Lost,
    /// No image in time: `Acquired::Skip(SkipReason::Timeout)`.
    Timeout,
    /// The window is hidden: `Acquired::Skip(SkipReason::Occluded)`.
    Occluded,
}

impl<B: Backend> FaultBackend<B> {
    /// The next injected acquire answer, early or late.
    fn injected_acquire(&self) -> Option<Result<Acquired, SurfaceError>> {
        Some(match self.acquires.lock().expect("not poisoned").pop_front()? {
            AcquireFault::Outdated => Err(SurfaceError::Outdated),
            AcquireFault::Lost => Err(SurfaceError::Lost),
            AcquireFault::Timeout => Ok(Acquired::Skip(SkipReason::Timeout)),
            AcquireFault::Occluded => Ok(Acquired::Skip(SkipReason::Occluded)),
        })
    }

    /// Wraps `inner`; it behaves exactly like it until told otherwise.
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            submits: AtomicU64::new(0),
            fail_submit: AtomicU64::new(0),
            lose_at_submit: AtomicU64::new(0),
            lost: AtomicBool::new(false),
            oom_in: AtomicU64::new(0),
            fail_pipeline_in: AtomicU64::new(0),
            lose_in_writes: AtomicU64::new(0),
            gpu_ms: AtomicU64::new(0),
            queue: Mutex::new(VecDeque::new()),
            max_in_flight: AtomicUsize::new(0),
            live_chunks: Arc::new(AtomicUsize::new(0)),
            max_live_chunks: AtomicUsize::new(0),
            frames: Mutex::new(Vec::new()),
            acquires: Mutex::new(VecDeque::new()),
            configures: AtomicU64::new(0),
        }
    }

    /// The next acquires answer `faults`, one each, before the wrapped backend answers again.
    pub fn fail_acquires(&self, faults: &[AcquireFault]) {
        self.acquires.lock().expect("not poisoned").extend(faults);
    }

    /// Surface configurations so far.
    pub fn configures(&self) -> u64 {
        self.configures.load(SeqCst)
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// The `n`-th submit from now (1: the next) fails with a validation error.
    pub fn fail_submit_in(&self, n: u64) {
        self.fail_submit.store(self.submits.load(SeqCst) + n, SeqCst);
    }

    /// The device is lost at the `n`-th submit from now (1: the next): it and every call
    /// after it fail with `DeviceLost`.
    pub fn lose_device_in(&self, n: u64) {
        self.lose_at_submit.store(self.submits.load(SeqCst) + n, SeqCst);
    }

    /// The device is lost now.
    pub fn lose_device(&self) {
        self.lost.store(true, SeqCst);
    }

    /// The device is lost at the `n`-th CPU write from now (1: the next; a buffer or
    /// texture write, or one upload of a submitted frame): it and every call after it fail
    /// with `DeviceLost`.
    pub fn lose_device_at_write(&self, n: u64) {
        self.lose_in_writes.store(n, SeqCst);
    }

    /// A write: counts down to a loss.
    fn write_fault(&self) -> Result<(), WriteError> {
        let left = self.lose_in_writes.load(SeqCst);
        if left > 0 {
            self.lose_in_writes.store(left - 1, SeqCst);
            if left == 1 {
                self.lost.store(true, SeqCst);
            }
        }
        self.lost_or(WriteError::DeviceLost)
    }

    /// The `n`-th buffer or texture creation from now (1: the next) fails out of memory.
    pub fn out_of_memory_in(&self, n: u64) {
        self.oom_in.store(n, SeqCst);
    }

    /// The `n`-th render pipeline creation from now (1: the next) fails as an invalid
    /// descriptor, creating nothing.
    pub fn fail_pipeline_in(&self, n: u64) {
        self.fail_pipeline_in.store(n, SeqCst);
    }

    /// Every submission takes `ms` of modelled GPU time; `wait` blocks until it is done.
    pub fn set_gpu_ms(&self, ms: u64) {
        self.gpu_ms.store(ms, SeqCst);
    }

    /// Submits attempted.
    pub fn submits(&self) -> u64 {
        self.submits.load(SeqCst)
    }

    /// The most submissions unfinished on the modelled GPU at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(SeqCst)
    }

    /// Chunks alive now, and the most alive at once.
    pub fn live_chunks(&self) -> (usize, usize) {
        (self.live_chunks.load(SeqCst), self.max_live_chunks.load(SeqCst))
    }

    /// One value per frame submitted successfully, in order: its passes' attachments and
    /// commands digested with every handle replaced by the order of its first use in the
    /// frame. Equal values: equal command streams up to the names a device gave its
    /// objects (a new device names them differently).
    pub fn frames(&self) -> Vec<u64> {
        self.frames.lock().expect("not poisoned").clone()
    }

    fn is_lost(&self) -> bool {
        self.lost.load(SeqCst)
    }

    fn create_fault(&self, bytes: u64) -> Result<(), CreateError> {
        if self.is_lost() {
            return Err(CreateError::DeviceLost);
        }
        let left = self.oom_in.load(SeqCst);
        if left > 0 {
            self.oom_in.store(left - 1, SeqCst);
            if left == 1 {
                return Err(CreateError::OutOfMemory { requested: bytes });
            }
        }
        Ok(())
    }

    fn lost_or<E>(&self, e: E) -> Result<(), E> {
        if self.is_lost() {
            return Err(e);
        }
        Ok(())
    }
}

impl<B: Backend> Backend for FaultBackend<B> {
    type Chunk = FaultChunk<B::Chunk>;
    type Staged = B::Staged;

    fn name(&self) -> String {
        format!("fault({})", self.inner.name())
    }
    fn caps(&self) -> Caps {
        self.inner.caps()
    }
    fn live(&self) -> switchyard_backend::LiveResources {
        self.inner.live()
    }
    fn digests_commands(&self) -> bool {
        self.inner.digests_commands()
    }
    fn create_buffer(&self, desc: &BufferDesc) -> Result<BufferId, CreateError> {
        self.create_fault(desc.size)?;
        self.inner.create_buffer(desc)
    }
    fn write_buffer(&self, buffer: BufferId, offset: u64, data: &[u8]) -> Result<(), WriteError> {
        self.write_fault()?;
        self.inner.write_buffer(buffer, offset, data)
    }
    fn create_texture(&self, desc: &TextureDesc) -> Result<TextureId, CreateError> {
        self.create_fault(desc.format.mip_chain_bytes(desc.width, desc.height, desc.mip_levels))?;
        self.inner.create_texture(desc)
    }
    fn write_texture_level(&self, texture: TextureId, level: u32, data: &[u8]) -> Result<(), WriteError> {
        self.write_fault()?;
        self.inner.write_texture_level(texture, level, data)
    }
    fn generate_mips(&self, texture: TextureId) -> Result<(), WriteError> {
        self.write_fault()?;
        self.inner.generate_mips(texture)
    }
    fn create_sampler(&self, desc: &SamplerDesc) -> Result<SamplerId, CreateError> {
        self.lost_or(CreateError::DeviceLost)?;
        self.inner.create_sampler(desc)
    }
    fn create_shader(&self, desc: &ShaderModuleDesc) -> Result<ShaderId, CreateError> {
        self.lost_or(CreateError::DeviceLost)?;
        self.inner.create_shader(desc)
    }
    fn create_bind_group_layout(&self, desc: &BindGroupLayoutDesc) -> Result<BindGroupLayoutId, CreateError> {
        self.lost_or(CreateError::DeviceLost)?;
        self.inner.create_bind_group_layout(desc)
    }
    fn create_bind_group(&self, desc: &BindGroupDesc) -> Result<BindGroupId, CreateError> {
        self.lost_or(CreateError::DeviceLost)?;
        self.inner.create_bind_group(desc)
    }
    fn create_pipeline(&self, desc: &PipelineDesc) -> Result<PipelineId, CreateError> {
        self.lost_or(CreateError::DeviceLost)?;
        let left = self.fail_pipeline_in.load(SeqCst);
        if left > 0 {
            self.fail_pipeline_in.store(left - 1, SeqCst);
            if left == 1 {
                return Err(CreateError::Invalid("injected pipeline failure".into()));
            }
        }
        self.inner.create_pipeline(desc)
    }

    fn create_compute_pipeline(&self, desc: &ComputePipelineDesc) -> Result<PipelineId, CreateError> {
        self.lost_or(CreateError::DeviceLost)?;
        self.inner.create_compute_pipeline(desc)
    }
    fn destroy(&self, resource: Resource) -> Result<(), DestroyError> {
        self.inner.destroy(resource)
    }
    fn texture_info(&self, texture: TextureId) -> Option<TextureInfo> {
        self.inner.texture_info(texture)
    }
    fn buffer_info(&self, buffer: BufferId) -> Option<switchyard::backend::BufferInfo> {
        self.inner.buffer_info(buffer)
    }

    fn record(
        &self,
        pass: &PassDesc,
        position: ChunkPosition,
        commands: &[Command],
    ) -> Result<Self::Chunk, RecordError> {
        self.lost_or(RecordError::DeviceLost)?;
        let inner = self.inner.record(pass, position, commands)?;
        let live = self.live_chunks.fetch_add(1, SeqCst) + 1;
        self.max_live_chunks.fetch_max(live, SeqCst);
        Ok(FaultChunk { inner, pass: pass.clone(), commands: commands.to_vec(), _live: Live(self.live_chunks.clone()) })
    }

    fn submit(
        &self,
        uploads: &[BufferWrite<'_>],
        passes: &mut [PassSubmit<Self::Chunk>],
    ) -> Result<SubmissionId, SubmitError> {
        let n = self.submits.fetch_add(1, SeqCst) + 1;
        if n == self.lose_at_submit.load(SeqCst) {
            self.lost.store(true, SeqCst);
        }
        self.lost_or(SubmitError::DeviceLost)?;
        // A frame's uploads are writes too (the device may be lost at one of them).
        for _ in uploads {
            if let Err(e) = self.write_fault() {
                passes.iter_mut().for_each(|p| p.chunks.clear());
                return Err(SubmitError::Write(e));
            }
        }
        if n == self.fail_submit.load(SeqCst) {
            passes.iter_mut().for_each(|p| p.chunks.clear());
            return Err(SubmitError::Validation("fault injected into submit".into()));
        }
        let frame = canonical(passes);
        let mut inner: Vec<PassSubmit<B::Chunk>> = passes
            .iter_mut()
            .map(|p| PassSubmit { desc: p.desc.clone(), chunks: p.chunks.drain(..).map(|c| c.inner).collect() })
            .collect();
        let id = self.inner.submit(uploads, &mut inner)?;
        self.frames.lock().expect("not poisoned").push(frame);
        let now = Instant::now();
        let mut q = self.queue.lock().expect("not poisoned");
        let start = q.back().map_or(now, |&(_, t)| t.max(now));
        q.push_back((id, start + Duration::from_millis(self.gpu_ms.load(SeqCst))));
        q.retain(|&(_, t)| t > now);
        self.max_in_flight.fetch_max(q.len(), SeqCst);
        Ok(id)
    }

    fn stage(&self, uploads: &switchyard_backend::Uploads<'_>) -> Result<B::Staged, SubmitError> {
        // Staging writes: a loss armed for a write meets it here.
        if !uploads.buffers.is_empty() || !uploads.textures.is_empty() {
            self.write_fault().map_err(|_| SubmitError::DeviceLost)?;
        }
        self.inner.stage(uploads)
    }

    fn prepare_uploads(
        &self,
        prepare: &switchyard_backend::PrepareUploads<'_>,
    ) -> Result<switchyard_backend::PreparedUploads, CreateError> {
        self.lost_or(CreateError::DeviceLost)?;
        self.inner.prepare_uploads(prepare)
    }

    fn submit_staged(&self, staged: B::Staged) -> Result<(), SubmitError> {
        self.lost_or(SubmitError::DeviceLost)?;
        self.inner.submit_staged(staged)
    }

    fn copy_buffers(&self, copies: &[BufferCopy]) -> Result<(), SubmitError> {
        self.lost_or(SubmitError::DeviceLost)?;
        self.inner.copy_buffers(copies)
    }

    fn wait(&self, submission: SubmissionId) -> Result<(), SubmitError> {
        self.lost_or(SubmitError::DeviceLost)?;
        let done = self.queue.lock().expect("not poisoned").iter().find(|(id, _)| *id == submission).map(|e| e.1);
        if let Some(t) = done {
            std::thread::sleep(t.saturating_duration_since(Instant::now()));
        }
        self.inner.wait(submission)
    }

    fn gpu_pass_times(&self, submission: SubmissionId, out: &mut Vec<f64>) -> bool {
        self.inner.gpu_pass_times(submission, out)
    }

    fn read_rgba8(&self, texture: TextureId) -> Result<Image, ReadbackError> {
        self.lost_or(ReadbackError::DeviceLost)?;
        self.inner.read_rgba8(texture)
    }

    fn acquire(&self, surface: SurfaceId) -> Result<Acquired, SurfaceError> {
        self.lost_or(SurfaceError::DeviceLost)?;
        self.injected_acquire().unwrap_or_else(|| self.inner.acquire(surface))
    }

    fn surface_stand_in(&self, surface: SurfaceId) -> Option<TextureId> {
        self.inner.surface_stand_in(surface)
    }

    fn acquire_late(&self, surface: SurfaceId, size: (u32, u32)) -> Result<Acquired, SurfaceError> {
        self.lost_or(SurfaceError::DeviceLost)?;
        self.injected_acquire().unwrap_or_else(|| self.inner.acquire_late(surface, size))
    }

    fn configure_surface(&self, surface: SurfaceId, width: u32, height: u32) -> Result<(), SurfaceError> {
        self.lost_or(SurfaceError::DeviceLost)?;
        self.configures.fetch_add(1, SeqCst);
        self.inner.configure_surface(surface, width, height)
    }

    fn surface_size(&self, surface: SurfaceId) -> Option<(u32, u32)> {
        self.inner.surface_size(surface)
    }

    fn present(&self, surface: SurfaceId) -> Result<(), SurfaceError> {
        self.lost_or(SurfaceError::DeviceLost)?;
        self.inner.present(surface)
    }

    fn release_image(&self, surface: SurfaceId) {
        self.inner.release_image(surface);
    }
}

/// A frame's passes and commands digested with handles renamed by first use.
fn canonical<C>(passes: &[PassSubmit<FaultChunk<C>>]) -> u64 {
    let mut names: HashMap<(u8, u64), u64> = HashMap::new();
    let mut d = Digest::default();
    let mut name = |kind: u8, bits: u64, d: &mut Digest| {
        let next = names.len() as u64;
        d.word(*names.entry((kind, bits)).or_insert(next));
    };
    for p in passes {
        d.word(0xFA55);
        if p.desc.compute {
            d.word(0xC0);
        }
        if let Some(c) = &p.desc.color {
            name(1, c.texture.bits(), &mut d);
            match c.load {
                LoadOp::Clear(v) => v.iter().for_each(|x| d.word(x.to_bits())),
                LoadOp::Load => d.word(1),
                LoadOp::DontCare(_) => d.word(2),
            }
            d.word(c.store as u64);
        }
        if let Some(z) = &p.desc.depth {
            name(1, z.texture.bits(), &mut d);
            match z.load {
                LoadOp::Clear(v) => d.word(u64::from(v.to_bits())),
                LoadOp::Load => d.word(1),
                LoadOp::DontCare(_) => d.word(2),
            }
            d.word(z.store as u64 | 2 << 8);
        }
        for chunk in &p.chunks {
            debug_assert_eq!(chunk.pass.label, p.desc.label);
            for c in &chunk.commands {
                match *c {
                    Command::SetPipeline(id) => {
                        d.word(1);
                        name(2, id.bits(), &mut d);
                    }
                    Command::SetBindGroup { index, group, offsets } => {
                        d.word(2 | u64::from(index) << 8);
                        name(3, group.bits(), &mut d);
                        offsets.as_slice().iter().for_each(|&o| d.word(u64::from(o)));
                    }
                    Command::SetVertexBuffer { slot, buffer, offset } => {
                        d.word(3 | u64::from(slot) << 8 | offset << 16);
                        name(4, buffer.bits(), &mut d);
                    }
                    Command::SetIndexBuffer { buffer, format, offset } => {
                        d.word(4 | format.size() << 8 | offset << 16);
                        name(4, buffer.bits(), &mut d);
                    }
                    Command::MultiDrawIndexedIndirect { buffer, offset, count } => {
                        d.word(7 | u64::from(count) << 32);
                        d.word(offset);
                        name(4, buffer.bits(), &mut d);
                    }
                    Command::MultiDrawIndexedIndirectCount {
                        buffer,
                        offset,
                        count_buffer,
                        count_offset,
                        max_count,
                    } => {
                        d.word(10 | u64::from(max_count) << 32);
                        d.word(offset);
                        name(4, buffer.bits(), &mut d);
                        d.word(count_offset);
                        name(4, count_buffer.bits(), &mut d);
                    }
                    Command::DispatchIndirect { buffer, offset } => {
                        d.word(9);
                        d.word(offset);
                        name(4, buffer.bits(), &mut d);
                    }
                    draw => d.combine(Digest::of_commands(&[draw])),
                }
            }
        }
    }
    d.value()
}
