//! The demo's glTF loader and cube-grid writer as a library, so the fuzz targets (`fuzz/`)
//! and the tests that replay their corpora can drive them; the binary (`main.rs`) is the
//! demo itself.

pub mod cube_grid;
pub mod gltf_scene;
