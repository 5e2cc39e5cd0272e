//! The `sessions` listing: which sessions to read (filters), reading them on every core (the
//! batch work queue), and the table and JSON views of the result.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::prices::{Prices, round_usd};
use super::session::{self, SessionFiles};
use super::summary::{self, Summary};
use super::usage::{Counter, Tokens};
use crate::error::{Error, sanitize};
use crate::work::{self, Job, Turn};

/// Which sessions to list.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Only projects whose directory name or working directory contains this.
    pub project: Option<String>,
    /// Only sessions with a line at or after this time (RFC 3339, UTC, as the CLI writes it).
    pub since: Option<String>,
    /// Only sessions with a line before this time.
    pub until: Option<String>,
}

/// `2026-11-27`, `2026-11-27T10:00:00Z` or `2026-11-27 10:00:00` as the CLI's timestamp spelling
/// (`2026-11-27T10:00:00.000Z`); a bare date is its midnight, or with `end_of_day` the next one.
pub fn parse_time(s: &str, end_of_day: bool) -> Result<String, Error> {
    let bad = || {
        Error::msg(
            format!("time {s:?}"),
            "expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[Z] (UTC)",
        )
    };
    let t = s.trim();
    let (text, date_only) = if t.len() == 10 {
        (format!("{t}T00:00:00Z"), true)
    } else {
        (t.to_owned(), false)
    };
    let mut at = humantime::parse_rfc3339_weak(text.trim_end_matches('Z')).map_err(|_| bad())?;
    if date_only && end_of_day {
        at += Duration::from_secs(86_400);
    }
    Ok(humantime::format_rfc3339_millis(at).to_string())
}

/// Seconds between two of the CLI's timestamps.
pub fn seconds_between(a: &str, b: &str) -> Option<f64> {
    let p = |s: &str| humantime::parse_rfc3339_weak(s.trim_end_matches('Z')).ok();
    p(b)?.duration_since(p(a)?).ok().map(|d| d.as_secs_f64())
}

/// Read and summarise the sessions under `root` that `f` selects, oldest first. Sessions whose
/// files were all last written before `since` are not read at all.
pub fn list(root: &Path, f: &Filter) -> Result<(Vec<Summary>, Vec<String>), Error> {
    // A project directory is named after its working directory, every character but letters
    // and digits spelled `-`: only the directories that can match are read.
    let want = f.project.as_deref().map(|p| {
        let encoded = project_dir_name(p);
        move |dir: &str| dir.contains(&encoded) || dir.contains(p)
    });
    let want = want.as_ref().map(|w| w as &dyn Fn(&str) -> bool);
    read(session::all_sessions(root, want)?, f)
}

/// How Claude Code names the project directory of working directory `cwd` (or of a part of it).
pub fn project_dir_name(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// [`list`] for one project directory.
pub fn list_project(dir: &Path, f: &Filter) -> Result<(Vec<Summary>, Vec<String>), Error> {
    read(session::project_sessions(dir), f)
}

fn read(mut sessions: Vec<SessionFiles>, f: &Filter) -> Result<(Vec<Summary>, Vec<String>), Error> {
    if let Some(since) = &f.since {
        let cut = humantime::parse_rfc3339_weak(since.trim_end_matches('Z')).ok();
        sessions.retain(|s| match (cut, summary::modified(s)) {
            (Some(c), Some(m)) => m >= c - Duration::from_secs(1),
            _ => true,
        });
    }
    let jobs: Vec<Job<SessionFiles>> = sessions
        .into_iter()
        .map(|s| Job {
            bytes: summary::size(&s),
            ahead: true,
            item: s,
        })
        .collect();
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let read = |s: SessionFiles, buf: &mut Vec<u8>| {
        let r = summary::summarize(&s, buf);
        (s.main, r)
    };
    work::in_order(
        jobs,
        work::threads(),
        // A summary is tiny: workers may run far ahead.
        64 << 20,
        Vec::new,
        read,
        |turn, buf| {
            let (path, r) = match turn {
                Turn::Own(s) => read(s, buf),
                Turn::Done(d) => d.into_inner(),
            };
            match r {
                Ok(s) => out.push(s),
                Err(e) => warnings.push(format!("{}: {e}", path.display())),
            }
            Ok::<(), Error>(())
        },
    )?;
    out.retain(|s| keep(s, f));
    out.sort_by(|a, b| a.start.cmp(&b.start).then(a.id.cmp(&b.id)));
    Ok((out, warnings))
}

fn keep(s: &Summary, f: &Filter) -> bool {
    if let Some(p) = &f.project
        && !s.project.contains(&project_dir_name(p))
        && !s.project.contains(p.as_str())
        && !s.cwd.as_deref().is_some_and(|c| c.contains(p.as_str()))
    {
        return false;
    }
    if let Some(since) = &f.since
        && s.end.as_deref().is_none_or(|e| e < since.as_str())
    {
        return false;
    }
    if let Some(until) = &f.until
        && s.start.as_deref().is_none_or(|st| st >= until.as_str())
    {
        return false;
    }
    true
}

/// Every API message of `list` once (a forked or resumed session repeats its parent's).
pub fn total_usage(list: &[Summary]) -> Counter {
    let mut c = Counter::new();
    for s in list {
        c.merge(&s.usage);
    }
    c
}

fn cost(prices: &Prices, usage: &Counter) -> (Option<f64>, Vec<String>) {
    let by = usage.by_model();
    let e = prices.estimate(&by);
    (prices.prices_any(&by).then(|| round_usd(e.usd)), e.unpriced)
}

fn tokens_json(t: &Tokens) -> Value {
    json!({
        "input_tokens": t.input,
        "output_tokens": t.output,
        "cache_read_input_tokens": t.cache_read,
        "cache_creation_input_tokens": t.cache_write(),
        "total": t.total(),
    })
}

/// The JSON view: `{"sessions": [...], "total": {...}, "cost_source", "prices_date"}`.
pub fn to_json(list: &[Summary], prices: &Prices) -> Value {
    let sessions: Vec<Value> = list
        .iter()
        .map(|s| {
            let (usd, unpriced) = cost(prices, &s.usage);
            json!({
                "id": s.id,
                "project": s.project,
                "cwd": s.cwd,
                "path": s.path.display().to_string(),
                "cli_version": s.version,
                "start": s.start,
                "end": s.end,
                "duration_s": s.start.as_deref().zip(s.end.as_deref()).and_then(|(a, b)| seconds_between(a, b)),
                "messages": s.messages,
                "api_messages": s.usage.messages(),
                "tool_calls": s.tool_calls,
                "subagents": s.subagents,
                "tokens": tokens_json(&s.usage.total()),
                "cost_estimate_usd": usd,
                "unpriced_models": unpriced,
                "bytes": s.bytes,
                "bad_lines": s.bad_lines,
            })
        })
        .collect();
    let total = total_usage(list);
    let (usd, unpriced) = cost(prices, &total);
    json!({
        "sessions": sessions,
        "total": {
            "sessions": list.len(),
            "api_messages": total.messages(),
            "tokens": tokens_json(&total.total()),
            "cost_estimate_usd": usd,
            "unpriced_models": unpriced,
        },
        "cost_source": prices.source,
        "prices_date": prices.date,
    })
}

/// `1234567` → `1.2M`.
fn human(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}G", n as f64 / 1e9),
    }
}

