//! The cull's visible sets and lists: parts, seams, what stays, what is new.

use super::*;

/// Culls as the tests make them: the list as the cull writes it from given visible objects
/// and keys.
impl VisibleList {
    /// The list of `visible` (ascending) in a scene of `objects` objects, cut into parts of
    /// `part_len` objects as the cull cuts it, with `key(i)` as each object's key (tests).
    pub(crate) fn from_objects(objects: usize, part_len: usize, visible: &[u32], key: impl Fn(u32) -> u64) -> Self {
        let mut list = Self::default();
        list.recull(objects, part_len, visible, key);
        list
    }

    /// The next cull of this list as [`cull_view`] makes it, seeing `visible` (ascending)
    /// with `key(i)` as each object's key (tests): keys compared with the previous cull's,
    /// the objects that moved, stay, or are new.
    pub(crate) fn recull(&mut self, objects: usize, part_len: usize, visible: &[u32], key: impl Fn(u32) -> u64) {
        self.recull_after(objects, part_len, visible, key, None);
    }

    /// [`VisibleList::recull`] given the queue sorted from the last cull, `last`, whose
    /// blocks the parts cut their tails by as on the current pool (tests).
    pub(crate) fn recull_after(
        &mut self,
        objects: usize,
        part_len: usize,
        visible: &[u32],
        key: impl Fn(u32) -> u64,
        last: LastQueue<'_>,
    ) {
        let parts = objects.div_ceil(part_len).max(1);
        self.splits.set(last, rayon::current_num_threads());
        self.next_generation(parts, part_len);
        self.parts.resize_with(parts, CullPart::default);
        self.keys.resize(parts * part_len, 0);
        let part_words = part_len / 64;
        for (p, part) in self.parts.iter_mut().enumerate() {
            let range = (p * part_len) as u32..((p + 1) * part_len) as u32;
            part.visible = visible.iter().copied().filter(|i| range.contains(i)).collect();
            part.moved.clear();
            part.fresh.clear();
            for &i in &part.visible {
                let k = key(i);
                if self.prev_set.contains(i) && self.keys[i as usize] != k {
                    part.moved.push(i);
                }
                self.keys[i as usize] = k;
            }
            let words = p * part_words..(p + 1) * part_words;
            VisibleSet::fill_part(&mut self.set.words[words.clone()], p, &part.visible);
            let now = &self.set.words[words.clone()];
            VisibleSet::fresh_of_part(now, &self.prev_set, p, &mut part.fresh);
            VisibleSet::stay_of_part(&mut self.stay.words[words], now, &self.prev_set, p, &part.moved);
            part.keep_tail(|i| self.keys[i as usize], &self.splits);
            part.changed = true;
        }
        self.finish(0);
    }
}

#[test]
fn the_set_pieces_and_keys_hold_the_visible_list_at_part_seams() {
    // Three parts of each size: members at word and part seams, a full word, an empty
    // stretch, the last object of the scene.
    for part in [MIN_CULL_PART, 2 * MIN_CULL_PART, CULL_PART] {
        let objects = 2 * part + 1000;
        let p = part as u32;
        let mut visible: Vec<u32> = vec![0, 3, 63, 64, 70, 127];
        visible.extend(128..192);
        visible.extend([p - 1, p, p + 64, 2 * p + 999]);
        let key = |i: u32| u64::from(i) * 7 + 1;
        let list = VisibleList::from_objects(objects, part, &visible, key);
        assert_eq!(list.len(), visible.len());
        for &i in &visible {
            assert!(list.set().contains(i), "object {i}, parts of {part}");
            assert_eq!(list.key(i), key(i), "object {i}, parts of {part}");
        }
        assert_eq!(list.tail_len(), visible.len(), "the first cull sees every object anew");
        for i in [1, 62, 65, 192, p - 2, 2 * p + 998, objects as u32 + 64] {
            assert!(!list.set().contains(i), "object {i}");
        }
        // Pieces hold the list in order, and so do the parts' fresh objects.
        let pieces = list.offsets().len() - 1;
        let all: Vec<u32> = (0..pieces).flat_map(|p| list.piece(p).iter().copied()).collect();
        assert_eq!(all, visible);
        let fresh: Vec<u32> = (0..3).flat_map(|p| list.tail(p).iter().copied()).collect();
        assert_eq!(fresh, visible);
        assert_eq!(list.tail_offsets().len(), 4);
    }
}

