//! The frame loop: `render`, `flush`, `read_color`.

use super::jobs::*;
use super::*;
use crate::profile;
use crate::stats::FrameStats;
use crate::submit::{SubmitReport, ViewUpload};
use crate::view::{Frustum, View};
use glam::{Mat4, Vec3};
use parking_lot::Mutex;
use std::time::Instant;

impl<B: Backend> Renderer<B> {
    fn validate_views(&self, views: &[View]) -> Result<(), RenderError> {
        if views.is_empty() || views.len() > MAX_VIEWS {
            return Err(RenderError::InvalidView { index: 0, what: "between 1 and MAX_VIEWS views" });
        }
        let mut shadows = 0;
        for (i, v) in views.iter().enumerate() {
            if !v.view_proj.is_finite() || !v.eye.is_finite() || !v.far.is_finite() || v.far <= 0.0 {
                return Err(RenderError::InvalidView {
                    index: i,
                    what: "matrix, eye or far is not finite and positive",
                });
            }
            if v.pass == PassKind::Shadow {
                shadows += 1;
                if shadows > MAX_SHADOW_VIEWS {
                    return Err(RenderError::InvalidView { index: i, what: "more than MAX_SHADOW_VIEWS shadow views" });
                }
            }
        }
        Ok(())
    }

    /// Takes finished packets back; with `block`, waits for at least one.
    fn collect_done(&mut self, block: bool) -> bool {
        let mut got = false;
        loop {
            let next = if block && !got { self.submit.done.recv().ok() } else { self.submit.done.try_recv().ok() };
            let Some((packet, report)) = next else { return got || !block };
            got = true;
            if let Err(e) = &report.result {
                self.pending_error.get_or_insert(e.clone());
            }
            self.last_report = Some(report);
            self.free_packets.push(packet);
        }
    }

    fn write_globals(&self, views: &[View], out: &mut Vec<u8>) {
        let mut shadow_vp = [Mat4::ZERO; MAX_SHADOW_VIEWS];
        let mut shadows = 0;
        for v in views.iter().filter(|v| v.pass == PassKind::Shadow) {
            shadow_vp[shadows] = v.view_proj;
            shadows += 1;
        }
        let time = self
            .globals
            .find("_Time")
            .map_or(0.0, |i| f32::from_le_bytes(self.globals.bytes(i)[..4].try_into().expect("f32")));
        out.clear();
        out.resize(views.len() * GLOBALS_SLOT, 0);
        let l = &self.lighting;
        for (v, dst) in views.iter().zip(out.chunks_mut(GLOBALS_SLOT)) {
            let mut g = [0f32; 64];
            g[..16].copy_from_slice(&v.view_proj.to_cols_array());
            for k in 0..MAX_SHADOW_VIEWS {
                let m = shadow_vp[k];
                g[16 + 16 * k..32 + 16 * k].copy_from_slice(&m.to_cols_array());
            }
            g[48..52].copy_from_slice(&l.direction.normalize_or(Vec3::NEG_Y).extend(0.0).to_array());
            g[52..56].copy_from_slice(&v.eye.extend(1.0).to_array());
            g[56..60].copy_from_slice(&l.fog_color.extend(1.0).to_array());
            g[60..64].copy_from_slice(&[time, l.fog_density, if shadows == 0 { 0.0 } else { l.shadow_strength }, 0.0]);
            dst.copy_from_slice(bytemuck::cast_slice(&g));
        }
    }

    pub(super) fn pass_desc(&self, view: &View, shadow_index: usize, first_forward: bool) -> PassDesc {
        match view.pass {
            PassKind::Shadow => PassDesc {
                label: view.label,
                color: None,
                depth: Some(DepthAttachment {
                    texture: self.shadow_maps[shadow_index],
                    load: LoadOp::Clear(1.0),
                    store: StoreOp::Store,
                }),
            },
            PassKind::Forward => PassDesc {
                label: view.label,
                color: Some(ColorAttachment {
                    texture: self.color,
                    load: if first_forward { LoadOp::Clear([0.55, 0.65, 0.8, 1.0]) } else { LoadOp::Load },
                    store: StoreOp::Store,
                }),
                depth: Some(DepthAttachment {
                    texture: self.depth,
                    load: if first_forward { LoadOp::Clear(1.0) } else { LoadOp::Load },
                    store: StoreOp::Store,
                }),
            },
        }
    }