fn duration(secs: Option<f64>) -> String {
    let Some(s) = secs else { return "-".into() };
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

fn money(usd: Option<f64>, unpriced: &[String]) -> String {
    match (usd, unpriced.is_empty()) {
        (None, _) => "?".into(),
        (Some(u), true) => format!("~${u:.2}"),
        (Some(u), false) => format!("~${u:.2}+?"),
    }
}

/// The last `n` characters of `s` (a path's end says more than its start), `…` in front when cut.
fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_owned();
    }
    let skip = count - (n - 1);
    format!("…{}", s.chars().skip(skip).collect::<String>())
}

/// The table view (one row per session, then the total), for a terminal.
pub fn to_table(list: &[Summary], prices: &Prices) -> String {
    let mut rows: Vec<[String; 9]> = vec![[
        "SESSION".into(),
        "PROJECT".into(),
        "START (UTC)".into(),
        "DURATION".into(),
        "MSGS".into(),
        "TOOLS".into(),
        "TOKENS".into(),
        "COST".into(),
        "AGENTS".into(),
    ]];
    for s in list {
        let (usd, unpriced) = cost(prices, &s.usage);
        let start = s
            .start
            .as_deref()
            .map_or("-".into(), |t| t.get(..16).unwrap_or(t).replace('T', " "));
        rows.push([
            sanitize(&s.id.chars().take(8).collect::<String>()),
            tail(&sanitize(s.cwd.as_deref().unwrap_or(&s.project)), 32),
            sanitize(&start),
            duration(
                s.start
                    .as_deref()
                    .zip(s.end.as_deref())
                    .and_then(|(a, b)| seconds_between(a, b)),
            ),
            s.messages.to_string(),
            s.tool_calls.to_string(),
            human(s.usage.total().total()),
            money(usd, &unpriced),
            s.subagents.to_string(),
        ]);
    }
    let total = total_usage(list);
    let (usd, unpriced) = cost(prices, &total);
    rows.push([
        "total".into(),
        format!("{} sessions", list.len()),
        String::new(),
        String::new(),
        list.iter().map(|s| s.messages).sum::<u64>().to_string(),
        list.iter().map(|s| s.tool_calls).sum::<u64>().to_string(),
        human(total.total().total()),
        money(usd, &unpriced),
        list.iter().map(|s| s.subagents).sum::<u64>().to_string(),
    ]);
    let mut width = [0usize; 9];
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (i, (c, w)) in r.iter().zip(width).enumerate() {
            let pad = w - c.chars().count();
            if i >= 3 {
                let _ = write!(line, "{}{c}  ", " ".repeat(pad));
            } else {
                let _ = write!(line, "{c}{}  ", " ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "cost: estimate from list prices of {} ({}); tokens: each API message once",
        prices.date, prices.source
    );
    out
}

/// When `list` is empty: why, for the user.
pub fn empty_note(root: &Path, f: &Filter) -> String {
    let filtered = f.project.is_some() || f.since.is_some() || f.until.is_some();
    if filtered {
        format!("no session under {} matches the filters", root.display())
    } else {
        format!("no session transcripts under {}", root.display())
    }
}

/// Seconds since the epoch of a time written by [`parse_time`] (for tests and callers).
pub fn epoch(t: &str) -> Option<u64> {
    humantime::parse_rfc3339_weak(t.trim_end_matches('Z'))
        .ok()
        .and_then(|x| x.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
}
