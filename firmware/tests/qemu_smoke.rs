//! QEMU smoke test (harness = false): `cargo test` builds this for the target
//! and runs it through the QEMU runner; the exit code is the verdict.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use microarena_firmware::island::{self, arena, high_water, layout};
use microarena_firmware::{
    ARENA_BYTES, IMAGE, KERNEL_OPCODES, KERNEL_TYPES, KERNELS, run_and_compare,
};
use microarena_runtime::runtime_layout::{EXEC_WHOLE, opcode::in_place_by_rows};
use microarena_runtime::{Error, Image, Interpreter};
use panic_semihosting as _;

/// Uses `n` bytes of stack the optimiser cannot remove.
#[inline(never)]
fn use_stack<const N: usize>() -> u32 {
    let mut buf = [0u8; N];
    core::hint::black_box(&mut buf);
    buf.iter().map(|&b| u32::from(b)).sum()
}

/// Runs first: the stack (this test runs on MSP from the top of RAM through
/// both reservations) was painted at reset and little of it is used yet.
fn painted_stack_high_water_follows_use() -> bool {
    let l = layout();
    let Some(before) = high_water(l.static_end, l.isr_stack_top) else {
        return false;
    };
    core::hint::black_box(use_stack::<4096>());
    let Some(after) = high_water(l.static_end, l.isr_stack_top) else {
        return false;
    };
    // `after` counts from the top down to the 4 KiB frame's bottom.
    before < 2048 && after > before && after >= 4096
}

fn measuring_outside_the_painted_area_is_refused() -> bool {
    let l = layout();
    high_water(l.ram_start, l.stack_top).is_none()
        && high_water(l.static_end + 1, l.stack_top).is_none()
        && high_water(l.stack_limit, l.isr_stack_top + 4).is_none()
        // Repainting needs thread mode on PSP; this test runs on MSP.
        && !island::repaint_isr_stack()
}

fn layout_is_the_linker_scripts() -> bool {
    let l = layout();
    l.ram_start <= l.noinit_start
        && l.noinit_start.is_multiple_of(16)
        && l.noinit_end - l.noinit_start == ARENA_BYTES
        && l.static_end - l.noinit_end >= l.dma_bytes + l.log_bytes
        && l.static_end <= l.stack_limit
        && l.stack_limit < l.stack_top
        && l.stack_top == l.isr_stack_limit
        && l.isr_stack_limit < l.isr_stack_top
        && l.isr_stack_top == l.ram_start + l.ram_bytes
}

fn noinit_arena_is_handed_out_once() -> bool {
    match arena() {
        Some(a) => {
            a.len() == ARENA_BYTES && (a.as_ptr() as usize).is_multiple_of(16) && arena().is_none()
        }
        None => false,
    }
}

fn image_parses() -> bool {
    Image::parse(IMAGE).is_ok() && Image::parse(&IMAGE[..8]).is_err()
}

fn too_small_arena_is_an_error() -> bool {
    let mut arena = [0u8; ARENA_BYTES];
    let short = ARENA_BYTES - 1;
    matches!(
        Interpreter::with_kernels(IMAGE, &mut arena[..short], &KERNELS),
        Err(Error::ArenaTooSmall { needed, available }) if needed == ARENA_BYTES && available == short
    )
}

fn inference_matches_host() -> bool {
    let mut arena = [0u8; ARENA_BYTES];
    match Interpreter::with_kernels(IMAGE, &mut arena, &KERNELS) {
        Ok(mut it) => {
            matches!(run_and_compare(&mut it), Ok(true))
                && it.memory_usage().high_water == ARENA_BYTES
        }
        Err(_) => false,
    }
}

fn no_allocation_during_invoke() -> bool {
    let mut arena = [0u8; ARENA_BYTES];
    match Interpreter::with_kernels(IMAGE, &mut arena, &KERNELS) {
        Ok(mut it) => it.allocate_persistent(4) == Err(Error::AllocationDuringInvoke),
        Err(_) => false,
    }
}

/// The resolver build.rs generated holds exactly the image's kernels, each
/// once, its (opcode, output type) pairs, and exactly the execution modes it
/// runs in. (That the resolver then runs it is `inference_matches_host`.)
fn generated_kernels_are_exactly_the_images() -> bool {
    let Ok(img) = Image::parse(IMAGE) else {
        return false;
    };
    let (mut banded, mut rows) = (false, false);
    let mut every_op_listed = true;
    for i in 0..img.op_count() {
        let Ok(op) = img.op(i) else {
            return false;
        };
        let Ok(out) = img.tensor(usize::from(op.output)) else {
            return false;
        };
        every_op_listed &= KERNEL_OPCODES.contains(&op.opcode)
            && KERNELS.has(op.opcode)
            && KERNEL_TYPES.contains(&(op.opcode, out.dtype));
        banded |= op.exec != EXEC_WHOLE;
        rows |= op.in_place == Some(0) && in_place_by_rows(op.opcode);
    }
    // Every listed code is some op's, listed once, in the resolver's order.
    let every_code_used = KERNEL_OPCODES.iter().enumerate().all(|(k, code)| {
        !KERNEL_OPCODES[..k].contains(code)
            && (0..img.op_count()).any(|i| img.op(i).is_ok_and(|op| op.opcode == *code))
    });
    let every_type_used = KERNEL_TYPES.iter().enumerate().all(|(k, pair)| {
        !KERNEL_TYPES[..k].contains(pair)
            && (0..img.op_count()).any(|i| {
                img.op(i).is_ok_and(|op| {
                    op.opcode == pair.0
                        && img
                            .tensor(usize::from(op.output))
                            .is_ok_and(|t| t.dtype == pair.1)
                })
            })
    });
    every_op_listed
        && every_code_used
        && every_type_used
        && KERNELS.opcodes().eq(KERNEL_OPCODES.iter().copied())
        && KERNELS.has_banded() == banded
        && KERNELS.has_rows_in_place() == rows
}

/// A named check.
type Check = (&'static str, fn() -> bool);

#[entry]
fn main() -> ! {
    let tests: [Check; 9] = [
        (
            "painted_stack_high_water_follows_use",
            painted_stack_high_water_follows_use,
        ),
        (
            "measuring_outside_the_painted_area_is_refused",
            measuring_outside_the_painted_area_is_refused,
        ),
        ("layout_is_the_linker_scripts", layout_is_the_linker_scripts),
        (
            "noinit_arena_is_handed_out_once",
            noinit_arena_is_handed_out_once,
        ),
        ("image_parses", image_parses),
        ("too_small_arena_is_an_error", too_small_arena_is_an_error),
        ("inference_matches_host", inference_matches_host),
        ("no_allocation_during_invoke", no_allocation_during_invoke),
        (
            "generated_kernels_are_exactly_the_images",
            generated_kernels_are_exactly_the_images,
        ),
    ];
    let (mut passed, mut failed) = (0, 0);
    for (name, f) in tests {
        if f() {
            passed += 1;
            hprintln!("test {} ... ok", name);
        } else {
            failed += 1;
            hprintln!("test {} ... FAILED", name);
        }
    }
    hprintln!("{} passed, {} failed", passed, failed);
    microarena_firmware::exit(failed == 0)
}
