//! Throughput of redaction: plain normalization, normalization with `--redact`, and the
//! `redact` rewrite alone, over every capture in `fixtures/` concatenated (in memory, output to
//! a null sink). The budget: redaction on costs at most 2x plain normalization.

use std::hint::black_box;
use std::io;
use std::sync::Arc;

use boo_normalize::normalize::{EndInfo, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::read::LineReader;
use boo_normalize::redact::{Config, DEFAULT_ENTROPY_BITS, Engine, Key, Redactor};
use boo_normalize::sink::Ndjson;
use boo_normalize::transform::Transformed;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn corpus() -> Vec<u8> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let mut files = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(root)];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("fixtures dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "ndjson") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut all = Vec::new();
    for f in files {
        all.extend(std::fs::read(f).expect("fixture"));
        if all.last() != Some(&b'\n') {
            all.push(b'\n');
        }
    }
    all
}

fn engine() -> Arc<Engine> {
    Arc::new(
        Engine::new(Config {
            rules: Vec::new(),
            key: Key::from_bytes(b"bench"),
            entropy_bits: DEFAULT_ENTROPY_BITS,
        })
        .expect("built-ins compile"),
    )
}

fn normalize(input: &[u8], redact: Option<Arc<Engine>>) {
    let sink = Ndjson::new(io::sink());
    let mut p = Pipeline::new(Normalizer::default(), vec![Box::new(sink)]);
    if let Some(e) = redact {
        p = p.transform(Box::new(Redactor::new(e)));
    }
    p.run(input, None).expect("in memory");
    p.finish(&EndInfo::eof()).expect("in memory");
}

fn redact_only(input: &[u8], e: Arc<Engine>) -> usize {
    let mut r = Redactor::new(e);
    let mut out = Transformed::default();
    let mut reader = LineReader::new(input);
    let mut n = 0;
    while let Some(line) = reader.next_line().expect("in memory") {
        out.clear();
        r.push(&line, &mut out);
        n += out.len();
    }
    n
}

fn bench(c: &mut Criterion) {
    let input = corpus();
    let e = engine();
    let mut g = c.benchmark_group("fixtures");
    g.throughput(Throughput::Bytes(input.len() as u64));
    g.sample_size(20);
    g.bench_function("normalize", |b| {
        b.iter(|| normalize(black_box(&input), None))
    });
    g.bench_function("normalize_redact", |b| {
        b.iter(|| normalize(black_box(&input), Some(e.clone())))
    });
    g.bench_function("redact_only", |b| {
        b.iter(|| redact_only(black_box(&input), e.clone()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
