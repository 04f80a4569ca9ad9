//! Shared by the firmware binary and its QEMU smoke test: the build-time
//! artefacts (program image, input, expected output, exact arena size), the
//! RAM layout and stack measurement ([`island`], the crate's only `unsafe`),
//! and the report line ([`report_line`]).
#![no_std]
// `deny`, not `forbid`: the `island` module alone allows it (see its docs).
#![deny(unsafe_code)]

include!(concat!(env!("OUT_DIR"), "/consts.rs"));
// `KERNEL_OPCODES` and `KERNELS`, the resolver of the image's kernels.
include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

pub mod console;
pub mod island;
pub mod report_line;

/// The program image, lowered on the host by build.rs.
pub static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/model.bin"));
/// The deterministic input (all graph inputs, concatenated).
pub static INPUT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/input.bin"));
/// Outputs of the host build of the runtime on [`INPUT`] (all graph outputs, concatenated).
pub static EXPECTED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/expected.bin"));

use microarena_runtime::{Error, Interpreter};

/// Copies [`INPUT`] into the graph inputs, in order.
pub fn fill_inputs(it: &mut Interpreter<'_, '_>) -> Result<(), Error> {
    let mut at = 0;
    for i in 0..it.image().input_count() {
        let dst = it.input_mut(i)?;
        let src = INPUT.get(at..at + dst.len()).ok_or(Error::WrongLength {
            expected: at + dst.len(),
            got: INPUT.len(),
        })?;
        dst.copy_from_slice(src);
        at += src.len();
    }
    Ok(())
}

/// Whether the graph outputs, concatenated, equal [`EXPECTED`].
pub fn outputs_match(it: &Interpreter<'_, '_>) -> Result<bool, Error> {
    let mut at = 0;
    let mut same = true;
    for i in 0..it.image().output_count() {
        let got = it.output(i)?;
        same &= EXPECTED.get(at..at + got.len()) == Some(got);
        at += got.len();
    }
    Ok(same && at == EXPECTED.len())
}

/// Fills every input from [`INPUT`], invokes, and returns whether every output equals [`EXPECTED`].
pub fn run_and_compare(it: &mut Interpreter<'_, '_>) -> Result<bool, Error> {
    fill_inputs(it)?;
    it.invoke()?;
    outputs_match(it)
}

/// Ends the QEMU run through semihosting with success or failure, the
/// status the host-side tests and xtask read.
pub fn exit(ok: bool) -> ! {
    cortex_m_semihosting::debug::exit(if ok {
        cortex_m_semihosting::debug::EXIT_SUCCESS
    } else {
        cortex_m_semihosting::debug::EXIT_FAILURE
    });
    loop {
        cortex_m::asm::wfi();
    }
}
