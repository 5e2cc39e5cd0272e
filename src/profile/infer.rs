//! Building a [`Profile`] from raw stream-json lines.
//!
//! Each input is one stream with its own cross-line state (tool names by `tool_use` id, the CLI
//! version of the latest `init`). Objects are classified into kinds and walked under the rules
//! of [`super::rules`]. Lines that are not JSON objects of a known shape are counted, never fatal.
//! Objects are grouped by CLI version internally; the overall profile is the merge of the groups.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{self, Read};
use std::path::Path;

use simd_json::prelude::*;

use super::rules::{self, Rule};
use super::{Field, JType, Kind, Origin, Profile};
use crate::json::repair::{self, Refused};
use crate::json::{Parser, Val, get, get_str, str_of};
use crate::read::LineReader;

/// Nesting below this depth (per kind) is not profiled: stream-json is shallow, and recursion
/// must stay bounded on hostile input.
pub const MAX_DEPTH: usize = 48;

/// Version label for objects whose CLI version is not known.
pub const UNKNOWN_VERSION: &str = "unknown";

/// Accumulates inputs into a profile.
#[derive(Default)]
pub struct Profiler {
    parser: Parser,
    groups: BTreeMap<String, Profile>,
    by_version: bool,
    /// The read buffer, kept from one stream to the next.
    buf: Vec<u8>,
    /// A repaired copy of the current line (see [`repair::refused`]).
    repaired: Vec<u8>,
}

/// Per-stream state.
#[derive(Default)]
struct Stream {
    /// Version of the latest `init` (or of the path), once an `init` has been seen.
    version: Option<String>,
    /// Version from a version-named directory of the input path.
    path_version: Option<String>,
    /// Objects read before the first `init`, waiting for its version.
    pending: Profile,
    pending_objects: u64,
    /// tool_use id → tool name.
    tools_by_id: HashMap<String, String>,
    /// tool_use ids already counted as having run a subagent.
    subagent_ids: HashSet<String>,
}

/// The profile that counts the stream's current line: its version's group, or the objects
/// read before the stream's first `init`.
fn target_of<'g>(groups: &'g mut BTreeMap<String, Profile>, st: &'g mut Stream) -> &'g mut Profile {
    match &st.version {
        Some(v) => groups.entry(v.clone()).or_default(),
        None => &mut st.pending,
    }
}

/// Profile one parsed line; its tape's allocation, for the parser.
fn take_value(
    parsed: crate::json::Parsed<'_>,
    groups: &mut BTreeMap<String, Profile>,
    st: &mut Stream,
    at: Option<(&str, u64)>,
) -> crate::json::Spare {
    let v = parsed.tape.as_value();
    if v.as_object().is_none() {
        target_of(groups, st).input.non_object += 1;
    } else if let Some(kind) = kind_of(v) {
        object(groups, st, &kind, v, at);
    } else {
        target_of(groups, st).input.foreign += 1;
    }
    parsed.into_spare()
}

impl Profiler {
    /// An empty profiler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also keep one profile per CLI version in [`Profile::by_version`].
    pub fn by_version(mut self, yes: bool) -> Self {
        self.by_version = yes;
        self
    }

    /// Profile one stream. `path_version` is the version to assume when no `init` names one
    /// (see [`version_from_path`]).
    pub fn add_stream<R: Read>(&mut self, src: R, path_version: Option<String>) -> io::Result<()> {
        self.add_sized_stream(src, None, path_version)
    }

    /// [`Profiler::add_stream`] for a stream of `size` bytes when known (a regular file: the
    /// read buffer is sized to it).
    pub fn add_sized_stream<R: Read>(
        &mut self,
        src: R,
        size: Option<u64>,
        path_version: Option<String>,
    ) -> io::Result<()> {
        self.add_source(src, size, path_version, None)
    }

