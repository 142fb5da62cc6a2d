//! [corpus] Every input of every fuzz corpus (`fuzz/corpus/<target>/`, grown by
//! `cargo +nightly fuzz run <target>`) replayed through its harness
//! (`switchyard_tests::fuzzing`): each gives results or typed errors, never a panic or a
//! broken invariant. The seeds include glTF files whose node hierarchy has a cycle and a
//! node with two parents; `found-*` inputs are what the fuzzer found (each a bug fixed).
//!
//! [differential] The same inputs, and seeded random ones, through the harnesses that
//! touch a backend on the null backend and on wgpu (lavapipe and llvmpipe): every
//! operation must give the same outcome on both — accepted, or refused with the same
//! error kind — so what the null backend accepts, wgpu accepts (one set of rules).

use std::path::{Path, PathBuf};

use switchyard_tests::fuzzing::TARGETS;

/// The inputs of one corpus, sorted.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|f| f.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn corpus_inputs_replay_without_a_panic() {
    for (target, harness) in TARGETS {
        let files = corpus(target);
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
        let lit = r.create_shader(&switchyard::ShaderDesc::lit()).unwrap();
        switchyard_demo::gltf_scene::build_from_slice(&mut r, &bytes, 16, lit).map(|_| r.scene().len())
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

#[test]
fn cube_grid_glb_loads_as_its_cubes_and_bad_sizes_are_refused() {
    use switchyard::backend::null::NullBackend;
    use switchyard::{Renderer, RendererConfig};
    use switchyard_demo::cube_grid::{glb, GridCube, MAX_SIDE};
    let mut sizes = Vec::new();
    for cube in [GridCube::Corners8, GridCube::Faces24] {
        let bytes = glb(20, 7, cube).unwrap();
        assert_eq!(&bytes[..4], b"glTF");
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, bytes.len());
        let config = RendererConfig { threads: 2, width: 16, height: 16, max_objects: 1000, ..Default::default() };
        let mut r = Renderer::new(std::sync::Arc::new(NullBackend::new(true)), config).unwrap();
        // Two copies of the 400 cubes.
        let lit = r.create_shader(&switchyard::ShaderDesc::lit_indexed()).unwrap();
        assert_eq!(
            switchyard_demo::gltf_scene::build_from_slice(&mut r, &bytes, 800, lit).map(|_| r.scene().len()),
            Ok(800),
            "{cube:?}"
        );
        sizes.push(bytes.len());
        for (side, materials) in [(0, 7), (MAX_SIDE + 1, 7), (5, 0), (5, 65_537)] {
            assert!(glb(side, materials, cube).is_err(), "side {side}, {materials} materials");
        }
    }
    // The 24-vertex cube's 16 more vertices, a position and a normal each (the JSON's
    // accessor counts have as many digits in both, "8" and "24" padded alike or not).
    let grown = sizes[1] - sizes[0];
    assert!((16 * 24..16 * 24 + 8).contains(&grown), "{sizes:?}");
}

/// [differential] Runs in the test command without the `fault-injection` feature only:
/// once per CI run.
#[cfg(not(feature = "fault-injection"))]
mod differential {
    use std::sync::Arc;

    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;
    use switchyard::backend::null::NullBackend;
    use switchyard::backend::wgpu::{Encoding, WgpuBackend};
    use switchyard::backend::Backend;
    use switchyard_tests::fuzzing::{self, harness_renderer, Log, TARGETS};

    use super::corpus;

    /// A harness that runs one input on a backend and logs each operation's outcome.
    type OnBackend<B> = fn(&Arc<B>, &[u8], &mut Log);

    fn on_backend<B: Backend>(target: &str) -> Option<OnBackend<B>> {
        Some(match target {
            "command_stream" => |b, d, log| fuzzing::command_stream_on(&**b, d, log),
            "resource_descs" => |b, d, log| fuzzing::resource_descs_on(&**b, d, log),
            "scene_ops" => |b, d, log| fuzzing::scene_ops_on(&mut harness_renderer(b.clone()), d, log),
            "shader_material" => |b, d, log| fuzzing::shader_material_on(&mut harness_renderer(b.clone()), d, log),
            "frame_graph" => |b, d, log| fuzzing::frame_graph_on(&mut harness_renderer(b.clone()), d, log),
            "gltf" => |b, d, log| fuzzing::gltf_on(&mut harness_renderer(b.clone()), d, log),
            _ => return None,
        })
    }

    /// Runs `data` through `target`'s harness on both backends; the logs must agree.
    fn compare(target: &str, what: &str, null: &Arc<NullBackend>, gpu: &Arc<WgpuBackend>, data: &[u8]) {
        let (mut a, mut b) = (Log::default(), Log::default());
        on_backend::<NullBackend>(target).expect("a backend harness")(null, data, &mut a);
        on_backend::<WgpuBackend>(target).expect("a backend harness")(gpu, data, &mut b);
        if std::env::var_os("DIFF_STATS").is_some() {
            let errors = a.0.iter().filter(|l| !l.ends_with(": ok")).count();
            eprintln!(
                "STAT {target} ops {} errors {} {:?}",
                a.0.len(),
                errors,
                a.0.iter().filter(|l| !l.ends_with(": ok")).collect::<Vec<_>>()
            );
        }
        if a != b {
            let first = a.0.iter().zip(&b.0).position(|(x, y)| x != y).unwrap_or(a.0.len().min(b.0.len()));
            panic!(
                "{target} {what} on {}: the backends disagree at operation {first}: null {:?}, wgpu {:?}\nnull: {:?}\nwgpu: {:?}",
                gpu.name(),
                a.0.get(first),
                b.0.get(first),
                a.0,
                b.0
            );
        }
    }

    /// Seeded random inputs per harness, on top of the corpora.
    const RANDOM_INPUTS: usize = 40;

    /// (`DIFF_STATS=1` prints each input's operations and refusals; `FULL_KIND=1` logs whole
    /// errors instead of their kinds, to read why.) One test per API, so the two run at once.
    #[test]
    fn null_and_wgpu_accept_and_refuse_alike_on_vulkan() {
        null_and_wgpu_accept_and_refuse_alike(wgpu::Backends::VULKAN);
    }

    #[test]
    fn null_and_wgpu_accept_and_refuse_alike_on_gl() {
        null_and_wgpu_accept_and_refuse_alike(wgpu::Backends::GL);
    }

    fn null_and_wgpu_accept_and_refuse_alike(api: wgpu::Backends) {
        let Some(gpu) = switchyard_tests::wgpu_backend(api, Encoding::RenderBundle) else { return };
        // The null backend with the adapter's limits and capabilities.
        let null = Arc::new(NullBackend::with_caps(gpu.caps()));
        // The objects the harnesses make (the staging rings are the backend's, kept for
        // reuse: `LiveResources::objects`).
        let before = (null.live().objects(), gpu.live().objects());
        let mut rng = Pcg64Mcg::seed_from_u64(18);
        for (target, _) in TARGETS {
            if on_backend::<NullBackend>(target).is_none() {
                continue;
            }
            for f in corpus(target) {
                let data = std::fs::read(&f).unwrap();
                compare(target, &f.display().to_string(), &null, &gpu, &data);
            }
            for i in 0..RANDOM_INPUTS {
                let n = rng.gen_range(8..600);
                let data: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                compare(target, &format!("random input {i}"), &null, &gpu, &data);
            }
        }
        assert_eq!(
            (null.live().objects(), gpu.live().objects()),
            before,
            "{api:?}: every harness destroys what it made"
        );
    }
}
