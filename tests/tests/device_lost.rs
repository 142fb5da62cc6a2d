//! A real wgpu device lost (`WgpuBackend::lose_device` destroys it): the renderer reports
//! it as a typed error, `Renderer::recover` rebuilds everything on a new device from its
//! retained scene, and the next frame's pixels equal those before the loss — on lavapipe
//! (Vulkan) and llvmpipe (GL); also with the shadow pass culled on the GPU (the cull
//! pipelines, bounds and per-view buffers are made again on the new device). The mesh and
//! texture data live on the GPU only (`CpuCopy::Drop`, the default): recovery lists them,
//! a frame before they are supplied again draws without them, and once supplied the
//! pixels are those before the loss; with `CpuCopy::Keep` recovery uploads them itself.

use std::sync::Arc;

use switchyard::backend::wgpu::{Encoding, WgpuBackend};
use switchyard::*;
use switchyard_tests::{cube, cube_grid};

const SIZE: u32 = 80;

fn device(api: wgpu::Backends) -> Option<Arc<WgpuBackend>> {
    let Some(adapter) = WgpuBackend::enumerate(api).into_iter().next() else {
        assert!(std::env::var_os("CI").is_none(), "no {api:?} adapter on CI");
        return None;
    };
    Some(Arc::new(WgpuBackend::from_adapter(adapter, Encoding::RenderBundle).unwrap()))
}

fn checker() -> Vec<u8> {
    (0..16).flat_map(|i| if (i + i / 4) % 2 == 0 { [250, 250, 250, 255] } else { [40, 90, 200, 255] }).collect()
}

/// Lit, textured, shadowed cubes, seen by a camera and the sun; the views, the mesh and the
/// texture.
fn scene(r: &mut Renderer<WgpuBackend>, lit: &ShaderDesc) -> (Vec<View>, MeshHandle, TextureHandle) {
    let shader = r.create_shader(lit).unwrap();
    let mesh = r.create_mesh(&cube()).unwrap();
    let texture = r.create_texture(4, 4, &checker()).unwrap();
    let plain = r
        .create_material(&MaterialDesc {
            shader,
            properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color([0.9, 0.4, 0.1, 1.0])),
            ..Default::default()
        })
        .unwrap();
    let textured =
        r.create_material(&MaterialDesc { shader, base_texture: Some(texture), ..Default::default() }).unwrap();
    (cube_grid(r, mesh, &[textured, plain]), mesh, texture)
}

fn on(api: wgpu::Backends, cull: CullOn, cpu_copies: CpuCopy) {
    on_with(api, cull, cpu_copies, &ShaderDesc::lit());
}

/// [`on`] with the lit shader in form `lit` (per draw or indexed).
fn on_with(api: wgpu::Backends, cull: CullOn, cpu_copies: CpuCopy, lit: &ShaderDesc) {
    let Some(backend) = device(api) else { return };
    let config = RendererConfig {
        cull,
        threads: 2,
        width: SIZE,
        height: SIZE,
        shadow_map_size: 128,
        max_objects: 64,
        cpu_copies,
        ..Default::default()
    };
    let mut r = Renderer::new(backend.clone(), config).unwrap();
    assert_eq!(r.gpu_cull(), cull == CullOn::Gpu, "{:?}", r.cull_fallback());
    let (views, mesh, texture) = scene(&mut r, lit);
    r.render(&views).unwrap();
    let before = r.read_color().unwrap();

    backend.lose_device();
    // The loss shows at the first call that reaches the device: a typed error.
    let lost = r.render(&views).and_then(|_| r.flush().map(|_| unreachable!("flush after a loss")));
    assert_eq!(lost.unwrap_err(), RenderError::DeviceLost, "{api:?}");
    assert!(r.is_lost());
    assert_eq!(r.read_color().unwrap_err(), RenderError::DeviceLost);

    let fresh = device(api).expect("the adapter is still there");
    let rebuilt = r.recover(fresh).unwrap();
    assert_eq!(r.gpu_cull(), cull == CullOn::Gpu);
    // The first frame on the new device builds the GPU cull's buckets again.
    let first = r.render(&views).unwrap();
    assert_eq!((first.gpu_culled_views, first.buckets_built), if cull == CullOn::Gpu { (1, 1) } else { (0, 0) });
    if cpu_copies == CpuCopy::Keep {
        assert_eq!((rebuilt.meshes, rebuilt.textures, rebuilt.materials, rebuilt.objects), (1, 1, 2, 9));
        assert_eq!(rebuilt.needs_data, []);
    } else {
        assert_eq!((rebuilt.meshes, rebuilt.textures, rebuilt.materials, rebuilt.objects), (0, 0, 2, 9));
        assert_eq!(rebuilt.needs_data, [NeedsData::Mesh(mesh), NeedsData::Texture(texture)]);
        assert_eq!(r.needs_data(), rebuilt.needs_data);
        // Not supplied yet: the cubes draw nothing (their index range is zeros).
        assert_ne!(r.read_color().unwrap(), before, "{api:?}: the frame without the mesh's data");
        r.resupply_mesh(mesh, &cube()).unwrap();
        r.resupply_texture(texture, &[&checker()]).unwrap();
        assert_eq!(r.needs_data(), []);
        assert_eq!(r.resupply_mesh(mesh, &cube()), Err(ResourceError::HasData(HandleKind::Mesh)));
    }
    r.render(&views).unwrap();
    let after = r.read_color().unwrap();
    assert_eq!(after, before, "{api:?}: the frame after recovery shows what the frame before the loss showed");
    let distinct: std::collections::HashSet<[u8; 4]> =
        (0..SIZE * SIZE).map(|i| after.pixel(i % SIZE, i / SIZE)).collect();
    assert!(distinct.len() > 8, "a lit, textured scene, not a clear: {} colors", distinct.len());
}

#[test]
fn device_lost_on_vulkan_recovers_with_equal_pixels_once_the_data_is_supplied_again() {
    on(wgpu::Backends::VULKAN, CullOn::Cpu, CpuCopy::Drop);
}

#[test]
fn device_lost_on_vulkan_recovers_kept_data_by_itself() {
    on(wgpu::Backends::VULKAN, CullOn::Cpu, CpuCopy::Keep);
}

#[test]
fn device_lost_on_gl_recovers_with_equal_pixels() {
    on(wgpu::Backends::GL, CullOn::Cpu, CpuCopy::Drop);
}

#[test]
fn device_lost_on_vulkan_recovers_culling_on_the_gpu() {
    on(wgpu::Backends::VULKAN, CullOn::Gpu, CpuCopy::Drop);
}

#[test]
fn device_lost_on_gl_recovers_culling_on_the_gpu() {
    on(wgpu::Backends::GL, CullOn::Gpu, CpuCopy::Keep);
}

/// Indexed materials: the objects' materials and the slots by dense material come back
/// with the new device (the full upload of every object's transform and material).
#[test]
fn device_lost_on_vulkan_recovers_indexed_materials_culling_on_the_gpu() {
    on_with(wgpu::Backends::VULKAN, CullOn::Gpu, CpuCopy::Drop, &ShaderDesc::lit_indexed());
}

#[test]
fn device_lost_on_gl_recovers_indexed_materials() {
    on_with(wgpu::Backends::GL, CullOn::Cpu, CpuCopy::Keep, &ShaderDesc::lit_indexed());
}
