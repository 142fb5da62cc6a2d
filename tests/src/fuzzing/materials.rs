//! Shaders, materials and property sheets.

use super::*;

/// Shader and material descriptions: arbitrary (and mutated) WGSL, keywords, constant
/// blocks and pass entry points; then materials over the shader (or the lit one) with
/// arbitrary keywords, properties and edits; then a frame.
pub fn shader_material(data: &[u8]) {
    shader_material_on(&mut renderer(), data, &mut Log::default());
}

/// [`shader_material`] on `r` (a fresh renderer), noting each operation in `log`.
pub fn shader_material_on<B: Backend>(r: &mut Renderer<B>, data: &[u8], log: &mut Log) {
    let _ = run_shader_material(r, &mut Unstructured::new(data), log);
}

fn run_shader_material<B: Backend>(r: &mut Renderer<B>, u: &mut Unstructured<'_>, log: &mut Log) -> Result<()> {
    let lit = ShaderDesc::lit();
    let mut keywords = Vec::new();
    for _ in 0..u.int_in_range(0..=6)? {
        keywords.push(name(u, &KEYWORDS)?);
    }
    let mut constants = Vec::new();
    for _ in 0..u.int_in_range(0..=6)? {
        constants.push((name(u, &PROPERTIES)?, property_type(u)?));
    }
    let entry = |u: &mut Unstructured<'_>| name(u, &ENTRIES);
    let passes = ShaderPasses {
        shadow: if u.arbitrary()? { Some(entry(u)?) } else { None },
        forward: if u.arbitrary()? { Some((entry(u)?, entry(u)?)) } else { None },
    };
    let materials = if u.arbitrary()? { MaterialBinding::Indexed } else { MaterialBinding::PerDraw };
    let desc = ShaderDesc {
        name: u.arbitrary()?,
        wgsl: match u.int_in_range(0..=3)? {
            0 => lit.wgsl.clone(),
            1 => mutated_wgsl(u)?,
            2 => ShaderDesc::lit_indexed().wgsl,
            _ => u.arbitrary()?,
        },
        keywords: if u.arbitrary()? { lit.keywords.clone() } else { keywords },
        constants: if u.arbitrary()? { lit.constants.clone() } else { constants },
        passes: if u.arbitrary()? { ShaderPasses::default() } else { passes },
        materials,
    };
    let shader = match log.note("create_shader", r.create_shader(&desc)) {
        Ok(s) => s,
        Err(_) => r.create_shader(&lit).expect("the lit shader"),
    };
    let mesh = r.create_mesh(&crate::cube()).expect("a cube");
    let mut materials = Vec::new();
    for _ in 0..u.int_in_range(1..=4)? {
        let mut properties = PropertySheet::new();
        for _ in 0..u.int_in_range(0..=4)? {
            properties.set(&name(u, &PROPERTIES)?, value(u)?);
        }
        let mut keywords = Vec::new();
        for _ in 0..u.int_in_range(0..=3)? {
            keywords.push(name(u, &KEYWORDS)?);
        }
        let desc = MaterialDesc { shader, keywords, properties, base_texture: None, transparent: u.arbitrary()? };
        if let Ok(m) = log.note("create_material", r.create_material(&desc)) {
            materials.push(m);
        }
    }
    let objects: Vec<ObjectDesc> = materials
        .iter()
        .map(|&material| ObjectDesc { mesh, material, transform: Mat4::IDENTITY, layer: 0, flags: CASTS_SHADOWS })
        .collect();
    let _ = log.note("insert_objects", r.insert_objects(&objects));
    for _ in 0..u.int_in_range(0..=6)? {
        let Some(&m) = u.choose(&materials).ok() else { break };
        let _ = match u.int_in_range(0..=2)? {
            0 => log.note("set_material_property", r.set_material_property(m, &name(u, &PROPERTIES)?, value(u)?)),
            1 => log.note("set_material_keyword", r.set_material_keyword(m, &name(u, &KEYWORDS)?, u.arbitrary()?)),
            _ => log.note("set_global", r.set_global(&name(u, &PROPERTIES)?, value(u)?)),
        };
        frame(r, log);
    }
    frame(r, log);
    Ok(())
}

/// Property-sheet operations against a map of names to types: a set with the declared
/// type (or of a new name) succeeds and is found; a set with another type fails and changes
/// nothing.
pub fn property_sheet(data: &[u8]) {
    let _ = run_property_sheet(&mut Unstructured::new(data));
}

fn run_property_sheet(u: &mut Unstructured<'_>) -> Result<()> {
    let mut sheet = PropertySheet::new();
    let mut model: HashMap<String, PropertyType> = HashMap::new();
    while !u.is_empty() {
        let n = name(u, &PROPERTIES)?;
        let v = value(u)?;
        let before = sheet.values().to_vec();
        let ok = sheet.set(&n, v);
        match model.get(&n) {
            Some(&ty) if ty != v.ty() => {
                assert!(!ok, "a set of another type is refused");
                assert_eq!(sheet.values(), &before[..], "a refused set changes nothing");
            }
            _ => {
                assert!(ok, "a set of the declared type, or of a new name, succeeds");
                model.insert(n.clone(), v.ty());
            }
        }
        let i = sheet.find(&n).expect("a set property is found");
        assert_eq!(sheet.property(i), (n.as_str(), model[&n]));
        assert_eq!(sheet.bytes(i).len() as u32, model[&n].size());
        assert_eq!(sheet.len(), model.len());
    }
    Ok(())
}
