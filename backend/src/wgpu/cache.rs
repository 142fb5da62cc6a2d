//! The driver's pipeline cache, kept between runs: [`WgpuBackend::pipeline_cache_bytes`]
//! gives what the driver compiled so far, wrapped with the adapter's cache key and a
//! checksum; [`WgpuBackend::load_pipeline_cache`] hands such bytes back to a new device's
//! pipelines. wgpu requires that the data came from `PipelineCache::get_data` of a
//! compatible adapter (handing the driver anything else is undefined behaviour), so a file
//! that is not exactly what this backend wrote for this adapter is refused with a typed
//! error and the cache starts empty: a corrupt or foreign file never reaches the driver.
//! Devices without `Features::PIPELINE_CACHE` (GL, the browser, some drivers) have none.

use super::WgpuBackend;

/// File magic and format version.
const MAGIC: &[u8; 8] = b"SWYDPC01";

/// Why pipeline-cache bytes were refused ([`WgpuBackend::load_pipeline_cache`]); the
/// backend then goes on with an empty cache.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PipelineCacheError {
    /// The device has no pipeline cache (`Features::PIPELINE_CACHE`).
    #[error("this device keeps no pipeline cache")]
    Unsupported,
    /// Not a Switchyard pipeline cache (or one of another format version).
    #[error("not a Switchyard pipeline cache")]
    NotACache,
    /// Written for another adapter or driver (its cache key differs).
    #[error("written for another adapter or driver ({0})")]
    OtherAdapter(String),
    /// Cut short, or its checksum does not match its contents.
    #[error("corrupt: {0}")]
    Corrupt(&'static str),
}

/// `bytes` split at `n`, or `Corrupt` when it is shorter.
fn take(bytes: &[u8], n: usize) -> Result<(&[u8], &[u8]), PipelineCacheError> {
    (bytes.len() >= n).then(|| bytes.split_at(n)).ok_or(PipelineCacheError::Corrupt("cut short"))
}

fn read_u64(bytes: &[u8]) -> Result<(u64, &[u8]), PipelineCacheError> {
    let (n, rest) = take(bytes, 8)?;
    Ok((u64::from_le_bytes(n.try_into().expect("8 bytes")), rest))
}

/// The driver data inside `file`, if it was written for the adapter of `key`.
fn unwrap_cache<'a>(file: &'a [u8], key: &str) -> Result<&'a [u8], PipelineCacheError> {
    let rest = file.strip_prefix(MAGIC.as_slice()).ok_or(PipelineCacheError::NotACache)?;
    let (key_len, rest) = read_u64(rest)?;
    let (file_key, rest) =
        take(rest, usize::try_from(key_len).map_err(|_| PipelineCacheError::Corrupt("key length"))?)?;
    if file_key != key.as_bytes() {
        return Err(PipelineCacheError::OtherAdapter(String::from_utf8_lossy(file_key).into_owned()));
    }
    let (crc, rest) = read_u64(rest)?;
    let (len, data) = read_u64(rest)?;
    if data.len() as u64 != len {
        return Err(PipelineCacheError::Corrupt("length"));
    }
    if u64::from(crc32fast::hash(data)) != crc {
        return Err(PipelineCacheError::Corrupt("checksum"));
    }
    Ok(data)
}

/// `data` wrapped for the adapter of `key`.
fn wrap_cache(data: &[u8], key: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + 24 + key.len() + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&u64::from(crc32fast::hash(data)).to_le_bytes());
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(data);
    out
}

impl WgpuBackend {
    /// The adapter's cache key, where its device keeps a pipeline cache.
    fn cache_key(&self) -> Option<String> {
        self.device
            .features()
            .contains(wgpu::Features::PIPELINE_CACHE)
            .then(|| wgpu::util::pipeline_cache_key(&self.adapter_info))
            .flatten()
    }

    /// Starts an empty pipeline cache where the device has one (at creation).
    pub(super) fn empty_pipeline_cache(device: &wgpu::Device, info: &wgpu::AdapterInfo) -> Option<wgpu::PipelineCache> {
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) || wgpu::util::pipeline_cache_key(info).is_none()
        {
            return None;
        }
        // SAFETY: no data is given, so none can be foreign.
        Some(unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("switchyard"),
                data: None,
                fallback: true,
            })
        })
    }

    /// Whether this device keeps a pipeline cache.
    pub fn has_pipeline_cache(&self) -> bool {
        self.cache_key().is_some()
    }

    /// What the driver's pipeline cache holds now, wrapped to be written to a file and
    /// handed to [`WgpuBackend::load_pipeline_cache`] in a later run (`None` where the
    /// device keeps no cache). Save it after the pipelines were made (after
    /// `Renderer::warm_up`, or at exit).
    pub fn pipeline_cache_bytes(&self) -> Option<Vec<u8>> {
        let key = self.cache_key()?;
        let data = self.driver_cache.read().as_ref()?.get_data()?;
        Some(wrap_cache(&data, &key))
    }

    /// Uses `file` (bytes [`WgpuBackend::pipeline_cache_bytes`] gave, on this adapter and
    /// driver) as the pipeline cache of the pipelines created from now on: load it before
    /// the renderer makes its pipelines. Returns the driver data's size.
    ///
    /// # Errors
    /// [`PipelineCacheError`]: no cache on this device, or bytes that are not exactly
    /// what this backend wrote for this adapter (another format, adapter or driver, cut
    /// short, a checksum that does not match). The cache then stays as it was.
    pub fn load_pipeline_cache(&self, file: &[u8]) -> Result<usize, PipelineCacheError> {
        let key = self.cache_key().ok_or(PipelineCacheError::Unsupported)?;
        let data = unwrap_cache(file, &key)?;
        // SAFETY: `data` is what `PipelineCache::get_data` returned on an adapter with
        // this cache key (checked: the wrapper's key and checksum match).
        let cache = unsafe {
            self.device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("switchyard"),
                data: Some(data),
                fallback: true,
            })
        };
        *self.driver_cache.write() = Some(cache);
        Ok(data.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_data_comes_back_and_anything_else_is_refused() {
        let data: Vec<u8> = (0..200u8).collect();
        let file = wrap_cache(&data, "adapter-a");
        assert_eq!(unwrap_cache(&file, "adapter-a"), Ok(&data[..]));
        assert!(
            matches!(unwrap_cache(&file, "adapter-b"), Err(PipelineCacheError::OtherAdapter(k)) if k == "adapter-a")
        );
        assert_eq!(unwrap_cache(b"hello", "adapter-a"), Err(PipelineCacheError::NotACache));
        assert_eq!(unwrap_cache(&[], "adapter-a"), Err(PipelineCacheError::NotACache));
        // Every cut, and a flipped bit anywhere past the magic, is refused.
        for cut in MAGIC.len()..file.len() {
            assert!(unwrap_cache(&file[..cut], "adapter-a").is_err(), "cut at {cut}");
        }
        for at in MAGIC.len()..file.len() {
            let mut bad = file.clone();
            bad[at] ^= 0x10;
            assert!(unwrap_cache(&bad, "adapter-a").is_err(), "bit flipped at {at}");
        }
        // A huge key length does not allocate or panic.
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(unwrap_cache(&huge, "adapter-a"), Err(PipelineCacheError::Corrupt(_))));
    }
}
