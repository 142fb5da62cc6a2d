//! The demo binary end to end: on the software adapter, with the null backend, with a glTF
//! the test writes, and with bad input.

use base64::Engine as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn demo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchyard-demo")).args(args).output().expect("demo runs")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("switchyard-demo-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "demo failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn luminance(p: &image::Rgba<u8>) -> f32 {
    0.2126 * f32::from(p[0]) + 0.7152 * f32::from(p[1]) + 0.0722 * f32::from(p[2])
}

#[test]
fn pillar_shadow_falls_where_the_light_sends_it() {
    let png = tmp("pillar.png");
    ok(&demo(&[
        "--scene",
        "pillar",
        "--width",
        "320",
        "--height",
        "240",
        "--frames",
        "2",
        "--out",
        png.to_str().unwrap(),
    ]));
    let img = image::open(&png).expect("PNG written").to_rgba8();
    assert_eq!(img.dimensions(), (320, 240));
    // Top-down camera at height 30, light travelling towards -x: world (-6, 0, 0) is in the
    // pillar's shadow, world (+6, 0, 0) is lit ground; both project to row 120.
    let (shadow, lit) = (img.get_pixel(110, 120), img.get_pixel(210, 120));
    let (ls, ll) = (luminance(shadow), luminance(lit));
    assert!(ls < 0.7 * ll, "shadowed ground {shadow:?} must be darker than lit ground {lit:?}");
    for p in [shadow, lit] {
        let spread = p.0[..3].iter().max().unwrap() - p.0[..3].iter().min().unwrap();
        assert!(spread < 16, "ground is grey: {p:?}");
    }
    // The pillar's top is at the center and is red.
    let top = img.get_pixel(160, 120);
    assert!(top[0] > 2 * top[1].max(top[2]), "pillar top {top:?}");
}

#[test]
fn resize_at_gives_a_png_of_the_final_size() {
    let png = tmp("resized.png");
    let out = ok(&demo(&[
        "--objects",
        "2000",
        "--frames",
        "4",
        "--width",
        "160",
        "--height",
        "90",
        "--resize-at",
        "2:120x120",
        "--resize-at",
        "4:200x80",
        "--out",
        png.to_str().unwrap(),
    ]));
    let img = image::open(&png).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (200, 80), "{out}");
    let distinct: std::collections::HashSet<_> = img.pixels().map(|p| p.0).collect();
    assert!(distinct.len() > 20, "a rendered city after two resizes ({} colors)", distinct.len());
    // The opaque pass's bytes follow the last size: RGBA16 float color (8 bytes a texel) and
    // depth (4) stored.
    assert!(out.contains(&format!("| opaque | 0.00 | {:.2} |", (200 * 80 * 12) as f64 / 1e6)), "{out}");
}

#[test]
fn city_renders_a_varied_image() {
    let png = tmp("city.png");
    let out = ok(&demo(&[
        "--objects",
        "3000",
        "--frames",
        "3",
        "--width",
        "320",
        "--height",
        "180",
        "--out",
        png.to_str().unwrap(),
    ]));
    assert!(out.contains("| record |"), "summary table printed:\n{out}");
    let img = image::open(&png).unwrap().to_rgba8();
    let distinct: std::collections::HashSet<_> = img.pixels().map(|p| p.0).collect();
    assert!(distinct.len() > 100, "the picture is not uniform ({} colors)", distinct.len());
}

