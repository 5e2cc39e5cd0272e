//! Comparing two profiles: an ordered list of [`Change`]s, each with a [`Severity`].
//!
//! Policy (what a consumer of the old format would notice):
//! * breaking: a kind disappears; a field that was in every parent object disappears; a field
//!   takes a JSON type it never had (unless it was always `null`); a required field becomes optional; an enum value is no
//!   longer produced; a tool name disappears or is renamed.
//! * additive: a new kind, field, enum value or tool name.
//! * info: an optional field no longer seen, a type no longer seen, optional → required, an
//!   enum value set that became open, MCP tool names (they depend on configuration).
//!
//! Counts, numbers, ids and free text are not in profiles as values, so they never show up here.

use std::collections::{BTreeMap, BTreeSet};

pub use super::change::{Change, ChangeKind, Severity, TOOLS_AVAILABLE, TOOLS_USED};
use super::{Field, JType, Kind, Presence, Profile, parent_path};

/// All changes from `old` to `new`, most severe first, then by kind, path, change and value.
pub fn diff(old: &Profile, new: &Profile) -> Vec<Change> {
    let mut out = Vec::new();
    let renames = super::renames::tool_renames(old, new, &mut out);
    // tool_use_result kinds of renamed tools are compared with each other.
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (from, to) in &renames {
        let (ko, kn) = (
            format!("tool_use_result/{from}"),
            format!("tool_use_result/{to}"),
        );
        if old.kinds.contains_key(&ko)
            && new.kinds.contains_key(&kn)
            && !new.kinds.contains_key(&ko)
            && !old.kinds.contains_key(&kn)
        {
            pairs.push((ko, kn));
        }
    }
    let names: BTreeSet<&String> = old.kinds.keys().chain(new.kinds.keys()).collect();
    for name in names {
        if pairs.iter().any(|(o, n)| o == name || n == name) {
            continue;
        }
        match (old.kinds.get(name), new.kinds.get(name)) {
            (Some(o), Some(n)) => kind_diff(name, o, n, &mut out),
            (Some(o), None) => out.push(
                Change::new(
                    Severity::Breaking,
                    ChangeKind::KindRemoved,
                    name,
                    format!("kind no longer produced (was seen {}×)", o.count),
                )
                .at(o.first.as_ref(), None),
            ),
            (None, Some(n)) => out.push(
                Change::new(
                    Severity::Additive,
                    ChangeKind::KindAdded,
                    name,
                    format!(
                        "new kind ({}, seen {}×)",
                        crate::error::counted(n.fields.len() as u64, "path"),
                        n.count
                    ),
                )
                .at(None, n.first.as_ref()),
            ),
            (None, None) => {}
        }
    }
    for (ko, kn) in &pairs {
        let mut sub = Vec::new();
        kind_diff(kn, &old.kinds[ko], &new.kinds[kn], &mut sub);
        for mut c in sub {
            c.detail = format!("{} (compared with {ko})", c.detail);
            out.push(c);
        }
    }
    sort(&mut out);
    out
}

/// Sort changes: severity, kind, path, change, value.
pub fn sort(changes: &mut [Change]) {
    changes.sort_by(|a, b| {
        (a.severity, &a.kind, &a.path, a.change, &a.value, &a.from)
            .cmp(&(b.severity, &b.kind, &b.path, b.change, &b.value, &b.from))
    });
}

fn types_text(f: &Field) -> String {
    f.types
        .keys()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join("|")
}

fn presence_text(p: Presence) -> &'static str {
    match p {
        Presence::Required => "required",
        Presence::Optional => "optional",
        Presence::Map => "map entry",
    }
}

/// True if `p` is strictly below `ancestor`.
fn is_below(p: &str, ancestor: &str) -> bool {
    p.len() > ancestor.len()
        && p.starts_with(ancestor)
        && matches!(p.as_bytes()[ancestor.len()], b'.' | b'[')
}

