//! Two reports side by side: what changed in the arena between two models (a
//! re-trained or re-quantized model, an optimizer's output, another input
//! length) and whether it grew more than a CI job allows.
//!
//! Works on [`Report`]s, so it sees exactly the figures `plan --json` shows.
//! Head tensors are matched by subgraph and name (converters keep names
//! stable across re-conversions; indices are not), tail categories by name.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::report::Report;

/// A figure in both reports, with the change; `None` where a report lacks it
/// (the runtime figure of a model the runtime refuses).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Change {
    /// What the figure is: `head`, `tail`, `total`, `minimum`, `runtime`,
    /// `variables`, `padding`, a tail category or a tensor name.
    pub name: String,
    /// Bytes in the old report.
    pub old_bytes: Option<u64>,
    /// Bytes in the new report.
    pub new_bytes: Option<u64>,
    /// `new − old` when both exist.
    pub delta_bytes: Option<i64>,
}

impl Change {
    fn new(name: impl Into<String>, old: Option<u64>, new: Option<u64>) -> Change {
        let delta_bytes = match (old, new) {
            (Some(a), Some(b)) => Some(b as i64 - a as i64),
            _ => None,
        };
        Change {
            name: name.into(),
            old_bytes: old,
            new_bytes: new,
            delta_bytes,
        }
    }

    /// Same value on both sides.
    pub fn is_unchanged(&self) -> bool {
        self.old_bytes == self.new_bytes
    }
}

/// The differences between two reports.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ReportDiff {
    /// The old model's file name.
    pub old_file: String,
    /// The new model's file name.
    pub new_file: String,
    /// Target profile both were planned for.
    pub target: String,
    /// Planner both were planned with.
    pub planner: String,
    /// Headline figures, always all listed: head, tail, total, minimum,
    /// runtime, variables, padding.
    pub figures: Vec<Change>,
    /// Tail categories whose bytes changed.
    pub tail: Vec<Change>,
    /// Head tensors added, removed or resized (by aligned bytes), largest
    /// change first.
    pub tensors: Vec<Change>,
    /// Operator counts, old and new.
    pub operators: (usize, usize),
}

impl ReportDiff {
    /// A headline figure by name.
    pub fn figure(&self, name: &str) -> Option<&Change> {
        self.figures.iter().find(|c| c.name == name)
    }
}

/// Compares `old` with `new`.
pub fn diff(old: &Report, new: &Report) -> ReportDiff {
    let runtime = |r: &Report| r.runtime.as_ref().map(|x| x.total_bytes);
    let variables = |r: &Report| r.variables.iter().map(|v| v.bytes).sum::<u64>();
    let figures = [
        ("head", old.arena.head_bytes, new.arena.head_bytes),
        ("tail", old.arena.tail_bytes, new.arena.tail_bytes),
        ("total", old.arena.total_bytes, new.arena.total_bytes),
        ("minimum", old.arena.minimum_bytes, new.arena.minimum_bytes),
    ]
    .into_iter()
    .map(|(n, a, b)| Change::new(n, Some(a), Some(b)))
    .chain([
        Change::new("runtime", runtime(old), runtime(new)),
        Change::new("variables", Some(variables(old)), Some(variables(new))),
        Change::new(
            "padding",
            Some(old.arena.padding_bytes),
            Some(new.arena.padding_bytes),
        ),
    ])
    .collect();

    let tail = matched(
        old.tail.iter().map(|c| (c.category.clone(), c.bytes)),
        new.tail.iter().map(|c| (c.category.clone(), c.bytes)),
    );
    let head_tensors = |r: &Report| {
        // Names are qualified by subgraph only when there is more than one.
        let qualify = r.buffers.iter().any(|b| b.subgraph != 0);
        r.buffers
            .iter()
            .filter(|b| b.kind == super::BufferClass::Tensor)
            .map(|b| {
                let name = if qualify {
                    alloc::format!("{}:{}", b.subgraph, b.name)
                } else {
                    b.name.clone()
                };
                (name, b.aligned_bytes)
            })
            .collect::<Vec<_>>()
    };
    let mut tensors = matched(head_tensors(old), head_tensors(new));
    tensors.sort_by_key(|c| {
        let size = c.delta_bytes.map_or_else(
            || c.old_bytes.or(c.new_bytes).unwrap_or(0),
            |d| d.unsigned_abs(),
        );
        core::cmp::Reverse(size)
    });
    ReportDiff {
        old_file: old.model.file.clone(),
        new_file: new.model.file.clone(),
        target: new.target.clone(),
        planner: new.planner.clone(),
        figures,
        tail,
        tensors,
        operators: (old.model.operators, new.model.operators),
    }
}

