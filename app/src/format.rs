//! Number formatting for the views (pure functions).

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

/// Percentage with one decimal, `None` when the base is zero.
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".into()
    } else {
        format!("{:.1} %", part as f64 * 100.0 / whole as f64)
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
