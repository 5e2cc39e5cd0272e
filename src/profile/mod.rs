//! Shape profiles of raw stream-json: the document model, merging, and loading/saving.
//!
//! A [`Profile`] says, per kind of object (top-level `type`/`subtype`, `stream_event` inner type,
//! content-block type, delta type, `tool_use_result` per tool), which field paths occur, with
//! which JSON types, how often relative to their parent object (required vs optional), and for
//! enum-like string fields which values. It is built by [`infer`], compared by [`diff`], and
//! serializes to a stable, sorted JSON document (every map is a `BTreeMap`) that a repository
//! can commit as its baseline. All counts add up, so [`Profile::merge`] is associative and
//! commutative: profiling inputs together equals merging their separate profiles.
#![doc = include_str!("DRIFT.md")]

pub mod allow;
pub mod change;
pub mod compare;
pub mod diff;
pub mod infer;
pub mod input;
mod renames;
pub mod render;
pub mod rules;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use infer::Profiler;

/// Version of the profile document format ([`Profile::profile_version`]).
pub const PROFILE_VERSION: u32 = 1;

/// The JSON type of a value. Integers and floats are one type: numbers never count as drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JType {
    /// `[...]`
    Array,
    /// `true` / `false`
    Boolean,
    /// `null`
    Null,
    /// Any number.
    Number,
    /// `{...}`
    Object,
    /// `"..."`
    String,
}

impl JType {
    /// The lowercase name used in documents and reports.
    pub fn name(self) -> &'static str {
        match self {
            JType::Array => "array",
            JType::Boolean => "boolean",
            JType::Null => "null",
            JType::Number => "number",
            JType::Object => "object",
            JType::String => "string",
        }
    }
}

/// Where something was first seen: a capture file (as named on the command line or found in a
/// directory) and its 1-based line. Profiles of unnamed streams carry none.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Origin {
    /// The file (`-` for stdin).
    pub file: String,
    /// Its line, 1-based.
    pub line: u64,
}

impl Origin {
    /// The origin `at` names, if any.
    pub(crate) fn of(at: Option<(&str, u64)>) -> Option<Origin> {
        at.map(|(file, line)| Origin {
            file: file.to_owned(),
            line,
        })
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Keep the first of two origins, the least by file name then line: a stream's first occurrence
/// is its least line, and taking the least across streams keeps merging commutative, so the
/// profile is the same whatever the order of its inputs.
fn keep_first(a: &mut Option<Origin>, b: &Option<Origin>) {
    if let Some(o) = b
        && a.as_ref().is_none_or(|x| o < x)
    {
        *a = Some(o.clone());
    }
}

/// [`keep_first`] for each key of a map of origins.
fn keep_first_each<K: Ord + Clone>(a: &mut BTreeMap<K, Origin>, b: &BTreeMap<K, Origin>) {
    for (k, o) in b {
        match a.get_mut(k) {
            Some(x) if o < x => *x = o.clone(),
            Some(_) => {}
            None => {
                a.insert(k.clone(), o.clone());
            }
        }
    }
}

/// Whether a field is in every occurrence of its parent object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// In every parent object.
    #[default]
    Required,
    /// Missing from some parent objects.
    Optional,
    /// An entry of a collapsed free-form map (`{*}`): presence has no meaning.
    Map,
}

/// One field path of a kind.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Field {
    /// Number of parent objects (or array elements, for `[]` paths) that had this field.
    pub present: u64,
    /// Derived from `present` and the parent's object count (recomputed on load and merge).
    #[serde(default)]
    pub presence: Presence,
    /// JSON types seen, with counts.
    pub types: BTreeMap<JType, u64>,
    /// Values of an enum-like string field, with counts (see [`rules::enum_field`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<String, u64>>,
    /// More distinct values than [`rules::MAX_VALUES`]: the set is open and not compared.
    #[serde(default, skip_serializing_if = "is_false")]
    pub values_overflow: bool,
    /// Names an open list (see [`rules::OPEN_LISTS`]) held, with counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<BTreeMap<String, u64>>,
    /// Where the path was first seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<Origin>,
    /// Where each JSON type was first seen at this path.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub type_first: BTreeMap<JType, Origin>,
    /// Where each enum value was first seen (kept with `values`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub value_first: BTreeMap<String, Origin>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Field {
    /// The document leaves out type and value origins equal to the path's own ([`Profile::to_json`]).
    fn prune_origins(&mut self) {
        let first = self.first.clone();
        self.type_first.retain(|_, o| Some(&*o) != first.as_ref());
        self.value_first.retain(|_, o| Some(&*o) != first.as_ref());
    }

