// GPU culling of one view (`scheduler/src/gpu_cull/`).
//
// The view's candidates (the objects its pass may draw, grouped into state buckets on the
// CPU, object order within a bucket) are tested against its frustum with the CPU cull's
// math, and the visible ones are compacted in candidate order: a stable compaction, so a
// bucket's instances are its visible candidates in the CPU list's order. Four dispatches:
//   count:        per block of 256 candidates, how many are visible;
//   scan_blocks:  one workgroup turns the block counts into exclusive offsets;
//   scatter:      each visible candidate's rank (its place in the compacted list) is its
//                 block's offset plus its rank within the block; its object index goes
//                 there in `instances`, and every candidate's rank into `ranks`;
//   write_args:   per bucket, instance_count and first_instance of its indirect draw from
//                 the ranks of its first candidate and of the next bucket's.
// Blocks and buckets run over a 2D grid of workgroups (at most 65,535 per dimension).
//
// With occlusion culling (`scheduler/src/occlusion.rs`) a view is culled twice: phase 1
// (these entries) keeps the candidates inside the frustum that were visible last frame
// (their bit in `scratch`), phase 2 (`count_late`, `scatter_late`, then `scan_blocks` and
// `write_args` again) tests the candidates inside the frustum against the depth pyramid
// built from what phase 1 drew, writes every bit, and keeps the visible ones phase 1 did
// not draw. Each phase writes its own range of instances and records.
//
// A shadow view with receivers (`Pass::receivers`) is culled once, in phase 3
// (`count_receivers`, `scan_blocks`, `scatter_receivers`, `write_args`), after the
// receiver pyramid of its map (`receivers.wgsl`): a caster inside the frustum is kept
// unless its nearest depth in the map lies beyond every receiver over its rectangle,
// grown by `grow` texels for the lookup's filter.
//
// With a count buffer (`Caps::indirect_count`; `gpu_cull/count.rs`) each multi-draw the
// view records reads its records from a compacted copy and its draw count from `args`:
// `write_args_counted` writes the records and counts the non-empty buckets per block of
// 256 buckets, `scan_buckets` turns those counts into offsets, `scatter_buckets` gives
// each bucket its rank among the non-empty ones, and `move_args` copies every non-empty
// record to its multi-draw's first record plus its rank within that multi-draw (stable:
// bucket order) and writes each multi-draw's count. The GPU then skips the empty draws.

struct Params {
    planes: array<vec4<f32>, 6>,
    // Candidates, blocks of 256 candidates, buckets, and where the candidate list starts
    // in `lists` (after the bucket starts).
    candidates: u32,
    blocks: u32,
    buckets: u32,
    candidates_at: u32,
    // Where the block sums start in `scratch` (after the ranks).
    sums_at: u32,
    // 0: frustum only; 1: occlusion's phase 1; 2: its phase 2; 3: casters of receivers.
    phase: u32,
    // Where the candidates' visible-last-frame bits start in `scratch` (one u32 each).
    bits_at: u32,
    // The bits are not this view's (new buffers, new buckets): phase 1 keeps everything
    // in the frustum, phase 2 only writes the bits.
    reset: u32,
    view_proj: mat4x4<f32>,
    // Where this phase's instances and records start.
    instances_at: u32,
    records_at: u32,
    // The depth target's size and the pyramid's levels (`pyramid.wgsl`).
    target_w: u32,
    target_h: u32,
    levels: u32,
    // Target texels the rectangle grows by on every side (phase 3).
    grow: u32,
    // With a count buffer: blocks of 256 buckets; where each bucket's multi-draw (its
    // group) starts in `lists`, followed by the groups' first buckets; where this phase's
    // compacted records start (in records) and its counts (in u32s) in `args`.
    bucket_blocks: u32,
    groups_at: u32,
    compact_at: u32,
    counts_at: u32,
    pad: vec2<u32>,
    pad2: vec4<u32>,
    // Planes limiting a shadow view to the casters of a region (zero where unused).
    caster_planes: array<vec4<f32>, 6>,
}

