//! Usage and totals in the pretty view: a row per turn (outcome, time, tokens, the CLI's cost)
//! and the final summary at `run.end`, whose token counts and cost are `run.end`'s own (so they
//! agree with the envelope to the token), with tool counts and errors, files touched and
//! subagents counted along the way.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::style::Role;
use super::term::Gutter;
use super::{Pretty, b, n, one_line, s, text, u};
use crate::json::fields::{Fields, members_named};
use crate::view::args::Args;
use crate::view::num::{Style::Terse, plural};
use crate::view::tool::{self, Kind};

/// Token counts of one usage record or a sum of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Tokens {
    /// The counts of a usage object (members that are missing or not numbers count 0).
    pub(super) fn of(raw: Option<&[u8]>) -> Tokens {
        let [input, output, cache_read, cache_write] = raw.map_or([None; 4], |r| {
            members_named(
                r,
                [
                    "input_tokens",
                    "output_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                ],
            )
        });
        Tokens {
            input: u(input).unwrap_or(0),
            output: u(output).unwrap_or(0),
            cache_read: u(cache_read).unwrap_or(0),
            cache_write: u(cache_write).unwrap_or(0),
        }
    }

    pub(super) fn add(&mut self, o: &Tokens) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
    }

    pub(super) fn any(&self) -> bool {
        *self != Tokens::default()
    }

    /// `in 1.2k`, `out 340`, `cache r 45k / w 2.0k`.
    pub(super) fn parts(&self) -> [String; 3] {
        [
            format!("in {}", Terse.tokens(self.input)),
            format!("out {}", Terse.tokens(self.output)),
            format!(
                "cache r {} / w {}",
                Terse.tokens(self.cache_read),
                Terse.tokens(self.cache_write)
            ),
        ]
    }
}

