//! `--stream`: city blocks stream in and out while the demo renders. Every frame new
//! blocks arrive (each: a texture whose mips the GPU makes, a material on it, meshes of
//! buildings of their own shape, and objects on them, in a cell of the streamed area)
//! until the frame has made `--stream-mb` of data; once more than `KEEP` blocks are
//! alive the oldest leave (objects, material, texture, meshes). Uploads go through the
//! renderer's upload thread; the summary reports their rate and what waited.

use std::collections::VecDeque;

use glam::{Mat4, Vec3};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use switchyard::backend::{Backend, TextureFormat};
use switchyard::*;
use switchyard_city as city;

/// Blocks alive at once.
pub(crate) const KEEP: usize = 48;
/// Objects per block.
pub(crate) const OBJECTS: usize = 24;
/// Meshes per block.
const MESHES: usize = 4;
/// Side of a block's texture (RGBA8, its mips made on the GPU).
const TEXTURE_SIDE: u32 = 256;

/// A block: what it made, removed together.
struct Block {
    objects: Vec<ObjectId>,
    material: MaterialHandle,
    texture: TextureHandle,
    meshes: Vec<MeshHandle>,
}

/// The streamed part of the scene and what it did.
pub(crate) struct Stream {
    rng: Pcg64Mcg,
    shader: ShaderHandle,
    blocks: VecDeque<Block>,
    /// Bytes a frame makes (the blocks it adds carry about this much).
    per_frame: f64,
    /// Bytes owed to the rate: what the frames so far should have made, less what they did.
    owed: f64,
    extent: f32,
    /// Time each frame's `step` took on the calling thread, ms (making and removing the
    /// blocks: the engine's work, outside the render call).
    pub(crate) step_ms: Vec<f64>,
    /// Of it, ms in all: making the textures' data, `create_texture_data`,
    /// `create_material`, `create_mesh` (with the meshes' data), `insert_objects`, and
    /// removing blocks.
    pub(crate) parts_ms: [f64; 6],
    /// Blocks made and removed, bytes made.
    pub(crate) made: u64,
    pub(crate) removed: u64,
    pub(crate) bytes: u64,
}

impl Stream {
    /// Streams about `mb_per_frame` MB of meshes and textures (materials of `shader`) each
    /// frame over an area of `extent` around the origin.
    pub(crate) fn new(shader: ShaderHandle, mb_per_frame: f64, extent: f32) -> Result<Self, String> {
        if !(mb_per_frame.is_finite() && mb_per_frame > 0.0) {
            return Err(format!("--stream-mb {mb_per_frame}: a positive number of MB per frame"));
        }
        Ok(Self {
            rng: Pcg64Mcg::seed_from_u64(0x57E4),
            shader,
            blocks: VecDeque::new(),
            per_frame: mb_per_frame * 1e6,
            owed: 0.0,
            step_ms: Vec::new(),
            parts_ms: [0.0; 6],
            extent: extent.max(10.0),
            made: 0,
            removed: 0,
            bytes: 0,
        })
    }

    /// One frame's blocks in and out.
    pub(crate) fn step<B: Backend>(&mut self, r: &mut Renderer<B>) -> Result<(), String> {
        let t = std::time::Instant::now();
        self.owed += self.per_frame;
        while self.owed > 0.0 {
            let bytes = self.add(r)?;
            self.owed -= bytes as f64;
            self.bytes += bytes;
        }
        let removing = std::time::Instant::now();
        while self.blocks.len() > KEEP {
            let b = self.blocks.pop_front().expect("more than KEEP");
            let e = |e: ResourceError| e.to_string();
            r.remove_objects(&b.objects).map_err(|e| e.to_string())?;
            r.remove_material(b.material).map_err(e)?;
            r.remove_texture(b.texture).map_err(e)?;
            for m in b.meshes {
                r.remove_mesh(m).map_err(e)?;
            }
            self.removed += 1;
        }
        self.parts_ms[5] += removing.elapsed().as_secs_f64() * 1e3;
        self.step_ms.push(t.elapsed().as_secs_f64() * 1e3);
        Ok(())
    }

