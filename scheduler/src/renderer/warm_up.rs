//! Pipelines before the frame that needs them: [`Renderer::warm_up`] builds every
//! material's display lists, with the shader variants and pipelines they need, so no frame
//! after it has to create one; [`Renderer::warm_up_log`] makes the pipelines a saved
//! [`PipelineLog`] names, before the materials that will use them exist. Both compile the
//! modules, then create the pipelines, each kind in one backend batch on the workers (the
//! wgpu backend compiles a batch in parallel); the backend hands out ids in the batch's
//! order, which is the order the serial path would have made them in, so the ids in the
//! command stream do not depend on the thread count. Both end by giving up the shader
//! modules: the pipelines made from them stay (wgpu keeps what a pipeline needs of its
//! module), and a variant that needs a new pipeline later is compiled again.
//! [`Renderer::warm_up`] also makes what the upload thread's first batches would make as
//! they go: its staging memory and the pipelines that generate mips (`prepare_uploads`).

use switchyard_backend::{Backend, PrepareUploads, TextureFormat};

use super::Renderer;
use crate::material::{
    create_missing, BuildCtx, ListCounts, PassKind, PipelineKey, PipelineLog, PipelineLogEntry, SceneKinds,
};
use crate::{RenderError, ResourceError};

/// What [`Renderer::warm_up`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarmUp {
    /// Display lists found current (already built).
    pub lists_found: u32,
    /// Display lists built or rebuilt.
    pub lists_built: u32,
    /// Render pipelines created.
    pub pipelines_created: u32,
    /// Shader modules (variants) compiled.
    pub shader_modules_created: u32,
    /// Pipelines the upload thread generates textures' mips with, created (one per
    /// format of sampled textures whose mips can be generated; 0 once made).
    pub mip_pipelines_created: u32,
    /// Bytes of mapped staging memory made for the upload thread
    /// ([`RendererConfig::upload_staging`](crate::RendererConfig::upload_staging); 0 once
    /// the ring holds that much).
    pub staging_bytes_made: u64,
    /// Bytes of mapped staging memory made for the next frame's writes of the objects
    /// changed since the last frame (a level's transforms, when it is first drawn).
    pub frame_staging_bytes_made: u64,
}

impl<B: Backend> Renderer<B> {
    /// Builds every live material's display list for each pass its
    /// shader declares, in the variant the current global keywords select, and makes the
    /// opaque pipelines of the base variant of every shader no material uses yet (for
    /// materials streamed in later): the shader
    /// variants and render pipelines are created now instead of in the first frame that
    /// draws the material (`FrameStats::lists.pipelines_created` is then 0 in the frames
    /// after it, until a material or global keyword selects a new variant). Call it after
    /// loading a level's materials and setting its graph; [`Renderer::warm_up_keywords`]
    /// warms variants of other global keywords too.
    ///
    /// # Errors
    /// [`RenderError::DeviceLost`] on a lost device (as a frame would); otherwise the
    /// first material whose list could not be built ([`RenderError::DisplayList`]: the
    /// backend refused a module or pipeline). What was made before it stays made and is
    /// used by later frames.
    pub fn warm_up(&mut self) -> Result<WarmUp, RenderError> {
        let current: Vec<String> = self.res.global_keywords.clone();
        let current: Vec<&str> = current.iter().map(String::as_str).collect();
        self.warm_up_keywords(&[&current])
    }

