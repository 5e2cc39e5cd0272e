//! OTLP/JSON written straight from the spans: the bytes serde_json writes for an
//! `ExportTraceServiceRequest` of the opentelemetry-proto types (their field order, ids in hex,
//! 64-bit times and integers as strings, absent messages as `null`), without serde's walk over
//! the structs. A value the trace never makes (a key-value list, bytes, a link, an entity
//! reference, an interned key) is handed to serde_json itself.

use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::Event;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use serde::Serialize;

use crate::json::Out;

/// One `ExportTraceServiceRequest` holding `rs`, as one JSON line's bytes (no newline).
pub fn request(o: &mut Out, rs: &ResourceSpans) {
    o.raw(b"{\"resourceSpans\":[");
    resource_spans(o, rs);
    o.raw(b"]}");
}

/// `{"key":…,…}`: the members of the struct `$v`, each as its writer `$w` writes `&$v.$field`,
/// in the order given (the order of the proto's fields, which serde keeps).
macro_rules! object {
    ($o:ident, $v:ident; $key:literal $w:ident $field:ident $(, $keys:literal $ws:ident $fields:ident)* $(,)?) => {{
        $o.raw(concat!("{\"", $key, "\":").as_bytes());
        $w($o, &$v.$field);
        $(
            $o.raw(concat!(",\"", $keys, "\":").as_bytes());
            $ws($o, &$v.$fields);
        )*
        $o.raw(b"}");
    }};
}

fn resource_spans(o: &mut Out, rs: &ResourceSpans) {
    object!(o, rs; "resource" resource resource, "scopeSpans" scope_spans scope_spans, "schemaUrl" text schema_url);
}

fn resource(o: &mut Out, r: &Option<Resource>) {
    let Some(r) = r else { return o.raw(b"null") };
    object!(o, r; "attributes" attributes attributes, "droppedAttributesCount" count dropped_attributes_count, "entityRefs" serde entity_refs);
}

fn scope_spans(o: &mut Out, ss: &[ScopeSpans]) {
    list(
        o,
        ss,
        |o, ss| object!(o, ss; "scope" scope scope, "spans" spans spans, "schemaUrl" text schema_url),
    );
}

fn scope(o: &mut Out, s: &Option<InstrumentationScope>) {
    let Some(s) = s else { return o.raw(b"null") };
    object!(o, s; "name" text name, "version" text version, "attributes" attributes attributes, "droppedAttributesCount" count dropped_attributes_count);
}

fn spans(o: &mut Out, spans: &[Span]) {
    list(o, spans, |o, s| {
        object!(o, s;
            "traceId" hex trace_id, "spanId" hex span_id, "traceState" text trace_state,
            "parentSpanId" hex parent_span_id, "flags" count flags, "name" text name, "kind" int kind,
            "startTimeUnixNano" nanos start_time_unix_nano, "endTimeUnixNano" nanos end_time_unix_nano,
            "attributes" attributes attributes, "droppedAttributesCount" count dropped_attributes_count,
            "events" events events, "droppedEventsCount" count dropped_events_count,
            "links" serde links, "droppedLinksCount" count dropped_links_count, "status" status status,
        )
    });
}

fn events(o: &mut Out, events: &[Event]) {
    list(
        o,
        events,
        |o, e| object!(o, e; "timeUnixNano" nanos time_unix_nano, "name" text name, "attributes" attributes attributes, "droppedAttributesCount" count dropped_attributes_count),
    );
}

fn status(o: &mut Out, s: &Option<Status>) {
    let Some(s) = s else { return o.raw(b"null") };
    object!(o, s; "message" text message, "code" int code);
}

fn attributes(o: &mut Out, attrs: &[KeyValue]) {
    list(o, attrs, key_value);
}

fn key_value(o: &mut Out, kv: &KeyValue) {
    if kv.key_strindex != 0 {
        return serde(o, kv);
    }
    o.raw(b"{\"key\":");
    o.str(&kv.key);
    o.raw(b",\"value\":");
    match &kv.value {
        Some(v) => any_value(o, v),
        None => o.raw(b"null"),
    }
    o.raw(b"}");
}

