//! Rendering a diff report as text (terminal), markdown (CI summary / PR comment) or JSON.

use std::fmt::Write;

use serde::Serialize;

use super::Profile;
use super::change::{Change, ChangeKind, Severity};
use crate::error::{counted, sanitize};

/// Markdown sections (other than breaking) longer than this are folded in `<details>`.
const FOLD_ROWS: usize = 20;

/// Version of the diff JSON document.
pub const DIFF_VERSION: u32 = 1;

/// One side of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// What the user named (a path).
    pub source: String,
    /// CLI versions seen.
    pub cli_versions: Vec<String>,
    /// Input files.
    pub streams: u64,
    /// Objects profiled.
    pub objects: u64,
    /// Lines that were not stream-json objects (non-JSON, non-object, foreign).
    pub skipped_lines: u64,
}

impl Side {
    /// Describe `p`, read from `source`.
    pub fn of(source: &str, p: &Profile) -> Side {
        Side {
            source: sanitize(source),
            cli_versions: p.cli_versions.keys().cloned().collect(),
            streams: p.input.streams,
            objects: p.input.objects,
            skipped_lines: p.input.non_json + p.input.non_object + p.input.foreign,
        }
    }

    fn summary(&self) -> String {
        let v = if self.cli_versions.is_empty() {
            "no CLI version".to_owned()
        } else {
            format!("CLI {}", self.cli_versions.join(", "))
        };
        let mut s = format!(
            "{v}; {}, {}",
            counted(self.streams, "file"),
            counted(self.objects, "object")
        );
        if self.skipped_lines > 0 {
            let _ = write!(s, ", {}", counted(self.skipped_lines, "other line"));
        }
        s
    }
}

/// Counts of not-allowed changes per severity.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Summary {
    /// Breaking changes.
    pub breaking: usize,
    /// Additive changes.
    pub additive: usize,
    /// Info changes.
    pub info: usize,
    /// Changes accepted by `--allow`.
    pub allowed: usize,
}

/// A finished comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Document version.
    pub diff_version: u32,
    /// OLD side.
    pub old: Side,
    /// NEW side.
    pub new: Side,
    /// The `--fail-on` threshold.
    pub fail_on: Severity,
    /// True when some not-allowed change is at or above `fail_on`.
    pub failed: bool,
    /// Counts.
    pub summary: Summary,
    /// All changes, allowed ones marked.
    pub changes: Vec<Change>,
    /// Text and markdown list the changes `--allow` accepted one by one (`diff -v`); otherwise
    /// only their count. JSON always lists them.
    #[serde(skip)]
    pub list_allowed: bool,
}

impl Report {
    /// Build a report (changes already marked by an allow list, if any).
    pub fn new(old: Side, new: Side, changes: Vec<Change>, fail_on: Severity) -> Report {
        let mut summary = Summary::default();
        for c in &changes {
            if c.allowed {
                summary.allowed += 1;
                continue;
            }
            match c.severity {
                Severity::Breaking => summary.breaking += 1,
                Severity::Additive => summary.additive += 1,
                Severity::Info => summary.info += 1,
            }
        }
        let failed = changes.iter().any(|c| !c.allowed && c.severity <= fail_on);
        Report {
            diff_version: DIFF_VERSION,
            old,
            new,
            fail_on,
            failed,
            summary,
            changes,
            list_allowed: false,
        }
    }

    /// List allowed changes one by one in text and markdown (`diff -v`).
    pub fn list_allowed(mut self, yes: bool) -> Report {
        self.list_allowed = yes;
        self
    }

