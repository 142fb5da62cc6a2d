//! The pipeline log: every material pipeline a renderer made, named by what it is made
//! from (shader name, keywords, pass, blending, the forward target) instead of by ids, so
//! an engine can save it at exit and replay it at its next start
//! ([`crate::Renderer::warm_up_log`]), before its levels' materials exist.

use switchyard_backend::TextureFormat;

use super::PassKind;

/// One pipeline of a [`PipelineLog`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PipelineLogEntry {
    /// The shader's name ([`crate::ShaderDesc::name`]).
    pub shader: String,
    /// The variant's keywords (material and global ones together), in the shader's order.
    pub keywords: Vec<String>,
    /// The pass kind it draws in.
    pub pass: PassKind,
    /// Alpha blended (a transparent material's forward pipeline).
    pub transparent: bool,
    /// The forward passes' color format it was made for (shadow pipelines keep it too).
    pub color_format: TextureFormat,
    /// The forward passes' samples per texel it was made for.
    pub color_samples: u32,
    /// The kinds of the engine buffers the scene passes bound in group 2
    /// ([`crate::MAX_SCENE_BUFFERS`]); empty: no group 2.
    #[cfg_attr(feature = "serde", serde(default))]
    pub scene_buffers: Vec<crate::BufferBinding>,
}

/// Every material pipeline a renderer made ([`crate::Renderer::pipeline_log`]), in the
/// order it made them per shader. Serializable with the `serde` feature (serde's formats:
/// JSON, RON, bincode, ...): an engine writes it at exit and hands it to
/// [`crate::Renderer::warm_up_log`] at its next start, so pipelines first made during
/// play are made before the first frame next time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PipelineLog {
    /// The pipelines, in order.
    pub entries: Vec<PipelineLogEntry>,
}

impl PipelineLog {
    /// Entries of `other` not in this log yet, appended in their order (logs of several
    /// runs, merged).
    pub fn merge(&mut self, other: &PipelineLog) {
        for e in &other.entries {
            if !self.entries.contains(e) {
                self.entries.push(e.clone());
            }
        }
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;

    #[test]
    fn a_log_goes_to_json_and_back_and_foreign_json_is_an_error() {
        let entry = PipelineLogEntry {
            shader: "lit".into(),
            keywords: vec!["FOG".into(), "RIM".into()],
            pass: PassKind::Forward,
            transparent: true,
            color_format: TextureFormat::Rgba16Float,
            color_samples: 4,
            scene_buffers: vec![crate::BufferBinding::Storage, crate::BufferBinding::Uniform],
        };
        let mut log = PipelineLog { entries: vec![entry.clone()] };
        let json = serde_json::to_string(&log).unwrap();
        assert!(json.contains("\"Rgba16Float\"") && json.contains("\"Forward\""), "{json}");
        assert_eq!(serde_json::from_str::<PipelineLog>(&json).unwrap(), log);
        for foreign in ["{}", "[]", r#"{"entries":[{"shader":"lit"}]}"#, &json.replace("Rgba16Float", "Rgb9")] {
            assert!(serde_json::from_str::<PipelineLog>(foreign).is_err(), "{foreign}");
        }
        let other = PipelineLogEntry { pass: PassKind::Shadow, ..entry };
        log.merge(&PipelineLog { entries: vec![other.clone(), log.entries[0].clone(), other] });
        assert_eq!(log.entries.len(), 2, "merged without duplicates");
    }
}
