//! The frame's jobs: cull, sort, patch, record.

use super::*;
use crate::graph::JobGraph;
use crate::profile;
use crate::view::{cull_range, CullBlocks, View};
use parking_lot::{Mutex, RwLock};
use rayon::prelude::*;
use std::time::Instant;

/// What identifies a view for graph reuse.
pub(super) type ViewKey = (PassKind, &'static str);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Job {
    Cull(usize),
    Sort(usize),
    Patch,
    Record(usize),
}

pub(super) fn build_graph(views: &[View]) -> (JobGraph, Vec<Job>) {
    let mut g = JobGraph::new();
    let mut jobs = Vec::new();
    let culls: Vec<usize> = views
        .iter()
        .enumerate()
        .map(|(v, view)| {
            jobs.push(Job::Cull(v));
            g.add(format!("cull[{}]", view.label), &[])
        })
        .collect();
    jobs.push(Job::Patch);
    let patch = g.add("patch", &culls);
    for (v, view) in views.iter().enumerate() {
        jobs.push(Job::Sort(v));
        let sort = g.add(format!("sort[{}]", view.label), &[culls[v]]);
        jobs.push(Job::Record(v));
        g.add(format!("record[{}]", view.label), &[sort, patch]);
    }
    (g, jobs)
}

/// Grows a per-view buffer to at least `need` bytes (they are in no bind group).
pub(super) fn grow<B: Backend>(
    b: &B,
    g: &mut Option<GrowBuffer>,
    need: u64,
    usage: BufferUsage,
    label: &str,
) -> Result<(), CreateError> {
    if g.as_ref().is_some_and(|g| g.capacity >= need) {
        return Ok(());
    }
    let cap = need.next_power_of_two();
    let id = buffer(b, label, cap, usage)?;
    if let Some(old) = g.take() {
        let _ = b.destroy(Resource::Buffer(old.id));
    }
    *g = Some(GrowBuffer { id, capacity: cap });
    Ok(())
}

#[inline]
pub(super) fn bit(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

/// Borrowed frame context the jobs run against.
pub(super) struct FrameCtx<'a, B: Backend> {
    pub(super) shared: &'a Shared<B>,
    pub(super) objects: &'a Objects,
    pub(super) blocks: &'a CullBlocks,
    pub(super) views: &'a [Mutex<ViewWork<B::Chunk>>],
    pub(super) used: &'a Mutex<[Vec<u64>; 2]>,
    pub(super) patch: &'a RwLock<PatchWork>,
    pub(super) materials: &'a Mutex<Vec<Option<MaterialRecord>>>,
    pub(super) mat_frames: &'a [MaterialFrame],
    pub(super) globals: &'a PropertySheet,
    pub(super) globals_version: u64,
    pub(super) constants: &'a Mutex<Vec<u8>>,
}