fn any_value(o: &mut Out, v: &AnyValue) {
    match &v.value {
        Some(V::StringValue(s)) => {
            o.raw(b"{\"stringValue\":");
            o.str(s);
        }
        Some(V::BoolValue(b)) => {
            o.raw(b"{\"boolValue\":");
            o.bool(*b);
        }
        Some(V::IntValue(i)) => {
            o.raw(b"{\"intValue\":\"");
            o.raw(itoa::Buffer::new().format(*i).as_bytes());
            o.raw(b"\"");
        }
        Some(V::DoubleValue(d)) if d.is_finite() => {
            o.raw(b"{\"doubleValue\":");
            o.raw(ryu::Buffer::new().format_finite(*d).as_bytes());
        }
        Some(V::ArrayValue(a)) => {
            o.raw(b"{\"arrayValue\":{\"values\":");
            list(o, &a.values, any_value);
            o.raw(b"}");
        }
        _ => return serde(o, v),
    }
    o.raw(b"}");
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

/// What serde_json writes for `v` (the types this module does not write itself).
fn serde<T: Serialize + ?Sized>(o: &mut Out, v: &T) {
    // Writing to a Vec fails only for a map with non-string keys, which these types lack.
    let _ = serde_json::to_writer(&mut o.buf, v);
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

fn text(o: &mut Out, s: &str) {
    o.str(s);
}

fn count(o: &mut Out, n: &u32) {
    o.u64((*n).into());
}

fn int(o: &mut Out, n: &i32) {
    o.raw(itoa::Buffer::new().format(*n).as_bytes());
}

/// A time: serde writes 64-bit integers as strings.
fn nanos(o: &mut Out, n: &u64) {
    o.raw(b"\"");
    o.u64(*n);
    o.raw(b"\"");
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{ArrayValue, KeyValueList};
    use opentelemetry_proto::tonic::trace::v1::span::Link;

    fn kv(key: &str, v: Option<V>) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue { value: v }),
            ..Default::default()
        }
    }

    fn same_as_serde(rs: ResourceSpans) {
        let mut o = Out::default();
        request(&mut o, &rs);
        let want = serde_json::to_vec(&ExportTraceServiceRequest {
            resource_spans: vec![rs],
        })
        .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.buf),
            String::from_utf8_lossy(&want)
        );
    }

    fn spans_with(attributes: Vec<KeyValue>, name: String) -> ResourceSpans {
        let span = Span {
            trace_id: vec![0, 1, 0xab, 0xff],
            span_id: vec![0x10; 8],
            parent_span_id: vec![],
            name,
            kind: 3,
            flags: 7,
            start_time_unix_nano: u64::MAX,
            end_time_unix_nano: 5,
            attributes: attributes.clone(),
            events: vec![Event {
                time_unix_nano: 9,
                name: "e\"v".into(),
                attributes: attributes.clone(),
                dropped_attributes_count: 2,
            }],
            status: Some(Status {
                message: "bad\n\u{1}".into(),
                code: 2,
            }),
            ..Default::default()
        };
        ResourceSpans {
            resource: Some(Resource {
                attributes: attributes.clone(),
                ..Default::default()
            }),
            scope_spans: vec![
                ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "boo".into(),
                        version: "1".into(),
                        ..Default::default()
                    }),
                    spans: vec![span.clone(), Span::default()],
                    schema_url: "s".into(),
                },
                ScopeSpans::default(),
            ],
            schema_url: String::new(),
        }
    }

    #[test]
    fn every_value_is_written_as_serde_json_writes_it() {
        let attrs = vec![
            kv("s", Some(V::StringValue("é \" \\ \u{7f} \u{1f} </".into()))),
            kv("b", Some(V::BoolValue(false))),
            kv("i", Some(V::IntValue(i64::MIN))),
            kv("d", Some(V::DoubleValue(1.0))),
            kv("d2", Some(V::DoubleValue(1.2550025e-30))),
            kv("nan", Some(V::DoubleValue(f64::NAN))),
            kv("inf", Some(V::DoubleValue(f64::NEG_INFINITY))),
            kv(
                "a",
                Some(V::ArrayValue(ArrayValue {
                    values: vec![
                        AnyValue {
                            value: Some(V::StringValue("x".into())),
                        },
                        AnyValue { value: None },
                    ],
                })),
            ),
            kv("kv", Some(V::KvlistValue(KeyValueList { values: vec![] }))),
            kv("bytes", Some(V::BytesValue(vec![1, 2, 3]))),
            kv("none", None),
            KeyValue {
                key: "no value".into(),
                value: None,
                key_strindex: 0,
            },
            KeyValue {
                key: "interned".into(),
                value: None,
                key_strindex: 3,
            },
        ];
        let mut rs = spans_with(attrs, "chat \u{0}".repeat(20));
        rs.scope_spans[0].spans[0].links.push(Link {
            trace_id: vec![1],
            ..Default::default()
        });
        same_as_serde(rs);
        same_as_serde(ResourceSpans::default());
    }

    proptest::proptest! {
        /// Any text (long strings go through the SIMD escaper) is escaped as serde_json does.
        #[test]
        fn any_string_is_escaped_as_serde_json_does(s in "\\PC{0,80}|[\\x00-\\x7f]{0,200}") {
            same_as_serde(spans_with(vec![kv(&s, Some(V::StringValue(s.clone())))], s));
        }
    }
}
