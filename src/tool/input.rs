//! A tool input as the table reads it: members by key, strings, booleans and array items, over
//! either JSON tree this crate holds (the normalizer's simd-json tape, a `serde_json::Value`), so
//! the answer borrows from the input instead of copying it.

use crate::json::{Val, get, str_of};
use simd_json::prelude::*;

/// A JSON value a tool's meaning is read from; the strings it gives live for `'a`.
pub trait Input<'a>: Copy {
    /// Member `key` of an object (`None` for other values).
    fn member(self, key: &str) -> Option<Self>;
    /// The value when it is a string.
    fn text(self) -> Option<&'a str>;
    /// The value when it is `true` or `false`.
    fn truth(self) -> Option<bool>;
    /// The value when it is an integer.
    fn int(self) -> Option<i64>;
    /// The items of an array (`None` for other values).
    fn items(self) -> Option<Vec<Self>>;
}

impl<'t, 'i> Input<'i> for Val<'t, 'i> {
    fn member(self, key: &str) -> Option<Self> {
        get(self, key)
    }
    fn text(self) -> Option<&'i str> {
        str_of(self)
    }
    fn truth(self) -> Option<bool> {
        self.as_bool()
    }
    fn int(self) -> Option<i64> {
        self.as_i64()
    }
    fn items(self) -> Option<Vec<Self>> {
        self.as_array().map(|a| a.iter().collect())
    }
}

impl<'a> Input<'a> for &'a serde_json::Value {
    fn member(self, key: &str) -> Option<Self> {
        self.as_object()?.get(key)
    }
    fn text(self) -> Option<&'a str> {
        self.as_str()
    }
    fn truth(self) -> Option<bool> {
        self.as_bool()
    }
    fn int(self) -> Option<i64> {
        self.as_i64()
    }
    fn items(self) -> Option<Vec<Self>> {
        self.as_array().map(|a| a.iter().collect())
    }
}