    /// [`Profiler::add_sized_stream`] for a stream called `name` (a file as the user named it):
    /// kinds, fields, types, enum values and tools remember the file and line where they were
    /// first seen ([`super::Origin`]), for `diff` to point at.
    pub fn add_source<R: Read>(
        &mut self,
        src: R,
        size: Option<u64>,
        path_version: Option<String>,
        name: Option<&str>,
    ) -> io::Result<()> {
        let mut st = Stream {
            path_version,
            ..Stream::default()
        };
        st.pending.input.streams = 1;
        let mut reader = LineReader::reusing(src, std::mem::take(&mut self.buf), size);
        while let Some(line) = reader.next_line()? {
            let Profiler {
                parser,
                groups,
                repaired,
                ..
            } = self;
            let target = target_of(groups, &mut st);
            target.input.lines += 1;
            if !line.terminated {
                target.input.unterminated += 1;
            }
            if line.bytes.iter().all(u8::is_ascii_whitespace) {
                target.input.blank += 1;
                continue;
            }
            // Read as normalize reads it (`json::repair::refused`): a line it repairs is
            // profiled repaired, and counted.
            let e = match parser.parse(line.bytes) {
                Ok(parsed) => {
                    let spare = take_value(parsed, groups, &mut st, name.map(|n| (n, line.number)));
                    parser.recycle(spare);
                    continue;
                }
                Err(e) => e,
            };
            if let Refused::Repaired(_) = repair::refused(line.bytes, &e, repaired)
                && let Ok(parsed) = parser.parse(repaired)
            {
                target_of(groups, &mut st).input.repaired += 1;
                let spare = take_value(parsed, groups, &mut st, name.map(|n| (n, line.number)));
                parser.recycle(spare);
            } else {
                target_of(groups, &mut st).input.non_json += 1;
            }
        }
        self.buf = reader.into_buffer();
        // A stream without an init (or with nothing but pre-init lines).
        let v = st
            .path_version
            .clone()
            .unwrap_or_else(|| UNKNOWN_VERSION.to_owned());
        flush_pending(&mut self.groups, &mut st, &v);
        Ok(())
    }

    /// Profile one in-memory stream.
    pub fn add_bytes(&mut self, bytes: &[u8], path_version: Option<String>) {
        self.add_stream(bytes, path_version)
            .expect("reading from memory cannot fail");
    }

    /// The finished profile.
    pub fn finish(mut self) -> Profile {
        self.take()
    }

    /// The profile of what was added so far; the profiler starts again empty, keeping its parser
    /// and read buffer (memory already touched) for the next streams.
    pub fn take(&mut self) -> Profile {
        let groups = std::mem::take(&mut self.groups);
        let mut total = Profile::default();
        for g in groups.values() {
            total.add(g);
        }
        if self.by_version {
            total.by_version = groups;
        }
        total.finalize();
        total
    }
}

/// The kind of a top-level object, or `None` for foreign objects.
pub fn kind_of(v: Val<'_, '_>) -> Option<String> {
    let ty = get_str(v, "type").filter(|t| rules::token(t))?;
    if ty == "stream_event" {
        let et = get(v, "event")
            .and_then(|e| get_str(e, "type"))
            .filter(|t| rules::token(t));
        return Some(match et {
            Some(et) => format!("stream_event/{et}"),
            None => "stream_event".to_owned(),
        });
    }
    match get_str(v, "subtype").filter(|s| rules::token(s)) {
        Some(st) => Some(format!("{ty}/{st}")),
        None => Some(ty.to_owned()),
    }
}

/// The CLI version named by a path component like `fixtures/captured/2.1.45/tools.ndjson`.
pub fn version_from_path(path: &Path) -> Option<String> {
    path.components().rev().skip(1).find_map(|c| {
        let s = c.as_os_str().to_str()?;
        version_like(s).then(|| s.to_owned())
    })
}

