//! Shared by the fuzz targets that write OTLP: the check that its lines hold whole traces (not a
//! fuzz target itself).

/// Every OTLP line is an `ExportTraceServiceRequest` in JSON; over all lines, each trace has one
/// root, its span ids are distinct, and every parent is one of its spans.
pub fn whole_traces(otlp: &[u8]) {
    use std::collections::{HashMap, HashSet};
    let text = std::str::from_utf8(otlp).expect("OTLP lines are UTF-8");
    let mut spans: HashMap<String, (Vec<String>, Vec<String>)> = HashMap::new();
    for line in text.lines() {
        let req: serde_json::Value = serde_json::from_str(line).expect("an OTLP line is JSON");
        for s in req["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .expect("spans")
        {
            let id = |k: &str, len: usize| {
                let v = s[k].as_str().expect("ids are strings").to_owned();
                assert!(
                    v.len() == len && v.bytes().all(|b| b.is_ascii_hexdigit()),
                    "{k}: {v:?}"
                );
                v
            };
            let trace = id("traceId", 32);
            let span = id("spanId", 16);
            let parent = match s["parentSpanId"].as_str() {
                Some("") => String::new(),
                _ => id("parentSpanId", 16),
            };
            let (ids, parents) = spans.entry(trace).or_default();
            ids.push(span);
            parents.push(parent);
        }
    }
    for (trace, (ids, parents)) in &spans {
        let set: HashSet<&String> = ids.iter().collect();
        assert_eq!(set.len(), ids.len(), "trace {trace}: repeated span ids");
        assert_eq!(
            parents.iter().filter(|p| p.is_empty()).count(),
            1,
            "trace {trace}: one root"
        );
        for p in parents.iter().filter(|p| !p.is_empty()) {
            assert!(
                set.contains(p),
                "trace {trace}: parent {p} is no span of it"
            );
        }
    }
}
