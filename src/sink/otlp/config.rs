//! OTLP settings from flags and the standard OpenTelemetry environment variables: the traces
//! endpoint, headers, protocol and timeout of the exporter, and the resource attributes.

use std::time::Duration;

use crate::error::Error;

/// Where and how the exporter sends spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The full traces URL (`…/v1/traces`).
    pub url: String,
    /// Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TRACES_HEADERS`).
    pub headers: Vec<(String, String)>,
    /// Send OTLP/JSON instead of binary protobuf (`http/json`).
    pub json: bool,
    /// Per-request timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`, ms; default 10 s).
    pub timeout: Duration,
}

/// The receiver an SDK uses when nothing is configured.
pub const DEFAULT_BASE: &str = "http://localhost:4318";
/// `service.name` when neither a flag nor the environment names one.
pub const DEFAULT_SERVICE: &str = "claude-code";

/// The environment, as a lookup function (tests pass a map).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment (unset and empty are the same, as the OTel spec says).
pub fn process_env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.trim().is_empty())
}

/// Resolve the endpoint: `flag` (a base URL, or a full `…/v1/traces` URL; empty = from the
/// environment), else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), else
/// `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, else `http://localhost:4318/v1/traces`.
pub fn endpoint(flag: &str, env: Env<'_>) -> Result<Endpoint, Error> {
    let flag = flag.trim();
    let (given, from) = if !flag.is_empty() {
        (flag.to_owned(), "--otlp-endpoint")
    } else if let Some(u) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        (u.trim().to_owned(), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    } else if let Some(u) = env("OTEL_EXPORTER_OTLP_ENDPOINT") {
        (u.trim().to_owned(), "OTEL_EXPORTER_OTLP_ENDPOINT")
    } else {
        (DEFAULT_BASE.to_owned(), "--otlp-endpoint")
    };
    if !(given.starts_with("http://") || given.starts_with("https://"))
        || given.contains(char::is_whitespace)
    {
        let hint = if from == "--otlp-endpoint" {
            " (a receiver's http(s) URL; to read a file, write --otlp-endpoint=URL or put the file first)"
        } else {
            ""
        };
        return Err(Error::msg(
            from,
            format!("not an http(s) URL: {given:?}{hint}"),
        ));
    }
    let url = if from == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" {
        given
    } else {
        traces_url(&given)
    };
    let mut headers = Vec::new();
    for key in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Some(v) = env(key) {
            for (k, v) in pairs(&v).map_err(|e| Error::msg(key, e))? {
                headers.retain(|(h, _): &(String, String)| !h.eq_ignore_ascii_case(&k));
                headers.push((k, v));
            }
        }
    }
    let protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .map(|p| ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", p))
        .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL").map(|p| ("OTEL_EXPORTER_OTLP_PROTOCOL", p)));
    let json = match protocol {
        None => false,
        Some((_, p)) if p.trim() == "http/protobuf" => false,
        Some((_, p)) if p.trim() == "http/json" => true,
        Some((key, p)) => {
            return Err(Error::msg(
                key,
                format!(
                    "unsupported protocol {p:?} (boo-normalize speaks http/protobuf and http/json)"
                ),
            ));
        }
    };
    let timeout = match env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        .map(|t| ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", t))
        .or_else(|| env("OTEL_EXPORTER_OTLP_TIMEOUT").map(|t| ("OTEL_EXPORTER_OTLP_TIMEOUT", t)))
    {
        None => Duration::from_secs(10),
        Some((key, t)) => match t.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Duration::from_millis(ms),
            _ => {
                return Err(Error::msg(
                    key,
                    format!("not a timeout in milliseconds: {t:?}"),
                ));
            }
        },
    };
    Ok(Endpoint {
        url,
        headers,
        json,
        timeout,
    })
}

