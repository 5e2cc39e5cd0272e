//! Unit tests of the replay entry points: speeds, run ids.
use super::*;

#[test]
fn speeds_parse() {
    assert_eq!("max".parse::<Speed>(), Ok(Speed::Max));
    assert_eq!("2".parse::<Speed>(), Ok(Speed::Factor(2.0)));
    assert_eq!("0.5x".parse::<Speed>(), Ok(Speed::Factor(0.5)));
    for bad in ["0", "-1", "fast", "inf", "NaN", ""] {
        assert!(bad.parse::<Speed>().is_err(), "{bad}");
    }
}

#[test]
fn derived_run_ids_are_stable_uuids() {
    let a = derived_run_id(b"{\"type\":\"system\"}");
    assert_eq!(a, derived_run_id(b"{\"type\":\"system\"}"));
    assert_ne!(a, derived_run_id(b"{}"));
    let u = uuid::Uuid::parse_str(&a).unwrap();
    assert_eq!(u.get_version_num(), 8);
}

#[test]
fn run_ids_come_from_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let cap = write(
        "c.jsonl",
        "{\"rec\":\"header\",\"format\":\"boo-capture\",\"version\":1,\"run_id\":\"cap-run\"}\n",
    );
    let r = Replay::open(&[cap], ReplayOptions::default()).unwrap();
    assert_eq!(r.run_id(), "cap-run");
    assert_eq!(r.kind(), Some(Kind::Capture));
    let rec = |run: &str| {
        format!(
            "{{\"seq\":0,\"run_id\":\"{run}\",\"ts\":\"2025-01-01T00:00:00.000000Z\",\"mono_us\":0,\"event\":{{\"type\":\"x\"}},\"hash\":\"h\"}}\n"
        )
    };
    let audit = write("a.jsonl", &(rec("first") + &rec("second")));
    let r = Replay::open(std::slice::from_ref(&audit), ReplayOptions::default()).unwrap();
    assert_eq!((r.run_id(), r.kind()), ("second", Some(Kind::Audit)));
    let opts = ReplayOptions {
        audit_run: Some("first".into()),
        ..ReplayOptions::default()
    };
    assert_eq!(Replay::open(&[audit], opts).unwrap().run_id(), "first");
    let stream = write("s.ndjson", "{\"type\":\"system\"}\n");
    let a = Replay::open(std::slice::from_ref(&stream), ReplayOptions::default()).unwrap();
    let b = Replay::open(&[stream], ReplayOptions::default()).unwrap();
    assert_eq!(a.run_id(), b.run_id());
    assert_eq!(a.run_id(), derived_run_id(b"{\"type\":\"system\"}"));
}

#[test]
fn run_end_is_the_recorded_one_else_why_the_recording_was_cut() {
    let recorded = End {
        run_end: EndInfo {
            cause: "killed".into(),
            extra: vec![("reason".into(), "\"tool_timeout\"".into())],
        },
        ..End::default()
    };
    let o = Outcome {
        end: Some(recorded),
        cut: Some("recording_cut"),
        ..Outcome::default()
    };
    assert_eq!(o.run_end().cause, "killed");
    assert_eq!(o.run_end().extra.len(), 1);
    let cut = Outcome {
        cut: Some("writer_vanished"),
        ..Outcome::default()
    };
    assert_eq!(cut.run_end().cause, "writer_vanished");
    assert!(cut.run_end().extra.is_empty());
    assert_eq!(Outcome::default().run_end().cause, EndInfo::eof().cause);
}

#[test]
fn the_recorded_exit_status_is_the_childs_low_byte() {
    use crate::exit::Exit;
    assert_eq!(exit::recorded(None), Exit::OK);
    let end = |code| End {
        exit_code: code,
        ..End::default()
    };
    assert_eq!(exit::recorded(Some(&end(None))), Exit::OK);
    assert_eq!(exit::recorded(Some(&end(Some(3)))), Exit::child(3));
    assert_eq!(exit::recorded(Some(&end(Some(256 + 7)))), Exit::child(7));
}
