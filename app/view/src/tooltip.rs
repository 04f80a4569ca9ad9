//! The tooltip's rows (label, value) for a buffer, a variable or an operator.

use microarena_core::report::{BufferClass, Region, Report, VariableInfo};

use crate::format::{buffer_shape, grouped, grouped_i, shape, truncate};
use crate::svg;

/// One tooltip row: label and value.
pub type TipRow = (String, String);

/// Tooltip rows for head buffer `i` (index into `report.buffers`).
pub fn buffer_tip(r: &Report, i: usize) -> Vec<TipRow> {
    let Some(b) = r.buffers.get(i) else {
        return Vec::new();
    };
    let op_name = |idx: usize| {
        r.operators
            .iter()
            .find(|o| o.subgraph == b.subgraph && o.index == idx)
            .map_or_else(|| format!("#{idx}"), |o| format!("#{idx} {}", o.opcode))
    };
    let consumers: Vec<String> = match b.tensor {
        Some(t) => r
            .operators
            .iter()
            .filter(|o| o.subgraph == b.subgraph && o.inputs.contains(&(t as i32)))
            .map(|o| format!("#{} {}", o.index, o.opcode))
            .collect(),
        None => Vec::new(),
    };
    let mut v = vec![
        ("name".to_string(), b.name.clone()),
        (
            "kind".into(),
            match (svg::is_variable(r, b), b.offline) {
                (true, _) => "variable tensor, placed in the head by the offline plan".into(),
                (false, true) => format!("{} (offline plan)", b.kind),
                (false, false) => b.kind.to_string(),
            },
        ),
        ("shape".into(), buffer_shape(b)),
        ("dtype".into(), b.dtype.clone()),
        ("bytes".into(), format!("{} B", grouped(b.bytes))),
        (
            "padding".into(),
            format!("{} B", b.aligned_bytes.saturating_sub(b.bytes)),
        ),
        (
            "offset".into(),
            format!(
                "{} – {}",
                grouped_i(b.offset),
                grouped_i(b.offset + b.aligned_bytes as i64)
            ),
        ),
        (
            "lifetime".into(),
            format!("scopes {} – {}", b.first, b.last),
        ),
    ];
    if b.kind == BufferClass::Scratch {
        v.push((
            "owner op".into(),
            b.op.map_or_else(|| "–".into(), |i| owner(r, b.subgraph, i)),
        ));
    } else {
        v.push((
            "producer".into(),
            b.op.map_or_else(|| "graph input".into(), op_name),
        ));
        v.push((
            "consumers".into(),
            if consumers.is_empty() {
                "graph output".into()
            } else {
                truncate(&consumers.join(", "), 120)
            },
        ));
    }
    v
}

/// `#3 UNIDIRECTIONAL_SEQUENCE_LSTM` (with the subgraph outside the main one).
pub fn owner(r: &Report, subgraph: usize, op: usize) -> String {
    let code = r
        .operators
        .iter()
        .find(|o| o.subgraph == subgraph && o.index == op)
        .map_or("", |o| o.opcode.as_str());
    if subgraph == 0 {
        format!("#{op} {code}")
    } else {
        format!("#{op} {code} (subgraph {subgraph})")
    }
}

/// A variable's name, or `tensor N` when the file has none.
pub fn var_name(v: &VariableInfo) -> String {
    if v.name.is_empty() {
        format!("tensor {}", v.tensor)
    } else {
        v.name.clone()
    }
}

const VARIABLE_LIFETIME: &str =
    "lives for the whole interpreter: allocated once in AllocateTensors, kept across invokes";

