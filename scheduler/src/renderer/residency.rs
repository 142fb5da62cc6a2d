//! Streaming: meshes and textures are made at once and uploaded later, a batch per frame,
//! by the upload thread (`upload.rs`).
//!
//! `create_mesh` and `create_texture*` check the data, take the mesh's ranges in the
//! shared buffers (or make the texture object) and queue the bytes; they return the
//! handle at once. Each frame takes the queue's head as a batch — highest
//! [`MeshOptions::priority`] first, then in request order, while the bytes fit
//! [`RendererConfig::upload_budget`](super::RendererConfig::upload_budget) (a request
//! larger than the budget goes alone) — and hands it to the upload thread once the frame's
//! job graph has run (`send_batch`: staging then takes no core from the workers), which
//! stages it; the submission thread submits it before the frame's passes. The resources in it are drawn from that frame on; until then a mesh's objects
//! draw nothing or the fallback mesh the engine chose, and a material samples its
//! texture's fallback (white where none was chosen). Which frame a resource becomes
//! resident in depends only on the requests, the priorities and the budget, never on
//! timing, so the command stream is the same for any thread count.

use std::collections::VecDeque;

use switchyard_backend::{Backend, BufferCopy, Resource};

use super::copies::{CpuCopy, MeshCopy};
use super::retire::Retiree;
use super::Renderer;
use crate::error::ResourceError;
use crate::record::MeshRange;
use crate::scene::{HandleKind, MeshHandle, TextureHandle};
use crate::stats::UploadStats;

/// How a mesh is uploaded ([`Renderer::create_mesh_with`]); a [`CpuCopy`] converts into
/// the default options with that choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeshOptions {
    /// Keep the data on the CPU after the upload.
    pub copy: CpuCopy,
    /// Higher uploads first (then in request order).
    pub priority: u8,
    /// Drawn in place of the mesh until it is resident: a resident mesh, which cannot be
    /// removed meanwhile. `None`: the mesh's objects draw nothing until then.
    pub fallback: Option<MeshHandle>,
}

impl From<CpuCopy> for MeshOptions {
    fn from(copy: CpuCopy) -> Self {
        Self { copy, ..Self::default() }
    }
}

/// How a texture is uploaded ([`Renderer::create_texture_data_with`]); a [`CpuCopy`]
/// converts into the default options with that choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextureOptions {
    /// Keep the levels on the CPU after the upload.
    pub copy: CpuCopy,
    /// Higher uploads first (then in request order).
    pub priority: u8,
    /// What materials that use the texture sample until it is resident: a resident
    /// texture, which cannot be removed meanwhile. `None`: white.
    pub fallback: Option<TextureHandle>,
}

impl From<CpuCopy> for TextureOptions {
    fn from(copy: CpuCopy) -> Self {
        Self { copy, ..Self::default() }
    }
}

/// A mesh or a texture, for [`Renderer::is_resident`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Streamed {
    /// A mesh.
    Mesh(MeshHandle),
    /// A texture.
    Texture(TextureHandle),
}

impl From<MeshHandle> for Streamed {
    fn from(h: MeshHandle) -> Self {
        Self::Mesh(h)
    }
}

impl From<TextureHandle> for Streamed {
    fn from(h: TextureHandle) -> Self {
        Self::Texture(h)
    }
}

/// Every upload requested before it was made ([`Renderer::upload_token`]); complete once
/// they are all on the GPU ([`Renderer::uploads_complete`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UploadToken(u64);

/// Where a mesh's draws come from (per dense mesh).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Residency {
    /// Its own ranges.
    #[default]
    Resident,
    /// Queued: nothing, or the fallback mesh's ranges (its dense index).
    Queued(Option<u32>),
}

/// What a request uploads.
#[derive(Debug)]
pub(super) enum Upload {
    /// A mesh's vertices then indices (`split`: the vertex bytes), into its ranges.
    Mesh { dense: u32, data: Box<[u8]>, split: usize },
    /// A texture's given levels one after another.
    Texture { handle: TextureHandle, data: Box<[u8]> },
}

