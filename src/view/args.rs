//! A tool call's input as the envelope carries it (a JSON object), read without building a
//! tree: its members in order, each value still JSON, so a `Write` of megabytes is measured
//! (lines, bytes) without being copied.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

use super::clip::{self, Source};

/// The members of a tool input object, in order.
#[derive(Debug, Default)]
pub struct Args<'a> {
    /// (key, value as JSON) pairs.
    pub members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Args<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Args<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Args<'a>, M::Error> {
                let mut members = Vec::new();
                while let Some(k) = m.next_key::<Cow<'de, str>>()? {
                    let v: &'de RawValue = m.next_value()?;
                    members.push((k, v));
                }
                Ok(Args { members })
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'a> Args<'a> {
    /// The members of `raw` when it is a JSON object (else none).
    pub fn parse(raw: &'a str) -> Args<'a> {
        serde_json::from_str(raw).unwrap_or_default()
    }

    /// The value of `key`, as JSON.
    pub fn raw(&self, key: &str) -> Option<&'a RawValue> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The value of `key` when it is a string.
    pub fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.raw(key).and_then(string)
    }

    /// The value of `key` when it is a number.
    pub fn num(&self, key: &str) -> Option<f64> {
        self.raw(key).and_then(|r| r.get().parse().ok())
    }

    /// The value of `key` when it is `true` or `false`.
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.raw(key).and_then(|r| r.get().parse().ok())
    }

    /// The escaped inside of `key`'s string value, for measuring it without decoding.
    pub fn escaped(&self, key: &str) -> Option<&'a str> {
        self.raw(key).and_then(escaped)
    }

    /// Lines and bytes of `key`'s string value.
    pub fn size(&self, key: &str) -> Option<(u64, u64)> {
        let raw = self.escaped(key)?;
        let c = clip::clip(&[Source::Json(raw)], clip::Limits::lines(0, 0, 0));
        Some((c.lines, c.bytes))
    }
}

/// A JSON value as a string, when it is one.
pub fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    if !raw.get().starts_with('"') {
        return None;
    }
    serde_json::from_str::<Cow<'_, str>>(raw.get()).ok()
}

/// The escaped inside of a JSON string value (between its quotes), when it is one.
pub fn escaped(raw: &RawValue) -> Option<&str> {
    let s = raw.get();
    (s.len() >= 2 && s.starts_with('"')).then(|| &s[1..s.len() - 1])
}

/// A JSON value for one line of text: a string as its text, anything else as compact JSON.
pub fn display(raw: &RawValue) -> Cow<'_, str> {
    string(raw).unwrap_or_else(|| Cow::Borrowed(raw.get()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_in_order_with_their_json() {
        let a = Args::parse(r#"{"b":"x\ny","a":2,"c":true,"d":{"e":[1]}}"#);
        let keys: Vec<_> = a.members.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["b", "a", "c", "d"]);
        assert_eq!(a.str("b").as_deref(), Some("x\ny"));
        assert_eq!(a.num("a"), Some(2.0));
        assert_eq!(a.bool("c"), Some(true));
        assert_eq!(a.str("a"), None);
        assert_eq!(display(a.raw("d").unwrap()), r#"{"e":[1]}"#);
        assert_eq!(a.size("b"), Some((2, 3)));
        assert!(Args::parse("[1]").members.is_empty());
        assert!(Args::parse("null").members.is_empty());
    }
}