#[test]
fn stats_json_agrees_with_the_null_backend() {
    let json = tmp("stats.json");
    ok(&demo(&["--backend", "null", "--objects", "20000", "--frames", "4", "--stats", json.to_str().unwrap()]));
    let frames: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let frames = frames.as_array().unwrap();
    assert_eq!(frames.len(), 4);
    for f in frames {
        let b = &f["backend"];
        assert_eq!(f["draw_calls"], b["draw_calls"], "draw calls: {f}");
        assert_eq!(f["state_changes"], b["state_changes"], "state changes: {f}");
        assert_eq!(f["chunks"], b["chunks"]);
        assert_eq!(f["digest"], b["digest"]);
        // The frame's own data went through its submit, its batch of meshes and textures
        // through the upload thread.
        let batch = f["uploads"]["bytes"].as_u64().unwrap();
        assert_eq!(f["upload_bytes"].as_u64().unwrap(), b["upload_bytes"].as_u64().unwrap() + batch, "{f}");
        assert_eq!((f["uploads"]["pending"].as_u64(), f["uploads"]["waiting_objects"].as_u64()), (Some(0), Some(0)));
        // Two shadow cascades, opaque and transparent: four scene passes.
        assert!(f["queue_items"].as_u64().unwrap() > 0 && f["visible"].as_array().unwrap().len() == 4);
    }
    // Every mesh and texture went with the first frame's batch (within the default budget).
    assert!(
        frames[0]["uploads"]["bytes"].as_u64().unwrap() > 0 && frames[0]["uploads"]["resources"].as_u64() > Some(0)
    );
    assert_eq!(frames[3]["uploads"]["bytes"], 0);
    assert!(frames[0]["display_lists"]["misses"].as_u64().unwrap() > 0);
    assert_eq!(frames[3]["display_lists"]["misses"], 0);
}

#[test]
fn digest_is_the_same_for_every_thread_count() {
    let run = |t: &str| {
        let out = ok(&demo(&["--backend", "null", "--objects", "40000", "--frames", "3", "--digest", "--threads", t]));
        out.lines().filter(|l| l.starts_with("frame ")).map(String::from).collect::<Vec<_>>()
    };
    let one = run("1");
    assert_eq!(one.len(), 3);
    assert!(one[0].len() == "frame 1 digest ".len() + 16, "{}", one[0]);
    assert_eq!(one, run("2"));
    assert_eq!(one, run("7"));
}

#[test]
fn a_pipeline_cache_file_is_written_read_back_and_a_bad_one_ignored() {
    // Vulkan (lavapipe on CI), whose devices keep a pipeline cache.
    let run = |cache: &Path| {
        let png = tmp("cache.png");
        let out = Command::new(env!("CARGO_BIN_EXE_switchyard-demo"))
            .args(["--objects", "500", "--frames", "2", "--width", "64", "--height", "48", "--warm-up"])
            .args(["--pipeline-cache", cache.to_str().unwrap(), "--out", png.to_str().unwrap()])
            .env("WGPU_BACKEND", "vulkan")
            .output()
            .expect("demo runs");
        ok(&out)
    };
    let cache = tmp("pipelines.bin");
    std::fs::write(&cache, b"not a cache").unwrap();
    let first = run(&cache);
    if first.contains("keeps none") {
        return; // no Vulkan device with a cache here (CI has lavapipe)
    }
    assert!(first.contains("ignored: not a Switchyard pipeline cache"), "{first}");
    assert!(first.contains(&format!("bytes written to {}", cache.display())), "{first}");
    let second = run(&cache);
    assert!(second.contains("bytes of driver data from"), "{second}");
}

#[test]
fn warm_up_creates_every_pipeline_before_the_first_frame() {
    let run = |t: &str| {
        let args = ["--backend", "null", "--objects", "5000", "--frames", "3", "--warm-up", "--threads", t];
        let out = ok(&demo(&args));
        let warm = out.lines().find(|l| l.starts_with("warm-up: ")).unwrap_or_else(|| panic!("{out}")).to_owned();
        assert!(!warm.starts_with("warm-up: 0 pipelines"), "{warm}");
        let made = out.lines().find(|l| l.starts_with("created during frames:")).expect("the pipelines line");
        assert!(made.starts_with("created during frames: 0 pipelines, 0 shader modules"), "{made}");
        // The frames' digests (with --digest) match across thread counts.
        let digests = ok(&demo(&[&args[..], &["--digest"]].concat()));
        digests.lines().filter(|l| l.starts_with("frame ")).map(String::from).collect::<Vec<_>>()
    };
    let one = run("1");
    assert_eq!(one.len(), 3);
    assert_eq!(one, run("5"));
}

