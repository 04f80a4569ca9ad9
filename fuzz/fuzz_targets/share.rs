//! Arbitrary share-link text (what anyone can paste into the address bar) → decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microarena_core::report::share;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(report) = share::decode_fragment(text) {
        // Whatever decodes must encode and decode to the same report.
        let again = share::decode(&share::encode(&report)).expect("re-encoded link decodes");
        assert_eq!(again, report);
    }
    let _ = share::decode(text);
});