    /// Put back the origins [`Field::prune_origins`] left out.
    fn fill_origins(&mut self) {
        let Some(first) = &self.first else { return };
        for t in self.types.keys() {
            self.type_first.entry(*t).or_insert_with(|| first.clone());
        }
        for v in self.values.iter().flat_map(|m| m.keys()) {
            self.value_first
                .entry(v.clone())
                .or_insert_with(|| first.clone());
        }
    }

    /// Number of times the value here was an object.
    pub fn objects(&self) -> u64 {
        self.types.get(&JType::Object).copied().unwrap_or(0)
    }

    fn merge(&mut self, o: &Field) {
        self.present += o.present;
        add_counts(&mut self.types, &o.types);
        keep_first(&mut self.first, &o.first);
        keep_first_each(&mut self.type_first, &o.type_first);
        if let Some(oi) = &o.items {
            // Bounded as when recording: names beyond rules::MAX_ITEMS are not added.
            let m = self.items.get_or_insert_with(BTreeMap::new);
            for (k, n) in oi {
                if let Some(c) = m.get_mut(k) {
                    *c += n;
                } else if m.len() < rules::MAX_ITEMS {
                    m.insert(k.clone(), *n);
                }
            }
        }
        if self.values_overflow || o.values_overflow {
            self.values_overflow = true;
            self.values = None;
            self.value_first.clear();
        } else if let Some(ov) = &o.values {
            let v = self.values.get_or_insert_with(BTreeMap::new);
            add_counts(v, ov);
            keep_first_each(&mut self.value_first, &o.value_first);
            if v.len() > rules::MAX_VALUES {
                self.values = None;
                self.values_overflow = true;
                self.value_first.clear();
            }
        }
    }

    /// Record the names of an open list.
    pub(crate) fn add_items<'a>(&mut self, names: impl Iterator<Item = &'a str>) {
        let m = self.items.get_or_insert_with(BTreeMap::new);
        for n in names {
            if let Some(c) = m.get_mut(n) {
                *c += 1;
            } else if m.len() < rules::MAX_ITEMS && n.len() <= 200 {
                m.insert(n.to_owned(), 1);
            }
        }
    }

    /// Record one string value of an enum-like field, seen `at` (file and line) when known.
    pub(crate) fn add_value(&mut self, s: &str, at: Option<(&str, u64)>) {
        if self.values_overflow {
            return;
        }
        let v = self.values.get_or_insert_with(BTreeMap::new);
        match v.get_mut(s) {
            Some(n) => *n += 1,
            None => {
                v.insert(s.to_owned(), 1);
                if let Some(o) = Origin::of(at) {
                    self.value_first.insert(s.to_owned(), o);
                }
                if v.len() > rules::MAX_VALUES {
                    self.values = None;
                    self.values_overflow = true;
                    self.value_first.clear();
                }
            }
        }
    }
}

/// All field paths of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Kind {
    /// Number of objects of this kind.
    pub count: u64,
    /// Field path → field. Paths join keys with `.`, mark array elements with `[]`, collapse
    /// free-form map keys to `{*}`; `$` is the root value where it need not be an object.
    pub fields: BTreeMap<String, Field>,
    /// Where an object of this kind was first seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<Origin>,
}

impl Kind {
    fn merge(&mut self, o: &Kind) {
        self.count += o.count;
        keep_first(&mut self.first, &o.first);
        for (p, f) in &o.fields {
            self.fields.entry(p.clone()).or_default().merge(f);
        }
    }

    /// Where the parent object of `path` was first seen (the kind's first object for top-level
    /// fields): the place to look for a field one side lacks.
    pub fn parent_first(&self, path: &str) -> Option<&Origin> {
        match parent_path(path) {
            Some(pp) => self.fields.get(pp).and_then(|f| f.first.as_ref()),
            None => self.first.as_ref(),
        }
    }

