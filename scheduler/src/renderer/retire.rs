//! Deferred destruction: what the renderer gives up (a removed mesh's ranges of the shared
//! buffers, a removed texture or material's bind group, a grown buffer, a replaced plan's
//! targets) may still be read by frames queued to the submission thread or running on the
//! GPU, so it is destroyed — and a range reused — only once every such frame has finished.
//!
//! Each retired thing carries a stamp: the last frame handed to the submission thread
//! when it was retired (frames after it cannot name it). It is released
//!
//! - at the start of frame `F` when its stamp is at most `F - (2 * frames_in_flight - 1)`:
//!   the submission thread hands a packet back once its frame is submitted and every frame
//!   `frames_in_flight - 1` before it has finished on the GPU, and at most
//!   `frames_in_flight - 1` packets are out while frame `F` is built, so such a frame has
//!   finished. The release point depends only on frame numbers, never on GPU timing, so
//!   where later meshes land, and the handles later resources get, are the same in every
//!   run (the command stream stays deterministic). The submission thread's completion
//!   count is checked too, and waited for where a frame failed in between;
//! - by [`super::Renderer::flush`], which waits for every frame;
//! - at once when no frame has been handed over since the last flush;
//! - by dropping the renderer (after its frames finish) or by `recover` (on the old
//!   backend).

use std::collections::VecDeque;
use std::ops::Range;

use switchyard_backend::{Backend, Resource, TextureFormat, TextureId};

/// What textures of the pool (`textures.rs`) are made as, and what a retired texture is
/// pooled under: textures of equal keys are interchangeable (width, height, format, levels, made with mips generated).
pub(super) type PoolKey = (u32, u32, TextureFormat, u32, bool);

/// Where released mesh ranges and textures go (the shared buffers' free lists, the
/// texture pool).
pub(crate) trait FreeRanges {
    /// `vertices` and `indices` are free for later meshes.
    fn give(&mut self, vertices: Range<u32>, indices: Range<u32>);
    /// Keeps a removed texture for reuse; `false` where it is not kept (it is destroyed).
    fn pool_texture(&mut self, id: TextureId, key: PoolKey, bytes: u64) -> bool {
        let _ = (id, key, bytes);
        false
    }
}

/// One thing given up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Retiree {
    /// A GPU object, destroyed on release.
    Resource(Resource),
    /// A removed mesh's vertex and index ranges, free for later meshes on release.
    MeshRanges { vertices: Range<u32>, indices: Range<u32> },
    /// A removed texture: pooled for a later texture of its shape on release, or destroyed.
    Texture { id: TextureId, key: PoolKey, bytes: u64 },
}

/// What was given up, oldest first, with the stamp of each, and which frames may still
/// read it.
#[derive(Debug, Default)]
pub(crate) struct Retired {
    queue: VecDeque<(u64, Retiree)>,
    /// The last frame handed to the submission thread.
    sent: u64,
    /// The last frame handed over when a flush last finished every frame.
    flushed: u64,
}

impl Retired {
    /// Frame `frame` was handed to the submission thread.
    pub(crate) fn sent(&mut self, frame: u64) {
        self.sent = frame;
    }

    /// Every frame handed over has finished on the GPU.
    pub(crate) fn flushed(&mut self) {
        self.flushed = self.sent;
    }

    /// Gives `what` up: released at once when no frame handed over since the last flush
    /// may read it, else queued with the last frame handed over as its stamp.
    pub(crate) fn retire<B: Backend>(&mut self, what: Retiree, b: &B, meshes: &mut impl FreeRanges) {
        if self.sent <= self.flushed && self.queue.is_empty() {
            release_one(what, b, meshes);
        } else {
            self.push(self.sent, what);
        }
    }

    /// Retires `what`, which frames up to `stamp` may read.
    pub(crate) fn push(&mut self, stamp: u64, what: Retiree) {
        debug_assert!(self.queue.back().is_none_or(|(s, _)| *s <= stamp), "stamps only grow");
        self.queue.push_back((stamp, what));
    }

    /// The newest stamp among the entries of stamp at most `upto` (`None`: none).
    pub(crate) fn due(&self, upto: u64) -> Option<u64> {
        let n = self.queue.partition_point(|(s, _)| *s <= upto);
        n.checked_sub(1).map(|i| self.queue[i].0)
    }

