//! The guided tour: five short lessons on the model on screen (the bundled
//! example or any other), each pointing at a live figure the page shows
//! (`target` is its `data-testid`, `attr` the attribute holding the bytes)
//! and worded from the report's own figures.

use microarena_core::report::Report;
use microarena_core::report::budget::arena_with_headroom;

use crate::format::{grouped, percent};

/// One lesson of the tour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lesson {
    /// Short title.
    pub title: &'static str,
    /// What it teaches, with this model's figures.
    pub text: String,
    /// `data-testid` of the element it points at.
    pub target: &'static str,
    /// The attribute of that element holding [`Lesson::bytes`].
    pub attr: &'static str,
    /// The figure it is about.
    pub bytes: u64,
}

/// The tour for `r`, with the budget panel's headroom (basis points).
pub fn lessons(r: &Report, headroom_bp: u32) -> Vec<Lesson> {
    let a = &r.arena;
    let vars: u64 = r.variables.iter().map(|v| v.bytes).sum();
    let vars = if vars > 0 {
        format!(
            ", and {} B of variable tensors (LSTM/SVDF state)",
            grouped(vars)
        )
    } else {
        String::new()
    };
    let phase = a.minimum_phase.as_str();
    let prepare = if a.minimum_bytes > a.total_bytes {
        format!(
            "more than the {} B it holds while invoking: {phase} is the binding phase, so an arena of only the reported total would fail AllocateTensors",
            grouped(a.total_bytes)
        )
    } else {
        format!(
            "the {} B it holds while invoking (rounded up to 16): the final head and tail bind, not the temps",
            grouped(a.total_bytes)
        )
    };
    let f = &r.flash;
    let copies: u64 = f.ram_copies.iter().map(|c| c.bytes).sum();
    let copies = if f.ram_copies.is_empty() {
        "None of this model's constants is copied into RAM.".to_string()
    } else {
        format!(
            "But {} op(s) copy {} B of constants into RAM (the flash panel lists them): those bytes are in the tail.",
            f.ram_copies.len(),
            grouped(copies)
        )
    };
    let arena = arena_with_headroom(a.minimum_bytes, headroom_bp);
    vec![
        Lesson {
            title: "Two regions: head and tail",
            text: format!(
                "TFLM's arena has two regions. The head ({} B) holds activations and scratch buffers; the planner packs them so buffers whose lifetimes do not overlap share bytes. The tail ({} B) is persistent: tensor and node structs, each kernel's OpData, quantization arrays{vars}. TFLM reports their sum, {} B.",
                grouped(a.head_bytes),
                grouped(a.tail_bytes),
                grouped(a.total_bytes)
            ),
            target: "arena-head",
            attr: "data-bytes",
            bytes: a.head_bytes,
        },
        Lesson {
            title: "Prepare needs more than Invoke",
            text: format!(
                "Before the first Invoke, AllocateTensors runs each kernel's Prepare with temp tensors at the bottom of the arena, then the planner's working memory. Its high water, the minimum working arena, is {} B — {prepare}. The step-through walks every phase.",
                grouped(a.minimum_bytes)
            ),
            target: "arena-minimum",
            attr: "data-bytes",
            bytes: a.minimum_bytes,
        },
        Lesson {
            title: "Alignment costs bytes",
            text: format!(
                "TFLM rounds every head buffer up to 16 bytes. Here that is {} B of padding ({} of the head): small tensors with odd sizes waste most. The red slivers on the arena map are this padding.",
                grouped(a.padding_bytes),
                percent(a.padding_bytes, a.head_bytes)
            ),
            target: "padding-total",
            attr: "data-bytes",
            bytes: a.padding_bytes,
        },
        Lesson {
            title: "Flash is not RAM",
            text: format!(
                "The model file ({} B) stays in flash: kernels read its {} B of weights and constants in place, so they cost no arena. {copies}",
                grouped(f.file_bytes),
                grouped(f.constant_bytes)
            ),
            target: "flash-view",
            attr: "data-file-bytes",
            bytes: f.file_bytes,
        },
        Lesson {
            title: "Headroom",
            text: format!(
                "The budget sizes the firmware's arena as the minimum plus {} headroom, rounded up to 16: kTensorArenaSize = {} B. Headroom absorbs what changes without the model changing — another TFLM release, other kernels, allocator options.",
                percent(u64::from(headroom_bp), 10_000),
                grouped(arena)
            ),
            target: "firmware-arena",
            attr: "data-bytes",
            bytes: arena,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn five_lessons_each_on_a_live_figure_of_the_report() {
        let r = testing::report();
        let l = lessons(&r, 2000);
        assert_eq!(l.len(), 5);
        assert_eq!(l[0].bytes, r.arena.head_bytes);
        assert_eq!(l[1].bytes, r.arena.minimum_bytes);
        assert_eq!(l[2].bytes, r.arena.padding_bytes);
        assert_eq!(l[3].bytes, r.flash.file_bytes);
        assert_eq!(l[4].bytes, arena_with_headroom(r.arena.minimum_bytes, 2000));
        assert!(l[0].text.contains("variable tensors"), "{}", l[0].text);
        assert!(l[4].text.contains("20.0 % headroom"), "{}", l[4].text);
        for x in &l {
            assert!(
                x.text.contains(&grouped(x.bytes)),
                "{}: {}",
                x.title,
                x.text
            );
        }
    }
}