/// Tooltip rows for variable `k` (index into `report.variables`).
pub fn variable_tip(r: &Report, k: usize) -> Vec<TipRow> {
    let Some(v) = r.variables.get(k) else {
        return Vec::new();
    };
    vec![
        ("name".into(), v.name.clone()),
        ("kind".into(), "variable tensor (LSTM/SVDF state)".into()),
        ("shape".into(), shape(&v.shape)),
        ("dtype".into(), v.dtype.clone()),
        ("bytes".into(), format!("{} B", grouped(v.bytes))),
        (
            "region".into(),
            match v.offset {
                Some(o) if v.region == Region::Head => {
                    format!("head at {} (offline plan)", grouped_i(o))
                }
                _ => "tail: TfLiteTensor variable buffer data".into(),
            },
        ),
        (
            "owner op".into(),
            v.op.map_or_else(|| "–".into(), |i| owner(r, v.subgraph, i)),
        ),
        ("lifetime".into(), VARIABLE_LIFETIME.into()),
    ]
}

/// Tooltip rows for operator row `i` (index into `report.operators`).
pub fn op_tip(r: &Report, i: usize) -> Vec<TipRow> {
    let Some(o) = r.operators.get(i) else {
        return Vec::new();
    };
    vec![
        ("op".into(), format!("#{} {}", o.index, o.opcode)),
        ("subgraph".into(), o.subgraph.to_string()),
        ("scope".into(), o.scope.to_string()),
        ("live head".into(), format!("{} B", grouped(o.live_bytes))),
        ("scratch".into(), format!("{} B", grouped(o.scratch_bytes))),
        (
            "persistent".into(),
            format!("{} B", grouped(o.persistent_bytes)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    fn rows(v: &[(&str, &str)]) -> Vec<TipRow> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_graph_input_names_its_consumers_and_padding() {
        let r = testing::report();
        assert_eq!(
            buffer_tip(&r, 0),
            rows(&[
                ("name", "input"),
                ("kind", "tensor"),
                ("shape", "1×10×10"),
                ("dtype", "int8"),
                ("bytes", "100 B"),
                ("padding", "12 B"),
                ("offset", "0 – 112"),
                ("lifetime", "scopes 0 – 1"),
                ("producer", "graph input"),
                ("consumers", "#0 CONV_2D"),
            ])
        );
    }

    #[test]
    fn a_scratch_buffer_names_its_owner_instead_of_producer() {
        let r = testing::report();
        let tip = buffer_tip(&r, 1);
        assert_eq!(tip.len(), 9);
        assert_eq!(tip[6], ("offset".into(), "112 – 176".into()));
        assert_eq!(
            tip[8],
            ("owner op".into(), "#1 UNIDIRECTIONAL_SEQUENCE_LSTM".into())
        );
    }

    #[test]
    fn a_tail_variable_lives_for_the_interpreter() {
        let r = testing::report();
        let tip = variable_tip(&r, 0);
        assert_eq!(tip[2], ("shape".into(), "1×32".into()));
        assert_eq!(
            tip[5],
            (
                "region".into(),
                "tail: TfLiteTensor variable buffer data".into()
            )
        );
        assert_eq!(tip[7], ("lifetime".into(), VARIABLE_LIFETIME.into()));
    }

    #[test]
    fn op_rows_and_out_of_range_indices() {
        let r = testing::report();
        assert_eq!(
            op_tip(&r, 1),
            rows(&[
                ("op", "#1 UNIDIRECTIONAL_SEQUENCE_LSTM"),
                ("subgraph", "0"),
                ("scope", "1"),
                ("live head", "176 B"),
                ("scratch", "64 B"),
                ("persistent", "200 B"),
            ])
        );
        assert!(op_tip(&r, 2).is_empty());
        assert!(buffer_tip(&r, 9).is_empty());
        assert!(variable_tip(&r, 1).is_empty());
    }

    #[test]
    fn owner_mentions_subgraphs_other_than_main() {
        let r = testing::report();
        assert_eq!(owner(&r, 0, 0), "#0 CONV_2D");
        // No such op in subgraph 1: the code is left empty, the index stays.
        assert_eq!(owner(&r, 1, 7), "#7  (subgraph 1)");
    }
}