    /// Releases every entry of stamp at most `upto` (their frames are finished): destroys
    /// the objects on `b`, gives the ranges back to `meshes`. Returns how many.
    pub(crate) fn release<B: Backend>(&mut self, upto: u64, b: &B, meshes: &mut impl FreeRanges) -> usize {
        let n = self.queue.partition_point(|(s, _)| *s <= upto);
        for (_, what) in self.queue.drain(..n) {
            release_one(what, b, meshes);
        }
        n
    }

    /// Entries waiting.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Vertices and indices of retired mesh ranges (not free yet).
    pub(crate) fn mesh_elements(&self) -> (u64, u64) {
        self.queue.iter().fold((0, 0), |(v, i), (_, what)| match what {
            Retiree::MeshRanges { vertices, indices } => (v + vertices.len() as u64, i + indices.len() as u64),
            Retiree::Resource(_) | Retiree::Texture { .. } => (v, i),
        })
    }
}

fn release_one<B: Backend>(what: Retiree, b: &B, meshes: &mut impl FreeRanges) {
    match what {
        Retiree::Resource(r) => {
            // Only this renderer destroys what it made, once: a failure would be a handle
            // it gave up twice, which the tests see as a live-count difference.
            let _ = b.destroy(r);
        }
        Retiree::MeshRanges { vertices, indices } => meshes.give(vertices, indices),
        Retiree::Texture { id, key, bytes } => {
            if !meshes.pool_texture(id, key, bytes) {
                let _ = b.destroy(Resource::Texture(id));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use switchyard_backend::null::NullBackend;
    use switchyard_backend::{Backend, BufferDesc, BufferUsage, Resource};

    use std::ops::Range;

    use super::{FreeRanges, Retired, Retiree};

    /// Counts the elements given back.
    #[derive(Default)]
    struct MeshStore {
        vertices: u64,
        indices: u64,
    }

    impl FreeRanges for MeshStore {
        fn give(&mut self, vertices: Range<u32>, indices: Range<u32>) {
            self.vertices += vertices.len() as u64;
            self.indices += indices.len() as u64;
        }
    }

    #[test]
    fn entries_release_in_stamp_order_and_only_when_due() {
        let b = NullBackend::default();
        let buffer =
            |n| b.create_buffer(&BufferDesc { label: format!("b{n}"), size: 4, usage: BufferUsage::VERTEX }).unwrap();
        let (b1, b2) = (buffer(1), buffer(2));
        let mut r = Retired::default();
        let mut meshes = MeshStore::default();
        r.push(3, Retiree::Resource(Resource::Buffer(b1)));
        r.push(3, Retiree::MeshRanges { vertices: 0..10, indices: 0..30 });
        r.push(5, Retiree::Resource(Resource::Buffer(b2)));
        assert_eq!(r.due(2), None);
        assert_eq!(r.due(4), Some(3));
        assert_eq!(r.mesh_elements(), (10, 30));
        assert_eq!(r.release(2, &b, &mut meshes), 0);
        assert_eq!(b.live().buffers, 2);
        assert_eq!(r.release(4, &b, &mut meshes), 2);
        assert_eq!((b.live().buffers, meshes.vertices, meshes.indices), (1, 10, 30));
        assert_eq!(r.len(), 1);
        assert_eq!(r.release(u64::MAX, &b, &mut meshes), 1);
        assert_eq!((b.live().buffers, r.len()), (0, 0));
    }

    #[test]
    fn nothing_waits_when_no_frame_was_handed_over_since_a_flush() {
        let b = NullBackend::default();
        let buffer =
            || b.create_buffer(&BufferDesc { label: "b".into(), size: 4, usage: BufferUsage::VERTEX }).unwrap();
        let mut r = Retired::default();
        let mut meshes = MeshStore::default();
        r.retire(Retiree::Resource(Resource::Buffer(buffer())), &b, &mut meshes);
        assert_eq!((b.live().buffers, r.len()), (0, 0), "no frame yet: destroyed at once");
        r.sent(1);
        r.retire(Retiree::Resource(Resource::Buffer(buffer())), &b, &mut meshes);
        assert_eq!((b.live().buffers, r.len()), (1, 1), "frame 1 may read it");
        r.flushed();
        r.release(u64::MAX, &b, &mut meshes);
        r.retire(Retiree::MeshRanges { vertices: 4..8, indices: 0..3 }, &b, &mut meshes);
        assert_eq!((r.len(), meshes.vertices), (0, 4), "flushed: free at once");
    }
}
