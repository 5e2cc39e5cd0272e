//! The command line's own documentation: the man pages (`generate-man`) and the shell
//! completion scripts (`completions`), rendered in memory from the clap definitions, the
//! envelope schema's event tables and the exit status table, so they cannot drift from the code.
//! They live beside the clap definitions because they need clap, which the library does not
//! depend on; writing them out is `cmd::generate`'s.

use clap::CommandFactory;
use roff::{Roff, bold, italic, roman};

use super::{Cli, Shell};

/// Every man page: `boo-normalize.1` and one per visible subcommand (and nested subcommand),
/// as (file name, roff bytes).
pub fn pages() -> Vec<(String, Vec<u8>)> {
    // `help SUBCOMMAND` is for the terminal; the pages list no help page.
    let cmd = Cli::command().disable_help_subcommand(true);
    let mut pages = vec![("boo-normalize.1".to_owned(), main_page(&cmd))];
    for sub in cmd.get_subcommands() {
        if !sub.is_hide_set() {
            sub_pages("boo-normalize", sub, &mut pages);
        }
    }
    pages
}

/// The completion script for `shell`.
pub fn completion(shell: Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let sh = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    // clap_complete panics on a write error: rendered into memory, the caller's write to a
    // closed pipe (`| head -1`) takes the quiet broken-pipe path instead.
    let mut script = Vec::new();
    clap_complete::generate(sh, &mut cmd, "boo-normalize", &mut script);
    script
}

/// The page of `sub` (under `parent`, e.g. `boo-normalize-audit`) and of each of its own
/// subcommands (`boo-normalize-audit-verify`), so that every page a SUBCOMMANDS section names
/// exists. Pages list no `help` subcommand: `--help` is on every page already.
fn sub_pages(parent: &str, sub: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) {
    let name = format!("{parent}-{}", sub.get_name());
    let leaked: &'static str = Box::leak(name.clone().into_boxed_str());
    let sub = sub
        .clone()
        .name(leaked)
        .bin_name(leaked)
        .disable_help_subcommand(true);
    let sub = sub.clone().override_usage(synopsis(&sub, &name));
    let mut page = Vec::new();
    clap_mangen::Man::new(sub.clone())
        .section("1")
        .manual("boo-normalize manual")
        .render(&mut page)
        .expect("rendering into memory does not fail");
    pages.push((format!("{name}.1"), page));
    for nested in sub.get_subcommands() {
        if !nested.is_hide_set() {
            sub_pages(&name, nested, pages);
        }
    }
}

/// The SYNOPSIS of `cmd` called `name`: every visible option with its value placeholder
/// (`[--format FORMAT]`, not clap_mangen's bare `[--format]`), then the positionals; a command
/// with subcommands gets a second form, `NAME COMMAND ...`.
fn synopsis(cmd: &clap::Command, name: &str) -> String {
    let mut line = name.to_owned();
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let values = a
            .get_value_names()
            .map(|v| v.join(" "))
            .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
        let takes_value = a.get_action().takes_values();
        let item = if a.is_positional() {
            let many = a.get_num_args().is_some_and(|n| n.max_values() > 1);
            let dots = if many { "..." } else { "" };
            if a.is_last_set() {
                format!("[-- {values}{dots}]")
            } else if a.is_required_set() {
                format!("{values}{dots}")
            } else {
                format!("[{values}]{dots}")
            }
        } else {
            let flag = match (a.get_short(), a.get_long()) {
                (Some(s), Some(l)) => format!("-{s}|--{l}"),
                (None, Some(l)) => format!("--{l}"),
                (Some(s), None) => format!("-{s}"),
                (None, None) => continue,
            };
            let flag = match takes_value {
                true => format!("{flag} {values}"),
                false => flag,
            };
            match a.is_required_set() {
                true => flag,
                false => format!("[{flag}]"),
            }
        };
        line.push(' ');
        line.push_str(&item);
    }
    if cmd.has_subcommands() {
        line.push_str(&format!("\n{name} COMMAND [ARGS]..."));
    }
    line
}

/// `boo-normalize.1`: clap's sections, then the envelope, versioning, exit status,
/// environment, examples and see-also sections written here.
fn main_page(cmd: &clap::Command) -> Vec<u8> {
    let cmd = cmd.clone().override_usage(synopsis(cmd, "boo-normalize"));
    let man = clap_mangen::Man::new(cmd.clone()).manual("boo-normalize manual");
    let mut w = Vec::new();
    let rendered = (|| {
        man.render_title(&mut w)?;
        man.render_name_section(&mut w)?;
        man.render_synopsis_section(&mut w)?;
        man.render_description_section(&mut w)?;
        man.render_options_section(&mut w)?;
        man.render_subcommands_section(&mut w)?;
        let mut r = Roff::new();
        envelope_section(&mut r);
        r.control("SH", ["VERSIONING"]);
        r.text([roman(VERSIONING)]);
        r.text([bold("boo-normalize schema"), roman(".")]);
        r.control("SH", ["EXIT STATUS"]);
        for (code, what) in boo_normalize::exit::Exit::TABLE {
            r.control("TP", []);
            r.text([bold(*code)]);
            r.text([roman(what.replace('`', ""))]);
        }
        r.control("SH", ["ENVIRONMENT"]);
        r.text([roman(ENVIRONMENT)]);
        r.control("SH", ["EXAMPLES"]);
        for &(what, ex) in EXAMPLES {
            r.control("TP", []);
            r.text([roman(what)]);
            r.text([italic(ex)]);
        }
        see_also(&mut r, &cmd);
        r.to_writer(&mut w)?;
        man.render_version_section(&mut w)
    })();
    rendered.expect("rendering into memory does not fail");
    w
}

