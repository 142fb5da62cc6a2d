//! Pipelines before the frame that needs them: [`Renderer::warm_up`] builds every
//! material's display lists, with the shader variants and pipelines they need, so no frame
//! after it has to create one. It runs on the calling thread, in material order: the
//! backend numbers pipelines as it creates them and those numbers are in the command
//! stream, which must be the same for any thread count. (Creating them on the workers
//! needs the backend to hand out ids in order before the parallel creation: not done.)

use switchyard_backend::Backend;

use super::Renderer;
use crate::material::{BuildCtx, ListCounts, PassKind};
use crate::RenderError;

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
}

impl<B: Backend> Renderer<B> {
    /// Builds every live material's display list for each pass its
    /// shader declares, in the variant the current global keywords select: the shader
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
        let _z = crate::profile::zone!("warm-up");
        if self.device.lost {
            return Err(RenderError::DeviceLost);
        }
        let res = &mut self.res;
        let lib = res.library.get_mut();
        let ctx = BuildCtx {
            backend: &*res.backend,
            layouts: &res.gpu.layouts,
            globals: &res.globals,
            globals_version: res.globals_version,
            cache: res.display_list_cache,
        };
        // In material order and, per material, in the patch stage's pass order: the
        // backend numbers what it creates in that order, and the ids are in the command
        // stream, which must not depend on the thread count.
        let mut total = ListCounts::default();
        let mut error = None;
        'sets: for set in sets {
            for rec in lib.materials.iter_mut().flatten() {
                let shader = &mut lib.shaders[rec.shader as usize];
                let variant = rec.keyword_mask | set.iter().filter_map(|k| shader.keyword_bit(k)).fold(0, |a, b| a | b);
                let passes = shader.passes.mask();
                for pass in [PassKind::Forward, PassKind::Shadow].into_iter().filter(|p| passes & p.bit() != 0) {
                    if let Err(source) = rec.list(shader, variant, pass, &ctx, &mut total) {
                        error = Some(RenderError::DisplayList { material: rec.handle, source });
                        break 'sets;
                    }
                }
            }
        }
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
            }),
        })
    }
}
