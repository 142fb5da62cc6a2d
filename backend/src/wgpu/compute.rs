//! Compute: pipelines, and compute passes encoded by the submission thread.
//!
//! A compute chunk keeps its validated commands (wgpu has no compute bundles); the
//! submission thread encodes them into a compute pass in the frame's order, under the same
//! registry lock the frame was checked with. Dispatches are few per frame, so this costs
//! the submission thread little.
use super::{Encoded, WgpuBackend, WgpuChunk, WgpuObjects};
use crate::command::Command;
use crate::desc::ComputePipelineDesc;
use crate::error::CreateError;
use crate::handle::PipelineId;
use crate::registry::{Registry, Stored};

/// A pipeline object: render or compute.
#[derive(Debug)]
pub(super) enum NativePipeline {
    Render(wgpu::RenderPipeline),
    Compute(wgpu::ComputePipeline),
}

impl WgpuBackend {
    pub(super) fn build_compute_pipeline(&self, desc: &ComputePipelineDesc) -> Result<PipelineId, CreateError> {
        let mut reg = self.reg.write();
        let meta = reg.check_compute_pipeline(desc, &self.caps)?;
        let layouts: Vec<_> = desc.bind_group_layouts.iter().map(|l| Some(&reg.layouts[*l].obj)).collect();
        let module = &reg.shaders[desc.shader].obj;
        let driver_cache = self.driver_cache.read();
        let obj = self.scoped(|| {
            let layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&desc.label),
                bind_group_layouts: &layouts,
                immediate_size: 0,
            });
            self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&desc.label),
                layout: Some(&layout),
                module,
                entry_point: Some(&desc.entry),
                compilation_options: Default::default(),
                cache: driver_cache.as_ref(),
            })
        })?;
        drop(layouts);
        Ok(reg.pipelines.insert(Stored { meta, obj: NativePipeline::Compute(obj) }))
    }
}

/// Encodes one compute pass's chunks (validated at record, checked to be compute chunks
/// at submit) into `enc`.
pub(super) fn encode_compute(
    enc: &mut wgpu::CommandEncoder,
    reg: &Registry<WgpuObjects>,
    label: &str,
    chunks: &[WgpuChunk],
    timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
) {
    #[cold]
    fn bug() -> ! {
        unreachable!("checked before encoding: a vanished handle, a draw or a render chunk in a compute pass")
    }
    let mut cp = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes });
    for chunk in chunks {
        let Encoded::Compute(commands) = &chunk.encoded else { bug() };
        for cmd in commands {
            match *cmd {
                Command::SetPipeline(p) => match &reg.pipelines.get(p).unwrap_or_else(|| bug()).obj {
                    NativePipeline::Compute(p) => cp.set_pipeline(p),
                    NativePipeline::Render(_) => bug(),
                },
                Command::SetBindGroup { index, group, offsets } => {
                    let g = &reg.bind_groups.get(group).unwrap_or_else(|| bug()).obj;
                    cp.set_bind_group(index, Some(g), offsets.as_slice());
                }
                Command::Dispatch { x, y, z } => cp.dispatch_workgroups(x, y, z),
                Command::DispatchIndirect { buffer, offset } => {
                    cp.dispatch_workgroups_indirect(&reg.buffers.get(buffer).unwrap_or_else(|| bug()).obj, offset)
                }
                // The validator refuses draws and vertex bindings in compute passes.
                _ => bug(),
            }
        }
    }
}