#[test]
fn a_pipeline_log_written_by_one_run_warms_the_next_and_a_bad_one_is_ignored() {
    let log = tmp("pipelines.json");
    let _ = std::fs::remove_file(&log);
    let args = ["--objects", "2000", "--frames", "3", "--digest", "--pipeline-log", log.to_str().unwrap()];
    let null = |t: &str| ok(&demo(&[&args[..], &["--backend", "null", "--threads", t]].concat()));
    let frames = |out: &str| out.lines().filter(|l| l.starts_with("frame ")).map(String::from).collect::<Vec<_>>();
    let first = null("2");
    assert!(first.contains("not found; nothing to replay"), "{first}");
    assert!(first.contains(&format!("pipelines written to {}", log.display())), "{first}");
    assert!(!first.contains("created during frames: 0 pipelines"), "the first run makes them in frames: {first}");
    for t in ["1", "4"] {
        let next = null(t);
        assert!(next.contains("0 skipped"), "{next}");
        assert!(next.contains("created during frames: 0 pipelines, 0 shader modules"), "{next}");
        // The replay hands out the ids the frames would have: the command stream is the same.
        assert_eq!(frames(&next), frames(&first), "{t} threads");
    }
    // The wgpu backend compiles the replayed batch in parallel (lavapipe on CI).
    let png = tmp("log.png");
    let vulkan = ok(&demo_on("vulkan", &[&args[..], &["--threads", "4", "--out", png.to_str().unwrap()]].concat()));
    assert!(vulkan.contains("created during frames: 0 pipelines, 0 shader modules"), "{vulkan}");
    std::fs::write(&log, "{\"entries\": 7}").unwrap();
    let bad = null("2");
    assert!(bad.contains("ignored: not a pipeline log"), "{bad}");
    assert_eq!(frames(&bad), frames(&first), "a bad log changes nothing");
}

/// A one-cube glTF with an embedded buffer and a base color factor.
fn write_cube_gltf(path: &Path) {
    let positions: [[f32; 3]; 8] = [
        [0., 0., 0.],
        [1., 0., 0.],
        [1., 1., 0.],
        [0., 1., 0.],
        [0., 0., 1.],
        [1., 0., 1.],
        [1., 1., 1.],
        [0., 1., 1.],
    ];
    let indices: [u16; 36] =
        [0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4, 3, 7, 6, 3, 6, 2, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5];
    let mut bytes: Vec<u8> = positions.iter().flatten().flat_map(|f| f.to_le_bytes()).collect();
    bytes.extend(indices.iter().flat_map(|i| i.to_le_bytes()));
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],
"nodes":[{{"mesh":0,"translation":[0,0.5,0]}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1,"material":0}}]}}],
"materials":[{{"pbrMetallicRoughness":{{"baseColorFactor":[0.1,0.6,0.2,1.0]}}}}],
"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{b64}"}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":96}},{{"buffer":0,"byteOffset":96,"byteLength":72}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":8,"type":"VEC3","min":[0,0,0],"max":[1,1,1]}},
{{"bufferView":1,"componentType":5123,"count":36,"type":"SCALAR"}}]}}"#,
        bytes.len()
    );
    std::fs::write(path, json).unwrap();
}

#[test]
fn gltf_scene_loads_and_renders() {
    let path = tmp("cube.gltf");
    write_cube_gltf(&path);
    let out = ok(&demo(&["--gltf", path.to_str().unwrap(), "--backend", "null", "--objects", "50", "--frames", "2"]));
    assert!(out.contains("scene: 50 objects"), "{out}");
    let png = tmp("cube.png");
    ok(&demo(&[
        "--gltf",
        path.to_str().unwrap(),
        "--objects",
        "30",
        "--frames",
        "2",
        "--width",
        "160",
        "--height",
        "120",
        "--out",
        png.to_str().unwrap(),
    ]));
    let img = image::open(&png).unwrap().to_rgba8();
    assert!(img.pixels().any(|p| p[1] > p[0] + 40 && p[1] > p[2] + 40), "green cubes visible");
}

