//! The files that carry pipelines from one run to the next: the driver's pipeline cache
//! (`--pipeline-cache`, wgpu) and Switchyard's pipeline log (`--pipeline-log`, any backend).

use std::path::Path;
use std::time::Instant;

use switchyard::backend::wgpu::WgpuBackend;
use switchyard::backend::Backend;
use switchyard::{LogSkip, PipelineLog, Renderer};

use crate::Args;

/// Writes `bytes` beside `path`, then renames: a run stopped midway leaves the old file whole.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// `--pipeline-log`: the log in `path` replayed, or a note why not.
pub(crate) fn replay_log<B: Backend>(r: &mut Renderer<B>, path: &Path) -> Result<(), String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("pipeline log: {} not found; nothing to replay", path.display());
            return Ok(());
        }
        Err(e) => {
            println!("note: pipeline log {} not read ({e}); nothing replayed", path.display());
            return Ok(());
        }
    };
    let log: PipelineLog = match serde_json::from_str(&text) {
        Ok(log) => log,
        Err(e) => {
            println!("note: pipeline log {} ignored: not a pipeline log ({e})", path.display());
            return Ok(());
        }
    };
    let t = Instant::now();
    let replay = r.warm_up_log(&log).map_err(|e| e.to_string())?;
    println!(
        "pipeline log: {} entries, {} pipelines and {} shader modules created, {} found made, {} skipped, in {:.1} ms",
        log.entries.len(),
        replay.pipelines_created,
        replay.shader_modules_created,
        replay.found,
        replay.skipped.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    for (i, why) in replay.skipped.iter().take(3) {
        let why = match why {
            LogSkip::UnknownShader(s) => format!("no shader `{s}`"),
            LogSkip::UnknownKeyword(k) => format!("its shader has no keyword `{k}`"),
            LogSkip::NoEntryPoint(p) => format!("its shader has no {p:?} entry point"),
            LogSkip::Refused(e) => format!("refused: {e}"),
            other => format!("{other:?}"),
        };
        println!("  entry {i} skipped: {why}");
    }
    Ok(())
}

/// `--pipeline-log`: the pipelines the run made, written to the file at its end.
pub(crate) fn save_log<B: Backend>(r: &Renderer<B>, path: &Path) -> Result<(), String> {
    let log = r.pipeline_log();
    let json = serde_json::to_string_pretty(&log).map_err(|e| format!("pipeline log: {e}"))?;
    write_whole(path, json.as_bytes())?;
    println!("pipeline log: {} pipelines written to {}", log.entries.len(), path.display());
    Ok(())
}

/// `--pipeline-cache`: the driver's cache written to the file at the end of the run.
pub(crate) fn save_cache(b: &WgpuBackend, args: &Args) -> Result<(), String> {
    match (&args.pipeline_cache, b.pipeline_cache_bytes()) {
        (Some(path), Some(bytes)) => {
            write_whole(path, &bytes)?;
            println!("pipeline cache: {} bytes written to {}", bytes.len(), path.display());
        }
        (Some(_), None) => println!("pipeline cache: this device keeps none; nothing written"),
        (None, _) => {}
    }
    Ok(())
}

/// `--pipeline-cache`: the file's cache for the pipelines to come, or a note why not.
pub(crate) fn load_cache(b: &WgpuBackend, path: &Path) {
    match std::fs::read(path) {
        Ok(bytes) => match b.load_pipeline_cache(&bytes) {
            Ok(n) => println!("pipeline cache: {n} bytes of driver data from {}", path.display()),
            Err(e) => println!("note: pipeline cache {} ignored: {e}", path.display()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("pipeline cache: {} not found; starting empty", path.display())
        }
        Err(e) => println!("note: pipeline cache {} not read ({e}); starting empty", path.display()),
    }
}
