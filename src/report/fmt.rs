//! Numbers for people: token counts (`12.3k`), durations (`4.2 s`, `3 m 10 s`), costs
//! (`$0.0123`), sizes (`1.4 MB`) and UTC times, always the same for the same value.

/// `950`, `12.3k`, `4.56M`.
pub fn count(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => trim(format!("{:.1}", n as f64 / 1e3)) + "k",
        _ => trim(format!("{:.2}", n as f64 / 1e6)) + "M",
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// `850 ms`, `4.2 s`, `3 m 10 s`, `2 h 5 m`.
pub fn ms(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => trim(format!("{:.1}", ms as f64 / 1e3)) + " s",
        60_000..=3_599_999 => format!("{} m {} s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{} h {} m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// A cost as the CLI reported it: `$0.0123`, `$1.23`; `n/a` when none was given.
pub fn cost(c: Option<f64>) -> String {
    match c {
        Some(c) if c.is_finite() && c >= 1.0 => format!("${c:.2}"),
        Some(c) if c.is_finite() => format!("${c:.4}"),
        _ => "n/a".into(),
    }
}

/// `512 B`, `12.3 KB`, `4.5 MB` (powers of 1000).
pub fn bytes(b: u64) -> String {
    match b {
        0..=999 => format!("{b} B"),
        1_000..=999_999 => trim(format!("{:.1}", b as f64 / 1e3)) + " KB",
        _ => trim(format!("{:.1}", b as f64 / 1e6)) + " MB",
    }
}

/// `1 line`, `3 lines`.
pub fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
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
    fn formats() {
        assert_eq!(count(950), "950");
        assert_eq!(count(12_345), "12.3k");
        assert_eq!(count(2_000), "2k");
        assert_eq!(count(4_560_000), "4.56M");
        assert_eq!(ms(850), "850 ms");
        assert_eq!(ms(4_200), "4.2 s");
        assert_eq!(ms(190_000), "3 m 10 s");
        assert_eq!(cost(Some(0.01234)), "$0.0123");
        assert_eq!(cost(None), "n/a");
        assert_eq!(bytes(1_400_000), "1.4 MB");
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
    }
}