#[derive(Debug)]
pub(super) struct Request {
    seq: u64,
    priority: u8,
    upload: Upload,
}

impl Request {
    fn bytes(&self) -> u64 {
        match &self.upload {
            Upload::Mesh { data, .. } | Upload::Texture { data, .. } => data.len() as u64,
        }
    }
}

/// The queued uploads, in the order they are taken, and the batches on their way.
#[derive(Debug, Default)]
pub(super) struct UploadQueue {
    /// Highest priority first, then by request number.
    requests: VecDeque<Request>,
    next_seq: u64,
    /// Batches sent and not known finished: (frame, lowest request number, resources).
    in_flight: VecDeque<(u64, u64, u32)>,
    /// Resources whose uploads finished on the GPU, in all.
    completed: u64,
    /// Requests taken by this frame's batch (reused).
    taken: Vec<Request>,
}

impl UploadQueue {
    /// Queues `upload`; its request number.
    pub(super) fn push(&mut self, priority: u8, upload: Upload) -> u64 {
        self.next_seq += 1;
        let seq = self.next_seq;
        let at = self.requests.partition_point(|r| r.priority >= priority);
        self.requests.insert(at, Request { seq, priority, upload });
        seq
    }

    /// Takes a queued mesh's request out (it was removed).
    pub(super) fn cancel_mesh(&mut self, dense: u32) {
        self.requests.retain(|r| !matches!(r.upload, Upload::Mesh { dense: d, .. } if d == dense));
    }

    /// Takes a queued texture's request out (it was removed).
    pub(super) fn cancel_texture(&mut self, handle: TextureHandle) {
        self.requests.retain(|r| !matches!(r.upload, Upload::Texture { handle: h, .. } if h == handle));
    }

    /// Bytes queued.
    pub(super) fn bytes(&self) -> u64 {
        self.requests.iter().map(Request::bytes).sum()
    }

    /// Mesh bytes queued.
    pub(super) fn mesh_bytes(&self) -> u64 {
        self.requests.iter().filter(|r| matches!(r.upload, Upload::Mesh { .. })).map(Request::bytes).sum()
    }

    /// Batches on their way belong to the old device: forgotten (their resources are
    /// listed as needing data where nothing kept it).
    pub(super) fn forget_in_flight(&mut self) {
        self.in_flight.clear();
    }
}

impl<B: Backend> Renderer<B> {
    /// Queues a mesh's upload: its objects draw nothing, or `fallback`, until a frame
    /// takes it.
    pub(super) fn queue_mesh(
        &mut self,
        dense: u32,
        data: &super::MeshData,
        options: &MeshOptions,
        fallback: Option<u32>,
    ) {
        let mut bytes = Vec::with_capacity(size_of_val(&data.vertices[..]) + size_of_val(&data.indices[..]));
        bytes.extend_from_slice(bytemuck::cast_slice(&data.vertices));
        bytes.extend_from_slice(bytemuck::cast_slice(&data.indices));
        let split = size_of_val(&data.vertices[..]);
        let s = &mut self.res;
        let d = dense as usize;
        s.draw_ranges[d] = fallback.map_or(MeshRange::default(), |f| s.draw_ranges[f as usize]);
        s.meshes.residency[d] = Residency::Queued(fallback);
        if let Some(f) = fallback {
            s.meshes.fallback_users[f as usize] += 1;
        }
        s.uploads.push(options.priority, Upload::Mesh { dense, data: bytes.into_boxed_slice(), split });
    }

    /// A fallback must be resident (its own draws are what it stands in with).
    pub(super) fn resident_mesh(&self, h: MeshHandle) -> Result<u32, ResourceError> {
        let &d = self.res.mesh_handles.get(h).ok_or(ResourceError::StaleHandle(HandleKind::Mesh))?;
        if self.res.meshes.residency[d as usize] != Residency::Resident {
            return Err(ResourceError::Invalid("a fallback mesh must be resident".into()));
        }
        Ok(d)
    }

