//! The trace's own spans: what the OTLP sink builds, light enough for a run's tens of thousands
//! (ids as arrays, attribute keys and constant values as static strings), written as OTLP/JSON
//! by `json.rs` and turned into opentelemetry-proto messages only for the OTLP/HTTP exporter.

use std::borrow::Cow;

use opentelemetry_proto::tonic::common::v1::{self as proto_common, AnyValue, ArrayValue};
use opentelemetry_proto::tonic::common::v1::{InstrumentationScope, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{self as proto, ResourceSpans, ScopeSpans, status};

pub use opentelemetry_proto::tonic::trace::v1::span::SpanKind;

/// An attribute's key: a constant of the conventions, or one made from an envelope member name.
pub type Key = Cow<'static, str>;

/// The instrumentation scope every span is under (this tool, at this version).
pub const SCOPE: &str = "boo-normalize";

/// An attribute's value (the kinds the trace makes).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `stringValue` (capped by its constructor, [`super::attr::str`]).
    Str(Cow<'static, str>),
    /// `intValue`.
    Int(i64),
    /// `boolValue`.
    Bool(bool),
    /// `doubleValue`.
    Double(f64),
    /// `arrayValue` of strings.
    Strs(Vec<String>),
}

/// One attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyValue {
    /// The attribute's name.
    pub key: Key,
    /// Its value.
    pub value: Value,
}

/// A span event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// When it happened (Unix nanoseconds).
    pub time: u64,
    /// What happened (`boo_normalize.…`).
    pub name: &'static str,
    /// What it says.
    pub attributes: Vec<KeyValue>,
}

/// A span's status when it is an error (spans without one leave the status unset).
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Why (capped).
    pub message: String,
}

/// One span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// The trace it belongs to (one per `claude` invocation).
    pub trace_id: [u8; 16],
    /// Its own id.
    pub span_id: [u8; 8],
    /// The span it hangs under; `None` for a root.
    pub parent: Option<[u8; 8]>,
    /// `<operation> <what>`, e.g. `chat claude-sonnet-4-5`.
    pub name: String,
    /// Client for a chat, internal for the rest.
    pub kind: SpanKind,
    /// When it started (Unix nanoseconds).
    pub start: u64,
    /// When it ended (Unix nanoseconds).
    pub end: u64,
    /// Its attributes, keys unique.
    pub attributes: Vec<KeyValue>,
    /// Its span events, in time order.
    pub events: Vec<Event>,
    /// Set when the span failed.
    pub status: Option<Status>,
}

/// Spans of one resource (one request's worth).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// Resource attributes.
    pub resource: Vec<KeyValue>,
    /// The spans, in the order they finished.
    pub spans: Vec<Span>,
}

impl Batch {
    /// The batch as the opentelemetry-proto message the exporter sends (its spans and strings
    /// moved, not copied).
    pub fn into_proto(self) -> ResourceSpans {
        ResourceSpans {
            resource: Some(Resource {
                attributes: attributes(self.resource),
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: SCOPE.into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                spans: self.spans.into_iter().map(Span::into_proto).collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }
}

impl Span {
    fn into_proto(self) -> proto::Span {
        proto::Span {
            trace_id: self.trace_id.to_vec(),
            span_id: self.span_id.to_vec(),
            parent_span_id: self.parent.map(|p| p.to_vec()).unwrap_or_default(),
            name: self.name,
            kind: self.kind as i32,
            start_time_unix_nano: self.start,
            end_time_unix_nano: self.end,
            attributes: attributes(self.attributes),
            events: self
                .events
                .into_iter()
                .map(|e| proto::span::Event {
                    time_unix_nano: e.time,
                    name: e.name.to_owned(),
                    attributes: attributes(e.attributes),
                    ..Default::default()
                })
                .collect(),
            status: self.status.map(|s| proto::Status {
                message: s.message,
                code: status::StatusCode::Error as i32,
            }),
            ..Default::default()
        }
    }
}

fn attributes(attrs: Vec<KeyValue>) -> Vec<proto_common::KeyValue> {
    attrs
        .into_iter()
        .map(|kv| proto_common::KeyValue {
            key: kv.key.into_owned(),
            value: Some(kv.value.into_proto()),
            ..Default::default()
        })
        .collect()
}

impl Value {
    fn into_proto(self) -> AnyValue {
        use any_value::Value as V;
        let v = match self {
            Value::Str(s) => V::StringValue(s.into_owned()),
            Value::Int(i) => V::IntValue(i),
            Value::Bool(b) => V::BoolValue(b),
            Value::Double(d) => V::DoubleValue(d),
            Value::Strs(v) => V::ArrayValue(ArrayValue {
                values: v
                    .into_iter()
                    .map(|s| AnyValue {
                        value: Some(V::StringValue(s)),
                    })
                    .collect(),
            }),
        };
        AnyValue { value: Some(v) }
    }
}
