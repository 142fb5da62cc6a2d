//! Per-frame statistics: time per stage and the frame's counters.

use crate::frame_graph::{MAX_PASSES, MAX_VIEWS};
use crate::material::ListCounts;

/// What one frame did. Stage times are the sum of that stage's job times (ms); submit and
/// GPU-wait times come from the most recent frame the submission thread finished.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameStats {
    /// Frame number (1-based).
    pub frame: u64,
    /// Culling, all views, and refreshing the block bounds of changed objects.
    pub cull_ms: f64,
    /// Sort keys and the radix sort, all views.
    pub sort_ms: f64,
    /// Batching the sorted queues, all views.
    pub batch_ms: f64,
    /// Display-list lookup, build and patching.
    pub patch_ms: f64,
    /// Recording chunks, all views.
    pub record_ms: f64,
    /// `render` wall time on the calling thread.
    pub frame_ms: f64,
    /// The calling thread's work before the job graph starts (releasing retired objects,
    /// resolving materials, globals, dirty transforms, preparing views, refreshing the
    /// cull blocks on the workers). What follows the jobs (gathering the chunks, the digest,
    /// the hand-off) is `frame_ms - slot_wait_ms - setup_ms - jobs_ms`.
    pub setup_ms: f64,
    /// Time `render` waited for a free frame slot before its work began: every slot was
    /// in flight, so the submission thread or the GPU is behind the frame loop. Part of
    /// `frame_ms`; waiting, not work.
    pub slot_wait_ms: f64,
    /// Wall time of the job graph (cull, sort, batch, patch, record, engine passes).
    pub jobs_ms: f64,
    /// Time the workers spent busy in this frame, summed over workers: the outermost
    /// timed region of each (a job, or a piece of a stage it split off); a job waiting
    /// for its pieces counts as busy.
    pub busy_ms: f64,
    /// Worker threads.
    pub workers: u32,
    /// Frame the submit figures below belong to (0: none finished yet).
    pub submitted_frame: u64,
    /// Uploads and submit on the submission thread.
    pub submit_ms: f64,
    /// Time the submission thread waited on the GPU.
    pub gpu_wait_ms: f64,
    /// Time `Renderer::present_graph` waited for the surface's image before the frame
    /// began (0 for `render_graph`; not part of `frame_ms`).
    pub acquire_ms: f64,
    /// For frame `submitted_frame`: from its render call to its image handed to the
    /// surface's present, on the submission thread (`None`: it presented nothing).
    pub latency_ms: Option<f64>,
    /// For frame `submitted_frame`, acquired late (`RendererConfig::late_acquire`): how
    /// long the submission thread waited for its image, after submitting its passes
    /// before the first one into the image (`None`: acquired early, or nothing to present).
    pub late_acquire_ms: Option<f64>,
    /// For frame `submitted_frame`, acquired late: why it got no image (its passes from
    /// the first one into the image were dropped, nothing presented).
    pub present_skipped: Option<switchyard_backend::SkipReason>,
    /// GPU time per pass of the newest frame the GPU finished and timed (an earlier frame
    /// than this one; `None` where the backend does not time passes,
    /// `Caps::gpu_timestamps`, or no frame has finished yet).
    pub gpu: Option<GpuTimes>,
    /// Objects in the scene.
    pub objects: u32,
    /// Views rendered.
    pub views: u32,
    /// Visible objects per view (first `views` entries, in the order given to `render`);
    /// for a view culled on the GPU, the candidates its cull tests (what is visible is
    /// known on the GPU only).
    pub visible: [u32; MAX_VIEWS],
    /// Views culled on the GPU ([`CullMode::Gpu`](crate::CullOn::Gpu)).
    pub gpu_culled_views: u32,
    /// Of those, views culled by occlusion too: their pass split in two around a depth
    /// pyramid ([`RendererConfig::occlusion`](crate::RendererConfig::occlusion)).
    pub occluded_views: u32,
    /// Of those, shadow views culled to the casters of their receivers
    /// ([`Pass::receivers`](crate::Pass::receivers)).
    pub receiver_culled_views: u32,
    /// Cached passes skipped this frame: their maps hold what they would draw
    /// ([`Pass::cached`](crate::Pass::cached)).
    pub cached_passes: u32,
    /// Of the GPU-culled views, forward views that drew a depth prepass's visible set
    /// instead of culling ([`RendererConfig::reuse_prepass_cull`](crate::RendererConfig::reuse_prepass_cull)).
    pub shared_culls: u32,
    /// Of those, views whose buckets were built this frame (the scene's structure, the
    /// materials or the view's filters changed; otherwise no per-object CPU work).
    pub buckets_built: u32,
    /// Queue items over all views.
    pub queue_items: u32,
    /// Views whose queue was merged from last frame's (the rest sorted from object order:
    /// the first frame, or after a failed one).
    pub sorts_from_last_order: u32,
    /// Views whose keys arrived in order or nearly so: only the new and moved objects were
    /// sorted and merged in (or nothing moved), not the full radix sort.
    pub sorts_nearly_in_order: u32,
    /// Views whose cull found last frame's objects with last frame's keys: their queue was
    /// kept as it was, not sorted (counted in the two above as well).
    pub sorts_unchanged: u32,
    /// Views culled from the same camera, queue, objects, materials and graph as the last
    /// frame that reached the GPU thread: their cull, sort and batch stages kept their
    /// outputs without running (counted in the three above as well).
    pub culls_kept: u32,
    /// Views culled on the CPU that took an earlier view's frustum test instead of testing
    /// every object: views of one camera (a depth prepass, the opaque and the transparent
    /// pass) differ only in which visible objects their queues keep.
    pub frustum_tests_taken: u32,
    /// Of those, views culled in the same parallel pass over the objects as the view whose
    /// test they took (the first later view of each camera whose leader culls on the CPU
    /// this frame): their lists are made while each part's objects are in the core's
    /// cache, and ready when the leader's is. Their cull time is counted in the leader's.
    pub culls_joined: u32,
    /// Batches (instanced draws) over all views.
    pub batches: u32,
    /// Draw API calls.
    pub draw_calls: u32,
    /// State changes emitted.
    pub state_changes: u32,
    /// Compute dispatches (compute passes).
    pub dispatches: u32,
    /// Chunks recorded.
    pub chunks: u32,
    /// Display-list hits, misses, rebuilds.
    pub lists: ListCounts,
    /// Bytes handed to the GPU this frame: the frame's own data (globals, constants,
    /// transforms, instances) and its batch of mesh and texture uploads.
    pub upload_bytes: u64,
    /// The mesh and texture uploads: this frame's batch and what waits.
    pub uploads: UploadStats,
    /// Passes run this frame (the first `pass_count` entries of [`FrameStats::passes`]).
    pub pass_count: u32,
    /// Per pass in submission order ([`crate::Renderer::pass_names`] names them): the bytes
    /// its attachments load, store and resolve, from their formats, sizes, sample counts
    /// and load and store ops.
    pub passes: [PassTraffic; MAX_PASSES],
    /// Bytes of GPU memory the frame graph's own targets take.
    pub target_bytes: u64,
    /// Bytes the frame graph saves by aliasing targets whose lifetimes do not overlap and
    /// by memoryless transient targets, against one texture per target.
    pub target_bytes_saved: u64,
    /// Digest of the submitted command stream (equal to the null backend's frame digest),
    /// where the renderer digests ([`crate::RendererConfig::digest`]).
    pub digest: Option<u64>,
}

