//! What `optimize` reports: the rewrite's figures next to the report of the
//! model it wrote.

use alloc::string::String;
use alloc::vec::Vec;

use super::Report;
use crate::plan::PlannerKind;
use crate::rewrite::optimize::Optimized;
use crate::tflm::profile::TargetProfile;

/// The JSON `microarena optimize --json` prints.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OptimizeReport {
    /// The model read (display name).
    pub input: String,
    /// The model written (display name).
    pub output: String,
    /// Target profile of the reported tail and total.
    pub target: String,
    /// Planner that proposed the tensor offsets.
    pub planner: String,
    /// TFLM's head for the input.
    pub original_head_bytes: u64,
    /// TFLM's head for the output (what the greedy planner gives on it).
    pub head_bytes: u64,
    /// `original_head_bytes − head_bytes`.
    pub saved_bytes: u64,
    /// No plan can have a smaller head.
    pub lower_bound_bytes: u64,
    /// The head equals the lower bound for this order.
    pub optimal: bool,
    /// Which candidate plan won.
    pub strategy: String,
    /// Tensors with an offline offset.
    pub planned_tensors: usize,
    /// The operator order of subgraph 0 changed.
    pub reordered: bool,
    /// The new order (file indices), when it changed.
    pub order: Option<Vec<usize>>,
    /// How the order was searched, when `--reorder` was given.
    pub reorder_method: Option<String>,
    /// The written model's report.
    pub report: Report,
}

impl OptimizeReport {
    /// The record of one `optimize` run whose output is described by `report`.
    pub fn new(
        input: &str,
        output: &str,
        target: &TargetProfile,
        planner: PlannerKind,
        optimized: &Optimized,
        report: Report,
    ) -> OptimizeReport {
        OptimizeReport {
            input: input.into(),
            output: output.into(),
            target: target.name.into(),
            planner: planner.name().into(),
            original_head_bytes: optimized.original_head_bytes,
            head_bytes: optimized.head_bytes,
            saved_bytes: optimized
                .original_head_bytes
                .saturating_sub(optimized.head_bytes),
            lower_bound_bytes: optimized.lower_bound_bytes,
            optimal: optimized.proven_optimal,
            strategy: optimized.strategy.name().into(),
            planned_tensors: optimized.planned_tensors,
            reordered: optimized.order.is_some(),
            order: optimized.order.clone(),
            reorder_method: optimized.reorder_method.map(|m| m.name().into()),
            report,
        }
    }
}
