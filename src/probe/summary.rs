//! What a probe found: one [`RunReport`] per scenario and mode, `summary.json`, and the table
//! written on stderr.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::api::{Kind, Served};

/// Version of the `summary.json` document.
pub const SUMMARY_VERSION: u32 = 1;

/// Requests the API served in one run, by kind.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Requests {
    /// `/v1/messages` with tools (main conversation and subagents).
    pub main: u64,
    /// `/v1/messages` without tools (titles, topic checks, warm-ups, …).
    pub side: u64,
    /// `/v1/messages/count_tokens`.
    pub count_tokens: u64,
    /// `GET /v1/models`.
    pub models: u64,
    /// Anything else (answered `200 {}`).
    pub unknown: u64,
}

impl Requests {
    /// Count `served` by kind.
    pub fn of(served: &[Served]) -> Self {
        let mut r = Requests::default();
        for s in served {
            let n = match s.kind {
                Kind::Main => &mut r.main,
                Kind::Side => &mut r.side,
                Kind::CountTokens => &mut r.count_tokens,
                Kind::Models => &mut r.models,
                Kind::Unknown => &mut r.unknown,
            };
            *n += 1;
        }
        r
    }

    /// `3 main, 1 side` (kinds with none left out).
    pub fn short(&self) -> String {
        let parts: Vec<String> = [
            (self.main, "main"),
            (self.side, "side"),
            (self.count_tokens, "count"),
            (self.models, "models"),
            (self.unknown, "unknown"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, k)| format!("{n} {k}"))
        .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

/// One scenario run in one mode.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunReport {
    /// The scenario.
    pub scenario: String,
    /// `stream`, `partial` or `json`.
    pub mode: String,
    /// The capture's file name in the output directory.
    pub file: String,
    /// The CLI's arguments (the working directory written `$CWD`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The resumed second run's arguments (a scenario with `resume`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resume_args: Vec<String>,
    /// The CLI's exit code (`None`: it died by a signal or could not be reaped).
    pub exit: Option<i32>,
    /// The signal that ended it, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// How the run ended (`exit`, `timeout`, `signal`, `interrupted`, …).
    pub end: String,
    /// Stdout lines.
    pub lines: u64,
    /// Stdout lines that are not JSON objects.
    pub non_json: u64,
    /// `subtype` of every `result` line, in order.
    pub results: Vec<String>,
    /// `is_error` of the last `result` line.
    pub is_error: Option<bool>,
    /// Requests served, by kind.
    pub requests: Requests,
    /// Requests the API did not know (`METHOD PATH`).
    pub unknown_requests: Vec<String>,
    /// Main requests answered after the script ran out.
    pub exhausted: u64,
    /// Scripted replies the CLI never asked for.
    pub unused_turns: Vec<String>,
    /// Processes the CLI left running that were killed after it ended.
    pub leftovers_killed: usize,
    /// The API's port (ephemeral: different on every run).
    pub port: u16,
    /// Whether the API's port was free again after the run.
    pub port_released: bool,
    /// Why the run failed (empty: it did not).
    pub problems: Vec<String>,
    /// Unexpected but harmless things (unknown requests, extra requests, leftovers).
    pub notes: Vec<String>,
    /// The last lines of the CLI's stderr.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stderr_tail: String,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl RunReport {
    /// Whether the run failed.
    pub fn failed(&self) -> bool {
        !self.problems.is_empty()
    }

    /// `plain.stream`.
    pub fn id(&self) -> String {
        format!("{}.{}", self.scenario, self.mode)
    }
}

/// The whole probe.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// [`SUMMARY_VERSION`].
    pub summary_version: u32,
    /// What wrote it.
    pub generator: String,
    /// The agent CLI probed (`claude`, `codex`, …).
    pub agent: String,
    /// The CLI binary probed.
    pub claude_bin: String,
    /// What `claude --version` said (`None`: nothing usable).
    pub cli_version: Option<String>,
    /// The modes run.
    pub modes: Vec<String>,
    /// Every run, in order.
    pub runs: Vec<RunReport>,
    /// Runs that failed.
    pub failed: usize,
    /// Scenarios not run because an earlier one failed (without `--keep-going`).
    pub not_run: Vec<String>,
    /// Every unknown request of every run, counted (`METHOD PATH` → count).
    pub unknown_requests: BTreeMap<String, u64>,
}