impl Default for FrameStats {
    fn default() -> Self {
        Self {
            frame: 0,
            cull_ms: 0.0,
            sort_ms: 0.0,
            batch_ms: 0.0,
            patch_ms: 0.0,
            record_ms: 0.0,
            frame_ms: 0.0,
            setup_ms: 0.0,
            slot_wait_ms: 0.0,
            jobs_ms: 0.0,
            busy_ms: 0.0,
            workers: 0,
            submitted_frame: 0,
            submit_ms: 0.0,
            gpu_wait_ms: 0.0,
            acquire_ms: 0.0,
            latency_ms: None,
            late_acquire_ms: None,
            present_skipped: None,
            gpu: None,
            objects: 0,
            views: 0,
            visible: [0; MAX_VIEWS],
            gpu_culled_views: 0,
            occluded_views: 0,
            receiver_culled_views: 0,
            cached_passes: 0,
            shared_culls: 0,
            buckets_built: 0,
            queue_items: 0,
            sorts_from_last_order: 0,
            sorts_nearly_in_order: 0,
            sorts_unchanged: 0,
            culls_kept: 0,
            frustum_tests_taken: 0,
            culls_joined: 0,
            batches: 0,
            draw_calls: 0,
            state_changes: 0,
            dispatches: 0,
            chunks: 0,
            lists: ListCounts::default(),
            upload_bytes: 0,
            uploads: UploadStats::default(),
            pass_count: 0,
            passes: [PassTraffic::default(); MAX_PASSES],
            target_bytes: 0,
            target_bytes_saved: 0,
            digest: None,
        }
    }
}

