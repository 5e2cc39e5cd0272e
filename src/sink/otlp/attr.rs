//! OTLP attribute values and ids: small constructors for the spans' `KeyValue`s (scalars, token usage,
//! envelope fields, error statuses), the deterministic trace and span ids derived from the run
//! id, and times in Unix nanoseconds.

use std::borrow::Cow;

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::span::{Key, KeyValue, Status, Value};
use crate::clock::Stamp;
use crate::json::fields::{self, Fields};

/// Longest string attribute value (content, error messages); longer ones are cut at a character
/// boundary and say how much was left out.
pub const MAX_VALUE: usize = 32 * 1024;

/// A string attribute.
pub fn str(key: impl Into<Key>, v: impl Into<Cow<'static, str>>) -> KeyValue {
    kv(key, Value::Str(cap(v.into())))
}

/// An integer attribute.
pub fn int(key: impl Into<Key>, v: i64) -> KeyValue {
    kv(key, Value::Int(v))
}

/// A boolean attribute.
pub fn bool(key: impl Into<Key>, v: bool) -> KeyValue {
    kv(key, Value::Bool(v))
}

/// A floating-point attribute.
pub fn double(key: impl Into<Key>, v: f64) -> KeyValue {
    kv(key, Value::Double(v))
}

/// A string-array attribute.
pub fn strs(key: impl Into<Key>, v: &[String]) -> KeyValue {
    kv(key, Value::Strs(v.to_vec()))
}

fn kv(key: impl Into<Key>, value: Value) -> KeyValue {
    KeyValue {
        key: key.into(),
        value,
    }
}

/// Replace (or add) `kv` in `attrs`, keeping keys unique as OTLP requires.
pub fn set(attrs: &mut Vec<KeyValue>, kv: KeyValue) {
    match attrs.iter_mut().find(|a| a.key == kv.key) {
        Some(a) => *a = kv,
        None => attrs.push(kv),
    }
}

/// Set the string attribute `key` to `v` as [`set`] does, leaving it alone (and allocating
/// nothing) when it already holds `v`: events repeat a message's model.
pub fn set_str(attrs: &mut Vec<KeyValue>, key: &'static str, v: &str) {
    match attrs.iter_mut().find(|a| a.key == key) {
        Some(a) => {
            if !matches!(&a.value, Value::Str(s) if s == v) {
                *a = str(key, v.to_owned());
            }
        }
        None => attrs.push(str(key, v.to_owned())),
    }
}

/// Set the integer attribute `key` to `v` as [`set`] does.
fn set_int(attrs: &mut Vec<KeyValue>, key: &'static str, v: i64) {
    match attrs.iter_mut().find(|a| a.key == key) {
        Some(a) => a.value = Value::Int(v),
        None => attrs.push(int(key, v)),
    }
}

/// `s`, cut to [`MAX_VALUE`] bytes at a character boundary, with a note of what was cut.
pub fn cap(s: Cow<'static, str>) -> Cow<'static, str> {
    if s.len() <= MAX_VALUE {
        return s;
    }
    let mut s = s.into_owned();
    let mut end = MAX_VALUE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let cut = s.len() - end;
    s.truncate(end);
    s.push_str(&format!("…[{cut} more bytes]"));
    Cow::Owned(s)
}

/// A stamp as Unix nanoseconds (instants before 1970 become 0).
pub fn nanos(s: Stamp) -> u64 {
    u64::try_from(s.unix_us).unwrap_or(0).saturating_mul(1000)
}

/// The trace id of the run `run_id`: the first 16 bytes of SHA-256 over a fixed label and the
/// run id, so the same run id always gives the same trace.
pub fn trace_id(run_id: &str) -> [u8; 16] {
    let d = Sha256::new()
        .chain_update(b"boo-normalize otlp trace\0")
        .chain_update(run_id.as_bytes())
        .finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&d[..16]);
    nonzero(&mut id);
    id
}

/// The span id named `key` in run `run_id` (first 8 bytes of SHA-256; never all zero).
pub fn span_id(run_id: &str, key: &str) -> [u8; 8] {
    let d = Sha256::new()
        .chain_update(b"boo-normalize otlp span\0")
        .chain_update(run_id.as_bytes())
        .chain_update([0])
        .chain_update(key.as_bytes())
        .finalize();
    let mut id = [0u8; 8];
    id.copy_from_slice(&d[..8]);
    nonzero(&mut id);
    id
}

