//! The tool table on arbitrary inputs: for every row and for names no row has, no panic, every
//! value of a meaning a string taken from a member its row names, and the tape and serde_json
//! readings agree.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{of_tape, plain};
use crate::tool::table::{EditShape, PathSpec, TABLE};
use crate::tool::*;

/// Keys the table reads, so arbitrary inputs hit rows' members often.
const KEYS: &[&str] = &[
    "file_path",
    "path",
    "paths",
    "notebook_path",
    "command",
    "old_string",
    "new_string",
    "content",
    "edits",
    "replace_all",
    "new_source",
    "cell_id",
    "filePath",
    "oldString",
    "newString",
    "replaceAll",
    "changes",
    "directory",
    "old_str",
    "new_str",
    "tool",
    "absolute_path",
    "dir_path",
];

fn arb_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        3 => proptest::sample::select(KEYS).prop_map(str::to_owned),
        1 => "[a-z_]{1,6}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        ".{0,8}".prop_map(Value::String),
        proptest::sample::select(&["view", "spawn_agent", "", "/p"][..]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every (member name, value) pair in `v`, nested ones too.
fn members<'a>(v: &'a Value, out: &mut Vec<(&'a str, &'a Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push((k, x));
                members(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| members(x, out)),
        _ => {}
    }
}

/// The member names a row may take a value from.
fn row_keys(r: &Row) -> BTreeSet<&'static str> {
    let mut k: BTreeSet<&str> = r.command.into_iter().collect();
    for p in r.paths {
        k.insert(match *p {
            PathSpec::Str(s) | PathSpec::Strs(s) | PathSpec::Each(_, s) | PathSpec::Patch(s) => s,
        });
    }
    let by = r
        .edit_by
        .map_or(&[][..], |(_, by)| by)
        .iter()
        .map(|(_, e)| *e);
    for shape in std::iter::once(r.edit).chain(by) {
        match shape {
            EditShape::None => {}
            EditShape::Replace { path, old, new, .. } | EditShape::Multi { path, old, new, .. } => {
                k.extend([path, old, new])
            }
            EditShape::Whole { path, content } => k.extend([path, content]),
            EditShape::Cell { path, source, cell } => k.extend([path, source, cell]),
        }
    }
    k
}

proptest! {
    /// On any input, for every row and names no row has: no panic; every value of the meaning is
    /// a string of the input, taken from a member the row names (nothing invented, nothing
    /// taken from elsewhere); a tool no row knows means `other` and nothing else; the tape and
    /// serde_json readings agree.
    #[test]
    fn nothing_is_invented(input in arb_json(), pick in 0..TABLE.len() + 2, unknown in "[A-Za-z_]{1,12}") {
        let (dialect, name) = match TABLE.get(pick) {
            Some(r) => (r.dialect, r.name),
            None if pick == TABLE.len() => (Dialect::Claude, "mcp__s__t"),
            None => (Dialect::Claude, unknown.as_str()),
        };
        let m = meaning(dialect, Some(name), Some(&input));
        let mut all = Vec::new();
        members(&input, &mut all);
        // A path named inside a patch text is part of that string: its value is the string.
        let mut got: Vec<&Value> = Vec::new();
        for p in &m.paths {
            match *p {
                Path::Value(v) => got.push(v),
                Path::Part(v, a, b) => {
                    let t = v.as_str().expect("a patch is a string");
                    prop_assert!(t.get(a..b).is_some_and(|s| !s.is_empty()));
                    got.push(v);
                }
            }
        }
        got.extend(m.command);
        if let Some(e) = &m.edit {
            got.push(e.path);
            got.extend(e.cell.flatten());
            for c in &e.changes {
                got.extend(c.old);
                got.push(c.new);
            }
            prop_assert!(!e.changes.is_empty());
            prop_assert_eq!(m.kind, Kind::Edit);
        }
        match row(dialect, name) {
            None => prop_assert_eq!(plain(&m), plain(&Meaning::<&Value>::other())),
            Some(r) => {
                let keys = row_keys(r);
                for v in got {
                    prop_assert!(v.is_string());
                    let from = all.iter().find(|(_, x)| std::ptr::eq(*x, v));
                    // Path list items are array elements (not members): their array is a member.
                    let ok = match from {
                        Some((k, _)) => keys.contains(k),
                        None => r.paths.iter().any(|p| matches!(p, PathSpec::Strs(_))),
                    };
                    prop_assert!(ok, "{} took {} from {:?}", name, v, from.map(|f| f.0));
                }
            }
        }
        prop_assert_eq!(plain(&m), of_tape(dialect, name, &input));
    }
}
