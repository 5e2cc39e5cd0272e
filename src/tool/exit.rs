//! A shell command's exit status, as each agent states it on the result of a call of kind
//! `execute` (the normalizer's `tool.result.exit_code`): read from where that agent puts it, per
//! [`Dialect`], never guessed. `None` when the agent does not state it.
//!
//! | dialect | where |
//! |---|---|
//! | Claude Code | an `is_error` result whose text starts `Exit code N` (a non-error result states none: the CLI's command semantics make `grep`, `rg`, `find`, `diff` and `test` exit 1 a success) |
//! | Codex | `structured.exit_code` |
//! | OpenCode | `structured.metadata.exit` |
//! | Amp | `structured.exitCode` |
//! | Cursor | `structured.exit_code` |
//! | Gemini CLI / Qwen Code | Qwen's result text (`Command: …` … `Exit Code: N`, written when the command failed or printed nothing); Gemini CLI's text has none |
//! | Copilot CLI | the text's last line, `<shellId: 0 completed with exit code N>` or `<exited with exit code N>` |

use super::{Dialect, Input};

/// The exit code a result of a call of kind `execute` states, in `dialect`: from its `content`
/// (a string or text blocks), its `structured` value (the CLI's own result object) and whether the
/// agent said it failed (`is_error`).
pub fn exit_code<'a, V: Input<'a>>(
    dialect: Dialect,
    is_error: bool,
    content: Option<V>,
    structured: Option<V>,
) -> Option<i64> {
    let member = |path: &[&str]| {
        path.iter()
            .try_fold(structured?, |v, k| v.member(k))
            .and_then(Input::int)
    };
    match dialect {
        Dialect::Claude => {
            if !is_error {
                return None;
            }
            let first = texts(content).into_iter().next()?;
            let rest = first.strip_prefix("Exit code ")?;
            int(rest.split('\n').next()?)
        }
        Dialect::Codex | Dialect::Cursor => member(&["exit_code"]),
        Dialect::OpenCode => member(&["metadata", "exit"]),
        Dialect::Amp => member(&["exitCode"]),
        Dialect::Gemini => {
            let text = texts(content)
                .into_iter()
                .find(|t| t.starts_with("Command: "))?;
            let line = text.lines().rev().find(|l| l.starts_with("Exit Code: "))?;
            int(&line["Exit Code: ".len()..])
        }
        Dialect::Copilot => {
            let text = texts(content).into_iter().next_back()?;
            let last = text.trim_end().lines().next_back()?;
            let inner = last.strip_prefix('<')?.strip_suffix('>')?;
            let (_, n) = inner.rsplit_once(" exit code ")?;
            int(n)
        }
    }
}

/// The texts of a result's content: the string, or its `text` blocks' texts in order.
fn texts<'a, V: Input<'a>>(content: Option<V>) -> Vec<&'a str> {
    let Some(c) = content else {
        return Vec::new();
    };
    if let Some(t) = c.text() {
        return vec![t];
    }
    c.items()
        .unwrap_or_default()
        .into_iter()
        .filter(|b| b.member("type").and_then(Input::text) == Some("text"))
        .filter_map(|b| b.member("text").and_then(Input::text))
        .collect()
}

/// `s` as a whole integer (an optional `-`, then digits), else `None`.
fn int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{Dialect, exit_code};
    use serde_json::{Value, json};

    fn code(d: Dialect, is_error: bool, content: Value, structured: Value) -> Option<i64> {
        exit_code(d, is_error, Some(&content), Some(&structured))
    }

    #[test]
    fn each_agent_where_it_says_it() {
        use Dialect::*;
        let n = Value::Null;
        // Claude Code: the error text only; a success states none.
        assert_eq!(
            code(
                Claude,
                true,
                json!("Exit code 3\nout\nerr"),
                json!("Error: Exit code 3\nout\nerr")
            ),
            Some(3)
        );
        assert_eq!(
            code(
                Claude,
                true,
                json!([{"type": "text", "text": "Exit code 127"}]),
                n.clone()
            ),
            Some(127)
        );
        assert_eq!(
            code(Claude, false, json!("Exit code 3\nx"), n.clone()),
            None
        );
        assert_eq!(
            code(
                Claude,
                false,
                json!("hello"),
                json!({"stdout": "hello", "interrupted": false})
            ),
            None
        );
        assert_eq!(code(Claude, true, json!("Exit code 3x"), n.clone()), None);
        assert_eq!(
            code(Claude, true, json!("Error: permission denied"), n.clone()),
            None
        );
        // Members of the CLI's own result.
        assert_eq!(
            code(
                Codex,
                true,
                json!("out"),
                json!({"status": "failed", "exit_code": 3})
            ),
            Some(3)
        );
        assert_eq!(
            code(
                Cursor,
                false,
                json!("x"),
                json!({"result": {}, "exit_code": 1})
            ),
            Some(1)
        );
        assert_eq!(
            code(
                OpenCode,
                false,
                json!("x"),
                json!({"metadata": {"exit": 3}})
            ),
            Some(3)
        );
        assert_eq!(
            code(OpenCode, true, json!("x"), json!({"status": "error"})),
            None
        );
        assert_eq!(
            code(
                Amp,
                false,
                json!("x"),
                json!({"output": "x", "exitCode": 1})
            ),
            Some(1)
        );
        assert_eq!(code(Amp, false, json!("x"), json!({"exit_code": 1})), None);
        assert_eq!(
            code(Codex, false, json!("x"), json!({"exit_code": "0"})),
            None
        );
        // Qwen Code's block (a failure, or a command that printed nothing); a plain output (Gemini CLI's, Qwen's success) says none,
        // even when the command printed the words.
        let qwen = "Command: echo out; exit 3\nDirectory: (root)\nOutput: out\nExit Code: 9\nError: (none)\nExit Code: 3\nSignal: (none)\nProcess Group PGID: (none)";
        assert_eq!(code(Gemini, true, json!(qwen), n.clone()), Some(3));
        assert_eq!(
            code(
                Gemini,
                false,
                json!("Exit Code: 3"),
                json!({"status": "success"})
            ),
            None
        );
        assert_eq!(
            code(
                Gemini,
                true,
                json!("Command: x\nExit Code: (none)\nSignal: 9"),
                n.clone()
            ),
            None
        );
        // Copilot CLI's trailer, both spellings.
        assert_eq!(
            code(
                Copilot,
                false,
                json!("out\nerr\n<shellId: 0 completed with exit code 3>"),
                n.clone()
            ),
            Some(3)
        );
        assert_eq!(
            code(
                Copilot,
                true,
                json!("cat: x\n<exited with exit code 1>"),
                n.clone()
            ),
            Some(1)
        );
        assert_eq!(code(Copilot, false, json!("exit code 3"), n.clone()), None);
        assert_eq!(exit_code::<&Value>(Copilot, false, None, None), None);
    }
}