/// All-zero ids are invalid in OTLP; a hash practically never gives one, but make sure.
fn nonzero(id: &mut [u8]) {
    if id.iter().all(|b| *b == 0) {
        id[id.len() - 1] = 1;
    }
}

/// The usage attributes of a chat span from an envelope `usage` object (Anthropic's fields, as
/// raw JSON). `gen_ai.usage.input_tokens` includes the cached tokens, as the conventions ask.
pub fn usage(attrs: &mut Vec<KeyValue>, u: &[u8]) {
    // One pass over the object; a repeated member counts with its last value.
    let [mut input, mut read, mut created, mut output] = [None; 4];
    fields::each_member(u, |k, v| {
        let slot = match k {
            b"input_tokens" => &mut input,
            b"cache_read_input_tokens" => &mut read,
            b"cache_creation_input_tokens" => &mut created,
            b"output_tokens" => &mut output,
            _ => return,
        };
        *slot = Some(v);
    });
    let n = |r: Option<&[u8]>| r.and_then(json_i64);
    let (input, read, created, output) = (n(input), n(read), n(created), n(output));
    if input.is_some() || read.is_some() || created.is_some() {
        let total = input.unwrap_or(0) + read.unwrap_or(0) + created.unwrap_or(0);
        set_int(attrs, "gen_ai.usage.input_tokens", total);
    }
    if let Some(o) = output {
        set_int(attrs, "gen_ai.usage.output_tokens", o);
    }
    if let Some(r) = read {
        set_int(attrs, "gen_ai.usage.cache_read.input_tokens", r);
    }
    if let Some(c) = created {
        set_int(attrs, "gen_ai.usage.cache_creation.input_tokens", c);
    }
}

/// The raw JSON number `r` as an `i64`, as serde_json reads it (`None` for a fraction, an
/// exponent, a value out of range, anything else). Plain digits are read at once.
fn json_i64(r: &[u8]) -> Option<i64> {
    if (1..=18).contains(&r.len())
        && r.iter().all(u8::is_ascii_digit)
        && (r[0] != b'0' || r.len() == 1)
    {
        return std::str::from_utf8(r).ok()?.parse().ok();
    }
    serde_json::from_slice::<Json>(r).ok()?.as_i64()
}

/// An error status with `message` (capped).
pub fn error_status(message: String) -> Status {
    Status {
        message: cap(message.into()).into_owned(),
    }
}

/// Where [`fields()`] reads members: a parsed object, or an event's members.
pub trait Members {
    /// Member `key`, parsed.
    fn member(&self, key: &str) -> Option<Json>;
}

impl Members for Json {
    fn member(&self, key: &str) -> Option<Json> {
        self.get(key).cloned()
    }
}

impl Members for Fields<'_> {
    fn member(&self, key: &str) -> Option<Json> {
        self.value(key)
    }
}

/// The scalar members `keys` of `ev` as attributes named `prefix` + key (objects and arrays as
/// JSON text; nulls left out).
pub fn fields(ev: &impl Members, keys: &[&str], prefix: &str) -> Vec<KeyValue> {
    let mut out = Vec::new();
    for k in keys {
        let name = format!("{prefix}{k}");
        match ev.member(k) {
            None | Some(Json::Null) => {}
            Some(Json::String(s)) => out.push(str(name, s)),
            Some(Json::Bool(b)) => out.push(bool(name, b)),
            Some(Json::Number(n)) => out.push(match n.as_i64() {
                Some(i) => int(name, i),
                None => double(name, n.as_f64().unwrap_or(0.0)),
            }),
            Some(v) => out.push(str(name, v.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        assert_eq!(trace_id("r"), trace_id("r"));
        assert_ne!(trace_id("r"), trace_id("s"));
        assert_eq!(span_id("r", "root"), span_id("r", "root"));
        assert_ne!(span_id("r", "root"), span_id("r", "chat"));
        assert_ne!(span_id("r", "root"), span_id("s", "root"));
    }

    #[test]
    fn long_values_are_capped_at_a_char_boundary() {
        let s = "é".repeat(MAX_VALUE);
        let c = cap(s.into());
        assert!(c.len() < MAX_VALUE + 40);
        assert!(c.ends_with("more bytes]"));
        assert_eq!(cap("short".into()), "short");
        assert_eq!(error_status("short".into()).message, "short");
        assert!(
            error_status("é".repeat(MAX_VALUE))
                .message
                .ends_with("more bytes]")
        );
    }
}