/// `MAJOR.MINOR.PATCH` with an optional `-suffix`.
pub(crate) fn version_like(s: &str) -> bool {
    let core = s.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 6 && p.bytes().all(|b| b.is_ascii_digit()))
        && s.len() <= 32
        && rules::token(s)
}

fn flush_pending(groups: &mut BTreeMap<String, Profile>, st: &mut Stream, version: &str) {
    let mut pending = std::mem::take(&mut st.pending);
    if pending.input != Default::default() || !pending.kinds.is_empty() {
        if st.pending_objects > 0 {
            *pending.cli_versions.entry(version.to_owned()).or_insert(0) += st.pending_objects;
        }
        groups.entry(version.to_owned()).or_default().add(&pending);
    }
    st.pending_objects = 0;
}

/// Profile one stream-json object of kind `kind`.
fn object(
    groups: &mut BTreeMap<String, Profile>,
    st: &mut Stream,
    kind: &str,
    v: Val<'_, '_>,
    at: Option<(&str, u64)>,
) {
    if kind == "system/init" {
        let v_init = get_str(v, "claude_code_version")
            .filter(|s| version_like(s))
            .map(str::to_owned)
            .or_else(|| st.path_version.clone())
            .unwrap_or_else(|| UNKNOWN_VERSION.to_owned());
        if st.version.is_none() {
            flush_pending(groups, st, &v_init);
        }
        st.version = Some(v_init);
    }
    let g = match &st.version {
        Some(ver) => {
            let g = groups.entry(ver.clone()).or_default();
            *g.cli_versions.entry(ver.clone()).or_insert(0) += 1;
            g
        }
        None => {
            st.pending_objects += 1;
            &mut st.pending
        }
    };
    g.input.objects += 1;
    tools(g, &mut st.tools_by_id, &mut st.subagent_ids, kind, v, at);
    let tur_kind = if kind == "user" {
        first_tool_result(v).map(|(id, is_error)| {
            if is_error {
                rules::TOOL_ERROR_KIND.to_owned()
            } else {
                rules::tool_result_kind(st.tools_by_id.get(id).map(String::as_str))
            }
        })
    } else {
        None
    };
    let mut work: Vec<(String, Val<'_, '_>)> = vec![(kind.to_owned(), v)];
    while let Some((name, val)) = work.pop() {
        let k = g.kinds.entry(name.clone()).or_default();
        k.count += 1;
        if k.first.is_none() {
            k.first = Origin::of(at);
        }
        if name.starts_with("tool_use_result") {
            record(k, "$", None, val, at);
            if rules::rule(&name, "$") == Rule::Opaque {
                continue;
            }
        }
        let mut w = Walker {
            kind: &name,
            k,
            path: String::new(),
            work: &mut work,
            tur_kind: tur_kind.as_deref(),
            at,
        };
        w.walk(val, 0);
    }
}