/// A frame's mesh and texture uploads (`renderer/residency.rs`): its batch, the queue after
/// it, and the upload thread's times.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UploadStats {
    /// Bytes of the batch this frame handed to the upload thread.
    pub bytes: u64,
    /// Meshes and textures in it: drawn from this frame on.
    pub resources: u32,
    /// Uploads still queued after it.
    pub pending: u32,
    /// Their bytes.
    pub pending_bytes: u64,
    /// Meshes and textures whose uploads have finished on the GPU, in all.
    pub completed: u64,
    /// Objects whose mesh is queued: drawn with its fallback, or not at all.
    pub waiting_objects: u32,
    /// Materials whose texture is queued: sampling its fallback.
    pub waiting_materials: u32,
    /// Time the upload thread took to stage the batches of the newest frame the
    /// submission thread reported (`submitted_frame`), ms.
    pub stage_ms: f64,
    /// Time the submission thread waited for them, ms (0: ready before it needed them).
    pub wait_ms: f64,
}

/// GPU time per pass of one frame, from timestamps written when each pass began and ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuTimes {
    /// The frame they belong to.
    pub frame: u64,
    /// Passes timed: the first `count` entries of `passes` (a backend times at most the
    /// frame's first 64 passes).
    pub count: u32,
    /// GPU ms per pass, in submission order ([`crate::Renderer::pass_names`] names them).
    pub passes: [f64; MAX_PASSES],
    /// GPU ms of the compute pass that culls the GPU-culled views, before the graph's
    /// passes ([`CullOn::Gpu`](crate::CullOn::Gpu); `None` in frames without one).
    pub cull_ms: Option<f64>,
    /// GPU ms of the compute passes between the halves of occlusion-culled passes (their
    /// depth pyramids and second culls; `None` in frames without one). The halves count
    /// as their pass in `passes`.
    pub occlusion_ms: Option<f64>,
}

impl GpuTimes {
    /// The times of `frame`'s passes in `ms` (those past [`MAX_PASSES`] are left out).
    pub fn new(frame: u64, ms: &[f64]) -> Self {
        let mut passes = [0.0; MAX_PASSES];
        let count = ms.len().min(MAX_PASSES);
        passes[..count].copy_from_slice(&ms[..count]);
        Self { frame, count: count as u32, passes, cull_ms: None, occlusion_ms: None }
    }