impl Summary {
    /// The document, pretty-printed.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("summary serializes");
        s.push('\n');
        s
    }

    /// The human table (for stderr).
    pub fn table(&self) -> String {
        let rows: Vec<[String; 6]> = self
            .runs
            .iter()
            .map(|r| {
                let exit = match (&r.exit, &r.signal) {
                    (Some(c), _) => c.to_string(),
                    (None, Some(s)) => s.clone(),
                    _ => "?".into(),
                };
                let result = match (r.results.last(), r.is_error) {
                    (Some(s), Some(true)) => format!("{s} (is_error)"),
                    (Some(s), _) => s.clone(),
                    (None, _) => "-".into(),
                };
                let mut unexpected: Vec<String> = r.problems.clone();
                unexpected.extend(r.notes.iter().cloned());
                [
                    r.id(),
                    exit,
                    r.lines.to_string(),
                    result,
                    r.requests.short(),
                    if unexpected.is_empty() {
                        "-".into()
                    } else {
                        unexpected.join("; ")
                    },
                ]
            })
            .collect();
        let head = ["run", "exit", "lines", "result", "requests", "unexpected"];
        let mut width = head.map(str::len);
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r.iter()).take(5) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |cells: [&str; 6]| {
            for (i, c) in cells.iter().enumerate().take(5) {
                let _ = write!(out, "{c:<w$}  ", w = width[i]);
            }
            let _ = writeln!(out, "{}", cells[5]);
        };
        line(head);
        for r in &rows {
            line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]);
        }
        let _ = write!(
            out,
            "{} run(s), {} failed; CLI {}",
            self.runs.len(),
            self.failed,
            self.cli_version.as_deref().unwrap_or("version unknown")
        );
        if !self.not_run.is_empty() {
            let _ = write!(out, "; not run: {}", self.not_run.join(", "));
        }
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lines_up_and_names_what_was_unexpected() {
        let ok = RunReport {
            scenario: "plain".into(),
            mode: "stream".into(),
            exit: Some(0),
            lines: 5,
            results: vec!["success".into()],
            requests: Requests {
                main: 1,
                side: 2,
                ..Requests::default()
            },
            ..RunReport::default()
        };
        let bad = RunReport {
            scenario: "max_turns".into(),
            mode: "partial".into(),
            signal: Some("SIGKILL".into()),
            problems: vec!["no result line".into()],
            ..RunReport::default()
        };
        let s = Summary {
            summary_version: SUMMARY_VERSION,
            generator: "t".into(),
            agent: "claude".into(),
            claude_bin: "c".into(),
            cli_version: Some("2.1.45".into()),
            modes: vec!["stream".into()],
            failed: 1,
            runs: vec![ok, bad],
            not_run: vec![],
            unknown_requests: BTreeMap::new(),
        };
        let t = s.table();
        let lines: Vec<&str> = t.lines().collect();
        let cells: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(cells[..4], ["plain.stream", "0", "5", "success"], "{t}");
        // Columns line up: every row's `lines` cell starts where the header's does.
        let col = lines[0].find("lines").unwrap();
        assert_eq!(&lines[1][col..col + 1], "5", "{t}");
        assert_eq!(&lines[2][col..col + 1], "0", "{t}");
        assert!(
            lines[1].contains("1 main, 2 side") && lines[1].ends_with('-'),
            "{t}"
        );
        assert!(
            lines[2].contains("SIGKILL") && lines[2].ends_with("no result line"),
            "{t}"
        );
        assert!(lines[3].contains("2 run(s), 1 failed; CLI 2.1.45"), "{t}");
        assert!(s.to_json().contains("\"summary_version\": 1"));
    }
}
