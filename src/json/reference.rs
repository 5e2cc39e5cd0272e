//! The serde_json reference parse: a JSON document with object members in order and duplicate
//! keys kept (serde_json's own `Value` merges them), turned into the same tape the fast path
//! builds, so both engines feed the normalizer identical values.

use simd_json::{Node, StaticNode};

/// A JSON document as serde_json parsed it, keeping object members in order and duplicates
/// (serde_json's own `Value` merges duplicate keys, which would make the engines disagree).
#[derive(Debug)]
pub enum RefValue {
    /// `null`
    Null,
    /// `true`/`false`
    Bool(bool),
    /// A negative or small integer.
    I64(i64),
    /// An integer above `i64::MAX`.
    U64(u64),
    /// Any other number.
    F64(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<RefValue>),
    /// An object, members in input order.
    Obj(Vec<(String, RefValue)>),
}

impl<'de> serde::Deserialize<'de> for RefValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RefValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<RefValue, E> {
                Ok(RefValue::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<RefValue, E> {
                Ok(RefValue::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<RefValue, E> {
                Ok(RefValue::I64(n))
            }
            fn visit_u64<E>(self, n: u64) -> Result<RefValue, E> {
                Ok(match i64::try_from(n) {
                    Ok(i) => RefValue::I64(i),
                    Err(_) => RefValue::U64(n),
                })
            }
            fn visit_f64<E>(self, n: f64) -> Result<RefValue, E> {
                Ok(RefValue::F64(n))
            }
            fn visit_str<E>(self, s: &str) -> Result<RefValue, E> {
                Ok(RefValue::Str(s.to_owned()))
            }
            fn visit_string<E>(self, s: String) -> Result<RefValue, E> {
                Ok(RefValue::Str(s))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<RefValue, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(RefValue::Arr(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<RefValue, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry::<String, RefValue>()? {
                    v.push((k, x));
                }
                Ok(RefValue::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Append the tape nodes of a reference value.
pub fn build_ref_tape<'a>(v: &'a RefValue, out: &mut Vec<Node<'a>>) {
    match v {
        RefValue::Null => out.push(Node::Static(StaticNode::Null)),
        RefValue::Bool(b) => out.push(Node::Static(StaticNode::Bool(*b))),
        RefValue::I64(n) => out.push(Node::Static(StaticNode::I64(*n))),
        RefValue::U64(n) => out.push(Node::Static(StaticNode::U64(*n))),
        RefValue::F64(n) => out.push(Node::Static(StaticNode::F64(*n))),
        RefValue::Str(s) => out.push(Node::String(s.as_str())),
        RefValue::Arr(a) => {
            let at = out.len();
            out.push(Node::Array {
                len: a.len(),
                count: 0,
            });
            for x in a {
                build_ref_tape(x, out);
            }
            let count = out.len() - at - 1;
            out[at] = Node::Array {
                len: a.len(),
                count,
            };
        }
        RefValue::Obj(m) => {
            let at = out.len();
            out.push(Node::Object {
                len: m.len(),
                count: 0,
            });
            for (k, x) in m {
                out.push(Node::String(k.as_str()));
                build_ref_tape(x, out);
            }
            let count = out.len() - at - 1;
            out[at] = Node::Object {
                len: m.len(),
                count,
            };
        }
    }
}
