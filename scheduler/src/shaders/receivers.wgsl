// Shadow receivers (`scheduler/src/occlusion.rs`): level 0 of a shadow view's receiver
// pyramid, from a depth target that holds every surface a camera sees.
//
// Each depth texel that is not sky is a point some pass shades: unprojected with the
// camera's inverse matrix and projected with the shadow map's, it lands in one texel of
// level 0 (the map's area in level 0's resolution), which keeps the largest shadow-map
// depth landing there (the receiver farthest from the light). Floats of 0 and above
// order as their bits do, so an atomic max on the bits is a max on the depths; 0 marks
// a texel without receivers. The pyramid's `from_level` builds the levels above, and the
// cull (`cull.wgsl`, phase 3) drops casters whose nearest depth lies beyond every
// receiver over their rectangle: they cannot shadow any point the camera sees.
// Receivers outside the map, before its near plane or at or past its far plane are left
// out: the forward shader's lookup never finds a shadow for them (`lit.wgsl`).

struct Receivers {
    // The depth target's size.
    src_w: u32,
    src_h: u32,
    // Level 0's size, and where it starts in `map` (0).
    dst_w: u32,
    dst_h: u32,
    src_at: u32,
    dst_at: u32,
    pad0: u32,
    pad1: u32,
    // The camera's clip space to world.
    clip_to_world: mat4x4<f32>,
    // World to the shadow map's clip space.
    light: mat4x4<f32>,
}

@group(0) @binding(0) var<uniform> level: Receivers;
@group(0) @binding(1) var depth: texture_2d<f32>;
@group(0) @binding(2) var<storage, read_write> map: array<atomic<u32>>;

@compute @workgroup_size(8, 8)
fn clear(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= level.dst_w || id.y >= level.dst_h {
        return;
    }
    atomicStore(&map[level.dst_at + id.y * level.dst_w + id.x], 0u);
}

@compute @workgroup_size(8, 8)
fn scatter(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= level.src_w || id.y >= level.src_h {
        return;
    }
    let z = textureLoad(depth, id.xy, 0).r;
    if z >= 1.0 {
        return;
    }
    // The texel's center, as the forward pass shades it (y down in the target).
    let size = vec2<f32>(f32(level.src_w), f32(level.src_h));
    let uv = (vec2<f32>(id.xy) + 0.5) / size;
    let world = level.clip_to_world * vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, z, 1.0);
    if abs(world.w) < 1e-30 {
        return;
    }
    let clip = level.light * vec4<f32>(world.xyz / world.w, 1.0);
    if clip.w <= 1e-5 {
        return;
    }
    let ndc = clip.xyz / clip.w;
    let at = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    if !(all(at > vec2<f32>(0.0)) && all(at < vec2<f32>(1.0)) && ndc.z > 0.0 && ndc.z < 1.0) {
        return;
    }
    let dst = vec2<f32>(f32(level.dst_w), f32(level.dst_h));
    let t = min(vec2<u32>(at * dst), vec2<u32>(level.dst_w - 1u, level.dst_h - 1u));
    atomicMax(&map[level.dst_at + t.y * level.dst_w + t.x], bitcast<u32>(ndc.z));
}
