//! Criterion micro-benchmarks over real captures (Throughput::Bytes): the line reader, the two
//! parsers (simd-json vs serde_json reference), the normalizer, each sink (NDJSON, SSE, AI SDK
//! SSE, audit), and one huge line (hollowed, as by default, and parsed whole).

use std::hint::black_box;

use boo_normalize::audit::GENESIS;
use boo_normalize::envelope::Events;
use boo_normalize::json::{Engine, Parser};
use boo_normalize::normalize::{EndInfo, NormalizeOptions, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::read::LineReader;
use boo_normalize::sink::ai_sdk::AiSdk;
use boo_normalize::sink::audit::Audit;
use boo_normalize::sink::sse::Sse;
use boo_normalize::sink::{Ndjson, Sink};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Every real capture, concatenated (about 9.8 MB).
fn corpus() -> Vec<u8> {
    let mut names: Vec<_> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/real"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
            .collect();
    names.sort();
    names
        .iter()
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect()
}

fn lines(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect()
}

fn bench(c: &mut Criterion) {
    let data = corpus();
    let mut g = c.benchmark_group("corpus");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(20);

    g.bench_function("reader", |b| {
        b.iter(|| {
            let mut r = LineReader::new(&data[..]);
            let mut n = 0u64;
            while let Some(l) = r.next_line().unwrap() {
                n += l.bytes.len() as u64;
            }
            black_box(n)
        })
    });

    let ls = lines(&data);
    for (name, engine) in [
        ("parse_simd_json", Engine::Simd),
        ("parse_serde_json", Engine::Serde),
    ] {
        g.bench_function(name, |b| {
            let mut p = Parser::new(engine);
            b.iter(|| {
                for l in &ls {
                    if let Ok(parsed) = p.parse(l) {
                        black_box(parsed.tape.0.len());
                        let spare = parsed.into_spare();
                        p.recycle(spare);
                    }
                }
            })
        });
    }

    g.bench_function("normalize_to_events", |b| {
        b.iter(|| {
            let mut n = Normalizer::new(NormalizeOptions::default());
            let mut ev = Events::default();
            let mut r = LineReader::new(&data[..]);
            let mut bytes = 0usize;
            while let Some(l) = r.next_line().unwrap() {
                n.push_line(&l, &mut ev);
                bytes += ev.out.buf.len();
                ev.clear();
            }
            n.finish(&EndInfo::eof(), &mut ev);
            black_box(bytes)
        })
    });

    type MakeSink = fn(&mut Vec<u8>) -> Box<dyn Sink + '_>;
    let sinks: [(&str, MakeSink); 4] = [
        ("pipeline_ndjson", |o| Box::new(Ndjson::new(o))),
        ("pipeline_sse", |o| Box::new(Sse::new(o))),
        ("pipeline_ai_sdk", |o| Box::new(AiSdk::new(o))),
        ("pipeline_audit", |o| {
            Box::new(Audit::new(o, "bench", GENESIS))
        }),
    ];
    for (name, make) in sinks {
        g.bench_function(name, |b| {
            let mut out = Vec::with_capacity(data.len() * 3);
            b.iter(|| {
                out.clear();
                {
                    let mut p = Pipeline::new(Normalizer::default(), vec![make(&mut out)]);
                    p.run(&data[..], None).unwrap();
                    p.finish(&EndInfo::eof()).unwrap();
                }
                black_box(out.len())
            })
        });
    }
    g.finish();

    // One 16 MiB tool result line, as `Read` of a big file gives.
    let unit =
        serde_json::to_string("    let x = \"caf\u{e9}\";\tif a < b { return x; }\n").unwrap();
    let content = &unit[1..unit.len() - 1];
    let mut line = br#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":""#.to_vec();
    while line.len() < 16 << 20 {
        line.extend_from_slice(content.as_bytes());
    }
    line.extend_from_slice(br#"","is_error":false}]},"parent_tool_use_id":null,"session_id":"s"}"#);
    line.push(b'\n');
    let mut g = c.benchmark_group("huge_line");
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.sample_size(20);
    for (name, hollow) in [("hollowed", None), ("whole", Some((usize::MAX, 0)))] {
        g.bench_function(name, |b| {
            let mut out = Vec::with_capacity(line.len() * 2);
            b.iter(|| {
                out.clear();
                {
                    let opts = NormalizeOptions {
                        hollow,
                        ..NormalizeOptions::default()
                    };
                    let sink = Ndjson::new(&mut out);
                    let mut p = Pipeline::new(Normalizer::new(opts), vec![Box::new(sink)]);
                    p.run(&line[..], None).unwrap();
                    p.finish(&EndInfo::eof()).unwrap();
                }
                black_box(out.len())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
