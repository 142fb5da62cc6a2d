//! The single-threaded reference pipeline.

use super::*;
use crate::view::{Frustum, View};
use glam::Vec3;

/// The single-threaded reference result of a frame (see [`Renderer::reference_frame`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceFrame {
    /// Visible dense object indices per view (order given to `render`).
    pub visible: Vec<Vec<u32>>,
    /// Sorted queue per view.
    pub queue: Vec<Vec<u32>>,
    /// Digest of the command stream.
    pub digest: u64,
    /// Indirect arguments per view.
    pub args: Vec<Vec<DrawIndexedIndirectArgs>>,
}

/// What the parallel pipeline produced for one view in the last frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewOutput {
    /// Visible dense object indices.
    pub visible: Vec<u32>,
    /// Sorted queue.
    pub queue: Vec<u32>,
}

impl<B: Backend> Renderer<B> {
    /// The parallel pipeline's outputs of the last frame for view `v`.
    pub fn view_output(&self, v: usize) -> Option<ViewOutput> {
        let w = self.views.get(v)?.lock();
        Some(ViewOutput { visible: w.visible.clone(), queue: w.queue.clone() })
    }

    /// Computes the last rendered frame again with a plain single-threaded pipeline: a
    /// per-object frustum test, `sort_by_key` (stable), and serial recording against the
    /// display lists the last frame used. Tests compare it with the parallel pipeline;
    /// benchmarks use it as the baseline.
    pub fn reference_frame(&self, views: &[View]) -> ReferenceFrame {
        let o = &self.scene.objects;
        let pw = self.patch.read();
        let (order, n) = submission_order(views);
        let mut out = ReferenceFrame {
            visible: vec![Vec::new(); views.len()],
            queue: vec![Vec::new(); views.len()],
            digest: 0,
            args: vec![Vec::new(); views.len()],
        };
        let mut digest = Digest::default();
        let (mut shadow_i, mut first_forward) = (0, true);
        for &v in &order[..n] {
            let view = &views[v];
            let pass = self.pass_desc(view, shadow_i, first_forward);
            match view.pass {
                PassKind::Shadow => shadow_i += 1,
                PassKind::Forward => first_forward = false,
            }
            let f = Frustum::from_view_proj(&view.view_proj);
            let need = if view.pass == PassKind::Shadow { CASTS_SHADOWS } else { 0 };
            let visible: Vec<u32> = (0..o.len())
                .filter(|&i| {
                    (view.layer_mask >> o.layer[i]) & 1 == 1
                        && o.flags[i] & need == need
                        && f.intersects(Vec3::new(o.cx[i], o.cy[i], o.cz[i]), Vec3::new(o.ex[i], o.ey[i], o.ez[i]))
                })
                .map(|i| i as u32)
                .collect();
            let mut items: Vec<(u64, u32)> = visible
                .iter()
                .map(|&i| {
                    let i = i as usize;
                    let m = o.material[i];
                    let depth = depth_bits(view, o.cx[i], o.cy[i], o.cz[i]);
                    (
                        sort_key(
                            view.pass,
                            o.layer[i],
                            &self.mat_frames[m as usize],
                            self.shared.mesh_bits[o.mesh[i] as usize],
                            depth,
                        ),
                        i as u32,
                    )
                })
                .collect();
            items.sort_by_key(|p| p.0);
            let queue: Vec<u32> = items.iter().map(|p| p.1).collect();
            let mut batches = Vec::new();
            build_batches(view.pass, &queue, o, &self.mat_frames, &mut batches);
            let w = self.views[v].lock();
            let ctx = RecordCtx {
                pass: view.pass,
                view_group: match view.pass {
                    PassKind::Forward => self.shared.forward_group,
                    PassKind::Shadow => self.shared.shadow_group,
                },
                view_offset: v as u32 * GLOBALS_SLOT as u32,
                vertices: self.shared.vertices.id,
                indices: self.shared.indices.id,
                instances: w.instance_buf.as_ref().map_or_else(BufferId::default, |g| g.id),
                args: w.args_buf.as_ref().map_or_else(BufferId::default, |g| g.id),
                multi_draw: self.shared.multi_draw,
                meshes: &self.shared.mesh_ranges,
                lists: &pw.lists,
            };
            digest.pass(&pass);
            let mut cmds = Vec::new();
            let args: Vec<DrawIndexedIndirectArgs> =
                batches.iter().map(|b| draw_args(&self.shared.mesh_ranges, b)).collect();
            let mut starts = Vec::new();
            chunk_bounds(&ctx, &batches, &mut starts);
            for c in 0..starts.len() - 1 {
                record_chunk(&ctx, &batches[starts[c]..starts[c + 1]], starts[c], &mut cmds);
                digest.combine(Digest::of_commands(&cmds));
            }
            out.visible[v] = visible;
            out.queue[v] = queue;
            out.args[v] = args;
        }
        out.digest = digest.value();
        out
    }
}
