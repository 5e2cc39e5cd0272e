//! `--allow FILE`: a baseline of accepted changes.
//!
//! The file is JSON, in any of these forms:
//! * `{"allow": [RULE, ...]}`
//! * `[RULE, ...]`
//! * the output of `boo-normalize diff --format json` (its `changes` array is the rule list), so
//!   `boo-normalize diff OLD NEW --format json > allow.json` accepts exactly today's drift.
//!
//! A RULE is an object with any of `change`, `kind`, `path`, `value`, `from` (strings; `*`
//! matches any run of characters). A change is allowed when some rule's given members all match
//! it; members a rule does not give match anything, other members (`severity`, `detail`,
//! `reason`, …) are ignored. A rule must give at least one of the five members.

use serde_json::Value;

use super::change::Change;

/// A parsed allow list.
#[derive(Debug, Clone, Default)]
pub struct AllowList {
    rules: Vec<Rule>,
}

#[derive(Debug, Clone, Default)]
struct Rule {
    change: Option<String>,
    kind: Option<String>,
    path: Option<String>,
    value: Option<String>,
    from: Option<String>,
}

impl AllowList {
    /// Parse the JSON text of an allow file.
    pub fn parse(text: &str) -> Result<AllowList, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let list = match &doc {
            Value::Array(a) => a,
            Value::Object(o) => match o.get("allow").or_else(|| o.get("changes")) {
                Some(Value::Array(a)) => a,
                _ => return Err("expected an \"allow\" or \"changes\" array".into()),
            },
            _ => return Err("expected a JSON object or array".into()),
        };
        let mut rules = Vec::new();
        for (i, r) in list.iter().enumerate() {
            let Value::Object(o) = r else {
                return Err(format!("rule {}: not an object", i + 1));
            };
            let field = |k: &str| -> Result<Option<String>, String> {
                match o.get(k) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(format!("rule {}: \"{k}\" must be a string", i + 1)),
                }
            };
            let rule = Rule {
                change: field("change")?,
                kind: field("kind")?,
                path: field("path")?,
                value: field("value")?,
                from: field("from")?,
            };
            if rule.change.is_none()
                && rule.kind.is_none()
                && rule.path.is_none()
                && rule.value.is_none()
                && rule.from.is_none()
            {
                return Err(format!(
                    "rule {}: give at least one of change, kind, path, value, from",
                    i + 1
                ));
            }
            rules.push(rule);
        }
        Ok(AllowList { rules })
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// True when there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// True if some rule accepts `c`.
    pub fn allows(&self, c: &Change) -> bool {
        self.rules.iter().any(|r| {
            m(&r.change, Some(c.change.name()))
                && m(&r.kind, Some(&c.kind))
                && m(&r.path, c.path.as_deref())
                && m(&r.value, c.value.as_deref())
                && m(&r.from, c.from.as_deref())
        })
    }

    /// Mark allowed changes.
    pub fn apply(&self, changes: &mut [Change]) {
        for c in changes {
            c.allowed = self.allows(c);
        }
    }
}

fn m(pattern: &Option<String>, value: Option<&str>) -> bool {
    match (pattern, value) {
        (None, _) => true,
        (Some(p), Some(v)) => glob(p.as_bytes(), v.as_bytes()),
        (Some(p), None) => p == "*",
    }
}

/// `*`-only glob match.
fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            pi += 1;
            mark = si;
        } else if pi < p.len() && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob(b"*", b""));
        assert!(glob(b"a*c", b"abbc"));
        assert!(glob(b"tool_use_result/*", b"tool_use_result/Bash"));
        assert!(!glob(b"a*c", b"abb"));
        assert!(glob(b"*.uuid", b"message.uuid"));
    }

    #[test]
    fn rejects_empty_rules() {
        assert!(AllowList::parse(r#"{"allow":[{"reason":"x"}]}"#).is_err());
        assert!(AllowList::parse(r#"{"allow":[{"kind":"x"}]}"#).is_ok());
        assert!(AllowList::parse(r#"{"nope":1}"#).is_err());
    }
}