    /// Number of parent objects of `path` (the kind count for top-level fields).
    pub fn parent_objects(&self, path: &str) -> u64 {
        match parent_path(path) {
            Some(pp) => self.fields.get(pp).map_or(0, Field::objects),
            None => match self.fields.get("$") {
                Some(root) => root.objects(),
                None => self.count,
            },
        }
    }

    fn finalize(&mut self) {
        let presences: Vec<(String, Presence)> = self
            .fields
            .iter()
            .map(|(p, f)| {
                let pr = if p == "$" {
                    Presence::Required
                } else if last_segment(p) == "{*}" {
                    Presence::Map
                } else if f.present >= self.parent_objects(p) {
                    Presence::Required
                } else {
                    Presence::Optional
                };
                (p.clone(), pr)
            })
            .collect();
        for (p, pr) in presences {
            if let Some(f) = self.fields.get_mut(&p) {
                f.presence = pr;
            }
        }
    }
}

/// The parent path of a field path: `a.b` → `a`, `a[]` → `a`, `a` → none (the kind root).
pub fn parent_path(path: &str) -> Option<&str> {
    if path == "$" {
        return None;
    }
    if let Some(p) = path.strip_suffix("[]") {
        return Some(p);
    }
    path.rfind('.').map(|i| &path[..i])
}

/// The last segment of a field path (`a.b` → `b`, `a[]` → `[]`).
pub fn last_segment(path: &str) -> &str {
    if path.ends_with("[]") {
        return "[]";
    }
    path.rfind('.').map_or(path, |i| &path[i + 1..])
}

/// A tool seen in `tool_use` blocks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UsedTool {
    /// Number of `tool_use` blocks with this name.
    pub count: u64,
    /// Number of those whose id later appeared as a `parent_tool_use_id` (it ran a subagent).
    #[serde(default)]
    pub subagent: u64,
    /// Input argument names with counts. Only used to recognise renamed tools; never diffed.
    #[serde(default)]
    pub input_keys: BTreeMap<String, u64>,
    /// Where a `tool_use` of this name was first seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<Origin>,
}

/// Tool names.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Tools {
    /// Names listed in `system/init` `tools`, with the number of inits listing them.
    pub available: BTreeMap<String, u64>,
    /// Names used in `tool_use` blocks.
    pub used: BTreeMap<String, UsedTool>,
    /// Where each name of `available` was first listed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub available_first: BTreeMap<String, Origin>,
}

/// What the input consisted of. Never compared as drift.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct InputStats {
    /// Input files (or stdin).
    pub streams: u64,
    /// Lines read.
    pub lines: u64,
    /// Lines profiled (JSON objects with a usable `type`).
    pub objects: u64,
    /// Empty or whitespace-only lines.
    pub blank: u64,
    /// Lines that are not JSON (wrapper noise, stderr, banners).
    pub non_json: u64,
    /// JSON lines that are not objects.
    pub non_object: u64,
    /// JSON objects without a usable `type` (not stream-json).
    pub foreign: u64,
    /// Last lines without a newline (possibly truncated).
    pub unterminated: u64,
    /// Lines strict parsers refuse that were repaired and profiled, as `normalize` repairs them
    /// (unpaired UTF-16 surrogate escapes): they count among `objects` (or `non_object`, …) too.
    /// Left out of the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repaired: u64,
}

impl InputStats {
    fn merge(&mut self, o: &InputStats) {
        self.streams += o.streams;
        self.lines += o.lines;
        self.objects += o.objects;
        self.blank += o.blank;
        self.non_json += o.non_json;
        self.repaired += o.repaired;
        self.non_object += o.non_object;
        self.foreign += o.foreign;
        self.unterminated += o.unterminated;
    }
}

/// A shape profile (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Document format version, [`PROFILE_VERSION`].
    pub profile_version: u32,
    /// CLI versions seen (from `init.claude_code_version`, else a version-named directory, else
    /// `unknown`), with the number of objects profiled under each.
    pub cli_versions: BTreeMap<String, u64>,
    /// Input line accounting.
    pub input: InputStats,
    /// Tool names.
    pub tools: Tools,
    /// Kind name → its fields.
    pub kinds: BTreeMap<String, Kind>,
    /// With `--by-version`: the same profile per CLI version.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_version: BTreeMap<String, Profile>,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            profile_version: PROFILE_VERSION,
            cli_versions: BTreeMap::new(),
            input: InputStats::default(),
            tools: Tools::default(),
            kinds: BTreeMap::new(),
            by_version: BTreeMap::new(),
        }
    }
}