    /// A new block; the bytes it uploads.
    fn add<B: Backend>(&mut self, r: &mut Renderer<B>) -> Result<u64, String> {
        let e = |e: ResourceError| e.to_string();
        let mut lap = Lap(std::time::Instant::now());
        let rng = &mut self.rng;
        // A texture of stripes in the block's colors.
        let (a, b): ([u8; 4], [u8; 4]) = (
            [rng.gen(), rng.gen(), rng.gen(), 255],
            [rng.gen_range(128..=255), rng.gen_range(128..=255), rng.gen_range(128..=255), 255],
        );
        let side = TEXTURE_SIDE;
        // One row of stripes 8 texels wide, repeated (an engine's data arrives ready).
        let row: Vec<u8> = (0..side).flat_map(|x| if (x / 8) % 2 == 0 { a } else { b }).collect();
        let texels = row.repeat(side as usize);
        self.parts_ms[0] += lap.ms();
        let data = TextureData {
            width: side,
            height: side,
            format: TextureFormat::Rgba8UnormSrgb,
            levels: &[&texels],
            generate_mips: true,
        };
        let texture = r.create_texture_data(&data).map_err(e)?;
        self.parts_ms[1] += lap.ms();
        let material = r
            .create_material(&MaterialDesc {
                shader: self.shader,
                base_texture: Some(texture),
                properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color([1.0; 4])),
                ..Default::default()
            })
            .map_err(e)?;
        self.parts_ms[2] += lap.ms();
        let mut bytes = texels.len() as u64;
        let mut meshes = Vec::with_capacity(MESHES);
        for _ in 0..MESHES {
            let mesh = building(rng);
            bytes += (size_of_val(&mesh.vertices[..]) + size_of_val(&mesh.indices[..])) as u64;
            meshes.push(r.create_mesh(&mesh).map_err(e)?);
        }
        self.parts_ms[3] += lap.ms();
        // The block's cell: anywhere in the area.
        let h = self.extent * 0.5;
        let corner = Vec3::new(rng.gen_range(-h..h), 0.0, rng.gen_range(-h..h));
        let objects: Vec<ObjectDesc> = (0..OBJECTS)
            .map(|i| {
                let at = corner + Vec3::new((i % 6) as f32 * 3.0, 0.0, (i / 6) as f32 * 3.0);
                ObjectDesc {
                    mesh: meshes[i % MESHES],
                    material,
                    transform: Mat4::from_translation(at),
                    layer: 0,
                    flags: CASTS_SHADOWS,
                }
            })
            .collect();
        let objects = r.insert_objects(&objects).map_err(|e| e.to_string())?;
        self.parts_ms[4] += lap.ms();
        self.blocks.push_back(Block { objects, material, texture, meshes });
        self.made += 1;
        Ok(bytes)
    }

    /// Blocks alive.
    pub(crate) fn alive(&self) -> usize {
        self.blocks.len()
    }
}

/// Laps of a stopwatch.
struct Lap(std::time::Instant);

impl Lap {
    /// Ms since the last lap.
    fn ms(&mut self) -> f64 {
        let now = std::time::Instant::now();
        let ms = (now - self.0).as_secs_f64() * 1e3;
        self.0 = now;
        ms
    }
}

/// A building of its own shape: a box with stacked copies of smaller boxes on it.
fn building(rng: &mut Pcg64Mcg) -> MeshData {
    let mut out = MeshData::default();
    let floors = rng.gen_range(1..=6u32);
    let (w, d) = (rng.gen_range(1.0..2.5), rng.gen_range(1.0..2.5));
    for f in 0..floors {
        let shrink = 1.0 - f as f32 * 0.1;
        let b = city::box_mesh(w * shrink, rng.gen_range(1.0..3.0), d * shrink);
        let base = out.vertices.len() as u32;
        let lift = f as f32 * 2.0;
        out.vertices.extend(b.vertices.iter().map(|v| {
            let mut v = *v;
            v.position[1] += lift;
            v
        }));
        out.indices.extend(b.indices.iter().map(|i| i + base));
    }
    out
}
