//! The frame as a graph of passes over targets: what each pass loads, stores, resolves and
//! samples, compiled into a submission order, lifetimes, aliasing, and the bytes each pass
//! moves through memory.
//!
//! A description ([`GraphDesc`]) names targets — owned by the graph (format, size, sample
//! count) or handed in from outside (the output) — and passes with their attachments and
//! the targets they sample. [`GraphDesc::compile`] checks it and derives:
//! - **order**: a pass that samples a target runs after every pass that writes it; passes
//!   writing one target keep their declared order (a `Load` continues the previous
//!   writer's content); a cycle is an error naming a pass on it. Ties keep declaration
//!   order, so the order is deterministic;
//! - **culling**: passes whose results reach no output are skipped (and reported);
//! - **lifetimes and aliasing**: each owned target lives from its first to its last use;
//!   owned targets of equal format, size, samples and usage whose lifetimes do not overlap
//!   share one physical texture;
//! - **transience**: an owned target that is only rendered to, cleared (or don't-care) on
//!   load and discarded on store, never needs memory behind it (memoryless where the
//!   adapter saves memory that way);
//! - **bandwidth**: per pass, the bytes each attachment loads, stores and resolves;
//! - **warnings**: a store nothing reads, a load of a target nothing wrote this frame.

// The renderer's fixed frame uses no don't-care load, discard or resolve yet; the tests do,
// and so will frames that engines declare.
#![cfg_attr(not(test), allow(dead_code))]

mod compile;

pub(crate) use compile::CompiledGraph;
#[cfg(test)]
pub(crate) use compile::{GraphError, GraphWarning, PassBytes};

use switchyard_backend::TextureFormat;

/// A target of a graph description (its index in the description).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TargetId(pub(crate) u32);

/// How large a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TargetSize {
    /// A fixed size in texels.
    Fixed { width: u32, height: u32 },
    /// The size of the frame's output.
    Output,
}

/// Where a target's memory comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TargetKind {
    /// Created and owned by the graph.
    Owned,
    /// Handed in from outside; its content after the frame is the frame's result.
    Output,
}

/// A target: a texture passes render into and sample.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TargetDecl {
    pub(crate) name: String,
    pub(crate) kind: TargetKind,
    pub(crate) format: TextureFormat,
    pub(crate) size: TargetSize,
    pub(crate) samples: u32,
}

/// What happens to an attachment when its pass begins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum LoadOp<V> {
    /// Clear to a value.
    Clear(V),
    /// Keep what an earlier pass wrote.
    Load,
    /// The content is undefined (the pass overwrites every texel).
    DontCare,
}

/// What happens to an attachment when its pass ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoreOp {
    /// Keep the results.
    Store,
    /// Throw them away.
    Discard,
}

/// One attachment of a pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Attachment<V> {
    pub(crate) target: TargetId,
    pub(crate) load: LoadOp<V>,
    pub(crate) store: StoreOp,
    /// The single-sample target a multisampled attachment resolves into.
    pub(crate) resolve: Option<TargetId>,
}

/// A render pass: its attachments and the targets it samples.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PassDecl {
    pub(crate) name: String,
    pub(crate) color: Option<Attachment<[f64; 4]>>,
    pub(crate) depth: Option<Attachment<f32>>,
    pub(crate) samples: Vec<TargetId>,
}

/// A frame described as passes over targets.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct GraphDesc {
    pub(crate) targets: Vec<TargetDecl>,
    pub(crate) passes: Vec<PassDecl>,
}

impl GraphDesc {
    /// Adds a target.
    pub(crate) fn target(
        &mut self,
        name: &str,
        kind: TargetKind,
        format: TextureFormat,
        size: TargetSize,
        samples: u32,
    ) -> TargetId {
        self.targets.push(TargetDecl { name: name.into(), kind, format, size, samples });
        TargetId(self.targets.len() as u32 - 1)
    }

    /// Adds a pass.
    pub(crate) fn pass(&mut self, pass: PassDecl) {
        self.passes.push(pass);
    }
}

impl PassDecl {
    /// A pass named `name` with nothing attached yet.
    pub(crate) fn new(name: &str) -> Self {
        Self { name: name.into(), color: None, depth: None, samples: Vec::new() }
    }

    /// Attaches `target` as the color attachment.
    pub(crate) fn color(mut self, target: TargetId, load: LoadOp<[f64; 4]>, store: StoreOp) -> Self {
        self.color = Some(Attachment { target, load, store, resolve: None });
        self
    }

    /// Attaches `target` as the depth attachment.
    pub(crate) fn depth(mut self, target: TargetId, load: LoadOp<f32>, store: StoreOp) -> Self {
        self.depth = Some(Attachment { target, load, store, resolve: None });
        self
    }

    /// Resolves the color attachment into `target`.
    pub(crate) fn resolve(mut self, target: TargetId) -> Self {
        if let Some(c) = &mut self.color {
            c.resolve = Some(target);
        }
        self
    }

    /// Samples `target` (written by earlier passes).
    pub(crate) fn sample(mut self, target: TargetId) -> Self {
        self.samples.push(target);
        self
    }
}

#[cfg(test)]
mod tests;
