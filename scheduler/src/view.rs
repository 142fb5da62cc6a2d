//! Views: cameras with a pass and a layer mask, the input of every stage.

use glam::{Mat4, Vec3};

use crate::material::PassKind;

/// One view of the frame: a camera, the pass it renders, and the layers it sees.
///
/// Forward views render into the main target; shadow views render depth into the shadow
/// maps (the i-th shadow view into map i), which forward views sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// Label (Tracy zones, stats).
    pub label: &'static str,
    /// World to clip (wgpu clip space: depth 0..1).
    pub view_proj: Mat4,
    /// Camera position (depth sorting, specular, fog).
    pub eye: Vec3,
    /// Distance that maps to the farthest quantized depth.
    pub far: f32,
    /// Bit `l` set: objects on layer `l` are seen.
    pub layer_mask: u16,
    /// The pass.
    pub pass: PassKind,
}
