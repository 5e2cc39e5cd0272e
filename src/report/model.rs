//! The run model a report is drawn from: threads of items (text, thinking, tool calls with
//! their paired results, usage, notices, turn ends), subagent threads keyed by the call that
//! spawned them, and the run's totals. Built from envelope events by `Run::push` (in `build.rs`).

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::view::args::Args;
use crate::view::diff::{self, Diff};

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Worth knowing (compaction, a repaired line).
    Info,
    /// Something went wrong and the run went on (retries, rate limits, denials).
    Warn,
    /// A failure (API error, policy violation, no result).
    Error,
}

impl Level {
    /// The CSS class and filter name.
    pub fn class(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// One-line event worth showing: its envelope type and what it says.
#[derive(Debug, Clone)]
pub struct Notice {
    /// Envelope `seq`.
    pub seq: u64,
    /// How loud.
    pub level: Level,
    /// The envelope event type (`api.retry`, `diagnostic`, …).
    pub kind: String,
    /// What happened, as text.
    pub text: String,
}

/// One entry of a thread, in stream order.
#[derive(Debug, Clone)]
pub enum Item {
    /// Assistant text (markdown).
    Text {
        /// Envelope `seq`.
        seq: u64,
        /// The text (may be empty when the source had none).
        text: String,
    },
    /// A thinking block; `None` text when redacted or absent.
    Thinking {
        /// Envelope `seq`.
        seq: u64,
        /// The thinking text.
        text: Option<String>,
        /// A `redacted_thinking` block.
        redacted: bool,
    },
    /// Text the CLI sent as the user (a subagent's prompt, a replayed prompt, a synthetic
    /// message).
    User {
        /// Envelope `seq`.
        seq: u64,
        /// The text.
        text: String,
        /// `is_synthetic` or a replay: not typed by a person.
        synthetic: bool,
    },
    /// A tool call (index into [`Run::calls`]).
    Call(usize),
    /// The usage record of one API message (index into [`Run::usages`]).
    Usage(usize),
    /// A notice.
    Notice(Notice),
    /// A `turn.end` (index into [`Run::turn_ends`]).
    TurnEnd(usize),
    /// A `session.init` (index into [`Run::inits`]).
    Init(usize),
}

/// Token counts of one message or a total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read input tokens.
    pub cache_read: u64,
    /// Cache-creation (write) input tokens.
    pub cache_write: u64,
}

impl Tokens {
    /// Read the four counts from an API `usage` object (missing members count 0).
    pub fn of(v: &Value) -> Tokens {
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        Tokens {
            input: n("input_tokens"),
            output: n("output_tokens"),
            cache_read: n("cache_read_input_tokens"),
            cache_write: n("cache_creation_input_tokens"),
        }
    }

    /// Add `o` to these counts.
    pub fn add(&mut self, o: &Tokens) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
    }

