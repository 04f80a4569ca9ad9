//! SVG markup for the charts, built as plain strings from a [`Report`].
//!
//! Charts with thousands of rectangles are set once through `innerHTML`
//! instead of one reactive view node per rectangle; interaction uses event
//! delegation on `data-i` (buffer index) and `data-op` (operator index)
//! attributes, and selection is drawn by a small reactive overlay.

use std::fmt::Write as _;

use microarena_core::report::{BandedStageInfo, BufferClass, BufferInfo, Region, Report};

use crate::format::{grouped, human, xml};

/// Width of the arena map's user space.
pub const MAP_W: f64 = 1000.0;
/// Height of the arena map's user space.
pub const MAP_H: f64 = 1000.0;

/// Fill for tensors, by producing op (cycled), for scratch and for padding.
const TENSOR_FILLS: [&str; 6] = [
    "#4f7cff", "#22a699", "#7a5cff", "#2f9bd6", "#3fb56b", "#5a6fd6",
];
/// Scratch buffers.
pub const SCRATCH_FILL: &str = "#f08c2e";
/// Alignment padding.
pub const PADDING_FILL: &str = "#e5484d";
/// Offline-planned buffers.
const OFFLINE_FILL: &str = "#a15ccf";
/// Variable tensors (LSTM/SVDF state, alive for the interpreter's life).
pub const VARIABLE_FILL: &str = "#c2357e";

/// The arena map's geometry: scopes on x, offsets on y (0 at the bottom).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapGeom {
    /// First scope drawn (−1 when a buffer is live before everything).
    pub scope0: i32,
    /// Number of scope columns.
    pub scopes: i32,
    /// Head bytes (y extent).
    pub head: u64,
}

impl MapGeom {
    /// Geometry for `r`.
    pub fn of(r: &Report) -> MapGeom {
        let scope0 = r.buffers.iter().map(|b| b.first).min().unwrap_or(0).min(0);
        let end = r
            .buffers
            .iter()
            .map(|b| b.last)
            .max()
            .unwrap_or(0)
            .max(r.arena.max_scope);
        let top = r
            .buffers
            .iter()
            .map(|b| (b.offset.max(0) as u64).saturating_add(b.aligned_bytes))
            .max()
            .unwrap_or(0)
            .max(r.arena.head_bytes);
        MapGeom {
            scope0,
            scopes: (end - scope0 + 1).max(1),
            head: top.max(1),
        }
    }

    /// x of the left edge of scope `s`.
    pub fn x(&self, s: i32) -> f64 {
        f64::from(s - self.scope0) / f64::from(self.scopes) * MAP_W
    }

    /// y of byte offset `o` (bottom = 0).
    pub fn y(&self, o: f64) -> f64 {
        MAP_H - o / self.head as f64 * MAP_H
    }

    /// Scope under map x.
    pub fn scope_at(&self, x: f64) -> f64 {
        x / MAP_W * f64::from(self.scopes) + f64::from(self.scope0)
    }

    /// Byte offset under map y.
    pub fn offset_at(&self, y: f64) -> f64 {
        (MAP_H - y) / MAP_H * self.head as f64
    }

    /// The rectangle (x, y, w, h) of buffer `b`, padding included.
    pub fn rect(&self, b: &BufferInfo) -> (f64, f64, f64, f64) {
        let x = self.x(b.first);
        let w = self.x(b.last + 1) - x;
        let top = self.y(b.offset as f64 + b.aligned_bytes as f64);
        let h = self.y(b.offset as f64) - top;
        (x, top, w, h)
    }
}

/// `true` when head buffer `b` is a variable tensor (an offline plan put it in the head).
pub fn is_variable(r: &Report, b: &BufferInfo) -> bool {
    b.kind == BufferClass::Tensor
        && r.variables
            .iter()
            .any(|v| v.subgraph == b.subgraph && Some(v.tensor) == b.tensor)
}

/// Indices into `r.variables` of the variables in the tail (the usual place),
/// which the charts draw as a region of their own.
pub fn tail_variables(r: &Report) -> Vec<usize> {
    (0..r.variables.len())
        .filter(|&k| r.variables[k].region != Region::Head)
        .collect()
}

