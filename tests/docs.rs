//! The committed man pages and the README's event list must match what the code generates.

use crate::common;

use common::{bin, root};

#[test]
fn committed_man_pages_match_the_generated_ones() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().arg("generate-man").arg(dir.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.contains(&"boo-normalize.1".to_string()));
    for name in &names {
        let fresh = std::fs::read_to_string(dir.path().join(name)).unwrap();
        let committed = std::fs::read_to_string(root().join("man").join(name)).unwrap_or_default();
        assert!(
            fresh == committed,
            "man/{name} is stale: run `cargo run -- generate-man man` and commit the result"
        );
    }
    let mut committed: Vec<String> = std::fs::read_dir(root().join("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .collect();
    committed.sort();
    assert_eq!(
        committed, names,
        "man/ has pages the code no longer generates"
    );
}

#[test]
fn completions_are_generated_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = bin().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("boo-normalize"), "{shell}");
        assert!(text.contains("keep-blobs"), "{shell}");
    }
}

#[test]
fn envelope_page_lists_every_event_type() {
    let page = std::fs::read_to_string(root().join("docs/envelope.md")).unwrap();
    for t in boo_normalize::schema::event_types() {
        assert!(
            page.contains(&format!("`{t}`")),
            "docs/envelope.md does not document `{t}`"
        );
    }
}