    /// All four summed.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// A `usage` event.
#[derive(Debug, Clone)]
pub struct Usage {
    /// Envelope `seq`.
    pub seq: u64,
    /// The model that answered.
    pub model: Option<String>,
    /// Its tokens.
    pub tokens: Tokens,
    /// Why the message stopped, when known.
    pub stop_reason: Option<String>,
    /// No final count arrived.
    pub provisional: bool,
    /// The subagent call it belongs to.
    pub parent: Option<String>,
    /// When the message ended (µs since the epoch), when known.
    pub at_us: Option<i64>,
}

/// A tool result.
#[derive(Debug, Clone)]
pub struct ToolResult {
    /// Envelope `seq`.
    pub seq: u64,
    /// `is_error`.
    pub is_error: bool,
    /// `exit_code`: a command's exit status, where its agent states it.
    pub exit_code: Option<i64>,
    /// The content as text (blocks joined; images described).
    pub body: String,
    /// When it arrived (µs since the epoch), when known.
    pub at_us: Option<i64>,
}

/// What the CLI said about the subagent a Task/Agent call ran (`task.*` events).
#[derive(Debug, Clone, Default)]
pub struct Task {
    /// `subagent_type` (or `task_type`).
    pub kind: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// The last `task.notification` status (`completed`, `failed`, …).
    pub status: Option<String>,
    /// Its summary.
    pub summary: Option<String>,
    /// The last usage object the CLI reported (`total_tokens`, `tool_uses`, `duration_ms`).
    pub usage: Option<Value>,
}

/// A tool call and what became of it.
#[derive(Debug, Clone)]
pub struct Call {
    /// Envelope `seq` of the call (or of the result, for a result without a call).
    pub seq: u64,
    /// `tool_use_id`.
    pub id: Option<String>,
    /// Tool name (`?` when the source had none).
    pub name: String,
    /// The input object (`Null` when it did not parse).
    pub input: Value,
    /// Why the input is null.
    pub input_error: Option<String>,
    /// Whose tool names `name` is (the run's agent: [`crate::tool::Dialect`]).
    pub dialect: crate::tool::Dialect,
    /// The subagent call this call was made in.
    pub parent: Option<String>,
    /// When it was made (µs since the epoch), when known.
    pub at_us: Option<i64>,
    /// Its result, once paired.
    pub result: Option<ToolResult>,
    /// Later, different inputs for the same id (`tool.call.revised`).
    pub revised: Vec<Value>,
    /// No `tool.call` was seen: this entry holds only a result.
    pub orphan: bool,
}

/// Lines of context around each change in a call's diffs.
const CONTEXT: usize = 3;

impl Call {
    /// The file this call changes and a diff per replacement (see [`diff::file_change`]).
    pub fn edits(&self) -> Option<(String, Vec<Diff>)> {
        let json = serde_json::to_string(&self.input).ok()?;
        let change = diff::file_change(self.dialect, &self.name, &Args::parse(&json))?;
        let diffs = change.replacements.iter();
        let diffs = diffs.map(|(o, n)| diff::diff(o, n, CONTEXT)).collect();
        Some((change.path.into_owned(), diffs))
    }

    /// How long the call took, when both ends have times.
    pub fn duration_us(&self) -> Option<i64> {
        let r = self.result.as_ref()?;
        Some((r.at_us? - self.at_us?).max(0))
    }

    /// Whether it failed.
    pub fn failed(&self) -> bool {
        self.result.as_ref().is_some_and(|r| r.is_error)
    }
}

/// A `turn.end` (one per `result` line).
#[derive(Debug, Clone, Default)]
pub struct TurnEnd {
    /// Envelope `seq`.
    pub seq: u64,
    /// `outcome`.
    pub outcome: String,
    /// `is_error`.
    pub is_error: bool,
    /// The result text.
    pub result: Option<String>,
    /// `cost_usd` (cumulative in multi-turn sessions).
    pub cost_usd: Option<f64>,
    /// `duration_ms`.
    pub duration_ms: Option<u64>,
    /// `duration_api_ms`.
    pub duration_api_ms: Option<u64>,
    /// `num_turns`.
    pub num_turns: Option<u64>,
    /// `usage`.
    pub tokens: Tokens,
    /// Number of `permission_denials`.
    pub denials: usize,
    /// `errors` as text.
    pub errors: Vec<String>,
    /// The subagent call it belongs to (a background subagent's result).
    pub parent: Option<String>,
}

/// A `session.init`.
#[derive(Debug, Clone, Default)]
pub struct Init {
    /// Envelope `seq`.
    pub seq: u64,
    /// `model`.
    pub model: Option<String>,
    /// `cwd`.
    pub cwd: Option<String>,
    /// `cli_version`.
    pub cli_version: Option<String>,
    /// `agent` (another agent's stream: [`crate::dialect`]).
    pub agent: Option<String>,
    /// `permission_mode`.
    pub permission_mode: Option<String>,
    /// Number of tools offered.
    pub tools: usize,
    /// `session_id`.
    pub session_id: Option<String>,
}

/// The `run.end` summary.
#[derive(Debug, Clone, Default)]
pub struct RunEnd {
    /// Envelope `seq`.
    pub seq: u64,
    /// `cause`.
    pub cause: String,
    /// `turns` (result lines).
    pub turns: Option<u64>,
    /// `cli_version`.
    pub cli_version: Option<String>,
    /// `agent` (another agent's stream: [`crate::dialect`]).
    pub agent: Option<String>,
    /// The run's tokens.
    pub tokens: Tokens,
    /// Whether the counts are provisional.
    pub provisional: bool,
    /// `cost_usd`.
    pub cost_usd: Option<f64>,
    /// `api_messages`.
    pub api_messages: Option<u64>,
    /// `tool_calls`.
    pub tool_calls: Option<u64>,
    /// `exit_code` (spawned or recorded runs).
    pub exit_code: Option<i64>,
    /// `signal`.
    pub signal: Option<String>,
    /// `elapsed_ms`.
    pub elapsed_ms: Option<u64>,
    /// `stats.lines`.
    pub lines: Option<u64>,
    /// `stats.diagnostics`.
    pub diagnostics: Option<u64>,
}

/// Everything a report shows about one run.
#[derive(Debug, Default)]
pub struct Run {
    /// The main thread.
    pub main: Vec<Item>,
    /// Subagent threads: the spawning call's `tool_use_id` → its items, in first-seen order.
    pub threads: Vec<(String, Vec<Item>)>,
    /// `threads` index by id.
    pub thread_index: HashMap<String, usize>,
    /// Every tool call.
    pub calls: Vec<Call>,
    /// `calls` index by `tool_use_id`.
    pub call_index: HashMap<String, usize>,
    /// Subagent facts by the spawning call's id.
    pub tasks: HashMap<String, Task>,
    /// Every `usage` event.
    pub usages: Vec<Usage>,
    /// Every `turn.end`.
    pub turn_ends: Vec<TurnEnd>,
    /// Every `session.init`.
    pub inits: Vec<Init>,
    /// The `run.end`.
    pub end: Option<RunEnd>,
    /// Notices by level.
    pub notice_counts: BTreeMap<Level, u64>,
    /// Events shown nowhere else, by type.
    pub other: BTreeMap<String, u64>,
    /// Ephemeral events (deltas, stream lifecycle) dropped.
    pub ephemeral: u64,
    /// Events seen.
    pub events: u64,
    /// `[REDACTED:` placeholders in the events.
    pub placeholders: u64,
    /// Earliest and latest event time (µs since the epoch), when known.
    pub span_us: Option<(i64, i64)>,
}

impl Run {
    /// The items of the thread a `parent_tool_use_id` names (the main thread for `None`).
    pub fn thread_mut(&mut self, parent: Option<&str>) -> &mut Vec<Item> {
        let Some(p) = parent else {
            return &mut self.main;
        };
        let i = match self.thread_index.get(p) {
            Some(&i) => i,
            None => {
                self.threads.push((p.to_owned(), Vec::new()));
                self.thread_index
                    .insert(p.to_owned(), self.threads.len() - 1);
                self.threads.len() - 1
            }
        };
        &mut self.threads[i].1
    }

