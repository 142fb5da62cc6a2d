//! The state-churn recording (10k draws) at every chunk count from 1 to 256, on the thread
//! counts given as arguments: wall time, work summed over threads and the chunks' drop,
//! for Switchyard's path and for hand-written wgpu bundles (medians of 9). Produced
//! `docs/bench/h200-16core/run13/chunkprobe.txt`:
//!
//! `WGPU_BACKEND=vulkan cargo run --release -p switchyard-benches --example record_chunks -- 1 4 8 16`

use switchyard::backend::wgpu::Encoding;
use switchyard_benches::{pool, recording};

fn main() -> Result<(), String> {
    let churn = recording::Churn::new(10_000, Encoding::RenderBundle)?;
    let threads: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    for t in if threads.is_empty() { vec![1] } else { threads } {
        let p = pool(t);
        for chunks in [1usize, 2, 4, 8, 16, 32, 64, 105, 256] {
            let runs: Vec<_> = (0..9).map(|_| p.install(|| churn.record_ours_split(chunks))).collect();
            let s = recording::RecordSplit::median(&runs);
            let runs: Vec<_> = (0..9).map(|_| p.install(|| churn.bundles_by_hand_split(chunks))).collect();
            let h = recording::RecordSplit::median(&runs);
            println!(
                "t {t} chunks {chunks:4}: ours wall {:.2} summed {:.2} drop {:.2} | hand wall {:.2} enc {:.2} fin {:.2} drop {:.2}",
                s.wall, s.summed, s.drop, h.wall, h.encode, h.finish, h.drop
            );
        }
    }
    Ok(())
}
