//! Command streams recorded and submitted on a backend.

use super::*;

/// Command streams through the null backend's validator: arbitrary commands over real,
/// destroyed and never-made handles, in a valid pass or a malformed one; what records is
/// submitted.
pub fn command_stream(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(multi_draw) = u.arbitrary() else { return };
    let _ = run_command_stream(&NullBackend::new(multi_draw), &mut u, &mut Log::default());
}

/// [`command_stream`] on `b` (its multi-draw capability stays what it is), noting what
/// recording and submitting gave in `log`. What it makes on `b` is destroyed again.
pub fn command_stream_on<B: Backend>(b: &B, data: &[u8], log: &mut Log) {
    let mut u = Unstructured::new(data);
    if u.arbitrary::<bool>().is_ok() {
        let _ = run_command_stream(b, &mut u, log);
    }
}

/// Counts that keep the work of a stream that passes validation small enough to run on a
/// software adapter, and the edges of what validation refuses.
fn count(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(*u.choose(&[0, 1, 2, 3, 4, 5, 6, 8, 9, 64, 255, 65_535, 65_536, 1 << 20, u32::MAX - 1, u32::MAX])?)
}

fn run_command_stream<B: Backend>(b: &B, u: &mut Unstructured<'_>, log: &mut Log) -> Result<()> {
    let q = crate::TwoQuads::create(b, 2).expect("the fixture");
    let made = q.resources();
    let r = run_stream(b, &q, u, log);
    for res in made {
        let _ = b.destroy(res);
    }
    r
}

fn run_stream<B: Backend>(b: &B, q: &crate::TwoQuads, u: &mut Unstructured<'_>, log: &mut Log) -> Result<()> {
    let gone =
        b.create_buffer(&BufferDesc { label: "gone".into(), size: 64, usage: BufferUsage::VERTEX }).expect("a buffer");
    b.destroy(Resource::Buffer(gone)).expect("destroyed");
    let Some((compute, compute_group, storage, compute_made)) = compute_fixture(b) else { return Ok(()) };
    let _destroy = Destroy(b, compute_made.to_vec());
    let groups = [q.group, compute_group, BindGroupId::default()];
    let pipelines = [q.pipeline, compute, PipelineId::default()];
    let buffers = [q.vertices, q.instances, q.indices, q.indirect, q.tints, storage, gone, BufferId::default()];
    // The pass first (an input that runs out of bytes reads zeros: the valid render pass).
    let mut pass = q.pass();
    match u.int_in_range(0..=7)? {
        4 | 5 => pass = PassDesc::compute("fuzz-compute"),
        6 => pass.depth = None,
        7 => pass.color = None,
        3 => {
            if let Some(c) = pass.color.as_mut() {
                c.store = switchyard::backend::StoreOp::Discard;
            }
        }
        _ => {}
    }
    let mut commands = Vec::new();
    // Most streams start with everything bound right for their pass, so what follows
    // reaches the draws and dispatches, and the GPU.
    if u.ratio(1, 4)? {
    } else if !pass.compute {
        commands.extend([
            Command::SetPipeline(q.pipeline),
            Command::SetBindGroup { index: 0, group: q.group, offsets: DynamicOffsets::from_slice(&[0]).expect("one") },
            Command::SetVertexBuffer { slot: 0, buffer: q.vertices, offset: 0 },
            Command::SetVertexBuffer { slot: 1, buffer: q.instances, offset: 0 },
            Command::SetIndexBuffer { buffer: q.indices, format: IndexFormat::Uint16, offset: 0 },
        ]);
    } else {
        commands.extend([
            Command::SetPipeline(compute),
            Command::SetBindGroup { index: 0, group: compute_group, offsets: DynamicOffsets::NONE },
        ]);
    }
    for _ in 0..u.int_in_range(0..=24)? {
        commands.push(match u.int_in_range(0..=9)? {
            0 => Command::SetPipeline(*u.choose(&pipelines)?),
            1 => Command::SetBindGroup {
                index: u.int_in_range(0..=4)?,
                group: *u.choose(&groups)?,
                offsets: DynamicOffsets::from_slice(&[u.int_in_range(0..=1024)?; 2][..u.int_in_range(0..=2)?])
                    .expect("at most two"),
            },
            2 => Command::SetVertexBuffer {
                slot: u.int_in_range(0..=3)?,
                buffer: *u.choose(&buffers)?,
                offset: u.int_in_range(0..=128)?,
            },
            3 => Command::SetIndexBuffer {
                buffer: *u.choose(&buffers)?,
                format: *u.choose(&[IndexFormat::Uint16, IndexFormat::Uint32])?,
                offset: u.int_in_range(0..=16)?,
            },
            4 => Command::Draw {
                first_vertex: count(u)?,
                vertex_count: count(u)?,
                first_instance: count(u)?,
                instance_count: count(u)?,
            },
            5 => Command::DrawIndexed {
                first_index: count(u)?,
                index_count: count(u)?,
                base_vertex: *u.choose(&[0, 1, -1, 4, i32::MIN, i32::MAX])?,
                first_instance: count(u)?,
                instance_count: count(u)?,
            },
            6 => Command::MultiDrawIndexedIndirect {
                buffer: *u.choose(&buffers)?,
                offset: u64::from(count(u)?),
                count: count(u)?,
            },
            // Small enough to run (a compute pass that validates runs on the GPU).
            7 => Command::Dispatch { x: count(u)?.min(70_000), y: u.int_in_range(0..=4)?, z: u.int_in_range(0..=4)? },
            8 => Command::DispatchIndirect { buffer: *u.choose(&buffers)?, offset: u64::from(count(u)?) },
            _ => Command::MultiDrawIndexedIndirectCount {
                buffer: *u.choose(&buffers)?,
                offset: u64::from(count(u)?),
                count_buffer: *u.choose(&buffers)?,
                count_offset: u64::from(count(u)?),
                max_count: count(u)?,
            },
        });
    }
    if let Ok(chunk) = log.note("record", b.record(&pass, ChunkPosition::SINGLE, &commands)) {
        let _ = log.note("submit", b.submit(&[], &mut [PassSubmit { desc: pass, chunks: vec![chunk] }]));
    }
    Ok(())
}

