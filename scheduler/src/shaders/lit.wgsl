// Switchyard's built-in lit shader. Binding convention (every Switchyard shader follows it):
//   group 0: per-view globals (dynamic offset), object transforms, and in the forward pass
//            four shadow maps (bindings 2, 3, 5, 6; a cascade whose matrix is zero is
//            unused) with a comparison sampler (binding 4);
//   group 1: the material's constant block (dynamic offset into the frame's ring),
//            base color texture and sampler (forward pass only).
// Indexed materials (`MaterialBinding::Indexed`, `ShaderDesc::lit_indexed`): group 1
// binds the ring as an array of 256-byte slots, one per dense material, and at binding 3
// each object's material; the indexed form of this file drops the lines that end in
// `// per draw` and keeps those that begin with `// indexed: `.
// Keywords become `const KW_<NAME>: bool` lines prepended per variant; a line that ends
// in `// if NAME` (`// if !NAME`) is kept only in variants with NAME on (off).

struct Globals {
    view_proj: mat4x4<f32>,
    light_view_proj: array<mat4x4<f32>, 4>,
    light_dir: vec4<f32>,
    camera_pos: vec4<f32>,
    fog_color: vec4<f32>,
    // x: time, y: fog density, z: shadow strength, w: unused
    params: vec4<f32>,
    // Where the view's camera projects from: its position (w = 1), or for an orthographic
    // camera the unit direction toward its near side (w = 0).
    viewer: vec4<f32>,
};

struct Material {
    base_color: vec4<f32>,
    emissive: vec4<f32>,
    // x: roughness, y: rim strength, z: time (global), w: unused
    params: vec4<f32>,
};

@group(0) @binding(0) var<uniform> globals: Globals;
@group(0) @binding(1) var<storage, read> transforms: array<mat4x4<f32>>;
@group(0) @binding(2) var shadow0: texture_depth_2d;
@group(0) @binding(3) var shadow1: texture_depth_2d;
@group(0) @binding(4) var shadow_sampler: sampler_comparison;
@group(0) @binding(5) var shadow2: texture_depth_2d;
@group(0) @binding(6) var shadow3: texture_depth_2d;
@group(1) @binding(0) var<uniform> material: Material; // per draw
// indexed: struct MaterialSlot { m: Material, pad: array<vec4<f32>, 13>, }; // 256 bytes (naga's GLSL drops @size)
// indexed: @group(1) @binding(0) var<storage, read> material_slots: array<MaterialSlot>;
// indexed: @group(1) @binding(3) var<storage, read> object_materials: array<u32>;
@group(1) @binding(1) var base_tex: texture_2d<f32>;
@group(1) @binding(2) var base_sampler: sampler;

struct VIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) object: u32,
};

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>, // if !FLAT
    @location(2) uv: vec2<f32>, // if !UNTEXTURED
    // indexed: @location(3) @interpolate(flat) material: u32,
};

// KW_BOX_FACES: the mesh is the +x, +y and +z faces of the unit box (x and z in -0.5..0.5,
// y in 0..1; `switchyard_city::box_faces`), mirrored on each axis where the viewer is on
// the other side of the box's centre: the (up to) three faces it can see, half the
// triangles of a whole box. An odd number of mirrors also swaps x and z, which keeps the
// triangles' winding and the set of faces.
const BOX_CENTRE = vec3<f32>(0.0, 0.5, 0.0);

fn box_mirror(m: mat4x4<f32>) -> vec4<f32> {
    let a = m[0].xyz;
    let b = m[1].xyz;
    let c = m[2].xyz;
    // The viewer in the mesh's space (the inverse of m's linear part by cofactors),
    // relative to the box's centre.
    let w = globals.viewer.xyz - globals.viewer.w * m[3].xyz;
    let bc = cross(b, c);
    let local = vec3<f32>(dot(bc, w), dot(cross(c, a), w), dot(cross(a, b), w)) / dot(a, bc);
    let rel = local - globals.viewer.w * BOX_CENTRE;
    let s = select(vec3<f32>(-1.0), vec3<f32>(1.0), rel >= vec3<f32>(0.0));
    return vec4<f32>(s, s.x * s.y * s.z);
}

