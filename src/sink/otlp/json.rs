//! OTLP/JSON written straight from the trace's spans: the bytes serde_json writes for the
//! `ExportTraceServiceRequest` the exporter would send ([`Batch::into_proto`]): the proto's field
//! order, ids in hex, 64-bit times and integers as strings, absent messages as `null`, every
//! field the trace leaves at its default written as its default.

use super::span::{Batch, Event, KeyValue, SCOPE, Span, Value};
use crate::json::Out;

/// `code` of an error status (`STATUS_CODE_ERROR`).
const ERROR: &[u8] = b"2";

/// One `ExportTraceServiceRequest` holding `batch`, as one JSON line's bytes (no newline).
pub fn request(o: &mut Out, batch: &Batch) {
    o.raw(b"{\"resourceSpans\":[{\"resource\":{\"attributes\":");
    attributes(o, &batch.resource);
    o.raw(
        b",\"droppedAttributesCount\":0,\"entityRefs\":[]},\"scopeSpans\":[{\"scope\":{\"name\":",
    );
    o.str(SCOPE);
    o.raw(b",\"version\":");
    o.str(env!("CARGO_PKG_VERSION"));
    o.raw(b",\"attributes\":[],\"droppedAttributesCount\":0},\"spans\":");
    list(o, &batch.spans, span);
    o.raw(b",\"schemaUrl\":\"\"}],\"schemaUrl\":\"\"}]}");
}

fn span(o: &mut Out, s: &Span) {
    o.raw(b"{\"traceId\":");
    hex(o, &s.trace_id);
    o.raw(b",\"spanId\":");
    hex(o, &s.span_id);
    o.raw(b",\"traceState\":\"\",\"parentSpanId\":");
    hex(o, s.parent.as_ref().map_or(&[][..], |p| &p[..]));
    o.raw(b",\"flags\":0,\"name\":");
    o.str(&s.name);
    o.raw(b",\"kind\":");
    o.raw(itoa::Buffer::new().format(s.kind as i32).as_bytes());
    o.raw(b",\"startTimeUnixNano\":");
    nanos(o, s.start);
    o.raw(b",\"endTimeUnixNano\":");
    nanos(o, s.end);
    o.raw(b",\"attributes\":");
    attributes(o, &s.attributes);
    o.raw(b",\"droppedAttributesCount\":0,\"events\":");
    list(o, &s.events, event);
    o.raw(b",\"droppedEventsCount\":0,\"links\":[],\"droppedLinksCount\":0,\"status\":");
    match &s.status {
        Some(st) => {
            o.raw(b"{\"message\":");
            o.str(&st.message);
            o.raw(b",\"code\":");
            o.raw(ERROR);
            o.raw(b"}");
        }
        None => o.raw(b"null"),
    }
    o.raw(b"}");
}

fn event(o: &mut Out, e: &Event) {
    o.raw(b"{\"timeUnixNano\":");
    nanos(o, e.time);
    o.raw(b",\"name\":");
    o.str(e.name);
    o.raw(b",\"attributes\":");
    attributes(o, &e.attributes);
    o.raw(b",\"droppedAttributesCount\":0}");
}

fn attributes(o: &mut Out, attrs: &[KeyValue]) {
    list(o, attrs, key_value);
}

fn key_value(o: &mut Out, kv: &KeyValue) {
    o.raw(b"{\"key\":");
    o.str(&kv.key);
    o.raw(b",\"value\":");
    match &kv.value {
        Value::Str(s) => {
            o.raw(b"{\"stringValue\":");
            o.str(s);
        }
        Value::Bool(b) => {
            o.raw(b"{\"boolValue\":");
            o.bool(*b);
        }
        Value::Int(i) => {
            o.raw(b"{\"intValue\":\"");
            o.raw(itoa::Buffer::new().format(*i).as_bytes());
            o.raw(b"\"");
        }
        // serde writes a NaN or an infinity as null
        Value::Double(d) if !d.is_finite() => o.raw(b"{\"doubleValue\":null"),
        Value::Double(d) => {
            o.raw(b"{\"doubleValue\":");
            o.raw(ryu::Buffer::new().format_finite(*d).as_bytes());
        }
        Value::Strs(v) => {
            o.raw(b"{\"arrayValue\":{\"values\":");
            list(o, v, |o, s| {
                o.raw(b"{\"stringValue\":");
                o.str(s);
                o.raw(b"}");
            });
            o.raw(b"}");
        }
    }
    o.raw(b"}}");
}

