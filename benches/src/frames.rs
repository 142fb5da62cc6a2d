//! Whole-frame and display-list workloads on the procedural city.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;
use std::time::Instant;

use switchyard::backend::null::NullBackend;
use switchyard::backend::Backend;
use switchyard::*;
use switchyard_city::{self as city, City};

/// A renderer over `backend` holding a city of `objects` objects.
pub fn city<B: Backend>(backend: Arc<B>, objects: usize, threads: usize, cache: bool) -> (Renderer<B>, City) {
    city_with(backend, objects, RendererConfig { threads, display_list_cache: cache, ..bench_config() })
}

/// The renderer configuration of the benches (640x360, 1024 shadow maps).
pub fn bench_config() -> RendererConfig {
    RendererConfig { width: 640, height: 360, shadow_map_size: 1024, ..RendererConfig::default() }
}

/// A renderer with `config` holding a city of `objects` objects.
pub fn city_with<B: Backend>(backend: Arc<B>, objects: usize, config: RendererConfig) -> (Renderer<B>, City) {
    let config = RendererConfig { max_objects: objects.max(2), ..config };
    let mut r = Renderer::new(backend, config).expect("renderer");
    // The lit shader's per-draw form, as in every table so far (the demo draws with the
    // indexed form where the adapter allows: RUNS.md run 39), so the rows stay comparable.
    let shader = r.create_shader(&ShaderDesc::lit()).expect("the lit shader");
    let c = city::build_with_shader(&mut r, shader, objects, 256, 4, 0).expect("city");
    (r, c)
}

pub use switchyard_city::percentile;

/// Renders `warmup` then `frames` frames of `views` views; returns the measured stats.
pub fn run<B: Backend>(r: &mut Renderer<B>, c: &City, views: u32, warmup: u32, frames: u32) -> Vec<FrameStats> {
    let mut out = Vec::with_capacity(frames as usize);
    for f in 0..warmup + frames {
        let v = c.views(f, views, 16.0 / 9.0);
        let s = r.render(&v).expect("frame");
        if f >= warmup {
            out.push(s);
        }
    }
    r.flush().expect("flush");
    out
}

/// Like [`run`], with each frame's critical path through the job graph, written
/// `job start–end → job start–end ...` in ms after the graph began (formatted between
/// frames, outside the timed `render`).
pub fn run_traced<B: Backend>(
    r: &mut Renderer<B>,
    c: &City,
    views: u32,
    warmup: u32,
    frames: u32,
) -> Vec<(FrameStats, String)> {
    let mut out = Vec::with_capacity(frames as usize);
    for f in 0..warmup + frames {
        let v = c.views(f, views, 16.0 / 9.0);
        let s = r.render(&v).expect("frame");
        if f >= warmup {
            let path: Vec<String> = r
                .last_critical_path()
                .iter()
                .map(|j| format!("{} {:.2}–{:.2}", j.name, j.start_ms, j.end_ms))
                .collect();
            out.push((s, path.join(" → ")));
        }
    }
    r.flush().expect("flush");
    out
}

/// Median time (ms) of the single-threaded reference pipeline for the city's frames.
pub fn reference_ms<B: Backend>(r: &mut Renderer<B>, c: &City, views: u32, frames: u32) -> f64 {
    let mut times = Vec::with_capacity(frames as usize);
    for f in 0..frames {
        let v = c.views(f, views, 16.0 / 9.0);
        r.render(&v).expect("frame");
        r.flush().expect("flush");
        let t = Instant::now();
        std::hint::black_box(r.reference_frame(&v));
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    percentile(&times, 0.5)
}

/// Median patch-stage time (ms) over `frames` frames that switch a global keyword every
/// frame, with display lists cached (`cache`) or rebuilt every frame.
pub fn keyword_switching_patch_ms(objects: usize, threads: usize, cache: bool, frames: u32) -> (f64, ListCounts) {
    let (mut r, c) = city(Arc::new(NullBackend::new(true)), objects, threads, cache);
    let mut times = Vec::new();
    let mut counts = ListCounts::default();
    for f in 0..frames + 4 {
        r.set_global_keyword("FOG", f % 2 == 0);
        let s = r.render(&c.views(0, 3, 16.0 / 9.0)).expect("frame");
        if f >= 4 {
            times.push(s.patch_ms);
            counts += s.lists;
        }
    }
    (percentile(&times, 0.5), counts)
}

/// Pipeline descriptors as the cache sees them: `n` distinct ones.
pub fn pipeline_descs(n: usize) -> Vec<switchyard::backend::PipelineDesc> {
    let b = NullBackend::new(true);
    let shader = b
        .create_shader(&switchyard::backend::ShaderModuleDesc {
            label: "s".into(),
            wgsl: "@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }".into(),
        })
        .expect("shader");
    (0..n)
        .map(|i| switchyard::backend::PipelineDesc {
            label: format!("pipeline-{i}"),
            shader,
            vertex_entry: "vs".into(),
            fragment_entry: None,
            bind_group_layouts: vec![],
            vertex_buffers: vec![],
            cull: switchyard::backend::CullMode::Back,
            color: None,
            depth: Some(switchyard::backend::DepthState {
                format: switchyard::backend::TextureFormat::Depth32Float,
                write: true,
                compare: switchyard::backend::CompareFunction::Less,
                bias: i as i32,
                bias_slope_scale_bits: 0,
            }),
            samples: 1,
        })
        .collect()
}

/// Nanoseconds per cache lookup of every descriptor in `descs`, hashing with `S`.
pub fn cache_lookup_ns<S: BuildHasher + Default, K: Hash + Eq + Clone>(descs: &[K], rounds: usize) -> f64 {
    let map: HashMap<K, usize, S> = descs.iter().cloned().enumerate().map(|(i, d)| (d, i)).collect();
    let t = Instant::now();
    let mut sum = 0usize;
    for _ in 0..rounds {
        for d in descs {
            sum = sum.wrapping_add(map[d]);
        }
    }
    std::hint::black_box(sum);
    t.elapsed().as_secs_f64() * 1e9 / (rounds * descs.len()).max(1) as f64
}
