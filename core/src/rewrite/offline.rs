//! Rewriting a model so stock TFLM places every tensor where our plan says:
//! an `OfflineMemoryAllocation` metadata entry (spec §2.3) and, optionally, a
//! new operator order for subgraph 0.
//!
//! Pure: `&[u8]` in, `Vec<u8>` out. The model is unpacked with the flatbuffers
//! object API, edited, and packed again with the `TFL3` identifier. Nothing
//! else changes meaning: operators, tensors, weights, signatures and other
//! metadata are carried over field by field (buffer data is re-aligned to 16
//! bytes, as the schema's `force_align: 16` asks, which the generated Rust
//! packer does not do by itself).

use alloc::vec::Vec;
use core::fmt;

use flatbuffers::{FlatBufferBuilder, Push, PushAlignment, WIPOffset};

use crate::read::model::{Model, OFFLINE_PLAN_METADATA, ReadError};
use crate::read::schema as fb;

/// Format version word written in front of the offsets.
pub const OFFLINE_PLAN_VERSION: i32 = 1;

/// What to change in a model.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rewrite<'a> {
    /// One offset per tensor over all subgraphs (subgraph 0 first), −1 = plan
    /// online. `None` leaves any existing plan alone.
    pub offsets: Option<&'a [i32]>,
    /// New order of subgraph 0's operators: `order[k]` is the old index of the
    /// op that runs k-th. `None` keeps the order.
    pub main_order: Option<&'a [usize]>,
    /// Replace an existing `OfflineMemoryAllocation` entry (otherwise refused).
    pub force: bool,
}

/// Why a model could not be rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OfflineError {
    /// The input is not a valid model.
    Read(ReadError),
    /// The model already has an offline plan and `force` was not given.
    ExistingPlan,
    /// The offsets do not cover every tensor of every subgraph.
    WrongOffsetCount {
        /// Offsets given.
        got: usize,
        /// Tensors in the model.
        want: usize,
    },
    /// The new operator order is not a permutation of subgraph 0's operators.
    NotPermutation,
    /// Buffers stored outside the flatbuffer (`offset`/`size`) cannot be carried over.
    ExternalBuffers,
    /// The rewritten model is larger than a flatbuffer can address.
    TooLarge,
}

impl fmt::Display for OfflineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OfflineError::Read(e) => e.fmt(f),
            OfflineError::ExistingPlan => write!(
                f,
                "the model already carries an {OFFLINE_PLAN_METADATA} plan; pass --force to replace it"
            ),
            OfflineError::WrongOffsetCount { got, want } => write!(
                f,
                "{got} offsets given, but the model has {want} tensors over all subgraphs"
            ),
            OfflineError::NotPermutation => write!(
                f,
                "the new operator order is not a permutation of subgraph 0's operators"
            ),
            OfflineError::ExternalBuffers => write!(
                f,
                "the model stores buffers outside the flatbuffer (offset/size); rewriting it would lose them"
            ),
            OfflineError::TooLarge => {
                write!(
                    f,
                    "the rewritten model would exceed the 2 GiB flatbuffer limit"
                )
            }
        }
    }
}

impl core::error::Error for OfflineError {}

impl From<ReadError> for OfflineError {
    fn from(e: ReadError) -> Self {
        OfflineError::Read(e)
    }
}

