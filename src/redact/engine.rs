//! The compiled detector set: user rules and built-ins in one multi-pattern automaton, the
//! "could this still become a secret" test used by delta streams, and keyed placeholders.
//!
//! All patterns go into one `regex_automata::meta::Regex` (the engine behind the `regex`
//! crate): a single leftmost-first pass over a string finds the first secret and which pattern
//! matched, where a `RegexSet` would only say that some pattern matched somewhere. The same
//! patterns also go into a lazy DFA, walked anchored from a position to tell whether more input
//! could still produce a match there.

use std::sync::LazyLock;

use aho_corasick::{Span, packed};
use hmac::{KeyInit, Mac};
use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};

use super::detect::{
    self, ANCHORS, BUILTINS, Check, KEY_CONTEXTS, KEYWORD_ANCHORS, TOKEN_DETECTORS, URL_ANCHOR,
};
use super::lex::widen;
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

pub(super) struct PatInfo {
    kind: KindId,
    check: Check,
    context: bool,
}

/// The compiled detectors. Immutable; per-thread state lives in [`Scratch`].
pub struct Engine {
    pub(super) re: Regex,
    pub(super) dfa: DFA,
    pub(super) tokens: Regex,
    pub(super) keys: Regex,
    pub(super) pats: Vec<PatInfo>,
    pub(super) kinds: Vec<String>,
    /// Bytes that can start a match (in some left context).
    pub(super) can_start: [bool; 256],
    pub(super) min_len: usize,
    pub(super) hmac: hmac::Hmac<sha2::Sha256>,
    pub(super) bits: f64,
    pub(super) truncated: KindId,
    /// Literals every match contains (`None` when a user regex has no known ones), and how
    /// far after a match's start each can be.
    pub(super) anchors: Option<packed::Searcher>,
    pub(super) anchor_back: Vec<usize>,
}

/// What [`Engine::find_anchors`] noticed in a line besides detector literals.
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    /// The literals are known (false when a user regex has none: assume a secret anywhere).
    pub known: bool,
    /// `"stream_event"` occurs.
    pub stream_event: bool,
    /// A `\u00` escape (which can encode an ASCII character of a literal) occurs.
    pub unicode_escape: bool,
}

pub(super) const STREAM_EVENT: usize = usize::MAX;

/// What marks a Claude delta line, found in the same pass as the detector literals (other
/// agents' delta lines are told by their first member: `super::deltas::foreign_hint`, which
/// costs nothing on Claude's lines; as a literal here each marker cost ~2 % more per byte).
const DELTA_MARKERS: [&[u8]; 1] = [b"\"stream_event\""];
const UNICODE_ESCAPE: usize = usize::MAX - 1;

/// A search looked at a JSON escape: scan the decoded string instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Escaped;

/// Detector literals found in a text: `(start, back)`, ascending, one per start position.
pub type Anchors = Vec<(usize, usize)>;

/// Mutable search state for one [`Engine`].
pub struct Scratch {
    pub(super) re: meta::Cache,
    pub(super) caps: Captures,
    pub(super) dfa: DfaCache,
    pub(super) tokens: meta::Cache,
    pub(super) keys: meta::Cache,
    pub(super) starts: Anchors,
}

fn syntax_cfg() -> syntax::Config {
    // Like `regex::bytes`: Unicode on (user rules may use it), matches need not be UTF-8.
    syntax::Config::new().utf8(false)
}