    /// [`Renderer::warm_up`] for each set of global keywords in `sets` (the variants a
    /// game switches between: fog off and on, say), as if each set were the global
    /// keywords on. A keyword no shader declares selects nothing (as with
    /// [`Renderer::set_global_keyword`]). The global keywords themselves are left as they
    /// are; an empty `sets` warms nothing.
    ///
    /// # Errors
    /// As [`Renderer::warm_up`].
    pub fn warm_up_keywords(&mut self, sets: &[&[&str]]) -> Result<WarmUp, RenderError> {
        crate::profile::zone!("warm-up");
        if self.device.lost {
            return Err(RenderError::DeviceLost);
        }
        // What the lists will need, in the order the serial path would make it: material
        // order and, per material, the patch stage's pass order.
        // Depth-prepass pipelines where the graph set has a depth pass.
        let depth_pass = self.frame.graph.as_ref().is_some_and(|g| {
            g.passes.iter().any(|p| matches!(p.content, crate::PassContent::Scene { kind: PassKind::Depth, .. }))
        });
        let kinds: &[PassKind] = if depth_pass {
            &[PassKind::Forward, PassKind::Shadow, PassKind::Depth]
        } else {
            &[PassKind::Forward, PassKind::Shadow]
        };
        let frame_writes = self.dirty_writes();
        let res = &mut self.res;
        let lib = res.library.get_mut();
        let layouts = res.gpu.layouts;
        // Every (material, variant, pass) list to build, and the pipeline each needs.
        let (mut lists, mut needs) = (Vec::new(), Vec::new());
        for set in sets {
            for (m, rec) in lib.materials.iter().enumerate().filter_map(|(m, r)| Some((m, r.as_ref()?))) {
                let shader = &lib.shaders[rec.shader as usize];
                let variant = rec.keyword_mask | shader.declared_bits(set.iter().copied());
                let passes = shader.passes.mask();
                for &pass in kinds.iter().filter(|p| passes & p.bit() != 0) {
                    lists.push((m, variant, pass));
                    needs.push((rec.shader as usize, PipelineKey::new(variant, pass, rec.transparent, &layouts)));
                }
            }
            // Shaders no live material uses yet (an engine that registers its shaders up
            // front and streams materials in later): their base variant's opaque
            // pipelines, so the first such material creates nothing in a frame.
            for (s, shader) in lib.shaders.iter().enumerate().filter(|(_, sh)| !sh.removed) {
                if lib.materials.iter().flatten().any(|m| m.shader as usize == s) {
                    continue;
                }
                let variant = shader.declared_bits(set.iter().copied());
                let passes = shader.passes.mask();
                for &pass in kinds.iter().filter(|p| passes & p.bit() != 0) {
                    needs.push((s, PipelineKey::new(variant, pass, false, &layouts)));
                }
            }
        }
        let backend = &*res.backend;
        // What the upload thread's first batches would make: its staging memory and the
        // mip pipelines of the formats whose mips are generated (textures.rs); and room
        // for the next frame's writes of the objects changed since the last frame.
        let prepare = PrepareUploads {
            mip_formats: &[TextureFormat::Rgba8Unorm, TextureFormat::Rgba8UnormSrgb],
            staging_bytes: self.config.upload_staging,
            frame_writes: &frame_writes,
        };
        let uploads = match backend.prepare_uploads(&prepare) {
            Ok(made) => made,
            Err(e) => return self.device.note_lost(Err(RenderError::Uploads(e))),
        };
        let (made, _) = self.pool.install(|| create_missing(backend, &mut lib.shaders, &needs, &layouts));
        let ctx = BuildCtx {
            backend,
            layouts: &layouts,
            globals: &res.globals,
            globals_version: res.globals_version,
            cache: res.display_list_cache,
        };
        // The lists, now finding their pipelines made; one the batch could not make is
        // tried again here and its error names its material.
        let mut total = ListCounts::default();
        let mut error = None;
        for (m, variant, pass) in lists {
            let rec = lib.materials[m].as_mut().expect("a live material, listed above");
            if let Err(source) = rec.list(&mut lib.shaders[rec.shader as usize], variant, pass, &ctx, &mut total) {
                error = Some(RenderError::DisplayList { material: rec.handle, source });
                break;
            }
        }
        total.pipelines_created += made.pipelines;
        total.shader_modules_created += made.modules;
        self.drop_shader_modules();
        let made = (total.pipelines_created, total.shader_modules_created);
        crate::profile::message(|| format!("warm-up: created {} pipelines and {} shader modules", made.0, made.1));
        // A lost device is a loss, as in a frame: the renderer then waits for `recover`.
        self.device.note_lost(match error {
            Some(e) => Err(e),
            None => Ok(WarmUp {
                lists_found: total.hits,
                lists_built: total.misses + total.rebuilds,
                pipelines_created: total.pipelines_created,
                shader_modules_created: total.shader_modules_created,
                mip_pipelines_created: uploads.mip_pipelines,
                staging_bytes_made: uploads.staging_bytes,
                frame_staging_bytes_made: uploads.frame_staging_bytes,
            }),
        })
    }

    /// Every material pipeline this renderer holds, named by what it is made from (shader
    /// name, keywords, pass, blending, forward target): save it when the engine exits
    /// and replay it with [`Renderer::warm_up_log`] at its next start. Per shader, in
    /// the order they were made; pipelines of removed shaders are gone from it.
    pub fn pipeline_log(&self) -> PipelineLog {
        let lib = self.res.library.read();
        let mut log = PipelineLog::default();
        for shader in lib.shaders.iter().filter(|s| !s.removed) {
            for key in shader.pipeline_keys() {
                let keywords = shader.keywords.iter().enumerate().filter(|(i, _)| key.variant & (1 << i) != 0);
                log.entries.push(PipelineLogEntry {
                    shader: shader.name.clone(),
                    keywords: keywords.map(|(_, k)| k.clone()).collect(),
                    pass: key.pass,
                    transparent: key.transparent,
                    color_format: key.color_format,
                    color_samples: key.color_samples,
                    scene_buffers: key.scene.map_or_else(Vec::new, |g| g.kinds.kinds().collect()),
                });
            }
        }
        log
    }

