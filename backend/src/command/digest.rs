//! The command stream's digest: what the demo's `--digest` prints and the tests compare
//! across thread counts and backends.

use super::{Command, LoadOp, PassDesc};
use crate::handle::HandleBits;

/// A 64-bit digest of a command stream, stable across runs, threads and machines.
///
/// A fixed-seed multiply-fold hash over the commands' fields (never a randomly seeded
/// hasher). Chunk digests are combined in submission order with [`Digest::combine`], so a
/// frame's digest depends only on the commands and their order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest(u64);

const SEED: u64 = 0x5157_1c4a_7d0b_e3a1;

#[inline]
fn mix(h: u64, w: u64) -> u64 {
    let m = u128::from(h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15_u128 | (0xd6e8_feb8_6659_fd93_u128 << 64));
    (m as u64) ^ ((m >> 64) as u64)
}

impl Default for Digest {
    fn default() -> Self {
        Self(SEED)
    }
}

impl Digest {
    /// The digest value.
    #[inline]
    pub fn value(self) -> u64 {
        self.0
    }

    /// Folds a raw word in.
    #[inline]
    pub fn word(&mut self, w: u64) {
        self.0 = mix(self.0, w);
    }

    /// Folds another digest in (order matters).
    #[inline]
    pub fn combine(&mut self, other: Digest) {
        self.word(other.0);
    }

    /// Folds a pass description in.
    pub fn pass(&mut self, p: &PassDesc) {
        self.word(0xFA55);
        if p.compute {
            self.word(0xC0);
        }
        // The engine's drawing is not Switchyard's to digest: only that it is there.
        if p.native.is_some() {
            self.word(0x7A7E);
        }
        if let Some(c) = &p.color {
            self.word(c.texture.bits());
            match c.load {
                LoadOp::Clear(v) => v.iter().for_each(|x| self.word(x.to_bits())),
                LoadOp::Load => self.word(1),
                LoadOp::DontCare(_) => self.word(2),
            }
            self.word(c.store as u64);
            if let Some(r) = c.resolve {
                self.word(0x4E50);
                self.word(r.bits());
            }
        }
        if let Some(d) = &p.depth {
            self.word(d.texture.bits());
            match d.load {
                LoadOp::Clear(v) => self.word(u64::from(v.to_bits())),
                LoadOp::Load => self.word(1),
                LoadOp::DontCare(_) => self.word(2),
            }
            self.word(d.store as u64);
        }
    }

