//! [corpus] Every input of every fuzz corpus (`fuzz/corpus/<target>/`, grown by
//! `cargo +nightly fuzz run <target>`) replayed through its harness
//! (`switchyard_tests::fuzzing`): each gives results or typed errors, never a panic or a
//! broken invariant. The seeds include glTF files whose node hierarchy has a cycle and a
//! node with two parents; `found-*` inputs are what the fuzzer found (each a bug fixed).

use std::path::Path;

use switchyard_tests::fuzzing::TARGETS;

#[test]
fn corpus_inputs_replay_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for (target, harness) in TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|f| f.unwrap().path())
            .collect();
        files.sort();
        assert!(files.len() >= 4, "{target}: a corpus of {} inputs", files.len());
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let replay = std::panic::catch_unwind(|| harness(&data));
            assert!(replay.is_ok(), "{target}: {} panicked", f.display());
        }
    }
}

#[test]
fn corpus_gltf_seeds_load_or_are_refused_as_the_spec_says() {
    use switchyard::backend::null::NullBackend;
    use switchyard::{Renderer, RendererConfig};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/gltf");
    let load = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let config = RendererConfig { threads: 1, width: 16, height: 16, max_objects: 64, ..Default::default() };
        let mut r = Renderer::new(std::sync::Arc::new(NullBackend::new(true)), config).unwrap();
        switchyard_demo::gltf_scene::build_from_slice(&mut r, &bytes, 16).map(|_| r.scene().len())
    };
    assert_eq!(load("seed-cube.gltf"), Ok(16));
    assert_eq!(load("seed-cube.glb"), Ok(16));
    for tangled in ["seed-cycle.gltf", "seed-two-parents.gltf"] {
        let e = load(tangled).unwrap_err();
        assert!(e.contains("appears twice"), "{tangled}: {e}");
    }
    // Found by the fuzzer: a .glb without accessors made gltf-json 1.4's validation panic.
    let e = load("found-missing-accessors.glb").unwrap_err();
    assert!(e.contains("names an accessor the file does not have"), "{e}");
    // ... and indices of a float type made gltf 1.4's reader hit `unreachable!`.
    let e = load("found-float-indices.glb").unwrap_err();
    assert!(e.contains("indices are not unsigned integers"), "{e}");
}
