//! What a drift report is made of: a [`Change`] (kind of change, where, the values) with its
//! [`Severity`], and the kinds and paths under which tool names are reported. `diff` finds
//! changes, `renames` folds tool renames, `allow` accepts them, `render` prints them.

use serde::{Deserialize, Serialize};

use super::Origin;

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
    /// A name only NEW's open list held (`capabilities`, `slash_commands`, `skills`, …).
    ItemAdded,
    /// A name only OLD's open list held.
    ItemRemoved,
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
            ChangeKind::ItemAdded => "item_added",
            ChangeKind::ItemRemoved => "item_removed",
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
    /// Where OLD first had what changed (the kind, path, type, value or tool): file and line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_at: Option<Origin>,
    /// Where NEW first had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_at: Option<Origin>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
fn is_false(b: &bool) -> bool {
    !*b
}

impl Change {
    pub(super) fn new(severity: Severity, change: ChangeKind, kind: &str, detail: String) -> Self {
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
            old_at: None,
            new_at: None,
        }
    }
    /// Where each side first had what changed.
    pub(super) fn at(mut self, old: Option<&Origin>, new: Option<&Origin>) -> Self {
        self.old_at = old.cloned();
        self.new_at = new.cloned();
        self
    }
    pub(super) fn path(mut self, p: &str) -> Self {
        self.path = Some(p.to_owned());
        self
    }
    pub(super) fn value(mut self, v: &str) -> Self {
        self.value = Some(v.to_owned());
        self
    }
}

/// Kind and path under which tool names are reported.
pub const TOOLS_AVAILABLE: (&str, &str) = ("system/init", "tools[]");
/// Kind and path under which `tool_use` names are reported.
pub const TOOLS_USED: (&str, &str) = ("assistant.content/tool_use", "name");
