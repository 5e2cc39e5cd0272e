//! Issue 29, sections 4–5, on the real binary: the command line people expect (help, hints,
//! units, headings, man synopses) and documentation that holds (the schema's descriptions, the
//! README's Install section).

use super::cli::{capture, stderr};
use crate::common::{bin, root, run};

/// §4: `help SUBCOMMAND` prints that subcommand's help (it was read as a file named `help`).
#[test]
fn help_subcommand_prints_its_help() {
    for (args, usage) in [
        (&["help", "diff"][..], "Usage: boo-normalize diff "),
        (
            &["help", "audit", "verify"][..],
            "Usage: boo-normalize audit verify ",
        ),
        (&["help"][..], "Usage: boo-normalize [OPTIONS] [FILE]..."),
    ] {
        let out = bin().args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(text.contains(usage), "{args:?}: {text}");
    }
}

/// §4: a file argument that does not exist but is close to a subcommand's name gets a hint; a
/// missing file named otherwise gets the plain error.
#[test]
fn mistyped_subcommand_gets_a_hint() {
    for (typo, meant) in [
        ("difff", "diff"),
        ("profiel", "profile"),
        ("replya", "replay"),
        ("shcema", "schema"),
    ] {
        let out = bin().args([typo, "a", "b"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{typo}: {err}");
        assert!(
            err.contains(&format!("boo-normalize: {typo}: no such file or directory; did you mean the subcommand `boo-normalize {meant}`?")),
            "{typo}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
    let out = bin().arg("no-such-capture.ndjson").output().unwrap();
    assert!(!stderr(&out).contains("did you mean"), "{}", stderr(&out));
    // With an option after it, clap stops at the option: the hint replaces clap's tip.
    for (args, hint) in [
        (
            &["reprot", "run.ndjson", "-o", "x.html"][..],
            "tip: did you mean the subcommand `boo-normalize report`? (`reprot` is not a file)",
        ),
        (
            &["sesions", "--since", "2026-01-01"][..],
            "tip: did you mean the subcommand `boo-normalize sessions`?",
        ),
        (
            &["run.ndjson", "--pretty"][..],
            "tip: the output format is an option's value: `--format pretty`",
        ),
    ] {
        let out = bin().args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("boo-normalize: unexpected argument"),
            "{err}"
        );
        assert!(err.contains(hint), "{args:?}: {err}");
        assert_eq!(err.matches("tip:").count(), 1, "{err}");
    }
}

/// §4: `generate-man`, which the README sends users to, is listed by `--help`.
#[test]
fn generate_man_is_listed_in_help() {
    let out = bin().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let commands = text
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    assert!(commands.contains("generate-man"), "{commands}");
}

/// The options of `args --help` whose value placeholder is one of `names`.
fn options_with_value(args: &[&str], names: &[&str]) -> Vec<(String, String)> {
    let out = bin().args(args).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut found = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if !t.starts_with("--") {
            continue;
        }
        let mut parts = t.split_whitespace();
        let (Some(opt), Some(val)) = (parts.next(), parts.next()) else {
            continue;
        };
        let val = val
            .trim_start_matches(['<', '['])
            .trim_end_matches(['>', ']']);
        if names.contains(&val) {
            found.push((opt.to_owned(), val.to_owned()));
        }
    }
    found
}

/// §4: every size option takes `1MB`, `64KiB` and bare bytes, every duration option `1m`,
/// `1500ms` and bare seconds, on every command; no option is left with a `BYTES`, `N`-bytes or
/// `DURATION` placeholder of its own.
#[test]
fn every_size_and_duration_option_takes_the_same_units() {
    let cap = capture();
    let cap = cap.to_str().unwrap();
    let commands: [&[&str]; 3] = [&["normalize"], &["spawn"], &["replay"]];
    let mut seen = 0;
    for cmd in commands {
        let odd = options_with_value(cmd, &["BYTES", "DURATION", "SECS", "MS"]);
        assert!(
            odd.is_empty(),
            "{cmd:?}: options with their own unit syntax: {odd:?}"
        );
        for (opt, kind) in options_with_value(cmd, &["SIZE", "DUR"]) {
            let values: &[&str] = match kind.as_str() {
                "SIZE" => &["1MB", "64KiB", "5000000", "2M"],
                _ => &["1m", "1500ms", "90", "0.5"],
            };
            for v in values {
                let mut c = bin();
                c.args(cmd).arg(&opt).arg(v);
                match cmd[0] {
                    "spawn" => c.args(["--claude-bin", "/nonexistent/claude", "--prompt", "hi"]),
                    _ => c.arg(cap),
                };
                let out = c.output().unwrap();
                let err = stderr(&out);
                assert!(!err.contains("invalid value"), "{cmd:?} {opt} {v}: {err}");
                assert_ne!(out.status.code(), Some(2), "{cmd:?} {opt} {v}: {err}");
                seen += 1;
            }
        }
    }
    assert!(seen >= 40, "{seen} option values tried");
    // --max-line-bytes with a unit cuts like the byte count.
    let out = bin()
        .args(["--max-line-bytes", "1KiB", cap])
        .output()
        .unwrap();
    let bytes = bin()
        .args(["--max-line-bytes", "1024", cap])
        .output()
        .unwrap();
    assert_eq!(out.stdout, bytes.stdout);
    assert!(String::from_utf8_lossy(&out.stdout).contains("line_too_long"));
}

/// §4: `spawn --help` lists under "Guards:" the guards and nothing else.
#[test]
fn spawn_help_headings_hold_what_they_say() {
    let out = bin().args(["spawn", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // The section runs to the next heading (a line that does not start with a space).
    let after = text.split("\nGuards:\n").nth(1).unwrap();
    let section: String = after
        .lines()
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect::<Vec<_>>()
        .join("\n");
    let opts: Vec<&str> = section
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        opts,
        [
            "allow-tools",
            "max-tool-calls",
            "max-repeat-calls",
            "max-output-bytes",
            "enforce"
        ],
        "{section}"
    );
    for other in [
        "--record",
        "--keep-blobs",
        "--strict",
        "--line-buffered",
        "--max-line-bytes",
        "--allow-no-result",
    ] {
        assert!(!section.contains(other), "{other} under Guards");
        assert!(text.contains(other), "{other} missing");
    }
}

/// §4: with `--require-complete`, a log with a run that has no `run.end` is not called ok.
#[test]
fn audit_verify_require_complete_never_says_ok_for_a_failing_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.audit.jsonl");
    let out = bin()
        .arg("--audit")
        .arg(&log)
        .arg(capture())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    let cut: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    std::fs::write(&log, cut).unwrap();
    let out = bin()
        .args(["audit", "verify", "--require-complete"])
        .arg(&log)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(!said.contains(": ok"), "{said}");
    assert!(
        said.contains(": incomplete: 1 run without run.end"),
        "{said}"
    );
    assert!(said.contains("5 records in 1 run,"), "{said}");
    // Without the flag the same file is ok (the run is listed on stderr).
    let out = bin().args(["audit", "verify"]).arg(&log).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains(": ok: 5 records in 1 run,"));
}

/// §4: the small slips: `--keep-blobs` names `elided`; a count of one reads in the singular.
#[test]
fn help_and_counts_read_right() {
    let out = bin().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let keep = text
        .split("--keep-blobs")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    assert!(keep.contains("elided"), "{keep}");
    let mut input = std::fs::read(capture()).unwrap();
    input.extend_from_slice(b"{\"type\":\"brand_new_type\"}\n");
    let out = run(&["--strict"], &input);
    let err = stderr(&out);
    assert!(
        err.contains("1 unknown event\n") || err.ends_with("1 unknown event"),
        "{err}"
    );
    assert!(!err.contains("1 unknown events"), "{err}");
    assert!(err.contains("lines unusable, 1 unknown event"), "{err}");
}

/// §4: man synopses give each option that takes a value its placeholder (`--format FORMAT`),
/// on every page.
#[test]
fn man_synopses_carry_value_placeholders() {
    let mut pages = 0;
    for e in std::fs::read_dir(root().join("man")).unwrap() {
        let page = std::fs::read_to_string(e.unwrap().path()).unwrap();
        let synopsis = page
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .unwrap()
            .split(".SH")
            .next()
            .unwrap();
        let options = page.split(".SH DESCRIPTION").nth(1).unwrap_or("");
        for line in options.lines() {
            let Some(rest) = line.strip_prefix("\\fB\\-\\-") else {
                continue;
            };
            let Some((name, value)) = rest.split_once("\\fR \\fI<") else {
                continue;
            };
            let value = value.split('>').next().unwrap();
            let want = format!("\\-\\-{name} {value}");
            assert!(synopsis.contains(&want), "{want} not in {synopsis}");
            pages += 1;
        }
    }
    assert!(pages > 50, "{pages} options checked");
}

/// §5: every field of every event in the schema has a description (the generated TypeScript
/// types and the man page carry them); `tool.call.subagent` says what it means.
#[test]
fn schema_documents_every_field() {
    let out = bin().arg("schema").output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut missing = Vec::new();
    let mut fields = 0;
    for (event, def) in doc["$defs"].as_object().unwrap() {
        for (field, s) in def["properties"].as_object().into_iter().flatten() {
            fields += 1;
            let d = s["description"].as_str().unwrap_or("");
            if d.trim().len() < 8 {
                missing.push(format!("{event}.{field}"));
            }
        }
    }
    assert!(fields > 300, "{fields}");
    assert!(
        missing.is_empty(),
        "{} fields without a description: {missing:?}",
        missing.len()
    );
    let subagent = doc["$defs"]["tool.call"]["properties"]["subagent"]["description"]
        .as_str()
        .unwrap();
    assert!(subagent.contains("starts a subagent"), "{subagent}");
    assert!(subagent.contains("parent_tool_use_id"), "{subagent}");
    // The man page lists each field with its description.
    let man = std::fs::read_to_string(root().join("man/boo-normalize.1")).unwrap();
    assert!(
        man.contains("starts a subagent (a Task or Agent call"),
        "man page"
    );
    // The generated TypeScript types carry the descriptions as doc comments.
    let ts = std::fs::read_to_string(root().join("npm/boo-normalize/src/envelope.ts")).unwrap();
    assert!(
        ts.contains("starts a subagent (a Task or Agent call"),
        "envelope.ts"
    );
    assert!(ts.contains("Why the line is unusable"), "envelope.ts");
}

/// §5: the README's Install section says what works today (a checkout, the wheel and npm
/// tarballs built from it) before what works after the first release, and points at the one
/// page with the release steps.
#[test]
fn readme_install_says_what_works_today() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let install = readme.split("\n## Install\n").nth(1).unwrap();
    let install = install.split("\n## ").next().unwrap();
    assert!(
        install.contains("not on crates.io, PyPI or npm yet"),
        "{install}"
    );
    assert!(install.contains("docs/release.md"));
    let after = install
        .find("After the first release")
        .expect("an 'After the first release' part");
    let today = [
        "cargo install --locked --path .",
        "maturin build --release",
        "pip install target/wheels/",
        "node scripts/assemble.mjs",
        "npm i ./target/npm/",
    ];
    let later = [
        "cargo install --locked boo-normalize",
        "pip install boo-normalize",
        "npm i boo-normalize",
    ];
    for (commands, now) in [(&today[..], true), (&later[..], false)] {
        for c in commands {
            let at = install.find(c).unwrap_or_else(|| panic!("{c} missing"));
            assert_eq!(at < after, now, "{c}: works today is {now}");
        }
    }
    for file in [
        "npm/scripts/assemble.mjs",
        "pyproject.toml",
        "docs/release.md",
    ] {
        assert!(root().join(file).is_file(), "{file}");
    }
    let release = std::fs::read_to_string(root().join("docs/release.md")).unwrap();
    for step in [
        "cargo publish",
        "maturin",
        "npm publish",
        "generate-man",
        "BOO_UPDATE_TYPES",
        "CHANGELOG",
    ] {
        assert!(release.contains(step), "docs/release.md lacks {step}");
    }
}
