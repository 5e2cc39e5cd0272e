//! Estimated cost of transcript usage: a dated price table per model, embedded in the binary
//! (`prices.json`), overridable with `--prices FILE`.
//!
//! Transcripts carry no cost. What this module computes is always an *estimate* (list prices
//! times token counts), reported as `cost_estimate_usd` with `cost_source` and `prices_date`
//! beside it, never under the CLI's own `total_cost_usd`. A model the table does not price
//! leaves its tokens out of the estimate and is named in `unpriced_models`.
//!
//! A model id is looked up as written, then without a trailing `-YYYYMMDD` date and without a
//! `[…]` suffix (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::usage::Tokens;
use crate::error::Error;

/// The embedded table.
const EMBEDDED: &str = include_str!("prices.json");

/// USD per million tokens of one model.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// 5-minute cache writes.
    pub cache_write: f64,
    /// 1-hour cache writes (when absent: 1.6 × `cache_write`, the ratio of every published price).
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
}

impl Price {
    /// The cost of `t` in USD.
    pub fn cost(&self, t: &Tokens) -> f64 {
        let w1 = self.cache_write_1h.unwrap_or(self.cache_write * 1.6);
        (t.input as f64 * self.input
            + t.output as f64 * self.output
            + t.cache_read as f64 * self.cache_read
            + t.cache_write_5m as f64 * self.cache_write
            + t.cache_write_1h as f64 * w1)
            / 1e6
    }
}

#[derive(Deserialize)]
struct File {
    date: String,
    #[serde(default)]
    #[allow(dead_code)]
    unit: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
    models: BTreeMap<String, Price>,
}

/// A price table.
#[derive(Debug, Clone)]
pub struct Prices {
    /// The date the prices were compiled (`YYYY-MM-DD`).
    pub date: String,
    /// `embedded`, or the `--prices` file's path.
    pub source: String,
    models: BTreeMap<String, Price>,
}

/// A cost estimate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    /// USD, for the priced models' tokens.
    pub usd: f64,
    /// Models with tokens and no price (their tokens are not in `usd`).
    pub unpriced: Vec<String>,
}

impl Prices {
    /// The table built into the binary.
    pub fn embedded() -> Self {
        let f: File = serde_json::from_str(EMBEDDED).expect("the embedded price table parses");
        Prices {
            date: f.date,
            source: "embedded".into(),
            models: f.models,
        }
    }

    /// The embedded table with the models of the JSON file at `path` added or replaced (same
    /// shape as the embedded `prices.json`: `{"date": "YYYY-MM-DD", "models": {"id": {"input":
    /// …, "output": …, "cache_read": …, "cache_write": …, "cache_write_1h": …}}}`, USD per
    /// million tokens); the file's date and path become the table's.
    pub fn with_file(path: &Path) -> Result<Self, Error> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(&name, e))?;
        let f: File = serde_json::from_str(&text)
            .map_err(|e| Error::msg(format!("--prices {name}"), e.to_string()))?;
        let mut p = Self::embedded();
        for (m, price) in f.models {
            let ok = [
                price.input,
                price.output,
                price.cache_read,
                price.cache_write,
            ]
            .into_iter()
            .chain(price.cache_write_1h)
            .all(|x| x.is_finite() && x >= 0.0);
            if !ok {
                return Err(Error::msg(
                    format!("--prices {name}"),
                    format!("model {m}: prices must be finite and not negative"),
                ));
            }
            p.models.insert(m, price);
        }
        p.date = f.date;
        p.source = name;
        Ok(p)
    }

    /// The price of `model` (see the module docs for the lookup).
    pub fn price(&self, model: &str) -> Option<&Price> {
        let mut m = model.trim();
        if let Some(i) = m.find('[') {
            m = &m[..i];
        }
        if let Some(p) = self.models.get(m) {
            return Some(p);
        }
        let undated = match m.rsplit_once('-') {
            Some((head, tail)) if tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()) => {
                head
            }
            _ => m,
        };
        self.models.get(undated)
    }

    /// The estimated cost of `by_model` (tokens per model id).
    pub fn estimate(&self, by_model: &BTreeMap<String, Tokens>) -> Estimate {
        let mut e = Estimate::default();
        for (model, t) in by_model {
            if t.total() == 0 {
                continue;
            }
            match self.price(model) {
                Some(p) => e.usd += p.cost(t),
                None => e.unpriced.push(model.clone()),
            }
        }
        e
    }
}

impl Estimate {
    /// The members `run.end` gets for a transcript run: `input_format`, `cost_estimate_usd`
    /// (`null` when no token was priced), `cost_source`, `prices_date` and `unpriced_models`
    /// (each value raw JSON).
    pub fn end_members(&self, prices: &Prices, priced_any: bool) -> Vec<(String, String)> {
        let js = |v: serde_json::Value| v.to_string();
        let usd = if priced_any {
            js(serde_json::json!(round_usd(self.usd)))
        } else {
            "null".into()
        };
        vec![
            ("input_format".into(), js("transcript".into())),
            ("cost_estimate_usd".into(), usd),
            ("cost_source".into(), js(prices.source.clone().into())),
            ("prices_date".into(), js(prices.date.clone().into())),
            ("unpriced_models".into(), js(self.unpriced.clone().into())),
        ]
    }
}

/// `usd` to a millionth of a dollar (estimates are not more precise, and binary-float tails such
/// as `0.30000000000000004` would only suggest they were).
pub fn round_usd(usd: f64) -> f64 {
    (usd * 1e6).round() / 1e6
}

impl Prices {
    /// Whether any model of `by_model` with tokens has a price.
    pub fn prices_any(&self, by_model: &BTreeMap<String, Tokens>) -> bool {
        by_model
            .iter()
            .any(|(m, t)| t.total() > 0 && self.price(m).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_ids_find_their_family() {
        let p = Prices::embedded();
        assert_eq!(
            p.price("claude-sonnet-4-5-20250929"),
            p.price("claude-sonnet-4-5")
        );
        assert!(p.price("claude-sonnet-4-20250514").is_some());
        assert!(p.price("claude-sonnet-4-5[1m]").is_some());
        assert!(p.price("claude-opus-5-5").is_none());
        assert!(p.price("<synthetic>").is_none());
    }

    #[test]
    fn an_estimate_prices_each_kind_of_token_apart() {
        let p = Prices::embedded();
        let mut m = BTreeMap::new();
        m.insert(
            "claude-sonnet-4-5-20250929".to_owned(),
            Tokens {
                input: 1_000_000,
                output: 1_000_000,
                cache_read: 1_000_000,
                cache_write_5m: 1_000_000,
                cache_write_1h: 1_000_000,
            },
        );
        m.insert(
            "mystery".to_owned(),
            Tokens {
                input: 5,
                ..Default::default()
            },
        );
        m.insert("<synthetic>".to_owned(), Tokens::default());
        let e = p.estimate(&m);
        assert!(
            (e.usd - (3.0 + 15.0 + 0.3 + 3.75 + 6.0)).abs() < 1e-9,
            "{}",
            e.usd
        );
        assert_eq!(e.unpriced, vec!["mystery".to_owned()]);
    }
}
