//! Fullscreen passes that sample the engine's textures (external targets handed in per
//! frame, like the G-buffer of the engine's own passes): their bind group is made per
//! combination of textures and kept (a few), so alternating textures make no new objects;
//! on lavapipe and llvmpipe the output shows the texture the frame gave.

use std::sync::Arc;

use switchyard::backend::null::NullBackend;
use switchyard::backend::wgpu::Encoding;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, StoreOp};
use switchyard_tests::wgpu_backend;

const SIDE: u32 = 16;

/// Copies the engine's texture into a retained output.
const COPY: &str = "
@group(0) @binding(3) var input: texture_2d<f32>;
@fragment fn fs_copy(v: FullscreenVertex) -> @location(0) vec4<f32> {
    return textureSampleLevel(input, frame_point_sampler, v.uv, 0.0);
}";

fn graph() -> (FrameGraph, TargetId, TargetId) {
    let mut g = FrameGraph::new();
    let out = g.target("out", TargetKind::Retained, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let engine = g.target("engine-gbuffer", TargetKind::External, TextureFormat::Rgba8UnormSrgb, TargetSize::Output);
    let copy = FullscreenShader { name: "copy".into(), wgsl: COPY.into(), entry: "fs_copy".into(), params: [0.0; 8] };
    g.pass(Pass::fullscreen("copy", copy).color(out, LoadOp::DontCare, StoreOp::Store).sample(engine));
    (g, out, engine)
}

/// An engine texture of one color.
fn texture<B: Backend>(b: &B, rgba: [u8; 4]) -> TextureId {
    let t = b
        .create_texture(&TextureDesc {
            label: "engine".into(),
            width: SIDE,
            height: SIDE,
            format: TextureFormat::Rgba8UnormSrgb,
            usage: TextureUsage::SAMPLED | TextureUsage::COPY_DST,
            samples: 1,
            mip_levels: 1,
        })
        .unwrap();
    b.write_texture(t, &rgba.repeat((SIDE * SIDE) as usize)).unwrap();
    t
}

fn renderer<B: Backend>(backend: Arc<B>) -> Renderer<B> {
    let config = RendererConfig { threads: 2, max_objects: 16, width: SIDE, height: SIDE, ..Default::default() };
    Renderer::new(backend, config).unwrap()
}

#[test]
fn input_groups_are_made_once_per_texture_and_bounded() {
    let backend = Arc::new(NullBackend::new(true));
    let mut r = renderer(backend.clone());
    let (g, _, engine) = graph();
    r.set_graph(g).unwrap();
    let textures: Vec<TextureId> = (0..6).map(|i| texture(&*backend, [i, 0, 0, 255])).collect();
    let mut frame = |t: TextureId| {
        r.render_graph(&FrameInput { cameras: &[], targets: &[(engine, t)] }).unwrap();
        r.flush().unwrap();
        backend.live().bind_groups
    };
    // Three textures in turn (a swapchain): one group each, then none new.
    let first = frame(textures[0]);
    let after_three = [frame(textures[1]), frame(textures[2])];
    assert_eq!(after_three, [first + 1, first + 2]);
    for round in 0..3 {
        for &t in &textures[..3] {
            assert_eq!(frame(t), first + 2, "round {round}: a kept group is reused");
        }
    }
    // More textures than it keeps: the oldest go, the count stays bounded.
    for &t in &textures {
        assert!(frame(t) <= first + 3, "at most four kept groups");
    }
    // A new graph destroys them.
    let base = backend.live().bind_groups;
    r.set_graph(graph().0).unwrap();
    assert!(backend.live().bind_groups < base, "the old plan's groups are gone");
}

fn gpu_on(api: ::wgpu::Backends) {
    let Some(backend) = wgpu_backend(api, Encoding::RenderBundle) else { return };
    let mut r = renderer(backend.clone());
    let (g, out, engine) = graph();
    r.set_graph(g).unwrap();
    let colors = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]];
    let textures: Vec<TextureId> = colors.iter().map(|&c| texture(&*backend, c)).collect();
    for round in 0..2 {
        for (&t, &c) in textures.iter().zip(&colors) {
            r.render_graph(&FrameInput { cameras: &[], targets: &[(engine, t)] }).unwrap();
            let img = r.read_target(out).unwrap();
            for (x, y) in [(0, 0), (SIDE / 2, SIDE / 3), (SIDE - 1, SIDE - 1)] {
                assert_eq!(img.pixel(x, y), c, "{api:?} round {round}: the output shows the texture given");
            }
        }
    }
}

#[test]
fn a_fullscreen_pass_samples_the_engines_texture_on_vulkan() {
    gpu_on(::wgpu::Backends::VULKAN);
}

#[test]
fn a_fullscreen_pass_samples_the_engines_texture_on_gl() {
    gpu_on(::wgpu::Backends::GL);
}