/// `base` with `/v1/traces` appended, unless it already ends so.
fn traces_url(base: &str) -> String {
    let base = base.trim();
    if base.trim_end_matches('/').ends_with("/v1/traces") {
        return base.to_owned();
    }
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// The resource attributes: `OTEL_RESOURCE_ATTRIBUTES`, then `service.name` from `flag`, else
/// `OTEL_SERVICE_NAME`, else the one in `OTEL_RESOURCE_ATTRIBUTES`, else `claude-code`.
pub fn resource(flag: Option<&str>, env: Env<'_>) -> Result<Vec<(String, String)>, Error> {
    let mut attrs = match env("OTEL_RESOURCE_ATTRIBUTES") {
        Some(v) => pairs(&v).map_err(|e| Error::msg("OTEL_RESOURCE_ATTRIBUTES", e))?,
        None => Vec::new(),
    };
    let name = flag
        .map(str::to_owned)
        .or_else(|| env("OTEL_SERVICE_NAME"))
        .or_else(|| {
            attrs
                .iter()
                .find(|(k, _)| k == "service.name")
                .map(|(_, v)| v.clone())
        })
        .unwrap_or_else(|| DEFAULT_SERVICE.to_owned());
    attrs.retain(|(k, _)| k != "service.name");
    attrs.insert(0, ("service.name".into(), name));
    Ok(attrs)
}

/// `k=v,k2=v2` with percent-encoded values (the W3C baggage form the OTel variables use).
fn pairs(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for item in s.split(',') {
        if item.trim().is_empty() {
            continue;
        }
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!("not key=value: {:?}", item.trim()));
        };
        let k = decode(k.trim())?;
        if k.is_empty() {
            return Err(format!("empty key in {:?}", item.trim()));
        }
        out.push((k, decode(v.trim())?));
    }
    Ok(out)
}

fn decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(c) => {
                    out.push(c);
                    i += 3;
                    continue;
                }
                None => return Err(format!("bad percent-encoding in {s:?}")),
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).map_err(|_| format!("not UTF-8 after percent-decoding: {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn endpoint_precedence_and_paths() {
        let none = env_of(&[]);
        assert_eq!(
            endpoint("", &none).unwrap().url,
            "http://localhost:4318/v1/traces"
        );
        assert_eq!(
            endpoint("http://h:1/", &none).unwrap().url,
            "http://h:1/v1/traces"
        );
        assert_eq!(
            endpoint("http://h:1/v1/traces", &none).unwrap().url,
            "http://h:1/v1/traces"
        );
        let base = env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otel.example:4318/p")]);
        assert_eq!(
            endpoint("", &base).unwrap().url,
            "https://otel.example:4318/p/v1/traces"
        );
        let both = env_of(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b/custom"),
        ]);
        assert_eq!(endpoint("", &both).unwrap().url, "http://b/custom");
        assert_eq!(
            endpoint("http://c", &both).unwrap().url,
            "http://c/v1/traces"
        );
        let err = endpoint("localhost:4318", &none).unwrap_err().to_string();
        assert!(
            err.contains("--otlp-endpoint") && err.contains("not an http(s) URL"),
            "{err}"
        );
    }

    #[test]
    fn headers_protocol_timeout() {
        let e = env_of(&[
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b, x=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X=2"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ]);
        let ep = endpoint("", &e).unwrap();
        assert_eq!(
            ep.headers,
            vec![("api-key".into(), "a b".into()), ("X".into(), "2".into())]
        );
        assert!(ep.json);
        assert_eq!(ep.timeout, Duration::from_millis(2500));
        let grpc = env_of(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
        let err = endpoint("", &grpc).unwrap_err().to_string();
        assert!(
            err.contains("OTEL_EXPORTER_OTLP_PROTOCOL") && err.contains("grpc"),
            "{err}"
        );
        let bad = env_of(&[("OTEL_EXPORTER_OTLP_HEADERS", "novalue")]);
        assert!(
            endpoint("", &bad)
                .unwrap_err()
                .to_string()
                .contains("not key=value")
        );
    }

    #[test]
    fn service_name_precedence() {
        let none = env_of(&[]);
        assert_eq!(
            resource(None, &none).unwrap(),
            vec![("service.name".into(), "claude-code".into())]
        );
        let e = env_of(&[
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=r,team=infra"),
            ("OTEL_SERVICE_NAME", "s"),
        ]);
        let r = resource(None, &e).unwrap();
        assert_eq!(r[0], ("service.name".into(), "s".into()));
        assert!(r.contains(&("team".into(), "infra".into())));
        assert_eq!(resource(Some("f"), &e).unwrap()[0].1, "f");
        let only = env_of(&[("OTEL_RESOURCE_ATTRIBUTES", "service.name=r")]);
        assert_eq!(
            resource(None, &only).unwrap(),
            vec![("service.name".into(), "r".into())]
        );
    }
}