    /// The subagent thread of call `id`, if it had one.
    pub fn thread(&self, id: &str) -> Option<&[Item]> {
        self.thread_index.get(id).map(|&i| &self.threads[i].1[..])
    }

    /// Models seen (init, usage), sorted, without repeats.
    pub fn models(&self) -> Vec<String> {
        let mut m: Vec<String> = self
            .inits
            .iter()
            .filter_map(|i| i.model.clone())
            .chain(self.usages.iter().filter_map(|u| u.model.clone()))
            .filter(|m| !m.is_empty() && m != "<synthetic>")
            .collect();
        m.sort();
        m.dedup();
        m
    }

    /// The agent, for people: `Claude Code` unless `run.end` or an init names another.
    pub fn agent(&self) -> &'static str {
        let named = self
            .end
            .as_ref()
            .and_then(|e| e.agent.as_deref())
            .or_else(|| self.inits.iter().rev().find_map(|i| i.agent.as_deref()));
        crate::dialect::agent_display(named)
    }

    /// The agent's version: `run.end`'s, else the last init's.
    pub fn cli_version(&self) -> Option<&str> {
        self.end
            .as_ref()
            .and_then(|e| e.cli_version.as_deref())
            .or_else(|| {
                self.inits
                    .iter()
                    .rev()
                    .find_map(|i| i.cli_version.as_deref())
            })
    }
}

/// A subagent's own totals, its nested subagents included.
#[derive(Debug, Clone, Copy, Default)]
pub struct Subtotals {
    /// Tokens of its API messages.
    pub tokens: Tokens,
    /// API messages.
    pub messages: u64,
    /// Tool calls.
    pub calls: u64,
    /// Tool calls that failed.
    pub errors: u64,
}

