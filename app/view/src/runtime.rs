//! The microarena-runtime panel's content: the execution modes with their
//! arenas and `run` flags, and each banded stage's chain of ops. Every
//! figure is `report.runtime`'s; this only pairs it with its label.

use microarena_core::report::{BandedStageInfo, Report};

/// One way to run the model on microarena-runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mode {
    /// Stable key for the page's `data-mode` attribute.
    pub key: &'static str,
    /// What the mode is called.
    pub name: &'static str,
    /// What changes against TFLM, in one line.
    pub detail: &'static str,
    /// The `microarena run` flags that select it (empty: the default).
    pub flags: &'static str,
    /// The arena it needs (the runtime's measured high-water, as core predicts it).
    pub total_bytes: u64,
    /// `total_bytes` minus TFLM's minimum working arena (negative: smaller).
    pub delta_bytes: i128,
}

/// The modes `r.runtime` has figures for, from the most to the least RAM:
/// plain, OpData in flash, in place when aliases lower the arena, banded
/// when a stage lowers the head, and banded in place when that is smaller
/// still (each with OpData in flash). Empty when the runtime cannot run the model.
pub fn modes(r: &Report) -> Vec<Mode> {
    let Some(rt) = &r.runtime else {
        return Vec::new();
    };
    let minimum = i128::from(r.arena.minimum_bytes);
    let mode = |key, name, detail, flags, total: u64| Mode {
        key,
        name,
        detail,
        flags,
        total_bytes: total,
        delta_bytes: i128::from(total) - minimum,
    };
    let mut out = vec![
        mode(
            "plain",
            "plain",
            "TFLM's lifetimes and greedy plan; OpData computed at start-up into the tail",
            "",
            rt.total_bytes,
        ),
        mode(
            "opdata-flash",
            "OpData in flash",
            "the kernels' OpData is filled on the host and read from the image",
            "--opdata flash",
            rt.total_with_opdata_in_flash(),
        ),
    ];
    if let Some(total) = rt.in_place_total_with_opdata_in_flash() {
        out.push(mode(
            "in-place",
            "in place",
            "element-wise ops write over their dying input, convolutions and pools row by row through a ring of output rows, reshapes alias it; OpData in flash",
            "--in-place --opdata flash",
            total,
        ));
    }
    if let Some(total) = rt.banded_total_with_opdata_in_flash() {
        out.push(mode(
            "banded",
            "patch-based in row bands",
            "the chains of windowed ops at the peak run one output row at a time; OpData in flash",
            "--exec banded --opdata flash",
            total,
        ));
    }
    if let Some(total) = rt.banded_in_place_total_with_opdata_in_flash() {
        out.push(mode(
            "banded-in-place",
            "banded and in place",
            "row bands at the peak, element-wise ops (and convolutions by rows) over their dying inputs; OpData in flash",
            "--exec banded --in-place --opdata flash",
            total,
        ));
    }
    out
}

/// The ops stage `s` runs per band, in order: index and opcode from
/// `r.operators` (subgraph 0, where stages are formed).
pub fn stage_ops(r: &Report, s: &BandedStageInfo) -> Vec<(usize, String)> {
    let mut ops: Vec<(usize, String)> = r
        .operators
        .iter()
        .filter(|o| o.subgraph == 0 && (s.first_op..=s.last_op).contains(&o.index))
        .map(|o| (o.index, o.opcode.clone()))
        .collect();
    ops.sort_by_key(|&(i, _)| i);
    ops
}

#[cfg(test)]
mod tests {
    use microarena_core::report::{BandedInfo, InPlaceInfo, RuntimeInfo};

    use super::*;
    use crate::testing;

    /// The fixture with runtime figures made up by hand: 700 B plain, of
    /// which 200 B are OpData; banded 450 B with the OpData in the tail.
    fn with_runtime(banded: bool) -> Report {
        let mut r = testing::report();
        r.runtime = Some(RuntimeInfo {
            head_bytes: 400,
            tail_bytes: 300,
            total_bytes: 700,
            variable_bytes: 32,
            opdata_bytes: 200,
            banded: banded.then(|| BandedInfo {
                stages: vec![BandedStageInfo {
                    first_op: 0,
                    last_op: 1,
                    bands: 4,
                    ring_bytes: 64,
                    input_rows: 10,
                    field_first: 1,
                    field_end: 6,
                    over_input: false,
                }],
                extra_macs: 0,
                head_bytes: 150,
                total_bytes: 450,
            }),
            in_place: None,
        });
        r
    }

    #[test]
    fn modes_pair_each_arena_with_its_flags_and_its_gap_to_tflm() {
        // The fixture's minimum working arena is 576 B.
        let m = modes(&with_runtime(true));
        let got: Vec<_> = m
            .iter()
            .map(|m| (m.key, m.flags, m.total_bytes, m.delta_bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                ("plain", "", 700, 124),
                ("opdata-flash", "--opdata flash", 500, -76),
                // Banded total 450 with the 200 B of OpData moved out.
                ("banded", "--exec banded --opdata flash", 250, -326),
            ]
        );
    }

    #[test]
    fn in_place_rows_appear_only_where_they_save() {
        let mut r = with_runtime(true);
        if let Some(rt) = &mut r.runtime {
            // In place 640 B plain, 420 B banded (both with 200 B of OpData).
            rt.in_place = Some(InPlaceInfo {
                overwrites: 2,
                windowed: 1,
                ring_bytes: 96,
                aliases: 1,
                head_bytes: 340,
                total_bytes: 640,
                banded_total_bytes: Some(420),
            });
        }
        let got: Vec<_> = modes(&r).iter().map(|m| (m.key, m.total_bytes)).collect();
        assert_eq!(
            got,
            vec![
                ("plain", 700),
                ("opdata-flash", 500),
                ("in-place", 440),
                ("banded", 250),
                ("banded-in-place", 220),
            ]
        );
        // Banded in place no smaller than banded: no row for it.
        if let Some(ip) = r.runtime.as_mut().and_then(|rt| rt.in_place.as_mut()) {
            ip.banded_total_bytes = Some(450);
        }
        let keys: Vec<_> = modes(&r).iter().map(|m| m.key).collect();
        assert_eq!(keys, ["plain", "opdata-flash", "in-place", "banded"]);
    }

    #[test]
    fn no_banded_row_without_a_stage_and_no_rows_without_a_runtime() {
        let m = modes(&with_runtime(false));
        assert_eq!(
            m.iter().map(|m| m.key).collect::<Vec<_>>(),
            ["plain", "opdata-flash"]
        );
        assert!(modes(&testing::report()).is_empty());
    }

    #[test]
    fn a_stage_lists_its_ops_in_order() {
        let r = with_runtime(true);
        let s = &r.runtime.as_ref().unwrap().banded.as_ref().unwrap().stages[0];
        assert_eq!(
            stage_ops(&r, s),
            vec![
                (0, "CONV_2D".to_string()),
                (1, "UNIDIRECTIONAL_SEQUENCE_LSTM".to_string())
            ]
        );
    }
}
