//! The `name=AxBxC` shape parsers (`apex_host::config::shape_spec`) on arbitrary text. Nothing
//! panics; what parses prints back to a text that parses to the same value; an error's column lies
//! inside the text (or one past its end).

#![no_main]

use apex_host::config::shape_spec::{parse_shape, parse_shape_case};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let chars = text.chars().count();
    match parse_shape_case(text) {
        Ok(case) => {
            assert!(!case.0.is_empty());
            let printed = case.to_string();
            assert_eq!(
                parse_shape_case(&printed).as_ref(),
                Ok(&case),
                "round trip of {printed:?}"
            );
            for spec in &case.0 {
                assert!(!spec.name.is_empty() && !spec.dims.is_empty());
                assert!(spec.dims.iter().all(|&d| d > 0 && d <= i64::MAX as u64));
                let _ = spec.elements();
            }
        }
        Err(e) => assert!(e.column >= 1 && e.column <= chars + 1, "{e}"),
    }
    match parse_shape(text) {
        Ok(spec) => {
            let printed = spec.to_string();
            assert_eq!(
                parse_shape(&printed).as_ref(),
                Ok(&spec),
                "round trip of {printed:?}"
            );
        }
        Err(e) => assert!(e.column >= 1 && e.column <= chars + 1, "{e}"),
    }
});