// A read-only storage buffer instead where the driver compiles a shader variant per set
// of uniform values that steer loops and branches (`Caps::inlines_uniforms`, lavapipe):
// these change every frame (`gpu_cull/mod.rs` swaps the declaration; same field layout).
@group(0) @binding(0) var<uniform> params: Params;
// Per object: world AABB center (xyz) and half extents (xyz), two vec4s.
@group(0) @binding(1) var<storage, read> bounds: array<vec4<f32>>;
// Bucket starts (buckets + 1 entries, in candidates), then the candidates' object indices.
@group(0) @binding(2) var<storage, read> lists: array<u32>;
// The compacted object indices: the view's instance buffer.
@group(0) @binding(3) var<storage, read_write> instances: array<u32>;
// The view's indirect draws, five u32 per bucket; the CPU wrote the mesh fields.
@group(0) @binding(4) var<storage, read_write> args: array<u32>;
// Ranks (candidates + 1 entries), then the block sums, then the bits (with occlusion).
@group(0) @binding(5) var<storage, read_write> scratch: array<u32>;
// The depth pyramid (phase 2 only).
@group(0) @binding(6) var<storage, read> pyramid: array<f32>;

const BLOCK: u32 = 256u;

var<workgroup> partial: array<u32, 256>;

// The CPU cull's test (`switchyard_kernels::cull`): the AABB touches every plane's inside.
fn in_frustum(i: u32) -> bool {
    if i >= params.candidates {
        return false;
    }
    let o = lists[params.candidates_at + i];
    let c = bounds[2u * o].xyz;
    let e = bounds[2u * o + 1u].xyz;
    var inside = true;
    for (var k = 0u; k < 6u; k++) {
        inside = inside && touches(params.planes[k], c, e) && touches(params.caster_planes[k], c, e);
    }
    return inside;
}

// Whether the box (center, half extents) touches the plane's inside.
fn touches(p: vec4<f32>, c: vec3<f32>, e: vec3<f32>) -> bool {
    let s = p.x * c.x + p.y * c.y + p.z * c.z + p.w;
    let r = abs(p.x) * e.x + abs(p.y) * e.y + abs(p.z) * e.z;
    return s >= -r;
}

// Whether the candidate's bit says it was visible last frame (or there are no bits yet).
fn seen(i: u32) -> bool {
    return params.reset != 0u || scratch[params.bits_at + i] != 0u;
}

// What this phase keeps: the frustum's candidates, with occlusion those seen last frame.
fn visible(i: u32) -> bool {
    return in_frustum(i) && (params.phase != 1u || seen(i));
}

// Phase 3: the frustum's candidates that can shadow a receiver.
fn casts_on_receivers(i: u32) -> bool {
    return in_frustum(i) && !occluded(lists[params.candidates_at + i]);
}

// Whether object `o`'s box is hidden behind the depth in the pyramid: its nearest depth
// is farther than the farthest depth over its screen rectangle, read at the level where
// the rectangle spans at most 2×2 texels. Conservative: a box crossing the near plane, or
// whose rectangle no level holds in 2×2 texels, is visible; the rectangle takes every
// texel a pixel of the box could cover.
fn occluded(o: u32) -> bool {
    let c = bounds[2u * o].xyz;
    let e = bounds[2u * o + 1u].xyz;
    var lo = vec3<f32>(1e30);
    var hi = vec3<f32>(-1e30);
    for (var k = 0u; k < 8u; k++) {
        let s = vec3<f32>(f32(k & 1u), f32((k >> 1u) & 1u), f32((k >> 2u) & 1u)) * 2.0 - 1.0;
        let clip = params.view_proj * vec4<f32>(c + e * s, 1.0);
        if clip.w <= 1e-5 {
            return false;
        }
        let ndc = clip.xyz / clip.w;
        lo = min(lo, ndc);
        hi = max(hi, ndc);
    }
    if lo.z < 0.0 {
        return false;
    }
    let size = vec2<f32>(f32(params.target_w), f32(params.target_h));
    // Texel rectangle (y down), clamped to the target.
    let a = clamp(floor(vec2<f32>(lo.x * 0.5 + 0.5, 0.5 - hi.y * 0.5) * size), vec2<f32>(0.0), size - 1.0);
    let b = clamp(floor(vec2<f32>(hi.x * 0.5 + 0.5, 0.5 - lo.y * 0.5) * size), vec2<f32>(0.0), size - 1.0);
    let g = vec2<u32>(params.grow);
    let p0 = vec2<u32>(a) - min(vec2<u32>(a), g);
    let p1 = min(vec2<u32>(b) + g, vec2<u32>(size - 1.0));
    var w = (params.target_w + 1u) / 2u;
    var h = (params.target_h + 1u) / 2u;
    var at = 0u;
    for (var l = 0u; l < params.levels; l++) {
        let shift = l + 1u;
        let q0 = p0 >> vec2<u32>(shift);
        let q1 = p1 >> vec2<u32>(shift);
        if q1.x - q0.x <= 1u && q1.y - q0.y <= 1u {
            let d = max(
                max(pyramid[at + q0.y * w + q0.x], pyramid[at + q0.y * w + q1.x]),
                max(pyramid[at + q1.y * w + q0.x], pyramid[at + q1.y * w + q1.x]),
            );
            return lo.z > d + 1e-6;
        }
        at += w * h;
        w = (w + 1u) / 2u;
        h = (h + 1u) / 2u;
    }
    return false;
}