    /// The times of a submitted frame's passes, laid out as `layout` says. The compute
    /// pass before a shadow pass with receivers counts in `cull_ms`. Passes the backend
    /// did not time are left out.
    pub(crate) fn of_submitted(frame: u64, layout: PacketLayout, ms: &[f64]) -> Self {
        let PacketLayout { culled, split, pre } = layout;
        let (cull_ms, mut rest) = match (culled, ms.split_first()) {
            (true, Some((&cull, rest))) => (Some(cull), rest),
            _ => (None, ms),
        };
        let mut out = Self { cull_ms, ..Self::new(frame, &[]) };
        let mut k = 0;
        while !rest.is_empty() && k < MAX_PASSES {
            if pre >> k & 1 == 1 && rest.len() >= 2 {
                *out.cull_ms.get_or_insert(0.0) += rest[0];
                rest = &rest[1..];
            }
            if split >> k & 1 == 1 && rest.len() >= 3 {
                out.passes[k] = rest[0] + rest[2];
                *out.occlusion_ms.get_or_insert(0.0) += rest[1];
                rest = &rest[3..];
            } else {
                out.passes[k] = rest[0];
                rest = &rest[1..];
            }
            k += 1;
        }
        out.count = k as u32;
        out
    }

    /// The timed passes' GPU ms.
    pub fn passes(&self) -> &[f64] {
        &self.passes[..self.count as usize]
    }

    /// GPU ms summed over the timed passes and the cull pass (what runs between passes,
    /// such as uploads, is not in it).
    pub fn total_ms(&self) -> f64 {
        self.passes().iter().sum::<f64>() + self.cull_ms.unwrap_or(0.0) + self.occlusion_ms.unwrap_or(0.0)
    }
}

/// How a frame's passes lie in its packet: with `culled`, the first is its cull pass; bit
/// `k` of `split`: the graph's `k`-th pass took three (halves around a compute pass); bit
/// `k` of `pre`: a compute pass came before it (a shadow pass's receivers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PacketLayout {
    pub(crate) culled: bool,
    pub(crate) split: u64,
    pub(crate) pre: u64,
}

/// The memory traffic of one pass's attachments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PassTraffic {
    /// Read when the pass begins (attachments that load their earlier content).
    pub loaded: u64,
    /// Written when the pass ends (attachments that store).
    pub stored: u64,
    /// Written by resolving multisampled attachments.
    pub resolved: u64,
}

impl PassTraffic {
    /// All three, in bytes.
    pub fn total(&self) -> u64 {
        self.loaded + self.stored + self.resolved
    }
}

impl FrameStats {
    /// Busy worker time over the frame's time × workers (0 when nothing was timed).
    pub fn utilization(&self) -> f64 {
        let capacity = self.frame_ms * f64::from(self.workers);
        if capacity > 0.0 {
            self.busy_ms / capacity
        } else {
            0.0
        }
    }

    /// The bytes all passes' attachments moved this frame.
    pub fn attachment_bytes(&self) -> u64 {
        self.passes[..self.pass_count as usize].iter().map(PassTraffic::total).sum()
    }

    /// Plots the frame's counters in the profiler (nothing without the `tracy` feature).
    pub(crate) fn plot(&self) {
        crate::profile::plot!("queue items", f64::from(self.queue_items));
        crate::profile::plot!("batches", f64::from(self.batches));
        crate::profile::plot!("draw calls", f64::from(self.draw_calls));
        crate::profile::plot!("state changes", f64::from(self.state_changes));
        crate::profile::plot!("display-list misses", f64::from(self.lists.misses + self.lists.rebuilds));
        crate::profile::plot!("pipelines created", f64::from(self.lists.pipelines_created));
        crate::profile::plot!("upload bytes", self.upload_bytes as f64);
        crate::profile::plot!("uploads pending", f64::from(self.uploads.pending));
        crate::profile::plot!("cpu frame ms", self.frame_ms);
        if let Some(g) = &self.gpu {
            crate::profile::plot!("gpu passes ms", g.total_ms());
        }
        crate::profile::plot!("worker utilization %", self.utilization() * 100.0);
        crate::profile::plot!("attachment MB/frame", self.attachment_bytes() as f64 / 1e6);
    }
}