    /// Pretty JSON, newline-terminated.
    pub fn json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("report serializes");
        s.push('\n');
        s
    }

    fn verdict(&self) -> String {
        let s = &self.summary;
        let mut t = format!(
            "{} breaking, {} additive, {} info",
            s.breaking, s.additive, s.info
        );
        if s.allowed > 0 {
            let _ = write!(t, " ({} allowed)", s.allowed);
        }
        if self.failed {
            let _ = write!(t, ": drift at or above --fail-on {}", self.fail_on.name());
        } else {
            let _ = write!(
                t,
                ": no drift at or above --fail-on {}",
                self.fail_on.name()
            );
        }
        t
    }

    /// Plain text for a terminal or a log.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "old: {} ({})", self.old.source, self.old.summary());
        let _ = writeln!(o, "new: {} ({})", self.new.source, self.new.summary());
        for (title, sev, allowed) in sections() {
            let list: Vec<&Change> = self.section(sev, allowed).collect();
            if list.is_empty() {
                continue;
            }
            if allowed && !self.list_allowed {
                let _ = writeln!(o, "\n{title} ({}): not listed; -v lists them", list.len());
                continue;
            }
            let _ = writeln!(o, "\n{title} ({})", list.len());
            for c in list {
                let _ = writeln!(
                    o,
                    "  {:<16} {}  {}",
                    c.change.name(),
                    subject(c, false),
                    sanitize(&c.detail)
                );
                if let Some(at) = at_text(c, false) {
                    let _ = writeln!(o, "  {:<16} first seen: {at}", "");
                }
            }
        }
        let _ = writeln!(o, "\n{}", self.verdict());
        o
    }

    /// GitHub-flavoured markdown.
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "### stream-json drift: `{}` → `{}`\n",
            md(&self.old.source),
            md(&self.new.source)
        );
        let _ = writeln!(o, "| | old | new |\n|---|---|---|");
        let _ = writeln!(
            o,
            "| CLI versions | {} | {} |",
            md(&self.old.cli_versions.join(", ")),
            md(&self.new.cli_versions.join(", "))
        );
        let _ = writeln!(
            o,
            "| files / objects | {} / {} | {} / {} |\n",
            self.old.streams, self.old.objects, self.new.streams, self.new.objects
        );
        let _ = writeln!(o, "**{}**", self.verdict());
        for (title, sev, allowed) in sections() {
            let list: Vec<&Change> = self.section(sev, allowed).collect();
            if list.is_empty() {
                continue;
            }
            if allowed && !self.list_allowed {
                let _ = writeln!(
                    o,
                    "\n#### {title} ({})\n\nNot listed (`diff -v` lists them).",
                    list.len()
                );
                continue;
            }
            // Long non-breaking sections fold away, so a PR comment leads with what fails.
            let fold = sev != Some(Severity::Breaking) && list.len() > FOLD_ROWS;
            let _ = writeln!(o, "\n#### {title} ({})\n", list.len());
            if fold {
                let _ = writeln!(
                    o,
                    "<details><summary>show {}</summary>\n",
                    counted(list.len() as u64, "change")
                );
            }
            let _ = writeln!(
                o,
                "| change | where | detail | first seen |\n|---|---|---|---|"
            );
            for c in list {
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} |",
                    c.change.name(),
                    subject(c, true),
                    md(&c.detail),
                    at_text(c, true).unwrap_or_default()
                );
            }
            if fold {
                let _ = writeln!(o, "\n</details>");
            }
        }
        o
    }

    fn section(&self, sev: Option<Severity>, allowed: bool) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(move |c| c.allowed == allowed && (allowed || Some(c.severity) == sev))
    }
}

fn sections() -> [(&'static str, Option<Severity>, bool); 4] {
    [
        ("Breaking", Some(Severity::Breaking), false),
        ("Additive", Some(Severity::Additive), false),
        ("Info", Some(Severity::Info), false),
        ("Allowed", None, true),
    ]
}

/// Where each side first had what changed: `old FILE:LINE, new FILE:LINE` (a side without it
/// left out); `None` when neither side knows (unnamed streams, old saved profiles).
fn at_text(c: &Change, markdown: bool) -> Option<String> {
    let show = |side: &str, o: &Option<super::Origin>| {
        o.as_ref().map(|o| match markdown {
            true => format!("{side} `{}`", md(&o.to_string()).replace('`', "'")),
            false => format!("{side} {}", sanitize(&o.to_string())),
        })
    };
    let parts: Vec<String> = [show("old", &c.old_at), show("new", &c.new_at)]
        .into_iter()
        .flatten()
        .collect();
    (!parts.is_empty()).then(|| parts.join(if markdown { "<br>" } else { ", " }))
}

/// `kind path [= value]`, code-formatted in markdown.
fn subject(c: &Change, markdown: bool) -> String {
    let code = |s: &str| {
        if markdown {
            format!("`{}`", md(s).replace('`', "'"))
        } else {
            sanitize(s)
        }
    };
    let mut s = code(&c.kind);
    if let Some(p) = &c.path {
        s.push(' ');
        s.push_str(&code(p));
    }
    match (c.change, &c.value, &c.from) {
        (ChangeKind::ToolRenamed, Some(v), Some(f)) => {
            let _ = write!(s, " {} → {}", code(f), code(v));
        }
        (ChangeKind::ValueAdded | ChangeKind::ValueRemoved, Some(v), _) => {
            let _ = write!(s, " = {}", code(&format!("{v:?}")));
        }
        (_, Some(v), _) => {
            let _ = write!(s, " = {}", code(v));
        }
        _ => {}
    }
    s
}

/// Escape text for a markdown table cell.
fn md(s: &str) -> String {
    sanitize(s).replace('|', "\\|").replace('\n', " ")
}