/// The Markdown files a reader follows links through: the README, every page of `docs/` and the
/// drift guide.
fn markdown_pages() -> Vec<std::path::PathBuf> {
    let mut pages = vec![
        root().join("README.md"),
        root().join("src/profile/DRIFT.md"),
    ];
    let mut dirs = vec![root().join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    pages
}

/// The anchors GitHub makes of a page's headings: lowercase, spaces to `-`, punctuation other
/// than `-` and `_` dropped.
fn anchors(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| {
            l.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Every relative link of the README and the docs pages names a file (and heading) that exists.
#[test]
fn every_relative_link_resolves() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut checked = 0;
    for page in markdown_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for c in link.captures_iter(&text) {
            let target = &c[1];
            if target.starts_with("http") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let path = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            assert!(
                path.exists(),
                "{}: link to {target}: no such file",
                page.display()
            );
            if !anchor.is_empty() && path.extension().is_some_and(|x| x == "md") {
                let there = std::fs::read_to_string(&path).unwrap();
                assert!(
                    anchors(&there).iter().any(|a| a == anchor),
                    "{}: link to {target}: no such heading",
                    page.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} links found");
}

/// The envelope page's `diagnostic` row lists exactly the schema's diagnostic kinds, in its order.
#[test]
fn readme_lists_every_diagnostic_kind() {
    let readme = std::fs::read_to_string(root().join("docs/envelope.md")).unwrap();
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `diagnostic` |"))
        .expect("docs/envelope.md has a `diagnostic` row");
    let list = row
        .split("kind is ")
        .nth(1)
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    let listed: Vec<&str> = list
        .split([',', ' '])
        .filter(|w| {
            !w.is_empty()
                && *w != "or"
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .filter(|w| w.contains('_'))
        .collect();
    assert_eq!(
        listed,
        boo_normalize::envelope::kind::DIAGNOSTIC_KINDS,
        "{row}"
    );
    // And the schema says the same.
    let schema = boo_normalize::schema::schema(false);
    let about = schema["$defs"]["diagnostic"]["properties"]["kind"]["description"]
        .as_str()
        .unwrap();
    for k in boo_normalize::envelope::kind::DIAGNOSTIC_KINDS {
        assert!(about.contains(k), "{about}");
    }
}

#[test]
fn every_help_ends_with_examples() {
    for args in [
        &[][..],
        &["normalize"],
        &["schema"],
        &["completions"],
        &["spawn"],
        &["acp"],
        &["replay"],
        &["profile"],
        &["diff"],
        &["probe"],
        &["audit"],
        &["audit", "verify"],
        &["redact"],
        &["report"],
        &["generate-man"],
    ] {
        let out = bin().args(args).arg("--help").output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let tail = text.trim_end().rsplit("\n\n").next().unwrap_or("");
        assert!(
            text.contains("Examples:") && !tail.contains("Options:"),
            "`boo-normalize {} --help` does not end with examples",
            args.join(" ")
        );
    }
}

/// The commands that run the pipeline say in their help's exit status what the README's table
/// says they can end with: 3 (no `result` line) and 74 (an output file failed mid-run).
#[test]
fn help_exit_status_names_no_result_and_failed_sinks() {
    for args in [&[][..], &["normalize"], &["replay"], &["spawn"]] {
        let out = bin().args(args).arg("--help").output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let status = text
            .split("Exit status:")
            .nth(1)
            .unwrap_or_else(|| panic!("`boo-normalize {} --help`: no exit status", args.join(" ")));
        let status = status.split("\n\n").next().unwrap().replace('\n', " ");
        for code in [" 3 ", " 74 "] {
            assert!(
                status.contains(code),
                "`boo-normalize {} --help` exit status lacks{code}: {status}",
                args.join(" ")
            );
        }
    }
}

/// Every page a man page names (`boo-normalize-audit-verify(1)` in `audit`'s SUBCOMMANDS) is
/// one of the pages in `man/`, so `man NAME` finds what the page points to.
#[test]
fn man_pages_name_only_pages_that_exist() {
    let dir = root().join("man");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, _) in text.match_indices("boo\\-normalize") {
            let rest = &text[i..];
            let Some(end) = rest.find("(1)") else {
                continue;
            };
            let name = rest[..end].replace("\\-", "-");
            if name.contains(char::is_whitespace) || name.len() > 60 {
                continue;
            }
            assert!(
                dir.join(format!("{name}.1")).exists(),
                "{} names {name}(1), which man/ does not have",
                path.display()
            );
        }
    }
}

/// The main man page's ENVIRONMENT names every variable the code reads by name (`OTEL_*`,
/// `BOO_*`, `LAST_EVENT_ID`, `CLAUDE_BIN`; a `…_TRACES_…` variant by its plain name).
#[test]
fn man_page_environment_names_every_variable_read() {
    let page = std::fs::read_to_string(root().join("man/boo-normalize.1")).unwrap();
    let page = page.replace("\\-", "-");
    let env = page
        .split(".SH ENVIRONMENT")
        .nth(1)
        .and_then(|t| t.split(".SH").next())
        .expect("an ENVIRONMENT section")
        .replace('\n', " ");
    let name =
        regex::Regex::new(r#""((?:OTEL|BOO)_[A-Z0-9_]+|LAST_EVENT_ID|CLAUDE_BIN)""#).unwrap();
    let mut files = vec![root().join("src")];
    let mut seen = 0;
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if p.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        // Unit tests set made-up variables; the code above them is what runs.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for c in name.captures_iter(code) {
            let var = c[1].replace("_TRACES_", "_");
            seen += 1;
            assert!(
                env.contains(&var),
                "{} reads {}, which the man page's ENVIRONMENT does not name",
                p.display(),
                &c[1]
            );
        }
    }
    assert!(seen > 5, "found only {seen} variables in src/");
}

#[test]
fn readme_lists_every_exit_status() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for (code, what) in boo_normalize::exit::Exit::TABLE {
        let row = format!("| {code} | {what} |");
        assert!(
            readme.lines().any(|l| l == row),
            "README.md's exit status table lacks or differs from: {row}"
        );
    }
}

/// The library never prints: `eprintln!`/`println!` appear only in the files
/// `docs/development.md` names as the places where no writer reaches (and it names them all).
#[test]
fn only_the_files_development_md_allows_print() {
    const ALLOWED: &[&str] = &[
        "src/sink/otlp/export.rs",
        "src/sink/otlp/mod.rs",
        "src/replay/mod.rs",
        "src/replay/play.rs",
        "src/cmd/replay.rs",
    ];
    let doc = std::fs::read_to_string(root().join("docs/development.md")).unwrap();
    for f in ALLOWED {
        assert!(
            doc.contains(&format!("`{f}`")),
            "docs/development.md does not name {f}"
        );
    }
    let mut printing = Vec::new();
    let mut dirs = vec![root().join("src")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            // Tests may print (SKIP notes); the code before a file's test module may not.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            if p.extension().is_some_and(|x| x == "rs")
                && !p.ends_with("tests.rs")
                && (code.contains("eprintln!") || code.contains("println!"))
            {
                let rel = p
                    .strip_prefix(root())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                printing.push(rel);
            }
        }
    }
    printing.sort();
    let mut allowed: Vec<String> = ALLOWED.iter().map(|s| (*s).to_owned()).collect();
    allowed.sort();
    assert_eq!(printing, allowed, "files under src/ that print");
}
