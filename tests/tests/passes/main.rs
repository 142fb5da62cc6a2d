//! The frame graph's pass kinds beyond scene, fullscreen and callback draws, each on the
//! null backend and on lavapipe and llvmpipe: compute passes, multisampled forward passes,
//! four shadow maps per forward pass, shadow passes culled to their receivers' casters, fullscreen passes over the engine's textures and
//! buffers,
//! textures of every sampled format and their mip levels. One
//! test binary (one link against wgpu instead of four).

mod box_faces;
mod buffer_bindings;
mod cached;
mod casters;
mod compute;
mod count_buffers;
mod depth_prepass;
mod external_inputs;
mod gpu_cull;
mod indexed_materials;
mod msaa;
mod occlusion;
mod prepass_cull;
mod receivers;
mod scene_buffers;
mod shadow_maps;
mod textures;
mod wgpu_pass;
