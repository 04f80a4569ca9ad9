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
//! arena bar, overlays and keys). Every figure comes from core.

pub mod analysis;
pub mod format;
pub mod inputs;
pub mod ops;
pub mod protocol;
pub mod runtime;
pub mod steps;
pub mod svg;
pub mod tooltip;
pub mod whatif;

#[cfg(test)]
mod testing;