fn kind_diff(name: &str, o: &Kind, n: &Kind, out: &mut Vec<Change>) {
    let added: Vec<&String> = n
        .fields
        .keys()
        .filter(|p| !o.fields.contains_key(*p))
        .collect();
    let removed: Vec<&String> = o
        .fields
        .keys()
        .filter(|p| !n.fields.contains_key(*p))
        .collect();
    let top = |set: &[&String], p: &str| !set.iter().any(|a| is_below(p, a));
    for p in &added {
        if !top(&added, p) {
            continue;
        }
        let f = &n.fields[*p];
        let detail = if p.ends_with("[]") {
            format!("array elements now seen: {}", types_text(f))
        } else {
            format!(
                "new field: {}, {}",
                types_text(f),
                presence_text(f.presence)
            )
        };
        let mut c = Change::new(Severity::Additive, ChangeKind::PathAdded, name, detail)
            .path(p)
            .at(o.parent_first(p), f.first.as_ref());
        c.nested = added.iter().filter(|a| is_below(a, p)).count() as u64;
        out.push(c);
    }
    for p in &removed {
        if !top(&removed, p) {
            continue;
        }
        let f = &o.fields[*p];
        let parent_seen = n.parent_objects(p) > 0;
        let sev = if f.presence == Presence::Required && parent_seen {
            Severity::Breaking
        } else {
            Severity::Info
        };
        let why = if sev == Severity::Breaking {
            "was in every parent object"
        } else if p.ends_with("[]") {
            "the array is always empty now"
        } else if !parent_seen {
            "its parent object is not seen any more"
        } else {
            "was optional"
        };
        let mut c = Change::new(
            sev,
            ChangeKind::PathRemoved,
            name,
            format!("field no longer seen ({}; {why})", types_text(f)),
        )
        .path(p)
        .at(f.first.as_ref(), n.parent_first(p));
        c.nested = removed.iter().filter(|a| is_below(a, p)).count() as u64;
        out.push(c);
    }
    for (p, fo) in &o.fields {
        if let Some(fnew) = n.fields.get(p) {
            field_diff(name, p, fo, fnew, o, n, out);
        }
    }
}

fn field_diff(
    name: &str,
    p: &str,
    fo: &Field,
    fnew: &Field,
    o: &Kind,
    n: &Kind,
    out: &mut Vec<Change>,
) {
    // A field that was always null carried nothing a consumer could depend on: a real type
    // there is additive. Any other new type (null included) can break a consumer.
    let was_null = fo.types.keys().all(|t| *t == JType::Null);
    for t in fnew.types.keys().filter(|t| !fo.types.contains_key(t)) {
        out.push(
            Change::new(
                if was_null {
                    Severity::Additive
                } else {
                    Severity::Breaking
                },
                ChangeKind::TypeAdded,
                name,
                format!("can now be {} (was {})", t.name(), types_text(fo)),
            )
            .path(p)
            .value(t.name())
            .at(
                fo.first.as_ref(),
                fnew.type_first.get(t).or(fnew.first.as_ref()),
            ),
        );
    }
    for t in fo.types.keys().filter(|t| !fnew.types.contains_key(t)) {
        out.push(
            Change::new(
                Severity::Info,
                ChangeKind::TypeRemoved,
                name,
                format!("no longer seen as {} (now {})", t.name(), types_text(fnew)),
            )
            .path(p)
            .value(t.name())
            .at(
                fo.type_first.get(t).or(fo.first.as_ref()),
                fnew.first.as_ref(),
            ),
        );
    }
    let judged = parent_path(p).is_none_or(|_| o.parent_objects(p) > 0 && n.parent_objects(p) > 0);
    match (fo.presence, fnew.presence) {
        (Presence::Required, Presence::Optional) if judged => out.push(
            Change::new(
                Severity::Breaking,
                ChangeKind::BecameOptional,
                name,
                format!(
                    "was in every parent object, now missing from {} of {}",
                    n.parent_objects(p).saturating_sub(fnew.present),
                    n.parent_objects(p)
                ),
            )
            .path(p)
            .at(fo.first.as_ref(), fnew.first.as_ref()),
        ),
        (Presence::Optional, Presence::Required) if judged => out.push(
            Change::new(
                Severity::Info,
                ChangeKind::BecameRequired,
                name,
                "was optional, now in every parent object".to_owned(),
            )
            .path(p)
            .at(fo.first.as_ref(), fnew.first.as_ref()),
        ),
        _ => {}
    }
    match (
        &fo.values,
        &fnew.values,
        fo.values_overflow,
        fnew.values_overflow,
    ) {
        (Some(vo), Some(vn), false, false) => {
            // A documented value seen (or not seen) this time is what the sampled runs did, not
            // drift (see `rules::DOCUMENTED`).
            let key = p.rsplit(['.', '[']).next().unwrap_or(p);
            let documented = |v: &&String| super::rules::documented(key, v);
            for v in vn
                .keys()
                .filter(|v| !vo.contains_key(*v))
                .filter(|v| !documented(v))
            {
                out.push(
                    Change::new(
                        Severity::Additive,
                        ChangeKind::ValueAdded,
                        name,
                        format!("new value {v:?} (known: {})", keys_text(vo)),
                    )
                    .path(p)
                    .value(v)
                    .at(
                        fo.first.as_ref(),
                        fnew.value_first.get(v.as_str()).or(fnew.first.as_ref()),
                    ),
                );
            }
            for v in vo
                .keys()
                .filter(|v| !vn.contains_key(*v))
                .filter(|v| !documented(v))
            {
                out.push(
                    Change::new(
                        Severity::Breaking,
                        ChangeKind::ValueRemoved,
                        name,
                        format!("value {v:?} no longer produced (now: {})", keys_text(vn)),
                    )
                    .path(p)
                    .value(v)
                    .at(
                        fo.value_first.get(v.as_str()).or(fo.first.as_ref()),
                        fnew.first.as_ref(),
                    ),
                );
            }
        }
        (Some(vo), None, false, true) => out.push(
            Change::new(
                Severity::Info,
                ChangeKind::ValuesOpened,
                name,
                format!(
                    "more than {} distinct values now (was: {})",
                    super::rules::MAX_VALUES,
                    keys_text(vo)
                ),
            )
            .path(p)
            .at(fo.first.as_ref(), fnew.first.as_ref()),
        ),
        _ => {}
    }
    items_diff(name, p, fo, fnew, out);
}

