//! What an engine does with the backend beyond the `Backend` trait: import its own
//! textures, present to its window's surface, lose the device on purpose (to test
//! recovery).

use std::sync::atomic::Ordering;

use super::convert::{from_buffer_usage, from_texture_format, from_texture_usage, texture_format};
use super::WgpuBackend;
use crate::desc::{BufferDesc, TextureDesc, TextureFormat, TextureUsage};
use crate::error::CreateError;
use crate::handle::{BufferId, SurfaceId, TextureId};
use crate::registry::Stored;
use crate::surface::check_size;
use crate::{Acquired, Resource, SkipReason, SurfaceError};

/// A window's surface as this backend drives it: its configuration (size 0 x 0: not
/// configured, a minimized window) and the image acquired and not yet presented.
pub(super) struct WgpuSurface {
    /// The acquired image and its handle here (dropped before its surface: fields drop in
    /// order).
    current: Option<(wgpu::SurfaceTexture, TextureId)>,
    /// Late acquire (render-bundle encoding only: bundles name no attachments): the handle
    /// frames are recorded into before their image exists, and the 1 x 1 placeholder it
    /// names while no image is bound (never drawn into: submits refuse it unbound).
    stand_in: Option<(TextureId, (wgpu::Texture, wgpu::TextureView))>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    format: TextureFormat,
}

impl WgpuSurface {
    pub(super) fn size(&self) -> (u32, u32) {
        (self.config.width, self.config.height)
    }
}

impl WgpuBackend {
    /// The wgpu texture behind `texture` (a handle: the engine may sample it, copy from it
    /// or keep it; this backend's handle stays valid until destroyed). `None` for a stale
    /// handle or a swapchain image.
    pub fn export_texture(&self, texture: TextureId) -> Option<wgpu::Texture> {
        let reg = self.reg.read();
        Some(reg.textures.get(texture)?.obj.0.clone())
    }

    /// Makes an engine texture (2D, one mip level, one sample) usable as a render target,
    /// a sampled texture or a readback source of this backend, as its usages allow. The
    /// engine keeps its texture: destroying the returned handle only drops this backend's
    /// reference.
    pub fn import_texture(&self, texture: &wgpu::Texture) -> Result<TextureId, CreateError> {
        let format = from_texture_format(texture.format())
            .ok_or_else(|| CreateError::Invalid(format!("texture format {:?} is not supported", texture.format())))?;
        if texture.dimension() != wgpu::TextureDimension::D2
            || texture.depth_or_array_layers() != 1
            || texture.mip_level_count() != 1
            || texture.sample_count() != 1
        {
            return Err(CreateError::Invalid(
                "only 2D textures of one layer, mip level and sample are imported".into(),
            ));
        }
        let usage = from_texture_usage(texture.usage());
        let desc = TextureDesc {
            label: "imported".into(),
            width: texture.width(),
            height: texture.height(),
            format,
            usage,
            samples: 1,
            mip_levels: 1,
        };
        let meta = self.reg.read().check_texture(&desc, &self.caps)?;
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        Ok(self.reg.write().textures.insert(Stored { meta, obj: (texture.clone(), view) }))
    }

    /// Makes an engine buffer usable by this backend as its usages allow (a fullscreen
    /// pass's uniform or storage binding, say: `Renderer::bind_buffer`). The engine keeps
    /// its buffer and writes it as it likes; destroying the returned handle only drops this
    /// backend's reference. A size that is not a multiple of 4, or a buffer with none of
    /// the usages this backend knows, is refused.
    pub fn import_buffer(&self, buffer: &wgpu::Buffer) -> Result<BufferId, CreateError> {
        let desc =
            BufferDesc { label: "imported".into(), size: buffer.size(), usage: from_buffer_usage(buffer.usage()) };
        let meta = self.reg.read().check_buffer(&desc, &self.caps)?;
        Ok(self.reg.write().buffers.insert(Stored { meta, obj: buffer.clone() }))
    }

