//! The demo's glTF loader as a library, so the fuzz targets (`fuzz/`) and the tests that
//! replay their corpora can drive it; the binary (`main.rs`) is the demo itself.

pub mod gltf_scene;