    /// Renders one frame of `views` and hands it to the submission thread.
    ///
    /// Shadow views are submitted before forward views (which sample their maps); the
    /// i-th shadow view renders into shadow map i. A submission error of an earlier frame
    /// is returned by the next call.
    pub fn render(&mut self, views: &[View]) -> Result<FrameStats, RenderError> {
        let t_frame = Instant::now();
        let _z = profile::zone!("frame");
        self.validate_views(views)?;
        self.collect_done(false);
        if let Some(e) = self.pending_error.take() {
            return Err(e.into());
        }
        let mut packet = loop {
            if let Some(p) = self.free_packets.pop() {
                break p;
            }
            if !self.collect_done(true) {
                return Err(RenderError::SubmitThreadGone);
            }
            if let Some(e) = self.pending_error.take() {
                return Err(e.into());
            }
        };
        self.frame += 1;
        packet.frame = self.frame;

        // Per-material frame data: the variant from material and global keywords.
        let materials = self.materials.get_mut();
        self.mat_frames.clear();
        let shadow_states = &mut self.shadow_states;
        shadow_states.clear();
        for (m, rec) in materials.iter().enumerate() {
            let mf = match rec {
                Some(r) => {
                    let shader = &self.shared.shaders[r.shader as usize];
                    let global =
                        self.global_keywords.iter().filter_map(|k| shader.keyword_bit(k)).fold(0, |a, b| a | b);
                    let variant = r.keyword_mask | global;
                    let key = (r.shader, variant);
                    let state = shadow_states.iter().position(|s| *s == key).unwrap_or_else(|| {
                        shadow_states.push(key);
                        shadow_states.len() - 1
                    }) as u32;
                    MaterialFrame::new(m as u32, variant, r.shader, r.transparent, state)
                }
                None => MaterialFrame::default(),
            };
            self.mat_frames.push(mf);
        }

        // Globals and dirty transforms.
        let mut globals_bytes = std::mem::take(&mut packet.globals.1);
        self.write_globals(views, &mut globals_bytes);
        packet.globals = (Some(self.globals_buf), globals_bytes);
        packet.transforms.0 = Some(self.transforms_buf);
        packet.transforms.1.clear();
        packet.transform_writes.clear();
        let len = self.scene.objects.len();
        for (s, e) in self.scene.dirty.drain(..) {
            // Objects removed after being marked leave ranges past the end.
            let (s, e) = ((s as usize).min(len), (e as usize).min(len));
            if s >= e {
                continue;
            }
            let start = packet.transforms.1.len();
            let src = &self.scene.objects.transforms[s..e];
            packet.transforms.1.extend_from_slice(bytemuck::cast_slice(src));
            packet.transform_writes.push((s as u64 * 64, start..packet.transforms.1.len()));
        }

        // Views: shadow views first, then forward views, each in the order given.
        let (order, n) = submission_order(views);
        let order = &order[..n];
        // The graph is built once per view configuration and reused.
        let same =
            self.graph.as_ref().is_some_and(|(k, _, _)| k.iter().copied().eq(views.iter().map(|v| (v.pass, v.label))));
        if !same {
            let (graph, jobs) = build_graph(views);
            self.graph = Some((views.iter().map(|v| (v.pass, v.label)).collect(), graph, jobs));
        }
        while self.views.len() < views.len() {
            self.views.push(Mutex::new(ViewWork::default()));
        }
        packet.views.resize_with(views.len(), ViewUpload::default);
        let (mut shadow_i, mut first_forward) = (0, true);
        for &v in order {
            let pass = self.pass_desc(&views[v], shadow_i, first_forward);
            match views[v].pass {
                PassKind::Shadow => shadow_i += 1,
                PassKind::Forward => first_forward = false,
            }
            let w = self.views[v].get_mut();
            w.view = views[v];
            w.frustum = Frustum::from_view_proj(&views[v].view_proj);
            w.pass = pass;
            w.slot = v as u32;
            w.error = None;
            w.ms = [0.0; 3];
            w.counts = ChunkCounts::default();
            std::mem::swap(&mut w.upload, &mut packet.views[v]);
            // Instance and indirect buffers hold at most one entry per object. They grow
            // here, in view order, so buffer handles do not depend on job timing.
            let need = self.scene.len().max(1024) as u64;
            let b = &*self.shared.backend;
            let grown = grow(b, &mut w.instance_buf, need * 4, BufferUsage::VERTEX, "instances")
                .and_then(|_| grow(b, &mut w.args_buf, need * 20, BufferUsage::INDIRECT, "indirect"));
            if let Err(e) = grown {
                std::mem::swap(&mut w.upload, &mut packet.views[v]);
                self.free_packets.push(packet);
                return Err(RenderError::FrameBuffer(e));
            }
        }
        for u in self.used.get_mut().iter_mut() {
            u.clear();
        }
        self.patch.get_mut().error = None;
        let constants = Mutex::new(std::mem::take(&mut packet.constants.1));

        // Block bounds of objects that changed since the last frame (culling's first level).
        let t_blocks = Instant::now();
        {
            let _z = profile::zone!("cull-blocks");
            let scene = &mut self.scene;
            self.pool.install(|| scene.blocks.refresh(&scene.objects));
        }
        let blocks_ms = t_blocks.elapsed().as_secs_f64() * 1e3;

        let ctx = FrameCtx {
            shared: &self.shared,
            objects: &self.scene.objects,
            blocks: &self.scene.blocks,
            views: &self.views[..views.len()],
            used: &self.used,
            patch: &self.patch,
            materials: &self.materials,
            mat_frames: &self.mat_frames,
            globals: &self.globals,
            globals_version: self.globals_version,
            constants: &constants,
        };
        let (_, graph, jobs) = self.graph.as_ref().expect("set above");
        let ran = graph.run(&self.pool, &|j| ctx.run(jobs[j]));
        packet.constants = (Some(self.constants_buf), constants.into_inner());

        // Gather results in submission order.
        let mut stats = FrameStats {
            cull_ms: blocks_ms,
            frame: self.frame,
            objects: self.scene.len() as u32,
            views: views.len() as u32,
            ..FrameStats::default()
        };
        let mut error = ran.err().map(|p| RenderError::JobPanicked { job: p.job, message: p.message });
        let pw = self.patch.get_mut();
        error = error.or(pw.error.take());
        stats.patch_ms = pw.ms;
        stats.lists = pw.counts;
        packet.passes.resize_with(views.len(), || PassSubmit {
            desc: PassDesc { label: "", color: None, depth: None },
            chunks: Vec::new(),
        });
        let mut digest = Digest::default();
        for (k, &v) in order.iter().enumerate() {
            let w = self.views[v].get_mut();
            std::mem::swap(&mut w.upload, &mut packet.views[v]);
            error = error.or(w.error.take());
            stats.visible[v] = w.visible.len() as u32;
            stats.queue_items += w.queue.len() as u32;
            stats.batches += w.batches.len() as u32;
            stats.draw_calls += w.counts.draw_calls;
            stats.state_changes += w.counts.state_changes;
            stats.cull_ms += w.ms[0];
            stats.sort_ms += w.ms[1];
            stats.record_ms += w.ms[2];
            stats.chunks += w.chunks.len() as u32;
            digest.pass(&w.pass);
            w.digests.iter().for_each(|d| digest.combine(*d));
            let p = &mut packet.passes[k];
            p.desc = w.pass;
            p.chunks.clear();
            p.chunks.extend(w.chunks.drain(..).flatten());
        }
        stats.digest = digest.value();
        stats.upload_bytes = packet.upload_bytes();
        if let Some(e) = error {
            packet.passes.iter_mut().for_each(|p| p.chunks.clear());
            self.free_packets.push(packet);
            // The scene's dirty transforms were consumed: resend everything next frame.
            let n = self.scene.len() as u32;
            if n > 0 {
                self.scene.dirty.push((0, n));
            }
            return Err(e);
        }
        if !self.submit.send(packet) {
            return Err(RenderError::SubmitThreadGone);
        }
        if let Some(r) = &self.last_report {
            stats.submitted_frame = r.frame;
            stats.submit_ms = r.submit_ms;
            stats.gpu_wait_ms = r.gpu_wait_ms;
        }
        stats.frame_ms = t_frame.elapsed().as_secs_f64() * 1e3;
        profile::plot!("queue items", f64::from(stats.queue_items));
        profile::plot!("batches", f64::from(stats.batches));
        profile::plot!("draw calls", f64::from(stats.draw_calls));
        profile::plot!("state changes", f64::from(stats.state_changes));
        profile::plot!("display-list misses", f64::from(stats.lists.misses + stats.lists.rebuilds));
        profile::plot!("upload bytes", stats.upload_bytes as f64);
        profile::plot!("cpu frame ms", stats.frame_ms);
        profile::frame_mark();
        Ok(stats)
    }

    /// Waits until every frame handed to the submission thread is finished on the GPU;
    /// returns a submission error of any of them.
    pub fn flush(&mut self) -> Result<Option<SubmitReport>, RenderError> {
        if !self.submit.flush() {
            return Err(RenderError::SubmitThreadGone);
        }
        self.collect_done(false);
        if let Some(e) = self.pending_error.take() {
            return Err(e.into());
        }
        Ok(self.last_report.clone())
    }

    /// Flushes, then reads the main color target back as RGBA8 (sRGB-encoded).
    pub fn read_color(&mut self) -> Result<Image, RenderError> {
        self.flush()?;
        Ok(self.shared.backend.read_rgba8(self.color)?)
    }
}
