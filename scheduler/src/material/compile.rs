//! Shader modules and material pipelines made in batches, before the frames that need
//! them ([`crate::Renderer::warm_up`], [`crate::Renderer::warm_up_log`]): one backend call
//! per kind, which compiles in parallel where the backend can and hands out ids in the
//! batch's order, so the ids in the command stream are those of making them one by one.

use std::collections::{HashMap, HashSet};

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
    // Each need's first occurrence: a warm-up's materials share pipelines, and the batches
    // must hold each once.
    let mut first = HashMap::with_capacity(needs.len());
    let firsts: Vec<usize> = needs.iter().enumerate().map(|(i, need)| *first.entry(*need).or_insert(i)).collect();
    let missing: Vec<usize> = (0..needs.len())
        .filter(|&i| firsts[i] == i && shaders[needs[i].0].pipeline_of(&needs[i].1).is_none())
        .collect();
    let mut made = Made::default();
    let mut errors: Vec<Option<ResourceError>> = (0..needs.len()).map(|_| None).collect();
    // Modules: each (shader, variant) missing one, once.
    let mut modules: Vec<(usize, u32)> = Vec::new();
    let mut wanted = HashSet::new();
    for &i in &missing {
        let (s, key) = needs[i];
        if shaders[s].module_of(key.variant).is_none() && wanted.insert((s, key.variant)) {
            modules.push((s, key.variant));
        }
    }
    let descs: Vec<_> = modules.iter().map(|&(s, v)| shaders[s].module_desc(v)).collect();
    let mut refused = HashMap::new();
    for (&(s, v), result) in modules.iter().zip(backend.create_shaders(&descs)) {
        match result {
            Ok(id) => {
                shaders[s].add_module(v, id);
                made.modules += 1;
            }
            Err(e) => {
                refused.insert((s, v), ResourceError::from(e));
            }
        }
    }
    // Pipelines: each (shader, key) missing one, once, where its module compiled.
    let mut todo: Vec<usize> = Vec::new();
    for &i in &missing {
        let (s, key) = needs[i];
        match refused.get(&(s, key.variant)) {
            Some(e) => errors[i] = Some(e.clone()),
            None => todo.push(i),
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
    // A need equal to an earlier one shares its error.
    for i in 0..needs.len() {
        if firsts[i] != i {
            errors[i] = errors[firsts[i]].clone();
        }
    }
    (made, errors)
}
