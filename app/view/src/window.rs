//! Views that stay readable at thousands of buffers: the scope window the
//! lifetimes and per-op bars zoom to (with the overview strip that shows
//! it over the whole model), and the rows a virtualised table draws.

use std::fmt::Write as _;

use microarena_core::report::Report;

use crate::svg::{MAP_W, MapGeom};

/// Most scopes the lifetimes and per-op bars show before zooming in.
pub const MAX_SCOPES: i32 = 240;
/// Scopes shown around the peak when a model has more than [`MAX_SCOPES`].
pub const DEFAULT_SPAN: i32 = 160;

/// An inclusive range of scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeWindow {
    /// First scope shown.
    pub lo: i32,
    /// Last scope shown.
    pub hi: i32,
}

impl ScopeWindow {
    /// Every scope of `r` (as the arena map draws them).
    pub fn all(r: &Report) -> ScopeWindow {
        let g = MapGeom::of(r);
        ScopeWindow {
            lo: g.scope0,
            hi: g.scope0 + g.scopes - 1,
        }
    }

    /// What a report opens on: every scope, or [`DEFAULT_SPAN`] scopes
    /// around the peak when there are more than [`MAX_SCOPES`].
    pub fn initial(r: &Report) -> ScopeWindow {
        let all = ScopeWindow::all(r);
        if all.len() <= MAX_SCOPES {
            return all;
        }
        all.around(r.arena.peak_scope, DEFAULT_SPAN)
    }

    /// Scopes in the window.
    pub fn len(&self) -> i32 {
        self.hi - self.lo + 1
    }

    /// `true` for an empty window (never made by this module).
    pub fn is_empty(&self) -> bool {
        self.len() <= 0
    }

    /// A window of `span` scopes centred on `scope`, inside `self`.
    pub fn around(&self, scope: i32, span: i32) -> ScopeWindow {
        let span = span.clamp(1, self.len());
        let lo = (scope - span / 2).clamp(self.lo, self.hi - span + 1);
        ScopeWindow {
            lo,
            hi: lo + span - 1,
        }
    }

    /// `w` moved by `by` scopes, kept inside `self`.
    pub fn pan(&self, w: ScopeWindow, by: i32) -> ScopeWindow {
        self.around(w.lo + w.len() / 2 + by, w.len())
    }

    /// `w` with its span times `factor` around its middle, inside `self`.
    pub fn zoom(&self, w: ScopeWindow, factor: f64) -> ScopeWindow {
        let span = ((f64::from(w.len()) * factor).round() as i32).max(4);
        self.around(w.lo + w.len() / 2, span)
    }

    /// The window between two scopes typed or dragged in either order.
    pub fn between(&self, a: i32, b: i32) -> ScopeWindow {
        let (lo, hi) = (a.min(b).max(self.lo), a.max(b).min(self.hi));
        if hi < lo {
            return *self;
        }
        ScopeWindow { lo, hi }
    }

    /// Contains scope `s`.
    pub fn contains(&self, s: i32) -> bool {
        self.lo <= s && s <= self.hi
    }

    /// The map x range (user space, 0..MAP_W) of the window.
    pub fn x_range(&self, g: &MapGeom) -> (f64, f64) {
        let x0 = g.x(self.lo);
        (x0, g.x(self.hi + 1) - x0)
    }
}

/// The operators whose scope is in `w`, as a column range of the per-op
/// bars (`report.operators` order): first column and count.
pub fn op_columns(r: &Report, w: ScopeWindow) -> (usize, usize) {
    let inside: Vec<usize> = (0..r.operators.len())
        .filter(|&i| w.contains(r.operators[i].scope))
        .collect();
    match (inside.first(), inside.last()) {
        (Some(&a), Some(&b)) => (a, b - a + 1),
        _ => (0, r.operators.len()),
    }
}

/// Width of the overview strip's user space.
pub const STRIP_W: f64 = MAP_W;
/// Height of the overview strip's user space.
pub const STRIP_H: f64 = 60.0;

