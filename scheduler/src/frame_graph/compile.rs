//! Compiling a [`FrameGraph`]: checks, order, culling, lifetimes, aliasing, transience,
//! bandwidth and warnings.

use switchyard_backend::TextureFormat;

use crate::error::GraphError;
use crate::frame_graph::{
    BufferBinding, FrameGraph, GraphBuffer, LoadOp, Pass, PassContent, Queue, StoreOp, TargetId, TargetKind,
};
use crate::material::PassKind;

/// Something a compiled graph does that is legal but likely not meant.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)] // each variant's message says what it means
pub enum GraphWarning {
    /// The pass's results reach no output: it is skipped.
    Skipped { pass: String },
    /// The pass stores `target`, and no later pass reads it this frame.
    UnreadStore { pass: String, target: String },
    /// The pass loads `target`, which no earlier pass wrote this frame (a clear would do).
    LoadWithoutWrite { pass: String, target: String },
}

impl std::fmt::Display for GraphWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Skipped { pass } => write!(f, "pass `{pass}` is skipped: nothing reads its results"),
            Self::UnreadStore { pass, target } => {
                write!(f, "pass `{pass}` stores `{target}`, which nothing reads this frame (discard it)")
            }
            Self::LoadWithoutWrite { pass, target } => {
                write!(f, "pass `{pass}` loads `{target}`, which nothing wrote this frame (clear it)")
            }
        }
    }
}

/// The bytes one pass moves through its attachments' memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassBytes {
    /// Read at the start of the pass (attachments with a `Load` load op).
    pub loaded: u64,
    /// Written at the end of the pass (attachments with a `Store` store op).
    pub stored: u64,
    /// Written by resolving multisampled attachments.
    pub resolved: u64,
}

/// A texture the compiled graph needs: one or more owned targets alias it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PhysicalTarget {
    pub(crate) format: TextureFormat,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) samples: u32,
    /// Some pass samples it.
    pub(crate) sampled: bool,
    /// Only rendered to, never loaded or stored: needs no memory where the adapter allows.
    pub(crate) transient: bool,
}

/// The result of [`GraphDesc::compile`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CompiledGraph {
    /// Passes that run, in submission order (indices into the description's passes).
    pub(crate) order: Vec<usize>,
    /// Each target's size in texels.
    pub(crate) sizes: Vec<(u32, u32)>,
    /// Each target's use in `order`: (first, last) position; `None` if no running pass uses it.
    pub(crate) lifetimes: Vec<Option<(usize, usize)>>,
    /// Each transient target's texture in `physical` (retained and external ones have none).
    pub(crate) aliases: Vec<Option<usize>>,
    pub(crate) physical: Vec<PhysicalTarget>,
    /// Per pass of `order`.
    pub(crate) bytes: Vec<PassBytes>,
    pub(crate) warnings: Vec<GraphWarning>,
    /// The color format and sample count of the forward passes (`None`: the graph has
    /// none).
    pub(crate) forward_format: Option<(TextureFormat, u32)>,
    /// Per pass of `order`: split in two for occlusion culling ([`GraphCaps::occlusion`],
    /// [`FrameGraph::occludable`]).
    pub(crate) split: Vec<bool>,
}

/// What a graph compiles against: the formats the scene's pipelines draw into (a scene
/// pass's depth attachment must have `depth`; a forward pass's color attachment one of
/// `colors`, the same for every forward pass of a graph: the materials' forward pipelines
/// are built for it), and the device's limits on targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GraphCaps {
    pub(crate) colors: &'static [TextureFormat],
    pub(crate) depth: TextureFormat,
    /// The largest texture side.
    pub(crate) max_side: u32,
    /// Supported sample counts, a bit per count (`Caps::sample_counts`).
    pub(crate) sample_counts: u32,
    /// The renderer culls by occlusion: each occludable pass is split in two around a
    /// depth pyramid built from its depth target (which then must be sampled and kept),
    /// and its attachments are stored and loaded once more.
    pub(crate) occlusion: bool,
}

/// The color formats forward scene passes draw into: low or high dynamic range.
pub const FORWARD_FORMATS: [TextureFormat; 2] = [TextureFormat::Rgba8UnormSrgb, TextureFormat::Rgba16Float];

