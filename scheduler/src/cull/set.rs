//! Bit sets of the cull: a view's visible objects (its visible set, its previous one and
//! the objects that stay, each part of the cull writing its own words), and the materials
//! its visible objects use.

/// A view's visible objects as a bit per object. Part `p` of the cull owns the words of its
/// objects, filled in parallel.
#[derive(Debug, Default)]
pub(crate) struct VisibleSet {
    pub(super) words: Vec<u64>,
}

impl VisibleSet {
    /// Whether object `i` is a member (indices past the set's scene are not).
    #[inline]
    pub(crate) fn contains(&self, i: u32) -> bool {
        self.words.get(i as usize / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Sizes the set for `words` words, all to be written by their parts.
    pub(super) fn reset(&mut self, words: usize) {
        resize(&mut self.words, words);
    }

    /// Appends to `fresh` the members of `words` (part `part`'s, parts of `words.len() * 64`
    /// objects) that `prev` lacks, ascending: a word at a time.
    pub(super) fn fresh_of_part(words: &[u64], prev: &VisibleSet, part: usize, fresh: &mut Vec<u32>) {
        let base = part * words.len();
        let prev = prev.words.get(base..).unwrap_or(&[]);
        for (w, &now) in words.iter().enumerate() {
            let mut f = now & !prev.get(w).copied().unwrap_or(0);
            while f != 0 {
                fresh.push(((base + w) * 64) as u32 + f.trailing_zeros());
                f &= f - 1;
            }
        }
    }

    /// Part `part`'s words of the objects that stay: members of `words` (its words of this
    /// cull's set) and of `prev`, but not of `moved` (its objects whose key changed).
    pub(super) fn stay_of_part(stay: &mut [u64], words: &[u64], prev: &VisibleSet, part: usize, moved: &[u32]) {
        let base = part * words.len();
        let prev = prev.words.get(base..).unwrap_or(&[]);
        for (w, (s, &now)) in stay.iter_mut().zip(words).enumerate() {
            *s = now & prev.get(w).copied().unwrap_or(0);
        }
        for &i in moved {
            let o = i as usize - base * 64;
            stay[o / 64] &= !(1 << (o % 64));
        }
    }

    /// Whether `words` (part `part`'s) equal `prev`'s words for the same objects (words
    /// `prev` lacks count as empty).
    pub(super) fn same_part(words: &[u64], prev: &VisibleSet, part: usize) -> bool {
        let base = part * words.len();
        let prev = prev.words.get(base..).unwrap_or(&[]);
        words.iter().enumerate().all(|(w, &now)| now == prev.get(w).copied().unwrap_or(0))
    }

    /// Part `part`'s words from its visible list (ascending, within the part's objects;
    /// parts of `words.len() * 64` objects).
    pub(super) fn fill_part(words: &mut [u64], part: usize, visible: &[u32]) {
        words.fill(0);
        let base = part * words.len() * 64;
        // The list ascends, so each word's members come together: gathered in a register
        // and stored once (an OR into memory per member waits on the last one's store).
        let (mut at, mut bits) = (usize::MAX, 0u64);
        for &i in visible {
            let o = i as usize - base;
            if o / 64 != at {
                if let Some(w) = words.get_mut(at) {
                    *w = bits;
                }
                (at, bits) = (o / 64, 0);
            }
            bits |= 1 << (o % 64);
        }
        if let Some(w) = words.get_mut(at) {
            *w = bits;
        }
    }
}

/// `v.resize(n, 0)` without writing what is kept (its parts overwrite it).
fn resize<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    v.truncate(n);
    v.resize(n, T::default());
}

/// Dense material indices as a bit set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MaterialSet {
    words: Vec<u64>,
}

impl MaterialSet {
    /// Empties the set and sizes it for `materials` materials.
    pub(crate) fn reset(&mut self, materials: usize) {
        self.words.clear();
        self.words.resize(materials.div_ceil(64), 0);
    }

    #[inline]
    pub(crate) fn insert(&mut self, m: usize) {
        self.words[m / 64] |= 1 << (m % 64);
    }

    #[inline]
    pub(crate) fn contains(&self, m: usize) -> bool {
        self.words.get(m / 64).is_some_and(|w| w & (1 << (m % 64)) != 0)
    }

    /// Adds every member of `other`.
    pub(crate) fn union_with(&mut self, other: &Self) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        self.words.iter_mut().zip(&other.words).for_each(|(a, b)| *a |= b);
    }
}