    /// Whether the device was lost (its device-lost callback ran, on a device this backend
    /// created, or [`WgpuBackend::lose_device`] was called). Every call after it fails with
    /// a `DeviceLost` error; a `Renderer` then needs a new backend (`Renderer::recover`).
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Loses the device on purpose, as a driver reset or a removed GPU would: destroys the
    /// wgpu device (`Device::destroy`) and fails every later call with `DeviceLost`. For
    /// testing an engine's recovery (the demo's `--lose-device-at`); on an engine's device
    /// it destroys the engine's device too.
    pub fn lose_device(&self) {
        self.lost.store(true, Ordering::Release);
        self.device.destroy();
    }

    /// Drives `surface` (made by the engine from its window, on this backend's adapter's
    /// instance): configured for `width` x `height` (0 x 0: skipped until it has a size)
    /// in RGBA8 sRGB where the surface offers it, else BGRA8 sRGB
    /// ([`WgpuBackend::surface_format`]: declare the graph's output target with it), FIFO
    /// presentation. `Renderer::present_graph` then draws into its images.
    pub fn create_surface(
        &self,
        surface: wgpu::Surface<'static>,
        width: u32,
        height: u32,
    ) -> Result<SurfaceId, SurfaceError> {
        if self.is_lost() {
            return Err(SurfaceError::DeviceLost);
        }
        let caps = surface.get_capabilities(&self.adapter);
        let (format, wgpu_format) = [TextureFormat::Rgba8UnormSrgb, TextureFormat::Bgra8UnormSrgb]
            .into_iter()
            .map(|f| (f, texture_format(f)))
            .find(|(_, w)| caps.formats.contains(w))
            .ok_or_else(|| SurfaceError::Validation(format!("no sRGB RGBA8 or BGRA8 format in {:?}", caps.formats)))?;
        let config = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            format: wgpu_format,
            width: 0,
            height: 0,
            present_mode: wgpu::PresentMode::Fifo,
            desired_maximum_frame_latency: 2,
            alpha_mode: caps.alpha_modes.first().copied().unwrap_or(wgpu::CompositeAlphaMode::Auto),
            view_formats: Vec::new(),
            color_space: wgpu::SurfaceColorSpace::Auto,
        };
        let stand_in = match self.encoding {
            super::Encoding::RenderBundle => Some(self.stand_in(format, width, height)?),
            super::Encoding::CommandBuffer => None,
        };
        let surface = WgpuSurface { surface, config, format, current: None, stand_in };
        let id = self.surfaces.surfaces.lock().insert(surface);
        if let Err(e) = self.configure(id, width, height) {
            if let Some((t, _)) = self.surfaces.surfaces.lock().remove(id).and_then(|s| s.stand_in) {
                let _ = self.reg.write().destroy(Resource::Texture(t));
            }
            return Err(e);
        }
        Ok(id)
    }

    /// A surface's stand-in: registered at the surface's size (checked), its native object
    /// a 1 x 1 placeholder until an image is bound.
    fn stand_in(
        &self,
        format: TextureFormat,
        width: u32,
        height: u32,
    ) -> Result<(TextureId, (wgpu::Texture, wgpu::TextureView)), SurfaceError> {
        let desc = TextureDesc {
            label: "surface stand-in".into(),
            width: width.max(1),
            height: height.max(1),
            format,
            usage: TextureUsage::RENDER_TARGET,
            samples: 1,
            mip_levels: 1,
        };
        let mut reg = self.reg.write();
        let meta = reg.check_texture(&desc, &self.caps).map_err(|e| SurfaceError::Validation(e.to_string()))?;
        let placeholder = self.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("surface stand-in"),
            size: wgpu::Extent3d { width: 1, height: 1, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: texture_format(format),
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let placeholder = (placeholder.clone(), placeholder.create_view(&wgpu::TextureViewDescriptor::default()));
        let meta = crate::registry::TextureMeta { unbound: true, ..meta };
        Ok((reg.textures.insert(Stored { meta, obj: placeholder.clone() }), placeholder))
    }

    /// The presentation modes `surface` offers (FIFO everywhere).
    pub fn present_modes(&self, surface: SurfaceId) -> Result<Vec<wgpu::PresentMode>, SurfaceError> {
        let surfaces = self.surfaces.surfaces.lock();
        let s = surfaces.get(surface).ok_or(SurfaceError::InvalidHandle)?;
        Ok(s.surface.get_capabilities(&self.adapter).present_modes)
    }

    /// Presents `surface`'s images in `mode` (FIFO by default: one image per vertical
    /// blank; `Mailbox`: the newest image at the blank, none waits; `Immediate`: at once,
    /// tearing). Configured again now where the surface has a size (waits for its image
    /// out, as a resize does). A mode the surface does not offer is refused
    /// ([`SurfaceError::PresentMode`]) and the current one kept.
    pub fn set_present_mode(&self, surface: SurfaceId, mode: wgpu::PresentMode) -> Result<(), SurfaceError> {
        if self.is_lost() {
            return Err(SurfaceError::DeviceLost);
        }
        let (width, height) = {
            let mut surfaces = self.surfaces.surfaces.lock();
            let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
            let offered = s.surface.get_capabilities(&self.adapter).present_modes;
            // The automatic modes pick among the offered ones themselves.
            let automatic = matches!(mode, wgpu::PresentMode::AutoVsync | wgpu::PresentMode::AutoNoVsync);
            if !automatic && !offered.contains(&mode) {
                return Err(SurfaceError::PresentMode { asked: format!("{mode:?}"), offered: format!("{offered:?}") });
            }
            s.config.present_mode = mode;
            s.size()
        };
        self.configure(surface, width, height)
    }

    /// The format of `surface`'s images.
    pub fn surface_format(&self, surface: SurfaceId) -> Option<TextureFormat> {
        self.surfaces.surfaces.lock().get(surface).map(|s| s.format)
    }

    /// Drops the image acquired and not presented (its registry entry with it).
    fn release(&self, s: &mut WgpuSurface) {
        if let Some((_, id)) = s.current.take() {
            self.unbind(s, id);
        }
        self.surfaces.image_back();
    }

    /// An image's handle given up: an early-acquired image's entry is removed, a
    /// late-acquired one's stand-in names its placeholder again.
    fn unbind(&self, s: &WgpuSurface, image: TextureId) {
        let mut reg = self.reg.write();
        match &s.stand_in {
            Some((id, placeholder)) if *id == image => {
                if let Some(t) = reg.textures.get_mut(image) {
                    (t.obj, t.meta.unbound) = (placeholder.clone(), true);
                }
            }
            _ => {
                let _ = reg.destroy(Resource::Texture(image));
            }
        }
    }

    /// [`crate::Backend::surface_stand_in`].
    pub(super) fn surface_stand_in_of(&self, surface: SurfaceId) -> Option<TextureId> {
        self.surfaces.surfaces.lock().get(surface)?.stand_in.as_ref().map(|(id, _)| *id)
    }

    /// [`crate::Backend::acquire_late`]: the next image bound to the stand-in.
    pub(super) fn acquire_into_stand_in(&self, surface: SurfaceId, size: (u32, u32)) -> Result<Acquired, SurfaceError> {
        if self.is_lost() {
            return Err(SurfaceError::DeviceLost);
        }
        let mut surfaces = self.surfaces.idle(surface, |s| s.current.is_some())?;
        let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
        let id = s.stand_in.as_ref().map(|(id, _)| *id).ok_or(SurfaceError::Unsupported)?;
        if s.config.width == 0 || s.config.height == 0 {
            return Ok(Acquired::Skip(SkipReason::ZeroSize));
        }
        if s.size() != size {
            return Ok(Acquired::Skip(SkipReason::Resized));
        }
        let texture = match next_image(&s.surface)? {
            Ok(t) => t,
            Err(skip) => return Ok(Acquired::Skip(skip)),
        };
        if (texture.texture.width(), texture.texture.height()) != size {
            // Dropped unpresented: the surface changed under the frame.
            return Ok(Acquired::Skip(SkipReason::Resized));
        }
        let view = texture.texture.create_view(&wgpu::TextureViewDescriptor::default());
        if let Some(t) = self.reg.write().textures.get_mut(id) {
            (t.obj, t.meta.unbound) = ((texture.texture.clone(), view), false);
        }
        s.current = Some((texture, id));
        Ok(Acquired::Image(id))
    }

    pub(super) fn release_surface_image(&self, surface: SurfaceId) {
        if let Some(s) = self.surfaces.surfaces.lock().get_mut(surface) {
            self.release(s);
        }
    }

    pub(super) fn configure(&self, surface: SurfaceId, width: u32, height: u32) -> Result<(), SurfaceError> {
        if self.is_lost() {
            return Err(SurfaceError::DeviceLost);
        }
        check_size(width, height, self.caps.max_texture_size)?;
        let mut surfaces = self.surfaces.idle(surface, |s| s.current.is_some())?;
        let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
        (s.config.width, s.config.height) = (width, height);
        if width == 0 || height == 0 {
            return Ok(());
        }
        if let Some((id, _)) = &s.stand_in {
            if let Some(t) = self.reg.write().textures.get_mut(*id) {
                (t.meta.width, t.meta.height) = (width, height);
            }
        }
        // Not while the submission thread submits (a late-acquired frame's first part).
        let _queue = self.queue_use.lock();
        self.scoped(|| s.surface.configure(&self.device, &s.config)).map_err(|e| match e {
            CreateError::DeviceLost => SurfaceError::DeviceLost,
            e => SurfaceError::Validation(e.to_string()),
        })
    }

    pub(super) fn acquire_image(&self, surface: SurfaceId) -> Result<Acquired, SurfaceError> {
        if self.is_lost() {
            return Err(SurfaceError::DeviceLost);
        }
        // One image out at a time: the last frame's is presented (or released) first.
        let mut surfaces = self.surfaces.idle(surface, |s| s.current.is_some())?;
        let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
        if s.config.width == 0 || s.config.height == 0 {
            return Ok(Acquired::Skip(SkipReason::ZeroSize));
        }
        let texture = match next_image(&s.surface)? {
            Ok(t) => t,
            Err(skip) => return Ok(Acquired::Skip(skip)),
        };
        let desc = TextureDesc {
            label: "surface".into(),
            width: s.config.width,
            height: s.config.height,
            format: s.format,
            usage: TextureUsage::RENDER_TARGET,
            samples: 1,
            mip_levels: 1,
        };
        let meta =
            self.reg.read().check_texture(&desc, &self.caps).map_err(|e| SurfaceError::Validation(e.to_string()))?;
        let view = texture.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let id = self.reg.write().textures.insert(Stored { meta, obj: (texture.texture.clone(), view) });
        s.current = Some((texture, id));
        Ok(Acquired::Image(id))
    }

    pub(super) fn present_image(&self, surface: SurfaceId) -> Result<(), SurfaceError> {
        if self.is_lost() {
            return Err(SurfaceError::DeviceLost);
        }
        let mut surfaces = self.surfaces.surfaces.lock();
        let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
        let (texture, id) = s.current.take().ok_or(SurfaceError::NotAcquired)?;
        self.unbind(s, id);
        self.queue.present(texture);
        self.surfaces.image_back();
        Ok(())
    }
}

/// The surface's next image, or why there is none this frame.
fn next_image(surface: &wgpu::Surface<'static>) -> Result<Result<wgpu::SurfaceTexture, SkipReason>, SurfaceError> {
    match surface.get_current_texture() {
        wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => Ok(Ok(t)),
        wgpu::CurrentSurfaceTexture::Timeout => Ok(Err(SkipReason::Timeout)),
        wgpu::CurrentSurfaceTexture::Occluded => Ok(Err(SkipReason::Occluded)),
        wgpu::CurrentSurfaceTexture::Outdated => Err(SurfaceError::Outdated),
        wgpu::CurrentSurfaceTexture::Lost => Err(SurfaceError::Lost),
        other => Err(SurfaceError::Validation(format!("acquire: {other:?}"))),
    }
}
