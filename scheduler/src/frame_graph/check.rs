//! The checks a [`FrameGraph`] passes before it compiles: names, sizes, formats, sample
//! counts, pass contents and their limits. Each refusal is a typed [`GraphError`] naming
//! what is wrong.

use switchyard_backend::TextureFormat;

use super::compile::{uses, GraphCaps};
use crate::error::GraphError;
use crate::frame_graph::{
    FrameGraph, GraphBuffer, LoadOp, PassContent, TargetId, TargetKind, MAX_FULLSCREEN_INPUTS, MAX_SHADOW_MAPS,
};
use crate::material::PassKind;

impl FrameGraph {
    /// Every check that does not need the order; returns each target's size.
    pub(super) fn check(&self, output: (u32, u32), caps: &GraphCaps) -> Result<Vec<(u32, u32)>, GraphError> {
        for (what, names) in [
            ("targets", self.targets.iter().map(|t| &t.name).collect::<Vec<_>>()),
            ("buffers", self.buffers.iter().collect()),
            ("passes", self.passes.iter().map(|p| &p.name).collect()),
        ] {
            let mut sorted = names.clone();
            sorted.sort();
            if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                return Err(GraphError::DuplicateName { what, name: w[0].clone() });
            }
        }
        let mut sizes = Vec::with_capacity(self.targets.len());
        for t in &self.targets {
            let invalid = |what| Err(GraphError::InvalidTarget { target: t.name.clone(), what });
            let Some(size) = t.size.at(output) else {
                return invalid("scale must be finite, above 0 and at most 16");
            };
            if size.0 == 0 || size.1 == 0 {
                return invalid("zero size");
            }
            if size.0 > caps.max_side || size.1 > caps.max_side {
                return invalid("larger than the device's largest texture (Caps::max_texture_size)");
            }
            if ![1, 2, 4, 8].contains(&t.samples) {
                return invalid("sample count must be 1, 2, 4 or 8");
            }
            if caps.sample_counts & t.samples == 0 {
                return invalid("the backend does not support this sample count (Caps::sample_counts)");
            }
            sizes.push(size);
        }
        for p in &self.passes {
            let compute = matches!(p.content, PassContent::Compute(_));
            if p.color.is_none() && p.depth.is_none() && !compute {
                return Err(GraphError::NoAttachments { pass: p.name.clone() });
            }
            // Another graph's ids are unknown here too.
            let foreign_buffer = |b: &&GraphBuffer| b.0 as usize >= self.buffers.len() || b.1 != self.tag;
            if let Some(b) = p.reads.iter().chain(&p.writes).find(foreign_buffer) {
                return Err(GraphError::UnknownBuffer { pass: p.name.clone(), buffer: b.0 });
            }
            let foreign = |t: TargetId| t.0 as usize >= self.targets.len() || t.1 != self.tag;
            if let Some(t) = uses(p).map(|(t, _)| t).chain(p.resolve).find(|&t| foreign(t)) {
                return Err(GraphError::UnknownTarget { pass: p.name.clone(), target: t.0 });
            }
            let color_clear = p.color.and_then(|c| match c.load {
                LoadOp::Clear(v) => Some(v),
                _ => None,
            });
            let depth_clear = p.depth.and_then(|d| match d.load {
                LoadOp::Clear(v) => Some(v),
                _ => None,
            });
            if color_clear.is_some_and(|v| !v.iter().all(|c| c.is_finite()))
                || depth_clear.is_some_and(|d| !(0.0..=1.0).contains(&d))
            {
                return Err(GraphError::InvalidPass {
                    pass: p.name.clone(),
                    what: "a clear value out of range (color finite, depth in 0..=1)",
                });
            }
            if p.resolve.is_some() && p.color.is_none() {
                return Err(GraphError::InvalidPass {
                    pass: p.name.clone(),
                    what: "it resolves, but has no color attachment to resolve",
                });
            }
            let mismatch = |t: TargetId, what| {
                Err(GraphError::FormatMismatch { pass: p.name.clone(), target: self.target_name(t), what })
            };
            let decl = |t: TargetId| &self.targets[t.0 as usize];
            let mut dims = Vec::with_capacity(2);
            if let Some(c) = &p.color {
                if decl(c.target).format.is_depth() {
                    return mismatch(c.target, "a depth format as the color attachment");
                }
                dims.push((sizes[c.target.0 as usize], decl(c.target).samples));
                if let Some(r) = c.resolve {
                    if decl(r).format != decl(c.target).format {
                        return mismatch(r, "resolve target format differs from the attachment's");
                    }
                    if decl(c.target).samples == 1 || decl(r).samples != 1 {
                        return mismatch(r, "resolves a multisampled attachment into a single-sample target");
                    }
                    if sizes[r.0 as usize] != sizes[c.target.0 as usize] {
                        return Err(GraphError::SizeMismatch { pass: p.name.clone() });
                    }
                }
            }
            if let Some(d) = &p.depth {
                if !decl(d.target).format.is_depth() {
                    return mismatch(d.target, "a color format as the depth attachment");
                }
                dims.push((sizes[d.target.0 as usize], decl(d.target).samples));
            }
            if dims.windows(2).any(|w| w[0] != w[1]) {
                return Err(GraphError::SizeMismatch { pass: p.name.clone() });
            }
            for &s in p.samples.iter().chain(p.receivers.as_ref().map(|(t, _)| t)) {
                if uses(p).any(|(t, u)| t == s && u.writes()) {
                    return Err(GraphError::SampledAndWritten { pass: p.name.clone(), target: self.target_name(s) });
                }
                if decl(s).samples > 1 {
                    return Err(GraphError::SampledMultisampled { pass: p.name.clone(), target: self.target_name(s) });
                }
                // An external target's content may come from the engine (its G-buffer, a video).
                let external = decl(s).kind == TargetKind::External;
                if !external && !self.passes.iter().any(|q| uses(q).any(|(t, u)| t == s && u.writes())) {
                    return Err(GraphError::MissingInput { pass: p.name.clone(), target: self.target_name(s) });
                }
            }
        }
        Ok(sizes)
    }

    /// What each pass's content needs of its attachments and inputs.
    pub(super) fn check_contents(&self, f: GraphCaps) -> Result<Option<(TextureFormat, u32)>, GraphError> {
        let mut forward_format = None;
        if self.scene_buffers().len() > super::MAX_SCENE_BUFFERS {
            let pass =
                self.passes.iter().find(|p| matches!(p.content, PassContent::Scene { .. }) && !p.reads.is_empty());
            return Err(GraphError::InvalidPass {
                pass: pass.map_or_else(String::new, |p| p.name.clone()),
                what: "the scene passes of a graph bind at most MAX_SCENE_BUFFERS (4) buffers",
            });
        }
        for p in &self.passes {
            let invalid = |what| Err(GraphError::InvalidPass { pass: p.name.clone(), what });
            let decl = |t: TargetId| &self.targets[t.0 as usize];
            let single =
                p.color.iter().map(|a| a.target).chain(p.depth.iter().map(|a| a.target)).all(|t| decl(t).samples == 1);
            let external_input = p
                .samples
                .iter()
                .chain(p.receivers.as_ref().map(|(t, _)| t))
                .any(|&t| decl(t).kind == TargetKind::External);
            let retained_depth = p.depth.is_some_and(|d| decl(d.target).kind == TargetKind::Retained);
            let shadow = matches!(p.content, PassContent::Scene { kind: PassKind::Shadow, .. });
            if p.cached && !(shadow && retained_depth && p.reads.is_empty()) {
                return invalid(
                    "a cached pass is a shadow scene pass into a retained depth target, reading no buffers",
                );
            }
            if let Some((t, camera)) = p.receivers {
                if !matches!(p.content, PassContent::Scene { kind: PassKind::Shadow, .. }) {
                    return invalid("only a shadow scene pass has receivers");
                }
                if !decl(t).format.is_depth() {
                    return invalid("a shadow pass's receivers are a depth target");
                }
                if camera.0 as usize >= self.cameras.len() {
                    return Err(GraphError::UnknownCamera { pass: p.name.clone(), camera: camera.0 });
                }
            }
            let buffers = !p.reads.is_empty() || !p.writes.is_empty();
            let fullscreen = matches!(p.content, PassContent::Fullscreen(_));
            let scene = matches!(p.content, PassContent::Scene { .. });
            if fullscreen && !p.writes.is_empty() {
                return invalid("a fullscreen pass reads buffers, it does not write them");
            }
            if scene && !p.writes.is_empty() {
                return invalid("a scene pass reads buffers, it does not write them");
            }
            let has_binding = |b: &GraphBuffer| self.buffer_bindings.get(b.0 as usize).is_some_and(Option::is_some);
            if scene && !p.reads.iter().all(has_binding) {
                return invalid(
                    "a scene pass reads only buffers declared with a binding (uniform_buffer, storage_buffer)",
                );
            }
            if buffers
                && !fullscreen
                && !scene
                && !matches!(p.content, PassContent::Callback(_) | PassContent::Compute(_) | PassContent::Wgpu(_))
            {
                return invalid("only callback, compute, wgpu, fullscreen and scene passes read or write buffers");
            }
            let bound = p.reads.iter().filter(|b| has_binding(b)).count();
            if fullscreen && bound > super::MAX_FULLSCREEN_BUFFERS {
                return invalid("a fullscreen pass binds at most MAX_FULLSCREEN_BUFFERS (4) buffers");
            }
            match &p.content {
                PassContent::Scene { camera, kind, .. } => {
                    if camera.0 as usize >= self.cameras.len() {
                        return Err(GraphError::UnknownCamera { pass: p.name.clone(), camera: camera.0 });
                    }
                    if !single && *kind == PassKind::Shadow {
                        return invalid("shadow passes draw into single-sampled depth (shadow maps are sampled)");
                    }
                    if !p.depth.is_some_and(|d| decl(d.target).format == f.depth) {
                        return invalid("a scene pass needs a Depth32Float depth attachment");
                    }
                    match kind {
                        PassKind::Shadow if p.color.is_some() => {
                            return invalid("a shadow pass renders depth only: no color attachment")
                        }
                        PassKind::Shadow if !p.samples.is_empty() => return invalid("a shadow pass samples nothing"),
                        PassKind::Shadow => {}
                        PassKind::Depth if p.color.is_some() || !p.samples.is_empty() || !single => {
                            return invalid(
                                "a depth pass renders single-sampled depth only: no color attachment, no samples",
                            )
                        }
                        PassKind::Depth => {}
                        PassKind::Forward => {
                            let Some(c) = p.color.filter(|c| f.colors.contains(&decl(c.target).format)) else {
                                return invalid(
                                    "a forward pass needs a color attachment of RGBA8 sRGB or RGBA16 float",
                                );
                            };
                            let format = (decl(c.target).format, decl(c.target).samples);
                            if forward_format.replace(format).is_some_and(|other| other != format) {
                                return invalid(
                                    "every forward pass of a graph draws into one color format and sample count",
                                );
                            }
                            if p.samples.len() > MAX_SHADOW_MAPS
                                || p.samples.iter().any(|&t| !decl(t).format.is_depth())
                            {
                                return invalid(
                                    "a forward pass samples at most MAX_SHADOW_MAPS depth targets (its shadow maps)",
                                );
                            }
                        }
                    }
                    if external_input {
                        return invalid("scene passes sample graph-owned targets only");
                    }
                }
                PassContent::Fullscreen(s) => {
                    if p.color.is_none() || p.depth.is_some() || !single {
                        return invalid("a fullscreen pass has one single-sampled color attachment and no depth");
                    }
                    if p.samples.len() > MAX_FULLSCREEN_INPUTS {
                        return invalid("a fullscreen pass samples at most MAX_FULLSCREEN_INPUTS targets");
                    }
                    if s.entry.is_empty() || s.params.iter().any(|v| !v.is_finite()) {
                        return invalid("a fullscreen shader needs an entry point and finite params");
                    }
                }
                PassContent::Callback(_) => {}
                PassContent::Wgpu(_) => {
                    if !p.samples.is_empty() {
                        return invalid("a wgpu pass samples no targets (its drawing binds wgpu resources of its own)");
                    }
                }
                PassContent::Compute(_) => {
                    if p.color.is_some() || p.depth.is_some() {
                        return invalid("a compute pass has no attachments");
                    }
                }
            }
        }
        Ok(forward_format)
    }
}