fn one_line_error(out: &Output) -> String {
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.contains("XDG_RUNTIME_DIR")).collect();
    assert_eq!(lines.len(), 1, "exactly one line on stderr: {err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    lines[0].to_string()
}

#[test]
fn bad_input_is_one_line_and_non_zero() {
    let line = one_line_error(&demo(&["--objects", "many"]));
    assert!(line.contains("--objects"), "{line}");
    let bad = tmp("bad.gltf");
    std::fs::write(&bad, "{ this is not gltf").unwrap();
    let line = one_line_error(&demo(&["--gltf", bad.to_str().unwrap(), "--backend", "null"]));
    assert!(line.contains("bad.gltf"), "{line}");
    let line = one_line_error(&demo(&["--gltf", "/nonexistent/model.glb", "--backend", "null"]));
    assert!(line.contains("model.glb"), "{line}");
    let line = one_line_error(&demo(&["--frames", "0", "--backend", "null"]));
    assert!(line.contains("--frames"), "{line}");
    let line = one_line_error(&demo(&["--street", "--scene", "cubes", "--backend", "null"]));
    assert!(line.contains("--street"), "{line}");
    // The tests' build has no `tracy` feature: nothing could connect, so it says so at once
    // instead of waiting.
    let line = one_line_error(&demo(&["--wait-for-profiler", "--backend", "null"]));
    assert!(line.contains("`tracy` feature"), "{line}");
    let line = one_line_error(&demo(&["--engine-frame-marks", "--backend", "null"]));
    assert!(line.contains("--engine-frame-marks") && line.contains("`tracy` feature"), "{line}");
    let line = one_line_error(&demo(&["--wait-for-profiler", "soon", "--backend", "null"]));
    assert!(line.contains("--wait-for-profiler"), "{line}");
    let line = one_line_error(&demo(&["--pipeline-cache", "x.bin", "--backend", "null"]));
    assert!(line.contains("--pipeline-cache"), "{line}");
}

#[test]
fn occlusion_at_street_level_draws_a_fraction_of_what_the_frustum_holds() {
    let png = tmp("street.png");
    let args = ["--street", "--objects", "3000", "--frames", "4", "--width", "160", "--height", "96"];
    let kept = |extra: &[&str]| -> (u32, u32, u32) {
        let out = ok(&demo(&[&args[..], extra, &["--out", png.to_str().unwrap()]].concat()));
        let line = out.lines().find(|l| l.starts_with("kept by the GPU culls")).unwrap_or_else(|| panic!("{out}"));
        // "... opaque N of M + K"
        let words: Vec<&str> = line.split("opaque ").nth(1).expect("the opaque view").split(' ').collect();
        let n = |i: usize| words[i].trim_end_matches(',').parse::<u32>().unwrap();
        (n(0), n(2), n(4))
    };
    // --occlusion brings GPU culling without --cull.
    let (first, candidates, second) = kept(&["--occlusion"]);
    let (frustum, same, none) = kept(&["--cull", "gpu"]);
    assert_eq!((same, none), (candidates, 0));
    assert!(first + second < frustum / 4, "occlusion draws {first} + {second} of the frustum's {frustum}");
}

