//! Upload paths measured against each other (issue 23, item 1: "measure the staging ring
//! against wgpu's `StagingBelt`"): the same bytes written into a GPU buffer in pieces of a
//! given size by `Queue::write_buffer` (wgpu copies each piece into a staging buffer it
//! allocates), `Queue::write_buffer_with` (the piece written straight into that staging
//! memory), and `util::StagingBelt` (a ring of mapped chunks reused once the GPU is done
//! with them: the staging ring). Each batch is one submit; a run is 8 batches and ends when
//! the GPU has finished them. Rounds alternate the paths; prints the median MB/s per path
//! and piece size, counting bytes finished on the GPU.
//!
//! `cargo run --release -p switchyard-benches --example staging -- [rounds] [MiB per batch]`

use std::time::Instant;

const BATCHES: usize = 8;

#[derive(Clone, Copy, Debug)]
enum Path {
    WriteBuffer,
    WriteBufferWith,
    StagingBelt,
}

fn main() {
    let mut args = std::env::args().skip(1).filter_map(|a| a.parse::<usize>().ok());
    let rounds = args.next().unwrap_or(7).max(1);
    let batch = args.next().unwrap_or(64) << 20;
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())).expect("adapter");
    println!("adapter: {} ({:?})", adapter.get_info().name, adapter.get_info().backend);
    let (device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).expect("device");
    let target = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("target"),
        size: batch as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::VERTEX,
        mapped_at_creation: false,
    });
    let source: Vec<u8> = (0..batch).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    let paths = [Path::WriteBuffer, Path::WriteBufferWith, Path::StagingBelt];
    println!("{:>10} {:>16} {:>10} {:>10}", "piece", "path", "MB/s", "spread");
    for piece in [4 << 10, 64 << 10, 1 << 20, 16 << 20] {
        let mut belt = wgpu::util::StagingBelt::new(device.clone(), (16u64 << 20).max(piece as u64));
        let mut rates = vec![Vec::new(); paths.len()];
        for _ in 0..rounds {
            for (p, &path) in paths.iter().enumerate() {
                let start = Instant::now();
                for _ in 0..BATCHES {
                    upload(path, &device, &queue, &target, &source, piece, &mut belt);
                }
                device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
                rates[p].push((BATCHES * batch) as f64 / start.elapsed().as_secs_f64() / 1e6);
            }
        }
        for (p, r) in paths.iter().zip(&mut rates) {
            r.sort_by(f64::total_cmp);
            let (lo, mid, hi) = (r[0], r[r.len() / 2], r[r.len() - 1]);
            println!("{:>10} {:>16} {:>10.0} {:>4.0}-{:.0}", piece, format!("{p:?}"), mid, lo, hi);
        }
    }
}

/// One batch: every piece of `source` into `target`, one submit.
fn upload(
    path: Path,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    target: &wgpu::Buffer,
    source: &[u8],
    piece: usize,
    belt: &mut wgpu::util::StagingBelt,
) {
    let pieces = source.chunks(piece).enumerate().map(|(i, p)| ((i * piece) as u64, p));
    match path {
        Path::WriteBuffer => {
            for (at, p) in pieces {
                queue.write_buffer(target, at, p);
            }
            queue.submit([]);
        }
        Path::WriteBufferWith => {
            for (at, p) in pieces {
                let size = wgpu::BufferSize::new(p.len() as u64).expect("a piece has bytes");
                queue.write_buffer_with(target, at, size).expect("a staging view").copy_from_slice(p);
            }
            queue.submit([]);
        }
        Path::StagingBelt => {
            // Chunks the GPU is done with come back to the belt when their map completes.
            device.poll(wgpu::PollType::Poll).expect("poll");
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
            for (at, p) in pieces {
                let size = wgpu::BufferSize::new(p.len() as u64).expect("a piece has bytes");
                belt.write_buffer(&mut encoder, target, at, size).copy_from_slice(p);
            }
            belt.finish();
            queue.submit([encoder.finish()]);
            belt.recall();
        }
    }
}
