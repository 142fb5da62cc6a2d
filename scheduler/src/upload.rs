//! The upload thread, `switchyard-upload`: stages the resource uploads each frame takes
//! from the renderer's queue (`renderer/residency.rs`), handed over once that frame's job
//! graph has run (while the workers are idle: measured in run 25).
//!
//! The render thread hands it a batch (the bytes move, nothing is copied) and goes on; the
//! thread asks the backend to check and stage it ([`Backend::stage`]: bytes into mapped
//! staging memory, the GPU copies and generated mips recorded) and hands the result to the
//! submission thread, which submits it before the first frame sent after the batch was
//! taken ([`Backend::submit_staged`]). The submission thread waits for a batch only if
//! the upload thread has not finished it by then; the render thread never waits for it.
//! The batch's bytes are freed here, off the render thread, and its emptied vectors go
//! back to the render thread for the next batch.

use std::ops::Range;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{unbounded, Receiver, Sender};
use switchyard_backend::{Backend, BufferId, BufferWrite, SubmitError, TextureId, TextureWrite, Uploads};

/// One frame's uploads: the bytes of each resource and where they go.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Numbers the batches a renderer sends, from 1.
    pub(crate) number: u64,
    /// Grown buffers' copies, before the writes.
    pub(crate) copies: Vec<switchyard_backend::BufferCopy>,
    /// Each request's bytes.
    pub(crate) data: Vec<Box<[u8]>>,
    /// (buffer, byte offset, index in `data`, range in it).
    pub(crate) buffers: Vec<(BufferId, u64, usize, Range<usize>)>,
    /// (texture, level, index in `data`, range in it).
    pub(crate) textures: Vec<(TextureId, u32, usize, Range<usize>)>,
    /// Textures whose levels below the first are generated after the writes.
    pub(crate) mips: Vec<TextureId>,
}

impl Batch {
    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.copies.clear();
        self.buffers.clear();
        self.textures.clear();
        self.mips.clear();
    }
}

/// A staged batch for the submission thread: its number, the backend's staging (or why
/// it failed) and how long staging took, ms.
pub(crate) type Staged<S> = (u64, Result<S, SubmitError>, f64);

/// The render thread's end of the upload thread.
pub(crate) struct UploadThread<B: Backend> {
    to_thread: Option<Sender<Batch>>,
    /// Emptied batches coming back for reuse.
    spare: Receiver<Batch>,
    handle: Option<JoinHandle<()>>,
    /// Batches sent so far (the number of the last one).
    pub(crate) sent: u64,
    _backend: std::marker::PhantomData<fn() -> B>,
}

impl<B: Backend> UploadThread<B> {
    /// Starts the thread; what it stages goes to `staged` (the submission thread's end).
    pub(crate) fn spawn(backend: std::sync::Arc<B>, staged: Sender<Staged<B::Staged>>) -> std::io::Result<Self> {
        let (to_thread, from_render) = unbounded::<Batch>();
        let (spare_tx, spare) = unbounded();
        let handle = std::thread::Builder::new()
            .name("switchyard-upload".into())
            .spawn(move || run(&*backend, &from_render, &staged, &spare_tx))?;
        Ok(Self { to_thread: Some(to_thread), spare, handle: Some(handle), sent: 0, _backend: Default::default() })
    }

    /// An empty batch to fill (one the thread gave back, where there is one).
    pub(crate) fn empty_batch(&self) -> Batch {
        self.spare.try_recv().unwrap_or_default()
    }

    /// Hands a batch to the thread: the next frame sent carries it. `false`: the thread is
    /// gone.
    pub(crate) fn send(&mut self, mut batch: Batch) -> bool {
        self.sent += 1;
        batch.number = self.sent;
        self.to_thread.as_ref().is_some_and(|t| t.send(batch).is_ok())
    }
}

impl<B: Backend> Drop for UploadThread<B> {
    fn drop(&mut self) {
        // Closing the queue lets the thread stage what it holds and exit.
        self.to_thread.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn run<B: Backend>(backend: &B, batches: &Receiver<Batch>, staged: &Sender<Staged<B::Staged>>, spare: &Sender<Batch>) {
    crate::profile::thread_name("switchyard-upload");
    let (mut buffers, mut textures): (Vec<BufferWrite<'static>>, Vec<TextureWrite<'static>>) = Default::default();
    while let Ok(mut batch) = batches.recv() {
        crate::profile::zone!("stage-uploads");
        let t = Instant::now();
        let result = {
            let d = &batch.data;
            let mut b = recycle(std::mem::take(&mut buffers));
            b.extend(batch.buffers.iter().map(|(buffer, offset, i, r)| BufferWrite {
                buffer: *buffer,
                offset: *offset,
                data: &d[*i][r.clone()],
            }));
            let mut tx = recycle(std::mem::take(&mut textures));
            tx.extend(batch.textures.iter().map(|(texture, level, i, r)| TextureWrite {
                texture: *texture,
                level: *level,
                data: &d[*i][r.clone()],
            }));
            let r = backend.stage(&Uploads { copies: &batch.copies, buffers: &b, textures: &tx, mips: &batch.mips });
            (buffers, textures) = (recycle(b), recycle(tx));
            r
        };
        crate::profile::plot!("staged upload bytes", batch.data.iter().map(|d| d.len()).sum::<usize>() as f64);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if staged.send((batch.number, result, ms)).is_err() {
            break;
        }
        // The bytes are freed here, off the render thread.
        batch.clear();
        let _ = spare.try_send(batch);
    }
}

/// Empties a vector and reuses its allocation for another lifetime (as the submission
/// thread's upload list).
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().map(|_| unreachable!("the vector is empty")).collect()
}
