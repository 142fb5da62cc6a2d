//! A camera of one frame ([`Camera`]) and what its passes cull against.

use glam::{Mat4, Vec3};
use switchyard_kernels::cull::{center_of_projection, Frustum};

/// A camera of one frame: what fills a [`super::CameraId`] slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// World to clip (wgpu clip space: depth 0..1).
    pub view_proj: Mat4,
    /// Camera position (depth sorting, specular, fog).
    pub eye: Vec3,
    /// Distance that maps to the farthest quantized depth.
    pub far: f32,
    /// Bit `l` set: objects on layer `l` are seen.
    pub layer_mask: u16,
    /// For a shadow map's camera: the region its map shades, as a view-projection matrix
    /// (depth 0..1), typically the slice of the main view a cascade covers (the view's
    /// projection with the slice's near and far). Objects that cannot cast a shadow into
    /// it are not drawn: those outside it and not between it and the light, the light
    /// being where this camera's matrix projects from (the direction along an
    /// orthographic matrix, the eye of a perspective one). `None`: every caster in the
    /// camera's frustum is drawn.
    ///
    /// Shadows in the region stay the same; the map is not exact outside the region (a
    /// shader sampling it there may miss a shadow another cascade holds).
    pub receivers: Option<Mat4>,
}

impl Camera {
    /// What the camera's passes test objects' bounds against: its frustum, limited to
    /// the casters of [`Camera::receivers`] where it has them.
    pub fn frustum(&self) -> Frustum {
        let f = Frustum::from_view_proj(&self.view_proj);
        match (self.receivers, center_of_projection(&self.view_proj)) {
            (Some(r), Some(light)) => f.casters_of(&Frustum::from_view_proj(&r), light),
            _ => f,
        }
    }
}
