//! # microarena-view
//!
//! The web app's leptos-free half, so it builds and is tested natively:
//! [`format`] (numbers and text), [`whatif`] (dims text and the delta
//! table), [`svg`] (chart markup as strings), [`tooltip`] (tooltip rows),
//! [`inputs`] (the graph inputs a what-if edits), [`ops`] (the operator
//! table's sorting and the flash view's shares), [`protocol`] (the typed
//! page ↔ worker messages and their one encoding), [`analysis`] (what the
//! worker computes for a request) and [`runtime`] (microarena-runtime's
//! execution modes and banded stages), [`steps`] (the step-through's words,
//! arena bar, overlays and keys), [`diagnostics`] (repeated findings grouped
//! by op kind) and [`window`] (the scope window, overview strip and
//! virtualised rows that keep large models readable). Every figure comes from core.

pub mod analysis;
pub mod diagnostics;
pub mod format;
pub mod inputs;
pub mod lessons;
pub mod ops;
pub mod protocol;
pub mod runtime;
pub mod steps;
pub mod svg;
pub mod tooltip;
pub mod whatif;
pub mod window;

#[cfg(test)]
mod testing;