/// Most targets a fullscreen pass samples.
pub const MAX_FULLSCREEN_INPUTS: usize = 8;
/// Most shadow maps (depth targets) a forward scene pass samples.
pub const MAX_SHADOW_MAPS: usize = 4;
/// Most views per frame: scene passes of a frame graph that run, or views given to
/// `render` (shadow cascades of several lights are views too). Bounds the fixed-size
/// per-view arrays of [`crate::FrameStats`] and the globals buffer (512 bytes a view).
pub const MAX_VIEWS: usize = 64;
/// Most passes of any kind that run per frame (the per-pass array of
/// [`crate::FrameStats`]).
pub const MAX_PASSES: usize = 64;

/// How a pass touches one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Use {
    /// An attachment: whether it loads the earlier content, whether it stores.
    Attach { load: bool, store: bool, clear_or_dontcare: bool },
    /// The target a multisampled attachment resolves into.
    Resolve,
    /// Sampled in a shader.
    Sample,
}

impl Use {
    pub(super) fn writes(self) -> bool {
        !matches!(self, Use::Sample)
    }
    pub(super) fn reads(self) -> bool {
        matches!(self, Use::Sample | Use::Attach { load: true, .. })
    }
}

pub(super) fn uses(p: &Pass) -> impl Iterator<Item = (TargetId, Use)> + '_ {
    let attach = |load: bool, store, cleared| Use::Attach { load, store, clear_or_dontcare: cleared };
    let color = p.color.iter().flat_map(move |a| {
        let load = matches!(a.load, LoadOp::Load);
        let u = attach(load, a.store == StoreOp::Store, !load);
        std::iter::once((a.target, u)).chain(a.resolve.map(|r| (r, Use::Resolve)))
    });
    let depth = p.depth.iter().map(move |a| {
        let load = matches!(a.load, LoadOp::Load);
        (a.target, attach(load, a.store == StoreOp::Store, !load))
    });
    let receivers = p.receivers.map(|(t, _)| (t, Use::Sample));
    color.chain(depth).chain(p.samples.iter().map(|&t| (t, Use::Sample))).chain(receivers)
}

impl FrameGraph {
    /// Checks the description and compiles it for an output of `output` texels; scene
    /// passes draw with pipelines for `formats` (color, depth).
    pub(crate) fn compile(&self, output: (u32, u32), caps: GraphCaps) -> Result<CompiledGraph, GraphError> {
        if self.passes.is_empty() {
            return Err(GraphError::Empty);
        }
        let sizes = self.check(output, &caps)?;
        let forward_format = self.check_contents(caps)?;
        let order = self.order()?;
        let (order, skipped) = self.cull(order);
        let n = self.targets.len();
        let mut lifetimes: Vec<Option<(usize, usize)>> = vec![None; n];
        for (at, &p) in order.iter().enumerate() {
            for (t, _) in uses(&self.passes[p]) {
                let l = &mut lifetimes[t.0 as usize];
                *l = Some(l.map_or((at, at), |(first, _)| (first, at)));
            }
        }
        let split: Vec<bool> = order.iter().map(|&p| caps.occlusion && self.occludable(&self.passes[p])).collect();
        let (aliases, physical) = self.alias(&order, &sizes, &lifetimes, &split);
        let bytes = order.iter().zip(&split).map(|(&p, &s)| self.pass_bytes(&self.passes[p], &sizes, s)).collect();
        let mut warnings: Vec<GraphWarning> =
            skipped.iter().map(|&p| GraphWarning::Skipped { pass: self.passes[p].name.clone() }).collect();
        self.warn(&order, &mut warnings);
        Ok(CompiledGraph { order, sizes, lifetimes, aliases, physical, bytes, warnings, forward_format, split })
    }

    /// The buffers declared with a binding that some scene pass reads (graph buffer,
    /// binding), in declaration order: group 2 of every scene pass.
    pub(crate) fn scene_buffers(&self) -> Vec<(usize, BufferBinding)> {
        let read = |b: usize| {
            self.passes
                .iter()
                .any(|p| matches!(p.content, PassContent::Scene { .. }) && p.reads.iter().any(|r| r.0 as usize == b))
        };
        (0..self.buffers.len()).filter_map(|b| Some((b, self.buffer_bindings[b]?))).filter(|&(b, _)| read(b)).collect()
    }

