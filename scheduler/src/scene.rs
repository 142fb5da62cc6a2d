//! The scene store: objects in dense structure-of-arrays, named by slotmap handles.
//!
//! Culling reads only the bounds arrays (`cx, cy, cz, ex, ey, ez`: world AABB center and
//! half extents, one `f32` array each), so its loop streams memory. Removal swaps the last
//! object into the hole and fixes its slot, keeping every array dense; the moved
//! object's transform index is marked dirty so the GPU copy follows.

use std::sync::atomic::{AtomicU32, Ordering};

use glam::{Mat4, Vec3};
use slotmap::SlotMap;
use switchyard_kernels::cull::{CullBlocks, CullInput};

mod keys {
    slotmap::new_key_type! {
        pub struct ObjectKey;
        pub struct MeshKey;
        pub struct MaterialKey;
        pub struct ShaderKey;
        pub struct TextureKey;
    }
}

/// Which renderer made a handle: each renderer has its own, so a handle of another one is
/// refused (as stale) instead of naming whatever sits in the same slot here.
pub(crate) type Owner = u32;

/// A renderer identity no other renderer of this process has.
pub(crate) fn new_owner() -> Owner {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A handle: a slot key and the renderer that made it.
pub(crate) trait Handle: Copy {
    type Key: slotmap::Key;
    fn make(key: Self::Key, owner: Owner) -> Self;
    fn key(self) -> Self::Key;
    fn owner(self) -> Owner;
}

macro_rules! handles {
    ($($(#[$m:meta])* $name:ident($key:ident);)*) => {$(
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name {
            key: keys::$key,
            owner: Owner,
        }
        impl Handle for $name {
            type Key = keys::$key;
            fn make(key: Self::Key, owner: Owner) -> Self {
                Self { key, owner }
            }
            fn key(self) -> Self::Key {
                self.key
            }
            fn owner(self) -> Owner {
                self.owner
            }
        }
    )*};
}

handles! {
    /// An object in the scene.
    ObjectId(ObjectKey);
    /// A mesh in the shared mesh buffers.
    MeshHandle(MeshKey);
    /// A material.
    MaterialHandle(MaterialKey);
    /// A shader (with its variants).
    ShaderHandle(ShaderKey);
    /// A texture.
    TextureHandle(TextureKey);
}

/// Values named by one renderer's handles of one kind: a handle that is stale, or made by
/// another renderer, resolves to nothing.
#[derive(Debug)]
pub(crate) struct Handles<H: Handle, V> {
    owner: Owner,
    map: SlotMap<H::Key, V>,
}

impl<H: Handle, V> Handles<H, V> {
    pub(crate) fn new(owner: Owner) -> Self {
        Self { owner, map: SlotMap::with_key() }
    }
    pub(crate) fn insert(&mut self, v: V) -> H {
        H::make(self.map.insert(v), self.owner)
    }
    pub(crate) fn get(&self, h: H) -> Option<&V> {
        (h.owner() == self.owner).then(|| self.map.get(h.key())).flatten()
    }
    pub(crate) fn get_mut(&mut self, h: H) -> Option<&mut V> {
        if h.owner() != self.owner {
            return None;
        }
        self.map.get_mut(h.key())
    }
    /// Every live handle and its value.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (H, &V)> + '_ {
        self.map.iter().map(|(k, v)| (H::make(k, self.owner), v))
    }
    pub(crate) fn remove(&mut self, h: H) -> Option<V> {
        if h.owner() != self.owner {
            return None;
        }
        self.map.remove(h.key())
    }
}

impl<H: Handle, V> Default for Handles<H, V> {
    fn default() -> Self {
        Self::new(0)
    }
}

/// A handle kind, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HandleKind {
    /// An object.
    Object,
    /// A mesh.
    Mesh,
    /// A material.
    Material,
    /// A shader.
    Shader,
    /// A texture.
    Texture,
}

/// A scene edit (insert, update, remove objects) failed; the scene is unchanged.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SceneError {
    /// An object, mesh or material handle is stale.
    #[error("{kind:?} handle at position {index} is stale or was never created")]
    StaleHandle {
        /// What kind of handle.
        kind: HandleKind,
        /// Position in the batch of edits.
        index: usize,
    },
    /// A value is out of range (layer >= 16, non-finite transform).
    #[error("invalid value at position {index}: {what}")]
    Invalid {
        /// Position in the batch of edits.
        index: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// The scene is full (`RendererConfig::max_objects`).
    #[error("scene capacity {capacity} exceeded")]
    Full {
        /// The capacity.
        capacity: usize,
    },
}

