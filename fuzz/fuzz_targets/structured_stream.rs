//! Structure-aware fuzz target: plausible stream-json (init, assistant blocks, tool results,
//! stream events with deltas cut at arbitrary points, interleaved subagents, results) built from
//! arbitrary choices, then checked like `normalize_stream`, plus: one tool.call per tool_use id,
//! hollowing long string literals (what huge lines get) changes no output byte, and the OTLP
//! trace of the stream is whole (see `whole_traces.rs`).
#![no_main]

use std::collections::HashMap;

use arbitrary::Arbitrary;
use boo_normalize::json::depth;
use boo_normalize::normalize::{EndInfo, NormalizeOptions, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::sink::Ndjson;
use boo_normalize::sink::otlp::{Otlp, OtlpOptions};
use libfuzzer_sys::fuzz_target;

#[path = "whole_traces.rs"]
mod whole_traces;
use serde_json::json;

#[derive(Arbitrary, Debug)]
enum Step {
    Init {
        session: u8,
        version: Option<u8>,
    },
    Text {
        parent: Option<u8>,
        msg: u8,
        text: String,
    },
    ToolUse {
        parent: Option<u8>,
        msg: u8,
        id: u8,
        name: u8,
        input: String,
    },
    ToolResult {
        parent: Option<u8>,
        id: u8,
        is_error: Option<bool>,
        content: String,
        as_blocks: bool,
    },
    Streamed {
        parent: Option<u8>,
        msg: u8,
        id: u8,
        input: String,
        cuts: Vec<u8>,
        stop: bool,
        assistant_line: bool,
    },
    Result {
        subtype: u8,
        is_error: Option<bool>,
    },
    Junk(Vec<u8>),
    Unknown {
        t: String,
    },
}

fn p(parent: Option<u8>) -> serde_json::Value {
    parent.map_or(serde_json::Value::Null, |x| {
        json!(format!("toolu_parent{x}"))
    })
}

fn render(steps: &[Step], out: &mut Vec<u8>) {
    let names = ["Bash", "Read", "Task", "Agent", "mcp__x__y"];
    let subtypes = [
        "success",
        "error_max_turns",
        "error_during_execution",
        "weird",
    ];
    fn push(out: &mut Vec<u8>, v: serde_json::Value) {
        out.extend(serde_json::to_vec(&v).unwrap());
        out.push(b'\n');
    }
    macro_rules! line {
        ($v:expr) => {
            push(out, $v)
        };
    }
    for s in steps {
        match s {
            Step::Init { session, version } => line!(
                json!({"type":"system","subtype":"init","session_id":format!("s{session}"),"model":"m","cwd":"/","tools":["Bash"],"mcp_servers":[],"permissionMode":"default","apiKeySource":"none","claude_code_version":version.map(|v| format!("2.1.{v}"))})
            ),
            Step::Text { parent, msg, text } => line!(
                json!({"type":"assistant","message":{"id":format!("msg_{msg}"),"model":"m","content":[{"type":"text","text":text}],"usage":{"input_tokens":1,"output_tokens":2}},"parent_tool_use_id":p(*parent),"session_id":"s"})
            ),
            Step::ToolUse {
                parent,
                msg,
                id,
                name,
                input,
            } => line!(
                json!({"type":"assistant","message":{"id":format!("msg_{msg}"),"model":"m","content":[{"type":"tool_use","id":format!("toolu_{id}"),"name":names[*name as usize % names.len()],"input":{"arg":input}}],"usage":{"input_tokens":1}},"parent_tool_use_id":p(*parent),"session_id":"s"})
            ),
            Step::ToolResult {
                parent,
                id,
                is_error,
                content,
                as_blocks,
            } => {
                let c = if *as_blocks {
                    json!([{"type":"text","text":content}])
                } else {
                    json!(content)
                };
                let mut b =
                    json!({"type":"tool_result","tool_use_id":format!("toolu_{id}"),"content":c});
                if let Some(e) = is_error {
                    b["is_error"] = json!(e);
                }
                line!(
                    json!({"type":"user","message":{"role":"user","content":[b]},"parent_tool_use_id":p(*parent),"session_id":"s"})
                )
            }
            Step::Streamed {
                parent,
                msg,
                id,
                input,
                cuts,
                stop,
                assistant_line,
            } => {
                let pid = p(*parent);
                let ev = |e: serde_json::Value| json!({"type":"stream_event","event":e,"parent_tool_use_id":pid.clone(),"session_id":"s"});
                line!(ev(
                    json!({"type":"message_start","message":{"id":format!("msg_s{msg}"),"model":"m","content":[],"usage":{"input_tokens":3}}})
                ));
                line!(ev(
                    json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":format!("toolu_s{id}"),"name":"Bash","input":{}}})
                ));
                let full = serde_json::to_string(&json!({"command": input})).unwrap();
                let mut at = 0;
                for c in cuts {
                    let mut end = (at + *c as usize).min(full.len());
                    while !full.is_char_boundary(end) {
                        end += 1;
                    }
                    line!(ev(
                        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":&full[at..end]}})
                    ));
                    at = end;
                }
                if *stop {
                    line!(ev(
                        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":&full[at..]}})
                    ));
                    if *assistant_line {
                        line!(
                            json!({"type":"assistant","message":{"id":format!("msg_s{msg}"),"model":"m","content":[{"type":"tool_use","id":format!("toolu_s{id}"),"name":"Bash","input":{"command":input}}]},"parent_tool_use_id":pid.clone(),"session_id":"s"})
                        );
                    }
                    line!(ev(json!({"type":"content_block_stop","index":0})));
                    line!(ev(
                        json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}})
                    ));
                    line!(ev(json!({"type":"message_stop"})));
                }
            }
            Step::Result { subtype, is_error } => {
                let mut r = json!({"type":"result","subtype":subtypes[*subtype as usize % subtypes.len()],"session_id":"s","total_cost_usd":0.5,"num_turns":1,"duration_ms":1});
                if let Some(e) = is_error {
                    r["is_error"] = json!(e);
                }
                line!(r)
            }
            Step::Junk(b) => {
                out.extend(b.iter().filter(|&&c| c != b'\n'));
                out.push(b'\n');
            }
            Step::Unknown { t } => line!(json!({"type": t, "session_id":"s"})),
        }
    }
}

