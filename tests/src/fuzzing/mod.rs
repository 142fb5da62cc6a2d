//! What the fuzz targets (`fuzz/fuzz_targets/`) run, and what `tests/tests/corpus.rs`
//! replays from `fuzz/corpus/<target>/`: each turns arbitrary bytes into operations on a
//! renderer over the null backend (or on the backend, or the demo's glTF loader). Any
//! input must give results or typed errors: a panic, a hang or a broken invariant here is
//! a finding.
//!
//! The harnesses that touch a backend run over any backend ([`command_stream_on`],
//! [`scene_ops_on`], [`shader_material_on`], [`gltf_on`]) and write what each operation
//! gave into a [`Log`]: the differential test (`tests/tests/corpus.rs`) runs the same
//! input on the null backend and on wgpu (llvmpipe, lavapipe) and requires equal logs —
//! every backend accepts and refuses alike, with the same error kind.

use std::collections::HashMap;
use std::sync::Arc;

use arbitrary::{Result, Unstructured};
use glam::Mat4;
use switchyard::backend::null::NullBackend;
use switchyard::backend::*;
use switchyard::*;
use switchyard::{LoadOp, ShaderDesc, StoreOp};

/// A harness: one input in, results or typed errors out.
pub type Harness = fn(&[u8]);

/// The fuzz targets, by name (the directory of each corpus).
pub const TARGETS: [(&str, Harness); 7] = [
    ("shader_material", shader_material),
    ("property_sheet", property_sheet),
    ("scene_ops", scene_ops),
    ("command_stream", command_stream),
    ("gltf", gltf),
    ("resource_descs", resource_descs),
    ("frame_graph", frame_graph),
];

/// What each operation of a harness gave, in order: `ok`, or the error's kind (its
/// variant names, without the values they carry).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log(pub Vec<String>);

impl Log {
    /// Notes `what` gave `r`; passes `r` on.
    pub fn note<T, E: std::fmt::Debug>(
        &mut self,
        what: &str,
        r: std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let outcome = match &r {
            Ok(_) => "ok".to_owned(),
            Err(e) => kind(e),
        };
        self.0.push(format!("{what}: {outcome}"));
        r
    }
}

/// An error's kind: the variant names of its `Debug` form (`Pass(InvalidClear)` of
/// `Pass(InvalidClear { role: Color })`), without the values or messages they carry.
pub fn kind(e: &impl std::fmt::Debug) -> String {
    let text = format!("{e:?}");
    if std::env::var_os("FULL_KIND").is_some() {
        return text;
    }
    let mut out = String::new();
    for c in text.chars() {
        match c {
            c if c.is_alphanumeric() || c == '_' => out.push(c),
            '(' => out.push('('),
            _ => break,
        }
    }
    out.trim_end_matches('(').to_owned()
}

fn config() -> RendererConfig {
    RendererConfig { threads: 1, width: 32, height: 32, max_objects: 256, max_materials: 32, ..Default::default() }
}

fn renderer() -> Renderer<NullBackend> {
    Renderer::new(Arc::new(NullBackend::new(true)), config()).expect("a valid configuration")
}

fn view() -> View {
    let eye = glam::Vec3::new(0.0, 20.0, 40.0);
    View {
        label: "main",
        view_proj: Mat4::perspective_rh(1.0, 1.0, 0.5, 200.0) * Mat4::look_at_rh(eye, glam::Vec3::ZERO, glam::Vec3::Y),
        eye,
        far: 200.0,
        layer_mask: u16::MAX,
        pass: PassKind::Forward,
    }
}

/// Renders a frame (any error is typed; it must not panic) and flushes.
fn frame<B: Backend>(r: &mut Renderer<B>, log: &mut Log) {
    let sun = View { label: "sun", pass: PassKind::Shadow, ..view() };
    let _ = log.note("render", r.render(&[sun, view()]));
    let _ = log.note("flush", r.flush());
}

fn name(u: &mut Unstructured<'_>, known: &[&str]) -> Result<String> {
    Ok(if u.ratio(3, 4)? { (*u.choose(known)?).to_owned() } else { u.arbitrary()? })
}

fn float(u: &mut Unstructured<'_>) -> Result<f32> {
    Ok(match u.int_in_range(0..=5)? {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => 3e38,
        _ => u.int_in_range(-1000..=1000)? as f32 * 0.1,
    })
}

