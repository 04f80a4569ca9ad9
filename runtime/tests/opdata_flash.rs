//! OpData in flash: an image lowered with `OpDataIn::Flash` and filled by
//! `freeze_opdata` runs bit-identically to the same model with its OpData in
//! the tail, in an arena smaller by exactly the OpData, and the device
//! refuses a block its own Prepare disagrees with.

use microarena_core::Model;
use microarena_core::build::example::{demo_model, pseudo_random_bytes};
use microarena_core::lower::{LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_image as rl;
use microarena_runtime::{Error, Interpreter, freeze_opdata};

fn image(model: &Model<'_>, opdata: OpDataIn) -> (Vec<u8>, usize) {
    let options = LowerOptions {
        opdata,
        ..LowerOptions::default()
    };
    let image = lower_with(model, &options).expect("lower");
    let total = runtime_arena_with(model, &options)
        .expect("arena")
        .total_bytes;
    (image, total as usize)
}

fn word(image: &[u8], at: usize) -> usize {
    u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) as usize
}

/// Runs `image` in exactly `total` bytes on `input`; (output, high-water).
fn run(image: &[u8], total: usize, input: &[u8]) -> (Vec<u8>, usize) {
    let mut arena = vec![0u8; total];
    let mut it = Interpreter::new(image, &mut arena).expect("interpreter");
    it.input_mut(0).expect("input").copy_from_slice(input);
    it.invoke().expect("invoke");
    (
        it.output(0).expect("output").to_vec(),
        it.memory_usage().high_water,
    )
}

#[test]
#[cfg_attr(miri, ignore = "two demo invokes: minutes under Miri")]
fn flash_opdata_runs_identically_in_a_smaller_arena() {
    let bytes = demo_model();
    let model = Model::parse(&bytes).expect("parse");
    let (tail_image, tail_total) = image(&model, OpDataIn::Tail);
    let (mut flash_image, flash_total) = image(&model, OpDataIn::Flash);
    let block = word(&flash_image, rl::header::OPDATA_LEN);
    assert!(block > 0, "the demo's convolutions have OpData");
    assert_eq!(
        word(&flash_image, rl::header::OPDATA_OFF) + block,
        flash_image.len()
    );
    // The arena shrinks by exactly the block: it is the tail's OpData.
    assert_eq!(tail_total - flash_total, block);
    freeze_opdata(&mut flash_image).expect("freeze");

    let input = pseudo_random_bytes(7, 256);
    let (want, tail_high) = run(&tail_image, tail_total, &input);
    let (got, flash_high) = run(&flash_image, flash_total, &input);
    assert_eq!(got, want);
    assert_eq!(tail_high, tail_total);
    assert_eq!(flash_high, flash_total);

    // The filled block is what the device's Prepare stores in the tail:
    // the tail image's arena after construction holds the same words.
    let mut arena = vec![0u8; tail_total];
    Interpreter::new(&tail_image, &mut arena).expect("interpreter");
    let opdata_in_tail = &arena[tail_total - block..];
    let frozen = &flash_image[flash_image.len() - block..];
    // The tail is filled from the top down in op order, the block from the
    // bottom up: compare as multisets of words.
    let mut a: Vec<&[u8]> = opdata_in_tail.chunks(4).collect();
    let mut b: Vec<&[u8]> = frozen.chunks(4).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

#[test]
fn an_unfilled_or_altered_block_is_refused() {
    let bytes = demo_model();
    let model = Model::parse(&bytes).expect("parse");
    let (mut img, total) = image(&model, OpDataIn::Flash);
    let mut arena = vec![0u8; total];
    let err = Interpreter::new(&img, &mut arena).expect_err("zeros are not OpData");
    assert!(matches!(err, Error::OpDataMismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("freeze_opdata"), "{err}");

    freeze_opdata(&mut img).expect("freeze");
    let block = word(&img, rl::header::OPDATA_LEN);
    let start = img.len() - block;
    for at in (start..img.len()).step_by(4) {
        let mut bad = img.clone();
        bad[at] ^= 0x01;
        let err = Interpreter::new(&bad, &mut arena).expect_err("altered word");
        assert!(
            matches!(err, Error::OpDataMismatch { .. }),
            "word at {at}: {err:?}"
        );
    }
    // A block cut short, or a header claiming more than the image has.
    let short = &img[..img.len() - 4];
    assert!(matches!(
        Interpreter::new(short, &mut arena),
        Err(Error::Truncated { .. })
    ));
    let mut longer = img.clone();
    let len = word(&longer, rl::header::OPDATA_LEN) + 4;
    longer[rl::header::OPDATA_LEN..rl::header::OPDATA_LEN + 4]
        .copy_from_slice(&(len as u32).to_le_bytes());
    longer.extend_from_slice(&[0; 4]);
    assert!(Interpreter::new(&longer, &mut arena).is_err());
    assert!(freeze_opdata(&mut longer).is_err());
}

#[test]
fn freezing_a_tail_image_changes_nothing() {
    let bytes = demo_model();
    let model = Model::parse(&bytes).expect("parse");
    let (img, _) = image(&model, OpDataIn::Tail);
    let mut copy = img.clone();
    freeze_opdata(&mut copy).expect("no block");
    assert_eq!(copy, img);
}
