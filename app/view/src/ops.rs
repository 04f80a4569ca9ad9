//! The operator table and the flash view's figures: sorting the ops by any
//! column (MACs, weights, RAM), what each op's tail holds, and the shares the
//! flash panel draws. Pure functions of the report, so the native tests
//! cover them.

use std::collections::BTreeMap;

use microarena_core::report::{OperatorInfo, Report};

/// A sortable column of the operator table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpCol {
    /// Row in `report.operators` (execution order within each subgraph).
    Index,
    /// Operator name.
    Opcode,
    /// Multiply-accumulates.
    Macs,
    /// Constant (flash) bytes attributed to the op.
    Weights,
    /// Head bytes live while it runs.
    Live,
    /// Its scratch bytes.
    Scratch,
    /// Tail bytes it causes (what Prepare derives in RAM).
    Tail,
}

fn key(o: &OperatorInfo, col: OpCol) -> u64 {
    match col {
        OpCol::Index | OpCol::Opcode => 0,
        OpCol::Macs => o.macs,
        OpCol::Weights => o.constant_bytes,
        OpCol::Live => o.live_bytes,
        OpCol::Scratch => o.scratch_bytes,
        OpCol::Tail => o.persistent_bytes,
    }
}

/// Rows of `r.operators` ordered by `col` (ties in row order, so a sort is
/// stable whichever way it runs), descending unless `ascending`.
pub fn sorted_rows(r: &Report, col: OpCol, ascending: bool) -> Vec<usize> {
    let ops = &r.operators;
    let mut rows: Vec<usize> = (0..ops.len()).collect();
    rows.sort_by(|&a, &b| {
        let ord = match col {
            OpCol::Index => a.cmp(&b),
            OpCol::Opcode => ops[a].opcode.cmp(&ops[b].opcode),
            _ => key(&ops[a], col).cmp(&key(&ops[b], col)),
        };
        let ord = if ascending { ord } else { ord.reverse() };
        ord.then(a.cmp(&b))
    });
    rows
}

/// `part` of `whole` in per mille (0 when `whole` is 0), for bar widths.
pub fn per_mille(part: u64, whole: u64) -> u64 {
    if whole == 0 {
        0
    } else {
        (u128::from(part) * 1000 / u128::from(whole)).min(1000) as u64
    }
}

/// What op `o`'s tail bytes hold, one allocation a line (`OpData: 80 B`),
/// for the tail cell's tooltip; empty when it has none.
pub fn tail_items(o: &OperatorInfo) -> String {
    o.allocations
        .iter()
        .map(|a| {
            if a.bytes == a.requested_bytes {
                format!("{}: {} B", a.purpose, a.requested_bytes)
            } else {
                format!(
                    "{}: {} B ({} B with alignment)",
                    a.purpose, a.requested_bytes, a.bytes
                )
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One kind of kernel allocation summed over the model's ops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurposeRow {
    /// The op kind (`CONV_2D`).
    pub opcode: String,
    /// What the allocation holds (`per-channel output multipliers`).
    pub purpose: String,
    /// How many ops made one.
    pub count: u64,
    /// Tail bytes they move, alignment included.
    pub bytes: u64,
}

/// The ops' tail allocations grouped by op kind and purpose, largest first
/// (ties by name), so a 2,000-op model reads as a handful of rows.
pub fn tail_by_purpose(r: &Report) -> Vec<PurposeRow> {
    let mut m: BTreeMap<(&str, &str), (u64, u64)> = BTreeMap::new();
    for o in &r.operators {
        for a in &o.allocations {
            let e = m
                .entry((o.opcode.as_str(), a.purpose.as_str()))
                .or_default();
            e.0 += 1;
            e.1 += a.bytes;
        }
    }
    let mut rows: Vec<PurposeRow> = m
        .into_iter()
        .map(|((op, purpose), (count, bytes))| PurposeRow {
            opcode: op.to_string(),
            purpose: purpose.to_string(),
            count,
            bytes,
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.bytes));
    rows
}

/// `7160192` → `"7.16 M"`: MAC counts at a glance (exact figures stay in the table).
pub fn macs_short(v: u64) -> String {
    let f = v as f64;
    if v < 1_000 {
        v.to_string()
    } else if v < 1_000_000 {
        format!("{:.1} k", f / 1e3)
    } else if v < 1_000_000_000 {
        format!("{:.2} M", f / 1e6)
    } else {
        format!("{:.2} G", f / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn sorts_by_each_column_both_ways() {
        // Fixture ops: #0 CONV_2D (macs 4608, weights 288, tail 48),
        // #1 LSTM (macs 420, weights 0, tail 200).
        let r = testing::report();
        assert_eq!(sorted_rows(&r, OpCol::Macs, false), [0, 1]);
        assert_eq!(sorted_rows(&r, OpCol::Macs, true), [1, 0]);
        assert_eq!(sorted_rows(&r, OpCol::Weights, false), [0, 1]);
        assert_eq!(sorted_rows(&r, OpCol::Tail, false), [1, 0]);
        assert_eq!(sorted_rows(&r, OpCol::Live, false), [1, 0]);
        assert_eq!(sorted_rows(&r, OpCol::Index, false), [1, 0]);
        assert_eq!(sorted_rows(&r, OpCol::Opcode, true), [0, 1]);
    }

    #[test]
    fn ties_keep_row_order() {
        let mut r = testing::report();
        r.operators[1].macs = r.operators[0].macs;
        assert_eq!(sorted_rows(&r, OpCol::Macs, false), [0, 1]);
        assert_eq!(sorted_rows(&r, OpCol::Macs, true), [0, 1]);
    }

    #[test]
    fn tail_allocations_by_purpose() {
        use microarena_core::report::OpAllocation;
        let mut r = testing::report();
        let alloc = |purpose: &str, requested_bytes, bytes| OpAllocation {
            purpose: purpose.into(),
            requested_bytes,
            bytes,
        };
        r.operators[0].allocations =
            vec![alloc("TfLiteConvParams", 28, 28), alloc("OpData", 56, 68)];
        r.operators[1].allocations = vec![alloc("OpData", 688, 688)];
        r.operators.push(r.operators[0].clone());
        assert_eq!(
            tail_items(&r.operators[0]),
            "TfLiteConvParams: 28 B\nOpData: 56 B (68 B with alignment)"
        );
        let rows = tail_by_purpose(&r);
        let names: Vec<(&str, &str, u64, u64)> = rows
            .iter()
            .map(|p| (p.opcode.as_str(), p.purpose.as_str(), p.count, p.bytes))
            .collect();
        let lstm = r.operators[1].opcode.as_str();
        let conv = r.operators[0].opcode.as_str();
        assert_eq!(
            names,
            [
                (lstm, "OpData", 1, 688),
                (conv, "OpData", 2, 136),
                (conv, "TfLiteConvParams", 2, 56),
            ]
        );
        assert_eq!(tail_items(&r.operators[1]), "OpData: 688 B");
    }

    #[test]
    fn shares_and_short_counts() {
        assert_eq!(per_mille(1, 4), 250);
        assert_eq!(per_mille(5, 0), 0);
        assert_eq!(per_mille(u64::MAX, 1), 1000);
        assert_eq!(macs_short(999), "999");
        assert_eq!(macs_short(4_608), "4.6 k");
        assert_eq!(macs_short(7_160_192), "7.16 M");
        assert_eq!(macs_short(41_043_072_000), "41.04 G");
    }
}
