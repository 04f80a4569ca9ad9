//! Share links of real models: every corpus model round-trips, and a
//! person_detect link stays under 8 KB (browsers and chat tools cope with that).

mod support;

use microarena_core::planner::PlannerKind;
use microarena_core::profile::PROFILES;
use microarena_core::report::Report;
use microarena_core::{Config, Model, analyze, share};

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
