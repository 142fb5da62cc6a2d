//! The null backend: valid streams pass with stable digests; each kind of invalid command
//! returns its typed error and changes nothing.

use switchyard_backend::null::NullBackend;
use switchyard_backend::*;
use switchyard_tests::TwoQuads;

fn setup() -> (NullBackend, TwoQuads) {
    let b = NullBackend::new(true);
    let s = TwoQuads::create(&b, 0).expect("fixture");
    (b, s)
}

fn submit_one(b: &NullBackend, s: &TwoQuads, cmds: &[Command]) -> u64 {
    let chunk = b.record(&s.pass(), ChunkPosition::SINGLE, cmds).expect("valid stream");
    b.submit(&[], &mut [PassSubmit { desc: s.pass(), chunks: vec![chunk] }]).expect("submit");
    b.last_frame().digest
}

#[test]
fn valid_streams_pass_and_count() {
    let (b, s) = setup();
    let chunk = b.record(&s.pass(), ChunkPosition::SINGLE, &s.direct_stream()).unwrap();
    assert_eq!(chunk.counts.draw_calls, 2);
    assert_eq!(chunk.counts.state_changes, 5);
    let chunk = b.record(&s.pass(), ChunkPosition::SINGLE, &s.indirect_stream()).unwrap();
    assert_eq!(chunk.counts.draw_calls, 1);
    assert_eq!(chunk.counts.draws, 2);
}

#[test]
fn digest_is_stable_across_runs_and_backend_instances() {
    let (b1, s1) = setup();
    let (b2, s2) = setup();
    let d1 = submit_one(&b1, &s1, &s1.direct_stream());
    let d2 = submit_one(&b2, &s2, &s2.direct_stream());
    assert_eq!(d1, d2);
    // Pinned: a change here means digests changed between versions or machines.
    assert_eq!(format!("{d1:016x}"), "78f2c9109d4e48dd");
    assert_ne!(d1, submit_one(&b1, &s1, &s1.indirect_stream()));
}