/// A compute pipeline writing one read-write storage buffer, its bind group, and the
/// buffer (also `INDIRECT`: an indirect dispatch from it while the group is bound
/// conflicts), and what was made (`None`: the backend has no compute).
fn compute_fixture<B: Backend>(b: &B) -> Option<(PipelineId, BindGroupId, BufferId, [Resource; 5])> {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> v: array<u32>;
        @compute @workgroup_size(1) fn main() { v[0] = 1u; }";
    let desc = switchyard::backend::ShaderModuleDesc { label: "fuzz-compute".into(), wgsl: wgsl.into() };
    let shader = b.create_shader(&desc).expect("a shader");
    let ty = BindingType::StorageReadWrite { dynamic: false };
    let entries = vec![LayoutEntry { binding: 0, visibility: Stages::COMPUTE, ty }];
    let layout = b.create_bind_group_layout(&BindGroupLayoutDesc { label: "fuzz".into(), entries }).expect("a layout");
    let usage = BufferUsage::STORAGE | BufferUsage::INDIRECT;
    let buffer = b.create_buffer(&BufferDesc { label: "storage".into(), size: 64, usage }).expect("a buffer");
    let entries = vec![BindEntry { binding: 0, resource: BindResource::Buffer { buffer, offset: 0, size: None } }];
    let group = b.create_bind_group(&BindGroupDesc { label: "fuzz".into(), layout, entries }).expect("a group");
    let pipeline = b.create_compute_pipeline(&ComputePipelineDesc {
        label: "fuzz".into(),
        shader,
        entry: "main".into(),
        bind_group_layouts: vec![layout],
    });
    let made = |p: Option<PipelineId>| {
        let mut r = vec![shader.into(), layout.into(), buffer.into(), group.into()];
        r.extend(p.map(Resource::from));
        r
    };
    match pipeline {
        Ok(p) => {
            let m = made(Some(p));
            Some((p, group, buffer, [m[0], m[1], m[2], m[3], m[4]]))
        }
        Err(_) => {
            for r in made(None).into_iter().rev() {
                let _ = b.destroy(r);
            }
            None
        }
    }
}
