//! The tool names of each dialect and what they mean, in one table for the tool-meaning module
//! (`tool.call.kind`, `paths`, `command`, `edit`) to fold in: views hold no tool names. Each row:
//! the dialect, the tool name as the envelope's `tool.call.name` says it, its kind, and the
//! members of its input that hold the command or the paths.

use super::Dialect;

/// What a tool call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Runs a shell command.
    Shell,
    /// Reads a file.
    Read,
    /// Writes or edits files.
    Edit,
    /// Searches files or the web.
    Search,
    /// Fetches a URL or searches the web.
    Web,
    /// A plan or to-do list.
    Plan,
    /// Starts or talks to another agent.
    Agent,
}

/// One tool of one dialect: `(dialect, name, kind, input member with the command, input
/// members with paths)`. A path member may name an array of objects' member as `changes[].path`.
pub type ToolRow = (
    Dialect,
    &'static str,
    ToolKind,
    Option<&'static str>,
    &'static [&'static str],
);

/// Every dialect tool whose meaning is known (MCP tools, `mcp__server__tool`, are generic).
pub const TOOL_MEANINGS: &[ToolRow] = &[
    (
        Dialect::Codex,
        "command_execution",
        ToolKind::Shell,
        Some("command"),
        &[],
    ),
    (
        Dialect::Codex,
        "file_change",
        ToolKind::Edit,
        None,
        &["changes[].path"],
    ),
    (Dialect::Codex, "web_search", ToolKind::Web, None, &[]),
    (Dialect::Codex, "todo_list", ToolKind::Plan, None, &[]),
    (Dialect::Codex, "spawn_agent", ToolKind::Agent, None, &[]),
    (Dialect::Codex, "send_input", ToolKind::Agent, None, &[]),
    (Dialect::Codex, "wait", ToolKind::Agent, None, &[]),
    (Dialect::Codex, "close_agent", ToolKind::Agent, None, &[]),
    (
        Dialect::Gemini,
        "run_shell_command",
        ToolKind::Shell,
        Some("command"),
        &["directory"],
    ),
    (
        Dialect::Gemini,
        "read_file",
        ToolKind::Read,
        None,
        &["absolute_path", "file_path"],
    ),
    (
        Dialect::Gemini,
        "read_many_files",
        ToolKind::Read,
        None,
        &["paths"],
    ),
    (
        Dialect::Gemini,
        "write_file",
        ToolKind::Edit,
        None,
        &["file_path"],
    ),
    (
        Dialect::Gemini,
        "replace",
        ToolKind::Edit,
        None,
        &["file_path"],
    ),
    (
        Dialect::Gemini,
        "list_directory",
        ToolKind::Read,
        None,
        &["path", "dir_path"],
    ),
    (
        Dialect::Gemini,
        "glob",
        ToolKind::Search,
        None,
        &["path", "dir_path"],
    ),
    (
        Dialect::Gemini,
        "search_file_content",
        ToolKind::Search,
        None,
        &["path", "dir_path"],
    ),
    (
        Dialect::Gemini,
        "google_web_search",
        ToolKind::Web,
        None,
        &[],
    ),
    (Dialect::Gemini, "web_fetch", ToolKind::Web, None, &[]),
    (Dialect::Gemini, "write_todos", ToolKind::Plan, None, &[]),
    (
        Dialect::Qwen,
        "run_shell_command",
        ToolKind::Shell,
        Some("command"),
        &["directory"],
    ),
    (
        Dialect::Qwen,
        "read_file",
        ToolKind::Read,
        None,
        &["absolute_path", "file_path"],
    ),
    (
        Dialect::Qwen,
        "write_file",
        ToolKind::Edit,
        None,
        &["file_path"],
    ),
    (Dialect::Qwen, "edit", ToolKind::Edit, None, &["file_path"]),
    (
        Dialect::Qwen,
        "list_directory",
        ToolKind::Read,
        None,
        &["path"],
    ),
    (Dialect::Qwen, "glob", ToolKind::Search, None, &["path"]),
    (
        Dialect::Qwen,
        "grep_search",
        ToolKind::Search,
        None,
        &["path"],
    ),
    (Dialect::Qwen, "todo_write", ToolKind::Plan, None, &[]),
    (
        Dialect::Amp,
        "shell_command",
        ToolKind::Shell,
        Some("command"),
        &["cwd"],
    ),
    (Dialect::Amp, "Bash", ToolKind::Shell, Some("cmd"), &["cwd"]),
    (Dialect::Amp, "apply_patch", ToolKind::Edit, None, &[]),
    (Dialect::Amp, "edit_file", ToolKind::Edit, None, &["path"]),
    (Dialect::Amp, "create_file", ToolKind::Edit, None, &["path"]),
    (Dialect::Amp, "Read", ToolKind::Read, None, &["path"]),
    (Dialect::Amp, "Grep", ToolKind::Search, None, &["path"]),
    (Dialect::Amp, "Task", ToolKind::Agent, None, &[]),
];

/// The row of tool `name` of `dialect`, if known.
pub fn meaning(dialect: Dialect, name: &str) -> Option<&'static ToolRow> {
    TOOL_MEANINGS
        .iter()
        .find(|(d, n, ..)| *d == dialect && *n == name)
}
