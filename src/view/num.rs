//! Numbers for people: token counts, durations, byte sizes and costs in one of two styles (terse
//! for a terminal row, roomy for a page), counts with their unit, and UTC times. The same value
//! always reads the same in the same style.

/// How numbers are written: the scales and units are the same, precision and spacing differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// For a terminal row, where cells are scarce: `45k`, `4m05s`, `12 MB`, `$1.2345`.
    Terse,
    /// For a page: `45.4k`, `4 m 5 s`, `12.3 MB`, `$1.23` (trailing zeros dropped).
    Roomy,
}

use Style::{Roomy, Terse};

/// `s` without trailing zeros after its decimal point (nor the point itself then).
fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

impl Style {
    /// `v` with `places` decimals, trailing zeros dropped in the roomy style.
    fn fixed(self, v: f64, places: usize) -> String {
        let s = format!("{v:.places$}");
        if self == Roomy { trim(s) } else { s }
    }

    /// A token count: `950`; terse `1.2k`, `45k`, `1.3M`; roomy `1.2k`, `45.4k`, `1.25M`.
    pub fn tokens(self, n: u64) -> String {
        match (self, n) {
            (_, 0..=999) => n.to_string(),
            (Terse, 10_000..=999_999) => format!("{}k", (n as f64 / 1e3).round() as u64),
            (_, 1_000..=999_999) => self.fixed(n as f64 / 1e3, 1) + "k",
            _ => self.fixed(n as f64 / 1e6, if self == Terse { 1 } else { 2 }) + "M",
        }
    }

    /// A duration in milliseconds: terse `850ms`, `12.3s`, `4m05s`, `1h02m`; roomy `850 ms`,
    /// `12.3 s`, `4 m 5 s`, `1 h 2 m`.
    pub fn duration_ms(self, ms: u64) -> String {
        let (sep, pad) = match self {
            Terse => ("", 2),
            Roomy => (" ", 0),
        };
        let two =
            |a: u64, ua: &str, b: u64, ub: &str| format!("{a}{sep}{ua}{sep}{b:0>pad$}{sep}{ub}");
        match ms {
            0..=999 => format!("{ms}{sep}ms"),
            1_000..=59_999 => format!("{}{sep}s", self.fixed(ms as f64 / 1e3, 1)),
            60_000..=3_599_999 => two(ms / 60_000, "m", ms / 1000 % 60, "s"),
            _ => two(ms / 3_600_000, "h", ms / 60_000 % 60, "m"),
        }
    }

    /// A byte count (powers of 1000): `512 B`; terse `1.5 KB`, `12 MB`; roomy `1.5 KB`,
    /// `12.3 MB`.
    pub fn bytes(self, n: u64) -> String {
        for (size, unit) in [(1e9, "GB"), (1e6, "MB"), (1e3, "KB")] {
            if n as f64 >= size {
                let v = n as f64 / size;
                let places = usize::from(self == Roomy || v < 10.0);
                return format!("{} {unit}", self.fixed(v, places));
            }
        }
        format!("{n} B")
    }

    /// A cost in US dollars as the CLI reported it: `$0.0123`; terse `$1.2345` (and six decimals
    /// below a hundredth of a cent), roomy `$1.23`; `n/a` for what is not a finite number.
    pub fn usd(self, v: f64) -> String {
        let places = match self {
            _ if !v.is_finite() => return "n/a".into(),
            Terse if v != 0.0 && v.abs() < 0.0001 => 6,
            Roomy if v >= 1.0 => 2,
            _ => 4,
        };
        format!("${v:.places$}")
    }
}

/// A count with its unit, singular or plural: `1 line`, `3 lines`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// µs since the epoch as `2025-11-22 15:32:00 UTC`.
pub fn utc(us: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_micros(us.max(0) as u64);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    s.replace('T', " ").replace('Z', " UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_styles() {
        type Case = (fn(Style, u64) -> String, u64, &'static str, &'static str);
        let cases: &[Case] = &[
            (Style::tokens, 950, "950", "950"),
            (Style::tokens, 1_234, "1.2k", "1.2k"),
            (Style::tokens, 2_000, "2.0k", "2k"),
            (Style::tokens, 45_400, "45k", "45.4k"),
            (Style::tokens, 1_300_000, "1.3M", "1.3M"),
            (Style::tokens, 4_560_000, "4.6M", "4.56M"),
            (Style::duration_ms, 850, "850ms", "850 ms"),
            (Style::duration_ms, 12_345, "12.3s", "12.3 s"),
            (Style::duration_ms, 4_000, "4.0s", "4 s"),
            (Style::duration_ms, 245_000, "4m05s", "4 m 5 s"),
            (Style::duration_ms, 3_720_000, "1h02m", "1 h 2 m"),
            (Style::bytes, 512, "512 B", "512 B"),
            (Style::bytes, 1_536, "1.5 KB", "1.5 KB"),
            (Style::bytes, 2_000, "2.0 KB", "2 KB"),
            (Style::bytes, 12_345_678, "12 MB", "12.3 MB"),
            (Style::bytes, 1_500_000_000, "1.5 GB", "1.5 GB"),
        ];
        for (f, n, terse, roomy) in cases {
            assert_eq!(
                (f(Terse, *n), f(Roomy, *n)),
                (terse.to_string(), roomy.to_string())
            );
        }
        assert_eq!(
            (Terse.usd(0.01234), Roomy.usd(0.01234)),
            ("$0.0123".into(), "$0.0123".into())
        );
        assert_eq!(
            (Terse.usd(1.2345), Roomy.usd(1.2345)),
            ("$1.2345".into(), "$1.23".into())
        );
        assert_eq!(
            (Terse.usd(0.00001), Terse.usd(0.0)),
            ("$0.000010".into(), "$0.0000".into())
        );
        assert_eq!(Roomy.usd(f64::NAN), "n/a");
    }

    #[test]
    fn units_and_times() {
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(2, "line", "lines"), "2 lines");
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
    }
}
