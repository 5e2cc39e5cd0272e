//! The table of tools: one row per tool name and agent dialect, saying its kind, which input
//! members hold the paths it touches, the command it runs and the edit it makes, and how a view
//! heads it. The only place in `src/` that names an agent's tools (a test checks it).

use super::Kind;

/// Whose tool names a row speaks of: the agent CLI that named the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// Claude Code (its `stream-json`, transcripts, and CLIs that share its tool names).
    #[default]
    Claude,
    /// Gemini CLI (`stream-json` `tool_use.tool_name`; Qwen Code shares these names).
    Gemini,
    /// OpenCode (`tool_use.part.tool`).
    OpenCode,
    /// Codex (`exec --json` item types).
    Codex,
    /// Amp (`--stream-json`; Claude-like blocks with Amp's own tool names).
    Amp,
    /// Cursor (`stream-json` `tool_call` keys: `shellToolCall`, `readToolCall`, …).
    Cursor,
    /// GitHub Copilot CLI (`toolName` of its tool events).
    Copilot,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 7] = [
        Dialect::Claude,
        Dialect::Gemini,
        Dialect::OpenCode,
        Dialect::Codex,
        Dialect::Amp,
        Dialect::Cursor,
        Dialect::Copilot,
    ];
}

/// Where an input holds paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSpec {
    /// A string member.
    Str(&'static str),
    /// An array of strings.
    Strs(&'static str),
    /// An array of objects, each with a string member: `(array, member)`.
    Each(&'static str, &'static str),
    /// A string member holding a patch text: the files its `*** Add File:`, `*** Update File:`,
    /// `*** Delete File:` and `*** Move to:` headers name (see [`super::patch`]).
    Patch(&'static str),
}

/// How an input spells an edit (the members named).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditShape {
    /// No edit the input spells out.
    None,
    /// One replacement: path, old text, new text, and the flag that replaces every occurrence.
    Replace {
        /// The file.
        path: &'static str,
        /// The old text.
        old: &'static str,
        /// The new text.
        new: &'static str,
        /// The replace-all flag.
        all: Option<&'static str>,
    },
    /// Several replacements in one file: `list` holds objects with `old`, `new` and `all`.
    Multi {
        /// The file.
        path: &'static str,
        /// The array of replacements.
        list: &'static str,
        /// An item's old text.
        old: &'static str,
        /// An item's new text.
        new: &'static str,
        /// An item's replace-all flag.
        all: Option<&'static str>,
    },
    /// The whole file written.
    Whole {
        /// The file.
        path: &'static str,
        /// Its new content.
        content: &'static str,
    },
    /// A notebook cell's source written.
    Cell {
        /// The notebook.
        path: &'static str,
        /// The cell's new source.
        source: &'static str,
        /// The cell's id.
        cell: &'static str,
    },
}

/// How a view heads a call: the argument that matters and its details (see
/// [`super::headline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// `command`, and whether it runs in the background, its timeout.
    Shell,
    /// The first of these string members.
    Key(&'static [&'static str]),
    /// The file read and the line range or pages.
    Read,
    /// The file written and its line count.
    Write,
    /// The file edited and "replace all".
    Edit,
    /// The file edited and the number of edits.
    MultiEdit,
    /// The notebook, the edit mode and the cell.
    Notebook,
    /// The pattern and where, which files, which type, which output.
    Grep,
    /// The pattern and where.
    Glob,
    /// The URL and the prompt's first line.
    Fetch,
    /// The subagent's type (with the tool name), its description or prompt, background.
    Subagent,
    /// The todo list's length and progress.
    Todo,
    /// The first question asked.
    Ask,
    /// Its first string member, else every member (an MCP tool's; no row has it).
    Mcp,
    /// Every member as `key: value`.
    Generic,
}

