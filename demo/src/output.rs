//! What the demo writes: the frame's image (its path checked before rendering) and each
//! frame's stats as JSON.

use switchyard::FrameStats;

/// The image format `path` names, refused before any rendering when it is not one the
/// `image` crate writes here or its folder cannot take the file.
pub(crate) fn checked_out(path: &std::path::Path) -> Result<image::ImageFormat, String> {
    let format = image::ImageFormat::from_path(path)
        .map_err(|_| format!("--out {}: name a .png file (the format comes from the extension)", path.display()))?;
    if !format.writing_enabled() {
        return Err(format!("--out {}: {format:?} is not written by this build; use .png", path.display()));
    }
    writable(path, "--out")?;
    Ok(format)
}

/// Refused (named by `flag`) when `path`'s folder cannot take the file: checked before
/// rendering. Opens without truncating (an existing file keeps its bytes until it is
/// written); a file made only for this check goes again.
pub(crate) fn writable(path: &std::path::Path, flag: &str) -> Result<(), String> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Writes the GPU scopes of the newest frame read back as a chrome://tracing file
/// (wgpu-profiler's format): one event per timed pass.
pub(crate) fn write_gpu_trace(
    path: &std::path::Path,
    b: &switchyard::backend::wgpu::WgpuBackend,
) -> Result<(), String> {
    let (_, scopes) = b.gpu_profile().ok_or("--gpu-trace: no frame's GPU times were read back")?;
    switchyard::wgpu_profiler::chrometrace::write_chrometrace(path, &scopes)
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("wrote {} ({} GPU scopes of the last frame)", path.display(), scopes.len());
    Ok(())
}

/// Writes the last frame's RGBA pixels as `format` (formats without alpha get RGB).
pub(crate) fn write_image(
    path: &std::path::Path,
    format: image::ImageFormat,
    img: switchyard::backend::Image,
) -> Result<(), String> {
    let rgba = image::RgbaImage::from_raw(img.width, img.height, img.pixels)
        .ok_or_else(|| format!("writing {}: the read-back has the wrong size", path.display()))?;
    let mut out = image::DynamicImage::ImageRgba8(rgba);
    if !matches!(format, image::ImageFormat::Png | image::ImageFormat::Tiff | image::ImageFormat::WebP) {
        out = image::DynamicImage::ImageRgb8(out.to_rgb8());
    }
    out.save_with_format(path, format).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// One frame's stats as `FrameStats` serializes them (`switchyard`'s `serde` feature), each
/// pass with its name and GPU ms, the cull pass's GPU ms, and the backend's own report.
pub(crate) fn stats_json(s: &FrameStats, names: &[String], backend: Option<serde_json::Value>) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap_or_default();
    if let Some(passes) = v.get_mut("passes").and_then(serde_json::Value::as_array_mut) {
        for (i, (p, name)) in passes.iter_mut().zip(names).enumerate() {
            p["name"] = name.as_str().into();
            p["gpu_ms"] = s.gpu.and_then(|g| g.passes().get(i).copied()).into();
        }
    }
    v["gpu_cull_ms"] = s.gpu.and_then(|g| g.cull_ms).into();
    v["backend"] = backend.unwrap_or_default();
    v
}
