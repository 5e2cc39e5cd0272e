//! `run.end.usage` against the CLI's own totals (the last result's `modelUsage`) on every
//! captured subagent run, foreground and background, stream and partial: each API message the
//! stream holds counts once, a foreground subagent's final message (only in its
//! `tool_use_result.usage`) included, and summing the `usage` events gives the same figures.

use crate::common;

use common::{bin, events, of_type, root};
use serde_json::Value;

/// Token counts: input, cache read, cache creation.
type Counts = (u64, u64, u64);

/// Captures whose CLI made API calls the stream never shows (so `run.end.usage` is below the
/// CLI's figures by exactly those calls, documented in docs/envelope.md), with why.
const CLI_HIDES_MESSAGES: &[(&str, &str)] = &[
    (
        "1.0.128/subagent",
        "CLI 1.0.x writes neither the subagent's final message nor its usage in the Task result",
    ),
    (
        "2.1.45/subagent_bg",
        "CLI 2.1.45 writes no line of a background subagent",
    ),
    (
        "2.1.332/agents",
        "a nested subagent's lines are written only with forwarding (agents_forward)",
    ),
];

fn counts(u: &Value, keys: [&str; 3]) -> Counts {
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    (n(keys[0]), n(keys[1]), n(keys[2]))
}

const ENVELOPE: [&str; 3] = [
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
];
const MODEL_USAGE: [&str; 3] = [
    "inputTokens",
    "cacheReadInputTokens",
    "cacheCreationInputTokens",
];

fn add(a: Counts, b: Counts) -> Counts {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2)
}

/// The subagent captures of every CLI version (name without `.ndjson`).
fn subagent_captures() -> Vec<String> {
    let dir = root().join("fixtures/captured");
    let mut out = Vec::new();
    for v in std::fs::read_dir(&dir).unwrap() {
        let v = v.unwrap().path();
        if !v.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&v).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            if (name.starts_with("subagent") || name.starts_with("agents"))
                && name.ends_with(".ndjson")
            {
                let ver = v.file_name().unwrap().to_str().unwrap().to_owned();
                out.push(format!("{ver}/{}", name.trim_end_matches(".ndjson")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn run_end_usage_is_the_clis_model_usage_on_every_subagent_capture() {
    let caps = subagent_captures();
    assert!(caps.len() >= 20, "{caps:?}");
    for cap in &caps {
        let path = root().join(format!("fixtures/captured/{cap}.ndjson"));
        let raw = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = raw
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // The CLI's figure: the last result's modelUsage over every model.
        let model_usage = lines
            .iter()
            .rev()
            .find(|l| l["type"] == "result")
            .map(|r| &r["modelUsage"])
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("{cap}: no result with modelUsage"));
        let cli = model_usage
            .values()
            .fold((0, 0, 0), |a, m| add(a, counts(m, MODEL_USAGE)));
        // Requests without tools (the CLI's topic and title checks) are never in the stream;
        // the fake API answered them without cache, and with 4 input tokens each.
        let side_input: u64 = cli.0 - 4 * (cli.1 / 12288);
        let out = bin().arg(&path).output().unwrap();
        let ev = events(&out.stdout);
        let end = of_type(&ev, "run.end")[0];
        let got = counts(&end["usage"], ENVELOPE);
        let usage = of_type(&ev, "usage");
        let summed = usage
            .iter()
            .fold((0, 0, 0), |a, u| add(a, counts(&u["usage"], ENVELOPE)));
        assert_eq!(
            got, summed,
            "{cap}: run.end.usage is not the usage events' sum"
        );
        assert_eq!(
            end["api_messages"].as_u64(),
            Some(usage.len() as u64),
            "{cap}"
        );
        let base = cap.trim_end_matches(".partial");
        match CLI_HIDES_MESSAGES.iter().find(|(c, _)| *c == base) {
            None => assert_eq!(
                got,
                (cli.0 - side_input, cli.1, cli.2),
                "{cap}: run.end.usage is not the CLI's modelUsage"
            ),
            Some((_, why)) => assert!(
                got.1 < cli.1 && got.2 < cli.2,
                "{cap}: expected fewer than the CLI's ({why}): {got:?} vs {cli:?}"
            ),
        }
    }
}
