//! The demo's scenes: the procedural city (`switchyard_city`), a single pillar under a
//! fixed camera whose shadow falls at known pixels (used by the end-to-end test), and the
//! cube grid (the stress scene, also `switchyard_city`).

use glam::{Mat4, Vec3};
use switchyard::backend::Backend;
use switchyard::*;
use switchyard_city as city;

pub(crate) enum Scene {
    /// A grid of `side` x `side` buildings with an orbiting camera.
    City(city::City),
    /// The same city under a street-level camera (`--street`).
    Street(city::City),
    /// One pillar on a ground plane, camera looking straight down.
    Pillar,
    /// The cube grid under its fixed camera.
    Cubes(city::Cubes),
}

/// Light direction of the pillar scene: shadows fall towards -x.
pub(crate) const PILLAR_LIGHT: Vec3 = Vec3::new(-1.0, -1.0, 0.0);

pub(crate) fn build_pillar<B: Backend>(
    r: &mut Renderer<B>,
    shader: ShaderHandle,
) -> Result<Scene, Box<dyn std::error::Error>> {
    r.set_lighting(Lighting { direction: PILLAR_LIGHT, fog_density: 0.0, shadow_strength: 0.9, ..Lighting::default() });
    let mat = |r: &mut Renderer<B>, c: [f32; 4]| {
        r.create_material(&MaterialDesc {
            shader,
            keywords: vec![],
            properties: PropertySheet::new().with("_BaseColor", PropertyValue::Color(c)),
            base_texture: None,
            transparent: false,
        })
    };
    let ground_mat = mat(r, [0.8, 0.8, 0.8, 1.0])?;
    let pillar_mat = mat(r, [0.9, 0.3, 0.2, 1.0])?;
    let ground = r.create_mesh(&city::box_mesh(60.0, 0.2, 60.0))?;
    let pillar = r.create_mesh(&city::box_mesh(2.0, 10.0, 2.0))?;
    r.insert_objects(&[
        ObjectDesc {
            mesh: ground,
            material: ground_mat,
            transform: Mat4::from_translation(Vec3::new(0.0, -0.2, 0.0)),
            layer: 0,
            flags: 0,
        },
        ObjectDesc { mesh: pillar, material: pillar_mat, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS },
    ])?;
    Ok(Scene::Pillar)
}

impl Scene {
    /// The scene under a street-level camera: cities only.
    pub(crate) fn at_street_level(self) -> Result<Self, String> {
        match self {
            Scene::City(c) | Scene::Street(c) => Ok(Scene::Street(c)),
            _ => Err("--street needs a city (the default --scene, or --gltf)".into()),
        }
    }

    /// The box holding every surface that can be shaded, where the scene keeps it fixed
    /// (the shadow cascades bound only the part of each slice inside it).
    pub(crate) fn receivers(&self) -> Option<(Vec3, Vec3)> {
        match self {
            Scene::Cubes(c) => Some(c.bounds()),
            // The ground and the pillar on it.
            Scene::Pillar => Some((Vec3::new(-30.0, -0.2, -30.0), Vec3::new(30.0, 10.0, 30.0))),
            Scene::City(_) | Scene::Street(_) => None,
        }
    }

    /// The camera at `frame`. (The shadow cascades follow from it and the scene's light.)
    pub(crate) fn lens(&self, frame: u32) -> city::Lens {
        match self {
            Scene::City(c) => c.lens(frame),
            Scene::Street(c) => c.street_lens(frame),
            Scene::Cubes(c) => c.lens(),
            // Straight down from height 30, -z up in the image.
            Scene::Pillar => city::Lens {
                eye: Vec3::new(0.0, 30.0, 0.0),
                target: Vec3::ZERO,
                fovy: 0.9,
                near: 0.5,
                far: 100.0,
                up: Vec3::NEG_Z,
            },
        }
    }
}