/// The overview strip: live bytes at every scope of the whole model (one
/// column per op, as `report.operators[].live_bytes`), the peak marked.
pub fn overview_body(r: &Report) -> String {
    let g = MapGeom::of(r);
    let max = r
        .operators
        .iter()
        .map(|o| o.live_bytes)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let mut s = String::with_capacity(r.operators.len() * 80);
    for o in r.operators.iter().filter(|o| o.scope >= 0) {
        let x = g.x(o.scope);
        let w = (g.x(o.scope + 1) - x).max(0.6);
        let h = o.live_bytes as f64 / max * (STRIP_H - 4.0);
        let _ = write!(
            s,
            r##"<rect x="{x:.3}" y="{:.2}" width="{w:.3}" height="{h:.2}" fill="#4f7cff"/>"##,
            STRIP_H - h
        );
    }
    let px = g.x(r.arena.peak_scope);
    let _ = write!(
        s,
        r##"<rect class="peak" x="{px:.3}" y="0" width="{:.3}" height="{STRIP_H}" fill="#ffd54a" fill-opacity="0.6"/>"##,
        (g.x(r.arena.peak_scope + 1) - px).max(1.0)
    );
    s
}

/// Rows of a virtualised table: which to draw and the blank space above and
/// below them, so the scroll bar is the whole table's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowWindow {
    /// First row drawn.
    pub start: usize,
    /// One past the last row drawn.
    pub end: usize,
    /// Pixels above the first row drawn.
    pub above: f64,
    /// Pixels below the last row drawn.
    pub below: f64,
}

/// Rows of a table a virtualised view draws from `rows` of `row_h` pixels,
/// scrolled `scroll` pixels down a `viewport`-pixel window, with `overscan`
/// rows on each side.
pub fn row_window(
    rows: usize,
    scroll: f64,
    viewport: f64,
    row_h: f64,
    overscan: usize,
) -> RowWindow {
    let row_h = row_h.max(1.0);
    let first = ((scroll.max(0.0) / row_h).floor() as usize).min(rows);
    let visible = (viewport.max(0.0) / row_h).ceil() as usize + 1;
    let start = first.saturating_sub(overscan);
    let end = (first + visible + overscan).min(rows);
    RowWindow {
        start,
        end,
        above: start as f64 * row_h,
        below: rows.saturating_sub(end) as f64 * row_h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn a_small_model_shows_every_scope_and_a_large_one_opens_on_its_peak() {
        let r = testing::report();
        assert_eq!(ScopeWindow::initial(&r), ScopeWindow::all(&r));
        let all = ScopeWindow { lo: 0, hi: 2337 };
        let w = all.around(2300, DEFAULT_SPAN);
        assert_eq!((w.lo, w.hi), (2178, 2337), "kept inside at the end");
        assert_eq!(w.len(), DEFAULT_SPAN);
        let w = all.around(3, DEFAULT_SPAN);
        assert_eq!((w.lo, w.hi), (0, 159));
        assert_eq!(all.pan(w, 100).lo, 100);
        assert_eq!(all.zoom(w, 0.5).len(), 80);
        assert_eq!(all.zoom(w, 100.0), all);
        assert_eq!(all.between(50, 10), ScopeWindow { lo: 10, hi: 50 });
        assert_eq!(all.between(-5, 9000), all);
    }

    #[test]
    fn op_columns_are_the_ops_in_the_window() {
        let r = testing::report();
        assert_eq!(op_columns(&r, ScopeWindow { lo: 1, hi: 1 }), (1, 1));
        assert_eq!(op_columns(&r, ScopeWindow::all(&r)), (0, 2));
    }

    #[test]
    fn a_virtual_table_draws_what_shows_and_keeps_the_full_height() {
        let w = row_window(2000, 2600.0, 480.0, 26.0, 5);
        assert_eq!((w.start, w.end), (95, 125));
        assert_eq!(
            w.above + w.below + (w.end - w.start) as f64 * 26.0,
            2000.0 * 26.0
        );
        let top = row_window(2000, 0.0, 480.0, 26.0, 5);
        assert_eq!(top.start, 0);
        let few = row_window(3, 0.0, 480.0, 26.0, 5);
        assert_eq!((few.start, few.end, few.below), (0, 3, 0.0));
    }

    #[test]
    fn the_overview_marks_every_op_and_the_peak() {
        let r = testing::report();
        let s = overview_body(&r);
        assert_eq!(s.matches("<rect").count(), r.operators.len() + 1);
        assert!(s.contains("class=\"peak\""));
    }
}
