// GPU culling of one view (`scheduler/src/gpu_cull.rs`).
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
}

@group(0) @binding(0) var<uniform> params: Params;
// Per object: world AABB center (xyz) and half extents (xyz), two vec4s.
@group(0) @binding(1) var<storage, read> bounds: array<vec4<f32>>;
// Bucket starts (buckets + 1 entries, in candidates), then the candidates' object indices.
@group(0) @binding(2) var<storage, read> lists: array<u32>;
// The compacted object indices: the view's instance buffer.
@group(0) @binding(3) var<storage, read_write> instances: array<u32>;
// The view's indirect draws, five u32 per bucket; the CPU wrote the mesh fields.
@group(0) @binding(4) var<storage, read_write> args: array<u32>;
// Ranks (candidates + 1 entries), then the block sums.
@group(0) @binding(5) var<storage, read_write> scratch: array<u32>;

const BLOCK: u32 = 256u;

var<workgroup> partial: array<u32, 256>;

// The CPU cull's test (`switchyard_kernels::cull`): the AABB touches every plane's inside.
fn visible(i: u32) -> bool {
    if i >= params.candidates {
        return false;
    }
    let o = lists[params.candidates_at + i];
    let c = bounds[2u * o].xyz;
    let e = bounds[2u * o + 1u].xyz;
    var inside = true;
    for (var k = 0u; k < 6u; k++) {
        let p = params.planes[k];
        let s = p.x * c.x + p.y * c.y + p.z * c.z + p.w;
        let r = abs(p.x) * e.x + abs(p.y) * e.y + abs(p.z) * e.z;
        inside = inside && s >= -r;
    }
    return inside;
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

@compute @workgroup_size(256)
fn count(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let v = u32(visible(block * BLOCK + lid));
    let before = workgroup_scan(lid, v);
    if lid == BLOCK - 1u && block < params.blocks {
        scratch[params.sums_at + block] = before + v;
    }
}

@compute @workgroup_size(256)
fn scan_blocks(@builtin(local_invocation_index) lid: u32) {
    let n = params.blocks;
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
        // The rank past the last candidate: how many are visible.
        scratch[params.candidates] = before + sum;
    }
}

@compute @workgroup_size(256)
fn scatter(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = wid.x + wid.y * groups.x;
    let i = block * BLOCK + lid;
    let vis = visible(i);
    let before = workgroup_scan(lid, u32(vis));
    if block < params.blocks && i < params.candidates {
        let rank = scratch[params.sums_at + block] + before;
        scratch[i] = rank;
        if vis {
            instances[rank] = lists[params.candidates_at + i];
        }
    }
}

@compute @workgroup_size(256)
fn write_args(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let b = (wid.x + wid.y * groups.x) * BLOCK + lid;
    if b < params.buckets {
        let first = scratch[lists[b]];
        let end = scratch[lists[b + 1u]];
        args[5u * b + 1u] = end - first;
        args[5u * b + 4u] = first;
    }
}
