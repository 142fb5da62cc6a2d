// The probe of README.md: `set_len` of 128 MiB, the time, and the process's AnonHugePages.
fn anon_huge() -> String {
    std::fs::read_to_string("/proc/self/smaps_rollup").unwrap().lines().filter(|l| l.starts_with("AnonHugePages")).collect()
}
fn main() {
    println!("before: {}", anon_huge());
    let mut v: Vec<u64> = Vec::new();
    let t = std::time::Instant::now();
    switchyard_kernels::par::set_len(&mut v, 16 << 20);
    println!("set_len 128 MB in {:?}; after: {}", t.elapsed(), anon_huge());
    std::hint::black_box(&v);
}
