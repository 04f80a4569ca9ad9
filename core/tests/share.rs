//! Share links of real models: every corpus model round-trips, and a
//! person_detect link stays under 8 KB (browsers and chat tools cope with that).

mod support;

use microarena_core::plan::PlannerKind;
use microarena_core::report::{Report, WhatIfInfo};
use microarena_core::tflm::profile::PROFILES;
use microarena_core::{Config, Model, analyze, build::example, report::share};

#[test]
fn corpus_links_round_trip_and_person_detect_fits_in_8_kb() {
    let Some(corpus) = support::corpus("share links") else {
        return;
    };
    let mut person_detect = None;
    let mut seen = 0;
    for entry in std::fs::read_dir(corpus.join("models")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "tflite") {
            continue;
        }
        let bytes = support::read(&path);
        let Ok(model) = Model::parse(&bytes) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for profile in PROFILES {
            let config = Config {
                profile,
                planner: PlannerKind::TflmGreedy,
            };
            let Ok(analysis) = analyze(&model, &config) else {
                continue;
            };
            let report = Report::new(&model, &analysis, &name);
            let link = share::fragment(&report);
            assert_eq!(share::decode_fragment(&link).unwrap(), report, "{name}");
            seen += 1;
            if name == "person_detect.tflite" && profile.name == "x86_64" {
                person_detect = Some(link.len());
            }
        }
    }
    assert!(seen > 0, "no corpus model could be analysed");
    let len = person_detect.expect("person_detect.tflite is in the corpus");
    eprintln!("person_detect share fragment: {len} bytes");
    assert!(len < 8 * 1024, "person_detect link is {len} bytes");
}

/// A what-if report as `microarena plan --input-shape` and the web app build it.
fn what_if_report(bytes: &[u8], file: &str, spec: &str) -> Report {
    let model = Model::parse(bytes).unwrap();
    let config = Config {
        profile: &PROFILES[0],
        planner: PlannerKind::TflmGreedy,
    };
    let overrides = [microarena_core::whatif::parse_override(spec).unwrap()];
    let reshaped = microarena_core::whatif::with_input_shapes(&model, &overrides).unwrap();
    let mut report = Report::new(&reshaped, &analyze(&reshaped, &config).unwrap(), file);
    let before = analyze(&model, &config).unwrap();
    report.what_if = Some(WhatIfInfo::new(vec![spec.into()], &model, &before));
    report
}

#[test]
fn what_if_links_carry_the_shapes_and_the_original_figures() {
    let bytes = example::mobilenet_v1_025_96_int8();
    let report = what_if_report(&bytes, "example.tflite", "input=1,112,112,1");
    let back = share::decode_fragment(&share::fragment(&report)).unwrap();
    assert_eq!(back, report);
    let w = back.what_if.expect("the what-if survives the link");
    assert_eq!(w.input_shapes, ["input=1,112,112,1"]);
    assert!(back.arena.head_bytes > w.original_head_bytes);
    // Cutting the link anywhere in the what-if part is an error, never a
    // report without it.
    let payload = share::to_bytes(&report);
    let plain = share::to_bytes(&Report {
        what_if: None,
        ..report.clone()
    });
    for n in plain.len() - 1..payload.len() {
        assert!(share::from_bytes(&payload[..n]).is_err(), "prefix {n}");
    }
}

#[test]
fn corpus_what_if_links_round_trip_with_their_variables() {
    let Some(corpus) = support::corpus("what-if share links") else {
        return;
    };
    let bytes = support::read(&corpus.join("models/micro_speech_lstm.tflite"));
    let report = what_if_report(
        &bytes,
        "micro_speech_lstm.tflite",
        "serving_default_x:0=2,49,257",
    );
    assert_eq!(report.variables.len(), 2);
    let link = share::fragment(&report);
    assert_eq!(share::decode_fragment(&link).unwrap(), report);
    eprintln!(
        "micro_speech_lstm what-if share fragment: {} bytes",
        link.len()
    );
}

/// A link made before the app's what-if control existed (main at d42b03a,
/// `example::synthetic(3)`, x86_64, tflm-greedy): links already handed out
/// must keep opening.
const OLD_LINK: &str = include_str!("share_v1_link.txt");

#[test]
fn links_already_handed_out_still_decode() {
    let report = share::decode_fragment(OLD_LINK.trim()).expect("an old link decodes");
    assert_eq!(report.model.file, "synthetic3.tflite");
    assert_eq!(report.what_if, None);
    // Version 1 predates the flash and compute figures: they read as zero.
    assert_eq!(report.flash, Default::default());
    assert_eq!(report.compute, Default::default());
    let bytes = example::synthetic(3);
    let model = Model::parse(&bytes).unwrap();
    let config = Config {
        profile: &PROFILES[0],
        planner: PlannerKind::TflmGreedy,
    };
    let fresh = Report::new(
        &model,
        &analyze(&model, &config).unwrap(),
        "synthetic3.tflite",
    );
    assert_eq!(report.arena, fresh.arena);
    assert_eq!(report.buffers, fresh.buffers);
}

#[test]
fn garbage_links_give_a_clear_error() {
    let report = what_if_report(
        &example::mobilenet_v1_025_96_int8(),
        "example.tflite",
        "input=1,112,112,1",
    );
    let code = share::encode(&report);
    for (bad, why) in [
        ("#r=", "empty"),
        ("#q=abc", "does not start with r="),
        ("#r=%%%", "not valid base64url"),
        ("#r=CQ", "format version 9"),
        ("#r=AQ", "corrupt or cut short"),
        (
            &format!("#r={}", &code[..(code.len() / 2) & !3]) as &str,
            "corrupt or cut short",
        ),
    ] {
        let e = share::decode_fragment(bad).expect_err(bad);
        assert!(e.to_string().contains(why), "{bad}: {e}");
    }
}
