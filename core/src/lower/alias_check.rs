//! The model's side of the in-place check, written apart from the chooser
//! (`inplace`): every declared alias is one the runtime's kernel can run and
//! the model allows. `plan::alias::validate_aliased` checks the placement and
//! the lifetimes; this checks what lifetimes cannot show.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use microarena_image::{self as rl, opcode};

use super::inplace::InPlaceOp;
use super::params::Words;
use crate::read::model::Model;

/// `Ok` when every alias of `aliases` is allowed by `model`: the op's
/// kernel can overwrite that input slot (or the op is an alias op over input
/// 0); input and output are the slot's tensor and output 0, distinct arena
/// tensors (not constant, not variable) with equal bytes and element size,
/// and, for an overwrite, equal shapes — except a windowed op run by rows
/// over input 0, whose output may be smaller and whose ring must be the rows
/// its schedule holds (`params`: the ops' image parameters), and an op that
/// writes behind its reads (an LSTM), whose output must fit behind its input
/// (`opcode::writes_behind_fits`); an overwrite's input is no other operand
/// of the op, and no tensor joined to it by the earlier aliases is a graph
/// output or is read by a later op, nor a graph input unless written behind;
/// and no tensor of an alias is written by more than one op.
pub(super) fn check(
    model: &Model<'_>,
    params: &[Words],
    aliases: &[InPlaceOp],
) -> Result<(), String> {
    let sg = model.main();
    // Group of every tensor as the aliases in op order join them.
    let mut group: Vec<usize> = (0..sg.tensors.len()).collect();
    let find = |group: &[usize], mut t: usize| {
        while let Some(&p) = group.get(t) {
            if p == t {
                break;
            }
            t = p;
        }
        t
    };
    // How many ops write each tensor: one written twice shares no bytes
    // (its second write would change the other members of its group).
    let writers = sg.writer_counts();
    let mut previous = None;
    for a in aliases {
        let bad = |why: &str| Err(format!("op {} (alias of input {}): {why}", a.op, a.slot));
        if previous.is_some_and(|p| p >= a.op) {
            return bad("aliases are not in op order, one per op");
        }
        previous = Some(a.op);
        let Some(op) = sg.operators.get(a.op) else {
            return bad("no such op");
        };
        let Some(code) = super::image_opcode(op) else {
            return bad("no image code");
        };
        let by_rows = a.ring_bytes > 0;
        let behind = a.overwrites && a.slot == 0 && opcode::writes_behind_input(code);
        let allowed = if behind {
            true
        } else if by_rows {
            a.overwrites && a.slot == 0 && opcode::in_place_by_rows(code)
        } else if a.overwrites {
            opcode::in_place_inputs(code).contains(&a.slot)
        } else {
            opcode::is_alias_op(code) && a.slot == 0
        };
        if !allowed {
            return bad("the kernel cannot run in place over this input");
        }
        if op.input(a.slot) != Some(a.input)
            || op.output(0) != Some(a.output)
            || op.outputs.len() != 1
        {
            return bad("input and output are not the op's");
        }
        let (Some(x), Some(y)) = (sg.tensors.get(a.input), sg.tensors.get(a.output)) else {
            return bad("no such tensor");
        };
        let arena = |t: &crate::read::model::Tensor<'_>| !t.has_data && !t.is_variable;
        if a.input == a.output || !arena(x) || !arena(y) {
            return bad("input or output is not an arena tensor of its own");
        }
        let once = |t: usize| writers.get(t).is_some_and(|&w| w <= 1);
        if !once(a.input) || !once(a.output) {
            return bad("input or output is written by more than one op");
        }
        if behind {
            if !super::inplace::behind_fits(x, y) {
                return bad("the output's steps do not fit behind the input's");
            }
        } else if by_rows {
            let Some(r) = super::banded::row_window(model, params, a.op) else {
                return bad(
                    "the op cannot run by rows (not batch-1 NHWC, or a non-constant operand)",
                );
            };
            if y.bytes > x.bytes {
                return bad("the output is larger than the input it overwrites");
            }
            let ring = r.in_place_ring_bytes().map_or(u64::MAX, |b| b as u64);
            if a.ring_bytes != ring {
                return bad(&format!(
                    "ring of {} B where the schedule holds {ring} B",
                    a.ring_bytes
                ));
            }
        } else if x.bytes != y.bytes
            || rl::dtype_size(x.dtype.code()) != rl::dtype_size(y.dtype.code())
            || (a.overwrites && x.shape != y.shape)
        {
            return bad("input and output differ in bytes, element size or shape");
        }
        if find(&group, a.output) != a.output {
            return bad("the output is already another tensor's bytes");
        }
        let g = find(&group, a.input);
        // The runtime keeps every other operand apart from an in-place
        // op's region, an alias op's shape operand too.
        let other = (0..op.inputs.len())
            .filter(|&j| j != a.slot)
            .filter_map(|j| op.input(j))
            .any(|t| find(&group, t) == g);
        if other {
            return bad("another operand is the aliased input's bytes");
        }
        if a.overwrites {
            for m in (0..sg.tensors.len()).filter(|&m| find(&group, m) == g) {
                // Written behind its reads, a graph input is consumed.
                let inputs = sg.inputs.iter().filter(|_| !behind);
                let io = inputs.chain(&sg.outputs).any(|&t| t as usize == m);
                let later = sg
                    .operators
                    .iter()
                    .skip(a.op + 1)
                    .any(|o| o.inputs.contains(&(m as i32)));
                if io || later {
                    return bad(&format!(
                        "tensor {m}, overwritten, is a graph input or output or read later"
                    ));
                }
            }
        }
        if let Some(slot) = group.get_mut(a.output) {
            *slot = g;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::builder::ModelBuilder;
    use crate::read::dtype::DType;
    use crate::read::ops::{Activation, BuiltinOp};

    /// x → QUANTIZE → a; RELU(a) → r; ADD(r, a) → y.
    fn model() -> std::vec::Vec<u8> {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let shape = [1, 4, 4, 4];
        let q = |b: &mut ModelBuilder, name: &str| {
            b.tensor(g, name, &shape, DType::I8).quant(0.05, -3).id()
        };
        let (x, a, r, y) = (
            q(&mut b, "x"),
            q(&mut b, "a"),
            q(&mut b, "r"),
            q(&mut b, "y"),
        );
        b.op(g, BuiltinOp::QUANTIZE, &[x], &[a]);
        b.op(g, BuiltinOp::RELU, &[a], &[r]);
        b.op(g, BuiltinOp::ADD, &[r, a], &[y])
            .add_options(Activation::None);
        b.inputs(g, &[x]).outputs(g, &[y]);
        b.finish()
    }

    fn alias(op: usize, slot: usize, input: usize, output: usize) -> InPlaceOp {
        InPlaceOp {
            op,
            slot,
            input,
            output,
            overwrites: true,
            ring_bytes: 0,
        }
    }

    #[test]
    fn the_chooser_passes_and_bad_declarations_fail() {
        let bytes = model();
        let m = Model::parse(&bytes).expect("parse");
        let chosen = super::super::inplace::choose(&m, &[], &[]);
        assert_eq!(chosen, [alias(2, 0, 2, 3)]);
        assert_eq!(check(&m, &[], &chosen), Ok(()));
        // RELU over a, which the ADD reads later.
        assert!(check(&m, &[], &[alias(1, 0, 1, 2)]).is_err_and(|e| e.contains("read later")));
        // QUANTIZE over the graph input.
        assert!(check(&m, &[], &[alias(0, 0, 0, 1)]).is_err());
        // ADD over slot 1 (a dies there too, so that alone is allowed), then
        // over slot 0 as well: two aliases for one op are refused.
        assert!(check(&m, &[], &[alias(2, 1, 1, 3), alias(2, 0, 2, 3)]).is_err());
        // Not the op's tensors.
        assert!(check(&m, &[], &[alias(2, 0, 1, 3)]).is_err());
        // QUANTIZE as an alias (it is no alias op).
        let reshape_like = InPlaceOp {
            overwrites: false,
            ..alias(1, 0, 1, 2)
        };
        assert!(check(&m, &[], &[reshape_like]).is_err_and(|e| e.contains("cannot run in place")));
    }

    #[test]
    fn a_tensor_written_twice_shares_no_bytes() {
        // x → QUANTIZE → a; RESHAPE(a) → r; RELU(x) → a again; ADD(r, a) → y.
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let shape = [1, 4, 4, 4];
        let q = |b: &mut ModelBuilder, name: &str| {
            b.tensor(g, name, &shape, DType::I8).quant(0.05, -3).id()
        };
        let (x, a, r, y) = (
            q(&mut b, "x"),
            q(&mut b, "a"),
            q(&mut b, "r"),
            q(&mut b, "y"),
        );
        b.op(g, BuiltinOp::QUANTIZE, &[x], &[a]);
        b.op(g, BuiltinOp::RESHAPE, &[a], &[r])
            .reshape_options(&shape);
        b.op(g, BuiltinOp::RELU, &[x], &[a]);
        b.op(g, BuiltinOp::ADD, &[r, a], &[y])
            .add_options(Activation::None);
        b.inputs(g, &[x]).outputs(g, &[y]);
        let bytes = b.finish();
        let m = Model::parse(&bytes).expect("parse");
        let chosen = super::super::inplace::choose(&m, &[], &[]);
        assert!(!chosen.iter().any(|c| c.op == 1), "{chosen:?}");
        assert_eq!(check(&m, &[], &chosen), Ok(()));
        let reshape = InPlaceOp {
            overwrites: false,
            ..alias(1, 0, 1, 2)
        };
        assert!(check(&m, &[], &[reshape]).is_err_and(|e| e.contains("more than one op")));
    }
}
