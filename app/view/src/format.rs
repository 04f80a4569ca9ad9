//! Number and text formatting for the views.

pub use microarena_core::report::grouped;

/// Signed variant of [`grouped`].
pub fn grouped_i(v: i64) -> String {
    if v < 0 {
        format!("−{}", grouped(v.unsigned_abs()))
    } else {
        grouped(v as u64)
    }
}

/// `84080` → `"82.1 KiB"`.
pub fn human(v: u64) -> String {
    const K: f64 = 1024.0;
    let f = v as f64;
    if f < K {
        format!("{v} B")
    } else if f < K * K {
        format!("{:.1} KiB", f / K)
    } else {
        format!("{:.2} MiB", f / K / K)
    }
}

/// Percentage with one decimal, `–` when the base is zero.
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".into()
    } else {
        format!("{:.1} %", part as f64 * 100.0 / whole as f64)
    }
}

/// A head buffer's shape: a scratch buffer is raw bytes and has none (`"–"`).
pub fn buffer_shape(b: &microarena_core::report::BufferInfo) -> String {
    match b.kind {
        microarena_core::report::BufferClass::Scratch => "–".into(),
        microarena_core::report::BufferClass::Tensor => shape(&b.shape),
    }
}

/// `[1, 96, 96, 3]` → `"1×96×96×3"`; scalars show as `"scalar"`.
pub fn shape(s: &[i32]) -> String {
    if s.is_empty() {
        return "scalar".into();
    }
    s.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("×")
}

/// `+1,234 B`, `−240 B`, `±0 B`.
pub fn signed_bytes(delta: i128) -> String {
    let mag = grouped(u64::try_from(delta.unsigned_abs()).unwrap_or(u64::MAX));
    match delta.signum() {
        1 => format!("+{mag} B"),
        -1 => format!("−{mag} B"),
        _ => "±0 B".into(),
    }
}

/// The first `n` characters of `s`, with `…` when something was cut.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let head: String = s.chars().take(n).collect();
        format!("{head}…")
    }
}

/// Escapes text for XML attributes and content.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_grouping_uses_a_true_minus() {
        assert_eq!(grouped_i(-1_234_567), "−1,234,567");
        assert_eq!(grouped_i(999), "999");
        assert_eq!(grouped_i(i64::MIN), "−9,223,372,036,854,775,808");
    }

    #[test]
    fn human_switches_unit_at_each_power_of_1024() {
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1024), "1.0 KiB");
        // 84080 / 1024 = 82.109…
        assert_eq!(human(84_080), "82.1 KiB");
        // 3 MiB + 512 KiB = 3.5 MiB
        assert_eq!(human(3 * 1024 * 1024 + 512 * 1024), "3.50 MiB");
    }

    #[test]
    fn percent_of_zero_is_a_dash() {
        assert_eq!(percent(1, 3), "33.3 %");
        assert_eq!(percent(5, 0), "–");
    }

    #[test]
    fn shape_joins_with_times_and_names_scalars() {
        assert_eq!(shape(&[1, 96, 96, 3]), "1×96×96×3");
        assert_eq!(shape(&[]), "scalar");
        let report = crate::testing::report();
        // The scratch buffer's `shape` holds [64], yet it is bytes with no shape.
        assert_eq!(buffer_shape(&report.buffers[1]), "–");
        assert_eq!(buffer_shape(&report.buffers[0]), "1×10×10");
    }

    #[test]
    fn signed_bytes_marks_the_direction() {
        assert_eq!(signed_bytes(1234), "+1,234 B");
        assert_eq!(signed_bytes(-240), "−240 B");
        assert_eq!(signed_bytes(0), "±0 B");
        // Beyond u64 the magnitude saturates rather than wrapping.
        assert_eq!(signed_bytes(i128::MAX), format!("+{} B", grouped(u64::MAX)));
    }

    #[test]
    fn truncate_counts_characters_not_bytes() {
        assert_eq!(truncate("×××", 3), "×××");
        assert_eq!(truncate("a×b×c", 3), "a×b…");
    }

    #[test]
    fn xml_escapes_all_five_entities() {
        assert_eq!(
            xml(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;"
        );
    }
}