impl Run {
    /// A subagent call's type and description: from the CLI's `task.started`, else from the
    /// call's input.
    pub fn subagent_label<'a>(&'a self, c: &'a Call) -> (Option<&'a str>, Option<&'a str>) {
        let task = c.id.as_deref().and_then(|id| self.tasks.get(id));
        let input = |k: &str| c.input.get(k).and_then(Value::as_str);
        (
            task.and_then(|t| t.kind.as_deref())
                .or_else(|| input("subagent_type")),
            task.and_then(|t| t.description.as_deref())
                .or_else(|| input("description")),
        )
    }

    /// The totals of every subagent thread (by its call's id), nested threads included:
    /// one post-order walk, so a chain of any length costs linear time. A thread that is its
    /// own ancestor (a cycle of `parent_tool_use_id`s) is counted where the walk meets it first.
    pub fn all_subtotals(&self) -> HashMap<&str, Subtotals> {
        let mut memo: HashMap<&str, Subtotals> = HashMap::new();
        let mut open: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for (root, _) in &self.threads {
            let mut stack = vec![(root.as_str(), false)];
            while let Some((id, done)) = stack.pop() {
                if memo.contains_key(id) {
                    continue;
                }
                if !done {
                    if !open.insert(id) {
                        continue;
                    }
                    stack.push((id, true));
                    for c in self.child_threads(id) {
                        if !memo.contains_key(c) && !open.contains(c) {
                            stack.push((c, false));
                        }
                    }
                    continue;
                }
                let mut t = self.own_totals(id);
                for c in self.child_threads(id) {
                    if let Some(ct) = memo.get(c) {
                        t.tokens.add(&ct.tokens);
                        t.messages += ct.messages;
                        t.calls += ct.calls;
                        t.errors += ct.errors;
                    }
                }
                memo.insert(id, t);
                open.remove(id);
            }
        }
        memo
    }

    /// The ids of the calls in thread `id` that ran subagent threads.
    fn child_threads(&self, id: &str) -> impl Iterator<Item = &str> {
        self.thread(id)
            .unwrap_or(&[])
            .iter()
            .filter_map(|it| match it {
                Item::Call(i) => self.calls[*i]
                    .id
                    .as_deref()
                    .filter(|c| self.thread_index.contains_key(*c)),
                _ => None,
            })
    }

    /// Thread `id`'s own totals, without its nested threads.
    fn own_totals(&self, id: &str) -> Subtotals {
        let mut t = Subtotals::default();
        for it in self.thread(id).unwrap_or(&[]) {
            match it {
                Item::Usage(i) => {
                    t.tokens.add(&self.usages[*i].tokens);
                    t.messages += 1;
                }
                Item::Call(i) => {
                    t.calls += 1;
                    t.errors += u64::from(self.calls[*i].failed());
                }
                _ => {}
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(events: &[(&str, Value)]) -> Run {
        let mut r = Run::default();
        let mut ix = crate::json::fields::Index::default();
        for (seq, (kind, v)) in events.iter().enumerate() {
            let bytes = v.to_string();
            assert!(ix.build(bytes.as_bytes()));
            r.push(kind, seq as u64, &ix.view(bytes.as_bytes()), 0);
        }
        r
    }

    #[test]
    fn subtotals_include_nested_threads_and_survive_cycles() {
        let call = |p: Option<&str>, id: &str| {
            (
                "tool.call",
                json!({"parent_tool_use_id": p, "tool_use_id": id, "name": "Task", "input": {}}),
            )
        };
        let usage = |p: &str, n: u64| {
            (
                "usage",
                json!({"parent_tool_use_id": p, "usage": {"input_tokens": n}}),
            )
        };
        let r = run(&[
            call(None, "t0"),
            usage("t0", 1),
            call(Some("t0"), "t1"),
            usage("t1", 10),
            call(Some("t1"), "x"),
            (
                "tool.result",
                json!({"parent_tool_use_id": "t1", "tool_use_id": "x", "is_error": true, "content": "no"}),
            ),
            call(Some("cB"), "cA"),
            call(Some("cA"), "cB"),
        ]);
        let s = r.all_subtotals();
        assert_eq!(
            (
                s["t0"].messages,
                s["t0"].calls,
                s["t0"].errors,
                s["t0"].tokens.input
            ),
            (2, 2, 1, 11)
        );
        assert_eq!((s["t1"].messages, s["t1"].calls, s["t1"].errors), (1, 1, 1));
        assert!(s.contains_key("cA") && s.contains_key("cB"));
    }
}
