//! What-if text: the dims a field shows, what the user typed read as the
//! CLI's `NAME=DIMS`, and the delta table against the model as converted.

use microarena_core::report::Report;
use microarena_core::whatif as shape;

use crate::format::{grouped, signed_bytes};
use crate::inputs::GraphInput;

/// `[1, 49, 257]` → `"1,49,257"` (the CLI's DIMS).
pub fn dims_text(d: &[i32]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads what the user typed (`1,25,257`, `1×25×257`, `1 25 257`) as the
/// CLI's DIMS; the dims themselves are checked by `shape::parse_override`.
pub fn normalize_dims(text: &str) -> String {
    text.split(|c: char| c == ',' || c == '×' || c == 'x' || c == 'X' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

/// The dims each override of the shown report sets, by input key.
pub fn applied(r: &Report) -> Vec<(String, Vec<i32>)> {
    r.what_if
        .as_ref()
        .map(|w| {
            w.input_shapes
                .iter()
                .filter_map(|x| shape::parse_override(x).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The text a field starts with: the applied override, else the shape as converted.
pub fn field_text(input: &GraphInput, applied: &[(String, Vec<i32>)]) -> String {
    let cur = applied
        .iter()
        .find(|(k, _)| *k == input.key)
        .map_or(input.shape.as_slice(), |(_, d)| d.as_slice());
    dims_text(cur)
}

/// The overrides (`KEY=DIMS`) the fields ask for: only inputs whose dims
/// differ from the model as converted. Errs with the message to show when a
/// field does not read as dims.
pub fn overrides<'a>(
    fields: impl IntoIterator<Item = (&'a GraphInput, String)>,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (g, text) in fields {
        let spec = format!("{}={}", g.key, normalize_dims(&text));
        match shape::parse_override(&spec) {
            Ok((_, dims)) if dims == g.shape => {}
            Ok(_) => out.push(spec),
            Err(e) => return Err(format!("what-if: {e}")),
        }
    }
    Ok(out)
}

/// One row of the delta table: a figure as converted and under the what-if.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeltaRow {
    /// Suffix of the row's `data-testid`.
    pub id: &'static str,
    /// Label shown.
    pub label: &'static str,
    /// The figure for the model as converted.
    pub original: Option<u64>,
    /// The figure under the what-if shapes.
    pub what_if: Option<u64>,
}

impl DeltaRow {
    /// What-if minus original, when both are known.
    pub fn delta(&self) -> Option<i128> {
        match (self.original, self.what_if) {
            (Some(o), Some(n)) => Some(i128::from(n) - i128::from(o)),
            _ => None,
        }
    }

    /// The change cell's classes: `up`/`down` colour growth and savings.
    pub fn class(&self) -> &'static str {
        match self.delta().map(i128::signum) {
            Some(1) => "r mono up",
            Some(-1) => "r mono down",
            _ => "r mono",
        }
    }

    /// `+1,234 B (+5.0 %)`; without the percentage when the original is 0.
    pub fn change(&self) -> String {
        match (self.delta(), self.original) {
            (Some(d), Some(o)) if o > 0 => format!(
                "{} ({:+.1} %)",
                signed_bytes(d),
                d as f64 * 100.0 / o as f64,
            ),
            (Some(d), _) => signed_bytes(d),
            _ => "–".into(),
        }
    }
}

/// `1,234 B`, or `–` for a figure that does not exist.
pub fn bytes_or_dash(v: Option<u64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{} B", grouped(v)))
}

/// The delta table for a what-if report; `None` for the model as converted.
pub fn delta_rows(r: &Report) -> Option<Vec<DeltaRow>> {
    let w = r.what_if.as_ref()?;
    let a = &r.arena;
    let row = |id, label, original, what_if| DeltaRow {
        id,
        label,
        original,
        what_if,
    };
    Some(vec![
        row(
            "head",
            "head",
            Some(w.original_head_bytes),
            Some(a.head_bytes),
        ),
        row(
            "tail",
            "tail",
            Some(w.original_tail_bytes),
            Some(a.tail_bytes),
        ),
        row(
            "total",
            "total (TFLM)",
            Some(w.original_total_bytes),
            Some(a.total_bytes),
        ),
        row(
            "minimum",
            "minimum working arena",
            Some(w.original_minimum_bytes),
            Some(a.minimum_bytes),
        ),
        row(
            "runtime",
            "microarena-runtime",
            w.original_runtime_total_bytes,
            r.runtime.as_ref().map(|rt| rt.total_bytes),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;
    use microarena_core::report::WhatIfInfo;

    fn input(key: &str, shape: &[i32]) -> GraphInput {
        GraphInput {
            key: key.into(),
            name: key.into(),
            tensor: 0,
            shape: shape.to_vec(),
            dtype: "int8".into(),
        }
    }

    #[test]
    fn typed_dims_read_as_the_clis_dims() {
        assert_eq!(dims_text(&[1, 49, 257]), "1,49,257");
        assert_eq!(normalize_dims("1×25×257"), "1,25,257");
        assert_eq!(normalize_dims(" 1 25  257 "), "1,25,257");
        assert_eq!(normalize_dims("1x25X257,"), "1,25,257");
        assert_eq!(normalize_dims(""), "");
    }

    #[test]
    fn only_changed_inputs_become_overrides() {
        let a = input("audio", &[1, 49, 40]);
        let b = input("flag", &[1]);
        let got = overrides([(&a, "1 25 40".to_string()), (&b, "1".to_string())]);
        assert_eq!(got, Ok(vec!["audio=1,25,40".to_string()]));
        assert_eq!(overrides([(&a, "1×49×40".to_string())]), Ok(vec![]));
        let bad = overrides([(&a, "1,-3".to_string())]).expect_err("negative dims refused");
        assert!(bad.starts_with("what-if: "), "{bad}");
    }

    #[test]
    fn fields_start_from_the_applied_override() {
        let mut r = testing::report();
        let a = input("audio", &[1, 49, 40]);
        assert_eq!(field_text(&a, &applied(&r)), "1,49,40");
        r.what_if = Some(WhatIfInfo {
            input_shapes: vec!["audio=1,25,40".into()],
            original_head_bytes: 200,
            original_tail_bytes: 400,
            original_total_bytes: 600,
            original_minimum_bytes: 0,
            original_runtime_total_bytes: None,
        });
        assert_eq!(applied(&r), vec![("audio".to_string(), vec![1, 25, 40])]);
        assert_eq!(field_text(&a, &applied(&r)), "1,25,40");
    }

    #[test]
    fn the_delta_table_compares_each_figure() {
        let mut r = testing::report();
        assert_eq!(delta_rows(&r), None);
        r.what_if = Some(WhatIfInfo {
            input_shapes: vec!["audio=1,25,40".into()],
            original_head_bytes: 200,
            original_tail_bytes: 400,
            original_total_bytes: 600,
            original_minimum_bytes: 0,
            original_runtime_total_bytes: None,
        });
        let rows = delta_rows(&r).expect("a what-if report has a delta");
        let ids: Vec<&str> = rows.iter().map(|r| r.id).collect();
        assert_eq!(ids, ["head", "tail", "total", "minimum", "runtime"]);
        // head 200 → 176: −24 B, −12.0 % (the percentage keeps format!'s ASCII sign).
        assert_eq!(rows[0].delta(), Some(-24));
        assert_eq!(rows[0].class(), "r mono down");
        assert_eq!(rows[0].change(), "−24 B (-12.0 %)");
        // tail unchanged.
        assert_eq!(rows[1].change(), "±0 B (+0.0 %)");
        assert_eq!(rows[1].class(), "r mono");
        // minimum from 0: no percentage of nothing.
        assert_eq!(rows[3].change(), "+576 B");
        assert_eq!(rows[3].class(), "r mono up");
        // No runtime figure on either side.
        assert_eq!(rows[4].delta(), None);
        assert_eq!(rows[4].change(), "–");
        assert_eq!(bytes_or_dash(rows[4].original), "–");
        assert_eq!(bytes_or_dash(Some(1234)), "1,234 B");
    }
}
