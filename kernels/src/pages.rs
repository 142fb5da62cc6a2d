//! Advice to the kernel on how to back large scratch arrays (`par::set_len`).

/// Fewest bytes of growth for which [`crate::par::set_len`] asks for huge pages.
pub(crate) const HUGE_MIN: usize = 8 << 20;

/// Asks the kernel to back `mem` (not yet touched) with transparent huge pages where it
/// may: 2 MiB per page fault instead of 4 KiB, so the first touch of a 120 MB scratch
/// takes 60 faults, not 30,000. Only advice: the memory's contents and validity do not
/// change, and a refusal (huge pages off, another OS, miri) leaves small pages.
pub(crate) fn advise_huge_pages<T>(mem: &mut [std::mem::MaybeUninit<T>]) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        const HUGE: usize = 2 << 20;
        let (start, end) = (mem.as_ptr() as usize, mem.as_ptr() as usize + size_of_val(mem));
        let (from, to) = (start.next_multiple_of(HUGE), end - end % HUGE);
        if from < to {
            // SAFETY: madvise reads and writes no memory of ours; the range lies within
            // `mem`'s allocation (rounded inward to whole huge pages), which we hold
            // exclusively, and MADV_HUGEPAGE changes only how the kernel backs it.
            unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = mem;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "8 MB of growth, minutes under miri, which skips the advice anyway")]
    fn set_len_past_the_huge_page_advice_keeps_the_old_part_and_zeroes_growth() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let mut v: Vec<u64> = vec![7; 3];
        let n = HUGE_MIN / size_of::<u64>() + 5;
        pool.install(|| crate::par::set_len(&mut v, n));
        assert_eq!(v.len(), n);
        assert!(v[..3].iter().all(|&x| x == 7) && v[3..].iter().all(|&x| x == 0));
        // Advice over memory not aligned to huge pages, beside values held: they stay.
        let mut w: Vec<u8> = Vec::with_capacity(3 * HUGE_MIN + 1);
        w.extend([1, 2, 3]);
        advise_huge_pages(w.spare_capacity_mut());
        w.resize(3 * HUGE_MIN, 9);
        assert_eq!(w[..3], [1, 2, 3]);
        assert!(w[3..].iter().all(|&x| x == 9));
    }
}
