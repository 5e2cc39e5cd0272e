//! The compiled detector set: user rules and built-ins in one multi-pattern automaton, the
//! "could this still become a secret" test used by delta streams, and keyed placeholders.
//!
//! All patterns go into one `regex_automata::meta::Regex` (the engine behind the `regex`
//! crate): a single leftmost-first pass over a string finds the first secret and which pattern
//! matched, where a `RegexSet` would only say that some pattern matched somewhere. The same
//! patterns also go into a lazy DFA, walked anchored from a position to tell whether more input
//! could still produce a match there.

use hmac::{KeyInit, Mac};
use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};

use super::detect::{self, BUILTINS, Check, KEY_CONTEXTS, TOKEN_DETECTORS};
use super::rules::{Pattern, Rule, RuleError};

/// Index of a kind in [`Engine::kind`].
pub type KindId = u16;

/// A secret found in a string: byte range of the decoded string, and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Start (inclusive).
    pub start: usize,
    /// End (exclusive).
    pub end: usize,
    /// The kind.
    pub kind: KindId,
}

/// The key of the keyed placeholder hash. Never printed.
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl Key {
    /// A key from user-supplied bytes (`--redact-key`): placeholders are stable across runs.
    pub fn from_bytes(b: &[u8]) -> Self {
        Key(b.to_vec())
    }

    /// A fresh random key for one run.
    pub fn random() -> Result<Self, String> {
        let mut k = vec![0u8; 32];
        getrandom::fill(&mut k).map_err(|e| format!("no random key: {e}"))?;
        Ok(Key(k))
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

/// Engine settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// User rules, checked before the built-ins.
    pub rules: Vec<Rule>,
    /// The placeholder key.
    pub key: Key,
    /// Minimum Shannon entropy (bits per byte) of a value in a secret-looking context.
    pub entropy_bits: f64,
}

/// Default of [`Config::entropy_bits`].
pub const DEFAULT_ENTROPY_BITS: f64 = 3.5;

struct PatInfo {
    kind: KindId,
    check: Check,
    context: bool,
}

/// The compiled detectors. Immutable; per-thread state lives in [`Scratch`].
pub struct Engine {
    re: Regex,
    dfa: DFA,
    tokens: Regex,
    keys: Regex,
    pats: Vec<PatInfo>,
    kinds: Vec<String>,
    /// Bytes that can start a match (in some left context).
    can_start: [bool; 256],
    min_len: usize,
    hmac: hmac::Hmac<sha2::Sha256>,
    bits: f64,
    truncated: KindId,
}

/// Mutable search state for one [`Engine`].
pub struct Scratch {
    re: meta::Cache,
    caps: Captures,
    dfa: DfaCache,
    tokens: meta::Cache,
    keys: meta::Cache,
}

fn syntax_cfg() -> syntax::Config {
    // Like `regex::bytes`: Unicode on (user rules may use it), matches need not be UTF-8.
    syntax::Config::new().utf8(false)
}

fn build(pats: &[String]) -> Result<Regex, meta::BuildError> {
    Regex::builder()
        .syntax(syntax_cfg())
        .configure(Regex::config().utf8_empty(false))
        .build_many(pats)
}

impl Engine {
    /// Compile the user rules and the built-ins. Errors name the rule, never its value.
    pub fn new(cfg: Config) -> Result<Self, RuleError> {
        let mut kinds: Vec<String> = Vec::new();
        let mut kind_id = |k: &str| -> KindId {
            match kinds.iter().position(|x| x == k) {
                Some(i) => i as KindId,
                None => {
                    kinds.push(k.to_owned());
                    (kinds.len() - 1) as KindId
                }
            }
        };
        let mut pats = Vec::new();
        let mut infos = Vec::new();
        for r in &cfg.rules {
            let p = match &r.pattern {
                Pattern::Literal(v) => {
                    format!("(?-u:{})", regex::escape(&String::from_utf8_lossy(v)))
                }
                Pattern::Regex(re) => {
                    // Alone first, so a bad rule is reported by name.
                    let one = build(std::slice::from_ref(re)).map_err(|_| RuleError {
                        rule: r.name.clone(),
                        reason: "not a valid regular expression".into(),
                    })?;
                    if one.is_match(&b""[..]) {
                        return Err(RuleError {
                            rule: r.name.clone(),
                            reason: "matches the empty string".into(),
                        });
                    }
                    re.clone()
                }
            };
            pats.push(p);
            infos.push(PatInfo {
                kind: kind_id(&r.kind),
                check: Check::Any,
                context: false,
            });
        }
        for b in BUILTINS {
            pats.push(format!("(?-u:{})", b.re));
            infos.push(PatInfo {
                kind: kind_id(b.kind),
                check: b.check,
                context: b.context,
            });
        }
        let truncated = kind_id("truncated");
        let internal = |e: String| RuleError {
            rule: "built-in".into(),
            reason: e,
        };
        let re = build(&pats).map_err(|e| internal(e.to_string()))?;
        let dfa = DFA::builder()
            .syntax(syntax_cfg())
            .configure(DFA::config().match_kind(MatchKind::LeftmostFirst))
            .build_many(&pats)
            .map_err(|e| internal(e.to_string()))?;
        let token_pats: Vec<String> = BUILTINS[..TOKEN_DETECTORS]
            .iter()
            .map(|b| format!("(?-u:{})", b.re))
            .collect();
        let tokens = build(&token_pats).map_err(|e| internal(e.to_string()))?;
        let key_pats: Vec<String> = KEY_CONTEXTS
            .iter()
            .map(|(_, re, _)| format!("(?-u:{re})"))
            .collect();
        let keys = build(&key_pats).map_err(|e| internal(e.to_string()))?;
        let min_len = pats
            .iter()
            .filter_map(|p| {
                syntax::parse_with(p, &syntax_cfg())
                    .ok()
                    .and_then(|h| h.properties().minimum_len())
            })
            .min()
            .unwrap_or(1)
            .max(1);
        let hmac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&cfg.key.0)
            .map_err(|_| internal("bad key".into()))?;
        let mut e = Engine {
            re,
            dfa,
            tokens,
            keys,
            pats: infos,
            kinds,
            can_start: [false; 256],
            min_len,
            hmac,
            bits: cfg.entropy_bits,
            truncated,
        };
        e.can_start = e.start_bytes();
        Ok(e)
    }

    /// Fresh search state.
    pub fn scratch(&self) -> Scratch {
        Scratch {
            re: self.re.create_cache(),
            caps: self.re.create_captures(),
            dfa: self.dfa.create_cache(),
            tokens: self.tokens.create_cache(),
            keys: self.keys.create_cache(),
        }
    }

    /// The name of a kind.
    pub fn kind(&self, k: KindId) -> &str {
        &self.kinds[k as usize]
    }

    /// The kind used for a possible secret cut by the end of a truncated line.
    pub fn truncated_kind(&self) -> KindId {
        self.truncated
    }

    /// Append `[REDACTED:<kind>:<6 hex>]`: the hex is a keyed hash of the secret, so the same
    /// secret gives the same placeholder and nothing about it can be recovered.
    pub fn placeholder(&self, kind: KindId, secret: &[u8], out: &mut Vec<u8>) {
        let mut m = self.hmac.clone();
        m.update(secret);
        let tag = m.finalize().into_bytes();
        out.extend_from_slice(b"[REDACTED:");
        out.extend_from_slice(self.kind(kind).as_bytes());
        out.push(b':');
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for &x in &tag[..3] {
            out.push(HEX[(x >> 4) as usize]);
            out.push(HEX[(x & 15) as usize]);
        }
        out.push(b']');
    }

    fn start_bytes(&self) -> [bool; 256] {
        let mut cache = self.dfa.create_cache();
        let mut t = [false; 256];
        for (b, slot) in t.iter_mut().enumerate() {
            for prev in [None, Some(b'a'), Some(b' ')] {
                let mut hay = Vec::new();
                hay.extend(prev);
                let at = hay.len();
                hay.push(b as u8);
                if self.alive_in(&mut cache, &hay, at) {
                    *slot = true;
                }
            }
        }
        t
    }

    /// Whether an anchored match starting at `p` is still possible (or still growing) at the
    /// end of `text`.
    fn alive_in(&self, cache: &mut DfaCache, text: &[u8], p: usize) -> bool {
        let input = Input::new(text).range(p..).anchored(Anchored::Yes);
        let Ok(mut sid) = self.dfa.start_state_forward(cache, &input) else {
            return true;
        };
        if sid.is_dead() {
            return false;
        }
        for &c in &text[p..] {
            match self.dfa.next_state(cache, sid, c) {
                Ok(s) => sid = s,
                Err(_) => return true,
            }
            if sid.is_dead() {
                return false;
            }
            if sid.is_quit() {
                return true;
            }
        }
        true
    }

    fn first_alive(&self, sc: &mut Scratch, text: &[u8], from: usize, to: usize) -> Option<usize> {
        (from..to)
            .find(|&p| self.can_start[text[p] as usize] && self.alive_in(&mut sc.dfa, text, p))
    }

    /// Find the secrets in `text[from..]`, appending them to `hits` in order.
    ///
    /// With `eof`, `text` is complete and the result is `text.len()`. Without it, more text may
    /// follow: the scan stops at the first position where a match could still start or grow
    /// and returns it. Everything before it is decided (hits end there or before) and is what a
    /// scan of the complete text would decide, so a stream can release it.
    pub fn scan(
        &self,
        sc: &mut Scratch,
        text: &[u8],
        from: usize,
        eof: bool,
        hits: &mut Vec<Hit>,
    ) -> usize {
        let len = text.len();
        if eof && len.saturating_sub(from) < self.min_len {
            return len;
        }
        let mut pos = from;
        while pos < len {
            let input = Input::new(text).range(pos..);
            self.re
                .search_captures_with(&mut sc.re, &input, &mut sc.caps);
            let m = sc.caps.get_match();
            if !eof {
                let limit = m.map_or(len, |m| m.start());
                if let Some(p) = self.first_alive(sc, text, pos, limit) {
                    return char_floor(text, p, pos);
                }
            }
            let Some(m) = m else { return len };
            if !eof && self.alive_in(&mut sc.dfa, text, m.start()) {
                return char_floor(text, m.start(), pos);
            }
            match self.accept(sc, text, m.pattern().as_usize()) {
                Some(h) => {
                    hits.push(h);
                    pos = m.end().max(h.end).max(m.start() + 1);
                }
                None => pos = m.start() + 1,
            }
        }
        len
    }

    /// Turn the match in `sc.caps` into a hit, if its check passes.
    fn accept(&self, sc: &mut Scratch, text: &[u8], pid: usize) -> Option<Hit> {
        let info = &self.pats[pid];
        let whole = sc.caps.get_match()?;
        let span = (1..sc.caps.group_len())
            .find_map(|g| sc.caps.get_group(g))
            .unwrap_or(whole.span());
        let (s, e) = widen(text, span.start, span.end);
        let secret = &text[s..e];
        if !detect::check(info.check, secret, self.bits) {
            return None;
        }
        let kind = if info.context {
            self.classify(sc, secret).unwrap_or(info.kind)
        } else {
            info.kind
        };
        Some(Hit {
            start: s,
            end: e,
            kind,
        })
    }

    /// The token detector that matches all of `secret`, if any.
    fn classify(&self, sc: &mut Scratch, secret: &[u8]) -> Option<KindId> {
        let input = Input::new(secret).anchored(Anchored::Yes);
        let m = self.tokens.search_with(&mut sc.tokens, &input)?;
        let pid = self.user_rules() + m.pattern().as_usize();
        (m.end() == secret.len()).then(|| self.pats[pid].kind)
    }

    fn user_rules(&self) -> usize {
        self.pats.len() - BUILTINS.len()
    }

    /// Whether string values of member `key` are checked whole (`password`, `api_key`, …).
    pub fn is_secret_key(&self, sc: &mut Scratch, key: &[u8]) -> bool {
        key.len() >= 3
            && self
                .keys
                .search_with(&mut sc.keys, &Input::new(key))
                .is_some()
    }

    /// A whole string value whose member name is secret-looking (`"password": "…"`): the hit
    /// covering it, if the value passes the key's check.
    pub fn key_hit(&self, sc: &mut Scratch, key: &[u8], value: &[u8]) -> Option<Hit> {
        if value.len() < 6 || key.len() < 3 {
            return None;
        }
        let m = self.keys.search_with(&mut sc.keys, &Input::new(key))?;
        // (`is_secret_key` is the same test: delta streams hold such values whole.)
        let (name, _, check) = KEY_CONTEXTS[m.pattern().as_usize()];
        let (s, e) = detect::key_value_span(check, value);
        let secret = &value[s..e];
        if !detect::key_value_shape(check, secret) || !detect::check(check, secret, self.bits) {
            return None;
        }
        let kind = self.classify(sc, secret).unwrap_or_else(|| {
            self.kinds
                .iter()
                .position(|k| k == name)
                .expect("built-in kinds are registered") as KindId
        });
        Some(Hit {
            start: s,
            end: e,
            kind,
        })
    }

    /// Redact a complete string value: the key context first, else a full scan. With `cut`
    /// (the string was cut by the end of a truncated line), whatever could still have been
    /// the start of a secret at the end is reported as `truncated`.
    pub fn scan_value(
        &self,
        sc: &mut Scratch,
        key: Option<&[u8]>,
        text: &[u8],
        cut: bool,
        hits: &mut Vec<Hit>,
    ) {
        if let Some(k) = key {
            if !cut {
                if let Some(h) = self.key_hit(sc, k, text) {
                    hits.push(h);
                    return;
                }
            }
        }
        let d = self.scan(sc, text, 0, !cut, hits);
        if d < text.len() {
            hits.push(Hit {
                start: d,
                end: text.len(),
                kind: self.truncated,
            });
        }
    }
}

fn is_cont(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Move `p` back to a UTF-8 character start (not before `floor`).
fn char_floor(text: &[u8], mut p: usize, floor: usize) -> usize {
    while p > floor && p < text.len() && is_cont(text[p]) {
        p -= 1;
    }
    p
}

/// Widen `[s, e)` to whole UTF-8 characters.
fn widen(text: &[u8], mut s: usize, mut e: usize) -> (usize, usize) {
    while s > 0 && s < text.len() && is_cont(text[s]) {
        s -= 1;
    }
    while e < text.len() && is_cont(text[e]) {
        e += 1;
    }
    (s, e)
}
