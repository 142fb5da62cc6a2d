//! The nearly-sorted path's gaps: found per block or given by the caller (found part by
//! part as it wrote the input), widened in parallel groups and joined across their edges.

use super::super::nearly_sorted::{self as ns, WIDEN_PER_THREAD};
use super::*;

#[test]
#[cfg_attr(
    miri,
    ignore = "the nearly-sorted path is safe code over par and the radix paths, checked by their own tests"
)]
fn gaps_that_meet_across_block_edges_are_joined() {
    let n = if cfg!(miri) { 1_000 } else { 200_000 };
    let edges: Vec<usize> = (1..8).map(|k| k * (n / 8)).collect();
    let mut cases: Vec<Vec<u64>> = Vec::new();
    // A key moved a few places across each edge, both directions.
    let mut a: Vec<u64> = (0..n as u64).map(|k| k * 4).collect();
    for &e in &edges {
        a[e - 3] = a[e + 5] + 1;
        a[e + 2] = a[e - 6] + 1;
    }
    cases.push(a);
    // One key moved far: its gap widens over several blocks.
    let mut b: Vec<u64> = (0..n as u64).map(|k| k * 4).collect();
    b[n / 3] = b[n / 3 + n / 20] + 2;
    cases.push(b);
    // Dense changes around edges, with duplicates.
    let mut c: Vec<u64> = (0..n as u64).map(|k| k / 3).collect();
    let dense = if cfg!(miri) { 8 } else { 40 };
    for &e in &edges {
        for d in 0..dense {
            c[e - dense / 2 + d] = ((e / 3 + dense * 3 / 4 - d) % (n / 3)) as u64;
        }
    }
    cases.push(c);
    for keys in cases {
        check(keys.clone());
        let results: Vec<_> = THREADS.iter().map(|&t| sort_on(t, &keys, &mut RadixSorter::new())).collect();
        assert!(results.iter().all(|r| r.2), "the merge path ran");
        assert!(results.windows(2).all(|w| w[0] == w[1]));
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the nearly-sorted path is safe code over par and the radix paths, checked by their own tests"
)]
fn given_gaps_widened_in_groups_are_joined_across_groups() {
    // Clusters of small descents (neighbours swapped at every third place), each after a
    // stretch of keys raised above the whole cluster: the gap at the stretch's end widens
    // over the cluster's gaps, which the parallel widening splits among its groups.
    let (n, clusters, swaps) = if cfg!(miri) { (2_000, 2, 6) } else { (40_000, 10, 40) };
    let stretch = 3 * swaps + 10;
    let mut keys: Vec<u64> = (0..n as u64).map(|k| 4 * k).collect();
    for c in 0..clusters {
        let at = (c + 1) * n / (clusters + 1);
        for j in 0..swaps {
            keys.swap(at + 3 * j, at + 3 * j + 1);
        }
        let top = keys[at + 3 * swaps] + 1;
        for d in 0..stretch {
            keys[at - stretch + d] = top + d as u64;
        }
    }
    let vals: Vec<u32> = (0..n as u32).collect();
    for by_value in [false, true] {
        let mut gaps = Vec::new();
        ns::descent_gaps(&keys, by_value.then_some(&vals[..]), 0, &mut gaps);
        assert!(gaps.len() >= 4 * WIDEN_PER_THREAD, "{} gaps: four groups", gaps.len());
        let survey = Survey::of(&keys, &vals);
        let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
        expect.sort_unstable();
        for threads in [1, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut sorter = RadixSorter::new();
            sorter.ties_by_value = by_value;
            let (mut k, mut v) = (keys.clone(), vals.clone());
            pool.install(|| sorter.sort_vecs_surveyed(&mut k, &mut v, survey, Some(&gaps)));
            assert_eq!(sorter.last_path, SortPath::NearlySorted, "{threads} threads");
            let got: Vec<(u64, u32)> = k.into_iter().zip(v).collect();
            assert!(got == expect, "{threads} threads, ties by value {by_value}");
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the nearly-sorted path is safe code over par and the radix paths, checked by their own tests"
)]
fn surveys_of_parts_join_into_the_whole_inputs_and_sort_alike() {
    // Inputs in order, with ties in and out of value order, nearly sorted and random; cut
    // into parts at every kind of seam (empty parts too). Above the nearly-sorted path's
    // parallel size, so that given gaps are widened and set aside in parallel groups.
    let n = if cfg!(miri) { 300 } else { 30_000 };
    let mut rng = Pcg64Mcg::seed_from_u64(5);
    let inputs: Vec<(Vec<u64>, Vec<u32>)> = vec![
        ((0..n as u64).map(|k| k / 3).collect(), (0..n as u32).collect()),
        ((0..n as u64).map(|k| k / 3).collect(), (0..n as u32).rev().collect()),
        (coherent(n, 3, 1 << 20, 40), (0..n as u32).collect()),
        // Few key values: most changed keys land among equal ones, ties out of value order
        // where no key descends.
        (coherent(n, 9, 64, 40), (0..n as u32).collect()),
        (
            coherent(n, 3, 1 << 20, 40),
            (0..n as u32)
                .map(|i| {
                    if i % 97 == 5 {
                        i + 1
                    } else if i % 97 == 6 {
                        i - 1
                    } else {
                        i
                    }
                })
                .collect(),
        ),
        (random(n, 4), (0..n as u32).rev().collect()),
    ];
    // Few key values, and the pairs around each descent (the ones the nearly-sorted path
    // sets aside) with values descending along the input: the set-aside pairs of one key
    // need ordering by value.
    let keys = coherent(n, 11, 64, 40);
    let moved = |i: usize| (i > 0 && keys[i - 1] > keys[i]) || (i + 1 < n && keys[i] > keys[i + 1]);
    let vals = (0..n).map(|i| if moved(i) { 2 * n - i } else { i } as u32).collect();
    let inputs = inputs.into_iter().chain([(keys, vals)]);
    for (keys, vals) in inputs {
        let whole = Survey::of(&keys, &vals);
        // Ties are counted where nothing descends, and only there.
        let ties = keys.windows(2).zip(vals.windows(2)).filter(|(k, v)| k[0] == k[1] && v[0] > v[1]).count();
        assert_eq!(whole.ties, if whole.descents == 0 { ties as u64 } else { 0 });
        let mut cuts: Vec<usize> = (0..6).map(|_| rng.gen_range(0..=n)).collect();
        cuts.extend([0, 0, n, n]);
        cuts.sort_unstable();
        let joined = cuts
            .windows(2)
            .map(|c| Survey::of(&keys[c[0]..c[1]], &vals[c[0]..c[1]]))
            .fold(Survey::default(), Survey::then);
        assert_eq!(joined, whole, "cut at {cuts:?}");
        // The descents found part by part, with the seams', are the whole input's: of the
        // keys, and of (key, value) for a sorter that orders ties by value.
        for by_value in [false, true] {
            let v = by_value.then_some(&vals[..]);
            let after =
                |a: usize, b: usize| if by_value { (keys[a], vals[a]) > (keys[b], vals[b]) } else { keys[a] > keys[b] };
            let mut all = Vec::new();
            ns::descent_gaps(&keys, v, 0, &mut all);
            let expect: Vec<usize> = (0..n - 1).filter(|&j| after(j, j + 1)).collect();
            assert!(expect.iter().all(|&j| all.iter().any(|g| g.0 <= j && j + 2 <= g.1)), "a descent outside the gaps");
            let mut parts = Vec::new();
            for c in cuts.windows(2).filter(|c| c[0] < c[1]) {
                if c[0] > 0 && after(c[0] - 1, c[0]) {
                    ns::push_gap(&mut parts, (c[0] - 1, c[0] + 1));
                }
                ns::descent_gaps(&keys[c[0]..c[1]], v.map(|v| &v[c[0]..c[1]]), c[0], &mut parts);
            }
            assert_eq!(parts, all, "cut at {cuts:?}, ties by value {by_value}");
            for threads in [1, 4] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let (mut k1, mut v1, mut k2, mut v2) = (keys.clone(), vals.clone(), keys.clone(), vals.clone());
                let (mut k3, mut v3) = (keys.clone(), vals.clone());
                let (mut a, mut b, mut c) = (RadixSorter::new(), RadixSorter::new(), RadixSorter::new());
                (a.ties_by_value, b.ties_by_value, c.ties_by_value) = (by_value, by_value, by_value);
                pool.install(|| {
                    a.sort_vecs(&mut k1, &mut v1);
                    b.sort_vecs_surveyed(&mut k2, &mut v2, whole, None);
                    c.sort_vecs_surveyed(&mut k3, &mut v3, whole, Some(&all));
                });
                let mut expect: Vec<(u64, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
                if by_value {
                    expect.sort_unstable();
                } else {
                    expect.sort_by_key(|p| p.0);
                }
                let got = |k: &[u64], v: &[u32]| k.iter().copied().zip(v.iter().copied()).collect::<Vec<_>>();
                assert_eq!(got(&k1, &v1), expect, "{threads} threads, ties by value {by_value}");
                assert_eq!((&k1, &v1), (&k2, &v2), "{threads} threads");
                assert_eq!((&k1, &v1), (&k3, &v3), "{threads} threads, descents given");
            }
        }
    }
}