impl<B: Backend> FrameCtx<'_, B> {
    pub(super) fn run(&self, job: Job) {
        match job {
            Job::Cull(v) => self.cull(&mut self.views[v].lock()),
            Job::Sort(v) => self.sort(&mut self.views[v].lock()),
            Job::Patch => self.patch(),
            Job::Record(v) => self.record(&mut self.views[v].lock()),
        }
    }

    fn cull(&self, w: &mut ViewWork<B::Chunk>) {
        let _z = profile::zone_text!("cull", "view {} ({:?})", w.view.label, w.view.pass);
        let t = Instant::now();
        let o = self.objects;
        let n = o.len();
        w.parts.resize_with(n.div_ceil(CULL_PART).max(1), CullPart::default);
        let (frustum, mask, shadow) = (w.frustum, w.view.layer_mask, w.view.pass == PassKind::Shadow);
        let words = self.mat_frames.len().div_ceil(64);
        w.parts.par_iter_mut().enumerate().for_each(|(p, part)| {
            part.visible.clear();
            cull_range(
                o,
                self.blocks,
                &frustum,
                mask,
                shadow,
                p * CULL_PART..((p + 1) * CULL_PART).min(n),
                &mut part.visible,
            );
            // Which materials this part saw, for the patch job.
            part.used.clear();
            part.used.resize(words, 0);
            for &i in &part.visible {
                let m = o.material[i as usize] as usize;
                part.used[m / 64] |= 1 << (m % 64);
            }
        });
        // Where each piece of the parts' output goes in the view's visible list; the sort
        // job fills the list (and its queue and keys) from the pieces in one parallel pass.
        w.pieces.clear();
        w.piece_offsets.clear();
        w.piece_offsets.push(0);
        w.used.clear();
        w.used.resize(words, 0);
        let mut at = 0;
        for (p, part) in w.parts.iter().enumerate() {
            for start in (0..part.visible.len()).step_by(PIECE) {
                at += PIECE.min(part.visible.len() - start);
                w.pieces.push((p as u32, start as u32));
                w.piece_offsets.push(at);
            }
            w.used.iter_mut().zip(&part.used).for_each(|(a, b)| *a |= b);
        }
        let mut used = self.used.lock();
        let acc = &mut used[w.view.pass as usize];
        acc.resize(w.used.len(), 0);
        acc.iter_mut().zip(&w.used).for_each(|(a, b)| *a |= b);
        w.ms[0] = t.elapsed().as_secs_f64() * 1e3;
    }

    fn sort(&self, w: &mut ViewWork<B::Chunk>) {
        let _z = profile::zone_text!("sort", "view {} ({:?})", w.view.label, w.view.pass);
        let t = Instant::now();
        let (o, mats, meshes, view) = (self.objects, self.mat_frames, &self.shared.mesh_bits, w.view);
        // The visible list (parts in order), the queue to sort (the same indices) and their
        // keys, written in one pass over the cull parts.
        let n = *w.piece_offsets.last().unwrap_or(&0);
        crate::par::set_len(&mut w.visible, n);
        crate::par::set_len(&mut w.queue, n);
        crate::par::set_len(&mut w.keys, n);
        let (parts, pieces) = (&w.parts, &w.pieces);
        crate::par::fill_ranges(
            &w.piece_offsets,
            (&mut w.visible[..], &mut w.queue[..], &mut w.keys[..]),
            &|p, (visible, queue, keys): (&mut [u32], &mut [u32], &mut [u64])| {
                let (part, start) = (pieces[p].0 as usize, pieces[p].1 as usize);
                let src = &parts[part].visible[start..start + keys.len()];
                visible.copy_from_slice(src);
                queue.copy_from_slice(src);
                for (k, &i) in keys.iter_mut().zip(src) {
                    let i = i as usize;
                    let depth = depth_bits(&view, o.cx[i], o.cy[i], o.cz[i]);
                    *k = sort_key(
                        view.pass,
                        o.layer[i],
                        &mats[o.material[i] as usize],
                        meshes[o.mesh[i] as usize],
                        depth,
                    );
                }
            },
        );
        w.sorter.sort(&mut w.keys, &mut w.queue);
        build_batches_parallel(view.pass, &w.queue, o, mats, &mut w.batch_scratch, &mut w.batches);
        w.ms[1] = t.elapsed().as_secs_f64() * 1e3;
    }

    fn patch(&self) {
        let _z = profile::zone!("patch");
        let t = Instant::now();
        let [shadow, fwd] = &*self.used.lock();
        let mut pw = self.patch.write();
        let pw = &mut *pw;
        let nmat = self.mat_frames.len();
        pw.lists.clear();
        pw.lists.resize(nmat, FrameList::default());
        pw.list_index.clear();
        pw.list_index.resize(nmat, 0);
        pw.slot_materials.clear();
        for m in 0..nmat {
            if bit(fwd, m) {
                pw.lists[m].offset = pw.slot_materials.len() as u32 * CONSTANT_SLOT;
                pw.slot_materials.push(m as u32);
            }
        }
        let ctx = BuildCtx {
            backend: &*self.shared.backend,
            layouts: &self.shared.layouts,
            globals: self.globals,
            globals_version: self.globals_version,
            cache: self.shared.display_list_cache,
        };
        let shaders = &self.shared.shaders;
        let mut materials = self.materials.lock();
        // Lookups and builds run in material order: building creates backend objects, and
        // their handles (part of the command stream) must not depend on thread timing.
        let mut counts = ListCounts::default();
        for (m, (rec, list)) in materials.iter_mut().zip(pw.lists.iter_mut()).enumerate() {
            let (f, s) = (bit(fwd, m), bit(shadow, m));
            let Some(rec) = rec.as_mut().filter(|_| f || s) else { continue };
            let shader = &shaders[rec.shader as usize];
            let variant = self.mat_frames[m].variant;
            let err = |source| RenderError::DisplayList { material: m as u32, source };
            let built = (|| {
                if f {
                    let i = rec.list(shader, variant, PassKind::Forward, &ctx, &mut counts).map_err(err)?;
                    list.forward = rec.lists[i].pipeline;
                    list.group = rec.group;
                    pw.list_index[m] = i as u32;
                }
                if s {
                    let i = rec.list(shader, variant, PassKind::Shadow, &ctx, &mut counts).map_err(err)?;
                    list.shadow = rec.lists[i].pipeline;
                }
                Ok(())
            })();
            if let Err(e) = built {
                pw.error = Some(e);
                break;
            }
        }
        pw.counts = counts;
        if pw.error.is_none() {
            let mut constants = self.constants.lock();
            constants.clear();
            constants.resize(pw.slot_materials.len() * CONSTANT_SLOT as usize, 0);
            let globals = self.globals.values();
            let materials = &*materials;
            let list_index = &pw.list_index;
            constants.par_chunks_mut(CONSTANT_SLOT as usize).zip(pw.slot_materials.par_iter()).for_each(|(dst, &m)| {
                let rec = materials[m as usize].as_ref().expect("used material exists");
                rec.lists[list_index[m as usize] as usize].patch_into(dst, globals);
            });
        }
        pw.ms = t.elapsed().as_secs_f64() * 1e3;
    }

    fn record(&self, w: &mut ViewWork<B::Chunk>) {
        let _z = profile::zone_text!("record", "view {} ({:?})", w.view.label, w.view.pass);
        let t = Instant::now();
        let pw = self.patch.read();
        if pw.error.is_some() {
            return;
        }
        let b = &*self.shared.backend;
        let w = &mut *w;
        let (Some(inst_id), Some(args_id)) = (w.instance_buf.as_ref().map(|g| g.id), w.args_buf.as_ref().map(|g| g.id))
        else {
            return;
        };
        w.upload.instance_buffer = Some(inst_id);
        w.upload.args_buffer = Some(args_id);
        w.upload.instances.resize(w.queue.len(), 0);
        w.upload.args.resize(w.batches.len(), DrawIndexedIndirectArgs::default());
        let ctx = RecordCtx {
            pass: w.view.pass,
            view_group: match w.view.pass {
                PassKind::Forward => self.shared.forward_group,
                PassKind::Shadow => self.shared.shadow_group,
            },
            view_offset: w.slot * GLOBALS_SLOT as u32,
            vertices: self.shared.vertices.id,
            indices: self.shared.indices.id,
            instances: inst_id,
            args: args_id,
            multi_draw: self.shared.multi_draw,
            meshes: &self.shared.mesh_ranges,
            lists: &pw.lists,
        };
        // The instance data is the sorted queue; the indirect records follow the batches.
        crate::par::copy(&mut w.upload.instances, &w.queue);
        let meshes = &self.shared.mesh_ranges;
        w.upload
            .args
            .par_iter_mut()
            .zip(w.batches.par_iter())
            .with_min_len(1024)
            .for_each(|(a, b)| *a = draw_args(meshes, b));
        chunk_bounds(&ctx, &w.batches, &mut w.chunk_starts);
        let nchunks = w.chunk_starts.len() - 1;
        w.cmds.resize_with(nchunks, Vec::new);
        w.chunks.clear();
        w.chunks.resize_with(nchunks, || None);
        w.digests.clear();
        w.digests.resize(nchunks, Digest::default());
        let (pass, batches, keys, label, kind) = (w.pass, &w.batches, &w.keys, w.view.label, w.view.pass);
        let starts = &w.chunk_starts;
        let result = w
            .cmds
            .par_iter_mut()
            .zip(w.chunks.par_iter_mut())
            .zip(w.digests.par_iter_mut())
            .enumerate()
            .map(|(c, ((cmds, out), digest))| -> Result<ChunkCounts, RenderError> {
                let b0 = starts[c];
                let bs = &batches[b0..starts[c + 1]];
                // The sort-key range this chunk recorded: traces a reordered draw back here.
                let (first, last) = (&bs[0], &bs[bs.len() - 1]);
                let _z = profile::zone_text!(
                    "record-chunk",
                    "view {label} ({kind:?}) chunk {c}/{nchunks}: batches {b0}..{}, material buckets {}..{}, keys {:016x}..{:016x}",
                    b0 + bs.len(),
                    first.material,
                    last.material,
                    keys[first.first as usize],
                    keys[(last.first + last.count - 1) as usize],
                );
                let counts = record_chunk(&ctx, bs, b0, cmds);
                *digest = Digest::of_commands(cmds);
                let position = ChunkPosition { index: c as u32, count: nchunks as u32 };
                *out = Some(b.record(&pass, position, cmds)?);
                Ok(counts)
            })
            .try_reduce(ChunkCounts::default, |a, b| {
                Ok(ChunkCounts {
                    draw_calls: a.draw_calls + b.draw_calls,
                    state_changes: a.state_changes + b.state_changes,
                })
            });
        match result {
            Ok(c) => w.counts = c,
            Err(e) => w.error = Some(e),
        }
        w.ms[2] = t.elapsed().as_secs_f64() * 1e3;
    }
}