/// The stats as an engine logs them: arrays cut to what the frame used (`visible` to
/// `views`, `passes` to `pass_count`, GPU times to the passes timed), times in ms under
/// `ms`, the digest as 16 hex digits.
#[cfg(feature = "serde")]
impl serde::Serialize for FrameStats {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Ms<'a>(&'a FrameStats);
        impl serde::Serialize for Ms<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let f = self.0;
                let mut m = s.serialize_map(Some(12))?;
                for (k, v) in [
                    ("cull", f.cull_ms),
                    ("sort", f.sort_ms),
                    ("batch", f.batch_ms),
                    ("patch", f.patch_ms),
                    ("record", f.record_ms),
                    ("frame", f.frame_ms),
                    ("slot_wait", f.slot_wait_ms),
                    ("setup", f.setup_ms),
                    ("jobs", f.jobs_ms),
                    ("busy", f.busy_ms),
                    ("submit", f.submit_ms),
                    ("gpu_wait", f.gpu_wait_ms),
                    ("acquire", f.acquire_ms),
                ] {
                    m.serialize_entry(k, &v)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("frame", &self.frame)?;
        m.serialize_entry("ms", &Ms(self))?;
        m.serialize_entry("workers", &self.workers)?;
        m.serialize_entry("submitted_frame", &self.submitted_frame)?;
        m.serialize_entry("latency_ms", &self.latency_ms)?;
        m.serialize_entry("late_acquire_ms", &self.late_acquire_ms)?;
        m.serialize_entry("present_skipped", &self.present_skipped.map(|r| format!("{r:?}")))?;
        m.serialize_entry("gpu", &self.gpu)?;
        m.serialize_entry("objects", &self.objects)?;
        m.serialize_entry("views", &self.views)?;
        m.serialize_entry("visible", &self.visible[..(self.views as usize).min(MAX_VIEWS)])?;
        m.serialize_entry("gpu_culled_views", &self.gpu_culled_views)?;
        m.serialize_entry("occluded_views", &self.occluded_views)?;
        m.serialize_entry("receiver_culled_views", &self.receiver_culled_views)?;
        m.serialize_entry("cached_passes", &self.cached_passes)?;
        m.serialize_entry("shared_culls", &self.shared_culls)?;
        m.serialize_entry("buckets_built", &self.buckets_built)?;
        m.serialize_entry("queue_items", &self.queue_items)?;
        m.serialize_entry("sorts_from_last_order", &self.sorts_from_last_order)?;
        m.serialize_entry("sorts_nearly_in_order", &self.sorts_nearly_in_order)?;
        m.serialize_entry("sorts_unchanged", &self.sorts_unchanged)?;
        m.serialize_entry("culls_kept", &self.culls_kept)?;
        m.serialize_entry("frustum_tests_taken", &self.frustum_tests_taken)?;
        m.serialize_entry("culls_joined", &self.culls_joined)?;
        m.serialize_entry("batches", &self.batches)?;
        m.serialize_entry("draw_calls", &self.draw_calls)?;
        m.serialize_entry("state_changes", &self.state_changes)?;
        m.serialize_entry("dispatches", &self.dispatches)?;
        m.serialize_entry("chunks", &self.chunks)?;
        m.serialize_entry("display_lists", &self.lists)?;
        m.serialize_entry("upload_bytes", &self.upload_bytes)?;
        // The uploads beside the pipelines the frame created (what a hitch comes from).
        #[derive(serde::Serialize)]
        struct Uploads<'a> {
            #[serde(flatten)]
            stats: &'a UploadStats,
            pipelines_created: u32,
        }
        let uploads = Uploads { stats: &self.uploads, pipelines_created: self.lists.pipelines_created };
        m.serialize_entry("uploads", &uploads)?;
        m.serialize_entry("passes", &self.passes[..(self.pass_count as usize).min(MAX_PASSES)])?;
        m.serialize_entry("target_bytes", &self.target_bytes)?;
        m.serialize_entry("target_bytes_saved", &self.target_bytes_saved)?;
        m.serialize_entry("digest", &self.digest.map(|d| format!("{d:016x}")))?;
        m.end()
    }
}

