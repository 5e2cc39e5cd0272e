//! The envelope's event definitions: every event type with its description and the schema of each
//! field, from the named kinds, the mapping table and the guards' rules.

use serde_json::{Value, json};

use crate::envelope::kind;
use crate::normalize::MAPPINGS;

pub(super) fn nullable(t: &str) -> Value {
    json!({ "type": [t, "null"] })
}

/// The schema of a violation's `rule`: one of the guards' rule names (`spawn`, and so its
/// guards, exist on Unix only).
fn guard_rule() -> Value {
    #[cfg(unix)]
    return json!({ "enum": crate::spawn::guard::RULES });
    #[cfg(not(unix))]
    return json!({ "type": "string" });
}

/// `a, b or c`.
pub(super) fn or_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn any() -> Value {
    json!({})
}

/// The schema of `tool.call`'s `kind`: the tool kinds, a closed list. The title names the
/// TypeScript type (once: `tool.call.revised` has the same list untitled).
fn tool_kind(titled: bool) -> Value {
    let kinds: Vec<&str> = crate::tool::Kind::ALL.iter().map(|k| k.as_str()).collect();
    let mut k = json!({ "enum": kinds });
    if titled {
        k["title"] = "ToolKind".into();
    }
    k
}

/// The schema of `tool.result`'s `kind`: a tool kind, or null for a result without its call.
fn tool_kind_or_null() -> Value {
    let mut kinds: Vec<Value> = crate::tool::Kind::ALL
        .iter()
        .map(|k| Value::from(k.as_str()))
        .collect();
    kinds.push(Value::Null);
    json!({ "enum": kinds })
}

/// The schema of `tool.call`'s `edit` (titled as [`tool_kind`]).
fn call_edit(titled: bool) -> Value {
    let mut e = json!({
        "type": ["object", "null"],
        "required": ["path", "changes"],
        "properties": {
            "path": {"type": "string", "description": "The file (a notebook for a cell edit), as the input gives it."},
            "cell": {"type": ["string", "null"], "description": "A notebook edit: the cell's id (null when the input names none)."},
            "changes": {
                "type": "array",
                "description": "The replacements, in order (at least one).",
                "items": {
                    "type": "object",
                    "required": ["old_text", "new_text"],
                    "properties": {
                        "old_text": {"type": ["string", "null"], "description": "The text replaced; null when the whole file (or cell source) is written."},
                        "new_text": {"type": "string", "description": "The text written in its place."},
                        "replace_all": {"const": true, "description": "Present when every occurrence of old_text is replaced."}
                    }
                }
            }
        }
    });
    if titled {
        e["title"] = "ToolEdit".into();
        e["properties"]["changes"]["items"]["title"] = "ToolChange".into();
    }
    e
}