#[test]
fn fresh_objects_are_the_members_the_previous_set_lacks_word_by_word() {
    let mut prev = VisibleSet::default();
    prev.reset(4);
    let mut now = VisibleSet::default();
    now.reset(4);
    // Part 1 of two-word parts: objects 128..256. Previous members 130, 191, 200;
    // members now 130, 131, 191, 192, 255 (and 5 in part 0, not this part's).
    VisibleSet::fill_part(&mut prev.words[2..4], 1, &[130, 191, 200]);
    VisibleSet::fill_part(&mut now.words[0..2], 0, &[5]);
    VisibleSet::fill_part(&mut now.words[2..4], 1, &[130, 131, 191, 192, 255]);
    let mut fresh = vec![];
    VisibleSet::fresh_of_part(&now.words[2..4], &prev, 1, &mut fresh);
    assert_eq!(fresh, [131, 192, 255]);
    // Against a smaller previous set (the scene grew): every member is fresh.
    let mut small = VisibleSet::default();
    small.reset(1);
    fresh.clear();
    VisibleSet::fresh_of_part(&now.words[2..4], &small, 1, &mut fresh);
    assert_eq!(fresh, [130, 131, 191, 192, 255]);
}

#[test]
fn objects_stay_where_both_sets_hold_them_with_their_key() {
    let mut prev = VisibleSet::default();
    prev.reset(4);
    let mut now = VisibleSet::default();
    now.reset(4);
    // Part 1 of two-word parts: previous members 130, 191, 200; members now 130, 131,
    // 191, 192, 255, of which 191's key changed.
    VisibleSet::fill_part(&mut prev.words[2..4], 1, &[130, 191, 200]);
    VisibleSet::fill_part(&mut now.words[2..4], 1, &[130, 131, 191, 192, 255]);
    let mut stay = VisibleSet::default();
    stay.reset(4);
    VisibleSet::stay_of_part(&mut stay.words[2..4], &now.words[2..4], &prev, 1, &[191]);
    let members: Vec<u32> = (0..256).filter(|&i| stay.contains(i)).collect();
    assert_eq!(members, [130]);
    // A second cull of a list: moved, fresh and staying objects partition it.
    let key = |i: u32| u64::from(i % 7);
    let part = MIN_CULL_PART as u32;
    let mut list = VisibleList::from_objects(10_000, MIN_CULL_PART, &[1, 2, 64, part - 1, part, 9000], key);
    let moved_key = |i: u32| if i == part || i == 2 { 99 } else { key(i) };
    list.recull(10_000, MIN_CULL_PART, &[2, 3, 64, part, 9000, 9001], moved_key);
    let stays: Vec<u32> = (0..10_000).filter(|&i| list.stays(i)).collect();
    assert_eq!(stays, [64, 9000]);
    let tail: Vec<u32> = (0..list.parts.len()).flat_map(|p| list.tail(p).iter().copied()).collect();
    assert_eq!(tail, [3, 2, part, 9001], "per part: new objects, then moved ones");
    let tail_keys: Vec<u64> = (0..list.parts.len()).flat_map(|p| list.tail_keys(p).to_vec()).collect();
    assert_eq!(tail_keys, tail.iter().map(|&i| moved_key(i)).collect::<Vec<_>>(), "the tail's keys, in its order");
    assert_eq!(list.tail_len() + stays.len(), list.len());
}