// Phase 2: inside the frustum and not hidden now; `drawn`: and not drawn in phase 1.
fn late(i: u32) -> vec2<bool> {
    if !in_frustum(i) {
        return vec2<bool>(false, false);
    }
    let now = !occluded(lists[params.candidates_at + i]);
    return vec2<bool>(now, now && !seen(i));
}

// Exclusive prefix sum of `v` over the workgroup (Hillis-Steele); `partial[BLOCK - 1]`
// holds the total afterwards.
fn workgroup_scan(lid: u32, v: u32) -> u32 {
    partial[lid] = v;
    workgroupBarrier();
    for (var d = 1u; d < BLOCK; d = d << 1u) {
        var add = 0u;
        if lid >= d {
            add = partial[lid - d];
        }
        workgroupBarrier();
        partial[lid] += add;
        workgroupBarrier();
    }
    return partial[lid] - v;
}

// A block's count of kept candidates (`v`: this invocation's) into its sum.
fn count_block(lid: u32, block: u32, v: u32) {
    let before = workgroup_scan(lid, v);
    if lid == BLOCK - 1u && block < params.blocks {
        scratch[params.sums_at + block] = before + v;
    }
}

// Candidate `i`'s rank, and its object index at that rank where it is kept.
fn scatter_candidate(lid: u32, block: u32, i: u32, kept: bool) {
    let before = workgroup_scan(lid, u32(kept));
    if block < params.blocks && i < params.candidates {
        let rank = scratch[params.sums_at + block] + before;
        scratch[i] = rank;
        if kept {
            instances[params.instances_at + rank] = lists[params.candidates_at + i];
        }
    }
}

@compute @workgroup_size(256)
fn count(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    count_block(lid, block, u32(visible(block * BLOCK + lid)));
}

// Phase 3's count and scatter (separate entries: only these read the pyramid, which a
// renderer without occlusion culling does not bind).
@compute @workgroup_size(256)
fn count_receivers(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    count_block(lid, block, u32(casts_on_receivers(block * BLOCK + lid)));
}

@compute @workgroup_size(256)
fn scatter_receivers(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let i = block * BLOCK + lid;
    scatter_candidate(lid, block, i, casts_on_receivers(i));
}

// Exclusive offsets of the `n` block sums at `sums_at` (in place), in one workgroup; their
// total into `scratch[total_at]`.
fn scan(lid: u32, n: u32, total_at: u32) {
    let per = (n + BLOCK - 1u) / BLOCK;
    let start = lid * per;
    var sum = 0u;
    for (var k = 0u; k < per; k++) {
        if start + k < n {
            sum += scratch[params.sums_at + start + k];
        }
    }
    let before = workgroup_scan(lid, sum);
    var run = before;
    for (var k = 0u; k < per; k++) {
        if start + k < n {
            let s = scratch[params.sums_at + start + k];
            scratch[params.sums_at + start + k] = run;
            run += s;
        }
    }
    if lid == BLOCK - 1u {
        scratch[total_at] = before + sum;
    }
}

