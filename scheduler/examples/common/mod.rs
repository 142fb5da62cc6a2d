//! What the examples share: the box they build their scenes of.

use switchyard::{MeshData, Vertex};

/// A unit cube standing on y = -0.5..0.5, normals pointing out of each face.
pub(crate) fn unit_cube() -> MeshData {
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let mut n = [0.0; 3];
            n[axis] = sign;
            let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
            let base = vertices.len() as u32;
            for (a, b) in [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)] {
                let mut p = [0.0; 3];
                (p[axis], p[u], p[v]) = (sign * 0.5, a, b);
                vertices.push(Vertex { position: p, normal: n, uv: [a + 0.5, b + 0.5] });
            }
            let quad = if sign > 0.0 { [0, 1, 2, 0, 2, 3] } else { [0, 2, 1, 0, 3, 2] };
            indices.extend(quad.iter().map(|i| base + i));
        }
    }
    MeshData { vertices, indices }
}
