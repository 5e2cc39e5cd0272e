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

use serde::{Deserialize, Serialize};

use super::{Field, JType, Kind, Presence, Profile, UsedTool, parent_path};

/// How much a change matters to a consumer of the old format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Existing consumers can break.
    Breaking,
    /// Something new; existing consumers keep working.
    Additive,
    /// Worth knowing, not a format change a consumer can trip on.
    Info,
}

impl Severity {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Breaking => "breaking",
            Severity::Additive => "additive",
            Severity::Info => "info",
        }
    }
}

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A kind only in NEW.
    KindAdded,
    /// A kind only in OLD.
    KindRemoved,
    /// A field path only in NEW.
    PathAdded,
    /// A field path only in OLD.
    PathRemoved,
    /// A JSON type only NEW has at a path.
    TypeAdded,
    /// A JSON type only OLD had at a path.
    TypeRemoved,
    /// Required in OLD, optional in NEW.
    BecameOptional,
    /// Optional in OLD, required in NEW.
    BecameRequired,
    /// An enum value only in NEW.
    ValueAdded,
    /// An enum value only in OLD.
    ValueRemoved,
    /// NEW has too many distinct values to treat the field as an enum.
    ValuesOpened,
    /// A tool name only in NEW.
    ToolAdded,
    /// A tool name only in OLD.
    ToolRemoved,
    /// A tool name in OLD replaced by one in NEW with the same role/shape.
    ToolRenamed,
}

impl ChangeKind {
    /// snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::KindAdded => "kind_added",
            ChangeKind::KindRemoved => "kind_removed",
            ChangeKind::PathAdded => "path_added",
            ChangeKind::PathRemoved => "path_removed",
            ChangeKind::TypeAdded => "type_added",
            ChangeKind::TypeRemoved => "type_removed",
            ChangeKind::BecameOptional => "became_optional",
            ChangeKind::BecameRequired => "became_required",
            ChangeKind::ValueAdded => "value_added",
            ChangeKind::ValueRemoved => "value_removed",
            ChangeKind::ValuesOpened => "values_opened",
            ChangeKind::ToolAdded => "tool_added",
            ChangeKind::ToolRemoved => "tool_removed",
            ChangeKind::ToolRenamed => "tool_renamed",
        }
    }
}

/// One difference between two profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Severity.
    pub severity: Severity,
    /// What changed.
    pub change: ChangeKind,
    /// The kind (for tool names: `system/init` for `tools`, `assistant.content/tool_use`).
    pub kind: String,
    /// Field path within the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The JSON type, enum value or tool name concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// For renames: the old name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Number of paths below `path` added or removed with it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nested: u64,
    /// Human explanation.
    pub detail: String,
    /// Accepted by an `--allow` list.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allowed: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
fn is_false(b: &bool) -> bool {
    !*b
}

impl Change {
    fn new(severity: Severity, change: ChangeKind, kind: &str, detail: String) -> Self {
        Change {
            severity,
            change,
            kind: kind.to_owned(),
            path: None,
            value: None,
            from: None,
            nested: 0,
            detail,
            allowed: false,
        }
    }
    fn path(mut self, p: &str) -> Self {
        self.path = Some(p.to_owned());
        self
    }
    fn value(mut self, v: &str) -> Self {
        self.value = Some(v.to_owned());
        self
    }
}

/// Kind and path under which tool names are reported.
pub const TOOLS_AVAILABLE: (&str, &str) = ("system/init", "tools[]");
/// Kind and path under which `tool_use` names are reported.
pub const TOOLS_USED: (&str, &str) = ("assistant.content/tool_use", "name");

/// All changes from `old` to `new`, most severe first, then by kind, path, change and value.
pub fn diff(old: &Profile, new: &Profile) -> Vec<Change> {
    let mut out = Vec::new();
    let renames = tool_renames(old, new, &mut out);
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
            (Some(o), None) => out.push(Change::new(
                Severity::Breaking,
                ChangeKind::KindRemoved,
                name,
                format!("kind no longer produced (was seen {}×)", o.count),
            )),
            (None, Some(n)) => out.push(Change::new(
                Severity::Additive,
                ChangeKind::KindAdded,
                name,
                format!("new kind ({} paths, seen {}×)", n.fields.len(), n.count),
            )),
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
        let mut c = Change::new(Severity::Additive, ChangeKind::PathAdded, name, detail).path(p);
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
        .path(p);
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
            .value(t.name()),
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
            .value(t.name()),
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
            .path(p),
        ),
        (Presence::Optional, Presence::Required) if judged => out.push(
            Change::new(
                Severity::Info,
                ChangeKind::BecameRequired,
                name,
                "was optional, now in every parent object".to_owned(),
            )
            .path(p),
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
            for v in vn.keys().filter(|v| !vo.contains_key(*v)) {
                out.push(
                    Change::new(
                        Severity::Additive,
                        ChangeKind::ValueAdded,
                        name,
                        format!("new value {v:?} (known: {})", keys_text(vo)),
                    )
                    .path(p)
                    .value(v),
                );
            }
            for v in vo.keys().filter(|v| !vn.contains_key(*v)) {
                out.push(
                    Change::new(
                        Severity::Breaking,
                        ChangeKind::ValueRemoved,
                        name,
                        format!("value {v:?} no longer produced (now: {})", keys_text(vn)),
                    )
                    .path(p)
                    .value(v),
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
            .path(p),
        ),
        _ => {}
    }
}