/// One tool: what a call of it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// Whose name it is.
    pub dialect: Dialect,
    /// The tool's name as the agent writes it.
    pub name: &'static str,
    /// Its kind.
    pub kind: Kind,
    /// When the kind depends on the input: a member and the kind for each of its values (the
    /// first match); `kind` for any other value or none.
    pub kind_by: Option<(&'static str, &'static [(&'static str, Kind)])>,
    /// Where its input holds the paths it touches.
    pub paths: &'static [PathSpec],
    /// The member holding the command it runs.
    pub command: Option<&'static str>,
    /// How its input spells an edit (read when the kind is `edit`).
    pub edit: EditShape,
    /// When the edit's shape depends on the input: a member and the shape for each of its
    /// values (the first match); `edit` for any other value or none.
    pub edit_by: Option<(&'static str, &'static [(&'static str, EditShape)])>,
    /// How a view heads a call.
    pub head: Head,
    /// The input members a headline says in full: a call with only these (none on several
    /// lines) needs no input shown besides it.
    pub said: &'static [&'static str],
}

impl Row {
    /// The kind of a call with `input`.
    pub fn kind_of<'a, V: super::Input<'a>>(&self, input: Option<V>) -> Kind {
        let Some((member, by)) = self.kind_by else {
            return self.kind;
        };
        let value = input.and_then(|i| i.member(member)).and_then(|v| v.text());
        by.iter()
            .find(|(v, _)| Some(*v) == value)
            .map_or(self.kind, |(_, k)| *k)
    }

    /// How a call with `input` spells its edit.
    pub fn edit_of<'a, V: super::Input<'a>>(&self, input: Option<V>) -> EditShape {
        let Some((member, by)) = self.edit_by else {
            return self.edit;
        };
        let value = input.and_then(|i| i.member(member)).and_then(|v| v.text());
        by.iter()
            .find(|(v, _)| Some(*v) == value)
            .map_or(self.edit, |(_, e)| *e)
    }

    /// Whether a view shows the call's edit as a whole new text (a file or cell written), not
    /// as replacements.
    pub fn writes_whole(&self) -> bool {
        matches!(self.edit, EditShape::Whole { .. })
    }
}

const fn row(dialect: Dialect, name: &'static str, kind: Kind) -> Row {
    Row {
        dialect,
        name,
        kind,
        kind_by: None,
        paths: &[],
        command: None,
        edit: EditShape::None,
        edit_by: None,
        head: Head::Generic,
        said: &[],
    }
}

impl Row {
    const fn paths(mut self, paths: &'static [PathSpec]) -> Row {
        self.paths = paths;
        self
    }
    const fn command(mut self, key: &'static str) -> Row {
        self.command = Some(key);
        self
    }
    const fn edit(mut self, edit: EditShape) -> Row {
        self.edit = edit;
        self
    }
    const fn head(mut self, head: Head) -> Row {
        self.head = head;
        self
    }
    const fn said(mut self, keys: &'static [&'static str]) -> Row {
        self.said = keys;
        self
    }
    const fn edit_by(
        mut self,
        member: &'static str,
        by: &'static [(&'static str, EditShape)],
    ) -> Row {
        self.edit_by = Some((member, by));
        self
    }
    const fn kind_by(mut self, member: &'static str, by: &'static [(&'static str, Kind)]) -> Row {
        self.kind_by = Some((member, by));
        self
    }
}

use Dialect::{Amp, Claude, Codex, Copilot, Cursor, Gemini, OpenCode};
use EditShape::{Cell, Multi, Replace, Whole};
use Kind::*;
use PathSpec::{Each, Patch, Str, Strs};

const FILE: &[PathSpec] = &[Str("file_path")];
const PATH: &[PathSpec] = &[Str("path")];
const NOTEBOOK: &[PathSpec] = &[Str("notebook_path")];
const FILE_PATH_CAMEL: &[PathSpec] = &[Str("filePath")];

/// Claude Code's `Edit` (and the same members in other CLIs).
const EDIT: EditShape = Replace {
    path: "file_path",
    old: "old_string",
    new: "new_string",
    all: Some("replace_all"),
};

/// The Messages API text editor tool's `str_replace` (and the same members in other CLIs).
const TEXT_EDITOR_REPLACE: EditShape = Replace {
    path: "path",
    old: "old_str",
    new: "new_str",
    all: None,
};

/// The Messages API text editor tool's `create`: a whole file (and Copilot CLI's `create`).
const TEXT_EDITOR_CREATE: EditShape = Whole {
    path: "path",
    content: "file_text",
};

/// Every tool the crate knows. Claude Code's: every name its `system/init` `tools` listed
/// across releases (renames kept: `Task`/`Agent`, `KillBash`/`KillShell`, `exit_plan_mode`).
/// Tools whose effect has no kind of its own are `other` (listed all the same, so a test can
/// tell a shipped tool the table forgot from one it knows).
pub const TABLE: &[Row] = &[
    // Claude Code.
    row(Claude, "Bash", Execute)
        .command("command")
        .head(Head::Shell),
    row(Claude, "PowerShell", Execute)
        .command("command")
        .head(Head::Shell),
    row(Claude, "BashOutput", Other).head(Head::Key(&["bash_id"])),
    row(Claude, "KillBash", Other)
        .head(Head::Key(&["shell_id"]))
        .said(&["shell_id"]),
    row(Claude, "KillShell", Other)
        .head(Head::Key(&["shell_id"]))
        .said(&["shell_id"]),
    row(Claude, "TaskOutput", Other).head(Head::Key(&["task_id", "shell_id"])),
    row(Claude, "TaskStop", Other).head(Head::Key(&["task_id", "shell_id"])),
    row(Claude, "Monitor", Other),
    row(Claude, "Read", Read)
        .paths(FILE)
        .head(Head::Read)
        .said(&["file_path", "offset", "limit"]),
    row(Claude, "NotebookRead", Read)
        .paths(NOTEBOOK)
        .head(Head::Key(&["file_path", "notebook_path", "path"])),
    row(Claude, "LS", Search)
        .paths(PATH)
        .head(Head::Key(&["path"]))
        .said(&["path"]),
    row(Claude, "Glob", Search)
        .paths(PATH)
        .head(Head::Glob)
        .said(&["pattern", "path"]),
    row(Claude, "Grep", Search)
        .paths(PATH)
        .head(Head::Grep)
        .said(&["pattern", "path"]),
    row(Claude, "LSP", Other),
    row(Claude, "ToolSearch", Search).head(Head::Key(&["query"])),
    row(Claude, "MCPSearch", Search).head(Head::Key(&["query"])),
    row(Claude, "Write", Edit)
        .paths(FILE)
        .edit(Whole {
            path: "file_path",
            content: "content",
        })
        .head(Head::Write),
    row(Claude, "Edit", Edit)
        .paths(FILE)
        .edit(EDIT)
        .head(Head::Edit),
    row(Claude, "MultiEdit", Edit)
        .paths(FILE)
        .edit(Multi {
            path: "file_path",
            list: "edits",
            old: "old_string",
            new: "new_string",
            all: Some("replace_all"),
        })
        .head(Head::MultiEdit),
    row(Claude, "NotebookEdit", Edit)
        .paths(NOTEBOOK)
        .edit(Cell {
            path: "notebook_path",
            source: "new_source",
            cell: "cell_id",
        })
        .head(Head::Notebook),
    row(Claude, "WebFetch", Fetch)
        .head(Head::Fetch)
        .said(&["url"]),
    row(Claude, "WebSearch", Fetch)
        .head(Head::Key(&["query"]))
        .said(&["query"]),
    row(Claude, "Task", Subagent).head(Head::Subagent),
    row(Claude, "Agent", Subagent).head(Head::Subagent),
    row(Claude, "ListAgents", Other),
    row(Claude, "SendMessage", Other),
    row(Claude, "TodoWrite", Plan).head(Head::Todo),
    row(Claude, "TodoRead", Plan),
    row(Claude, "TaskCreate", Plan),
    row(Claude, "TaskGet", Plan),
    row(Claude, "TaskList", Plan),
    row(Claude, "TaskUpdate", Plan),
    row(Claude, "EnterPlanMode", SwitchMode),
    row(Claude, "ExitPlanMode", SwitchMode).head(Head::Key(&["plan"])),
    row(Claude, "exit_plan_mode", SwitchMode).head(Head::Key(&["plan"])),
    row(Claude, "EnterWorktree", Other),
    row(Claude, "ExitWorktree", Other),
    row(Claude, "Skill", Other).head(Head::Key(&["skill", "command"])),
    row(Claude, "SlashCommand", Other).head(Head::Key(&["command"])),
    row(Claude, "AskUserQuestion", Other).head(Head::Ask),
    row(Claude, "StructuredOutput", Other),
    row(Claude, "ReportFindings", Other),
    row(Claude, "Workflow", Other),
    row(Claude, "CronCreate", Other),
    row(Claude, "CronDelete", Other),
    row(Claude, "CronList", Other),
    row(Claude, "ScheduleWakeup", Other),
    // The Messages API's text editor tool (a client tool some agents give the model).
    // `create` writes a whole file; `insert` (a new line at a line number, no old text) and
    // `undo_edit` name no old text, so the replacement shape finds no edit in them.
    row(Claude, "str_replace_based_edit_tool", Edit)
        .kind_by("command", &[("view", Read)])
        .paths(PATH)
        .edit(TEXT_EDITOR_REPLACE)
        .edit_by("command", &[("create", TEXT_EDITOR_CREATE)])
        .head(Head::Key(&["path"])),
    // Gemini CLI (`tool_use.tool_name`, `parameters`).
    row(Gemini, "run_shell_command", Execute)
        .command("command")
        .paths(&[Str("directory")])
        .head(Head::Shell),
    row(Gemini, "read_file", Read)
        .paths(&[Str("file_path"), Str("absolute_path"), Str("path")])
        .head(Head::Key(&["file_path", "absolute_path", "path"])),
    row(Gemini, "read_many_files", Read).paths(&[Strs("paths")]),
    row(Gemini, "write_file", Edit)
        .paths(FILE)
        .edit(Whole {
            path: "file_path",
            content: "content",
        })
        .head(Head::Write),
    row(Gemini, "replace", Edit)
        .paths(FILE)
        .edit(Replace {
            path: "file_path",
            old: "old_string",
            new: "new_string",
            all: None,
        })
        .head(Head::Edit),
    row(Gemini, "list_directory", Search)
        .paths(&[Str("path"), Str("dir_path")])
        .head(Head::Key(&["path", "dir_path"])),
    row(Gemini, "glob", Search)
        .paths(&[Str("path"), Str("dir_path")])
        .head(Head::Glob),
    row(Gemini, "search_file_content", Search)
        .paths(&[Str("path"), Str("dir_path")])
        .head(Head::Grep),
    row(Gemini, "web_fetch", Fetch).head(Head::Key(&["prompt"])),
    row(Gemini, "google_web_search", Fetch).head(Head::Key(&["query"])),
    row(Gemini, "write_todos", Plan),
    row(Gemini, "save_memory", Other),
    // OpenCode (`part.tool`, `part.state.input`).
    row(OpenCode, "bash", Execute)
        .command("command")
        .head(Head::Shell),
    row(OpenCode, "read", Read)
        .paths(FILE_PATH_CAMEL)
        .head(Head::Key(&["filePath"])),
    row(OpenCode, "write", Edit)
        .paths(FILE_PATH_CAMEL)
        .edit(Whole {
            path: "filePath",
            content: "content",
        }),
    row(OpenCode, "edit", Edit)
        .paths(FILE_PATH_CAMEL)
        .edit(Replace {
            path: "filePath",
            old: "oldString",
            new: "newString",
            all: Some("replaceAll"),
        })
        .head(Head::Key(&["filePath"])),
    row(OpenCode, "list", Search)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(OpenCode, "glob", Search).paths(PATH).head(Head::Glob),
    row(OpenCode, "grep", Search).paths(PATH).head(Head::Grep),
    row(OpenCode, "webfetch", Fetch).head(Head::Key(&["url"])),
    row(OpenCode, "task", Subagent),
    row(OpenCode, "todowrite", Plan),
    row(OpenCode, "todoread", Plan),
    // Codex (`exec --json` item types; a reader writes an item's members as the input).
    row(Codex, "command_execution", Execute)
        .command("command")
        .head(Head::Shell),
    row(Codex, "file_change", Edit).paths(&[Each("changes", "path")]),
    row(Codex, "web_search", Fetch).head(Head::Key(&["query"])),
    row(Codex, "todo_list", Plan),
    row(Codex, "mcp_tool_call", Other),
    row(Codex, "collab_tool_call", Other).kind_by("tool", &[("spawn_agent", Subagent)]),
    // Qwen Code: Gemini CLI's names (read with the Gemini rows) and a few of its own.
    row(Gemini, "edit", Edit)
        .paths(FILE)
        .edit(Replace {
            path: "file_path",
            old: "old_string",
            new: "new_string",
            all: Some("replace_all"),
        })
        .head(Head::Key(&["file_path"])),
    row(Gemini, "grep_search", Search)
        .paths(PATH)
        .head(Head::Grep),
    row(Gemini, "todo_write", Plan),
    // Amp (`tool_use.name`, `input`).
    row(Amp, "Bash", Execute).command("cmd").head(Head::Shell),
    row(Amp, "shell_command", Execute)
        .command("command")
        .head(Head::Shell),
    row(Amp, "Read", Read)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(Amp, "create_file", Edit)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(Amp, "edit_file", Edit)
        .paths(PATH)
        .edit(Replace {
            path: "path",
            old: "old_str",
            new: "new_str",
            all: Some("replace_all"),
        })
        .head(Head::Key(&["path"])),
    row(Amp, "apply_patch", Edit),
    row(Amp, "Grep", Search).paths(PATH).head(Head::Grep),
    row(Amp, "glob", Search).head(Head::Glob),
    row(Amp, "Task", Subagent),
    row(Amp, "todo_write", Plan),
    // Cursor (`tool_call.<key>.args`; a reader names the call by its key).
    row(Cursor, "shellToolCall", Execute)
        .command("command")
        .head(Head::Shell),
    row(Cursor, "readToolCall", Read)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(Cursor, "writeToolCall", Edit)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(Cursor, "editToolCall", Edit)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(Cursor, "deleteToolCall", Delete)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(Cursor, "lsToolCall", Search)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(Cursor, "grepToolCall", Search)
        .paths(PATH)
        .head(Head::Grep),
    row(Cursor, "globToolCall", Search).head(Head::Glob),
    row(Cursor, "todoToolCall", Plan),
    // Copilot CLI (`toolName`, `arguments`).
    row(Copilot, "bash", Execute)
        .command("command")
        .head(Head::Shell),
    row(Copilot, "view", Read)
        .paths(PATH)
        .head(Head::Key(&["path"])),
    row(Copilot, "create", Edit)
        .paths(PATH)
        .edit(TEXT_EDITOR_CREATE)
        .head(Head::Key(&["path"])),
    row(Copilot, "edit", Edit)
        .paths(PATH)
        .edit(TEXT_EDITOR_REPLACE)
        .head(Head::Key(&["path"])),
    // A freeform (custom) tool: its text, not JSON, which the reader keeps as `arguments`.
    // The patch's changes are not spelled as replacements: `edit` stays null.
    row(Copilot, "apply_patch", Edit).paths(&[Patch("arguments")]),
    row(Copilot, "grep", Search).paths(PATH).head(Head::Grep),
    row(Copilot, "glob", Search).head(Head::Glob),
    row(Copilot, "web_fetch", Fetch).head(Head::Key(&["url"])),
    row(Copilot, "task", Subagent),
    row(Copilot, "update_todo", Plan),
];