    /// Whether the passes of `order` render into target `t` (as an attachment or a resolve
    /// target) and whether they sample it.
    pub(crate) fn rendered_and_sampled(&self, order: &[usize], t: TargetId) -> (bool, bool) {
        let mut found = (false, false);
        for (_, u) in order.iter().flat_map(|&p| uses(&self.passes[p])).filter(|(x, _)| *x == t) {
            if u.writes() {
                found.0 = true;
            } else {
                found.1 = true;
            }
        }
        found
    }

    pub(super) fn target_name(&self, t: TargetId) -> String {
        self.targets[t.0 as usize].name.clone()
    }

    /// Passes in an order that respects every dependency: writers of a target keep their
    /// declared order, a pass sampling a target follows all its writers, a depth prepass
    /// precedes the forward passes of its camera and queue declared after it. Among ready
    /// passes, those that do not write an output go first (offscreen work is submitted
    /// before the output), then declaration order.
    fn order(&self) -> Result<Vec<usize>, GraphError> {
        let n = self.passes.len();
        let mut deps: Vec<Vec<usize>> = vec![Vec::new(); n];
        for t in 0..self.targets.len() {
            let t = self.target_id(t);
            let writers: Vec<usize> =
                (0..n).filter(|&p| uses(&self.passes[p]).any(|(x, u)| x == t && u.writes())).collect();
            for w in writers.windows(2) {
                deps[w[1]].push(w[0]);
            }
            let reads = |p: &Pass| p.samples.contains(&t) || p.receivers.is_some_and(|(r, _)| r == t);
            for p in (0..n).filter(|&p| reads(&self.passes[p])) {
                deps[p].extend(&writers);
            }
        }
        // A depth prepass runs before the forward passes of its camera and queue declared
        // after it (so they can draw its visible set: `RendererConfig::reuse_prepass_cull`),
        // where nothing else orders them. Depth passes sample nothing, and targets and
        // buffers keep their declared order between writers, so this adds no cycle.
        let prepass_of = |p: &Pass| match p.content {
            PassContent::Scene { camera, kind: PassKind::Depth, queue } => Some((camera, queue)),
            _ => None,
        };
        for (d, depth) in self.passes.iter().enumerate() {
            let Some((camera, queue)) = prepass_of(depth) else { continue };
            for (f, forward) in self.passes.iter().enumerate().skip(d + 1) {
                if let PassContent::Scene { camera: c, kind: PassKind::Forward, queue: q } = forward.content {
                    if (c, q) == (camera, queue) {
                        deps[f].push(d);
                    }
                }
            }
        }
        // Buffers: passes touching one keep their declared order where one of the two writes.
        for b in 0..self.buffers.len() {
            let b = GraphBuffer(b as u32, self.tag);
            let mut earlier: Vec<(usize, bool)> = Vec::new();
            for (p, pass) in self.passes.iter().enumerate() {
                let (reads, writes) = (pass.reads.contains(&b), pass.writes.contains(&b));
                if !(reads || writes) {
                    continue;
                }
                deps[p].extend(earlier.iter().filter(|&&(_, w)| w || writes).map(|&(q, _)| q));
                earlier.push((p, writes));
            }
        }
        let writes_output = |p: usize| {
            uses(&self.passes[p]).any(|(t, u)| u.writes() && self.targets[t.0 as usize].kind != TargetKind::Transient)
        };
        let mut pending: Vec<usize> = deps.iter().map(|d| d.len()).collect();
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (p, d) in deps.iter().enumerate() {
            d.iter().for_each(|&q| dependents[q].push(p));
        }
        // Passes still to come that use each transient target: a pass that is the last
        // of them ends the target's lifetime, so its memory can go to the next target.
        let touched: Vec<Vec<usize>> = self
            .passes
            .iter()
            .map(|p| {
                let mut ts: Vec<usize> = uses(p).map(|(t, _)| t.0 as usize).collect();
                ts.sort_unstable();
                ts.dedup();
                ts
            })
            .collect();
        let mut users = vec![0usize; self.targets.len()];
        touched.iter().flatten().for_each(|&t| users[t] += 1);
        let transient = |t: usize| self.targets[t].kind == TargetKind::Transient;
        let ends_a_lifetime = |p: usize, users: &[usize]| touched[p].iter().any(|&t| transient(t) && users[t] == 1);
        let mut done = vec![false; n];
        let mut order = Vec::with_capacity(n);
        while order.len() < n {
            // Offscreen work first; among it, a pass that ends a transient target's
            // lifetime (so lights' shadow maps alias instead of living all at once); then
            // declaration order.
            let next = (0..n)
                .filter(|&p| !done[p] && pending[p] == 0)
                .min_by_key(|&p| (writes_output(p), !ends_a_lifetime(p, &users), p));
            let Some(p) = next else {
                let on_cycle = (0..n).find(|&p| !done[p]).expect("some pass is left");
                return Err(GraphError::Cycle { pass: self.passes[on_cycle].name.clone() });
            };
            done[p] = true;
            order.push(p);
            touched[p].iter().for_each(|&t| users[t] -= 1);
            dependents[p].iter().for_each(|&d| pending[d] -= 1);
        }
        Ok(order)
    }