    /// Folds one command in.
    #[inline]
    pub fn command(&mut self, c: &Command) {
        match *c {
            Command::SetPipeline(p) => {
                self.word(1);
                self.word(p.bits());
            }
            Command::SetBindGroup { index, group, offsets } => {
                self.word(2 | u64::from(index) << 8);
                self.word(group.bits());
                offsets.as_slice().iter().for_each(|&o| self.word(u64::from(o)));
            }
            Command::SetVertexBuffer { slot, buffer, offset } => {
                self.word(3 | u64::from(slot) << 8);
                self.word(buffer.bits());
                self.word(offset);
            }
            Command::SetIndexBuffer { buffer, format, offset } => {
                self.word(4 | (format.size() << 8));
                self.word(buffer.bits());
                self.word(offset);
            }
            Command::Draw { first_vertex, vertex_count, first_instance, instance_count } => {
                self.word(5);
                self.word(u64::from(first_vertex) | u64::from(vertex_count) << 32);
                self.word(u64::from(first_instance) | u64::from(instance_count) << 32);
            }
            Command::DrawIndexed { first_index, index_count, base_vertex, first_instance, instance_count } => {
                self.word(6 | u64::from(base_vertex as u32) << 32);
                self.word(u64::from(first_index) | u64::from(index_count) << 32);
                self.word(u64::from(first_instance) | u64::from(instance_count) << 32);
            }
            Command::MultiDrawIndexedIndirect { buffer, offset, count } => {
                self.word(7 | u64::from(count) << 32);
                self.word(buffer.bits());
                self.word(offset);
            }
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset, max_count } => {
                self.word(10 | u64::from(max_count) << 32);
                self.word(buffer.bits());
                self.word(offset);
                self.word(count_buffer.bits());
                self.word(count_offset);
            }
            Command::Dispatch { x, y, z } => {
                self.word(8 | u64::from(x) << 32);
                self.word(u64::from(y) | u64::from(z) << 32);
            }
            Command::DispatchIndirect { buffer, offset } => {
                self.word(9);
                self.word(buffer.bits());
                self.word(offset);
            }
        }
    }

    /// Digest of a slice of commands.
    pub fn of_commands(commands: &[Command]) -> Self {
        let mut d = Self::default();
        commands.iter().for_each(|c| d.command(c));
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::*;
    use crate::handle::{BindGroupId, BufferId, PipelineId, TextureId};

    #[test]
    fn digest_depends_on_order_and_content() {
        let a = Command::Draw { first_vertex: 0, vertex_count: 3, first_instance: 0, instance_count: 1 };
        let b = Command::Draw { first_vertex: 0, vertex_count: 6, first_instance: 0, instance_count: 1 };
        assert_ne!(Digest::of_commands(&[a, b]), Digest::of_commands(&[b, a]));
        assert_eq!(Digest::of_commands(&[a, b]), Digest::of_commands(&[a, b]));
        // Fixed values: the digest must not change between runs or machines. A stream with
        // every command kind and every field set, digested with a pass before it.
        assert_eq!(Digest::of_commands(&[]).value(), SEED);
        let mut d = Digest::default();
        d.pass(&PassDesc {
            label: "pinned".into(),
            color: Some(ColorAttachment {
                texture: TextureId::default(),
                load: LoadOp::Clear([0.25, 0.5, 0.75, 1.0]),
                store: StoreOp::Store,
                resolve: None,
            }),
            depth: Some(DepthAttachment { texture: TextureId::default(), load: LoadOp::Load, store: StoreOp::Discard }),
            compute: false,
            native: None,
        });
        let every = [
            Command::SetPipeline(PipelineId::default()),
            Command::SetBindGroup { index: 1, group: BindGroupId::default(), offsets: DynamicOffsets::one(256) },
            Command::SetVertexBuffer { slot: 1, buffer: BufferId::default(), offset: 64 },
            Command::SetIndexBuffer { buffer: BufferId::default(), format: IndexFormat::Uint32, offset: 8 },
            a,
            Command::DrawIndexed {
                first_index: 3,
                index_count: 36,
                base_vertex: -4,
                first_instance: 7,
                instance_count: 2,
            },
            Command::MultiDrawIndexedIndirect { buffer: BufferId::default(), offset: 40, count: 5 },
        ];
        d.combine(Digest::of_commands(&every));
        assert_eq!(format!("{:016x}", d.value()), "baf53afa8ebb59e6");
    }

    #[test]
    fn every_field_of_a_count_draw_is_digested() {
        let (one, two) = (BufferId::default(), BufferId::from(slotmap::KeyData::from_ffi(1 << 32 | 3)));
        let base = Command::MultiDrawIndexedIndirectCount {
            buffer: one,
            offset: 40,
            count_buffer: one,
            count_offset: 8,
            max_count: 5,
        };
        let Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset, max_count } = base
        else {
            unreachable!()
        };
        let variants = [
            base,
            Command::MultiDrawIndexedIndirectCount { buffer: two, offset, count_buffer, count_offset, max_count },
            Command::MultiDrawIndexedIndirectCount { buffer, offset: 60, count_buffer, count_offset, max_count },
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer: two, count_offset, max_count },
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset: 12, max_count },
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset, max_count: 6 },
            Command::MultiDrawIndexedIndirect { buffer, offset, count: max_count },
        ];
        let digests: std::collections::HashSet<u64> =
            variants.iter().map(|c| Digest::of_commands(std::slice::from_ref(c)).value()).collect();
        assert_eq!(digests.len(), variants.len());
    }

    #[test]
    fn a_dont_care_load_is_its_own_pass_word() {
        let pass = |load| PassDesc {
            label: "p".into(),
            color: Some(ColorAttachment { texture: TextureId::default(), load, store: StoreOp::Store, resolve: None }),
            depth: None,
            compute: false,
            native: None,
        };
        let digest = |p: &PassDesc| {
            let mut d = Digest::default();
            d.pass(p);
            d.value()
        };
        // SAFETY: only digested, never executed.
        let dont_care = LoadOp::DontCare(unsafe { DontCareToken::promise() });
        let loads = [LoadOp::Clear([0.0; 4]), LoadOp::Load, dont_care];
        let digests: std::collections::HashSet<u64> = loads.iter().map(|&l| digest(&pass(l))).collect();
        assert_eq!(digests.len(), 3);
    }
}
