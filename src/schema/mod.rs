//! The JSON Schema (draft 2020-12) of envelope v1, built from the same tables the normalizer and
//! the spawn guards use (so it sits above both).
//!
//! The published schema is open (unknown members and event types are allowed, so a consumer that
//! validates with it keeps working when v1 grows). The strict variant, used by this crate's tests,
//! rejects anything not documented here, so an undocumented field fails the build.

mod defs;

use serde_json::{Map, Value, json};

use crate::envelope::kind;
use defs::{defs, nullable};

/// One event type, for documentation: `(type, description, field names, ephemeral)`.
pub type EventDoc = (&'static str, &'static str, Vec<&'static str>, bool);

/// Every event type with its description and fields (the man page and README are built from it).
pub fn event_docs() -> Vec<EventDoc> {
    defs()
        .into_iter()
        .map(|(n, d, f, e)| (n, d, f.into_iter().map(|x| x.0).collect(), e))
        .collect()
}

/// Every event type envelope v1 defines.
pub fn event_types() -> Vec<&'static str> {
    defs().into_iter().map(|d| d.0).collect()
}

/// The schema document. `strict` forbids members and event types not listed here.
pub fn schema(strict: bool) -> Value {
    let defs = defs();
    let types: Vec<&str> = defs.iter().map(|d| d.0).collect();
    let mut all_of = vec![json!({"$ref": "#/$defs/common"})];
    let mut defs_map = Map::new();
    let mut type_schema = json!({"type": "string"});
    if strict {
        type_schema = json!({"enum": types});
    }
    defs_map.insert(
        "common".into(),
        json!({
            "type": "object",
            "required": ["v", "seq", "type", "session_id", "parent_tool_use_id", "line"],
            "properties": {
                "v": {"const": 1},
                "seq": {"type": "integer", "minimum": 0},
                "type": type_schema,
                "session_id": nullable("string"),
                "parent_tool_use_id": nullable("string"),
                "line": {"type": ["integer", "null"], "minimum": 1},
                "uuid": {"type": "string"},
                "ephemeral": {"const": true},
                "timestamp": {"description": "The source line's timestamp (assistant/user lines of CLIs that write one; every line of Gemini CLI, Copilot CLI and OpenCode, whose epoch milliseconds are written as RFC 3339 UTC), on every event of the line."},
                "agent_id": {"description": "The source line's agent_id (a subagent's lines), on every event of the line."},
                "subagent_type": {"description": "The source line's subagent_type, on every event of the line."},
                "is_synthetic": {"description": "The source line's isSynthetic: the CLI wrote this user line (a compaction summary, hook feedback), not a person."},
                "supersedes": {"description": "The source line's supersedes: the uuid of the earlier line this one replaces (e.g. a refusal replaced by an answer)."},
                "violation": {"type": "string", "description": "How the source broke the schema, starting \"the source broke the schema: \". On the first event of a line the CLI wrote without a required member: session_id (system, assistant, user, result and stream_event lines), message or message.content (assistant and user lines; the line's event is then unknown or skipped), e.g. \"the user line has no \\\"session_id\\\"\". tool.call, tool.result, text and user.text also say how their block broke it (a tool_use without id or name, a tool_result without tool_use_id, …), after the line's part and a \"; \"."},
                "extra": {"type": "object", "description": "assistant, user and stream_event lines: the line's members no field maps, on the line's first event only (a stream event's unmapped members under event). system, result and other lines: the event's own unmapped members."},
                "redactions": {
                    "description": "With --redact: what was redacted in the input line named by line (path: JSON Pointer into that line, \"\" for a text line). Never the secret.",
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["path", "kind", "count"],
                        "properties": {
                            "path": {"type": "string"},
                            "kind": {"type": "string"},
                            "count": {"type": "integer", "minimum": 1}
                        }
                    }
                }
            }
        }),
    );
    if let Some(props) = defs_map["common"]["properties"].as_object_mut() {
        for (f, s) in props.iter_mut() {
            if s.get("description").is_none()
                && let Some(d) = crate::envelope::fields::doc("common", f)
            {
                s["description"] = d.into();
            }
        }
    }
    for (name, desc, fields, ephemeral) in &defs {
        let mut props = Map::new();
        let mut required = Vec::new();
        for (f, s) in fields {
            let mut s = s.clone();
            if s.get("description").is_none()
                && let Some(d) = crate::envelope::fields::doc(name, f)
            {
                s["description"] = d.into();
            }
            props.insert((*f).into(), s);
            // Optional members: written only in some situations.
            let optional_raw = *f == "raw" && *name != "unknown";
            let optional_input = *f == "input" && *name == kind::RUN_END;
            if !optional_raw
                && !optional_input
                && !matches!(
                    *f,
                    "synthetic"
                        | "violation"
                        | "block_extra"
                        | "abandoned_blocks"
                        | "error"
                        | "extra"
                        | "source"
                        | "partial_json"
                        | "exit_code"
                        | "signal"
                        | "reason"
                        | "signals_sent"
                        | "descendants_killed"
                        | "background_left"
                        | "elapsed_ms"
                        | "otlp"
                        | "sink"
                        | "stderr_dropped"
                        | "env_removed"
                        | "input_format"
                        | "cost_estimate_usd"
                        | "cost_source"
                        | "prices_date"
                        | "unpriced_models"
                        | "agent"
                )
            {
                required.push(Value::from(*f));
            }
        }
        if *ephemeral {
            required.push("ephemeral".into());
        }
        defs_map.insert(
            (*name).into(),
            json!({"description": desc, "properties": props, "required": required}),
        );
        all_of.push(json!({
            "if": {"properties": {"type": {"const": name}}, "required": ["type"]},
            "then": {"$ref": format!("#/$defs/{name}")}
        }));
    }
    let mut doc = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://boo-normalize.invalid/envelope/v1.json",
        "title": "boo-normalize envelope v1",
        "description": "One JSON object per line. Versioning: additive changes (new event types, new members) keep v = 1; renaming or removing a member or type bumps v. Consumers must ignore members and event types they do not know.",
        "type": "object",
        "allOf": all_of,
        "$defs": defs_map
    });
    if strict {
        doc["unevaluatedProperties"] = json!(false);
    }
    doc
}

#[cfg(test)]
mod tests {
    /// Every named kind is documented in the schema, and every schema type is a named kind or
    /// comes from a table.
    #[test]
    fn every_kind_is_in_the_schema() {
        let documented = super::event_types();
        for k in super::kind::ALL {
            assert!(documented.contains(k), "{k} is not in the schema");
        }
        let tabled: Vec<&str> = crate::normalize::MAPPINGS.iter().map(|m| m.event).collect();
        for t in documented {
            assert!(
                super::kind::ALL.contains(&t) || tabled.contains(&t),
                "schema type {t} is neither a named kind nor in a table"
            );
        }
    }
}
