//! Fuzz target: the SSE, AI SDK, audit and OTLP writers fed from one pass over arbitrary bytes.
//! Every SSE event frame carries the envelope line as data, the AI SDK stream ends with `[DONE]`,
//! the audit log written for the run verifies and is the same when its records are streamed, and
//! the OTLP lines are JSON requests whose traces are whole: one root each, distinct span ids, every
//! parent a span of the same trace.
#![no_main]

use boo_normalize::audit::verify::verify;
use boo_normalize::normalize::{EndInfo, NormalizeOptions, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::sink::Ndjson;
use boo_normalize::sink::ai_sdk::AiSdk;
use boo_normalize::sink::audit::Audit;
use boo_normalize::sink::otlp::{Otlp, OtlpOptions};
use boo_normalize::sink::sse::Sse;
use libfuzzer_sys::fuzz_target;

#[path = "whole_traces.rs"]
mod whole_traces;
use whole_traces::whole_traces;

fuzz_target!(|data: &[u8]| {
    let (mut env, mut sse, mut ai, mut audit) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut otlp = Vec::new();
    // The same audit log again, with every record of 64 bytes or more streamed in pieces.
    let mut streamed = Vec::new();
    {
        let mut p = Pipeline::new(
            Normalizer::new(NormalizeOptions::default()),
            vec![
                Box::new(Ndjson::new(&mut env)),
                Box::new(Sse::new(&mut sse)),
                Box::new(AiSdk::new(&mut ai)),
                Box::new(Audit::new(&mut audit, "fuzz", [b'0'; 64])),
                Box::new(Audit::new(&mut streamed, "fuzz", [b'0'; 64]).stream_records_from(64)),
                Box::new(Otlp::lines(
                    &mut otlp,
                    OtlpOptions {
                        run_id: "fuzz".into(),
                        content: true,
                        resource: vec![("service.name".into(), "fuzz".into())],
                        per_turn: None,
                    },
                )),
            ],
        );
        p.run(data, None).unwrap();
        p.finish(&EndInfo::eof()).unwrap();
    }
    let env = String::from_utf8(env).unwrap();
    let sse = String::from_utf8(sse).unwrap();
    // Each SSE data line is exactly one envelope line, in order.
    let data_lines: Vec<&str> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    let env_lines: Vec<&str> = env.lines().collect();
    assert_eq!(data_lines, env_lines);
    let ai = String::from_utf8(ai).unwrap();
    assert!(ai.trim_end().ends_with("data: [DONE]"), "{ai}");
    assert!(
        audit == streamed,
        "streamed audit records differ from whole ones"
    );
    let summary = verify(&audit[..]).unwrap_or_else(|f| panic!("audit does not verify: {f:?}"));
    let _ = summary;
    whole_traces(&otlp);
});