#[test]
fn the_output_is_checked_before_rendering_and_written_in_its_format() {
    // A folder that does not exist, and an extension that names no format: refused at once
    // (100,000 objects would take seconds to render first), nothing written.
    for (out, names) in [("/nonexistent/dir/frame.png", "frame.png"), ("frame.xyz", "name a .png")] {
        let out = if out.starts_with('/') { PathBuf::from(out) } else { tmp(out) };
        let t = std::time::Instant::now();
        let line = one_line_error(&demo(&["--out", out.to_str().unwrap(), "--frames", "2"]));
        assert!(line.contains("--out") && line.contains(names), "{line}");
        assert!(t.elapsed().as_secs_f64() < 5.0, "refused before rendering");
        assert!(!out.exists());
    }
    // A format without alpha is written, not left empty.
    let jpg = tmp("frame.jpg");
    ok(&demo(&[
        "--objects",
        "300",
        "--frames",
        "2",
        "--width",
        "64",
        "--height",
        "48",
        "--out",
        jpg.to_str().unwrap(),
    ]));
    let img = image::open(&jpg).expect("a JPEG the image crate reads");
    assert_eq!((img.width(), img.height()), (64, 48));
}

#[test]
fn a_gpu_trace_holds_the_last_frames_passes_and_bad_paths_are_refused_first() {
    let trace = tmp("gpu.json");
    let png = tmp("gpu.png");
    let args = ["--objects", "300", "--frames", "3", "--width", "64", "--height", "48", "--out"];
    let out = ok(&demo(&[&args[..], &[png.to_str().unwrap(), "--gpu-trace", trace.to_str().unwrap()]].concat()));
    assert!(out.contains("GPU scopes of the last frame"), "{out}");
    // wgpu-profiler's chrome trace: one complete event per pass of the full graph.
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().expect("events");
    let names: Vec<&str> = events.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["shadow-0", "shadow-1", "opaque", "transparent", "post", "overlay"]);
    assert!(events.iter().all(|e| e["ph"] == "X" && e["dur"].as_f64().is_some_and(|d| d >= 0.0)), "{json}");
    // Refused before rendering: the null backend (it times nothing), a folder that does not
    // exist.
    let line = one_line_error(&demo(&["--backend", "null", "--gpu-trace", trace.to_str().unwrap()]));
    assert!(line.contains("--gpu-trace") && line.contains("null backend"), "{line}");
    let line = one_line_error(&demo(&["--gpu-trace", "/nonexistent/dir/gpu.json", "--frames", "2"]));
    assert!(line.contains("--gpu-trace /nonexistent/dir/gpu.json"), "{line}");
}

#[test]
fn piped_output_shows_progress_and_labels_the_visible_counts() {
    // A line per frame with no pause asked for; none with the default second in this short run
    // is not asserted (machines differ).
    let out = ok(&demo(&["--backend", "null", "--objects", "3000", "--frames", "3", "--progress-every", "0"]));
    let progress: Vec<&str> = out.lines().filter(|l| l.starts_with("progress: frame ")).collect();
    assert_eq!(progress, ["progress: frame 1/3", "progress: frame 2/3", "progress: frame 3/3"]);
    let last = out.lines().find(|l| l.starts_with("last frame:")).expect("the summary");
    for pass in ["shadow-0", "shadow-1", "opaque", "transparent"] {
        assert!(last.contains(&format!("{pass} ")), "{pass} labelled: {last}");
    }
    // Pipelines are made on first use: in the first frame, none after it.
    let made = out.lines().find(|l| l.starts_with("created during frames:")).expect("the pipelines line");
    assert!(made.ends_with("later frames that created any: 0)") && !made.contains(": 0 pipelines"), "{made}");
}

#[test]
fn the_minimal_graph_is_one_pass_and_the_full_one_six() {
    let minimal = ok(&demo(&["--backend", "null", "--objects", "3000", "--frames", "2", "--graph", "minimal"]));
    assert!(minimal.contains("frame graph Minimal (1 passes)"), "{minimal}");
    assert!(minimal.contains("| main | 0.00 |"), "{minimal}");
    let full = ok(&demo(&["--backend", "null", "--objects", "3000", "--frames", "2"]));
    assert!(full.contains("frame graph Full (6 passes)"), "{full}");
    for pass in ["shadow-0", "shadow-1", "opaque", "transparent", "post", "overlay"] {
        assert!(full.contains(&format!("| {pass} |")), "{pass}: {full}");
    }
    assert!(full.contains("MB/frame"));
    // One cascade with --views 2.
    let one = ok(&demo(&["--backend", "null", "--objects", "3000", "--frames", "1", "--views", "2"]));
    assert!(one.contains("frame graph Full (5 passes)") && !one.contains("| shadow-1 |"), "{one}");
    let bad = one_line_error(&demo(&["--graph", "deferred"]));
    assert!(bad.contains("--graph"), "{bad}");
}

