//! Unit tests of the AI SDK sink's event reading: the pipeline's member index gives the same
//! fields as serde_json (or leaves the event to it), and the events serde_json cannot read still
//! get its error chunk.

use super::{AiSdk, Ev};
use crate::envelope::{Ctx, Events};
use crate::json::fields::Index;
use crate::sink::{EventCtx, Sink};

#[test]
fn fields_read_as_serde_json_reads_them() {
    let events = [
        r#"{"v":1,"type":"text","session_id":"s","parent_tool_use_id":null,"message_id":"m\"1","text":"a\nb \u00e9 \ud83d\ude00","index":3}"#,
        r#"{"type":"tool.call","tool_use_id":"t","name":null,"input":{"a":[1,"}"]},"server":true,"input_error":null}"#,
        r#"{"type":"tool.result","tool_use_id":"t","is_error":false,"content":[{"type":"text","text":"x"}]}"#,
        r#"{"type":"turn.end","outcome":"error","result":null,"errors":["a","b"],"usage":{"input_tokens":1},"cost_usd":0.5}"#,
        r#"{"type":"run.end","cause":"eof","terminal_seen":true,"turns":2,"model":"m"}"#,
        // What serde_json refuses: the index must not read it either.
        r#"{"type":"text.delta","index":1.5}"#,
        r#"{"type":"text.delta","index":-1}"#,
        r#"{"type":"text","text":7}"#,
        r#"{"type":"text","redacted":"yes"}"#,
        r#"{"type":"text","text":"a","text":"b"}"#,
        r#"{"type":"text","text":null,"text":"b"}"#,
        r#"{"type":"text","\u0074ext":"escaped key"}"#,
        r#"{"type":"text","index":99999999999999999999}"#,
    ];
    for e in events {
        let mut index = Index::default();
        assert!(index.build(e.as_bytes()), "{e}");
        let fields = index.view(e.as_bytes());
        let ours = Ev::from_fields(&fields);
        let serde = serde_json::from_str::<Ev<'_>>(e);
        // `None`: the sink asks serde_json (an escaped key), which then decides.
        match (&ours, &serde) {
            (Some(a), Ok(b)) => assert_eq!(a, b, "{e}"),
            (None, _) => assert!(serde.is_err() || e.contains("\\u0074"), "{e}"),
            (Some(_), Err(_)) => panic!("{e}: index {ours:?}, serde_json {serde:?}"),
        }
    }
}

/// The chunks written for `text` in an event of type `kind` (with `index` as raw JSON), by a sink
/// given the pipeline's index (`indexed`) or building its own.
fn chunks(kind: &'static str, index: &str, indexed: bool) -> String {
    let mut events = Events::default();
    let o = events.begin(kind, &Ctx::default());
    o.key("message_id");
    o.str("m1");
    o.key("index");
    o.raw(index.as_bytes());
    o.key("text");
    o.str("hi \"there\"\n");
    events.end();
    let mut sink = AiSdk::new(Vec::new());
    let mut own = Index::default();
    let meta = &events.metas[0];
    let fields = indexed.then(|| {
        assert!(own.build(events.bytes(meta)));
        own.view(events.bytes(meta))
    });
    let ctx = EventCtx {
        fields,
        ..EventCtx::default()
    };
    sink.event(&events, meta, &ctx).unwrap();
    sink.flush().unwrap();
    String::from_utf8(sink.w.into_inner().unwrap()).unwrap()
}

#[test]
fn the_same_chunks_with_or_without_the_pipelines_index_and_serde_json_errors_kept() {
    let good = chunks(crate::envelope::kind::TEXT_DELTA, "0", true);
    assert!(good.contains(r#""delta":"hi \"there\"\n""#), "{good}");
    assert_eq!(good, chunks(crate::envelope::kind::TEXT_DELTA, "0", false));
    let bad = chunks(crate::envelope::kind::TEXT_DELTA, "1.5", true);
    assert!(bad.contains("could not be translated"), "{bad}");
    assert!(bad.contains("invalid type: floating point"), "{bad}");
}

/// The kinds the sink does not read (`reads`) are the kinds its translation makes no chunk of,
/// even with a step, a text part and a tool call open (where a block stop, a message stop, a
/// revised input or a result would write one), and before a session's metadata went out.
#[test]
fn the_kinds_it_does_not_read_make_no_chunk() {
    use crate::envelope::kind;
    let mut events = Events::default();
    let tabled = crate::normalize::MAPPINGS.iter().map(|m| m.event);
    for k in kind::ALL.iter().copied().chain(tabled) {
        events.begin(k, &Ctx::default());
        events.end();
    }
    let meta_of = |k: &str| events.metas.iter().find(|m| m.kind == k).unwrap();
    let prime = Ev {
        message_id: Some("m1".into()),
        tool_use_id: Some("t1".into()),
        name: Some("Bash".into()),
        text: Some("a".into()),
        index: Some(0),
        ..Ev::default()
    };
    let probe = Ev {
        message_id: Some("m2".into()),
        session_id: Some("s".into()),
        outcome: Some("success".into()),
        tool_use_id: Some("t1".into()),
        text: Some("x".into()),
        index: Some(0),
        ..Ev::default()
    };
    let mut unread = 0;
    for meta in &events.metas {
        let mut sink = AiSdk::new(Vec::new());
        sink.translate(meta_of(kind::TEXT_DELTA), &prime);
        sink.translate(meta_of(kind::TOOL_CALL), &prime);
        if sink.reads(meta) {
            continue;
        }
        unread += 1;
        let before = sink.ends.len();
        sink.translate(meta, &probe);
        assert_eq!(
            sink.ends.len(),
            before,
            "{} makes a chunk, unread",
            meta.kind
        );
    }
    assert!(unread > 50, "{unread}");
}