/// Compile `pats` into one regex (the error is the library's text: it may quote a pattern,
/// so it is only shown for built-ins).
fn build(pats: &[String]) -> Result<Regex, String> {
    Regex::builder()
        .syntax(syntax_cfg())
        .configure(Regex::config().utf8_empty(false))
        .build_many(pats)
        .map_err(|e| e.to_string())
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
        let mut anchor_lits: Vec<Vec<u8>> = Vec::new();
        let mut anchor_back: Vec<usize> = Vec::new();
        for (lit, back) in ANCHORS {
            anchor_lits.push(lit.as_bytes().to_vec());
            anchor_back.push(*back);
        }
        for (w, back) in KEYWORD_ANCHORS {
            for sp in detect::spellings(w) {
                anchor_lits.push(sp.into_bytes());
                anchor_back.push(*back);
            }
        }
        let mut anchored = true;
        for r in &cfg.rules {
            match &r.pattern {
                Pattern::Literal(v) => {
                    anchor_lits.push(v.clone());
                    anchor_back.push(0);
                }
                Pattern::Regex(_) => anchored = false,
            }
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
            pats.push(detect::expand(b.re));
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
        // The library's message may quote a pattern, i.e. a user's literal: not shown.
        let re = build(&pats).map_err(|_| RuleError {
            rule: "--redact-*".into(),
            reason: "the rules are too large to compile together".into(),
        })?;
        let dfa = DFA::builder()
            .syntax(syntax_cfg())
            .configure(DFA::config().match_kind(MatchKind::LeftmostFirst))
            .build_many(&pats)
            .map_err(|e| internal(e.to_string()))?;
        let token_pats: Vec<String> = BUILTINS[..TOKEN_DETECTORS]
            .iter()
            .map(|b| detect::expand(b.re))
            .collect();
        let tokens = build(&token_pats).map_err(internal)?;
        let key_pats: Vec<String> = KEY_CONTEXTS
            .iter()
            .map(|(_, re, _)| detect::expand(re))
            .collect();
        let keys = build(&key_pats).map_err(internal)?;
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
        // Leftmost-first: built-ins come first, so where a user literal and a built-in
        // literal start at the same place the built-in one (whose `back` may be larger) is
        // reported.
        let anchors = if anchored {
            let mut b = packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .builder();
            for l in &anchor_lits {
                b.add(l);
            }
            // Not secrets: noticed in the same pass over a raw line.
            for marker in DELTA_MARKERS {
                b.add(marker);
                anchor_back.push(STREAM_EVENT);
            }
            b.add(b"\\u00");
            anchor_back.push(UNICODE_ESCAPE);
            b.build()
        } else {
            None
        };
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
            anchors,
            anchor_back,
        };
        e.can_start = e.start_bytes();
        Ok(e)
    }

    /// The same engine searching every position instead of only where detector literals
    /// allow (as with a user regex rule). Slower; for tests, which compare the two.
    #[doc(hidden)]
    pub fn exhaustive(mut self) -> Self {
        self.anchors = None;
        self
    }

    /// Fresh search state.
    pub fn scratch(&self) -> Scratch {
        Scratch {
            re: self.re.create_cache(),
            caps: self.re.create_captures(),
            dfa: self.dfa.create_cache(),
            tokens: self.tokens.create_cache(),
            keys: self.keys.create_cache(),
            starts: Vec::new(),
        }
    }

    /// Every position of `text` where a detector literal starts, for
    /// [`Engine::scan_value`]. A text without literals holds no secret, but escapes hide
    /// literals: look at decoded text, or at raw JSON without `\u00…`/`\/` escapes. The same
    /// pass notes a few other literals of a raw line.
    pub fn find_anchors(&self, text: &[u8], out: &mut Anchors) -> Seen {
        out.clear();
        let mut seen = Seen::default();
        let Some(t) = &self.anchors else {
            // No literals known (a user regex): the other literals still count.

            static UNICODE: LazyLock<memchr::memmem::Finder<'static>> =
                LazyLock::new(|| memchr::memmem::Finder::new(b"\\u00"));
            seen.stream_event = DELTA_MARKERS
                .iter()
                .any(|m| memchr::memmem::find(text, m).is_some());
            seen.unicode_escape = UNICODE.find(text).is_some();
            return seen;
        };
        seen.known = true;
        static URL: LazyLock<memchr::memmem::Finder<'static>> =
            LazyLock::new(|| memchr::memmem::Finder::new(URL_ANCHOR));
        let mut pos = 0;
        let mut urls = URL.find_iter(text).peekable();
        while pos < text.len() {
            let Some(m) = t.find_in(text, Span::from(pos..text.len())) else {
                break;
            };
            // Restart right after the start: overlapping literals are found too.
            pos = m.start() + 1;
            match self.anchor_back[m.pattern().as_usize()] {
                STREAM_EVENT => seen.stream_event = true,
                UNICODE_ESCAPE => seen.unicode_escape = true,
                back => {
                    while let Some(&u) = urls.peek().filter(|&&u| u < m.start()) {
                        out.push((u, 0));
                        urls.next();
                    }
                    out.push((m.start(), back));
                }
            }
        }
        for u in urls {
            if out.last().is_none_or(|l| l.0 < u) {
                out.push((u, 0));
            }
        }
        seen
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

    /// Turn the match in `sc.caps` into a hit, if its check passes.
    pub(super) fn accept(&self, sc: &mut Scratch, text: &[u8], pid: usize) -> Option<Hit> {
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
    pub(super) fn classify(&self, sc: &mut Scratch, secret: &[u8]) -> Option<KindId> {
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
        let r = self.scan_value_at(sc, key, text, cut, None, false, hits);
        debug_assert!(r.is_ok());
    }

    /// [`Engine::scan_value`] with the detector literals of `text` already found
    /// ([`Engine::find_anchors`]). With `raw_json` (see `Engine::scan_anchored`), `text` is a
    /// raw JSON string with two-byte escapes; hits are then in raw coordinates, and
    /// `Err(Escaped)` asks for the decoded string.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_value_at(
        &self,
        sc: &mut Scratch,
        key: Option<&[u8]>,
        text: &[u8],
        cut: bool,
        anchors: Option<&[(usize, usize)]>,
        raw_json: bool,
        hits: &mut Vec<Hit>,
    ) -> Result<(), Escaped> {
        if let Some(k) = key
            && !cut
        {
            if raw_json && self.is_secret_key(sc, k) {
                return Err(Escaped);
            }
            if let Some(h) = self.key_hit(sc, k, text) {
                hits.push(h);
                return Ok(());
            }
        }
        if let (Some(a), false, true) = (anchors, cut, self.anchors.is_some()) {
            if text.len() >= self.min_len {
                let n = hits.len();
                let r = self.scan_anchored(sc, text, 0, a, raw_json, hits);
                if r.is_err() {
                    hits.truncate(n);
                }
                return r;
            }
            return Ok(());
        }
        if raw_json {
            return Err(Escaped);
        }
        let d = self.scan(sc, text, 0, !cut, hits);
        if d < text.len() {
            hits.push(Hit {
                start: d,
                end: text.len(),
                kind: self.truncated,
            });
        }
        Ok(())
    }
}