// A direction mirrored by `mirror` (and swapped where it mirrors an odd number of axes).
fn box_mirrored(d: vec3<f32>, mirror: vec4<f32>) -> vec3<f32> {
    return select(d, d.zyx, mirror.w < 0.0) * mirror.xyz;
}

// A point of the box mirrored about its centre.
fn box_point(p: vec3<f32>, mirror: vec4<f32>) -> vec3<f32> {
    return BOX_CENTRE + box_mirrored(p - BOX_CENTRE, mirror);
}

@vertex
fn vs_main(v: VIn) -> VOut {
    let m = transforms[v.object];
    var position = v.position;
    var normal = v.normal;
    if (KW_BOX_FACES) {
        let mirror = box_mirror(m);
        position = box_point(position, mirror);
        normal = box_mirrored(normal, mirror);
    }
    let world = m * vec4<f32>(position, 1.0);
    var o: VOut;
    o.clip = globals.view_proj * world;
    o.world = world.xyz;
    o.normal = normalize((m * vec4<f32>(normal, 0.0)).xyz); // if !FLAT
    o.uv = v.uv; // if !UNTEXTURED
    // indexed: o.material = object_materials[v.object];
    return o;
}

@vertex
fn vs_shadow(v: VIn) -> @builtin(position) vec4<f32> {
    let m = transforms[v.object];
    var position = v.position;
    if (KW_BOX_FACES) {
        position = box_point(position, box_mirror(m));
    }
    return globals.view_proj * (m * vec4<f32>(position, 1.0));
}

fn shadow_term(world: vec3<f32>) -> f32 {
    var lit = 1.0;
    for (var i = 0; i < 4; i++) {
        let p = globals.light_view_proj[i] * vec4<f32>(world, 1.0);
        let ndc = p.xyz / p.w;
        let uv = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
        if (all(uv > vec2<f32>(0.0)) && all(uv < vec2<f32>(1.0)) && ndc.z < 1.0) {
            var s: f32;
            switch i {
                case 0: { s = textureSampleCompareLevel(shadow0, shadow_sampler, uv, ndc.z - 0.002); }
                case 1: { s = textureSampleCompareLevel(shadow1, shadow_sampler, uv, ndc.z - 0.002); }
                case 2: { s = textureSampleCompareLevel(shadow2, shadow_sampler, uv, ndc.z - 0.002); }
                default: { s = textureSampleCompareLevel(shadow3, shadow_sampler, uv, ndc.z - 0.002); }
            }
            lit = min(lit, s);
        }
    }
    return mix(1.0, lit, globals.params.z);
}

@fragment
fn fs_main(v: VOut) -> @location(0) vec4<f32> {
    var n = normalize(v.normal); // if !FLAT
    // FLAT: the face's normal, toward the camera (framebuffer y points down), and no
    // normal among the vertex outputs.
    var n = normalize(cross(dpdy(v.world), dpdx(v.world))); // if FLAT
    let l = normalize(-globals.light_dir.xyz);
    // indexed: let material = material_slots[v.material].m;
    var albedo = material.base_color * textureSample(base_tex, base_sampler, v.uv); // if !UNTEXTURED
    // UNTEXTURED: the base color alone, and no uv among the vertex outputs.
    var albedo = material.base_color; // if UNTEXTURED
    let diffuse = max(dot(n, l), 0.0) * shadow_term(v.world);
    var color = albedo.rgb * (0.25 + 0.75 * diffuse);
    if (KW_SPECULAR) {
        let view = normalize(globals.camera_pos.xyz - v.world);
        let h = normalize(l + view);
        let shininess = mix(64.0, 4.0, material.params.x);
        color += vec3<f32>(0.3) * pow(max(dot(n, h), 0.0), shininess) * diffuse;
    }
    if (KW_RIM) {
        let view = normalize(globals.camera_pos.xyz - v.world);
        color += material.params.y * pow(1.0 - max(dot(n, view), 0.0), 3.0) * albedo.rgb;
    }
    if (KW_EMISSIVE) {
        color += material.emissive.rgb * (0.75 + 0.25 * sin(material.params.z));
    }
    if (KW_FOG) {
        let d = distance(globals.camera_pos.xyz, v.world);
        let f = 1.0 - exp(-globals.params.y * d);
        color = mix(color, globals.fog_color.rgb, clamp(f, 0.0, 1.0));
    }
    return vec4<f32>(color, albedo.a);
}
