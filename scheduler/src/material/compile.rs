//! Shader modules and material pipelines made in batches, before the frames that need
//! them ([`crate::Renderer::warm_up`], [`crate::Renderer::warm_up_log`]): one backend call
//! per kind, which compiles in parallel where the backend can and hands out ids in the
//! batch's order, so the ids in the command stream are those of making them one by one.

use switchyard_backend::Backend;

use super::{pipeline_desc, Layouts, PipelineKey, ShaderRecord};
use crate::error::ResourceError;

/// What a batch made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Made {
    /// Shader modules (variants) compiled.
    pub(crate) modules: u32,
    /// Render pipelines created.
    pub(crate) pipelines: u32,
}

/// Makes the pipelines of `needs` (dense shader index, key) that `shaders` lack, and
/// first the modules they need: each kind in one backend batch, in the order of the
/// first need of each, as the serial path ([`ShaderRecord::pipeline`]) would have made
/// them. Runs on the rayon pool it is called in. Returns what was made and, per need, why
/// it has no pipeline (`None`: it has one now).
pub(crate) fn create_missing<B: Backend>(
    backend: &B,
    shaders: &mut [ShaderRecord],
    needs: &[(usize, PipelineKey)],
    layouts: &Layouts,
) -> (Made, Vec<Option<ResourceError>>) {
    let mut made = Made::default();
    let mut errors: Vec<Option<ResourceError>> = (0..needs.len()).map(|_| None).collect();
    // Modules: each (shader, variant) missing one, once.
    let mut modules: Vec<(usize, u32)> = Vec::new();
    for &(s, key) in needs {
        let shader = &shaders[s];
        let wanted = shader.pipeline_of(&key).is_none() && shader.module_of(key.variant).is_none();
        if wanted && !modules.contains(&(s, key.variant)) {
            modules.push((s, key.variant));
        }
    }
    let descs: Vec<_> = modules.iter().map(|&(s, v)| shaders[s].module_desc(v)).collect();
    let mut refused = Vec::new();
    for (&(s, v), result) in modules.iter().zip(backend.create_shaders(&descs)) {
        match result {
            Ok(id) => {
                shaders[s].add_module(v, id);
                made.modules += 1;
            }
            Err(e) => refused.push(((s, v), ResourceError::from(e))),
        }
    }
    // Pipelines: each (shader, key) missing one, once, where its module compiled.
    let mut todo: Vec<usize> = Vec::new();
    for (i, &(s, key)) in needs.iter().enumerate() {
        let shader = &shaders[s];
        if shader.pipeline_of(&key).is_some() || todo.iter().any(|&j| needs[j] == needs[i]) {
            continue;
        }
        if shader.module_of(key.variant).is_some() {
            todo.push(i);
        } else if let Some((_, e)) = refused.iter().find(|(m, _)| *m == (s, key.variant)) {
            errors[i] = Some(e.clone());
        }
    }
    let descs: Vec<_> = todo
        .iter()
        .map(|&i| {
            let (s, key) = needs[i];
            let shader = &shaders[s];
            let module = shader.module_of(key.variant).expect("compiled above");
            pipeline_desc(shader, module, key.variant, key.pass, key.transparent, &key.layouts(layouts))
        })
        .collect();
    for (&i, result) in todo.iter().zip(backend.create_pipelines(&descs)) {
        let (s, key) = needs[i];
        match result {
            Ok(id) => {
                shaders[s].add_pipeline(key, id);
                made.pipelines += 1;
            }
            Err(e) => errors[i] = Some(e.into()),
        }
    }
    // A need equal to an earlier refused one shares its error.
    for i in 0..needs.len() {
        let (s, key) = needs[i];
        if errors[i].is_none() && shaders[s].pipeline_of(&key).is_none() {
            errors[i] = (0..i).find(|&j| needs[j] == needs[i]).and_then(|j| errors[j].clone());
        }
    }
    (made, errors)
}