/// Fill colour of buffer `b`; `variable` when it is a variable tensor.
pub fn fill(b: &BufferInfo, variable: bool) -> &'static str {
    if variable {
        VARIABLE_FILL
    } else if b.kind == BufferClass::Scratch {
        SCRATCH_FILL
    } else if b.offline {
        OFFLINE_FILL
    } else {
        TENSOR_FILLS[b.op.map_or(0, |o| o + 1) % TENSOR_FILLS.len()]
    }
}

/// The map's rectangles (peak band, buffers, padding) in map user space.
pub fn map_body(r: &Report) -> String {
    let g = MapGeom::of(r);
    let mut s = String::with_capacity(r.buffers.len() * 170 + 256);
    // White outlines separate neighbours, but would swamp columns narrower than a pixel.
    let outline = if g.scopes <= 200 {
        r##" stroke="#fff" stroke-width="0.6""##
    } else {
        ""
    };
    for (i, b) in r.buffers.iter().enumerate() {
        let (x, y, w, h) = g.rect(b);
        let _ = write!(
            s,
            r#"<rect data-i="{i}" x="{x:.3}" y="{y:.3}" width="{w:.3}" height="{h:.3}" fill="{}"{outline}/>"#,
            fill(b, is_variable(r, b))
        );
        let pad = b.aligned_bytes.saturating_sub(b.bytes);
        if pad > 0 {
            let ph = pad as f64 / g.head as f64 * MAP_H;
            let _ = write!(
                s,
                r#"<rect data-i="{i}" class="pad" x="{x:.3}" y="{y:.3}" width="{w:.3}" height="{ph:.4}" fill="{PADDING_FILL}"/>"#
            );
        }
    }
    let px = g.x(r.arena.peak_scope);
    let pw = g.x(r.arena.peak_scope + 1) - px;
    let _ = write!(
        s,
        r##"<rect class="peak" x="{px:.3}" y="0" width="{pw:.3}" height="{MAP_H}" fill="#ffd54a" fill-opacity="0.35" stroke="#d4a300" stroke-dasharray="4 3" pointer-events="none"/>"##
    );
    s
}

/// A self-contained SVG of the arena map with axes and a legend, for export.
pub fn standalone_map(r: &Report) -> (String, u32, u32) {
    const W: u32 = 1400;
    const H: u32 = 820;
    let (l, t, pw, ph) = (90.0, 56.0, 1280.0, 660.0);
    let g = MapGeom::of(r);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="Inter, system-ui, sans-serif" font-size="14"><rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    let _ = write!(
        s,
        r##"<text x="{l}" y="30" font-size="20" font-weight="600" fill="#111827">{} — arena map ({}, {})</text>"##,
        xml(&r.model.file),
        xml(&r.target),
        xml(&r.planner)
    );
    let _ = write!(
        s,
        r##"<text x="{}" y="30" text-anchor="end" fill="#4b5563">head {} B · tail {} B · total {} B · minimum {} B</text>"##,
        l + pw,
        grouped(r.arena.head_bytes),
        grouped(r.arena.tail_bytes),
        grouped(r.arena.total_bytes),
        grouped(r.arena.minimum_bytes)
    );
    let _ = write!(
        s,
        r##"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="#f8fafc" stroke="#cbd5e1"/><svg x="{l}" y="{t}" width="{pw}" height="{ph}" viewBox="0 0 {MAP_W} {MAP_H}" preserveAspectRatio="none">{}</svg>"##,
        map_body(r)
    );
    for k in 0..=4 {
        let frac = f64::from(k) / 4.0;
        let y = t + ph - frac * ph;
        let bytes = (g.head as f64 * frac).round() as u64;
        let _ = write!(
            s,
            r##"<line x1="{}" x2="{l}" y1="{y:.1}" y2="{y:.1}" stroke="#64748b"/><text x="{}" y="{:.1}" text-anchor="end" fill="#334155">{}</text>"##,
            l - 6.0,
            l - 10.0,
            y + 5.0,
            human(bytes)
        );
    }
    let ticks = g.scopes.min(10);
    for k in 0..=ticks {
        let scope = g.scope0 + (f64::from(k) / f64::from(ticks) * f64::from(g.scopes)) as i32;
        let x = l + g.x(scope) / MAP_W * pw;
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{}" stroke="#64748b"/><text x="{x:.1}" y="{}" text-anchor="middle" fill="#334155">{scope}</text>"##,
            t + ph,
            t + ph + 6.0,
            t + ph + 24.0
        );
    }
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#334155">scope (operator step); peak at scope {}</text><text transform="translate(22 {}) rotate(-90)" text-anchor="middle" fill="#334155">offset in head</text>"##,
        l + pw / 2.0,
        t + ph + 44.0,
        r.arena.peak_scope,
        t + ph / 2.0
    );
    // Legend on its own row under the axis title, spaced by label length.
    let vars: u64 = r.variables.iter().map(|v| v.bytes).sum();
    let mut legend: Vec<(&str, String)> = vec![
        ("#4f7cff", "tensor".into()),
        (SCRATCH_FILL, "scratch".into()),
        (PADDING_FILL, "alignment padding".into()),
        ("#ffd54a", "peak scope".into()),
    ];
    if !r.variables.is_empty() {
        legend.push((
            VARIABLE_FILL,
            format!(
                "variables: {} tensors, {} B in the tail, alive for the whole interpreter",
                r.variables.len(),
                grouped(vars)
            ),
        ));
    }
    let mut x = l;
    let y = t + ph + 66.0;
    for (c, name) in legend {
        let _ = write!(
            s,
            r##"<rect x="{x}" y="{}" width="14" height="14" fill="{c}"/><text x="{}" y="{y}" fill="#334155">{}</text>"##,
            y - 12.0,
            x + 20.0,
            xml(&name)
        );
        x += 20.0 + 7.6 * name.chars().count() as f64 + 28.0;
    }
    s.push_str("</svg>");
    (s, W, H)
}

