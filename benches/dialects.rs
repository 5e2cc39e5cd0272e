//! Criterion benchmarks of each agent's dialect reader (issue 38) beside the floor any reader of
//! that stream pays: parsing its lines once, and writing the envelope it yields once. Every
//! group's throughput is the agent's own input bytes, so the floors and the reader compare per
//! input MB, as `benches/dialects.py` does for the whole binary.
//!
//! Groups (one per agent, its captures from `fixtures/agents/<cli>/` concatenated and repeated to
//! 4 MB; `claude` is `fixtures/real`, 9.8 MB):
//! - `normalize`: the pipeline as `boo-normalize FILE` runs it (dialect recognised, NDJSON sink);
//! - `parse_input`: every input line parsed with the normalizer's parser, nothing else;
//! - `parse_output` and `copy_output`: every line of the envelope the pipeline wrote, parsed,
//!   and parsed then written back with the envelope's writer. Their difference is the cost of
//!   writing that envelope once, whoever computes it.

use std::hint::black_box;

use boo_normalize::dialect::Choice;
use boo_normalize::json::{Engine, Out, Parser};
use boo_normalize::normalize::{EndInfo, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::sink::Ndjson;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The files of `dir` (and its subfolders) whose names end in one of `exts`, sorted.
fn files(dir: &str, exts: &[&str], keep: impl Fn(&str) -> bool) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                todo.push(p);
            } else if exts.iter().any(|x| name.ends_with(x)) && keep(&name) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The files concatenated, each ending its last line.
fn joined(paths: &[std::path::PathBuf]) -> Vec<u8> {
    let mut data = Vec::new();
    for p in paths {
        data.extend_from_slice(&std::fs::read(p).unwrap());
        if data.last() != Some(&b'\n') {
            data.push(b'\n');
        }
    }
    data
}

/// (name, input) per agent: the real captures where there are, the documented streams for
/// Cursor and Amp (as `benches/dialects.py` reads them).
fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    let agents = format!("{ROOT}/fixtures/agents");
    let mut v = vec![(
        "claude",
        joined(&files(
            &format!("{ROOT}/fixtures/real"),
            &[".ndjson"],
            |_| true,
        )),
    )];
    for (name, documented) in [
        ("codex", false),
        ("gemini", false),
        ("qwen", false),
        ("opencode", false),
        ("copilot", false),
        ("cursor", true),
        ("amp", true),
    ] {
        let dir = format!("{agents}/{name}");
        let paths = files(&dir, &[".ndjson", ".jsonl"], |f| {
            f.starts_with("documented-") == documented
        });
        // The real captures lie in one folder per release; documented streams at the top.
        let paths: Vec<_> = paths
            .into_iter()
            .filter(|p| documented || p.parent().unwrap() != std::path::Path::new(&dir))
            .collect();
        // Repeated to 4 MB, so the run's fixed costs (its setup, `run.end`) weigh no more per
        // MB than on the Claude corpus.
        let one = joined(&paths);
        let mut data = Vec::with_capacity(SCALED + one.len());
        while data.len() < SCALED {
            data.extend_from_slice(&one);
        }
        v.push((name, data));
    }
    v
}

/// The size each agent's captures are repeated to.
const SCALED: usize = 4 << 20;

fn normalize(data: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut p = Pipeline::new(
        Normalizer::default(),
        vec![Box::new(Ndjson::new(&mut *out))],
    )
    .dialect(Some(Choice::Auto));
    p.run(data, None).unwrap();
    // A capture may end without a `result` line: the run.error is part of the output.
    let _ = p.finish(&EndInfo::eof());
}

fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split(|&b| b == b'\n').filter(|l| !l.is_empty())
}

/// Parse every line of `data` (and write each back when `write`): the bytes written.
fn parse_lines(p: &mut Parser, o: &mut Out, data: &[u8], write: bool) -> usize {
    o.buf.clear();
    let mut n = 0;
    for line in lines(data) {
        if let Ok(parsed) = p.parse(line) {
            if write {
                o.value(parsed.tape.as_value());
                o.buf.push(b'\n');
            }
            n += 1;
            let spare = parsed.into_spare();
            p.recycle(spare);
        }
        if o.buf.len() > 1 << 20 {
            o.buf.clear();
        }
    }
    n + o.buf.len()
}

fn bench(c: &mut Criterion) {
    for (name, data) in inputs() {
        let mut envelope = Vec::with_capacity(data.len() * 4);
        normalize(&data, &mut envelope);
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.sample_size(20);
        let mut out = Vec::with_capacity(envelope.len());
        g.bench_function("normalize", |b| {
            b.iter(|| {
                normalize(&data, &mut out);
                black_box(out.len())
            })
        });
        let mut p = Parser::new(Engine::Simd);
        let mut o = Out::default();
        g.bench_function("parse_input", |b| {
            b.iter(|| black_box(parse_lines(&mut p, &mut o, &data, false)))
        });
        g.bench_function("parse_output", |b| {
            b.iter(|| black_box(parse_lines(&mut p, &mut o, &envelope, false)))
        });
        g.bench_function("copy_output", |b| {
            b.iter(|| black_box(parse_lines(&mut p, &mut o, &envelope, true)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