/// `12,345`.
fn exact(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a file went through.
#[derive(Debug, Default)]
struct Touched {
    added: u64,
    removed: u64,
    written: bool,
    edits: u64,
}

/// What a call of a file-changing tool does to its file (applied when it succeeds).
#[derive(Debug, Clone)]
pub(super) struct Change {
    path: String,
    added: u64,
    removed: u64,
    written: bool,
    edits: u64,
}

/// The change a call of `name` with `a` makes, if it changes a file.
pub(super) fn change_of(d: crate::tool::Dialect, name: &str, a: &Args<'_>) -> Option<Change> {
    let path = tool::path(a)?.into_owned();
    let mut c = Change {
        path,
        added: 0,
        removed: 0,
        written: false,
        edits: 0,
    };
    match tool::kind(d, name) {
        Kind::Write => {
            c.written = true;
            c.added = a.size("content").map_or(0, |(l, _)| l);
        }
        Kind::Edit | Kind::MultiEdit => {
            for (o, nw) in crate::view::diff::replacements(d, name, a) {
                let d = crate::view::diff::diff(&o, &nw, 0);
                c.edits += 1;
                c.added += d.added;
                c.removed += d.removed;
            }
        }
        Kind::Notebook => c.edits = 1,
        _ => return None,
    }
    Some(c)
}

/// What the summary counts as the run goes.
#[derive(Default)]
pub(super) struct Tally {
    tools: BTreeMap<String, (u64, u64)>,
    files: BTreeMap<String, Touched>,
    read: std::collections::BTreeSet<String>,
    pub(super) subagents: u64,
    turns: u64,
    wall_ms: u64,
    api_ms: u64,
}

impl Tally {
    pub(super) fn call(&mut self, d: crate::tool::Dialect, name: &str, a: &Args<'_>) {
        self.tools.entry(name.to_owned()).or_default().0 += 1;
        if tool::kind(d, name) == Kind::Read
            && let Some(path) = tool::path(a)
        {
            self.read.insert(path.into_owned());
        }
    }

    /// A change a call made, counted once its result says it succeeded.
    pub(super) fn touch(&mut self, c: Change) {
        let f = self.files.entry(c.path).or_default();
        f.written |= c.written;
        f.edits += c.edits;
        f.added += c.added;
        f.removed += c.removed;
    }

    pub(super) fn result(&mut self, name: &str, error: bool) {
        if error {
            self.tools.entry(name.to_owned()).or_default().1 += 1;
        }
    }

    pub(super) fn turn(&mut self, e: &Fields<'_>) {
        self.turns += 1;
        self.wall_ms += u(e.json("duration_ms")).unwrap_or(0);
        self.api_ms += u(e.json("duration_api_ms")).unwrap_or(0);
    }
}

impl<W: Write> Pretty<W> {
    pub(super) fn turn_end(&mut self, e: &Fields<'_>) -> io::Result<()> {
        self.tally.turn(e);
        self.streamed.clear();
        let g = Gutter::default();
        let outcome = s(e.json("outcome")).unwrap_or_default().into_owned();
        let ok = outcome == "success";
        let dot = self.t.g.dot;
        let mut parts = vec![
            format!("turn {}", self.tally.turns),
            one_line(&outcome, &self.t.g),
        ];
        if let Some(ms) = u(e.json("duration_ms")) {
            let api =
                u(e.json("duration_api_ms")).map(|a| format!(" (API {})", Terse.duration_ms(a)));
            parts.push(format!(
                "{}{}",
                Terse.duration_ms(ms),
                api.unwrap_or_default()
            ));
        }
        if let Some(t) = u(e.json("num_turns")) {
            parts.push(plural(t, "API turn", "API turns"));
        }
        let tokens = Tokens::of(e.json("usage"));
        parts.extend(tokens.parts());
        parts.push(match n(e.json("cost_usd")) {
            Some(c) => format!("total {}", Terse.usd(c)),
            None => "cost n/a".into(),
        });
        let lead = format!("{} ", self.t.g.rule.repeat(2));
        let role = if ok { Role::Ok } else { Role::Error };
        self.t
            .packed(&g, 0, role, &lead, &parts, &format!(" {dot} "))?;
        if !ok {
            let why = match s(e.json("result")) {
                Some(r) if !r.is_empty() => r.into_owned(),
                _ => e
                    .json("errors")
                    .and_then(|r| serde_json::from_slice::<Vec<String>>(r).ok())
                    .map(|v| v.join("; "))
                    .unwrap_or_default(),
            };
            if !why.is_empty() {
                let lead = format!("   {} ", self.t.g.error);
                self.t.untrusted_row(
                    &g,
                    0,
                    &[(Role::Error, &lead)],
                    Role::Error,
                    &one_line(&why, &self.t.g),
                )?;
            }
        }
        Ok(())
    }

    pub(super) fn run_end(&mut self, e: &Fields<'_>) -> io::Result<()> {
        let g = Gutter::default();
        let t = Tokens::of(e.json("usage"));
        let dot = self.t.g.dot;
        let cause = s(e.json("cause")).unwrap_or_default().into_owned();
        let complete = b(e.json("terminal_seen")) == Some(true);
        let mut head = vec![
            format!("{} run end", self.t.g.rule.repeat(2)),
            one_line(&cause, &self.t.g),
        ];
        let sep = format!(" {dot} ");
        if !complete {
            head.push("no result".into());
        }
        if let Some(tn) = u(e.json("turns")) {
            head.push(plural(tn, "turn", "turns"));
        }
        let wall =
            u(e.json("elapsed_ms")).or((self.tally.wall_ms > 0).then_some(self.tally.wall_ms));
        if let Some(w) = wall {
            head.push(format!("wall {}", Terse.duration_ms(w)));
        }
        if self.tally.api_ms > 0 {
            head.push(format!("API {}", Terse.duration_ms(self.tally.api_ms)));
        }
        if let Some(code) = e.json("exit_code") {
            head.push(format!("exit {}", text(code)));
        }
        if let Some(sig) = s(e.json("signal")) {
            head.push(format!("signal {}", one_line(&sig, &self.t.g)));
        }
        let role = if complete && (cause == "eof" || cause == "exit") {
            Role::Ok
        } else {
            Role::Warn
        };
        let lead = head.remove(0) + " ";
        self.t
            .packed(&g, 0, role, &lead, &head, &format!(" {dot} "))?;
        let provisional = e
            .json("usage")
            .and_then(|r| {
                serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(r).ok()
            })
            .and_then(|m| m.get("provisional").and_then(|v| v.as_bool()))
            == Some(true);
        let mut tokens = vec![
            format!("in {}", exact(t.input)),
            format!("out {}", exact(t.output)),
            format!("cache read {}", exact(t.cache_read)),
            format!("cache write {}", exact(t.cache_write)),
        ];
        if provisional {
            tokens.push("(provisional)".into());
        }
        self.t
            .packed(&g, 3, Role::Text, "tokens    ", &tokens, &sep)?;
        let cost = match n(e.json("cost_usd")) {
            Some(c) => format!("cost      {} (as reported by the CLI)", Terse.usd(c)),
            None => "cost      n/a (the CLI reported none)".into(),
        };
        self.t.row(&g, 3, &[(Role::Text, &cost)])?;
        let calls: u64 =
            u(e.json("tool_calls")).unwrap_or_else(|| self.tally.tools.values().map(|v| v.0).sum());
        let errors: u64 = self.tally.tools.values().map(|v| v.1).sum();
        let mut tools = vec![format!(
            "{}, {}{}",
            plural(calls, "call", "calls"),
            plural(errors, "error", "errors"),
            if self.tally.tools.is_empty() { "" } else { ":" }
        )];
        let last = self.tally.tools.len().saturating_sub(1);
        let per: Vec<String> = self
            .tally
            .tools
            .iter()
            .enumerate()
            .map(|(i, kv)| (kv, if i < last { "," } else { "" }))
            .map(|((k, (c, er)), comma)| match er {
                0 => format!("{} {c}{comma}", one_line(k, &self.t.g)),
                _ => format!("{} {c} ({er} failed){comma}", one_line(k, &self.t.g)),
            })
            .collect();
        tools.extend(per);
        let role = if errors > 0 { Role::Warn } else { Role::Text };
        self.t.packed(&g, 3, role, "tools     ", &tools, " ")?;
        if !self.tally.files.is_empty() || !self.tally.read.is_empty() {
            let mut files: Vec<String> = self
                .tally
                .files
                .iter()
                .map(|(p, f)| {
                    let what = if f.written && f.edits == 0 {
                        "written "
                    } else {
                        ""
                    };
                    format!(
                        "{} ({what}+{} {}{})",
                        one_line(p, &self.t.g),
                        f.added,
                        self.t.g.minus,
                        f.removed
                    )
                })
                .collect();
            if !self.tally.read.is_empty() {
                files.push(format!(
                    "{} read",
                    plural(self.tally.read.len() as u64, "file", "files")
                ));
            }
            self.t
                .packed(&g, 3, Role::Text, "files     ", &files, ", ")?;
        }
        if self.tally.subagents > 0 {
            let line = format!("subagents {}", self.tally.subagents);
            self.t.row(&g, 3, &[(Role::Text, &line)])?;
        }
        if let Some(r) = s(e.json("reason")) {
            self.t
                .untrusted_row(&g, 3, &[(Role::Dim, "reason    ")], Role::Dim, &r)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_numbers_are_grouped() {
        assert_eq!(exact(0), "0");
        assert_eq!(exact(999), "999");
        assert_eq!(exact(1000), "1,000");
        assert_eq!(exact(1234567), "1,234,567");
    }

    #[test]
    fn tokens_of_usage() {
        let raw = br#"{"input_tokens":3,"output_tokens":5,"cache_read_input_tokens":7,"cache_creation_input_tokens":11,"x":{}}"#;
        let t = Tokens::of(Some(raw));
        assert_eq!(
            (t.input, t.output, t.cache_read, t.cache_write),
            (3, 5, 7, 11)
        );
        assert_eq!(Tokens::of(None), Tokens::default());
    }
}