/// One row of the lifetimes chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// A variable tensor in the tail (index into `report.variables`).
    Variable(usize),
    /// A head buffer (index into `report.buffers`).
    Buffer(usize),
}

/// Lifetimes: one row per tail variable first (spanning every scope: they
/// live for the interpreter's whole life), then one per head buffer (ordered
/// by first scope), bars across scopes. Returns the markup and the rows.
pub fn lifetimes_body(r: &Report, row_h: f64) -> (String, Vec<Row>) {
    lifetimes_window(r, row_h, crate::window::ScopeWindow::all(r))
}

/// [`lifetimes_body`] for the head buffers alive in scope window `w` only
/// (the tail variables, alive everywhere, always).
pub fn lifetimes_window(
    r: &Report,
    row_h: f64,
    w: crate::window::ScopeWindow,
) -> (String, Vec<Row>) {
    let g = MapGeom::of(r);
    let mut order: Vec<usize> = (0..r.buffers.len())
        .filter(|&i| r.buffers[i].first <= w.hi && r.buffers[i].last >= w.lo)
        .collect();
    order.sort_by_key(|&i| (r.buffers[i].first, r.buffers[i].last, i));
    let rows: Vec<Row> = tail_variables(r)
        .into_iter()
        .map(Row::Variable)
        .chain(order.into_iter().map(Row::Buffer))
        .collect();
    let mut s = String::with_capacity(rows.len() * 110 + 128);
    let px = g.x(r.arena.peak_scope);
    let pw = g.x(r.arena.peak_scope + 1) - px;
    let total = row_h * rows.len() as f64;
    let _ = write!(
        s,
        r##"<rect x="{px:.3}" y="0" width="{pw:.3}" height="{total}" fill="#ffd54a" fill-opacity="0.28"/>"##
    );
    for (row, &what) in rows.iter().enumerate() {
        let y = row as f64 * row_h + 1.0;
        let h = row_h - 2.0;
        match what {
            Row::Variable(k) => {
                let _ = write!(
                    s,
                    r#"<rect data-v="{k}" x="0" y="{y:.1}" width="{MAP_W}" height="{h:.1}" rx="1" fill="{VARIABLE_FILL}"/>"#
                );
            }
            Row::Buffer(i) => {
                let b = &r.buffers[i];
                let x = g.x(b.first);
                let w = g.x(b.last + 1) - x;
                let _ = write!(
                    s,
                    r#"<rect data-i="{i}" x="{x:.3}" y="{y:.1}" width="{w:.3}" height="{h:.1}" rx="1" fill="{}"/>"#,
                    fill(b, is_variable(r, b))
                );
            }
        }
    }
    (s, rows)
}

