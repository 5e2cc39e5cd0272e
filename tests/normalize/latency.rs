//! Latency with a slow producer: each event must reach stdout as soon as its line arrives (the
//! pipeline flushes whenever the reader has no complete line buffered), without --line-buffered.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn events_leave_as_soon_as_their_line_arrives() {
    for format in ["envelope", "sse", "audit"] {
        slow_producer(format);
    }
}

/// The audit sink hashes on a helper thread a batch at a time; SSE frames events: neither may
/// hold an event back while the producer is quiet.
fn slow_producer(format: &str) {
    let mut child = common::bin()
        .args(["--format", format])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut worst = Duration::ZERO;
    for i in 0..20 {
        let line = format!(
            "{{\"type\":\"stream_event\",\"event\":{{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"t{i}\"}}}},\"session_id\":\"s\",\"parent_tool_use_id\":null}}\n"
        );
        let t = Instant::now();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut got = String::new();
        while !got.contains(&format!("t{i}\\\"")) && !got.contains(&format!("\"text\":\"t{i}\"")) {
            assert!(
                out.read_line(&mut got).unwrap() > 0,
                "{format}: output ended"
            );
        }
        let dt = t.elapsed();
        worst = worst.max(dt);
        assert!(
            got.contains(&format!("\"text\":\"t{i}\"")),
            "{format}: {got}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(stdin);
    let mut rest = String::new();
    while out.read_line(&mut rest).unwrap() > 0 {}
    assert!(rest.contains("\"type\":\"run.end\""));
    child.wait().unwrap();
    // Generous bound for a loaded CI machine; typical is well under 1 ms.
    assert!(
        worst < Duration::from_millis(250),
        "{format}: worst event latency {worst:?}"
    );
    eprintln!("{format}: worst event latency over 20 slow lines: {worst:?}");
}