#[test]
fn a_reader_that_stops_early_ends_the_demo_quietly() {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchyard-demo"))
        .args(["--backend", "null", "--objects", "3000", "--frames", "500", "--progress-every", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("demo runs");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("scene:"), "{first}");
    // The reader is gone: the demo's next lines go nowhere.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
    assert_eq!(out.status.code(), Some(141), "{err}");
}

/// Whether the tests have a display (CI runs them under Xvfb).
fn display() -> bool {
    if std::env::var_os("DISPLAY").is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI runs the tests under Xvfb");
        return false;
    }
    true
}

/// The demo on one wgpu backend (`vulkan` = lavapipe, `gl` = llvmpipe).
fn demo_on(backend: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchyard-demo")).env("WGPU_BACKEND", backend).args(args).output().unwrap()
}

#[test]
fn a_window_presents_what_the_offscreen_run_renders_through_a_resize() {
    if !display() {
        return;
    }
    // --digest: the overlay shows no timing, so both runs draw the same pixels.
    let common = ["--objects", "800", "--frames", "6", "--width", "160", "--height", "100", "--threads", "2"];
    let resize = ["--resize-at", "4:200x120", "--digest"];
    for backend in ["vulkan", "gl"] {
        let (shot, offscreen) = (tmp(&format!("shot-{backend}.png")), tmp(&format!("offscreen-{backend}.png")));
        let windowed = [&common[..], &resize, &["--window", "--screenshot", shot.to_str().unwrap()]].concat();
        let out = ok(&demo_on(backend, &windowed));
        assert!(out.contains("window 160x100"), "{backend}: the window opens at --width x --height: {out}");
        assert!(out.contains("(200x120, the last presented frame)"), "{backend}: {out}");
        assert!(out.contains("| window |"), "{backend}: the copy into the window is a pass of its own: {out}");
        ok(&demo_on(backend, &[&common[..], &resize, &["--out", offscreen.to_str().unwrap()]].concat()));
        let (a, b) = (image::open(&shot).unwrap().to_rgba8(), image::open(&offscreen).unwrap().to_rgba8());
        assert_eq!(a.dimensions(), (200, 120), "{backend}: the frame followed the window's new size");
        assert!(a == b, "{backend}: the presented frame differs from the same frame rendered offscreen");
        let distinct: std::collections::HashSet<_> = a.pixels().map(|p| p.0).collect();
        assert!(distinct.len() > 20, "{backend}: a rendered city ({} colors)", distinct.len());
    }
}