#[test]
fn parts_are_powers_of_two_of_about_two_per_worker() {
    for threads in [0, 1, 2, 3, 8, 16, 64] {
        for n in [0, 1, 5000, 100_000, 300_000, 1_000_000, usize::MAX / 4] {
            let len = part_len(n, threads);
            assert!(len.is_power_of_two() && (MIN_CULL_PART..=CULL_PART).contains(&len), "{n} on {threads}");
        }
    }
    assert_eq!(part_len(100_000, 16), MIN_CULL_PART, "25 parts for 16 workers");
    assert_eq!(part_len(100_000, 1), CULL_PART);
    assert_eq!(part_len(1_000_000, 16), CULL_PART, "62 parts");
    assert_eq!(part_len(300_000, 16), 8 * 1024);
}

#[test]
fn each_cull_keeps_the_previous_set() {
    let mut list = VisibleList::from_objects(100, CULL_PART, &[5, 7], |i| i.into());
    assert_eq!(list.generation, 1);
    // Culled on the GPU next: no members, the previous set kept.
    list.culled_on_gpu(&MaterialSet::default(), 0.0);
    assert_eq!(list.generation, 2);
    assert!(list.prev_set().contains(5) && list.prev_set().contains(7) && !list.prev_set().contains(6));
    assert!(!list.set().contains(5) && list.len() == 0);
    list.next_generation(1, CULL_PART);
    assert!(!list.prev_set().contains(5), "the GPU cull's empty set is now the previous one");
}

#[test]
fn cut_tails_hold_each_blocks_pairs_and_only_them() {
    // Last frame's queue of 40k objects (keys with ties) on a pool large enough to cut:
    // after some objects move and some come into view, each part's tail holds its new and
    // moved objects, each block's pairs between that block's first pair and the next's.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(SPLIT_MIN_THREADS).build().unwrap();
    let objects = 40_000;
    let mut keys: Vec<u64> = (0..objects as u64).map(|i| (i * 7919) % 300).collect();
    let visible: Vec<u32> = (0..objects as u32).filter(|i| i % 5 != 0).collect();
    let mut list = VisibleList::from_objects(objects, MIN_CULL_PART, &visible, |i| keys[i as usize]);
    let mut last: Vec<(u64, u32)> = visible.iter().map(|&i| (keys[i as usize], i)).collect();
    last.sort_unstable();
    let (lk, lq): (Vec<u64>, Vec<u32>) = last.iter().copied().unzip();
    (0..objects).step_by(37).for_each(|i| keys[i] = 1000 - keys[i]);
    let now: Vec<u32> = (0..objects as u32).filter(|i| i % 5 != 0 || i % 45 == 0).collect();
    pool.install(|| list.recull_after(objects, MIN_CULL_PART, &now, |i| keys[i as usize], Some((&lq, &lk))));
    let (block, len) = list.tails_cut().expect("small tails are cut");
    assert_eq!((block, len), (merge_block_len(lq.len(), SPLIT_MIN_THREADS), lq.len()));
    let blocks = merge_blocks(len, block);
    let first = |j: usize| (lk[j * block], lq[j * block]);
    let mut tail: Vec<u32> = Vec::new();
    for p in 0..list.parts() {
        let mut expect: Vec<u32> = list.parts[p].fresh.iter().chain(&list.parts[p].moved).copied().collect();
        let mut got = Vec::new();
        for j in 0..blocks {
            let (q, k) = list.tail_block(p, j);
            for (&i, &key) in q.iter().zip(k) {
                assert_eq!(key, keys[i as usize], "part {p}, block {j}: object {i}'s key");
                assert!(j == 0 || (key, i) > first(j), "part {p}: object {i} before block {j}");
                assert!(j + 1 == blocks || (key, i) < first(j + 1), "part {p}: object {i} after block {j}");
            }
            got.extend_from_slice(q);
        }
        expect.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, expect, "part {p}: its tail, cut");
        tail.extend(got);
    }
    assert_eq!(tail.len(), list.tail_len());
    assert!(!tail.is_empty());
}
