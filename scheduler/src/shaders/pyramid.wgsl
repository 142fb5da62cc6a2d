// A depth pyramid for occlusion culling (`scheduler/src/occlusion.rs`).
//
// Each texel of a level is the farthest (largest) depth of the 2×2 texels below it in the
// level before (the depth target for level 0). Sizes round up, and a texel past the edge
// of the level below reads its last row or column: the texels of a level cover aligned
// power-of-two blocks of the target, each target texel exactly once. Levels are packed
// one after another in `pyramid`; one dispatch per level, its parameters at a dynamic
// offset.

struct Level {
    // What this level reads: its size and where it starts in `pyramid` (level 0 reads
    // the depth target; `src_at` unused).
    src_w: u32,
    src_h: u32,
    // What it writes.
    dst_w: u32,
    dst_h: u32,
    src_at: u32,
    dst_at: u32,
}

@group(0) @binding(0) var<uniform> level: Level;
// The depth target, read as its red channel (how every backend reads depth outside
// comparisons).
@group(0) @binding(1) var depth: texture_2d<f32>;
@group(0) @binding(2) var<storage, read_write> pyramid: array<f32>;

// The four texels below texel `id`, clamped to the level below.
fn below(id: vec2<u32>) -> array<vec2<u32>, 4> {
    let x0 = 2u * id.x;
    let y0 = 2u * id.y;
    let x1 = min(x0 + 1u, level.src_w - 1u);
    let y1 = min(y0 + 1u, level.src_h - 1u);
    return array<vec2<u32>, 4>(vec2(x0, y0), vec2(x1, y0), vec2(x0, y1), vec2(x1, y1));
}

@compute @workgroup_size(8, 8)
fn from_depth(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= level.dst_w || id.y >= level.dst_h {
        return;
    }
    var t = below(id.xy);
    var d = 0.0;
    for (var k = 0u; k < 4u; k++) {
        d = max(d, textureLoad(depth, t[k], 0).r);
    }
    pyramid[level.dst_at + id.y * level.dst_w + id.x] = d;
}

@compute @workgroup_size(8, 8)
fn from_level(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= level.dst_w || id.y >= level.dst_h {
        return;
    }
    var t = below(id.xy);
    var d = 0.0;
    for (var k = 0u; k < 4u; k++) {
        d = max(d, pyramid[level.src_at + t[k].y * level.src_w + t[k].x]);
    }
    pyramid[level.dst_at + id.y * level.dst_w + id.x] = d;
}