    /// Keeps the passes whose results reach an output; returns (kept, skipped).
    fn cull(&self, order: Vec<usize>) -> (Vec<usize>, Vec<usize>) {
        // Walking back from the end of the frame: whether each target's content at this
        // point is read later (by a pass that runs) or survives the frame (retained and
        // external targets).
        let mut needed: Vec<bool> = self.targets.iter().map(|t| t.kind != TargetKind::Transient).collect();
        let mut live = vec![false; self.passes.len()];
        for &p in order.iter().rev() {
            let pass = &self.passes[p];
            // A pass runs when it writes a buffer (the engine's: a result) or stores
            // content that is needed; content a later pass overwrites before anything
            // reads it is not (a clear, a don't-care load, a resolve replaces all of it).
            let produces = |u: Use| matches!(u, Use::Attach { store: true, .. } | Use::Resolve);
            let feeds = !pass.writes.is_empty() || uses(pass).any(|(t, u)| produces(u) && needed[t.0 as usize]);
            if !feeds {
                continue;
            }
            live[p] = true;
            for (t, u) in uses(pass) {
                if matches!(u, Use::Attach { load: false, .. } | Use::Resolve) {
                    needed[t.0 as usize] = false;
                }
            }
            for (t, u) in uses(pass) {
                if u.reads() {
                    needed[t.0 as usize] = true;
                }
            }
        }
        order.into_iter().partition(|&p| live[p])
    }

    /// Assigns each owned target a texture; targets with equal descriptions and disjoint
    /// lifetimes share one.
    fn alias(
        &self,
        order: &[usize],
        sizes: &[(u32, u32)],
        lifetimes: &[Option<(usize, usize)>],
        split: &[bool],
    ) -> (Vec<Option<usize>>, Vec<PhysicalTarget>) {
        let n = self.targets.len();
        let mut sampled = vec![false; n];
        let mut memory = vec![false; n];
        // A split pass's depth is read by the pyramid and kept between the halves.
        for (&p, _) in order.iter().zip(split).filter(|(_, &s)| s) {
            if let Some(d) = &self.passes[p].depth {
                (sampled[d.target.0 as usize], memory[d.target.0 as usize]) = (true, true);
            }
        }
        for &p in order {
            for (t, u) in uses(&self.passes[p]) {
                let t = t.0 as usize;
                match u {
                    Use::Sample => sampled[t] = true,
                    Use::Attach { load, store, .. } => memory[t] |= load || store,
                    Use::Resolve => memory[t] = true,
                }
            }
        }
        let mut by_first: Vec<usize> =
            (0..n).filter(|&t| self.targets[t].kind == TargetKind::Transient && lifetimes[t].is_some()).collect();
        by_first.sort_by_key(|&t| lifetimes[t].map(|l| l.0));
        let mut aliases = vec![None; n];
        let mut physical: Vec<PhysicalTarget> = Vec::new();
        let mut free_after: Vec<usize> = Vec::new();
        for t in by_first {
            let d = &self.targets[t];
            let want = PhysicalTarget {
                format: d.format,
                width: sizes[t].0,
                height: sizes[t].1,
                samples: d.samples,
                sampled: sampled[t],
                transient: !sampled[t] && !memory[t],
            };
            let (first, last) = lifetimes[t].expect("filtered");
            let slot = (0..physical.len()).find(|&s| !self.no_aliasing && physical[s] == want && free_after[s] < first);
            let s = slot.unwrap_or_else(|| {
                physical.push(want);
                free_after.push(0);
                physical.len() - 1
            });
            free_after[s] = last;
            aliases[t] = Some(s);
        }
        (aliases, physical)
    }