/// Tool names: init `tools`, `tool_use` names (with argument names), subagent spawners.
fn tools(
    g: &mut Profile,
    by_id: &mut HashMap<String, String>,
    subagent_ids: &mut HashSet<String>,
    kind: &str,
    v: Val<'_, '_>,
    at: Option<(&str, u64)>,
) {
    if kind == "system/init"
        && let Some(list) = get(v, "tools").and_then(|t| t.as_array())
    {
        let mut seen = HashSet::new();
        for t in list.iter().filter_map(str_of).filter(|t| rules::token(t)) {
            if seen.insert(t) {
                let n = g.tools.available.entry(t.to_owned()).or_insert(0);
                *n += 1;
                if *n == 1
                    && let Some(o) = Origin::of(at)
                {
                    g.tools.available_first.insert(t.to_owned(), o);
                }
            }
        }
    }
    let blocks = match kind {
        "assistant" => get(v, "message")
            .and_then(|m| get(m, "content"))
            .and_then(|c| c.as_array()),
        _ => None,
    };
    for b in blocks.iter().flat_map(|a| a.iter()) {
        if get_str(b, "type") != Some("tool_use") {
            continue;
        }
        let (Some(id), Some(name)) = (get_str(b, "id"), get_str(b, "name")) else {
            continue;
        };
        if !rules::token(name) {
            continue;
        }
        by_id.insert(id.to_owned(), name.to_owned());
        let u = g.tools.used.entry(name.to_owned()).or_default();
        u.count += 1;
        if u.first.is_none() {
            u.first = Origin::of(at);
        }
        if let Some(input) = get(b, "input").and_then(|i| i.as_object()) {
            let mut seen = HashSet::new();
            for (key, _) in input.iter() {
                let key = if rules::data_key(key) { "{*}" } else { key };
                if seen.insert(key) {
                    *u.input_keys.entry(key.to_owned()).or_insert(0) += 1;
                }
            }
        }
    }
    if kind == "stream_event/content_block_start"
        && let Some(cb) = get(v, "event").and_then(|e| get(e, "content_block"))
        && let (Some(id), Some(name)) = (get_str(cb, "id"), get_str(cb, "name"))
        && rules::token(name)
    {
        by_id.insert(id.to_owned(), name.to_owned());
    }
    if let Some(parent) = get_str(v, "parent_tool_use_id")
        && let Some(name) = by_id.get(parent)
        && subagent_ids.insert(parent.to_owned())
    {
        g.tools.used.entry(name.clone()).or_default().subagent += 1;
    }
}

/// The first `tool_result` block of a user line: its `tool_use_id` and `is_error`.
fn first_tool_result<'i>(v: Val<'_, 'i>) -> Option<(&'i str, bool)> {
    let content = get(get(v, "message")?, "content")?;
    let b = content
        .as_array()?
        .iter()
        .find(|b| get_str(*b, "type") == Some("tool_result"))?;
    let is_error = get(b, "is_error").and_then(|e| e.as_bool()) == Some(true);
    Some((get_str(b, "tool_use_id").unwrap_or(""), is_error))
}

fn jtype(v: Val<'_, '_>) -> JType {
    if v.as_object().is_some() {
        JType::Object
    } else if v.as_array().is_some() {
        JType::Array
    } else if v.is_str() {
        JType::String
    } else if v.is_null() {
        JType::Null
    } else if v.is_bool() {
        JType::Boolean
    } else {
        JType::Number
    }
}

/// Count one occurrence of `path` with value `x` (and its enum value when `key` is enum-like).
fn record(k: &mut Kind, path: &str, key: Option<&str>, x: Val<'_, '_>, at: Option<(&str, u64)>) {
    let f: &mut Field = match k.fields.get_mut(path) {
        Some(f) => f,
        None => {
            let f = k.fields.entry(path.to_owned()).or_default();
            f.first = Origin::of(at);
            f
        }
    };
    f.present += 1;
    let t = jtype(x);
    match f.types.get_mut(&t) {
        Some(n) => *n += 1,
        None => {
            f.types.insert(t, 1);
            if let Some(o) = Origin::of(at) {
                f.type_first.insert(t, o);
            }
        }
    }
    if let (Some(key), Some(s)) = (key, str_of(x))
        && rules::enum_field(path, key)
        && rules::enum_value(s)
    {
        f.add_value(s, at);
    }
    if let (Some(key), Some(a)) = (key, x.as_array())
        && rules::OPEN_LISTS.contains(&key)
    {
        f.add_items(a.iter().filter_map(|e| str_of(e)));
    }
}

/// Walks one kind's value, recording its field paths; nested kinds go to `work`.
struct Walker<'a, 't, 'i> {
    kind: &'a str,
    k: &'a mut Kind,
    path: String,
    work: &'a mut Vec<(String, Val<'t, 'i>)>,
    /// The kind for a `tool_use_result` on this line.
    tur_kind: Option<&'a str>,
    /// The file and line being walked, when the stream has a name.
    at: Option<(&'a str, u64)>,
}