#[test]
fn digest_is_the_same_for_any_split_into_threads() {
    let (b, s) = setup();
    let streams = s.chunked_streams(2);
    let chunks: Vec<_> = std::thread::scope(|sc| {
        let hs: Vec<_> = streams
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (b, s) = (&b, &s);
                sc.spawn(move || b.record(&s.pass(), ChunkPosition { index: i as u32, count: 2 }, c).unwrap())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    b.submit(&[], &mut [PassSubmit { desc: s.pass(), chunks }]).unwrap();
    let threaded = b.last_frame().digest;
    let serial: Vec<_> = streams.iter().map(|c| b.record(&s.pass(), ChunkPosition::SINGLE, c).unwrap()).collect();
    b.submit(&[], &mut [PassSubmit { desc: s.pass(), chunks: serial }]).unwrap();
    assert_eq!(threaded, b.last_frame().digest);
}

fn record_err(b: &NullBackend, s: &TwoQuads, cmds: &[Command]) -> RecordError {
    b.record(&s.pass(), ChunkPosition::SINGLE, cmds).expect_err("invalid stream must fail")
}

#[test]
fn each_invalid_command_has_its_error() {
    let (b, s) = setup();
    let st = s.state();
    let draw = TwoQuads::draw(0);

    assert_eq!(record_err(&b, &s, &[draw]), RecordError::NoPipeline { index: 0 });
    assert_eq!(
        record_err(&b, &s, &[st[0], st[2], st[3], st[4], draw]),
        RecordError::MissingBindGroup { index: 4, group: 0 }
    );
    assert_eq!(
        record_err(&b, &s, &[st[0], st[1], st[2], st[4], draw]),
        RecordError::MissingVertexBuffer { index: 4, slot: 1 }
    );
    assert_eq!(record_err(&b, &s, &[st[0], st[1], st[2], st[3], draw]), RecordError::MissingIndexBuffer { index: 4 });

    let mut v = st.to_vec();
    v.push(Command::DrawIndexed {
        first_index: 4,
        index_count: 6,
        base_vertex: 0,
        first_instance: 0,
        instance_count: 1,
    });
    assert!(matches!(record_err(&b, &s, &v), RecordError::OutOfRange { index: 5, what: "index", .. }));

    let mut v = st.to_vec();
    v.push(Command::DrawIndexed {
        first_index: 0,
        index_count: 6,
        base_vertex: 0,
        first_instance: 2,
        instance_count: 1,
    });
    assert!(matches!(record_err(&b, &s, &v), RecordError::OutOfRange { index: 5, what: "instance", .. }));

    let mut v = st.to_vec();
    v.push(Command::Draw { first_vertex: 0, vertex_count: 9, first_instance: 0, instance_count: 1 });
    assert!(matches!(record_err(&b, &s, &v), RecordError::OutOfRange { index: 5, what: "vertex", .. }));

    let bad_usage = [Command::SetVertexBuffer { slot: 0, buffer: s.indices, offset: 0 }];
    assert_eq!(record_err(&b, &s, &bad_usage), RecordError::BadUsage { index: 0, usage: "VERTEX" });

    let no_offsets = [Command::SetBindGroup { index: 0, group: s.group, offsets: DynamicOffsets::NONE }];
    assert!(matches!(record_err(&b, &s, &no_offsets), RecordError::LayoutMismatch { index: 0, .. }));
    let misaligned = [Command::SetBindGroup { index: 0, group: s.group, offsets: DynamicOffsets::one(4) }];
    assert!(matches!(record_err(&b, &s, &misaligned), RecordError::LayoutMismatch { index: 0, .. }));
    let past_end = [Command::SetBindGroup { index: 0, group: s.group, offsets: DynamicOffsets::one(512) }];
    assert!(matches!(record_err(&b, &s, &past_end), RecordError::OutOfRange { index: 0, what: "dynamic binding", .. }));

    let mut v = st.to_vec();
    v.push(Command::MultiDrawIndexedIndirect { buffer: s.indirect, offset: 0, count: 3 });
    assert!(matches!(record_err(&b, &s, &v), RecordError::OutOfRange { index: 5, what: "indirect records", .. }));
    let mut v = st.to_vec();
    v.push(Command::MultiDrawIndexedIndirect { buffer: s.vertices, offset: 0, count: 1 });
    assert_eq!(record_err(&b, &s, &v), RecordError::BadUsage { index: 5, usage: "INDIRECT" });
}

#[test]
fn multi_draw_needs_the_capability() {
    let caps = NullBackend::new(false).caps();
    let b = NullBackend::with_caps(switchyard::backend::Caps { indirect_draws: false, ..caps });
    let s = TwoQuads::create(&b, 0).unwrap();
    assert_eq!(
        b.record(&s.pass(), ChunkPosition::SINGLE, &s.indirect_stream()).unwrap_err(),
        RecordError::Unsupported { index: 5, what: "multi-draw-indirect" }
    );
}

#[test]
fn count_draws_need_the_capability_and_in_range_indirect_buffers() {
    let count = |buffer, count_buffer, count_offset, max_count| Command::MultiDrawIndexedIndirectCount {
        buffer,
        offset: 0,
        count_buffer,
        count_offset,
        max_count,
    };
    let without =
        NullBackend::with_caps(switchyard::backend::Caps { indirect_count: false, ..NullBackend::new(true).caps() });
    let s = TwoQuads::create(&without, 0).unwrap();
    let mut v = s.state().to_vec();
    v.push(count(s.indirect, s.indirect, 36, 2));
    assert_eq!(
        record_err(&without, &s, &v),
        RecordError::Unsupported { index: 5, what: "multi-draw-indirect with a count buffer" }
    );

    let b = NullBackend::new(true);
    let s = TwoQuads::create(&b, 0).unwrap();
    let stream = |c| {
        let mut v = s.state().to_vec();
        v.push(c);
        v
    };
    // Two records in 40 bytes; the count may share their buffer.
    let counts = b.record(&s.pass(), ChunkPosition::SINGLE, &stream(count(s.indirect, s.indirect, 36, 2)));
    assert!(counts.is_ok(), "{counts:?}");
    let refused = [
        (count(s.indirect, s.indirect, 36, 3), "indirect records"),
        (count(s.indirect, s.indirect, 40, 2), "indirect count"),
        (count(s.indirect, s.indirect, 2, 2), "indirect count"),
    ];
    for (c, what) in refused {
        assert!(
            matches!(record_err(&b, &s, &stream(c)), RecordError::OutOfRange { index: 5, what: w, .. } if w == what),
            "{c:?}"
        );
    }
    assert_eq!(
        record_err(&b, &s, &stream(count(s.indirect, s.vertices, 0, 1))),
        RecordError::BadUsage { index: 5, usage: "INDIRECT" }
    );
    assert_eq!(
        record_err(&b, &s, &stream(count(s.vertices, s.indirect, 0, 1))),
        RecordError::BadUsage { index: 5, usage: "INDIRECT" }
    );
    // Before a pipeline is bound: the draw's bindings are checked too.
    assert_eq!(record_err(&b, &s, &[count(s.indirect, s.indirect, 36, 2)]), RecordError::NoPipeline { index: 0 });
}

#[test]
fn stale_handles_are_errors() {
    let (b, s) = setup();
    b.destroy(Resource::Pipeline(s.pipeline)).unwrap();
    assert_eq!(
        record_err(&b, &s, &s.direct_stream()),
        RecordError::InvalidHandle { index: 0, kind: ResourceKind::Pipeline }
    );
    assert_eq!(
        b.destroy(Resource::Pipeline(s.pipeline)),
        Err(DestroyError::InvalidHandle { kind: ResourceKind::Pipeline })
    );
    b.destroy(Resource::Buffer(s.vertices)).unwrap();
    assert_eq!(b.write_buffer(s.vertices, 0, &[0; 4]), Err(WriteError::InvalidHandle { kind: ResourceKind::Buffer }));
    // A new buffer reuses the slot but not the generation: the old handle stays stale.
    let fresh = b
        .create_buffer(&BufferDesc { label: "x".into(), size: 64, usage: BufferUsage::VERTEX | BufferUsage::COPY_DST })
        .unwrap();
    assert_ne!(fresh, s.vertices);
    assert!(b.write_buffer(s.vertices, 0, &[0; 4]).is_err());
}

#[test]
fn pass_structure_is_checked() {
    let (b, s) = setup();
    let mut p = s.pass();
    p.color = None;
    p.depth = None;
    assert_eq!(b.record(&p, ChunkPosition::SINGLE, &[]).unwrap_err(), RecordError::Pass(PassError::NoAttachments));

    let small = b
        .create_texture(&TextureDesc {
            label: "small".into(),
            width: 8,
            height: 8,
            format: TextureFormat::Depth32Float,
            usage: TextureUsage::RENDER_TARGET,
            samples: 1,
            mip_levels: 1,
        })
        .unwrap();
    let mut p = s.pass();
    p.depth.as_mut().unwrap().texture = small;
    assert_eq!(b.record(&p, ChunkPosition::SINGLE, &[]).unwrap_err(), RecordError::Pass(PassError::SizeMismatch));

    let mut p = s.pass();
    p.color.as_mut().unwrap().texture = s.depth;
    assert_eq!(
        b.record(&p, ChunkPosition::SINGLE, &[]).unwrap_err(),
        RecordError::Pass(PassError::NotRenderTarget { role: AttachmentRole::Color })
    );

    // A pipeline whose color format differs from the pass's.
    let shader =
        b.create_shader(&ShaderModuleDesc { label: "s".into(), wgsl: switchyard_tests::SHADER.into() }).unwrap();
    let srgb = b.create_pipeline(&TwoQuads::pipeline_desc(shader, s.layout, TextureFormat::Rgba8UnormSrgb)).unwrap();
    assert_eq!(record_err(&b, &s, &[Command::SetPipeline(srgb)]), RecordError::FormatMismatch { index: 0 });

    // A chunk submitted into a pass it was not recorded for.
    let chunk = b.record(&s.pass(), ChunkPosition::SINGLE, &s.direct_stream()).unwrap();
    let mut other = s.pass();
    other.color.as_mut().unwrap().load = LoadOp::Load;
    assert_eq!(
        b.submit(&[], &mut [PassSubmit { desc: other, chunks: vec![chunk] }]).unwrap_err(),
        SubmitError::ChunkMismatch { pass: 0, chunk: 0 }
    );
}

#[test]
fn creation_errors_are_typed_and_the_pipeline_cache_hits() {
    let (b, s) = setup();
    let bad = b.create_shader(&ShaderModuleDesc { label: "bad".into(), wgsl: "fn main( {".into() });
    assert!(matches!(bad, Err(CreateError::Shader { .. })), "{bad:?}");
    let shader =
        b.create_shader(&ShaderModuleDesc { label: "s".into(), wgsl: switchyard_tests::SHADER.into() }).unwrap();
    let mut d = TwoQuads::pipeline_desc(shader, s.layout, TextureFormat::Rgba8Unorm);
    let p1 = b.create_pipeline(&d).unwrap();
    assert_eq!(b.create_pipeline(&d).unwrap(), p1, "equal descriptors share one pipeline");
    d.vertex_entry = "missing".into();
    assert!(matches!(b.create_pipeline(&d), Err(CreateError::Invalid(_))));
    assert!(matches!(
        b.create_buffer(&BufferDesc { label: "zero".into(), size: 0, usage: BufferUsage::VERTEX }),
        Err(CreateError::Limit { .. })
    ));
    assert_eq!(b.write_buffer(s.indices, 8, &[0; 8]), Err(WriteError::OutOfRange { offset: 8, len: 8, size: 12 }));
    let wrong = b.create_bind_group(&BindGroupDesc {
        label: "wrong".into(),
        layout: s.layout,
        entries: vec![BindEntry {
            binding: 0,
            resource: BindResource::Buffer { buffer: s.vertices, offset: 0, size: Some(16) },
        }],
    });
    assert!(matches!(wrong, Err(CreateError::Invalid(_))), "{wrong:?}");
    assert!(matches!(b.read_rgba8(s.color), Err(ReadbackError::Unsupported(_))));
}

/// Checks wgpu makes that the validator makes too, so every backend refuses alike: clear
/// values out of range, a pass sampling what it renders into, a pipeline whose shader uses
/// a binding its layouts lack (or has of another type, or hides from its stage), and the
/// pipeline cache counting each creation.
#[test]
fn what_wgpu_refuses_the_validator_refuses() {
    let (b, s) = setup();
    for (color, depth, role) in [
        ([f64::NAN, 0.0, 0.0, 1.0], 1.0, AttachmentRole::Color),
        ([0.0, f64::INFINITY, 0.0, 1.0], 1.0, AttachmentRole::Color),
        ([0.0; 4], 2.0, AttachmentRole::Depth),
        ([0.0; 4], -0.5, AttachmentRole::Depth),
        ([0.0; 4], f32::NAN, AttachmentRole::Depth),
    ] {
        let mut p = s.pass();
        p.color.as_mut().unwrap().load = LoadOp::Clear(color);
        p.depth.as_mut().unwrap().load = LoadOp::Clear(depth);
        assert_eq!(
            b.record(&p, ChunkPosition::SINGLE, &[]).unwrap_err(),
            RecordError::Pass(PassError::InvalidClear { role }),
            "{color:?} {depth}"
        );
        assert!(matches!(b.submit(&[], &mut [PassSubmit { desc: p, chunks: vec![] }]), Err(SubmitError::Pass(_))));
    }

    // A bind group that samples the pass's own color attachment.
    let sampled = b
        .create_texture(&TextureDesc {
            label: "both".into(),
            width: switchyard_tests::SIZE,
            height: switchyard_tests::SIZE,
            format: TextureFormat::Rgba8Unorm,
            usage: TextureUsage::RENDER_TARGET | TextureUsage::SAMPLED,
            samples: 1,
            mip_levels: 1,
        })
        .unwrap();
    let layout = b
        .create_bind_group_layout(&BindGroupLayoutDesc {
            label: "t".into(),
            entries: vec![LayoutEntry {
                binding: 0,
                visibility: Stages::FRAGMENT,
                ty: BindingType::Texture(TextureSampleKind::Float),
            }],
        })
        .unwrap();
    let group = b
        .create_bind_group(&BindGroupDesc {
            label: "t".into(),
            layout,
            entries: vec![BindEntry { binding: 0, resource: BindResource::Texture(sampled) }],
        })
        .unwrap();
    let mut p = s.pass();
    p.color.as_mut().unwrap().texture = sampled;
    let bind = [Command::SetBindGroup { index: 1, group, offsets: DynamicOffsets::NONE }];
    assert_eq!(b.record(&p, ChunkPosition::SINGLE, &bind).unwrap_err(), RecordError::UsageConflict { index: 0 });
    assert!(b.record(&s.pass(), ChunkPosition::SINGLE, &bind).is_ok(), "sampled in another pass: fine");

    // Bindings the shader uses and the layouts lack or mistype.
    let uses = |decl: &str, body: &str| {
        let wgsl = format!(
            "{decl}\n@vertex fn vs(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> {{ return vec4<f32>(p, 1.0); }}\n\
             @fragment fn fs() -> @location(0) vec4<f32> {{ {body} }}"
        );
        let shader = b.create_shader(&ShaderModuleDesc { label: "uses".into(), wgsl }).unwrap();
        let mut d = TwoQuads::pipeline_desc(shader, s.layout, TextureFormat::Rgba8Unorm);
        d.vertex_buffers.truncate(1);
        d
    };
    let ok = uses("@group(0) @binding(0) var<uniform> tint: vec4<f32>;", "return tint;");
    assert!(b.create_pipeline(&ok).is_err(), "the tint is visible to the vertex stage only");
    for (decl, body) in [
        ("@group(0) @binding(3) var<uniform> x: vec4<f32>;", "return x;"),
        ("@group(1) @binding(0) var<uniform> x: vec4<f32>;", "return x;"),
        ("@group(0) @binding(0) var<storage, read> x: vec4<f32>;", "return x;"),
        ("@group(0) @binding(0) var t: texture_2d<f32>;", "return textureLoad(t, vec2<i32>(0), 0);"),
    ] {
        let e = b.create_pipeline(&uses(decl, body));
        assert!(matches!(&e, Err(CreateError::Invalid(m)) if m.contains("binding")), "{decl}: {e:?}");
    }
    let fine = uses("@group(0) @binding(5) var<uniform> x: vec4<f32>;", "return vec4<f32>(1.0);");
    assert!(b.create_pipeline(&fine).is_ok(), "a binding declared but unused needs no layout entry");

    // A uniform block larger than the range bound where the layout sets no minimum: the
    // draw is refused (wgpu checks it when the draw is recorded).
    let open = b
        .create_bind_group_layout(&BindGroupLayoutDesc {
            label: "open".into(),
            entries: vec![LayoutEntry {
                binding: 0,
                visibility: Stages::VERTEX,
                ty: BindingType::Uniform { dynamic: false, min_size: 0 },
            }],
        })
        .unwrap();
    let shader =
        b.create_shader(&ShaderModuleDesc { label: "s".into(), wgsl: switchyard_tests::SHADER.into() }).unwrap();
    let pipeline = b.create_pipeline(&TwoQuads::pipeline_desc(shader, open, TextureFormat::Rgba8Unorm)).unwrap();
    let group = |size| {
        b.create_bind_group(&BindGroupDesc {
            label: "small".into(),
            layout: open,
            entries: vec![BindEntry {
                binding: 0,
                resource: BindResource::Buffer { buffer: s.tints, offset: 0, size: Some(size) },
            }],
        })
        .unwrap()
    };
    let draw = |group| {
        let mut c = s.direct_stream();
        c[0] = Command::SetPipeline(pipeline);
        c[1] = Command::SetBindGroup { index: 0, group, offsets: DynamicOffsets::NONE };
        b.record(&s.pass(), ChunkPosition::SINGLE, &c)
    };
    assert!(matches!(draw(group(8)), Err(RecordError::OutOfRange { what: "bound uniform block", .. })));
    assert!(draw(group(16)).is_ok());

    // The pipeline cache counts creations: each destroy gives one back.
    let shader =
        b.create_shader(&ShaderModuleDesc { label: "s".into(), wgsl: switchyard_tests::SHADER.into() }).unwrap();
    let d = TwoQuads::pipeline_desc(shader, s.layout, TextureFormat::Rgba8Unorm);
    let (p1, p2) = (b.create_pipeline(&d).unwrap(), b.create_pipeline(&d).unwrap());
    assert_eq!(p1, p2);
    let pipelines = b.live().pipelines;
    b.destroy(Resource::Pipeline(p1)).unwrap();
    assert_eq!(b.live().pipelines, pipelines, "the second creation still holds it");
    b.destroy(Resource::Pipeline(p2)).unwrap();
    assert_eq!(b.live().pipelines, pipelines - 1);
    assert!(b.destroy(Resource::Pipeline(p2)).is_err());
}

/// A handle of another backend names nothing here, even where a resource of this one sits
/// in the same slot: every use is a typed stale-handle error. Digests do not depend on
/// which backend made the handles.
#[test]
fn handles_of_another_backend_are_refused() {
    let (a, qa) = setup();
    let (b, qb) = setup();
    assert_ne!(qa.pipeline, qb.pipeline, "equal slots, other backends: other handles");
    assert!(b.texture_info(qa.color).is_none());
    assert_eq!(b.write_buffer(qa.tints, 0, &[0; 4]), Err(WriteError::InvalidHandle { kind: ResourceKind::Buffer }));
    assert!(b.destroy(Resource::Texture(qa.color)).is_err());
    let mut theirs = qb.pass();
    theirs.color.as_mut().unwrap().texture = qa.color;
    assert!(matches!(
        b.record(&theirs, ChunkPosition::SINGLE, &[]),
        Err(RecordError::Pass(PassError::InvalidAttachment { .. }))
    ));
    let e = b.record(&qb.pass(), ChunkPosition::SINGLE, &qa.direct_stream()).unwrap_err();
    assert_eq!(e, RecordError::InvalidHandle { index: 0, kind: ResourceKind::Pipeline });
    assert_eq!(submit_one(&a, &qa, &qa.direct_stream()), submit_one(&b, &qb, &qb.direct_stream()));
    assert_eq!(b.live(), a.live(), "nothing of a was touched through b");
}

/// Late acquire's contract: a surface's stand-in is recorded into before any image exists,
/// refused at submit while no image is bound, bound by `acquire_late` for a frame of the
/// surface's size (another size, 0 x 0 and a stale handle are typed), and unbound again
/// by present or release.
#[test]
fn a_surface_stand_in_takes_frames_only_while_an_image_is_bound() {
    use switchyard_tests::SIZE;
    let b = NullBackend::new(true);
    let surface = b.create_surface(SIZE, SIZE, TextureFormat::Rgba8Unorm).unwrap();
    let stand_in = b.surface_stand_in(surface).expect("the null backend acquires late");
    assert_eq!(b.surface_stand_in(surface), Some(stand_in), "one stand-in per surface, for every frame");
    let s = TwoQuads::create_into(&b, 0, Some(stand_in)).expect("recorded against the stand-in");
    let frame = |b: &NullBackend| {
        let chunk = b.record(&s.pass(), ChunkPosition::SINGLE, &s.direct_stream()).expect("records unbound");
        b.submit(&[], &mut [PassSubmit { desc: s.pass(), chunks: vec![chunk] }])
    };
    assert_eq!(frame(&b).unwrap_err(), SubmitError::Present(SurfaceError::NotAcquired), "no image bound");
    assert_eq!(b.acquire_late(surface, (SIZE, SIZE + 1)), Ok(Acquired::Skip(SkipReason::Resized)));
    assert_eq!(frame(&b).unwrap_err(), SubmitError::Present(SurfaceError::NotAcquired), "a skip binds nothing");
    assert_eq!(b.acquire_late(surface, (SIZE, SIZE)), Ok(Acquired::Image(stand_in)));
    frame(&b).expect("bound: submitted");
    b.present(surface).unwrap();
    assert_eq!(b.presents(surface), 1);
    assert_eq!(frame(&b).unwrap_err(), SubmitError::Present(SurfaceError::NotAcquired), "presented: unbound again");
    assert_eq!(b.acquire_late(surface, (SIZE, SIZE)), Ok(Acquired::Image(stand_in)));
    b.release_image(surface);
    assert_eq!(frame(&b).unwrap_err(), SubmitError::Present(SurfaceError::NotAcquired), "released: unbound again");
    assert_eq!(b.present(surface), Err(SurfaceError::NotAcquired));
    b.configure_surface(surface, 0, 0).unwrap();
    assert_eq!(b.acquire_late(surface, (SIZE, SIZE)), Ok(Acquired::Skip(SkipReason::ZeroSize)));
    b.configure_surface(surface, 32, 16).unwrap();
    assert_eq!(b.texture_info(stand_in).map(|t| (t.width, t.height)), Some((32, 16)), "the stand-in has the new size");
    assert_eq!(b.acquire_late(surface, (SIZE, SIZE)), Ok(Acquired::Skip(SkipReason::Resized)));
    assert_eq!(b.acquire_late(SurfaceId::default(), (32, 16)), Err(SurfaceError::InvalidHandle));
    assert_eq!(b.surface_stand_in(SurfaceId::default()), None);
}

/// Buffer copies are checked before anything is copied: live buffers, `COPY_SRC` on the
/// source and `COPY_DST` on the destination, a size within both that is a multiple of 4,
/// not a buffer onto itself (what wgpu refuses).
#[test]
fn buffer_copies_are_checked_and_a_refused_batch_copies_nothing() {
    let b = NullBackend::new(true);
    let buffer = |size, usage| b.create_buffer(&BufferDesc { label: "b".into(), size, usage }).unwrap();
    let src = buffer(256, BufferUsage::VERTEX | BufferUsage::COPY_SRC);
    let dst = buffer(512, BufferUsage::VERTEX | BufferUsage::COPY_DST);
    let no_src = buffer(256, BufferUsage::VERTEX | BufferUsage::COPY_DST);
    let no_dst = buffer(256, BufferUsage::VERTEX | BufferUsage::COPY_SRC);
    let both = buffer(256, BufferUsage::COPY_SRC | BufferUsage::COPY_DST);
    let copy = |src, dst, size| BufferCopy { src, dst, size };
    b.copy_buffers(&[copy(src, dst, 256)]).unwrap();
    assert_eq!(b.copied_bytes(), 256);
    let invalid =
        |e: SubmitError| matches!(e, SubmitError::Write(WriteError::Invalid(_) | WriteError::OutOfRange { .. }));
    for bad in
        [copy(no_src, dst, 256), copy(src, no_dst, 256), copy(src, dst, 260), copy(src, dst, 6), copy(both, both, 4)]
    {
        let e = b.copy_buffers(&[copy(src, dst, 4), bad]).unwrap_err();
        assert!(invalid(e.clone()), "{bad:?}: {e:?}");
    }
    b.destroy(Resource::Buffer(dst)).unwrap();
    let e = b.copy_buffers(&[copy(src, dst, 4)]).unwrap_err();
    assert_eq!(e, SubmitError::Write(WriteError::InvalidHandle { kind: ResourceKind::Buffer }));
    assert_eq!(b.copied_bytes(), 256, "a refused batch copies nothing");
    b.copy_buffers(&[]).unwrap();
}