@compute @workgroup_size(256)
fn scan_blocks(@builtin(local_invocation_index) lid: u32) {
    // The rank past the last candidate: how many are kept.
    scan(lid, params.blocks, params.candidates);
}

@compute @workgroup_size(256)
fn scatter(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let i = block * BLOCK + lid;
    scatter_candidate(lid, block, i, visible(i));
}

@compute @workgroup_size(256)
fn count_late(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let v = u32(late(block * BLOCK + lid).y);
    let before = workgroup_scan(lid, v);
    if lid == BLOCK - 1u && block < params.blocks {
        scratch[params.sums_at + block] = before + v;
    }
}

@compute @workgroup_size(256)
fn scatter_late(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let i = block * BLOCK + lid;
    let v = late(i);
    let before = workgroup_scan(lid, u32(v.y));
    if block < params.blocks && i < params.candidates {
        let rank = scratch[params.sums_at + block] + before;
        scratch[i] = rank;
        // Read by `seen` above (this invocation's own bit), written for the next frame.
        scratch[params.bits_at + i] = u32(v.x);
        if v.y {
            instances[params.instances_at + rank] = lists[params.candidates_at + i];
        }
    }
}

// Bucket `b`'s record: its instance count and first instance from the ranks of its first
// candidate and the next bucket's. Returns the instance count.
fn write_record(b: u32) -> u32 {
    let first = scratch[lists[b]];
    let end = scratch[lists[b + 1u]];
    let r = params.records_at + b;
    args[5u * r + 1u] = end - first;
    args[5u * r + 4u] = params.instances_at + first;
    return end - first;
}

@compute @workgroup_size(256)
fn write_args(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let b = (wid.x + wid.y * groups.x) * BLOCK + lid;
    if b < params.buckets {
        write_record(b);
    }
}

// Count buffers: `write_args`, and the block's count of non-empty buckets into its sum
// (the candidates' sums are read no more).
@compute @workgroup_size(256)
fn write_args_counted(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let b = block * BLOCK + lid;
    var full = 0u;
    if b < params.buckets {
        full = u32(write_record(b) != 0u);
    }
    let before = workgroup_scan(lid, full);
    if lid == BLOCK - 1u && block < params.bucket_blocks {
        scratch[params.sums_at + block] = before + full;
    }
}

@compute @workgroup_size(256)
fn scan_buckets(@builtin(local_invocation_index) lid: u32) {
    // The number of non-empty buckets past the last one.
    scan(lid, params.bucket_blocks, params.buckets);
}

// Whether bucket `b`'s record (written this phase) draws anything.
fn drawn(b: u32) -> bool {
    return b < params.buckets && args[5u * (params.records_at + b) + 1u] != 0u;
}

// Each bucket's rank among the non-empty buckets, over the candidates' ranks (read no
// more; at most one bucket per candidate).
@compute @workgroup_size(256)
fn scatter_buckets(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let b = block * BLOCK + lid;
    let before = workgroup_scan(lid, u32(drawn(b)));
    if b < params.buckets {
        scratch[b] = scratch[params.sums_at + block] + before;
    }
}

// A non-empty record to its multi-draw's first record plus its rank within the
// multi-draw; the multi-draw's first bucket writes its count.
@compute @workgroup_size(256)
fn move_args(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let b = (wid.x + wid.y * groups.x) * BLOCK + lid;
    if b >= params.buckets {
        return;
    }
    let group = lists[params.groups_at + b];
    let starts = params.groups_at + params.buckets;
    let first = lists[starts + group];
    let base = scratch[first];
    if b == first {
        args[params.counts_at + group] = scratch[lists[starts + group + 1u]] - base;
    }
    if drawn(b) {
        let src = 5u * (params.records_at + b);
        let dst = 5u * (params.compact_at + first + scratch[b] - base);
        for (var k = 0u; k < 5u; k++) {
            args[dst + k] = args[src + k];
        }
    }
}
