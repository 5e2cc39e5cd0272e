//! What a tool call does, decided once for every consumer: the table ([`table::TABLE`]) from a
//! tool's name (per agent [`Dialect`]) and its input's shape to its [`Kind`] (the ACP tool kinds
//! plus `subagent` and `plan`), the paths it touches, the command it runs and the edit it makes.
//!
//! The normalizer writes the answer on every `tool.call` (`kind`, `paths`, `command`, `edit`)
//! and `tool.result` (`kind`, `edit` from the CLI's structured patch); views, sinks and the ACP
//! and dialect code read those fields, or this module, never a tool name of their own. A new
//! tool, or a new agent's tool, is one row of the table. Nothing here guesses: an unknown tool
//! (MCP tools included) is [`Kind::Other`] with no paths, no command and no edit, and a known
//! tool whose input lacks a member gives nothing for what that member would have said.

pub mod exit;
pub mod input;
pub mod patch;
pub mod table;
#[cfg(test)]
mod tests;

pub use exit::exit_code;
pub use input::Input;
pub use table::{Dialect, EditShape, Head, Row};

use table::PathSpec;

/// What a tool call does: ACP's tool kinds (`read`, `edit`, `delete`, `move`, `search`,
/// `execute`, `think`, `fetch`, `switch_mode`, `other`) plus `subagent` (starts a subagent) and
/// `plan` (writes or reads the agent's plan / todo list). A closed list: `other` is the fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Reads a file or data.
    Read,
    /// Changes a file's content.
    Edit,
    /// Deletes a file.
    Delete,
    /// Moves or renames a file.
    Move,
    /// Searches files, the tool list or the like.
    Search,
    /// Runs a command or code.
    Execute,
    /// Thinks or reasons (no effect outside).
    Think,
    /// Fetches external data (the web).
    Fetch,
    /// Switches the agent's mode (plan mode in and out).
    SwitchMode,
    /// Starts a subagent: its events follow with `parent_tool_use_id` set to this call's id.
    Subagent,
    /// Writes or reads the agent's plan (a todo list).
    Plan,
    /// Anything else: MCP tools, unknown and future tools.
    Other,
}

impl Kind {
    /// Every kind, in the order the schema lists them.
    pub const ALL: [Kind; 12] = [
        Kind::Read,
        Kind::Edit,
        Kind::Delete,
        Kind::Move,
        Kind::Search,
        Kind::Execute,
        Kind::Think,
        Kind::Fetch,
        Kind::SwitchMode,
        Kind::Subagent,
        Kind::Plan,
        Kind::Other,
    ];

    /// The envelope's name of the kind.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Edit => "edit",
            Kind::Delete => "delete",
            Kind::Move => "move",
            Kind::Search => "search",
            Kind::Execute => "execute",
            Kind::Think => "think",
            Kind::Fetch => "fetch",
            Kind::SwitchMode => "switch_mode",
            Kind::Subagent => "subagent",
            Kind::Plan => "plan",
            Kind::Other => "other",
        }
    }

    /// The kind named `s` in the envelope.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// ACP's `ToolKind` for the kind: ACP has neither `subagent` nor `plan`, a subagent is
    /// `think` and a plan tool `think` (an ACP agent sends the plan itself as a `plan` update).
    pub const fn acp(self) -> &'static str {
        match self {
            Kind::Subagent | Kind::Plan => "think",
            k => k.as_str(),
        }
    }
}

/// One replacement an edit makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change<V> {
    /// The text replaced; `None` when the call writes the whole file (or a notebook cell's whole
    /// source) and names no old text.
    pub old: Option<V>,
    /// The text written.
    pub new: V,
    /// The call replaces every occurrence of `old`.
    pub all: bool,
}

/// What an edit call changes in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit<V> {
    /// The file, as the input gives it.
    pub path: V,
    /// For a notebook edit: `Some(cell id)` (the id `None` when the input names none); `None`
    /// for a file.
    pub cell: Option<Option<V>>,
    /// The replacements, in order (at least one).
    pub changes: Vec<Change<V>>,
}

/// A path a call touches, borrowed from its input: a string value, or the part of one (bytes
/// `start..end`) that names a file, as a patch text's headers do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path<V> {
    /// A whole string value of the input.
    Value(V),
    /// Bytes `start..end` of a string value.
    Part(V, usize, usize),
}

impl<V> Path<V> {
    /// The path's text.
    pub fn text<'a>(self) -> Option<&'a str>
    where
        V: Input<'a>,
    {
        match self {
            Path::Value(v) => v.text(),
            Path::Part(v, a, b) => v.text().and_then(|t| t.get(a..b)),
        }
    }
}

/// What a tool call does, its values borrowed from the call's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meaning<V> {
    /// The kind of the call.
    pub kind: Kind,
    /// The files or directories the call reads or writes (string values of its input, or the
    /// paths a patch text names, as given).
    pub paths: Vec<Path<V>>,
    /// The command a shell call runs.
    pub command: Option<V>,
    /// What an edit call changes.
    pub edit: Option<Edit<V>>,
}

impl<V> Meaning<V> {
    /// The meaning of a call this module knows nothing about: `other`, and nothing else.
    pub fn other() -> Meaning<V> {
        Meaning {
            kind: Kind::Other,
            paths: Vec::new(),
            command: None,
            edit: None,
        }
    }
}

/// The row of tool `name` in `dialect`, when the table has one.
pub fn row(dialect: Dialect, name: &str) -> Option<&'static Row> {
    table::TABLE
        .iter()
        .find(|r| r.dialect == dialect && r.name == name)
}

