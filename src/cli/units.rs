//! Parsers of option values with units: durations (`30s`, `5m`, `1500ms`, bare seconds) and
//! byte sizes (`5MB`, `64KiB`, bare bytes), and the audit run id. Every size option and every
//! duration option of every command takes its value through these, so all take the same units.

use std::time::Duration;

/// Parse a duration: `30s`, `5m`, `1500ms`, `1h 30m` (humantime syntax) or bare seconds (`30`,
/// `0.5`).
pub fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Ok(Duration::from_secs_f64(secs));
        }
        return Err(format!("{s:?}: not a duration"));
    }
    humantime::parse_duration(t).map_err(|e| format!("{s:?}: {e} (e.g. 30s, 5m, 1500ms)"))
}

/// A byte count: a number with an optional unit (B; KB, MB, GB decimal; KiB, MiB, GiB and K, M, G
/// binary), case-insensitive, with an optional space.
pub fn size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?}: not a size (e.g. 5000000, 5MB, 5MiB, 64KiB)"))?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?} (B, KB, MB, GB, KiB, MiB, GiB)"
            ));
        }
    };
    let v = n * mult as f64;
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return Err(format!("{s:?}: out of range"));
    }
    Ok(v.round() as u64)
}

/// [`size`] for an option held as `usize`.
pub fn size_usize(s: &str) -> Result<usize, String> {
    let n = size(s)?;
    usize::try_from(n).map_err(|_| format!("{s:?}: out of range"))
}

/// A run id: non-empty and printable.
pub fn run_id(s: &str) -> Result<String, String> {
    if s.is_empty() || s.chars().any(char::is_control) {
        return Err("the run id must be non-empty and printable".into());
    }
    Ok(s.to_owned())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn sizes() {
        let p = super::size;
        assert_eq!(p("5000000"), Ok(5_000_000));
        assert_eq!(p("5MB"), Ok(5_000_000));
        assert_eq!(p("5 mb"), Ok(5_000_000));
        assert_eq!(p("500KB"), Ok(500_000));
        assert_eq!(p("5MiB"), Ok(5 << 20));
        assert_eq!(p("5M"), Ok(5 << 20));
        assert_eq!(p("64KiB"), Ok(64 << 10));
        assert_eq!(p("1.5KB"), Ok(1500));
        assert_eq!(p("1GiB"), Ok(1 << 30));
        assert!(p("5XB").is_err());
        assert!(p("MB").is_err());
        assert!(p("-5").is_err());
    }

    #[test]
    fn durations() {
        let p = super::duration;
        assert_eq!(p("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(p("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(p("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(p("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(p("2"), Ok(Duration::from_secs(2)));
        assert_eq!(p("0.25"), Ok(Duration::from_millis(250)));
        assert!(p("-1").is_err());
        assert!(p("soon").is_err());
    }
}