impl<'t, 'i> Walker<'_, 't, 'i> {
    /// Walk the value at `self.path` (already recorded) under the rules of the kind.
    fn walk(&mut self, v: Val<'t, 'i>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let rule = if self.path.is_empty() {
            Rule::Walk
        } else {
            rules::rule(self.kind, &self.path)
        };
        match rule {
            Rule::Opaque => {}
            Rule::ToolUseResult => {
                let kind = self.tur_kind.unwrap_or("tool_use_result/?");
                self.work.push((kind.to_owned(), v));
            }
            Rule::Typed(prefix) => match typed(v) {
                Some(t) => self.work.push((format!("{prefix}/{t}"), v)),
                None => self.walk_plain(v, false, depth),
            },
            Rule::Blocks(prefix) => {
                let Some(arr) = v.as_array() else { return };
                let len = self.path.len();
                self.path.push_str("[]");
                for el in arr.iter() {
                    record(self.k, &self.path, None, el, self.at);
                    match typed(el) {
                        Some(t) => self.work.push((format!("{prefix}/{t}"), el)),
                        None => self.walk(el, depth + 1),
                    }
                }
                self.path.truncate(len);
            }
            Rule::Map => self.walk_plain(v, true, depth),
            Rule::Walk => self.walk_plain(v, false, depth),
        }
    }

    /// Record and walk the members or elements of `v`; with `map`, keys collapse to `{*}`.
    fn walk_plain(&mut self, v: Val<'t, 'i>, map: bool, depth: usize) {
        let len = self.path.len();
        if let Some(obj) = v.as_object() {
            // Duplicate keys: the last one counts, as with `json::get` (members are visited
            // last to first; the order they are recorded in does not matter).
            let members: Vec<(&str, Val<'t, 'i>)> = obj.iter().collect();
            let many = members.len() > 1;
            let mut seen: HashSet<&str> = HashSet::new();
            for (key, x) in IntoIterator::into_iter(members).rev() {
                let collapsed = map || rules::data_key(key);
                if !collapsed && many && !seen.insert(key) {
                    continue;
                }
                if !self.path.is_empty() {
                    self.path.push('.');
                }
                self.path.push_str(if collapsed { "{*}" } else { key });
                record(self.k, &self.path, (!collapsed).then_some(key), x, self.at);
                self.walk(x, depth + 1);
                self.path.truncate(len);
            }
        } else if let Some(arr) = v.as_array() {
            self.path.push_str("[]");
            for el in arr.iter() {
                record(self.k, &self.path, None, el, self.at);
                self.walk(el, depth + 1);
            }
            self.path.truncate(len);
        }
    }
}

/// The token `type` of an object, if it has one.
fn typed<'i>(v: Val<'_, 'i>) -> Option<&'i str> {
    v.as_object()?;
    get_str(v, "type").filter(|t| rules::token(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_paths() {
        assert_eq!(
            version_from_path(Path::new("fixtures/captured/2.1.45/tools.ndjson")).as_deref(),
            Some("2.1.45")
        );
        assert_eq!(version_from_path(Path::new("2.1.45")), None);
        assert_eq!(version_from_path(Path::new("a/b/c.ndjson")), None);
    }

    #[test]
    fn bad_lines_are_counted() {
        let mut p = Profiler::new();
        p.add_bytes(
            b"-n\n\n[1]\n{\"no\":\"type\"}\n{\"type\":\"user\",\"message\":{\"content\":\"x\"}}",
            None,
        );
        let p = p.finish();
        assert_eq!(p.input.lines, 5);
        assert_eq!(
            (
                p.input.non_json,
                p.input.blank,
                p.input.non_object,
                p.input.foreign
            ),
            (1, 1, 1, 1)
        );
        assert_eq!((p.input.objects, p.input.unterminated), (1, 1));
        assert_eq!(
            p.kinds["user"].fields["message.content"].presence,
            super::super::Presence::Required
        );
    }
}