/// Width of one operator column in the op-bars chart.
pub const OP_W: f64 = 10.0;
/// Height of the op-bars user space.
pub const OPS_H: f64 = 1000.0;

/// Per-op bars: live head bytes minus scratch, scratch, and persistent tail
/// bytes stacked; the peak op gets a highlighted column. The op under the
/// pointer is found from its x position (column `i` spans `i·OP_W..`), so
/// the bars carry no attributes.
pub fn op_bars_body(r: &Report) -> String {
    let max = r
        .operators
        .iter()
        .map(|o| o.live_bytes.max(o.scratch_bytes) + o.persistent_bytes)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let peak = peak_op_row(r);
    let mut s = String::with_capacity(r.operators.len() * 300);
    for (i, o) in r.operators.iter().enumerate() {
        let x = i as f64 * OP_W;
        if Some(i) == peak {
            let _ = write!(
                s,
                r##"<rect class="peak" x="{x}" y="0" width="{OP_W}" height="{OPS_H}" fill="#ffd54a" fill-opacity="0.45"/>"##
            );
        }
        let live = o.live_bytes.saturating_sub(o.scratch_bytes) as f64;
        let scratch = o.scratch_bytes as f64;
        let pers = o.persistent_bytes as f64;
        let mut y = OPS_H;
        for (v, c) in [
            (live, "#4f7cff"),
            (scratch, SCRATCH_FILL),
            (pers, "#94a3b8"),
        ] {
            if v <= 0.0 {
                continue;
            }
            let h = v / max * OPS_H;
            y -= h;
            let _ = write!(
                s,
                r#"<rect x="{:.2}" y="{y:.3}" width="{:.2}" height="{h:.3}" fill="{c}"/>"#,
                x + 1.0,
                OP_W - 2.0
            );
        }
    }
    s
}

/// Height of the compute bars' user space (same columns as the op bars).
pub const COMPUTE_H: f64 = 400.0;
/// Fill of the MAC bars.
pub const MACS_FILL: &str = "#8b5cf6";
/// Fill of constant (flash) bytes.
pub const FLASH_FILL: &str = "#14b8a6";
/// Fill of tail (RAM) bytes.
pub const TAIL_FILL: &str = "#94a3b8";

/// Per-op compute bars, aligned with [`op_bars_body`]'s columns: MACs scaled
/// to the heaviest op; ops without MACs get no bar.
pub fn compute_bars_body(r: &Report) -> String {
    let max = r.operators.iter().map(|o| o.macs).max().unwrap_or(0).max(1) as f64;
    let mut s = String::with_capacity(r.operators.len() * 100);
    for (i, o) in r.operators.iter().enumerate() {
        if o.macs == 0 {
            continue;
        }
        let h = o.macs as f64 / max * COMPUTE_H;
        let _ = write!(
            s,
            r#"<rect x="{:.2}" y="{:.3}" width="{:.2}" height="{h:.3}" fill="{MACS_FILL}"/>"#,
            i as f64 * OP_W + 1.0,
            COMPUTE_H - h,
            OP_W - 2.0
        );
    }
    s
}

/// Per op, its constant bytes in flash (up from the middle line, scaled to
/// the largest) against the tail bytes its Prepare keeps in RAM (down, scaled
/// to the largest tail): each half has its own scale, since weights are
/// usually orders of magnitude larger than what is derived from them.
pub fn flash_vs_tail_body(r: &Report) -> String {
    let half = COMPUTE_H / 2.0;
    let fmax = r
        .operators
        .iter()
        .map(|o| o.constant_bytes)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let tmax = r
        .operators
        .iter()
        .map(|o| o.persistent_bytes)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let mut s = String::with_capacity(r.operators.len() * 200);
    for (i, o) in r.operators.iter().enumerate() {
        let x = i as f64 * OP_W + 1.0;
        let w = OP_W - 2.0;
        if o.constant_bytes > 0 {
            let h = o.constant_bytes as f64 / fmax * half;
            let _ = write!(
                s,
                r#"<rect x="{x:.2}" y="{:.3}" width="{w:.2}" height="{h:.3}" fill="{FLASH_FILL}"/>"#,
                half - h
            );
        }
        if o.persistent_bytes > 0 {
            let h = o.persistent_bytes as f64 / tmax * half;
            let _ = write!(
                s,
                r#"<rect x="{x:.2}" y="{half:.3}" width="{w:.2}" height="{h:.3}" fill="{TAIL_FILL}"/>"#
            );
        }
    }
    let _ = write!(
        s,
        r##"<line x1="0" x2="{:.2}" y1="{half}" y2="{half}" stroke="#334155" stroke-width="1" vector-effect="non-scaling-stroke"/>"##,
        OP_W * r.operators.len().max(1) as f64
    );
    s
}

