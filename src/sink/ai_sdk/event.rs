//! Reading an envelope event for the AI SDK translation: the members it uses, from the
//! pipeline's member index, or by serde_json where the index does not read as expected (serde_json
//! then says why). One list of members makes both readers.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::json::fields::{self, Fields, key_tag};

/// In [`Ev::from_fields`]: when `key` is member `$m`, read its value `v` with `$read` into
/// `e.$m` (or refuse the event: see [`once`]) and go on with the next member.
macro_rules! read {
    ($e:ident, $seen:ident, $key:ident, $v:ident, $m:ident, $read:ident) => {
        if $key.is(const { key_tag(stringify!($m)) }, stringify!($m)) {
            $e.$m = once(&mut $seen.$m, $read($v))?;
            continue;
        }
    };
}

/// Declares [`Ev`] and its reader from the members it reads, grouped by how each is read:
/// `text` a string, `flag` a boolean, `number` an unsigned integer, `json` any value kept as
/// its raw JSON. A `null` member reads as absent, as serde_json reads an `Option`.
macro_rules! event_members {
    (
        text: $($text:ident),*;
        flag: $($flag:ident),*;
        number: $($number:ident),*;
        json: $($json:ident),*;
    ) => {
        /// The members of an envelope event this translation reads: raw JSON values as the
        /// bytes the event holds them in.
        #[derive(Deserialize, Default)]
        #[cfg_attr(test, derive(Debug, PartialEq))]
        #[serde(default)]
        pub(super) struct Ev<'a> {
            $(#[serde(borrow)] pub $text: Option<Cow<'a, str>>,)*
            $(pub $flag: Option<bool>,)*
            $(pub $number: Option<u64>,)*
            $(#[serde(borrow, deserialize_with = "raw")] pub $json: Option<&'a [u8]>,)*
        }

        /// Which members [`Ev::from_fields`] has read (a second one is refused, as serde_json
        /// refuses a repeated field).
        #[derive(Default)]
        #[allow(non_snake_case)]
        struct Seen {
            $($text: bool,)* $($flag: bool,)* $($number: bool,)* $($json: bool,)*
        }

        impl<'a> Ev<'a> {
            /// The members from the event's index, read as serde_json reads them into this
            /// struct; `None` where serde_json would fail (a member of the wrong type, a
            /// repeated member, an escaped key), so that the caller gets its error instead.
            pub(super) fn from_fields(f: &Fields<'a>) -> Option<Self> {
                let mut e = Ev::default();
                let mut seen = Seen::default();
                for (key, v) in f.keyed() {
                    $(read!(e, seen, key, v, $text, text);)*
                    $(read!(e, seen, key, v, $flag, flag);)*
                    $(read!(e, seen, key, v, $number, number);)*
                    $(read!(e, seen, key, v, $json, json);)*
                    if memchr::memchr(b'\\', key.written()).is_some() {
                        return None;
                    }
                }
                Some(e)
            }
        }
    };
}

event_members! {
    text: session_id, parent_tool_use_id, message_id, text, thinking, tool_use_id, name,
        partial_json, input_error, outcome, cause;
    flag: redacted, server, is_error, terminal_seen;
    number: index;
    json: input, content, result, errors, model, cost_usd, usage, turns;
}

/// A member's value read the first time (`seen` not set yet), else `None`.
fn once<T>(seen: &mut bool, read: Option<T>) -> Option<T> {
    (!std::mem::replace(seen, true)).then_some(read)?
}

fn text(v: &[u8]) -> Option<Option<Cow<'_, str>>> {
    match v {
        b"null" => Some(None),
        _ => fields::string(v).map(Some),
    }
}

fn flag(v: &[u8]) -> Option<Option<bool>> {
    match v {
        b"null" => Some(None),
        b"true" => Some(Some(true)),
        b"false" => Some(Some(false)),
        _ => None,
    }
}

fn number(v: &[u8]) -> Option<Option<u64>> {
    match v {
        b"null" => Some(None),
        _ if v.iter().all(u8::is_ascii_digit) => {
            std::str::from_utf8(v).ok()?.parse().ok().map(Some)
        }
        _ => None,
    }
}

fn json(v: &[u8]) -> Option<Option<&[u8]>> {
    Some((v != b"null").then_some(v))
}

/// A member kept as its raw JSON (`null` is `None`, as for every optional member).
fn raw<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de [u8]>, D::Error> {
    let r: Option<&'de RawValue> = Deserialize::deserialize(d)?;
    Ok(r.map(|r| r.get().as_bytes()))
}
