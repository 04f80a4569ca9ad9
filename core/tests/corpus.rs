//! The shared corpus: TFLM's own measurements (`models/tflm_x86_64.jsonl`,
//! recorded with the `tflite-micro` wheel) against our prediction.

mod support;

use microarena_core::tflm::profile::{CORTEX_M, X86_64};
use serde_json::Value;

use support::report;

#[test]
fn x86_64_matches_tflm_for_every_loadable_model() {
    let Some(root) = support::corpus("x86_64_matches_tflm_for_every_loadable_model") else {
        return;
    };
    let jsonl =
        String::from_utf8(support::read(&root.join("models/tflm_x86_64.jsonl"))).expect("utf-8");
    let mut checked = 0;
    for line in jsonl.lines().filter(|l| !l.trim().is_empty()) {
        let rec: Value = serde_json::from_str(line).expect("jsonl line");
        let name = rec["model"].as_str().expect("model name");
        let bytes = support::read(&root.join("models").join(name));
        let r = report(&bytes, name, &X86_64);
        if rec["ok"] == Value::Bool(false) {
            // TFLM refused it; we must still plan it and say why TFLM would not run it.
            assert!(
                r.has_errors(),
                "{name}: TFLM refused it but no error diagnostic was given"
            );
            assert!(
                r.arena.head_bytes > 0,
                "{name}: a refused model still gets a plan"
            );
            continue;
        }
        assert_eq!(
            r.arena.head_bytes,
            rec["head_bytes"].as_u64().expect("head"),
            "{name}: head"
        );
        assert_eq!(
            r.arena.tail_bytes,
            rec["tail_bytes"].as_u64().expect("tail"),
            "{name}: tail"
        );
        assert_eq!(
            r.arena.total_bytes,
            rec["total_bytes"].as_u64().expect("total"),
            "{name}: total"
        );
        for (cat, fig) in rec["categories"].as_object().expect("categories") {
            let ours = r
                .tail
                .iter()
                .find(|c| c.category == *cat)
                .unwrap_or_else(|| panic!("{name}: no tail category '{cat}' in our report"));
            assert_eq!(
                ours.bytes,
                fig["used"].as_u64().expect("used"),
                "{name}: {cat} used"
            );
            assert_eq!(
                ours.requested_bytes,
                fig["requested"].as_u64().expect("requested"),
                "{name}: {cat} requested"
            );
            assert_eq!(
                ours.count,
                fig["count"].as_u64().expect("count"),
                "{name}: {cat} count"
            );
        }
        assert!(
            !r.has_errors(),
            "{name}: TFLM loads it, yet we report an error: {:?}",
            r.diagnostics
        );
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} loadable models were checked");
}

#[test]
fn refused_models_get_the_right_diagnostic() {
    let Some(root) = support::corpus("refused_models_get_the_right_diagnostic") else {
        return;
    };
    let kws = report(
        &support::read(&root.join("models/kws_ref_model_float32.tflite")),
        "kws",
        &X86_64,
    );
    assert!(
        kws.diagnostics
            .iter()
            .any(|d| d.severity == "error" && d.message.contains("hybrid")),
        "{:?}",
        kws.diagnostics
    );
    let vela = report(
        &support::read(&root.join("models/person_detect_vela.tflite")),
        "vela",
        &X86_64,
    );
    assert!(
        vela.diagnostics.iter().any(|d| d.severity == "error"
            && d.message.contains("'ethos-u'")
            && d.message.contains("CO_PROCESSOR=ethos_u")
            && d.message.contains("--target cortex-m55-ethos-u")),
        "{:?}",
        vela.diagnostics
    );
    // Spec §5.1: the Vela plan puts all four arena tensors at offset 0; the largest is 74464 B.
    assert_eq!(vela.arena.head_bytes, 74464);
    assert!(vela.buffers.iter().all(|b| b.offline && b.offset == 0));
}

#[test]
fn minimum_arena_matches_tflm_bisection() {
    let Some(root) = support::corpus("minimum_arena_matches_tflm_bisection") else {
        return;
    };
    // Spec §5.4: smallest arena with which the wheel's AllocateTensors succeeds.
    for (name, minimum) in [
        ("hello_world_int8.tflite", 1936),
        ("hello_world_float.tflite", 1936),
        ("keyword_scrambled.tflite", 18064),
        ("keyword_scrambled_8bit.tflite", 12944),
        ("person_detect.tflite", 85264),
        ("micro_speech_quantized.tflite", 7584),
    ] {
        let r = report(
            &support::read(&root.join("models").join(name)),
            name,
            &X86_64,
        );
        assert_eq!(r.arena.minimum_bytes, minimum, "{name}");
    }
}

#[test]
fn cortex_m_person_detect() {
    let Some(root) = support::corpus("cortex_m_person_detect") else {
        return;
    };
    let r = report(
        &support::read(&root.join("models/person_detect.tflite")),
        "person_detect",
        &CORTEX_M,
    );
    assert_eq!(r.arena.head_bytes, 55296);
    // ILP32 short-enum tables (spec §4.3/§4.4), reference kernels, recording allocator:
    // objects 52+44+124+8+8 = 236; eval tensors 89·12 = 1068; nodes 31·32 = 992.
    let cat = |n: &str| {
        r.tail
            .iter()
            .find(|c| c.category == n)
            .map(|c| (c.bytes, c.count))
    };
    assert_eq!(cat("Allocator objects"), Some((236, 5)));
    assert_eq!(cat("TfLiteEvalTensor data"), Some((89 * 12, 89)));
    assert_eq!(cat("NodeAndRegistration struct"), Some((31 * 32, 31)));
    // One input and one output TfLiteTensor of 32 B; quantization 12 B + zero-point array 8 B each.
    assert_eq!(cat("Persistent TfLiteTensor data"), Some((64, 2)));
    assert_eq!(
        cat("Persistent TfLiteTensor quantization data"),
        Some((40, 4))
    );
}