/// Asks `child`'s window (found by its `_NET_WM_PID`: other tests' demos may have windows
/// open too) to close as a window manager does (`WM_DELETE_WINDOW`), every quarter second
/// until `child` exits; `false` when it showed no window within a minute.
fn close_window(child: &mut std::process::Child) -> bool {
    use std::time::{Duration, Instant};
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{self, ConnectionExt as _};
    let (conn, screen) = x11rb::connect(None).unwrap();
    let root = conn.setup().roots[screen].root;
    let atom = |name: &str| conn.intern_atom(false, name.as_bytes()).unwrap().reply().unwrap().atom;
    let (protocols, delete, pid) = (atom("WM_PROTOCOLS"), atom("WM_DELETE_WINDOW"), atom("_NET_WM_PID"));
    let ours = |w: u32| {
        let prop = conn.get_property(false, w, pid, xproto::AtomEnum::CARDINAL, 0, 1);
        prop.ok().and_then(|c| c.reply().ok()).and_then(|r| r.value32().and_then(|mut v| v.next())) == Some(child.id())
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let window = loop {
        let children = conn.query_tree(root).unwrap().reply().unwrap().children;
        if let Some(w) = children.into_iter().find(|&w| ours(w)) {
            break w;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        let event = xproto::ClientMessageEvent::new(32, window, protocols, [delete, 0, 0, 0, 0]);
        // The window may be gone between the check and the send.
        let _ = conn.send_event(false, window, xproto::EventMask::NO_EVENT, event);
        let _ = conn.flush();
        std::thread::sleep(Duration::from_millis(250));
    }
    true
}

#[test]
fn closing_the_window_ends_the_run_with_the_summary() {
    if !display() {
        return;
    }
    use std::io::BufRead;
    let shot = tmp("closed.png");
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchyard-demo"))
        .env("WGPU_BACKEND", "vulkan")
        .args(["--window", "--objects", "300", "--width", "120", "--height", "80", "--frames", "1000000"])
        .args(["--progress-every", "0.05", "--screenshot", shot.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Frames are being presented once progress lines come; then close the window.
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen += &line;
        seen += "\n";
        if line.starts_with("progress: frame") {
            break;
        }
    }
    let rest = std::thread::spawn(move || lines.map(Result::unwrap).collect::<Vec<String>>().join("\n"));
    let found = close_window(&mut child);
    if !found {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    let out = seen + &rest.join().unwrap();
    assert!(found, "the demo showed no window: {out}");
    assert!(status.success(), "{out}");
    assert!(out.contains("frames/s completed on the GPU"), "the summary is printed: {out}");
    assert!(out.contains("the last presented frame"), "{out}");
    assert!(!out.contains("1000000/1000000"), "closed before the last frame: {out}");
    assert_eq!(image::open(&shot).unwrap().to_rgba8().dimensions(), (120, 80));
}

#[test]
fn window_flags_refuse_what_cannot_be_shown() {
    let line = one_line_error(&demo(&["--window", "--backend", "null"]));
    assert!(line.contains("--window"), "{line}");
    let line = one_line_error(&demo(&["--screenshot", "x.png", "--backend", "null"]));
    assert!(line.contains("--window"), "--screenshot needs --window: {line}");
    let line = one_line_error(&demo(&["--present", "mailbox", "--backend", "null"]));
    assert!(line.contains("--present"), "{line}");
    let line = one_line_error(&demo(&["--acquire", "early", "--backend", "null"]));
    assert!(line.contains("--acquire"), "{line}");
    let line = one_line_error(&demo(&["--frames-in-flight", "5", "--backend", "null"]));
    assert!(line.contains("--frames-in-flight"), "{line}");
    let line = one_line_error(&demo(&["--window", "--lose-device-at", "2"]));
    assert!(line.contains("--lose-device-at"), "{line}");
    let line = one_line_error(&demo(&["--window", "--screenshot", "/nonexistent/dir/x.png"]));
    assert!(line.contains("--screenshot"), "{line}");
}

#[test]
fn a_window_reports_the_wait_for_its_image_and_the_latency_to_present() {
    if !display() {
        return;
    }
    for (mode, in_flight, acquire) in [("fifo", "1", "late"), ("mailbox", "2", "early"), ("immediate", "3", "late")] {
        let args = ["--window", "--objects", "300", "--width", "120", "--height", "80", "--frames", "8"];
        let flags = ["--present", mode, "--frames-in-flight", in_flight, "--acquire", acquire];
        let out = ok(&demo_on("vulkan", &[&args[..], &flags].concat()));
        // Lavapipe under Xvfb offers all three; elsewhere a missing one falls back with a note.
        assert!(!out.contains("note: --present"), "{mode}: {out}");
        let row = match acquire {
            "late" => "| acquire the window's image (late: submission thread, after the passes before it) |",
            _ => "| acquire the window's image (early: before the frame) |",
        };
        assert!(out.contains(row), "{mode} {acquire}: {out}");
        assert!(out.contains("| latency: render call → present |"), "{mode}: {out}");
    }
}