    /// Makes the pipelines `log` names (and the shader variants they need) that are not
    /// made yet, in the log's order, compiled in parallel on the workers. Entries are
    /// matched to live shaders by name (the first of that name); an entry naming no live
    /// shader, a keyword or a pass its shader does not declare, or a pipeline the backend
    /// refuses (a format or sample count it cannot draw) is skipped and reported in
    /// [`LogReplay::skipped`], with why: a log saved by another build of the engine
    /// warms what still applies and changes nothing else. Materials made later find
    /// these pipelines instead of creating them in a frame.
    ///
    /// # Errors
    /// [`RenderError::DeviceLost`] on a lost device (the renderer then waits for
    /// `recover`, as after a frame).
    pub fn warm_up_log(&mut self, log: &PipelineLog) -> Result<LogReplay, RenderError> {
        crate::profile::zone!("warm-up-log");
        if self.device.lost {
            return Err(RenderError::DeviceLost);
        }
        let res = &mut self.res;
        let lib = res.library.get_mut();
        let layouts = res.gpu.layouts;
        let mut replay = LogReplay::default();
        let (mut needs, mut entries) = (Vec::new(), Vec::new());
        for (i, e) in log.entries.iter().enumerate() {
            let Some(s) = lib.shaders.iter().position(|s| !s.removed && s.name == e.shader) else {
                replay.skipped.push((i, LogSkip::UnknownShader(e.shader.clone())));
                continue;
            };
            let shader = &lib.shaders[s];
            let variant = match shader.keyword_mask(&e.keywords) {
                Ok(variant) => variant,
                Err(k) => {
                    replay.skipped.push((i, LogSkip::UnknownKeyword(k.clone())));
                    continue;
                }
            };
            if shader.passes.mask() & e.pass.bit() == 0 {
                replay.skipped.push((i, LogSkip::NoEntryPoint(e.pass)));
                continue;
            }
            if e.scene_buffers.len() > crate::MAX_SCENE_BUFFERS {
                replay.skipped.push((i, LogSkip::SceneBuffers(e.scene_buffers.len())));
                continue;
            }
            let scene = if e.scene_buffers.is_empty() {
                None
            } else {
                match res.gpu.scene_layout(&*res.backend, SceneKinds::of(e.scene_buffers.iter().copied())) {
                    Ok((g, _)) => Some(g),
                    Err(err) => {
                        replay.skipped.push((i, LogSkip::Refused(err.into())));
                        continue;
                    }
                }
            };
            let key = PipelineKey {
                variant,
                pass: e.pass,
                transparent: e.transparent,
                color_format: e.color_format,
                color_samples: e.color_samples,
                scene,
            };
            if shader.pipeline_of(&key).is_some() {
                replay.found += 1;
                continue;
            }
            needs.push((s, key));
            entries.push(i);
        }
        let backend = &*res.backend;
        let (made, errors) = self.pool.install(|| create_missing(backend, &mut lib.shaders, &needs, &layouts));
        (replay.pipelines_created, replay.shader_modules_created) = (made.pipelines, made.modules);
        let mut lost = false;
        for (i, e) in entries.into_iter().zip(errors) {
            if let Some(e) = e {
                lost |= e.is_device_lost();
                replay.skipped.push((i, LogSkip::Refused(e)));
            }
        }
        replay.skipped.sort_by_key(|(i, _)| *i);
        self.drop_shader_modules();
        crate::profile::message(|| {
            format!("pipeline log: created {} pipelines, {} skipped", replay.pipelines_created, replay.skipped.len())
        });
        self.device.note_lost(if lost { Err(RenderError::DeviceLost) } else { Ok(replay) })
    }

    /// Gives up every shader's compiled modules (their pipelines stay).
    fn drop_shader_modules(&mut self) {
        let backend = &*self.res.backend;
        for shader in &mut self.res.library.get_mut().shaders {
            for module in shader.take_modules() {
                // Stale only after a lost device, whose objects are gone anyway.
                let _ = backend.destroy(switchyard_backend::Resource::Shader(module));
            }
        }
    }
}

/// What [`Renderer::warm_up_log`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogReplay {
    /// Render pipelines created.
    pub pipelines_created: u32,
    /// Shader modules (variants) compiled for them.
    pub shader_modules_created: u32,
    /// Entries whose pipeline was made already.
    pub found: u32,
    /// Entries not replayed (index in the log, why), in the log's order.
    pub skipped: Vec<(usize, LogSkip)>,
}

/// Why [`Renderer::warm_up_log`] skipped an entry.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LogSkip {
    /// No live shader has this name.
    UnknownShader(String),
    /// Its shader does not declare this keyword.
    UnknownKeyword(String),
    /// Its shader has no entry point for this pass kind.
    NoEntryPoint(PassKind),
    /// The backend refused its module or pipeline.
    Refused(ResourceError),
    /// It names more engine buffers in group 2 than a graph binds
    /// ([`crate::MAX_SCENE_BUFFERS`]).
    SceneBuffers(usize),
}
