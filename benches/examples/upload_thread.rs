//! Texture uploads from the calling thread against the upload thread's way (issue 23,
//! item 1: "upload-thread throughput against `write_buffer`/`write_texture` from the
//! calling thread"), on the wgpu backend:
//!
//! - **calling**: `Backend::write_texture` for every texture of a batch on the calling
//!   thread (wgpu copies each into a staging buffer it allocates), then a submit;
//! - **upload thread**: another thread stages each batch (`Backend::stage`: the bytes into
//!   a ring of mapped chunks, the copies recorded) while the calling thread submits the one
//!   before (`Backend::submit_staged`), as the renderer's `switchyard-upload` and
//!   submission threads do.
//!
//! A run is 8 batches of `count` RGBA8 textures of `side`²; it ends when the GPU has
//! finished them. Rounds alternate the ways; prints the median MB/s (bytes finished on the
//! GPU) and the calling thread's busy ms per batch.
//!
//! `cargo run --release -p switchyard-benches --example upload_thread -- [rounds] [side] [count]`

use std::sync::mpsc;
use std::time::Instant;

use switchyard_backend::wgpu::{Encoding, WgpuBackend};
use switchyard_backend::{
    Backend, Resource, TextureDesc, TextureFormat, TextureId, TextureUsage, TextureWrite, Uploads,
};

const BATCHES: usize = 8;

fn main() {
    let mut args = std::env::args().skip(1).filter_map(|a| a.parse::<u32>().ok());
    let rounds = args.next().unwrap_or(7).max(1);
    let side = args.next().unwrap_or(1024).clamp(4, 8192);
    let count = args.next().unwrap_or(16).max(1) as usize;
    let adapter = WgpuBackend::enumerate(wgpu::Backends::all()).into_iter().next().expect("an adapter");
    let b = WgpuBackend::from_adapter(adapter, Encoding::RenderBundle).expect("a device");
    println!("adapter: {}", b.name());
    let textures: Vec<TextureId> = (0..count)
        .map(|i| {
            b.create_texture(&TextureDesc {
                label: format!("t{i}"),
                width: side,
                height: side,
                format: TextureFormat::Rgba8UnormSrgb,
                usage: TextureUsage::SAMPLED | TextureUsage::COPY_DST,
                samples: 1,
                mip_levels: 1,
            })
            .expect("a texture")
        })
        .collect();
    let texels: Vec<u8> =
        (0..side as usize * side as usize * 4).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    let bytes = (BATCHES * count * texels.len()) as f64;
    let (mut rates, mut busy) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for _ in 0..rounds {
        for (way, staged) in [false, true].into_iter().enumerate() {
            let start = Instant::now();
            let calling_ms =
                if staged { upload_thread(&b, &textures, &texels) } else { calling(&b, &textures, &texels) };
            rates[way].push(bytes / start.elapsed().as_secs_f64() / 1e6);
            busy[way].push(calling_ms / BATCHES as f64);
        }
    }
    println!(
        "{count} textures of {side}x{side} RGBA8 per batch ({:.1} MB), {BATCHES} batches a run, {rounds} rounds",
        bytes / BATCHES as f64 / 1e6
    );
    println!("{:>14} {:>10} {:>12} {:>26}", "way", "MB/s", "spread", "calling thread ms/batch");
    for (way, name) in ["calling", "upload thread"].into_iter().enumerate() {
        let (r, ms) = (&mut rates[way], &mut busy[way]);
        r.sort_by(f64::total_cmp);
        ms.sort_by(f64::total_cmp);
        println!(
            "{name:>14} {:>10.0} {:>5.0}-{:<6.0} {:>12.3} ({:.3}-{:.3})",
            r[r.len() / 2],
            r[0],
            r[r.len() - 1],
            ms[ms.len() / 2],
            ms[0],
            ms[ms.len() - 1]
        );
    }
    for t in textures {
        b.destroy(Resource::Texture(t)).expect("destroyed");
    }
}

/// Waits until the GPU finished everything submitted.
fn finish(b: &WgpuBackend) {
    let id = b.submit(&[], &mut []).expect("a submit");
    b.wait(id).expect("the GPU finished");
}

/// At most this many batches on the GPU, as frames in flight: the calling thread waits for
/// the oldest beyond it (which also hands finished staging memory back for reuse).
const IN_FLIGHT: usize = 3;

/// A submit after a batch, and the wait for the batch `IN_FLIGHT` back (not timed).
fn submitted(b: &WgpuBackend, queue: &mut std::collections::VecDeque<switchyard_backend::SubmissionId>) -> f64 {
    queue.push_back(b.submit(&[], &mut []).expect("a submit"));
    let t = Instant::now();
    if queue.len() >= IN_FLIGHT {
        b.wait(queue.pop_front().expect("non-empty")).expect("the GPU finished");
    }
    t.elapsed().as_secs_f64() * 1e3
}

/// Every texture written on the calling thread, a submit per batch; the calling thread's
/// busy ms (its waits for the GPU left out).
fn calling(b: &WgpuBackend, textures: &[TextureId], texels: &[u8]) -> f64 {
    let (mut ms, mut queue) = (0.0, Default::default());
    for _ in 0..BATCHES {
        let t = Instant::now();
        for &texture in textures {
            b.write_texture(texture, texels).expect("written");
        }
        let waited = submitted(b, &mut queue);
        ms += t.elapsed().as_secs_f64() * 1e3 - waited;
    }
    finish(b);
    ms
}

/// Each batch staged on another thread while the calling thread submits the one before;
/// the calling thread's busy ms (submitting staged batches and its own empty submits; its
/// waits for the GPU left out).
fn upload_thread(b: &WgpuBackend, textures: &[TextureId], texels: &[u8]) -> f64 {
    let writes: Vec<TextureWrite> =
        textures.iter().map(|&texture| TextureWrite { texture, level: 0, data: texels }).collect();
    let (tx, rx) = mpsc::channel();
    let mut ms = 0.0;
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..BATCHES {
                let staged = b.stage(&Uploads { textures: &writes, ..Default::default() }).expect("staged");
                tx.send(staged).expect("the calling thread waits");
            }
        });
        let mut queue = Default::default();
        for staged in rx.iter().take(BATCHES) {
            let t = Instant::now();
            b.submit_staged(staged).expect("submitted");
            let waited = submitted(b, &mut queue);
            ms += t.elapsed().as_secs_f64() * 1e3 - waited;
        }
    });
    finish(b);
    ms
}