/// Object flag: drawn into shadow views.
pub const CASTS_SHADOWS: u8 = 1;

/// Describes one object to insert or update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectDesc {
    /// Its mesh.
    pub mesh: MeshHandle,
    /// Its material.
    pub material: MaterialHandle,
    /// Object-to-world transform.
    pub transform: Mat4,
    /// Render layer 0..16: sort-key top bits and the bit tested against a view's mask.
    pub layer: u8,
    /// Flags ([`CASTS_SHADOWS`]).
    pub flags: u8,
}

/// Local bounds of a mesh (AABB center and half extents).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct LocalBounds {
    pub(crate) center: Vec3,
    pub(crate) extent: Vec3,
}

/// Dense per-object data. Index `i` of every array is the same object.
#[derive(Debug, Default)]
pub struct Objects {
    pub(crate) ids: Vec<ObjectId>,
    /// World AABB centers.
    pub cx: Vec<f32>,
    /// World AABB centers.
    pub cy: Vec<f32>,
    /// World AABB centers.
    pub cz: Vec<f32>,
    /// World AABB half extents.
    pub ex: Vec<f32>,
    /// World AABB half extents.
    pub ey: Vec<f32>,
    /// World AABB half extents.
    pub ez: Vec<f32>,
    /// Render layer.
    pub layer: Vec<u8>,
    /// Flags.
    pub flags: Vec<u8>,
    /// Dense mesh index.
    pub mesh: Vec<u32>,
    /// Dense material index.
    pub material: Vec<u32>,
    /// Object-to-world transforms (the GPU buffer's source).
    pub transforms: Vec<Mat4>,
}

impl Objects {
    /// Number of objects.
    #[inline]
    pub fn len(&self) -> usize {
        self.cx.len()
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.cx.is_empty()
    }

    /// What culling reads: the bounds, layer and flags arrays.
    pub fn cull_input(&self) -> CullInput<'_> {
        CullInput {
            cx: &self.cx,
            cy: &self.cy,
            cz: &self.cz,
            ex: &self.ex,
            ey: &self.ey,
            ez: &self.ez,
            layer: &self.layer,
            flags: &self.flags,
        }
    }

    fn push(&mut self, id: ObjectId, b: (Vec3, Vec3), d: &ObjectDesc, mesh: u32, material: u32) {
        self.ids.push(id);
        self.cx.push(b.0.x);
        self.cy.push(b.0.y);
        self.cz.push(b.0.z);
        self.ex.push(b.1.x);
        self.ey.push(b.1.y);
        self.ez.push(b.1.z);
        self.layer.push(d.layer);
        self.flags.push(d.flags);
        self.mesh.push(mesh);
        self.material.push(material);
        self.transforms.push(d.transform);
    }

    fn set(&mut self, i: usize, b: (Vec3, Vec3), d: &ObjectDesc, mesh: u32, material: u32) {
        (self.cx[i], self.cy[i], self.cz[i]) = (b.0.x, b.0.y, b.0.z);
        (self.ex[i], self.ey[i], self.ez[i]) = (b.1.x, b.1.y, b.1.z);
        self.layer[i] = d.layer;
        self.flags[i] = d.flags;
        self.mesh[i] = mesh;
        self.material[i] = material;
        self.transforms[i] = d.transform;
    }

    fn swap_remove(&mut self, i: usize) {
        self.ids.swap_remove(i);
        self.cx.swap_remove(i);
        self.cy.swap_remove(i);
        self.cz.swap_remove(i);
        self.ex.swap_remove(i);
        self.ey.swap_remove(i);
        self.ez.swap_remove(i);
        self.layer.swap_remove(i);
        self.flags.swap_remove(i);
        self.mesh.swap_remove(i);
        self.material.swap_remove(i);
        self.transforms.swap_remove(i);
    }
}

/// World AABB of local bounds under a transform.
pub(crate) fn world_bounds(m: &Mat4, b: &LocalBounds) -> (Vec3, Vec3) {
    let c = m.transform_point3(b.center);
    let e = m.x_axis.truncate().abs() * b.extent.x
        + m.y_axis.truncate().abs() * b.extent.y
        + m.z_axis.truncate().abs() * b.extent.z;
    (c, e)
}