fn keys_text(m: &BTreeMap<String, u64>) -> String {
    m.keys()
        .map(|k| format!("{k:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn jaccard<'a>(
    a: impl IntoIterator<Item = &'a String>,
    b: impl IntoIterator<Item = &'a String>,
) -> f64 {
    let a: BTreeSet<&String> = a.into_iter().collect();
    let b: BTreeSet<&String> = b.into_iter().collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// How alike tool `from` in OLD and tool `to` in NEW are (0 = no evidence).
fn rename_score(old: &Profile, new: &Profile, from: &str, to: &str) -> f64 {
    let (uo, un) = (old.tools.used.get(from), new.tools.used.get(to));
    let inputs = match (uo, un) {
        (Some(a), Some(b)) => jaccard(a.input_keys.keys(), b.input_keys.keys()),
        _ => 0.0,
    };
    let both_subagent = matches!((uo, un), (Some(a), Some(b)) if a.subagent > 0 && b.subagent > 0);
    let results = match (
        old.kinds.get(&format!("tool_use_result/{from}")),
        new.kinds.get(&format!("tool_use_result/{to}")),
    ) {
        (Some(a), Some(b)) => jaccard(a.fields.keys(), b.fields.keys()),
        _ => 0.0,
    };
    let mut score = 0.0;
    if inputs >= 0.5 {
        score += inputs;
    }
    if results >= 0.6 {
        score += results;
    }
    if both_subagent && (inputs >= 0.25 || results >= 0.3) {
        score += 1.0;
    }
    score
}

/// Tool name changes (added/removed/renamed) into `out`; returns the renames (old, new).
fn tool_renames(old: &Profile, new: &Profile, out: &mut Vec<Change>) -> Vec<(String, String)> {
    let gone: Vec<&String> = old
        .tools
        .used
        .keys()
        .filter(|t| !new.tools.used.contains_key(*t))
        .collect();
    let came: Vec<&String> = new
        .tools
        .used
        .keys()
        .filter(|t| !old.tools.used.contains_key(*t))
        .collect();
    let mut cands: Vec<(f64, &String, &String)> = Vec::new();
    // A new name the old CLI already listed in init `tools` is another tool, not a rename.
    // (The old name may still be listed by the new CLI: 2.1.7x lists `Task` but calls `Agent`.)
    for r in gone.iter().filter(|t| !t.starts_with("mcp__")) {
        for a in came
            .iter()
            .filter(|t| !t.starts_with("mcp__") && !old.tools.available.contains_key(**t))
        {
            let s = rename_score(old, new, r, a);
            if s > 0.0 {
                cands.push((s, r, a));
            }
        }
    }
    cands.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(y.1)).then(x.2.cmp(y.2)));
    let mut renames: Vec<(String, String)> = Vec::new();
    for (_, r, a) in cands {
        if !renames.iter().any(|(x, y)| x == r || y == a) {
            renames.push((r.clone(), a.clone()));
        }
    }
    let used = |m: &BTreeMap<String, UsedTool>| m.keys().cloned().collect::<BTreeSet<String>>();
    let avail = |m: &BTreeMap<String, u64>| m.keys().cloned().collect::<BTreeSet<String>>();
    names_diff(
        TOOLS_USED,
        &used(&old.tools.used),
        &used(&new.tools.used),
        &renames,
        "tool_use name",
        out,
    );
    names_diff(
        TOOLS_AVAILABLE,
        &avail(&old.tools.available),
        &avail(&new.tools.available),
        &renames,
        "tool listed in init",
        out,
    );
    renames
}

fn names_diff(
    (kind, path): (&str, &str),
    old: &BTreeSet<String>,
    new: &BTreeSet<String>,
    renames: &[(String, String)],
    what: &str,
    out: &mut Vec<Change>,
) {
    let mut renamed: Vec<&(String, String)> = Vec::new();
    for rn in renames {
        if old.contains(&rn.0)
            && !new.contains(&rn.0)
            && new.contains(&rn.1)
            && !old.contains(&rn.1)
        {
            renamed.push(rn);
            let mut c = Change::new(
                Severity::Breaking,
                ChangeKind::ToolRenamed,
                kind,
                format!("{what} {:?} is now {:?} (same role/shape)", rn.0, rn.1),
            )
            .path(path)
            .value(&rn.1);
            c.from = Some(rn.0.clone());
            out.push(c);
        }
    }
    let sev = |t: &str, s: Severity| {
        if t.starts_with("mcp__") {
            Severity::Info
        } else {
            s
        }
    };
    for t in old.difference(new) {
        if !renamed.iter().any(|r| &r.0 == t) {
            out.push(
                Change::new(
                    sev(t, Severity::Breaking),
                    ChangeKind::ToolRemoved,
                    kind,
                    format!("{what} {t:?} no longer seen"),
                )
                .path(path)
                .value(t),
            );
        }
    }
    for t in new.difference(old) {
        if !renamed.iter().any(|r| &r.1 == t) {
            out.push(
                Change::new(
                    sev(t, Severity::Additive),
                    ChangeKind::ToolAdded,
                    kind,
                    format!("new {what} {t:?}"),
                )
                .path(path)
                .value(t),
            );
        }
    }
}
