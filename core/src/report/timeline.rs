//! A text picture of a plan, in the format of TFLM's `PrintMemoryPlan`
//! (compiled in with `TF_LITE_SHOW_MEMORY_USE`), so the two can be compared
//! line by line.

use alloc::string::String;
use core::fmt::Write;

use crate::plan::{Plan, PlanBuffer};

const WIDTH: i64 = 80;
const IDS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

fn id_char(id: usize, b: &PlanBuffer) -> char {
    if b.first == b.last {
        '*'
    } else {
        IDS.get(id % IDS.len()).map_or('?', |&c| c as char)
    }
}

/// Largest buffers × scopes product drawn; beyond it only the buffer lines are printed,
/// so a hostile model cannot make the picture take minutes.
pub const MAX_CELLS: u64 = 4_000_000;

/// One line per buffer, then one 80-column row per scope.
pub fn render(buffers: &[PlanBuffer], plan: &Plan) -> String {
    let mut out = String::new();
    let scopes = buffers
        .iter()
        .map(|b| i64::from(b.last) + 1)
        .max()
        .unwrap_or(0)
        .max(0) as u64;
    let too_big = scopes.saturating_mul(buffers.len() as u64) > MAX_CELLS;
    for (id, (b, &o)) in buffers.iter().zip(&plan.offsets).enumerate() {
        let _ = writeln!(
            out,
            "{} (id={id}): size={}, offset={o}, first_used={} last_used={}",
            id_char(id, b),
            b.size,
            b.first,
            b.last
        );
    }
    let max_end = buffers
        .iter()
        .zip(&plan.offsets)
        .map(|(b, &o)| o + b.size as i64)
        .max()
        .unwrap_or(0);
    if too_big {
        let _ = writeln!(
            out,
            "(timeline rows omitted: {} buffers x {scopes} scopes is too large to draw)",
            buffers.len()
        );
        return out;
    }
    let m = max_end.max(WIDTH);
    let last_scope = buffers.iter().map(|b| b.last).max().unwrap_or(-1);
    let mut row = [b'.'; WIDTH as usize];
    for t in 0..=last_scope {
        row.fill(b'.');
        let mut live = 0u64;
        for (id, (b, &o)) in buffers.iter().zip(&plan.offsets).enumerate() {
            if t < b.first || t > b.last {
                continue;
            }
            live += b.size;
            // In i128: offsets of absurd models times WIDTH pass i64.
            let col = |x: i128| {
                (x.max(0) * i128::from(WIDTH) / i128::from(m)).clamp(0, i128::from(WIDTH)) as i64
            };
            let start = col(i128::from(o));
            let end = col(i128::from(o) + i128::from(b.size));
            for col in row.iter_mut().take(end as usize).skip(start as usize) {
                *col = if *col == b'.' {
                    id_char(id, b) as u8
                } else {
                    b'!'
                };
            }
        }
        let _ = writeln!(
            out,
            "{t:>4}: {} ({}k)",
            core::str::from_utf8(&row).unwrap_or(""),
            live.div_ceil(1024)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn matches_the_spec_example_row() {
        // micro_speech_quantized, spec §3.5: five buffers, row for scope 2.
        let bufs = vec![
            PlanBuffer::online(4000, 2, 3),
            PlanBuffer::online(1968, 0, 1),
            PlanBuffer::online(1968, 1, 2),
            PlanBuffer::online(16, 3, 4),
            PlanBuffer::online(16, 4, 4),
        ];
        let plan = Plan {
            offsets: vec![0, 0, 4000, 4000, 0],
            head_bytes: 5968,
        };
        let text = render(&bufs, &plan);
        assert!(text.starts_with("0 (id=0): size=4000, offset=0, first_used=2 last_used=3\n"));
        assert!(text.contains("* (id=4): size=16, offset=0, first_used=4 last_used=4\n"));
        let row2 = text
            .lines()
            .find(|l| l.starts_with("   2: "))
            .unwrap_or_default();
        assert_eq!(
            row2,
            "   2: 00000000000000000000000000000000000000000000000000000222222222222222222222222222 (6k)"
        );
    }
}