/// Names added to or removed from an open list: `info` (the CLI grows these lists every release).
fn items_diff(name: &str, p: &str, fo: &Field, fnew: &Field, out: &mut Vec<Change>) {
    let (Some(io), Some(inew)) = (&fo.items, &fnew.items) else {
        return;
    };
    for v in inew.keys().filter(|v| !io.contains_key(*v)) {
        out.push(
            Change::new(
                Severity::Info,
                ChangeKind::ItemAdded,
                name,
                format!("the list now holds {v:?}"),
            )
            .path(p)
            .value(v)
            .at(fo.first.as_ref(), fnew.first.as_ref()),
        );
    }
    for v in io.keys().filter(|v| !inew.contains_key(*v)) {
        out.push(
            Change::new(
                Severity::Info,
                ChangeKind::ItemRemoved,
                name,
                format!("the list no longer holds {v:?}"),
            )
            .path(p)
            .value(v)
            .at(fo.first.as_ref(), fnew.first.as_ref()),
        );
    }
}

fn keys_text(m: &BTreeMap<String, u64>) -> String {
    m.keys()
        .map(|k| format!("{k:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profiler;

    fn profile(lines: &[&str]) -> Profile {
        let mut p = Profiler::new();
        p.add_bytes(lines.join("\n").as_bytes(), None);
        p.finish()
    }

    fn init(tools: &str) -> String {
        format!(r#"{{"type":"system","subtype":"init","session_id":"s","tools":[{tools}]}}"#)
    }

    fn call(id: &str, name: &str, input: &str) -> String {
        format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}]}}}}"#
        )
    }

    #[test]
    fn renames_need_a_new_name_and_a_matching_shape() {
        let old = profile(&[
            &init(r#""KillBash","Grep","Glob""#),
            &call("a", "KillBash", r#"{"shell_id":"x"}"#),
            &call("b", "Grep", r#"{"pattern":"p","path":"."}"#),
        ]);
        let new = profile(&[
            &init(r#""KillShell","Grep","Glob""#),
            &call("a", "KillShell", r#"{"shell_id":"x"}"#),
            &call("b", "Glob", r#"{"pattern":"p","path":"."}"#),
        ]);
        let d = diff(&old, &new);
        let renames: Vec<(&str, &str, &str)> = d
            .iter()
            .filter(|c| c.change == ChangeKind::ToolRenamed)
            .map(|c| {
                (
                    c.kind.as_str(),
                    c.from.as_deref().unwrap(),
                    c.value.as_deref().unwrap(),
                )
            })
            .collect();
        // Glob was already listed by the old CLI: Grep → Glob is not a rename.
        assert_eq!(
            renames,
            vec![
                ("assistant.content/tool_use", "KillBash", "KillShell"),
                ("system/init", "KillBash", "KillShell")
            ]
        );
        assert!(d.iter().any(|c| c.change == ChangeKind::ToolRemoved
            && c.value.as_deref() == Some("Grep")
            && c.severity == Severity::Breaking));
    }

    #[test]
    fn severities_of_field_changes() {
        let old = profile(&[
            r#"{"type":"result","subtype":"success","a":null,"b":1,"c":"x","gone":1,"opt":1,"stop_reason":"end_turn","kind":"alpha"}"#,
            r#"{"type":"result","subtype":"success","a":null,"b":2,"c":"x","gone":2,"stop_reason":"end_turn","kind":"alpha"}"#,
        ]);
        let new = profile(&[
            r#"{"type":"result","subtype":"success","a":"now","b":null,"new":{"x":1},"stop_reason":"max_tokens","kind":"alpha"}"#,
            r#"{"type":"result","subtype":"success","a":null,"b":3,"c":"x","new":{"x":2},"stop_reason":"tool_use","kind":"zeta"}"#,
        ]);
        let d = diff(&old, &new);
        let find = |ch: ChangeKind, p: &str| {
            d.iter()
                .find(|c| c.change == ch && c.path.as_deref() == Some(p))
                .map(|c| c.severity)
        };
        assert_eq!(find(ChangeKind::TypeAdded, "a"), Some(Severity::Additive));
        assert_eq!(find(ChangeKind::TypeAdded, "b"), Some(Severity::Breaking));
        assert_eq!(
            find(ChangeKind::BecameOptional, "c"),
            Some(Severity::Breaking)
        );
        assert_eq!(
            find(ChangeKind::PathRemoved, "gone"),
            Some(Severity::Breaking)
        );
        assert_eq!(find(ChangeKind::PathRemoved, "opt"), Some(Severity::Info));
        assert_eq!(find(ChangeKind::PathAdded, "new"), Some(Severity::Additive));
        assert_eq!(
            find(ChangeKind::PathAdded, "new.x"),
            None,
            "nested under new"
        );
        assert_eq!(
            find(ChangeKind::ValueAdded, "kind"),
            Some(Severity::Additive)
        );
        // Documented stop reasons seen first (max_tokens, tool_use) or no longer seen (end_turn) are what
        // the sampled runs did, not drift.
        assert_eq!(find(ChangeKind::ValueAdded, "stop_reason"), None);
        assert_eq!(find(ChangeKind::ValueRemoved, "stop_reason"), None);
        assert_eq!(d.len(), 7, "{d:#?}");
    }

    #[test]
    fn open_lists_report_names_at_info() {
        let old = profile(&[
            r#"{"type":"system","subtype":"init","session_id":"s","capabilities":["a","b"],"slash_commands":["x"]}"#,
        ]);
        let new = profile(&[
            r#"{"type":"system","subtype":"init","session_id":"s","capabilities":["a","b","c"],"slash_commands":[]}"#,
        ]);
        let d = diff(&old, &new);
        let items: Vec<(ChangeKind, Severity, Option<&str>)> = d
            .iter()
            .filter(|c| matches!(c.change, ChangeKind::ItemAdded | ChangeKind::ItemRemoved))
            .map(|c| (c.change, c.severity, c.value.as_deref()))
            .collect();
        assert_eq!(
            items,
            [
                (ChangeKind::ItemAdded, Severity::Info, Some("c")),
                (ChangeKind::ItemRemoved, Severity::Info, Some("x")),
            ],
            "{d:#?}"
        );
        assert!(diff(&new, &new).is_empty());
    }
}