fuzz_target!(|steps: Vec<Step>| {
    let mut input = Vec::new();
    render(&steps, &mut input);
    let normalize = |opts: NormalizeOptions| {
        let mut out = Vec::new();
        {
            let sink = Ndjson::new(&mut out);
            let mut pl = Pipeline::new(Normalizer::new(opts), vec![Box::new(sink)]);
            pl.run(&input[..], None).unwrap();
            pl.finish(&EndInfo::eof()).unwrap();
        }
        out
    };
    let out = normalize(NormalizeOptions::default());
    let hollowed = normalize(NormalizeOptions {
        hollow: Some((0, 8)),
        ..NormalizeOptions::default()
    });
    assert!(out == hollowed, "hollowing changed the output");
    let mut otlp = Vec::new();
    {
        let opts = OtlpOptions {
            run_id: "fuzz".into(),
            content: true,
            ..OtlpOptions::default()
        };
        let sink = Otlp::lines(&mut otlp, opts);
        let normalizer = Normalizer::new(NormalizeOptions::default());
        let mut pl = Pipeline::new(normalizer, vec![Box::new(sink)]);
        pl.run(&input[..], None).unwrap();
        pl.finish(&EndInfo::eof()).unwrap();
    }
    whole_traces::whole_traces(&otlp);
    let mut calls: HashMap<String, u32> = HashMap::new();
    let mut usage: HashMap<String, u32> = HashMap::new();
    let mut last = None;
    for (i, l) in std::str::from_utf8(&out).unwrap().lines().enumerate() {
        let v: serde_json::Value = depth::from_slice(l.as_bytes()).unwrap();
        assert_eq!(v["seq"], i as u64);
        if v["type"] == "tool.call" {
            *calls
                .entry(v["tool_use_id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        if v["type"] == "usage" {
            // Once per message id within a turn (ids repeat across turns in this generator).
            let k = format!("{}/{}", v["message_id"], v["session_id"]);
            *usage.entry(k).or_default() += 1;
        }
        if v["type"] == "turn.end" {
            usage.clear();
        }
        if v["type"] == "session.init" {
            // Each init opens a new scope for the one-call-per-id rule.
            calls.clear();
        }
        last = Some(v);
    }
    assert!(
        calls.values().all(|&n| n == 1),
        "duplicate tool.call: {calls:?}"
    );
    let end = last.unwrap();
    assert_eq!(end["type"], "run.end");
    let nl = input.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(end["stats"]["lines"], nl);
});
