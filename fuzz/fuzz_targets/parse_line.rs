//! Fuzz target: the two parsers. simd-json (with its serde_json fallback) and the serde_json
//! reference accept exactly the same lines and write the same JSON back.
#![no_main]

use boo_normalize::json::{Engine, Out, Parser};
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
            let vx: serde_json::Value = serde_json::from_slice(&x).expect("fast output is JSON");
            let vy: serde_json::Value =
                serde_json::from_slice(&y).expect("reference output is JSON");
            assert_eq!(vx, vy);
        }
        (Err(_), Err(_)) => {}
        (x, y) => panic!(
            "engines disagree: fast ok={} reference ok={}",
            x.is_ok(),
            y.is_ok()
        ),
    }
});