/// Row in `r.operators` of the peak op (subgraph 0).
pub fn peak_op_row(r: &Report) -> Option<usize> {
    let p = r.arena.peak_op?;
    r.operators
        .iter()
        .position(|o| o.subgraph == 0 && o.index == p)
}

/// Width of the patch view's user space.
pub const PATCH_W: f64 = 440.0;
/// Height of the patch view's user space.
pub const PATCH_H: f64 = 298.0;
/// The receptive field and the band it feeds.
const FIELD_FILL: &str = "#f59e0b";

/// A banded stage as two tall rectangles over the same image height: the
/// stage's input (`input_rows` rows) with the rows one band reads through
/// every window (`field_first..field_end`) highlighted, and its output
/// (`bands` rows, one per band) with that band's row highlighted, joined by
/// a funnel. The overlap of neighbouring bands' fields is the halo the rings
/// keep instead of recomputing it.
pub fn patch_body(st: &BandedStageInfo) -> String {
    const TOP: f64 = 30.0;
    const H: f64 = 240.0;
    const COL_W: f64 = 100.0;
    const X_IN: f64 = 70.0;
    const X_OUT: f64 = 270.0;
    let band = st.field_band();
    let rows_in = st.input_rows.max(1) as f64;
    let rows_out = st.bands.max(1) as f64;
    let y_in = |r: u64| TOP + r as f64 / rows_in * H;
    let y_out = |r: u64| TOP + r as f64 / rows_out * H;
    let (f0, f1) = (y_in(st.field_first), y_in(st.field_end));
    let (b0, b1) = (y_out(band), y_out(band + 1));
    let mut s = String::with_capacity(4096);
    for (x, rows, label) in [
        (
            X_IN,
            st.input_rows,
            format!("input · {} rows", st.input_rows),
        ),
        (
            X_OUT,
            st.bands,
            format!("output · {} rows = bands", st.bands),
        ),
    ] {
        let _ = write!(
            s,
            r##"<text x="{:.2}" y="{:.2}" text-anchor="middle" font-size="12" fill="#334155">{}</text><rect x="{x:.2}" y="{TOP:.2}" width="{COL_W:.2}" height="{H:.2}" fill="#f1f5f9" stroke="#94a3b8"/>"##,
            x + COL_W / 2.0,
            TOP - 10.0,
            xml(&label)
        );
        // Row lines only while they stay apart.
        if rows <= 128 {
            for r in 1..rows {
                let y = TOP + r as f64 / rows as f64 * H;
                let _ = write!(
                    s,
                    r##"<line x1="{x:.2}" x2="{:.2}" y1="{y:.2}" y2="{y:.2}" stroke="#cbd5e1" stroke-width="0.5"/>"##,
                    x + COL_W
                );
            }
        }
    }
    let _ = write!(
        s,
        r##"<polygon points="{:.2},{f0:.2} {X_OUT:.2},{b0:.2} {X_OUT:.2},{b1:.2} {:.2},{f1:.2}" fill="{FIELD_FILL}" fill-opacity="0.18"/>"##,
        X_IN + COL_W,
        X_IN + COL_W
    );
    let _ = write!(
        s,
        r##"<rect class="field" data-first="{}" data-end="{}" x="{X_IN:.2}" y="{f0:.2}" width="{COL_W:.2}" height="{:.2}" fill="{FIELD_FILL}" fill-opacity="0.55" stroke="#b45309"/>"##,
        st.field_first,
        st.field_end,
        f1 - f0
    );
    let _ = write!(
        s,
        r##"<rect class="band" data-band="{band}" x="{X_OUT:.2}" y="{b0:.2}" width="{COL_W:.2}" height="{:.2}" fill="{FIELD_FILL}" fill-opacity="0.8" stroke="#b45309"/>"##,
        b1 - b0
    );
    // Row labels: the field's first and last row left of the input, the band right of the output.
    let _ = write!(
        s,
        r##"<text x="{:.2}" y="{:.2}" text-anchor="end" font-size="11" fill="#92400e">row {}</text><text x="{:.2}" y="{:.2}" text-anchor="end" font-size="11" fill="#92400e">row {}</text><text x="{:.2}" y="{:.2}" font-size="11" fill="#92400e">row {band}</text>"##,
        X_IN - 6.0,
        f0 + 9.0,
        st.field_first,
        X_IN - 6.0,
        f1,
        st.field_end.saturating_sub(1),
        X_OUT + COL_W + 6.0,
        (b0 + b1) / 2.0 + 4.0,
    );
    let _ = write!(
        s,
        r##"<text x="{:.2}" y="{:.2}" text-anchor="middle" font-size="11" fill="#64748b">one band reads input rows {}–{}</text>"##,
        PATCH_W / 2.0,
        TOP + H + 18.0,
        st.field_first,
        st.field_end.saturating_sub(1)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn compute_bars_scale_to_the_heaviest_op() {
        // Fixture: op 0 has 4,608 MACs (full height), op 1 has 420:
        // 420 / 4608 · 400 = 36.458.
        let b = compute_bars_body(&testing::report());
        assert!(
            b.contains(r#"x="1.00" y="0.000" width="8.00" height="400.000""#),
            "{b}"
        );
        assert!(
            b.contains(r#"x="11.00" y="363.542" width="8.00" height="36.458""#),
            "{b}"
        );
    }

    #[test]
    fn flash_goes_up_and_tail_goes_down_each_on_its_scale() {
        // Op 0: 288 constant bytes (the largest: half height up), tail 48 of
        // the largest 200: 48 / 200 · 200 = 48 down. Op 1: no constants, tail 200.
        let b = flash_vs_tail_body(&testing::report());
        assert!(
            b.contains(r#"x="1.00" y="0.000" width="8.00" height="200.000""#),
            "{b}"
        );
        assert!(
            b.contains(r#"x="1.00" y="200.000" width="8.00" height="48.000""#),
            "{b}"
        );
        assert!(
            b.contains(r#"x="11.00" y="200.000" width="8.00" height="200.000""#),
            "{b}"
        );
        assert_eq!(b.matches("<rect").count(), 3);
    }

    #[test]
    fn geometry_puts_scopes_on_x_and_offsets_on_y() {
        let r = testing::report();
        let g = MapGeom::of(&r);
        // Scopes 0..=1, the head ends at the scratch buffer's top (112 + 64).
        assert_eq!(
            g,
            MapGeom {
                scope0: 0,
                scopes: 2,
                head: 176
            }
        );
        assert_eq!(g.x(1), 500.0);
        assert_eq!(g.y(88.0), 500.0);
        assert_eq!(g.scope_at(500.0), 1.0);
        assert_eq!(g.offset_at(500.0), 88.0);
        // The input spans both scopes and its 112 aligned bytes: 112/176 of the height.
        let (x, y, w, h) = g.rect(&r.buffers[0]);
        assert_eq!((x, w), (0.0, 1000.0));
        assert!((y - 363.636).abs() < 1e-3 && (h - 636.364).abs() < 1e-3);
    }

    #[test]
    fn map_body_draws_buffers_padding_and_the_peak_band() {
        let r = testing::report();
        let s = map_body(&r);
        assert!(s.starts_with(
            r##"<rect data-i="0" x="0.000" y="363.636" width="1000.000" height="636.364" fill="#4f7cff" stroke="#fff" stroke-width="0.6"/>"##
        ));
        // 12 bytes of padding are 12/176 of the height.
        assert!(s.contains(
            r##"<rect data-i="0" class="pad" x="0.000" y="363.636" width="1000.000" height="68.1818" fill="#e5484d"/>"##
        ));
        assert!(s.contains(
            r##"<rect data-i="1" x="500.000" y="0.000" width="500.000" height="363.636" fill="#f08c2e" stroke="#fff" stroke-width="0.6"/>"##
        ));
        assert!(s.ends_with(
            r##"<rect class="peak" x="500.000" y="0" width="500.000" height="1000" fill="#ffd54a" fill-opacity="0.35" stroke="#d4a300" stroke-dasharray="4 3" pointer-events="none"/>"##
        ));
        assert_eq!(s.matches("<rect").count(), 4);
    }

    #[test]
    fn lifetimes_put_tail_variables_first() {
        let r = testing::report();
        assert_eq!(tail_variables(&r), vec![0]);
        assert!(!is_variable(&r, &r.buffers[0]));
        let (s, rows) = lifetimes_body(&r, 12.0);
        assert_eq!(rows, vec![Row::Variable(0), Row::Buffer(0), Row::Buffer(1)]);
        assert!(s.contains(
            r##"<rect data-v="0" x="0" y="1.0" width="1000" height="10.0" rx="1" fill="#c2357e"/>"##
        ));
        assert!(s.contains(
            r##"<rect data-i="1" x="500.000" y="25.0" width="500.000" height="10.0" rx="1" fill="#f08c2e"/>"##
        ));
    }

    #[test]
    fn op_bars_scale_to_the_tallest_stack() {
        let r = testing::report();
        assert_eq!(peak_op_row(&r), Some(1));
        let s = op_bars_body(&r);
        // The tallest stack is op 1: 176 live + 200 persistent = 376; op 0's
        // 112 live bytes are 112/376 of the height.
        assert!(s.starts_with(
            r##"<rect x="1.00" y="702.128" width="8.00" height="297.872" fill="#4f7cff"/>"##
        ));
        assert!(s.contains(r##"<rect class="peak" x="10" y="0" width="10" height="1000""##));
        // Op 1: 112 live without scratch, then 64 scratch, then 200 persistent.
        assert!(s.contains(
            r##"<rect x="11.00" y="702.128" width="8.00" height="297.872" fill="#4f7cff"/>"##
        ));
        assert!(s.contains(
            r##"<rect x="11.00" y="531.915" width="8.00" height="170.213" fill="#f08c2e"/>"##
        ));
    }

    #[test]
    fn the_export_is_a_complete_document_with_a_variable_legend() {
        let r = testing::report();
        let (s, w, h) = standalone_map(&r);
        assert_eq!((w, h), (1400, 820));
        assert!(s.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="1400""#));
        assert!(s.ends_with("</text></svg>"));
        assert!(s.contains("tiny.tflite — arena map (x86_64, tflm-greedy)"));
        assert!(s.contains("head 176 B · tail 400 B · total 576 B · minimum 576 B"));
        assert!(s.contains("variables: 1 tensors, 32 B in the tail"));
    }

    #[test]
    fn the_patch_view_highlights_one_bands_field_and_its_row() {
        // person_detect's first stage: ops 0-7, 12 bands over 96 input rows,
        // the middle band (12 / 2 = 6) reads input rows 42..69. On a 240-high
        // column from y = 30: 42/96·240 = 105 → y 135, 27 rows → 67.5 high;
        // band 6 of 12 → 6·20 = 120 → y 150, 20 high.
        let st = BandedStageInfo {
            first_op: 0,
            last_op: 7,
            bands: 12,
            ring_bytes: 9600,
            input_rows: 96,
            field_first: 42,
            field_end: 69,
            over_input: false,
        };
        let s = patch_body(&st);
        assert!(
            s.contains(r##"<rect class="field" data-first="42" data-end="69" x="70.00" y="135.00" width="100.00" height="67.50""##),
            "{s}"
        );
        assert!(
            s.contains(r##"<rect class="band" data-band="6" x="270.00" y="150.00" width="100.00" height="20.00""##),
            "{s}"
        );
        // The funnel joins the field's right edge to the band's left edge.
        assert!(s.contains(r#"points="170.00,135.00 270.00,150.00 270.00,170.00 170.00,202.50""#));
        // Row lines: 95 between the input's rows, 11 between the output's.
        assert_eq!(s.matches("<line").count(), 95 + 11);
        assert!(s.contains("input · 96 rows"));
        assert!(s.contains("output · 12 rows = bands"));
        assert!(s.contains("one band reads input rows 42–68"));
    }
}