/// ENVELOPE: the common keys, then each event with each of its fields and the schema's
/// description of it.
fn envelope_section(r: &mut Roff) {
    r.control("SH", ["ENVELOPE"]);
    r.text([roman(ENVELOPE)]);
    let schema = boo_normalize::schema::schema(false);
    for (name, desc, fields, ephemeral) in boo_normalize::schema::event_docs() {
        r.control("TP", []);
        r.text([bold(name)]);
        let mut text = desc.to_string();
        if ephemeral {
            text.push_str(" Ephemeral.");
        }
        r.text([roman(text)]);
        if fields.is_empty() {
            continue;
        }
        r.control("RS", []);
        for f in fields {
            let about = schema["$defs"][name]["properties"][f]["description"]
                .as_str()
                .unwrap_or("");
            r.control("TP", []);
            r.text([italic(f)]);
            r.text([roman(about)]);
        }
        r.control("RE", []);
    }
}

/// SEE ALSO: every visible subcommand's page, jq and claude.
fn see_also(r: &mut Roff, cmd: &clap::Command) {
    r.control("SH", ["SEE ALSO"]);
    let mut see: Vec<String> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| format!("boo-normalize-{}(1)", c.get_name()))
        .collect();
    see.extend(["jq(1)".into(), "claude(1)".into()]);
    r.text([roman(see.join(", "))]);
}

/// The ENVELOPE section's first paragraph.
const ENVELOPE: &str = "\
    Every output line is one JSON object. Common keys, on every event: v (always 1), seq \
    (0 for the first event, +1 per event, no gaps), type, session_id (string or null), \
    parent_tool_use_id (string or null; set inside a subagent), line (1-based input line, \
    null for synthesized events). Optional common keys: uuid (the source line's uuid) and \
    ephemeral (true on live-only progress events). Every input line is accounted for by at \
    least one event; run.end is always the last line, and its stats.lines equals the number \
    of input lines.";

/// The VERSIONING section, up to the command that prints the schema.
const VERSIONING: &str = "\
    The envelope carries v = 1. Additive changes (new event types, new members) keep v = 1; \
    renaming or removing a member or an event type bumps v. Consumers must ignore members \
    and event types they do not know. The JSON Schema (draft 2020-12) is printed by ";

/// The ENVIRONMENT section.
const ENVIRONMENT: &str = "\
    LAST_EVENT_ID: the default of --last-event-id (when set and not empty). \
    BOO_NORMALIZE_REDACT_KEY: the default of --redact-key. With --otlp-endpoint: \
    OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS, \
    OTEL_EXPORTER_OTLP_TIMEOUT and their OTEL_EXPORTER_OTLP_TRACES_ variants; for every \
    trace: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. spawn: CLAUDE_BIN (the default \
    of --claude-bin), and only an allowlist of the environment reaches claude (see \
    boo-normalize-spawn(1)). replay --as-claude: BOO_REPLAY_CAPTURE and BOO_REPLAY_SPEED. \
    profile, diff, redact and sessions: BOO_NORMALIZE_THREADS (the number of threads; by \
    default the cores not busy with other work; RAYON_NUM_THREADS is read too; debug builds \
    only: BOO_NORMALIZE_TEST_PANIC=caller:N, a panic injected for tests). Session \
    transcripts (sessions, and a session id as an input): CLAUDE_CONFIG_DIR (its projects \
    directory), else HOME (~/.claude/projects). report: SOURCE_DATE_EPOCH (the default of \
    --now, the generation time shown in the footer). Errors are written to \
    standard error as boo-normalize: context: cause, with control characters replaced.";

/// The EXAMPLES section: what, and the command line.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "Normalize a live run:",
        "claude -p \"fix the tests\" --output-format stream-json --verbose | boo-normalize",
    ),
    (
        "Tool calls with their inputs:",
        "boo-normalize run.ndjson | jq -c 'select(.type == \"tool.call\") | {name, input}'",
    ),
    (
        "Final state only (drop deltas):",
        "boo-normalize run.ndjson | jq -c 'select(.ephemeral != true)'",
    ),
    (
        "Fail a CI job on unusable lines or unknown types:",
        "boo-normalize --strict run.ndjson > /dev/null",
    ),
];