/// `frame`, `passes` (the timed ones' ms) and `cull_ms`.
#[cfg(feature = "serde")]
impl serde::Serialize for GpuTimes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("frame", &self.frame)?;
        m.serialize_entry("passes", self.passes())?;
        m.serialize_entry("cull_ms", &self.cull_ms)?;
        m.serialize_entry("occlusion_ms", &self.occlusion_ms)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_passes_fold_into_their_pass_and_the_occlusion_time() {
        // A cull pass, then graph passes 0 (split: halves 2.0 and 3.0 around 0.5), 1, and
        // 2 (split: 1.0, 0.25, 1.5).
        let ms = [0.1, 2.0, 0.5, 3.0, 4.0, 1.0, 0.25, 1.5];
        let layout = |culled, split, pre| PacketLayout { culled, split, pre };
        let g = GpuTimes::of_submitted(7, layout(true, 0b101, 0), &ms);
        assert_eq!((g.frame, g.cull_ms, g.occlusion_ms), (7, Some(0.1), Some(0.75)));
        assert_eq!(g.passes(), [5.0, 4.0, 2.5]);
        assert!((g.total_ms() - ms.iter().sum::<f64>()).abs() < 1e-12);
        // Nothing split, no cull pass: the times as they came.
        let g = GpuTimes::of_submitted(8, layout(false, 0, 0), &[1.0, 2.0]);
        assert_eq!((g.passes(), g.cull_ms, g.occlusion_ms), (&[1.0, 2.0][..], None, None));
        // A split pass the backend timed only in part (past its first 64 passes): what came.
        let g = GpuTimes::of_submitted(9, layout(false, 0b1, 0), &[1.0, 2.0]);
        assert_eq!(g.passes(), [1.0, 2.0]);
        // Shadow passes 0 and 2 with receivers (their compute passes 0.2 and 0.3) after a
        // cull pass, pass 1 split: the receivers' time joins the cull's.
        let ms = [0.1, 0.2, 2.0, 1.0, 0.5, 3.0, 0.3, 4.0];
        let g = GpuTimes::of_submitted(10, layout(true, 0b010, 0b101), &ms);
        assert_eq!((g.cull_ms, g.occlusion_ms), (Some(0.1 + 0.2 + 0.3), Some(0.5)));
        assert_eq!(g.passes(), [2.0, 4.0, 4.0]);
        assert!((g.total_ms() - ms.iter().sum::<f64>()).abs() < 1e-12);
        // No cull pass: the receivers' time alone.
        let g = GpuTimes::of_submitted(11, layout(false, 0, 0b1), &[0.25, 1.0]);
        assert_eq!((g.cull_ms, g.passes()), (Some(0.25), &[1.0][..]));
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::*;

    #[test]
    fn arrays_are_cut_to_what_the_frame_used() {
        let mut s = FrameStats { views: 2, pass_count: 3, digest: Some(0xab), ..FrameStats::default() };
        s.visible[..3].copy_from_slice(&[5, 6, 7]);
        s.passes[0].stored = 9;
        s.gpu = Some(GpuTimes::new(4, &[1.0, 2.0]));
        let v = serde_json::to_value(s).expect("serializes");
        assert_eq!(v["visible"], serde_json::json!([5, 6]));
        assert_eq!(v["passes"].as_array().map(Vec::len), Some(3));
        assert_eq!(v["passes"][0], serde_json::json!({ "loaded": 0, "stored": 9, "resolved": 0 }));
        assert_eq!(v["digest"], "00000000000000ab");
        let gpu = serde_json::json!({ "frame": 4, "passes": [1.0, 2.0], "cull_ms": null, "occlusion_ms": null });
        assert_eq!(v["gpu"], gpu);
        let lists = serde_json::json!({
            "hits": 0, "misses": 0, "rebuilds": 0, "pipelines_created": 0, "shader_modules_created": 0
        });
        assert_eq!(v["display_lists"], lists);
        // Counts past the arrays (a corrupt value) are cut, not a panic.
        let odd = FrameStats { views: 1000, pass_count: 1000, ..FrameStats::default() };
        let v = serde_json::to_value(odd).expect("serializes");
        assert_eq!(v["visible"].as_array().map(Vec::len), Some(MAX_VIEWS));
    }
}
