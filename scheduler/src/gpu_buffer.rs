//! GPU buffers as the renderer makes them: [`buffer`] (filled by CPU writes), a
//! [`GrowBuffer`] that grows by doubling ([`grow`]), and [`Made`], which destroys what a constructor
//! made when it fails part-way. The stages that own GPU objects (the renderer's fixed
//! objects, GPU culling, occlusion, recording) build on these.

use switchyard_backend::{Backend, BufferDesc, BufferId, BufferUsage, CreateError, Resource};

/// Creates a buffer of at least `size` bytes (rounded up to 4) that CPU writes can fill.
pub(crate) fn buffer<B: Backend>(b: &B, label: &str, size: u64, usage: BufferUsage) -> Result<BufferId, CreateError> {
    b.create_buffer(&BufferDesc {
        label: label.into(),
        size: size.max(4).next_multiple_of(4),
        usage: usage | BufferUsage::COPY_DST,
    })
}

/// What a constructor made so far: destroyed again when it fails part-way (dropped
/// without [`Made::keep`]), so a refused creation leaves nothing on the backend.
pub(crate) struct Made<'a, B: Backend> {
    b: &'a B,
    made: Vec<Resource>,
}

impl<'a, B: Backend> Made<'a, B> {
    pub(crate) fn new(b: &'a B) -> Self {
        Self { b, made: Vec::new() }
    }

    /// The backend the objects are made on.
    pub(crate) fn backend(&self) -> &'a B {
        self.b
    }

    /// Notes a creation's result: a made object is destroyed again unless kept.
    pub(crate) fn add<T: Copy + Into<Resource>, E>(&mut self, r: Result<T, E>) -> Result<T, E> {
        if let Ok(id) = &r {
            self.made.push((*id).into());
        }
        r
    }

    /// Objects made before, destroyed with the rest on a failure.
    pub(crate) fn adopt(&mut self, made: impl IntoIterator<Item = Resource>) {
        self.made.extend(made);
    }

    /// Everything made stays.
    pub(crate) fn keep(mut self) {
        self.made.clear();
    }
}

impl<B: Backend> Drop for Made<'_, B> {
    fn drop(&mut self) {
        for r in self.made.drain(..).rev() {
            let _ = self.b.destroy(r);
        }
    }
}

/// A buffer that grows by doubling; it is in no bind group, so it can be replaced.
#[derive(Debug)]
pub(crate) struct GrowBuffer {
    pub(crate) id: BufferId,
    pub(crate) capacity: u64,
}

impl GrowBuffer {
    /// A buffer of at least `size` bytes (the next power of two), filled by CPU writes.
    pub(crate) fn new<B: Backend>(b: &B, label: &str, size: u64, usage: BufferUsage) -> Result<Self, CreateError> {
        let capacity = size.next_power_of_two();
        Ok(Self { id: buffer(b, label, capacity, usage)?, capacity })
    }
}

/// Grows a per-view buffer to at least `need` bytes; returns the buffer it replaced, for
/// the caller to retire (and to make again a bind group that bound it).
pub(crate) fn grow<B: Backend>(
    b: &B,
    g: &mut Option<GrowBuffer>,
    need: u64,
    usage: BufferUsage,
    label: &str,
) -> Result<Option<BufferId>, CreateError> {
    if g.as_ref().is_some_and(|g| g.capacity >= need) {
        return Ok(None);
    }
    Ok(g.replace(GrowBuffer::new(b, label, need, usage)?).map(|old| old.id))
}
