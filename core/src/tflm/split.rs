//! TFLM's two-buffer arena: `MicroAllocator::Create(persistent, persistent_size,
//! non_persistent, non_persistent_size, planner)` (`micro_allocator.cc` at
//! 90b983c2) puts the tail in one buffer and the head (and Prepare's temps) in
//! another, so they can live in different memories — the head in TCM, the
//! tail in slower SRAM.
//!
//! The persistent buffer holds what the single arena's tail holds, except the
//! first objects: a `PersistentArenaBufferAllocator` (vtable + 3 pointers) and
//! a `NonPersistentArenaBufferAllocator` (vtable + 4 pointers, an `intptr_t`
//! checksum, an `int` count and a `bool`) instead of the single-arena
//! allocator, then the planner, then a *plain* `MicroAllocator` (there is no
//! recording variant of this constructor). The allocation sequence is
//! otherwise the same, so the tail is re-simulated with those objects, which
//! keeps every later alignment pad exact. The non-persistent buffer must hold
//! the largest of the planned head, the Prepare request area plus temps, and
//! the memory-planning phase's temps.
//!
//! Derived from TFLM's sources, not measured: the Cortex-M oracle records the
//! single-arena allocator only.

use crate::plan::align16;
use crate::read::model::Model;
use crate::tflm::analysis::{AnalysisError, Config, analyze};
use crate::tflm::profile::{PROFILES, Sz, TargetProfile};

/// The two buffers' sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SplitArena {
    /// The persistent buffer (tail), a multiple of 16.
    pub persistent_bytes: u64,
    /// The non-persistent buffer (head and temps), a multiple of 16.
    pub non_persistent_bytes: u64,
}

/// `profile` as the two-buffer constructor lays out its first objects.
const fn two_buffer(p: &TargetProfile) -> TargetProfile {
    let ptr = p.pointer_bytes;
    let persistent_allocator = 4 * ptr;
    // 6 pointer-sized fields (vtable, 4 pointers, intptr_t), an int and a bool, padded.
    let non_persistent_allocator = (6 * ptr + 4 + 1).div_ceil(ptr) * ptr;
    TargetProfile {
        // Two pointer-aligned allocations whose sizes are multiples of the pointer
        // size take exactly the bytes of one of their summed size.
        arena_allocator: Sz {
            bytes: persistent_allocator + non_persistent_allocator,
            align: ptr,
        },
        micro_allocator: p.plain_micro_allocator,
        ..*p
    }
}

const fn two_buffer_profiles() -> [TargetProfile; PROFILES.len()] {
    let mut out = [PROFILES[0]; PROFILES.len()];
    let mut i = 0;
    while i < PROFILES.len() {
        out[i] = two_buffer(&PROFILES[i]);
        i += 1;
    }
    out
}

/// [`PROFILES`], each as the two-buffer constructor lays it out.
static TWO_BUFFER: [TargetProfile; PROFILES.len()] = two_buffer_profiles();

/// The two-buffer layout of `profile` (by name; a profile outside
/// [`PROFILES`] is derived the same way).
fn two_buffer_profile(profile: &TargetProfile) -> &'static TargetProfile {
    TWO_BUFFER
        .iter()
        .find(|p| p.name == profile.name)
        .unwrap_or(&TWO_BUFFER[0])
}

/// The buffer sizes `model` needs with TFLM's two-buffer allocator on `config`.
pub fn split_arena(model: &Model<'_>, config: &Config) -> Result<SplitArena, AnalysisError> {
    let profile = two_buffer_profile(config.profile);
    let a = analyze(
        model,
        &Config {
            profile,
            planner: config.planner,
        },
    )?;
    let non_persistent = a
        .head_bytes
        .max(a.planning_temp_bytes)
        .max(a.tail.prepare_temp_peak);
    Ok(SplitArena {
        persistent_bytes: align16(a.tail_bytes),
        non_persistent_bytes: align16(non_persistent),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::example;
    use crate::plan::PlannerKind;
    use crate::tflm::profile::{CORTEX_M, X86_64};

    #[test]
    fn first_objects_follow_the_allocator_classes() {
        // ILP32: 16 + 32 allocator objects, plain MicroAllocator 36 (docs/tflm-arena.md §4.1).
        let m = two_buffer(&CORTEX_M);
        assert_eq!((m.arena_allocator.bytes, m.micro_allocator.bytes), (48, 36));
        // LP64: 32 + 56 (53 rounded to 8).
        assert_eq!(two_buffer(&X86_64).arena_allocator.bytes, 88);
        assert_eq!(two_buffer_profile(&CORTEX_M).name, "cortex-m");
    }

    #[test]
    fn the_buffers_hold_the_head_and_a_smaller_tail() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let model = Model::parse(&bytes).unwrap();
        let config = Config {
            profile: &CORTEX_M,
            planner: PlannerKind::TflmGreedy,
        };
        let single = analyze(&model, &config).unwrap();
        let split = split_arena(&model, &config).unwrap();
        assert_eq!(split.non_persistent_bytes, align16(single.head_bytes));
        // Recording single-arena objects 52 + 124 B against 48 + 36 B: 92 B fewer. The
        // next 16-aligned allocation turns that into 80 or 96, and rounding the
        // persistent buffer up to 16 takes back at most 15.
        let diff = single.tail_bytes as i64 - split.persistent_bytes as i64;
        assert!((80 - 15..=96).contains(&diff), "{diff}");
        assert_eq!(split.persistent_bytes % 16, 0);
    }
}