fn add_counts<K: Ord + Clone>(a: &mut BTreeMap<K, u64>, b: &BTreeMap<K, u64>) {
    for (k, n) in b {
        *a.entry(k.clone()).or_insert(0) += n;
    }
}

impl Profile {
    /// Add `o` into `self`. Associative and commutative (except which names an open list keeps
    /// once it holds [`rules::MAX_ITEMS`]: the first ones merged); derived fields are recomputed.
    pub fn merge(&mut self, o: &Profile) {
        self.add(o);
        self.finalize();
    }

    /// [`Profile::merge`] without recomputing the derived fields: for merging many parts in a
    /// row, [`Profile::finalize`] once after the last (finalizing after each part would walk the
    /// whole growing profile every time).
    pub fn add(&mut self, o: &Profile) {
        add_counts(&mut self.cli_versions, &o.cli_versions);
        self.input.merge(&o.input);
        add_counts(&mut self.tools.available, &o.tools.available);
        keep_first_each(&mut self.tools.available_first, &o.tools.available_first);
        for (name, t) in &o.tools.used {
            let u = self.tools.used.entry(name.clone()).or_default();
            keep_first(&mut u.first, &t.first);
            u.count += t.count;
            u.subagent += t.subagent;
            add_counts(&mut u.input_keys, &t.input_keys);
        }
        for (k, kind) in &o.kinds {
            self.kinds.entry(k.clone()).or_default().merge(kind);
        }
        for (v, p) in &o.by_version {
            self.by_version.entry(v.clone()).or_default().add(p);
        }
    }

    /// Recompute derived fields (presence).
    pub fn finalize(&mut self) {
        for k in self.kinds.values_mut() {
            k.finalize();
        }
        for p in self.by_version.values_mut() {
            p.finalize();
        }
    }

    /// Every field of every kind (of every version).
    fn fields_mut(&mut self) -> Vec<&mut Field> {
        let mut all: Vec<&mut Field> = Vec::new();
        for k in self.kinds.values_mut() {
            all.extend(k.fields.values_mut());
        }
        for p in self.by_version.values_mut() {
            all.extend(p.fields_mut());
        }
        all
    }

    /// The stable JSON document (pretty-printed, sorted, newline-terminated). Type and value
    /// origins equal to their path's are left out (loading puts them back).
    pub fn to_json(&self) -> String {
        let mut doc = self.clone();
        for f in doc.fields_mut() {
            f.prune_origins();
        }
        let mut s = serde_json::to_string_pretty(&doc).expect("profile serializes");
        s.push('\n');
        s
    }

    /// Load a saved profile document.
    pub fn from_json(text: &str) -> Result<Profile, String> {
        let mut p: Profile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if p.profile_version != PROFILE_VERSION {
            return Err(format!(
                "unsupported profile_version {} (this build reads {PROFILE_VERSION})",
                p.profile_version
            ));
        }
        for f in p.fields_mut() {
            f.fill_origins();
        }
        p.finalize();
        Ok(p)
    }

    /// Objects profiled whose top-level `type` is a stream-json one
    /// ([`crate::dialect::STREAM_JSON_TYPES`]) or another agent's own
    /// ([`crate::dialect::is_own_type`]): zero for anything that is not a capture.
    pub fn stream_json_objects(&self) -> u64 {
        self.kinds
            .iter()
            .filter(|(k, _)| {
                let top = k.split('/').next().unwrap_or("");
                crate::dialect::STREAM_JSON_TYPES.contains(&top) || crate::dialect::is_own_type(top)
            })
            .map(|(_, k)| k.count)
            .sum()
    }

    /// True when `bytes` look like a saved profile document rather than a capture.
    pub fn looks_like_profile(bytes: &[u8]) -> bool {
        let head = &bytes[..bytes.len().min(512)];
        let trimmed = head.iter().position(|b| !b.is_ascii_whitespace());
        matches!(trimmed, Some(i) if head[i] == b'{')
            && memchr::memmem::find(head, b"\"profile_version\"").is_some()
    }
}