/// Changed entries of two name → bytes lists. Repeated names (unnamed
/// tensors) are summed, so they compare as one entry.
fn matched(
    old: impl IntoIterator<Item = (String, u64)>,
    new: impl IntoIterator<Item = (String, u64)>,
) -> Vec<Change> {
    let mut both: BTreeMap<String, (Option<u64>, Option<u64>)> = BTreeMap::new();
    for (name, bytes) in old {
        let e = both.entry(name).or_default();
        e.0 = Some(e.0.unwrap_or(0) + bytes);
    }
    for (name, bytes) in new {
        let e = both.entry(name).or_default();
        e.1 = Some(e.1.unwrap_or(0) + bytes);
    }
    both.into_iter()
        .map(|(name, (a, b))| Change::new(name, a, b))
        .filter(|c| !c.is_unchanged())
        .collect()
}

/// How much a figure may grow before a CI job fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    /// At most this many bytes.
    Bytes(u64),
    /// At most this many basis points (1/100 %) of the old figure.
    BasisPoints(u32),
}

impl Growth {
    /// Parses `1024`, `4K`/`4KiB`, `1M`/`1MiB` or `5%`/`2.5%`.
    pub fn parse(s: &str) -> Result<Growth, String> {
        if s.trim().ends_with('%') {
            crate::report::budget::parse_percent_bp(s).map(Growth::BasisPoints)
        } else {
            crate::report::budget::parse_bytes(s)
                .map(Growth::Bytes)
                .map_err(|e| alloc::format!("{e}, or a percentage such as 5%"))
        }
    }

    /// The largest allowed new value for an old figure of `old` bytes.
    pub fn limit(self, old: u64) -> u64 {
        match self {
            Growth::Bytes(b) => old.saturating_add(b),
            Growth::BasisPoints(bp) => {
                old.saturating_add((u128::from(old) * u128::from(bp) / 10_000) as u64)
            }
        }
    }
}

/// Why `figure` grew beyond `allowed`, or `None` when it did not (or a side
/// lacks the figure, which the caller reports separately).
pub fn growth_violation(diff: &ReportDiff, figure: &str, allowed: Growth) -> Option<String> {
    let c = diff.figure(figure)?;
    let (old, new) = (c.old_bytes?, c.new_bytes?);
    let limit = allowed.limit(old);
    (new > limit).then(|| {
        alloc::format!(
            "{figure} grew from {old} B to {new} B (+{} B), more than the allowed {} B",
            new - old,
            limit - old
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_limits() {
        assert_eq!(Growth::parse("4K"), Ok(Growth::Bytes(4096)));
        assert_eq!(Growth::parse("100"), Ok(Growth::Bytes(100)));
        assert_eq!(Growth::parse("5%"), Ok(Growth::BasisPoints(500)));
        assert_eq!(Growth::parse("2.5%"), Ok(Growth::BasisPoints(250)));
        assert!(Growth::parse("lots").is_err());
        assert!(Growth::parse("-3%").is_err());
        assert_eq!(Growth::BasisPoints(500).limit(10_000), 10_500);
        assert_eq!(Growth::Bytes(16).limit(u64::MAX), u64::MAX);
    }

    #[test]
    fn matched_lists_only_changes_and_sums_repeated_names() {
        let old = [("a".into(), 16), ("b".into(), 32), ("".into(), 16)];
        let new = [
            ("a".into(), 16),
            ("c".into(), 48),
            ("".into(), 16),
            ("".into(), 16),
        ];
        let got = matched(old, new);
        let names: Vec<(&str, Option<i64>)> = got
            .iter()
            .map(|c| (c.name.as_str(), c.delta_bytes))
            .collect();
        assert_eq!(names, [("", Some(16)), ("b", None), ("c", None)]);
    }
}