fn value(u: &mut Unstructured<'_>) -> Result<PropertyValue> {
    fn four(u: &mut Unstructured<'_>) -> Result<[f32; 4]> {
        Ok([float(u)?, float(u)?, float(u)?, float(u)?])
    }
    Ok(match u.int_in_range(0..=3)? {
        0 => PropertyValue::Float(float(u)?),
        1 => PropertyValue::Vec4(four(u)?),
        2 => PropertyValue::Color(four(u)?),
        _ => {
            let mut m = [0.0; 16];
            for x in &mut m {
                *x = float(u)?;
            }
            PropertyValue::Mat4(m)
        }
    })
}

fn property_type(u: &mut Unstructured<'_>) -> Result<PropertyType> {
    Ok(*u.choose(&[PropertyType::Float, PropertyType::Vec4, PropertyType::Color, PropertyType::Mat4])?)
}

const PROPERTIES: [&str; 5] = ["_BaseColor", "_Emission", "_Roughness", "_RimStrength", "_Time"];
const KEYWORDS: [&str; 4] = ["SPECULAR", "RIM", "EMISSIVE", "FOG"];
const ENTRIES: [&str; 4] = ["vs_main", "fs_main", "vs_shadow", "main"];

/// The lit shader's WGSL with a few bytes deleted, inserted or replaced.
fn mutated_wgsl(u: &mut Unstructured<'_>) -> Result<String> {
    let mut src = ShaderDesc::lit().wgsl.into_bytes();
    for _ in 0..u.int_in_range(1..=8)? {
        let at = u.int_in_range(0..=src.len().saturating_sub(1))?;
        match u.int_in_range(0..=2)? {
            0 => {
                let n = u.int_in_range(1..=16)?.min(src.len() - at);
                src.drain(at..at + n);
            }
            1 => src.insert(at, u.arbitrary()?),
            _ => src[at] = u.arbitrary()?,
        }
        if src.is_empty() {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&src).into_owned())
}

const FORMATS: [TextureFormat; 5] = [
    TextureFormat::Rgba8Unorm,
    TextureFormat::Rgba8UnormSrgb,
    TextureFormat::Depth32Float,
    TextureFormat::Rgba16Float,
    TextureFormat::Bgra8UnormSrgb,
];

/// Texture formats: those above and the compressed ones (sampled only).
const TEXTURE_FORMATS: [TextureFormat; 9] = [
    TextureFormat::Rgba8Unorm,
    TextureFormat::Rgba8UnormSrgb,
    TextureFormat::Depth32Float,
    TextureFormat::Rgba16Float,
    TextureFormat::Bgra8UnormSrgb,
    TextureFormat::Bc1RgbaUnorm,
    TextureFormat::Bc1RgbaUnormSrgb,
    TextureFormat::Bc7RgbaUnorm,
    TextureFormat::Bc7RgbaUnormSrgb,
];

mod commands;
mod graphs;
mod materials;
mod resources;
mod scene;

pub use commands::{command_stream, command_stream_on};
pub use graphs::{frame_graph, frame_graph_on};
pub use materials::{property_sheet, shader_material, shader_material_on};
pub use resources::{resource_descs, resource_descs_on};
pub use scene::{scene_ops, scene_ops_on};

/// Destroys what it holds when dropped.
struct Destroy<'a, B: Backend>(&'a B, Vec<Resource>);

impl<B: Backend> Drop for Destroy<'_, B> {
    fn drop(&mut self) {
        for r in self.1.drain(..).rev() {
            let _ = self.0.destroy(r);
        }
    }
}

/// glTF bytes through the demo's loader (`switchyard_demo::gltf_scene`), then a frame.
pub fn gltf(data: &[u8]) {
    gltf_on(&mut renderer(), data, &mut Log::default());
}

/// [`gltf`] on `r` (a fresh renderer), noting what loading and the frame gave in `log`.
pub fn gltf_on<B: Backend>(r: &mut Renderer<B>, data: &[u8], log: &mut Log) {
    // The lit shader in the form the byte after the file picks (the loader's materials use it).
    let desc = match data.last() {
        Some(b) if b & 1 == 1 => ShaderDesc::lit_indexed(),
        _ => ShaderDesc::lit(),
    };
    let shader = r.create_shader(&desc).expect("the lit shader");
    if log.note("load", switchyard_demo::gltf_scene::build_from_slice(r, data, 64, shader)).is_ok() {
        frame(r, log);
    }
}

/// A renderer on `backend` with the harnesses' configuration.
pub fn harness_renderer<B: Backend>(backend: Arc<B>) -> Renderer<B> {
    Renderer::new(backend, config()).expect("a valid configuration")
}