/// The scene: objects plus what they reference, resolved to dense indices once.
#[derive(Debug, Default)]
pub struct Scene {
    slots: Handles<ObjectId, u32>,
    pub(crate) objects: Objects,
    /// Block bounds for hierarchical culling, refreshed by the renderer each frame.
    pub(crate) blocks: CullBlocks,
    /// Dirty transform ranges (dense indices, half-open), merged when adjacent.
    pub(crate) dirty: Vec<(u32, u32)>,
    pub(crate) capacity: usize,
    /// Objects per mesh and per material (dense), to refuse removing used ones.
    pub(crate) mesh_users: Vec<u32>,
    pub(crate) material_users: Vec<u32>,
    /// Counts edits that may change which objects a pass draws or with what (inserts,
    /// updates, removals; not moves): GPU culling builds its buckets again when it changes.
    pub(crate) structure: u64,
    /// Counts every edit, moves included: a cached pass draws again when it changes.
    pub(crate) edits: u64,
}

/// Resolves handles of meshes and materials to dense indices and bounds.
pub(crate) trait Resolve {
    fn mesh(&self, h: MeshHandle) -> Option<(u32, LocalBounds)>;
    fn material(&self, h: MaterialHandle) -> Option<u32>;
}

/// World bounds of an object, refused where they overflow (a finite transform and mesh can
/// still give infinite bounds, which every view would cull).
fn checked_bounds(i: usize, m: &Mat4, b: &LocalBounds) -> Result<(Vec3, Vec3), SceneError> {
    let (c, e) = world_bounds(m, b);
    // The culling hierarchy adds and scales bounds: keep them well inside f32's range.
    let fits = |v: Vec3| v.is_finite() && v.abs().max_element() < 1e30;
    if !fits(c) || !fits(e) || !fits(c + e) || !fits(c - e) {
        return Err(SceneError::Invalid { index: i, what: "world bounds overflow (transform times mesh extent)" });
    }
    Ok((c, e))
}

fn check_desc(i: usize, d: &ObjectDesc) -> Result<(), SceneError> {
    if d.layer >= 16 {
        return Err(SceneError::Invalid { index: i, what: "layer must be below 16" });
    }
    if !d.transform.is_finite() {
        return Err(SceneError::Invalid { index: i, what: "transform is not finite" });
    }
    Ok(())
}

impl Scene {
    pub(crate) fn with_capacity(capacity: usize, owner: Owner) -> Self {
        Self { capacity, slots: Handles::new(owner), ..Self::default() }
    }

    /// Dense object arrays (read-only).
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the scene is empty.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Dense index of an object.
    pub fn dense_index(&self, id: ObjectId) -> Option<u32> {
        self.slots.get(id).copied()
    }

    fn mark_dirty(&mut self, i: u32) {
        self.edits += 1;
        self.blocks.mark(i as usize);
        // Each range is one write per buffer the next frame copies (and on Vulkan a barrier
        // after the one before): runs marked up or down join the last range. (Removing a
        // block of objects that an earlier removal moved, reversed, into a hole marks it
        // downward: 24 single-object ranges a block of the streamed demo before.)
        match self.dirty.last_mut() {
            Some((_, end)) if *end == i => *end += 1,
            Some((start, _)) if *start == i + 1 => *start = i,
            Some((start, end)) if (*start..*end).contains(&i) => {}
            _ => self.dirty.push((i, i + 1)),
        }
    }

    fn users(v: &mut Vec<u32>, i: u32, delta: i32) {
        if v.len() <= i as usize {
            v.resize(i as usize + 1, 0);
        }
        v[i as usize] = v[i as usize].wrapping_add_signed(delta);
    }

    pub(crate) fn insert(&mut self, r: &impl Resolve, descs: &[ObjectDesc]) -> Result<Vec<ObjectId>, SceneError> {
        if self.objects.len() + descs.len() > self.capacity {
            return Err(SceneError::Full { capacity: self.capacity });
        }
        // Validate everything first: a failing batch changes nothing.
        let mut resolved = Vec::with_capacity(descs.len());
        for (i, d) in descs.iter().enumerate() {
            check_desc(i, d)?;
            let (mesh, bounds) = r.mesh(d.mesh).ok_or(SceneError::StaleHandle { kind: HandleKind::Mesh, index: i })?;
            let mat = r.material(d.material).ok_or(SceneError::StaleHandle { kind: HandleKind::Material, index: i })?;
            resolved.push((mesh, mat, checked_bounds(i, &d.transform, &bounds)?));
        }
        let mut ids = Vec::with_capacity(descs.len());
        self.structure += 1;
        self.edits += 1;
        for (d, (mesh, mat, b)) in descs.iter().zip(resolved) {
            let dense = self.objects.len() as u32;
            let id = self.slots.insert(dense);
            self.objects.push(id, b, d, mesh, mat);
            Self::users(&mut self.mesh_users, mesh, 1);
            Self::users(&mut self.material_users, mat, 1);
            self.mark_dirty(dense);
            ids.push(id);
        }
        Ok(ids)
    }