    /// Whether frames rendered from now on draw `resource` itself: its upload was taken
    /// by a frame already rendered (it reaches the GPU before that frame's passes). A
    /// stale handle is `StaleHandle`.
    pub fn is_resident(&self, resource: impl Into<Streamed>) -> Result<bool, ResourceError> {
        match resource.into() {
            Streamed::Mesh(h) => {
                let &d = self.res.mesh_handles.get(h).ok_or(ResourceError::StaleHandle(HandleKind::Mesh))?;
                Ok(self.res.meshes.residency[d as usize] == Residency::Resident)
            }
            Streamed::Texture(h) => {
                let t = self.res.textures.get(h).ok_or(ResourceError::StaleHandle(HandleKind::Texture))?;
                Ok(!t.queued)
            }
        }
    }

    /// Sets [`RendererConfig::upload_budget`](super::RendererConfig::upload_budget) from
    /// the next frame on (a loading screen can take more per frame than play). Zero is
    /// `Invalid` and changes nothing.
    pub fn set_upload_budget(&mut self, bytes: u64) -> Result<(), ResourceError> {
        if bytes == 0 {
            return Err(ResourceError::Invalid("an upload budget of 0 bytes takes nothing".into()));
        }
        self.config.upload_budget = bytes;
        Ok(())
    }

    /// A token for every upload requested so far.
    pub fn upload_token(&self) -> UploadToken {
        UploadToken(self.res.uploads.next_seq)
    }

    /// Whether every upload requested before `token` was made is on the GPU: taken by a
    /// frame that has finished there (or given up: its resource removed, or its device
    /// lost, after which [`Renderer::needs_data`] lists what the engine must supply).
    /// Uploads reach the GPU with frames: one rendered after the request is needed.
    pub fn uploads_complete(&self, token: UploadToken) -> bool {
        let q = &self.res.uploads;
        let done = self.device.submit.completed();
        q.requests.iter().all(|r| r.seq > token.0)
            && q.in_flight.iter().all(|&(frame, lowest, _)| lowest > token.0 || frame <= done)
    }

    /// The frame's batch: the queue's head within the budget (and the buffer copies of
    /// grown mesh buffers), handed to the upload thread; its resources are drawn from
    /// this frame on. A texture whose materials' bind groups cannot be made again stays
    /// queued, and the take stops there.
    pub(super) fn take_uploads(&mut self) -> Result<UploadStats, crate::RenderError> {
        crate::profile::zone!("take-uploads");
        let done = self.device.submit.completed();
        let q = &mut self.res.uploads;
        while q.in_flight.front().is_some_and(|&(frame, _, _)| frame <= done) {
            q.completed += u64::from(q.in_flight.pop_front().expect("non-empty").2);
        }
        let mut stats = UploadStats::default();
        if q.requests.is_empty() && self.res.pending_copies.is_empty() {
            return Ok(self.upload_counts(stats));
        }
        let mut batch = self.device.submit.uploads.empty_batch();
        let budget = self.config.upload_budget;
        let mut taken = std::mem::take(&mut self.res.uploads.taken);
        while let Some(r) = self.res.uploads.requests.front() {
            let bytes = r.bytes();
            if stats.bytes > 0 && stats.bytes + bytes > budget {
                break;
            }
            let r = self.res.uploads.requests.pop_front().expect("looked at");
            if let Upload::Texture { handle, .. } = &r.upload {
                self.rebind_materials(*handle);
            }
            stats.bytes += bytes;
            taken.push(r);
        }
        let s = &mut self.res;
        let copies: Vec<BufferCopy> = s.pending_copies.drain(..).collect();
        batch.copies.extend_from_slice(&copies);
        let mut lowest = u64::MAX;
        for r in taken.drain(..) {
            lowest = lowest.min(r.seq);
            stats.resources += 1;
            match r.upload {
                Upload::Mesh { dense, data, split } => {
                    let d = dense as usize;
                    let home = s.mesh_ranges[d];
                    let i = batch.data.len();
                    batch.buffers.push((s.vertices.id, home.base_vertex as u64 * 32, i, 0..split));
                    batch.buffers.push((s.indices.id, u64::from(home.first_index) * 4, i, split..data.len()));
                    batch.data.push(data);
                    s.draw_ranges[d] = home;
                    if let Residency::Queued(Some(f)) = s.meshes.residency[d] {
                        s.meshes.fallback_users[f as usize] -= 1;
                    }
                    s.meshes.residency[d] = Residency::Resident;
                    if matches!(s.meshes.copies[d], MeshCopy::Pending) {
                        s.meshes.copies[d] = MeshCopy::Gpu;
                    }
                }
                Upload::Texture { handle, data } => {
                    let t = s.textures.get_mut(handle).expect("a removed texture's request is cancelled");
                    t.queued = false;
                    let (id, spec, fallback) = (t.id, t.spec, t.fallback.take());
                    let i = batch.data.len();
                    let mut at = 0;
                    for l in 0..spec.given {
                        let n = spec.format.level_bytes(spec.width, spec.height, l) as usize;
                        batch.textures.push((id, l, i, at..at + n));
                        at += n;
                    }
                    if spec.generate {
                        batch.mips.push(id);
                    }
                    batch.data.push(data);
                    if let Some(f) = fallback.and_then(|f| s.textures.get_mut(f)) {
                        f.fallback_users -= 1;
                    }
                }
            }
        }
        self.res.uploads.taken = taken;
        // The batch is handed over now: what it reads must outlive this frame.
        let frame = self.frame.number;
        self.device.retired.sent(frame);
        for c in &copies {
            let s = &mut self.res;
            self.device.retired.retire(Retiree::Resource(Resource::Buffer(c.src)), &*s.backend, &mut s.meshes);
        }
        // Staged once the frame's job graph has run (`send_batch`).
        self.frame.pending_batch = Some(batch);
        self.frame.batch_sent = true;
        if lowest != u64::MAX {
            self.res.uploads.in_flight.push_back((frame, lowest, stats.resources));
        }
        Ok(self.upload_counts(stats))
    }