/// `(event type, description, [(field, schema)], required fields, ephemeral)`.
pub(super) type Def = (&'static str, &'static str, Vec<(&'static str, Value)>, bool);

pub(super) fn defs() -> Vec<Def> {
    let s = || json!({"type": "string"});
    let ns = || nullable("string");
    let b = || json!({"type": "boolean"});
    let ni = || nullable("integer");
    let obj = || json!({"type": "object"});
    let mut d: Vec<Def> = vec![
        (
            kind::SESSION_INIT,
            "From system/init: the run's configuration. Re-emitted per turn by multi-turn sessions.",
            vec![
                ("model", any()),
                ("cwd", any()),
                ("tools", any()),
                ("mcp_servers", any()),
                ("permission_mode", any()),
                ("cli_version", ns()),
                (
                    "agent",
                    json!({"type": "string", "description": "The coding agent whose stream this is, when it is not Claude Code's own stream-json (codex, gemini-cli, qwen-code, amp, …; docs/agents.md); cli_version is then that agent's version when its stream says it."}),
                ),
                ("api_key_source", any()),
                ("extra", obj()),
            ],
            false,
        ),
        (
            kind::TEXT,
            "A complete assistant text block (from an assistant line, or assembled from deltas when no assistant line came: source \"deltas\"). A block without a string text gives text null (never \"\"), violation says how the source broke the schema and raw holds the block when text had another type. block_extra: the block's members no field maps (citations, …), when it has any.",
            vec![
                ("message_id", ns()),
                ("model", ns()),
                ("text", ns()),
                ("synthetic", b()),
                ("error", ns()),
                ("source", s()),
                ("violation", s()),
                ("raw", any()),
                ("block_extra", obj()),
            ],
            false,
        ),
        (
            kind::THINKING,
            "A complete thinking block; redacted_thinking gives redacted true and thinking null. block_extra: the block's signature (and a redacted block's data).",
            vec![
                ("message_id", ns()),
                ("thinking", ns()),
                ("redacted", b()),
                ("source", s()),
                ("block_extra", obj()),
            ],
            false,
        ),
        (
            kind::TEXT_DELTA,
            "A text_delta fragment (--include-partial-messages).",
            vec![("message_id", ns()), ("index", ni()), ("text", s())],
            true,
        ),
        (
            kind::THINKING_DELTA,
            "A thinking_delta fragment.",
            vec![("message_id", ns()), ("index", ni()), ("thinking", s())],
            true,
        ),
        (
            kind::TOOL_INPUT_DELTA,
            "An input_json_delta fragment of a tool call's input.",
            vec![
                ("tool_use_id", ns()),
                ("name", ns()),
                ("index", ni()),
                ("partial_json", s()),
            ],
            true,
        ),
        (
            kind::TOOL_CALL,
            "Exactly one per tool_use id (an id that comes again with another input gives tool.call.revised). input is the parsed object; input_error says why it is null when assembled fragments did not parse (partial_json then holds them). A block without id or name gives null there (never \"\"; such a call is never paired with a result) and violation says how the source broke the schema; raw holds the block when a member had the wrong type. block_extra: the block's members no field maps (caller, …), when it has any.",
            vec![
                ("tool_use_id", ns()),
                ("name", ns()),
                ("input", any()),
                ("input_error", ns()),
                ("message_id", ns()),
                ("subagent", b()),
                ("kind", tool_kind(true)),
                (
                    "paths",
                    json!({"type": "array", "items": {"type": "string"}}),
                ),
                ("command", ns()),
                ("edit", call_edit(true)),
                ("server", b()),
                ("source", json!({"enum": ["message", "deltas"]})),
                ("partial_json", s()),
                ("violation", s()),
                ("raw", any()),
                ("block_extra", obj()),
            ],
            false,
        ),
        (
            kind::TOOL_RESULT,
            "A tool_result, paired with its call. content is a string where the source is text, blocks otherwise; structured is the CLI's tool_use_result. is_error is the agent's own verdict (Gemini CLI, OpenCode, Copilot CLI, Amp and Cursor say false for a shell command that exited non-zero); exit_code is a shell command's exit status where the agent states it (calls of kind execute), else null. Base64 blobs become {elided, media_type, bytes, sha256} unless --keep-blobs. A block without tool_use_id gives null there, is never paired (name null) and says so in violation (raw: the block, when a member had the wrong type). block_extra: the block's members no field maps (cache_control, …), when it has any.",
            vec![
                ("tool_use_id", ns()),
                ("name", ns()),
                ("is_error", b()),
                ("server", b()),
                ("content", any()),
                ("structured", any()),
                ("kind", tool_kind_or_null()),
                (
                    "edit",
                    json!({
                        "type": ["object", "null"],
                        "required": ["path", "patch"],
                        "properties": {
                            "path": {"type": "string", "description": "The file (filePath)."},
                            "patch": {"type": "array", "description": "The hunks (structuredPatch), as the CLI wrote them."}
                        }
                    }),
                ),
                ("exit_code", ni()),
                ("violation", s()),
                ("raw", any()),
                ("block_extra", obj()),
            ],
            false,
        ),
        (
            kind::TOOL_CALL_REVISED,
            "A tool_use id that was already emitted came again with a different input (the later input, with kind, paths, command and edit read from it; nothing is dropped silently). An identical repeat gives skipped.",
            vec![
                ("tool_use_id", s()),
                ("name", ns()),
                ("input", any()),
                ("message_id", ns()),
                ("kind", tool_kind(false)),
                (
                    "paths",
                    json!({"type": "array", "items": {"type": "string"}}),
                ),
                ("command", ns()),
                ("edit", call_edit(false)),
            ],
            false,
        ),
        (
            kind::USER_TEXT,
            "Text the CLI adds as the user (a subagent's prompt, replayed prompts, local command output, a compaction summary: is_synthetic). A text block without a string text gives text null with violation (and raw). block_extra: the block's members no field maps (cache_control, …), when it has any.",
            vec![
                ("text", ns()),
                ("replay", b()),
                ("violation", s()),
                ("raw", any()),
                ("block_extra", obj()),
            ],
            false,
        ),
        (
            kind::USER_BLOCK,
            "An image or document block on a user line.",
            vec![("block", any())],
            false,
        ),
        (
            kind::USAGE,
            "Token usage of one API message, once per message id, emitted when the message is over (last values win; message_delta usage included). provisional is true when no final count arrived: CLI 2.1.x (and real runs of older CLIs) write each assistant line with the usage of the API's message_start (output_tokens 1 or a running count) and stop_reason null; the final counts come only in the message_delta (--include-partial-messages) and in the result line. Rule: usage is final once a message_delta for the message was seen, or an assistant line of the message carried a non-null stop_reason. With partial messages a tool result that arrives before the message_delta does not end the message: its usage waits for the message_delta (at most a few lines later). run.end.usage gives the run's totals with the result lines' final counts. It is the per-message record, in both modes: stop_reason (end_turn, tool_use, max_tokens, refusal, pause_turn, …) and stop_sequence come from the message_delta or an assistant line that carries them; CLI 2.1.x without partial messages writes them on no message, so the turn's last main-thread message takes the result line's stop_reason, a message a synthetic user line names in refused_message_id (2.1.3xx) takes refusal, the message just before a synthetic user line that is the CLI's output-limit prompt (its text starts with \"Output token limit hit\", \"Your response was cut off because it exceeded the output token limit\" or \"[Your previous response reached the output limit\") takes max_tokens, and the others stay null. extra holds the message's other members (stop_details, context_management, container, …), last value winning. message_id is null for a message without an id (each such assistant line is a message of its own; a message_delta on its stream without a message_start finishes it).",
            vec![
                ("message_id", ns()),
                ("model", ns()),
                ("usage", obj()),
                ("provisional", b()),
                ("stop_reason", any()),
                ("stop_sequence", any()),
                ("extra", obj()),
            ],
            false,
        ),
        (
            kind::TURN_END,
            "One per result line. outcome: success, error, max_turns, max_budget, during_execution, structured_output_retries, or the raw subtype; never success when is_error is true. stop_reason: the result line's, else (CLIs before 2.1.150) the one the turn's last main-thread API message carried itself (one of its assistant lines, or its message_delta), else null: an earlier message's or a subagent's never stands in. structured_output: what a --json-schema run returned (the result line's, as written), else null.",
            vec![
                ("outcome", s()),
                ("subtype", ns()),
                ("is_error", b()),
                ("result", any()),
                ("cost_usd", nullable("number")),
                ("duration_ms", any()),
                ("duration_api_ms", any()),
                ("num_turns", any()),
                ("usage", any()),
                ("model_usage", any()),
                ("permission_denials", any()),
                ("stop_reason", any()),
                ("terminal_reason", any()),
                ("errors", any()),
                ("structured_output", any()),
                ("extra", obj()),
            ],
            false,
        ),
        (
            kind::MESSAGE_START,
            "Stream lifecycle: message_start.",
            vec![("message_id", ns()), ("model", ns())],
            true,
        ),
        (
            kind::MESSAGE_DELTA,
            "Stream lifecycle: message_delta.",
            vec![
                ("message_id", ns()),
                ("stop_reason", any()),
                ("usage", any()),
            ],
            true,
        ),
        (
            kind::MESSAGE_STOP,
            "Stream lifecycle: message_stop. abandoned_blocks: the CLI's own message_stop for a message it gave up on names the blocks it abandoned (also in the message's usage record, under extra); CLI 2.1.332 writes it beside event on the line ({api_message_id, from_block_index}, e.g. after an interrupt), the CLI's wire schema inside the event. A tool call whose input was still streaming then comes from its fragments with an input_error that says the CLI abandoned it.",
            vec![("message_id", ns()), ("abandoned_blocks", any())],
            true,
        ),
        (
            kind::BLOCK_START,
            "Stream lifecycle: content_block_start.",
            vec![
                ("index", ni()),
                ("block_type", s()),
                ("tool_use_id", ns()),
                ("name", ns()),
            ],
            true,
        ),
        (
            kind::BLOCK_DELTA,
            "A delta of another kind (signature_delta, citations_delta, …), raw.",
            vec![("index", ni()), ("delta", any())],
            true,
        ),
        (
            kind::BLOCK_STOP,
            "Stream lifecycle: content_block_stop.",
            vec![("index", ni())],
            true,
        ),
        (
            kind::STREAM_PING,
            "An API ping inside stream_event.",
            vec![],
            true,
        ),
        (
            kind::STREAM_ERROR,
            "An API error event inside stream_event.",
            vec![("error", any())],
            false,
        ),
        (
            kind::UNKNOWN,
            "A type, subtype, block or stream event this version does not map, or a lookalike format; raw is the original object.",
            vec![
                (
                    "kind",
                    json!({"enum": ["type", "subtype", "block", "stream_event", "shape", "lookalike"]}),
                ),
                ("name", s()),
                ("raw", any()),
            ],
            false,
        ),
        (
            kind::DIAGNOSTIC,
            "An input line that is not usable: kind says why; text is a lossy, capped excerpt; bytes the line's length.",
            vec![
                (
                    "kind",
                    json!({"type": "string", "description": format!(
                        "Why the line is unusable: {} (too_deep: JSON nested deeper than {} levels; number_out_of_range: JSON but for a number beyond a double's range, such as 1e400, which JSON.parse reads as Infinity and no JSON output can carry).",
                        or_list(kind::DIAGNOSTIC_KINDS),
                        crate::json::MAX_DEPTH
                    )}),
                ),
                ("text", s()),
                ("bytes", json!({"type": "integer"})),
                ("truncated", b()),
                ("detail", ns()),
            ],
            false,
        ),
        (
            kind::RUN_ERROR,
            "The run ended without a result line after its last system/init (cause no_result): the child exited without one, was stopped, or the input was cut. Written just before run.end unless --allow-no-result; the commands then exit 3 (unless the child's own status or a stop says more). end_cause is run.end's cause, exit_code the child's (spawn), last_event the type and seq of the last event before it.",
            vec![
                ("cause", s()),
                ("detail", s()),
                ("end_cause", s()),
                ("exit_code", ni()),
                ("last_event", any()),
            ],
            false,
        ),
        (
            kind::STALL,
            "spawn --idle-action warn: the child wrote no stdout line for --idle-timeout while no tool call was outstanding; the run goes on (one event per quiet period). quiet_ms is how long it was quiet.",
            vec![("quiet_ms", json!({"type": "integer"}))],
            false,
        ),
        (
            kind::LINE_REPAIRED,
            "The line just before (same line number) was refused by strict JSON parsers but accepted by JavaScript's JSON.parse: each unpaired UTF-16 surrogate escape (\\uD800-\\uDBFF not followed by \\uDC00-\\uDFFF, or a lone \\uDC00-\\uDFFF) was replaced by U+FFFD and the line normalized as usual. CLI versions before 2.1.330 cut long tool output inside a surrogate pair. kind is lone_surrogate, count the number of escapes replaced. kind bom: the line began with a UTF-8 byte order mark (U+FEFF, as Windows editors write), which was dropped before it was read (count 1). Not a diagnostic: --strict does not fail on it; run.end.stats.repaired counts such lines.",
            vec![
                ("kind", s()),
                ("count", json!({"type": "integer"})),
                ("detail", s()),
            ],
            false,
        ),
        (
            kind::API_ERROR,
            "An assistant line that reports a failed API call (overloaded, rate_limit, authentication_failed, server_error, model_not_found, …), with or without a text block. error is the line's error; details its is_api_error_message and api_error_* members (api_error_status, api_error_type, api_error_code, api_error_params …) as written; text the message's text, null when it has none.",
            vec![
                ("message_id", any()),
                ("model", any()),
                ("error", any()),
                ("details", obj()),
                ("text", ns()),
            ],
            false,
        ),
        (
            kind::SKIPPED,
            "A line without an event of its own; reason says what happened (the message's text was already emitted from the partial-message deltas, the tool call was already emitted, the message has no content or empty content, …). It carries the line's facts and extra.",
            vec![("reason", s())],
            false,
        ),
        (
            kind::RUN_END,
            "Always the last event. cause: eof (normalize), output_closed (normalize, replay: the reader closed stdout before the input ended, as `| head -1` does; the rest of the input was not read, and the other sinks, such as an audit log, get this run.end), interrupted (normalize, replay --follow: a SIGINT, SIGTERM or SIGHUP ended the reading; reason names the signal, every sink gets this run.end and the exit status is 128 + N) or how a spawned child ended (exit, signal, timeout, idle_timeout, interrupted, killed); spawn_failed (the child could not start: error says why), sink_failed (writing a file sink failed: sink names it, error gives the OS cause; the other sinks still get run.end), input_failed (reading an input file failed after output began, e.g. an I/O error: input names it, error gives the OS cause; the inputs after it are not read and the command exits 2); stats.lines equals the number of input lines. spawn adds exit_code and signal (the child's status, a signal name like \"SIGKILL\"), reason (the signal boo-normalize got when interrupted; policy, stdout_closed or output_closed when killed), signals_sent (to the child's process group), descendants_killed, background_left (with --keep-background), elapsed_ms and env_removed (the names, never the values, of provider variables such as ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL that were set but not passed to claude; [] when none); stderr_dropped counts child stderr lines dropped because they came faster than they could be passed on (bounded memory). With --otlp-endpoint, otlp counts the trace's spans: handed to the exporter, exported (accepted by the receiver) and failed (rejected, undeliverable after retries, or dropped). A session transcript input (docs/transcripts.md) adds input_format, cost_estimate_usd (an estimate, apart from the CLI's cost_usd), cost_source, prices_date and unpriced_models; a transcript has no result line, and its run ends without run.error.",
            vec![
                ("cause", s()),
                ("terminal_seen", b()),
                ("turns", json!({"type": "integer"})),
                ("cli_version", ns()),
                (
                    "agent",
                    json!({"type": "string", "description": "As session.init's agent: present when the input was another coding agent's stream (docs/agents.md)."}),
                ),
                (
                    "usage",
                    json!({"type": "object", "required": ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "provisional"], "properties": {"input_tokens": {"type": "integer"}, "output_tokens": {"type": "integer"}, "cache_read_input_tokens": {"type": "integer"}, "cache_creation_input_tokens": {"type": "integer"}, "provisional": {"type": "boolean"}}}),
                ),
                ("cost_usd", nullable("number")),
                ("api_messages", json!({"type": "integer"})),
                ("tool_calls", json!({"type": "integer"})),
                ("tool_results", json!({"type": "integer"})),
                ("exit_code", ni()),
                ("signal", any()),
                ("reason", s()),
                (
                    "signals_sent",
                    json!({"type": "array", "items": {"type": "string"}}),
                ),
                ("descendants_killed", json!({"type": "integer"})),
                ("background_left", json!({"type": "integer"})),
                ("elapsed_ms", json!({"type": "integer"})),
                ("sink", s()),
                ("input", s()),
                ("error", s()),
                ("stderr_dropped", json!({"type": "integer"})),
                (
                    "input_format",
                    json!({"const": "transcript", "description": "Present when the input was a Claude Code session transcript (docs/transcripts.md)."}),
                ),
                (
                    "cost_estimate_usd",
                    json!({"type": ["number", "null"], "description": "Transcripts only: an estimate from a price table (never the CLI's reported cost, which stays in cost_usd): the usage of each API message once, times the table's price per model and token kind; null when no model was priced."}),
                ),
                (
                    "cost_source",
                    json!({"type": "string", "description": "The price table of cost_estimate_usd: embedded, or the --prices file."}),
                ),
                (
                    "prices_date",
                    json!({"type": "string", "description": "The date of the price table's prices."}),
                ),
                (
                    "unpriced_models",
                    json!({"type": "array", "items": {"type": "string"}, "description": "Models with tokens the price table has no price for (their tokens are not in cost_estimate_usd)."}),
                ),
                (
                    "env_removed",
                    json!({"type": "array", "items": {"type": "string"}}),
                ),
                (
                    "otlp",
                    json!({"type": "object", "required": ["spans", "exported", "failed"], "properties": {"spans": {"type": "integer"}, "exported": {"type": "integer"}, "failed": {"type": "integer"}}}),
                ),
                (
                    "stats",
                    json!({"type": "object", "required": ["lines", "bytes", "json_lines", "events", "unknown", "diagnostics", "repaired", "by_type"], "properties": {"lines": {"type": "integer"}, "bytes": {"type": "integer"}, "json_lines": {"type": "integer"}, "events": {"type": "integer"}, "unknown": {"type": "integer"}, "diagnostics": {"type": "integer"}, "repaired": {"type": "integer"}, "by_type": {"type": "object", "additionalProperties": {"type": "integer"}}}}),
                ),
            ],
            false,
        ),
        (
            kind::POLICY_VIOLATION,
            "spawn guards: rule names the guard (allow_tools, max_tool_calls, …: the schema lists them); name and tool_use_id identify the offending tool call (null for max_output_bytes; an allow_tools one comes as the call begins, at its block.start in partial mode); limit and count are the configured and observed numbers; enforced says the child is being stopped (--enforce).",
            vec![
                ("rule", guard_rule()),
                ("detail", s()),
                ("name", ns()),
                ("tool_use_id", ns()),
                ("limit", ni()),
                ("count", ni()),
                ("enforced", b()),
            ],
            false,
        ),
        (
            kind::CHILD_STDERR,
            "spawn --stderr-events: one line of the child's stderr (lossy UTF-8, at most 64 KiB; truncated when cut).",
            vec![("text", s()), ("truncated", b())],
            false,
        ),
    ];
    for m in MAPPINGS {
        if d.iter().any(|x| x.0 == m.event) {
            continue;
        }
        let (t, st) = m.source;
        let desc: &'static str = Box::leak(
            if st.is_empty() {
                format!("From {t} lines.")
            } else {
                format!("From {t}/{st} lines.")
            }
            .into_boxed_str(),
        );
        // A promoted field says which source member it comes from, after what it is.
        let mut fields: Vec<(&'static str, Value)> = m
            .fields
            .iter()
            .map(|(f, path)| {
                let from = match crate::envelope::fields::doc(m.event, f) {
                    Some(d) => format!("{d} From the {t} line's `{path}`."),
                    None => format!("The {t} line's `{path}`, as written."),
                };
                (*f, json!({ "description": from }))
            })
            .collect();
        fields.push(("extra", obj()));
        d.push((m.event, desc, fields, false));
    }
    d
}
