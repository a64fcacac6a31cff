//! The skip-condition parser (`apex_host::skip::Expr::parse`) on arbitrary text, and the pure
//! evaluator on what parses. Nothing panics; a parse error's column lies inside the expression
//! (or one past its end) and it carries a hint; a parsed expression evaluates to a value or to a
//! located type error.

#![no_main]

use apex_host::facts::Facts;
use apex_host::skip::{CaseContext, Expr};
use apex_plugin_api::{Backend, Precision};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Expr::parse(text) {
        Ok(expr) => {
            assert_eq!(expr.text(), text);
            let _ = expr.params();
            let ctx = CaseContext {
                backend: Backend::Cpu,
                precision: Precision::Fp32,
                params: [
                    ("n".to_string(), serde_json::json!(1024)),
                    ("mode".to_string(), serde_json::json!("blend")),
                    ("shape".to_string(), serde_json::json!([2, 3])),
                    ("alpha".to_string(), serde_json::json!(0.5)),
                ]
                .into_iter()
                .collect(),
            };
            if let Err(e) = expr.eval(&Facts::cpu_only(), &ctx) {
                assert!(
                    e.column >= 1 && e.column <= text.chars().count() + 1,
                    "eval error column inside the text: {e}"
                );
            }
        }
        Err(e) => {
            assert!(
                e.column >= 1 && e.column <= text.chars().count() + 1,
                "parse error column inside the text: {e} ({} characters)",
                text.chars().count()
            );
            assert!(!e.hint.is_empty(), "every parse error has a hint: {e}");
        }
    }
});