/// Whether `name` is an MCP tool's (`mcp__<server>__<tool>`, as Claude Code names them).
pub fn is_mcp(name: &str) -> bool {
    name.starts_with("mcp__")
}

/// How a view heads a call of `name`: the row's [`Head`], an MCP tool's first string argument,
/// else every member.
pub fn head(dialect: Dialect, name: &str) -> Head {
    match row(dialect, name) {
        Some(r) => r.head,
        None if is_mcp(name) => Head::Mcp,
        None => Head::Generic,
    }
}

/// The kind of a call of `name` whose input is `input` (the input matters only for tools whose
/// kind depends on it).
pub fn kind<'a, V: Input<'a>>(dialect: Dialect, name: &str, input: Option<V>) -> Kind {
    row(dialect, name).map_or(Kind::Other, |r| r.kind_of(input))
}

/// Whether a call of `name` starts a subagent, whatever its input (the one answer to "is this a
/// subagent call": the normalizer's `subagent`, the transcript reader, the views).
pub fn is_subagent(dialect: Dialect, name: &str) -> bool {
    row(dialect, name).is_some_and(|r| r.kind == Kind::Subagent && r.kind_by.is_none())
}

/// What a call of `name` (in `dialect`) with `input` does. `name` `None` (a block without one)
/// or a tool the table does not know gives [`Meaning::other`].
pub fn meaning<'a, V: Input<'a>>(
    dialect: Dialect,
    name: Option<&str>,
    input: Option<V>,
) -> Meaning<V> {
    let Some(r) = name.and_then(|n| row(dialect, n)) else {
        return Meaning::other();
    };
    let kind = r.kind_of(input);
    let Some(input) = input else {
        return Meaning {
            kind,
            ..Meaning::other()
        };
    };
    let text = |k: &str| {
        input
            .member(k)
            .filter(|v| v.text().is_some_and(|s| !s.is_empty()))
    };
    let mut paths = Vec::new();
    for p in r.paths {
        match *p {
            PathSpec::Str(k) => paths.extend(text(k).map(Path::Value)),
            PathSpec::Strs(k) => {
                for x in input.member(k).and_then(Input::items).unwrap_or_default() {
                    if x.text().is_some_and(|s| !s.is_empty()) {
                        paths.push(Path::Value(x));
                    }
                }
            }
            PathSpec::Each(list, k) => {
                for x in input
                    .member(list)
                    .and_then(Input::items)
                    .unwrap_or_default()
                {
                    paths.extend(
                        x.member(k)
                            .filter(|v| v.text().is_some_and(|s| !s.is_empty()))
                            .map(Path::Value),
                    );
                }
            }
            PathSpec::Patch(k) => {
                if let Some(v) = input.member(k)
                    && let Some(t) = v.text()
                {
                    paths.extend(
                        patch::paths(t)
                            .into_iter()
                            .map(|(a, b)| Path::Part(v, a, b)),
                    );
                }
            }
        }
    }
    let command = r
        .command
        .and_then(|k| input.member(k))
        .filter(|v| v.text().is_some());
    let edit = if kind == Kind::Edit {
        edit_of(r.edit_of(Some(input)), input)
    } else {
        None
    };
    Meaning {
        kind,
        paths,
        command,
        edit,
    }
}

/// The edit of a call of shape `shape` with `input`: `None` when a member the shape needs is
/// missing or not a string (no guess).
fn edit_of<'a, V: Input<'a>>(shape: EditShape, input: V) -> Option<Edit<V>> {
    let s = |v: V, k: &str| v.member(k).filter(|x| x.text().is_some());
    let flag = |v: V, k: Option<&str>| {
        k.and_then(|k| v.member(k))
            .and_then(Input::truth)
            .unwrap_or(false)
    };
    match shape {
        EditShape::None => None,
        EditShape::Replace {
            path,
            old,
            new,
            all,
        } => Some(Edit {
            path: s(input, path)?,
            cell: None,
            changes: vec![Change {
                old: Some(s(input, old)?),
                new: s(input, new)?,
                all: flag(input, all),
            }],
        }),
        EditShape::Multi {
            path,
            list,
            old,
            new,
            all,
        } => {
            let items = input.member(list)?.items()?;
            let changes = items
                .into_iter()
                .map(|e| {
                    Some(Change {
                        old: Some(s(e, old)?),
                        new: s(e, new)?,
                        all: flag(e, all),
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            if changes.is_empty() {
                return None;
            }
            Some(Edit {
                path: s(input, path)?,
                cell: None,
                changes,
            })
        }
        EditShape::Whole { path, content } => Some(Edit {
            path: s(input, path)?,
            cell: None,
            changes: vec![Change {
                old: None,
                new: s(input, content)?,
                all: false,
            }],
        }),
        EditShape::Cell { path, source, cell } => Some(Edit {
            path: s(input, path)?,
            cell: Some(s(input, cell)),
            changes: vec![Change {
                old: None,
                new: s(input, source)?,
                all: false,
            }],
        }),
    }
}

/// The edit a tool's result reports (Claude Code's `tool_use_result` of an edit or a write:
/// `filePath` and `structuredPatch`, the hunks as the CLI computed them), as (path, patch).
pub fn result_patch<'a, V: Input<'a>>(structured: Option<V>) -> Option<(V, V)> {
    let s = structured?;
    let path = s.member("filePath").filter(|p| p.text().is_some())?;
    let patch = s
        .member("structuredPatch")
        .filter(|p| p.items().is_some())?;
    Some((path, patch))
}