    /// Hands the frame's batch (if it took one) to the upload thread. `false`: the thread
    /// is gone.
    pub(super) fn send_batch(&mut self) -> bool {
        self.frame.pending_batch.take().is_none_or(|b| self.device.submit.uploads.send(b))
    }

    /// The queue's counts after the take.
    fn upload_counts(&self, mut stats: UploadStats) -> UploadStats {
        let s = &self.res;
        let q = &s.uploads;
        stats.pending = q.requests.len() as u32;
        stats.pending_bytes = q.bytes();
        stats.completed = q.completed;
        let mut textures = false;
        for r in &q.requests {
            match r.upload {
                Upload::Mesh { dense, .. } => {
                    stats.waiting_objects += self.scene.mesh_users.get(dense as usize).copied().unwrap_or(0);
                }
                Upload::Texture { .. } => textures = true,
            }
        }
        if textures {
            let queued = |m: &&crate::material::MaterialRecord| {
                m.texture.and_then(|t| s.textures.get(t)).is_some_and(|t| t.queued)
            };
            stats.waiting_materials = s.library.read().materials.iter().flatten().filter(queued).count() as u32;
        }
        stats
    }

    /// The materials that use `texture` bind it now: they bound its fallback and hold its
    /// group already (`groups.rs`), so ids swap and nothing is made; the fallback's holds
    /// let go (its group retired where those were the last), display lists rebuilt.
    fn rebind_materials(&mut self, texture: TextureHandle) {
        let s = &mut self.res;
        let b = &*s.backend;
        let crate::material::Library { shaders, materials } = s.library.get_mut();
        for m in materials.iter_mut().flatten().filter(|m| m.texture == Some(texture)) {
            let Some(id) = m.ahead.take() else { continue };
            let binding = shaders[m.shader as usize].materials;
            m.group = s.groups.get(id, binding).expect("held ahead by the material");
            m.version += 1;
            if let Some(old) = s.groups.let_go(std::mem::replace(&mut m.bound, id), binding) {
                self.device.retired.retire(Retiree::Resource(Resource::BindGroup(old)), b, &mut s.meshes);
            }
        }
    }
}