/// `[f(item), …]`.
fn list<T>(o: &mut Out, items: &[T], f: impl Fn(&mut Out, &T)) {
    o.raw(b"[");
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            o.raw(b",");
        }
        f(o, x);
    }
    o.raw(b"]");
}

fn hex(o: &mut Out, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    o.buf.reserve(bytes.len() * 2 + 2);
    o.buf.push(b'"');
    for b in bytes {
        o.buf.push(DIGITS[usize::from(b >> 4)]);
        o.buf.push(DIGITS[usize::from(b & 0xf)]);
    }
    o.buf.push(b'"');
}

/// A time: serde writes 64-bit integers as strings.
fn nanos(o: &mut Out, n: u64) {
    o.raw(b"\"");
    o.u64(n);
    o.raw(b"\"");
}

#[cfg(test)]
mod tests {
    use super::super::span::{SpanKind, Status};
    use super::*;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use std::borrow::Cow;

    fn kv(key: &str, value: Value) -> KeyValue {
        KeyValue {
            key: key.to_owned().into(),
            value,
        }
    }

    /// The writer's bytes are serde_json's for the proto message the exporter sends.
    fn same_as_serde(batch: &Batch) {
        let mut o = Out::default();
        request(&mut o, batch);
        let want = serde_json::to_vec(&ExportTraceServiceRequest {
            resource_spans: vec![batch.clone().into_proto()],
        })
        .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.buf),
            String::from_utf8_lossy(&want)
        );
    }

    fn batch_with(attributes: Vec<KeyValue>, name: String) -> Batch {
        let span = Span {
            trace_id: [0xab; 16],
            span_id: [0x10, 0, 1, 2, 3, 4, 5, 0xff],
            parent: None,
            name,
            kind: SpanKind::Client,
            start: u64::MAX,
            end: 5,
            attributes: attributes.clone(),
            events: vec![Event {
                time: 9,
                name: "e\"v",
                attributes: attributes.clone(),
            }],
            status: Some(Status {
                message: "bad\n\u{1}".into(),
            }),
        };
        let child = Span {
            parent: Some([7; 8]),
            kind: SpanKind::Internal,
            status: None,
            events: vec![],
            ..span.clone()
        };
        Batch {
            resource: attributes,
            spans: vec![span, child],
        }
    }

    #[test]
    fn every_value_is_written_as_serde_json_writes_it() {
        let attrs = vec![
            kv("s", Value::Str("é \" \\ \u{7f} \u{1f} </".into())),
            KeyValue {
                key: Cow::Borrowed("gen_ai.operation.name"),
                value: Value::Str(Cow::Borrowed("chat")),
            },
            kv("b", Value::Bool(false)),
            kv("t", Value::Bool(true)),
            kv("i", Value::Int(i64::MIN)),
            kv("d", Value::Double(1.0)),
            kv("d2", Value::Double(1.2550025e-30)),
            kv("nan", Value::Double(f64::NAN)),
            kv("inf", Value::Double(f64::NEG_INFINITY)),
            kv("a", Value::Strs(vec!["x".into(), "\u{0}".into()])),
            kv("empty", Value::Strs(vec![])),
        ];
        same_as_serde(&batch_with(attrs, "chat \u{0}".repeat(20)));
        same_as_serde(&Batch::default());
    }

    proptest::proptest! {
        /// Any text (long strings go through the SIMD escaper) is escaped as serde_json does.
        #[test]
        fn any_string_is_escaped_as_serde_json_does(s in "\\PC{0,80}|[\\x00-\\x7f]{0,200}") {
            same_as_serde(&batch_with(vec![kv(&s, Value::Str(s.clone().into()))], s));
        }
    }
}
