//! Fuzz target: the two parsers. simd-json (with its serde_json fallback) and the serde_json
//! reference accept exactly the same lines and write the same JSON back, up to the nesting limit
//! (`json::MAX_DEPTH`, read back with the same bounded parse) and without overflowing the stack
//! however deep the input nests; lines beyond the limit are refused by both as too deep.
#![no_main]

use boo_normalize::json::{Engine, Out, Parser, depth};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut fast = Parser::new(Engine::Simd);
    let mut slow = Parser::new(Engine::Serde);
    let a = fast.parse(data).map(|p| {
        let mut o = Out::default();
        o.value(p.tape.as_value());
        o.buf
    });
    let b = slow.parse(data).map(|p| {
        let mut o = Out::default();
        o.value(p.tape.as_value());
        o.buf
    });
    match (a, b) {
        (Ok(x), Ok(y)) => {
            let vx: serde_json::Value = depth::from_slice(&x).expect("fast output is JSON");
            let vy: serde_json::Value = depth::from_slice(&y).expect("reference output is JSON");
            assert_eq!(vx, vy);
        }
        (Err(x), Err(y)) => assert_eq!(
            depth::is_too_deep(&x.message),
            depth::is_too_deep(&y.message),
            "engines disagree on too deep: {x:?} {y:?}"
        ),
        (x, y) => panic!(
            "engines disagree: fast ok={} reference ok={}",
            x.is_ok(),
            y.is_ok()
        ),
    }
});
