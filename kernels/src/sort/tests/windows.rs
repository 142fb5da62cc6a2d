//! The sparse windows of one-thread sorts (module `sparse`): render keys split on them, and
//! where a split would leave tiny buckets with many bits below, it is declined.

use super::*;

#[test]
fn render_keys_sort_one_thread_through_sparse_windows() {
    // Hashed pipelines and materials: a few hundred values in 14 bits. One thread sorts
    // (the sparse windows serve one-thread sorts), on the pool's thread.
    // (Above the wide digits' most: module `wide` sorts smaller render keys.)
    let sizes: &[usize] = if cfg!(miri) { &[80, 300] } else { &[20_000, 70_000] };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    for &n in sizes {
        pool.install(|| {
            let before = sparse::SPLITS.with(|c| c.get());
            check(render_keys(n, n as u64));
            assert!(sparse::SPLITS.with(|c| c.get()) > before, "{n} pairs: a sparse window was split");
        });
    }
}

#[test]
#[cfg(not(miri))] // the rule is off under miri (its inputs would decline every window)
fn windows_that_would_leave_tiny_buckets_of_many_bits_are_declined() {
    // 128k render keys on one thread: the top window (layer and pipeline) splits into 32
    // buckets of 4k; each bucket's material window would leave ~16-pair buckets with 30
    // bits of mesh and depth below: declined, sorted by levels and LSD instead. Keys with
    // only the states (14 bits below the material window) still split there.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let splits = |keys: Vec<u64>| {
        pool.install(|| {
            let before = sparse::SPLITS.with(|c| c.get());
            check(keys);
            sparse::SPLITS.with(|c| c.get()) - before
        })
    };
    assert_eq!(splits(render_keys(1 << 17, 5)), 1, "only the top window splits");
    // (Fewer than the wide digits' least: 4k such pairs sort LSD on 11-bit digits.)
    let states: Vec<u64> =
        render_keys(4095, 6).into_iter().map(|k| k & !0xffff & !(1 << 60) & !(0x7fff << 44)).collect();
    assert_eq!(splits(states), 1, "the material window of state-only keys splits");
}