/// The metadata buffer TFLM reads: little-endian words
/// `[version 1, subgraph count, N, offsets...]`.
pub fn encode_plan(subgraphs: usize, offsets: &[i32]) -> Vec<u8> {
    let mut words: Vec<i32> = alloc::vec![
        OFFLINE_PLAN_VERSION,
        i32::try_from(subgraphs).unwrap_or(i32::MAX),
        i32::try_from(offsets.len()).unwrap_or(i32::MAX),
    ];
    words.extend_from_slice(offsets);
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Adds (or, with `force`, replaces) the offline plan. See [`rewrite`].
pub fn write_offline_plan(
    bytes: &[u8],
    offsets: &[i32],
    force: bool,
) -> Result<Vec<u8>, OfflineError> {
    rewrite(
        bytes,
        &Rewrite {
            offsets: Some(offsets),
            main_order: None,
            force,
        },
    )
}

/// Applies `edit` to the model in `bytes` and returns the new file.
///
/// The input is validated with [`Model::parse`] first. An existing
/// `OfflineMemoryAllocation` entry (all of them, if several) is removed only
/// with `force`; its buffer is emptied when nothing else refers to it, and
/// reused for the new plan. The new entry is appended last (TFLM reads the
/// last one).
pub fn rewrite(bytes: &[u8], edit: &Rewrite<'_>) -> Result<Vec<u8>, OfflineError> {
    let model = Model::parse(bytes)?;
    if model.buffers.iter().any(|b| b.external.is_some()) {
        return Err(OfflineError::ExternalBuffers);
    }
    let has_plan = model
        .metadata
        .iter()
        .any(|m| m.name == OFFLINE_PLAN_METADATA);
    if let Some(offsets) = edit.offsets {
        if has_plan && !edit.force {
            return Err(OfflineError::ExistingPlan);
        }
        if offsets.len() != model.tensor_count() {
            return Err(OfflineError::WrongOffsetCount {
                got: offsets.len(),
                want: model.tensor_count(),
            });
        }
    }
    if let Some(order) = edit.main_order {
        let n = model.main().operators.len();
        let mut seen = alloc::vec![false; n];
        if order.len() != n {
            return Err(OfflineError::NotPermutation);
        }
        for &i in order {
            match seen.get_mut(i) {
                Some(s) if !*s => *s = true,
                _ => return Err(OfflineError::NotPermutation),
            }
        }
    }
    let n_subgraphs = model.subgraphs.len();
    drop(model);

    // `parse` verified the same bytes with these limits.
    let limits = crate::read::model::Limits::DEFAULT;
    let opts = flatbuffers::VerifierOptions {
        max_depth: limits.max_depth,
        max_tables: limits.max_tables,
        max_apparent_size: 1 << 31,
        ignore_missing_null_terminator: false,
    };
    let mut m = fb::root_as_model_with_opts(&opts, bytes)
        .map_err(|e| OfflineError::Read(ReadError::Corrupt(alloc::format!("{e}"))))?
        .unpack();

    if let Some(order) = edit.main_order
        && let Some(ops) = m
            .subgraphs
            .as_mut()
            .and_then(|s| s.first_mut())
            .and_then(|g| g.operators.as_mut())
    {
        let old = core::mem::take(ops);
        let mut slots: Vec<Option<fb::OperatorT>> = old.into_iter().map(Some).collect();
        for &i in order {
            if let Some(op) = slots.get_mut(i).and_then(Option::take) {
                ops.push(op);
            }
        }
    }

    if let Some(offsets) = edit.offsets {
        let data = encode_plan(n_subgraphs, offsets);
        let metadata = m.metadata.take().unwrap_or_default();
        let (old, mut kept): (Vec<fb::MetadataT>, Vec<fb::MetadataT>) = metadata
            .into_iter()
            .partition(|e| e.name.as_deref() == Some(OFFLINE_PLAN_METADATA));
        let buffers = m.buffers.get_or_insert_with(Vec::new);
        if buffers.is_empty() {
            // Buffer 0 is the empty sentinel by convention.
            buffers.push(fb::BufferT::default());
        }
        // Buffers of the removed entries that nothing else refers to.
        let referenced =
            |b: u32, kept: &[fb::MetadataT], m_subgraphs: &Option<Vec<fb::SubGraphT>>| {
                b == 0
                    || kept.iter().any(|e| e.buffer == b)
                    || m_subgraphs
                        .iter()
                        .flatten()
                        .any(|g| g.tensors.iter().flatten().any(|t| t.buffer == b))
            };
        let mut reuse = None;
        for e in &old {
            if !referenced(e.buffer, &kept, &m.subgraphs)
                && let Some(buf) = buffers.get_mut(e.buffer as usize)
            {
                buf.data = None;
                reuse = Some(e.buffer);
            }
        }
        let index = match reuse {
            Some(i) => i,
            None => {
                buffers.push(fb::BufferT::default());
                u32::try_from(buffers.len() - 1).map_err(|_| OfflineError::TooLarge)?
            }
        };
        if let Some(buf) = buffers.get_mut(index as usize) {
            buf.data = Some(data);
            buf.offset = 0;
            buf.size = 0;
        }
        kept.push(fb::MetadataT {
            name: Some(OFFLINE_PLAN_METADATA.into()),
            buffer: index,
        });
        m.metadata = Some(kept);
    }

    let out = pack(&m);
    if out.len() > (1usize << 31) {
        return Err(OfflineError::TooLarge);
    }
    Ok(out)
}

/// Packs a model like `ModelT::pack`, but with every buffer's data aligned to 16.
fn pack(m: &fb::ModelT) -> Vec<u8> {
    let capacity = m
        .buffers
        .iter()
        .flatten()
        .map(|b| b.data.as_ref().map_or(0, |d| d.len() + 32))
        .sum::<usize>()
        + 4096;
    let mut fbb = FlatBufferBuilder::with_capacity(capacity);
    let operator_codes = m.operator_codes.as_ref().map(|x| {
        let w: Vec<_> = x.iter().map(|t| t.pack(&mut fbb)).collect();
        fbb.create_vector(&w)
    });
    let subgraphs = m.subgraphs.as_ref().map(|x| {
        let w: Vec<_> = x.iter().map(|t| t.pack(&mut fbb)).collect();
        fbb.create_vector(&w)
    });
    let description = m.description.as_ref().map(|x| fbb.create_string(x));
    let buffers = m.buffers.as_ref().map(|x| {
        let w: Vec<_> = x.iter().map(|b| pack_buffer(&mut fbb, b)).collect();
        fbb.create_vector(&w)
    });
    let metadata_buffer = m.metadata_buffer.as_ref().map(|x| fbb.create_vector(x));
    let metadata = m.metadata.as_ref().map(|x| {
        let w: Vec<_> = x.iter().map(|t| t.pack(&mut fbb)).collect();
        fbb.create_vector(&w)
    });
    let signature_defs = m.signature_defs.as_ref().map(|x| {
        let w: Vec<_> = x.iter().map(|t| t.pack(&mut fbb)).collect();
        fbb.create_vector(&w)
    });
    let external_buffer_groups = m.external_buffer_groups.as_ref().map(|x| {
        let w: Vec<_> = x.iter().map(|t| t.pack(&mut fbb)).collect();
        fbb.create_vector(&w)
    });
    let external_buffers = m.external_buffers.as_ref().map(|x| {
        let w: Vec<_> = x.iter().map(|t| t.pack(&mut fbb)).collect();
        fbb.create_vector(&w)
    });
    let root = fb::Model::create(
        &mut fbb,
        &fb::ModelArgs {
            version: m.version,
            operator_codes,
            subgraphs,
            description,
            buffers,
            metadata_buffer,
            metadata,
            signature_defs,
            external_buffer_groups,
            external_buffers,
        },
    );
    fbb.finish(root, Some(fb::MODEL_IDENTIFIER));
    fbb.finished_data().to_vec()
}

/// A zero-sized marker whose only job is to make `start_vector` align the
/// vector's data to 16 bytes (and raise the buffer's minimum alignment).
struct Align16;

impl Push for Align16 {
    type Output = u8;
    unsafe fn push(&self, _dst: &mut [u8], _written_len: usize) {}
    fn size() -> usize {
        1
    }
    fn alignment() -> PushAlignment {
        PushAlignment::new(16)
    }
}

/// Sixteen raw bytes, pushed as one unit.
struct Chunk([u8; 16]);

impl Push for Chunk {
    type Output = [u8; 16];
    unsafe fn push(&self, dst: &mut [u8], _written_len: usize) {
        if let Some(d) = dst.get_mut(..16) {
            d.copy_from_slice(&self.0);
        }
    }
}

fn pack_buffer<'b>(fbb: &mut FlatBufferBuilder<'b>, b: &fb::BufferT) -> WIPOffset<fb::Buffer<'b>> {
    let data = b.data.as_ref().map(|d| {
        fbb.start_vector::<Align16>(d.len());
        // The builder writes back to front: the tail bytes first, then whole chunks.
        let whole = d.len() / 16 * 16;
        for &byte in d.get(whole..).unwrap_or(&[]).iter().rev() {
            fbb.push(byte);
        }
        for c in d.get(..whole).unwrap_or(&[]).chunks_exact(16).rev() {
            let mut a = [0u8; 16];
            a.copy_from_slice(c);
            fbb.push(Chunk(a));
        }
        fbb.end_vector::<u8>(d.len())
    });
    fb::Buffer::create(
        fbb,
        &fb::BufferArgs {
            data,
            offset: b.offset,
            size: b.size,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::builder::ModelBuilder;
    use crate::read::dtype::DType;
    use crate::read::ops::{Activation, BuiltinOp};

    fn small() -> Vec<u8> {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let x = b.tensor(g, "x", &[1, 64], DType::I8).quant(0.5, 0).id();
        let c = b
            .tensor(g, "c", &[1, 64], DType::I8)
            .quant(0.5, 0)
            .data(&[3; 64])
            .id();
        let y = b.tensor(g, "y", &[1, 64], DType::I8).quant(1.0, 0).id();
        let z = b.tensor(g, "z", &[1, 64], DType::I8).quant(1.0, 0).id();
        b.op(g, BuiltinOp::ADD, &[x, c], &[y])
            .add_options(Activation::None);
        b.op(g, BuiltinOp::ADD, &[y, c], &[z])
            .add_options(Activation::None);
        b.inputs(g, &[x]);
        b.outputs(g, &[z]);
        b.build().unwrap()
    }

    fn unpack(bytes: &[u8]) -> fb::ModelT {
        fb::root_as_model(bytes).unwrap().unpack()
    }

    #[test]
    fn buffer_data_is_16_aligned() {
        let out = write_offline_plan(&small(), &[0, -1, 64, 0], false).unwrap();
        let fbm = fb::root_as_model(&out).unwrap();
        for b in fbm.buffers().unwrap().iter() {
            if let Some(d) = b.data() {
                let at = d.bytes().as_ptr() as usize - out.as_ptr() as usize;
                assert_eq!(at % 16, 0, "buffer data at {at}");
            }
        }
    }

    #[test]
    fn plan_is_written_and_read_back() {
        let out = write_offline_plan(&small(), &[0, -1, 64, 0], false).unwrap();
        let m = Model::parse(&out).unwrap();
        let p = m.offline_plan.unwrap();
        assert_eq!((p.version, p.subgraphs), (1, 1));
        assert_eq!(p.offsets, [0, -1, 64, 0]);
    }

    #[test]
    fn everything_else_is_unchanged() {
        let input = small();
        let out = write_offline_plan(&input, &[0, -1, 64, 0], false).unwrap();
        let (mut a, mut b) = (unpack(&input), unpack(&out));
        let added = b.buffers.as_mut().unwrap().pop().unwrap();
        assert_eq!(added.data.unwrap(), encode_plan(1, &[0, -1, 64, 0]));
        assert_eq!(b.metadata.as_ref().unwrap().len(), 1);
        b.metadata = None;
        a.metadata = None;
        assert_eq!(a, b);
    }

    #[test]
    fn existing_plan_needs_force() {
        let input = small();
        let once = write_offline_plan(&input, &[0, -1, 64, 0], false).unwrap();
        assert_eq!(
            write_offline_plan(&once, &[0, -1, 0, 64], false),
            Err(OfflineError::ExistingPlan)
        );
        let twice = write_offline_plan(&once, &[0, -1, 0, 64], true).unwrap();
        let m = Model::parse(&twice).unwrap();
        assert_eq!(m.offline_plan.unwrap().offsets, [0, -1, 0, 64]);
        assert_eq!(
            m.metadata
                .iter()
                .filter(|e| e.name == OFFLINE_PLAN_METADATA)
                .count(),
            1
        );
        // The old plan's buffer was reused, not leaked.
        assert_eq!(
            unpack(&once).buffers.unwrap().len(),
            unpack(&twice).buffers.unwrap().len()
        );
    }

    #[test]
    fn bad_inputs_are_refused() {
        let input = small();
        assert!(matches!(
            write_offline_plan(&input[..input.len() / 2], &[0; 4], false),
            Err(OfflineError::Read(_))
        ));
        assert!(matches!(
            write_offline_plan(b"not a model at all", &[0; 4], false),
            Err(OfflineError::Read(_))
        ));
        assert_eq!(
            write_offline_plan(&input, &[0; 3], false),
            Err(OfflineError::WrongOffsetCount { got: 3, want: 4 })
        );
        let bad_order = Rewrite {
            main_order: Some(&[0, 0]),
            ..Rewrite::default()
        };
        assert_eq!(
            rewrite(&input, &bad_order),
            Err(OfflineError::NotPermutation)
        );
    }

    #[test]
    fn operators_can_be_reordered() {
        let input = small();
        let out = rewrite(
            &input,
            &Rewrite {
                main_order: Some(&[1, 0]),
                ..Rewrite::default()
            },
        )
        .unwrap();
        let (a, b) = (unpack(&input), unpack(&out));
        let ops_a = a.subgraphs.as_ref().unwrap()[0].operators.clone().unwrap();
        let ops_b = b.subgraphs.as_ref().unwrap()[0].operators.clone().unwrap();
        assert_eq!(ops_a[0], ops_b[1]);
        assert_eq!(ops_a[1], ops_b[0]);
    }

    /// Every corpus model: only the plan's buffer and metadata entry change.
    #[test]
    fn corpus_round_trip_changes_nothing_else() {
        let Ok(dir) = std::env::var("MICROARENA_CORPUS") else {
            std::eprintln!(
                "corpus_round_trip_changes_nothing_else: skipped (MICROARENA_CORPUS is not set)"
            );
            return;
        };
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(dir)
            .join("models");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "tflite") {
                continue;
            }
            let input = std::fs::read(&path).unwrap();
            let m = Model::parse(&input).unwrap();
            let offsets: Vec<i32> = (0..m.tensor_count() as i32).map(|i| i * 16).collect();
            let out = write_offline_plan(&input, &offsets, true).unwrap();
            let back = Model::parse(&out).unwrap();
            assert_eq!(back.offline_plan.unwrap().offsets, offsets, "{path:?}");
            let (mut a, mut b) = (unpack(&input), unpack(&out));
            let strip = |m: &mut fb::ModelT| {
                m.metadata
                    .get_or_insert_with(Vec::new)
                    .retain(|e| e.name.as_deref() != Some(OFFLINE_PLAN_METADATA));
            };
            strip(&mut a);
            strip(&mut b);
            // Buffers: identical except the plan's (reused or appended).
            let (ba, bb) = (a.buffers.take().unwrap(), b.buffers.take().unwrap());
            assert!(bb.len() == ba.len() || bb.len() == ba.len() + 1, "{path:?}");
            let plan_buffer = back_plan_buffer(&out);
            for (i, x) in ba.iter().enumerate() {
                if i as u32 != plan_buffer {
                    assert_eq!(Some(x), bb.get(i), "{path:?} buffer {i}");
                }
            }
            assert_eq!(a, b, "{path:?}");
            n += 1;
        }
        assert!(n >= 10);
    }

    fn back_plan_buffer(bytes: &[u8]) -> u32 {
        let m = Model::parse(bytes).unwrap();
        m.metadata
            .iter()
            .rev()
            .find(|e| e.name == OFFLINE_PLAN_METADATA)
            .unwrap()
            .buffer
    }

    #[test]
    fn greedy_analysis_honours_the_written_offsets() {
        use crate::plan::PlannerKind;
        use crate::tflm::analysis::{Config, analyze};
        use crate::tflm::lifetime::BufferKind;
        let input = small();
        // x [0,1], y [1,2], z [2,2]: y and z at the same offsets as x would collide
        // online, but written offsets are taken verbatim.
        let out = write_offline_plan(&input, &[128, -1, 0, 64], false).unwrap();
        let m = Model::parse(&out).unwrap();
        let a = analyze(
            &m,
            &Config {
                profile: &crate::tflm::profile::X86_64,
                planner: PlannerKind::TflmGreedy,
            },
        )
        .unwrap();
        let got: Vec<(usize, i64)> = a
            .buffers
            .iter()
            .map(|b| match b.info.kind {
                BufferKind::Tensor { tensor, .. } => (tensor, b.offset),
                BufferKind::Scratch { .. } => (usize::MAX, b.offset),
            })
            .collect();
        assert_eq!(got, [(0, 128), (2, 0), (3, 64)]);
        assert_eq!(a.head_bytes, 128 + 64);
    }
}