    pub(crate) fn update(&mut self, r: &impl Resolve, edits: &[(ObjectId, ObjectDesc)]) -> Result<(), SceneError> {
        let mut resolved = Vec::with_capacity(edits.len());
        for (i, (id, d)) in edits.iter().enumerate() {
            let dense = *self.slots.get(*id).ok_or(SceneError::StaleHandle { kind: HandleKind::Object, index: i })?;
            check_desc(i, d)?;
            let (mesh, bounds) = r.mesh(d.mesh).ok_or(SceneError::StaleHandle { kind: HandleKind::Mesh, index: i })?;
            let mat = r.material(d.material).ok_or(SceneError::StaleHandle { kind: HandleKind::Material, index: i })?;
            resolved.push((dense, mesh, mat, checked_bounds(i, &d.transform, &bounds)?));
        }
        self.structure += 1;
        self.edits += 1;
        for ((_, d), (dense, mesh, mat, b)) in edits.iter().zip(resolved) {
            let i = dense as usize;
            Self::users(&mut self.mesh_users, self.objects.mesh[i], -1);
            Self::users(&mut self.material_users, self.objects.material[i], -1);
            self.objects.set(i, b, d, mesh, mat);
            Self::users(&mut self.mesh_users, mesh, 1);
            Self::users(&mut self.material_users, mat, 1);
            self.mark_dirty(dense);
        }
        Ok(())
    }

    /// Moves objects: only transforms (and so bounds) change.
    pub(crate) fn set_transforms(
        &mut self,
        mesh_bounds: impl Fn(u32) -> LocalBounds,
        edits: &[(ObjectId, Mat4)],
    ) -> Result<(), SceneError> {
        let mut dense = Vec::with_capacity(edits.len());
        for (i, (id, m)) in edits.iter().enumerate() {
            let d = *self.slots.get(*id).ok_or(SceneError::StaleHandle { kind: HandleKind::Object, index: i })?;
            if !m.is_finite() {
                return Err(SceneError::Invalid { index: i, what: "transform is not finite" });
            }
            dense.push((d, checked_bounds(i, m, &mesh_bounds(self.objects.mesh[d as usize]))?));
        }
        for ((_, m), (d, (c, e))) in edits.iter().zip(dense) {
            let i = d as usize;
            let o = &mut self.objects;
            (o.cx[i], o.cy[i], o.cz[i], o.ex[i], o.ey[i], o.ez[i]) = (c.x, c.y, c.z, e.x, e.y, e.z);
            o.transforms[i] = *m;
            self.mark_dirty(d);
        }
        Ok(())
    }

    pub(crate) fn remove(&mut self, ids: &[ObjectId]) -> Result<(), SceneError> {
        let mut seen: Vec<(u32, usize)> = Vec::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            let dense = *self.slots.get(*id).ok_or(SceneError::StaleHandle { kind: HandleKind::Object, index: i })?;
            seen.push((dense, i));
        }
        // A handle named twice is stale the second time.
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).filter(|w| w[0].0 == w[1].0).min_by_key(|w| w[1].1) {
            return Err(SceneError::StaleHandle { kind: HandleKind::Object, index: w[1].1.max(w[0].1) });
        }
        self.structure += 1;
        self.edits += 1;
        for id in ids {
            let dense = self.slots.remove(*id).expect("checked above") as usize;
            Self::users(&mut self.mesh_users, self.objects.mesh[dense], -1);
            Self::users(&mut self.material_users, self.objects.material[dense], -1);
            self.objects.swap_remove(dense);
            if dense < self.objects.len() {
                let moved = self.objects.ids[dense];
                *self.slots.get_mut(moved).expect("a live object") = dense as u32;
                self.mark_dirty(dense as u32);
            }
        }
        Ok(())
    }
}
