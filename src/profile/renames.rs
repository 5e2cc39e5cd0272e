//! Tool names in a diff: added and removed names, and renames recognised by role and shape
//! (same argument names, same `tool_use_result` shape, both spawning subagents), e.g. the
//! subagent tool `Task` → `Agent`.

use std::collections::{BTreeMap, BTreeSet};

use super::change::{Change, ChangeKind, Severity, TOOLS_AVAILABLE, TOOLS_USED};
use super::{Profile, UsedTool};

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
pub(super) fn tool_renames(
    old: &Profile,
    new: &Profile,
    out: &mut Vec<Change>,
) -> Vec<(String, String)> {
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
    let first = out.len();
    names_diff(
        TOOLS_USED,
        &used(&old.tools.used),
        &used(&new.tools.used),
        &renames,
        "tool_use name",
        out,
    );
    let where_used = |p: &Profile, t: &str| p.tools.used.get(t).and_then(|u| u.first.clone());
    for c in &mut out[first..] {
        let (from, to) = names_of(c);
        let (o, n) = (where_used(old, from), where_used(new, to));
        (c.old_at, c.new_at) = (o, n);
    }
    let first = out.len();
    names_diff(
        TOOLS_AVAILABLE,
        &avail(&old.tools.available),
        &avail(&new.tools.available),
        &renames,
        "tool listed in init",
        out,
    );
    let where_listed = |p: &Profile, t: &str| p.tools.available_first.get(t).cloned();
    for c in &mut out[first..] {
        let (from, to) = names_of(c);
        let (o, n) = (where_listed(old, from), where_listed(new, to));
        (c.old_at, c.new_at) = (o, n);
    }
    renames
}

/// The tool name a change concerns on each side (a rename's old and new names).
fn names_of(c: &Change) -> (&str, &str) {
    let v = c.value.as_deref().unwrap_or("");
    (c.from.as_deref().unwrap_or(v), v)
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
