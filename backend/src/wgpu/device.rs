//! Making the backend: on an adapter it picks (headless), on one the caller picked, or on
//! an engine's own device and queue.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::convert::texture_format;
use super::timing;
use super::{DeviceSink, Encoding, WgpuBackend, WgpuConfig};
use crate::command::Caps;
use crate::desc::TextureFormat;
use crate::error::InitError;

impl WgpuBackend {
    /// Picks the best adapter (high performance; a software one where there is no GPU) and
    /// creates a device with multi-draw-indirect support where the adapter has it.
    pub fn new(config: &WgpuConfig) -> Result<Self, InitError> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        if let Some(b) = config.backends {
            desc.backends = b;
        }
        desc.flags.set(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL, config.validate_indirect);
        let instance = wgpu::Instance::new(desc);
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: config.force_fallback_adapter,
            compatible_surface: None,
            apply_limit_buckets: false,
        }))
        .map_err(|e| InitError::NoAdapter(e.to_string()))?;
        Self::from_adapter(adapter, config.encoding)
    }

    /// Every adapter the instance sees (for choosing one explicitly in tests and the demo).
    pub fn enumerate(backends: wgpu::Backends) -> Vec<wgpu::Adapter> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends = backends;
        desc.flags.remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
        pollster::block_on(wgpu::Instance::new(desc).enumerate_adapters(backends))
    }

    /// Creates the backend on a chosen adapter.
    pub fn from_adapter(adapter: wgpu::Adapter, encoding: Encoding) -> Result<Self, InitError> {
        let wanted = wgpu::Features::INDIRECT_FIRST_INSTANCE
            | wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::PIPELINE_CACHE
            | wgpu::Features::TEXTURE_COMPRESSION_BC
            | wgpu::Features::MULTI_DRAW_INDIRECT_COUNT;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("switchyard"),
            required_features: adapter.features() & wanted,
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| InitError::Device(e.to_string()))?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| sink.lock().push(e.to_string())));
        let lost = Arc::new(AtomicBool::new(false));
        let flag = lost.clone();
        device.set_device_lost_callback(move |_reason, _msg| flag.store(true, Ordering::SeqCst));
        Ok(Self::on_device(&adapter, device, queue, encoding, Some((errors, lost))))
    }

    /// Switchyard on the engine's own device and queue (`adapter` is the one they came
    /// from). It never assumes it owns them: it installs no error handler or device-lost
    /// callback (the engine's stay in place), catches its own errors with error scopes,
    /// and creates, records and submits only its own work. Multi-draw and per-pass GPU
    /// timestamps (the stats' GPU times, Tracy's GPU zones) are used where the device was created with the features they need
    /// (`INDIRECT_FIRST_INSTANCE`, `MULTI_DRAW_INDIRECT_COUNT`, `TIMESTAMP_QUERY`). Render into the engine's textures
    /// with [`WgpuBackend::import_texture`].
    pub fn from_device(adapter: &wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue, encoding: Encoding) -> Self {
        Self::on_device(adapter, device, queue, encoding, None)
    }

    /// Overrides [`Caps::inlines_uniforms`], judged from the adapter (a CPU adapter, such
    /// as lavapipe, compiles a shader variant per set of values of the uniforms that steer
    /// its control flow): set it before a renderer is made on this backend, for a driver
    /// known better (or to run the GPUs' path on a software adapter).
    pub fn set_inlines_uniforms(&mut self, inlines: bool) {
        self.caps.inlines_uniforms = inlines;
    }

    /// `sink`: the error list and lost flag of a device this backend created (and so
    /// installed callbacks on); `None` for an engine's device.
    fn on_device(
        adapter: &wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        encoding: Encoding,
        sink: Option<DeviceSink>,
    ) -> Self {
        let info = adapter.get_info();
        let features = device.features();
        let downlevel = adapter.get_downlevel_capabilities();
        let limits = device.limits();
        let multi_draw_indirect = encoding == Encoding::CommandBuffer
            && features.contains(wgpu::Features::INDIRECT_FIRST_INSTANCE)
            && downlevel.flags.contains(wgpu::DownlevelFlags::INDIRECT_EXECUTION);
        let caps = Caps {
            // Render bundles have no multi-draw: a loop of indirect draws there measured
            // slower than direct draws (BENCHMARKS.md), so only native multi-draw counts.
            multi_draw_indirect,
            indirect_count: multi_draw_indirect && features.contains(wgpu::Features::MULTI_DRAW_INDIRECT_COUNT),
            indirect_draws: features.contains(wgpu::Features::INDIRECT_FIRST_INSTANCE)
                && downlevel.flags.contains(wgpu::DownlevelFlags::INDIRECT_EXECUTION),
            max_storage_buffers_per_stage: limits.max_storage_buffers_per_shader_stage,
            min_uniform_offset_alignment: limits
                .min_uniform_buffer_offset_alignment
                .max(limits.min_storage_buffer_offset_alignment),
            max_texture_size: limits.max_texture_dimension_2d,
            max_buffer_size: limits.max_buffer_size.min(limits.max_storage_buffer_binding_size).max(1 << 20),
            max_bind_groups: limits.max_bind_groups.min(4),
            transient_saves_memory: info.transient_saves_memory == Some(true),
            sample_counts: [
                TextureFormat::Rgba8Unorm,
                TextureFormat::Rgba8UnormSrgb,
                TextureFormat::Bgra8UnormSrgb,
                TextureFormat::Rgba16Float,
                TextureFormat::Depth32Float,
            ]
            .iter()
            .fold(1 | 2 | 4 | 8, |mask, &f| {
                let flags = adapter.get_texture_format_features(texture_format(f)).flags;
                let resolves = f.is_depth() || flags.contains(wgpu::TextureFormatFeatureFlags::MULTISAMPLE_RESOLVE);
                mask & [2, 4, 8]
                    .iter()
                    .fold(1, |m, &n| m | if resolves && flags.sample_count_supported(n) { n } else { 0 })
            }),
            gpu_timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY)
                && (encoding == Encoding::RenderBundle
                    || features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)),
            bc_textures: features.contains(wgpu::Features::TEXTURE_COMPRESSION_BC),
            inlines_uniforms: info.device_type == wgpu::DeviceType::Cpu,
            compute: downlevel.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
                && limits.max_compute_workgroups_per_dimension >= crate::command::MAX_WORKGROUPS_PER_DIMENSION,
        };
        let compute_mips = caps.compute
            && downlevel.flags.contains(wgpu::DownlevelFlags::VIEW_FORMATS)
            && limits.max_storage_textures_per_shader_stage >= 4
            && limits.max_compute_invocations_per_workgroup >= 64
            && adapter
                .get_texture_format_features(wgpu::TextureFormat::Rgba8Unorm)
                .allowed_usages
                .contains(wgpu::TextureUsages::STORAGE_BINDING);
        // Passes are timed where the submission thread begins them itself.
        let timer = caps.gpu_timestamps.then(|| timing::PassTimer::new(&device, &queue, info.backend)).flatten();
        let driver_cache = Self::empty_pipeline_cache(&device, &info);
        let owns_device = sink.is_some();
        let (errors, lost) = sink.unwrap_or_default();
        Self {
            timer,
            adapter_info: info,
            device,
            queue,
            reg: RwLock::default(),
            caps,
            encoding,
            errors,
            lost,
            owns_device,
            submissions: Mutex::new(Vec::new()),
            next_submission: Mutex::new(0),
            queue_use: Mutex::new(()),
            adapter: adapter.clone(),
            surfaces: Default::default(),
            driver_cache: RwLock::new(driver_cache),
            mips: std::sync::OnceLock::new(),
            compute_mips,
            staging: Default::default(),
            upload_ring: Default::default(),
        }
    }
}