    /// Whether occlusion culling may split pass `p`: a forward pass of the opaque queue
    /// with a single-sampled depth target of the graph's own (an engine's texture may not
    /// be sampled) and no multisampled color.
    pub(crate) fn occludable(&self, p: &Pass) -> bool {
        let single = |t: TargetId| self.targets[t.0 as usize].samples == 1;
        let own = |t: TargetId| self.targets[t.0 as usize].kind != TargetKind::External;
        matches!(p.content, PassContent::Scene { kind: PassKind::Forward | PassKind::Depth, queue: Queue::Opaque, .. })
            && p.depth.is_some_and(|d| single(d.target) && own(d.target))
            && p.color.is_none_or(|c| single(c.target))
    }

    /// The bytes `p` moves; a `split` pass stores its attachments after its first half
    /// and loads them before its second.
    fn pass_bytes(&self, p: &Pass, sizes: &[(u32, u32)], split: bool) -> PassBytes {
        let bytes = |t: TargetId, samples: bool| {
            let (w, h) = sizes[t.0 as usize];
            let d = &self.targets[t.0 as usize];
            u64::from(w)
                * u64::from(h)
                * u64::from(d.format.bytes_per_texel())
                * if samples { u64::from(d.samples) } else { 1 }
        };
        let mut out = PassBytes::default();
        let mut attach = |t: TargetId, load: bool, store: bool| {
            let n = |on: bool| if on { bytes(t, true) } else { 0 };
            out.loaded += n(load) + n(split);
            out.stored += n(store) + n(split);
        };
        if let Some(c) = &p.color {
            attach(c.target, matches!(c.load, LoadOp::Load), c.store == StoreOp::Store);
        }
        if let Some(d) = &p.depth {
            attach(d.target, matches!(d.load, LoadOp::Load), d.store == StoreOp::Store);
        }
        if let Some(r) = p.color.and_then(|c| c.resolve) {
            out.resolved += bytes(r, false);
        }
        out
    }

    /// Stores nothing reads before the target is overwritten or the frame ends, and loads
    /// of targets nothing wrote earlier in the frame (transient targets only: a retained or
    /// external target's content comes from outside or goes out).
    fn warn(&self, order: &[usize], out: &mut Vec<GraphWarning>) {
        for t in 0..self.targets.len() {
            if self.targets[t].kind != TargetKind::Transient {
                continue;
            }
            let t = self.target_id(t);
            let mut written = false;
            // The pass whose store is not read yet.
            let mut unread: Option<usize> = None;
            for &p in order {
                for (_, u) in uses(&self.passes[p]).filter(|(x, _)| *x == t) {
                    if u.reads() {
                        if !written {
                            let pass = self.passes[p].name.clone();
                            out.push(GraphWarning::LoadWithoutWrite { pass, target: self.target_name(t) });
                        }
                        unread = None;
                    }
                    if let Use::Attach { clear_or_dontcare: true, .. } = u {
                        if let Some(q) = unread.take() {
                            let pass = self.passes[q].name.clone();
                            out.push(GraphWarning::UnreadStore { pass, target: self.target_name(t) });
                        }
                    }
                    match u {
                        Use::Attach { store: true, .. } | Use::Resolve => {
                            written = true;
                            unread = Some(p);
                        }
                        // Discarded: a later load would see undefined content.
                        Use::Attach { store: false, .. } => written = false,
                        Use::Sample => {}
                    }
                }
            }
            if let Some(q) = unread {
                out.push(GraphWarning::UnreadStore { pass: self.passes[q].name.clone(), target: self.target_name(t) });
            }
        }
    }
}
