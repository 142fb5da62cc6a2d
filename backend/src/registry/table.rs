//! The tagged slot map each kind of resource of a registry lives in.

use slotmap::{Key, KeyData, SlotMap};

use crate::handle::TAG_BITS;

/// The resources of one kind. Its keys carry the registry's tag in the high bits of the
/// slot version (XORed in at `insert`, out at every lookup), so a handle of another backend
/// names nothing here — a typed stale-handle error, never another backend's resource that
/// happens to sit in the same slot. Digests leave the tag out
/// ([`crate::HandleBits::bits`]): handles of equal creation orders digest alike on every
/// backend.
pub(crate) struct Table<K: Key, V> {
    map: SlotMap<K, V>,
    tag: u64,
}

impl<K: Key, V> Table<K, V> {
    pub(super) fn new(tag: u64) -> Self {
        Self { map: SlotMap::with_key(), tag }
    }

    /// The key in the other form: public (tagged) from inner, or inner from public.
    #[inline]
    fn flip(&self, k: K) -> K {
        K::from(KeyData::from_ffi(k.data().as_ffi() ^ self.tag))
    }

    pub(crate) fn insert(&mut self, v: V) -> K {
        let k = self.map.insert(v);
        self.flip(k)
    }

    #[inline]
    pub(crate) fn get(&self, k: K) -> Option<&V> {
        self.map.get(self.flip(k))
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, k: K) -> Option<&mut V> {
        let k = self.flip(k);
        self.map.get_mut(k)
    }

    pub(crate) fn remove(&mut self, k: K) -> Option<V> {
        let k = self.flip(k);
        self.map.remove(k)
    }

    pub(crate) fn contains_key(&self, k: K) -> bool {
        self.map.contains_key(self.flip(k))
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Every stored value.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.map.values()
    }
}

impl<K: Key, V> std::ops::Index<K> for Table<K, V> {
    type Output = V;
    /// Panics on a key that names nothing, like a slotmap's index (callers check first).
    fn index(&self, k: K) -> &V {
        &self.map[self.flip(k)]
    }
}

/// A tag per registry of this process (16 bits: they repeat after 65,535 registries).
pub(super) fn next_tag() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 0xFFFF + 1;
    (n << 48) & TAG_BITS
}
