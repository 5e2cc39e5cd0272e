//! Unit tests of input detection and decoding (captures, audit logs, stream-json).

use super::*;
use crate::audit::read::runs as audit_runs;

fn audit_rec(seq: u64, run: &str, mono: u64, event: &str, raw: &str) -> String {
    format!(
        r#"{{"seq":{seq},"run_id":"{run}","ts":"2025-11-22T15:32:00.{:06}Z","mono_us":{mono},"cli_version":"2.0.76","event":{event}{raw},"prev":"{z}","hash":"{z}"}}"#,
        mono,
        z = "0".repeat(64)
    )
}

#[test]
fn detects_each_kind() {
    let header = br#"{"rec":"header","format":"boo-capture","version":1,"run_id":"r"}"#;
    assert_eq!(Kind::detect(header), Kind::Capture);
    let audit = audit_rec(0, "r", 5, r#"{"v":1,"type":"session.init"}"#, "");
    assert_eq!(Kind::detect(audit.as_bytes()), Kind::Audit);
    assert_eq!(
        Kind::detect(br#"{"type":"system","subtype":"init"}"#),
        Kind::Stream
    );
    assert_eq!(Kind::detect(b"not json at all"), Kind::Stream);
    assert_eq!(
        Kind::detect(br#"{"rec":"header","format":"other"}"#),
        Kind::Stream
    );
}

#[test]
fn audit_picks_one_run_and_rebuilds_lines_and_end() {
    let lines = [
        audit_rec(
            0,
            "old",
            1,
            r#"{"type":"session.init"}"#,
            r#","raw":"old line""#,
        ),
        audit_rec(
            0,
            "new",
            10,
            r#"{"type":"session.init"}"#,
            r#","raw":"{\"a\":1}","raw_eol":"\r\n""#,
        ),
        audit_rec(1, "new", 10, r#"{"type":"message.text"}"#, ""),
        audit_rec(
            2,
            "new",
            20,
            r#"{"type":"diagnostic"}"#,
            r#","raw_b64":"/wA=","raw_eol":"""#,
        ),
        audit_rec(
            3,
            "new",
            25,
            r#"{"type":"child.stderr","text":"warn","truncated":true}"#,
            "",
        ),
        audit_rec(
            4,
            "new",
            30,
            r#"{"v":1,"seq":4,"type":"run.end","session_id":null,"parent_tool_use_id":null,"line":null,"cause":"exit","terminal_seen":true,"turns":1,"cli_version":"2.0.76","exit_code":3,"signal":null,"elapsed_ms":12,"stats":{"lines":2}}"#,
            "",
        ),
        audit_rec(
            0,
            "later",
            40,
            r#"{"type":"session.init"}"#,
            r#","raw":"x""#,
        ),
    ];
    let runs = audit_runs(lines.iter().map(|l| l.as_bytes().to_vec()));
    assert_eq!(runs, ["old", "new", "later"]);
    let mut d = Decoder::new(Kind::Audit, Some("new".into()));
    let items: Vec<Item> = lines
        .iter()
        .map(|l| d.decode(l.as_bytes(), true).unwrap())
        .collect();
    assert!(matches!(items[0], Item::Skip));
    let Item::Out(o) = &items[1] else { panic!() };
    assert_eq!(o.bytes, b"{\"a\":1}\r");
    assert!(o.terminated);
    assert_eq!(o.time.at_us, Some(10));
    assert_eq!(
        o.time.unix_us,
        parse_rfc3339_us("2025-11-22T15:32:00.000010Z")
    );
    assert!(matches!(items[2], Item::Skip));
    let Item::Out(o) = &items[3] else { panic!() };
    assert_eq!(o.bytes, [0xff, 0]);
    assert!(!o.terminated);
    let Item::Err { bytes, cut, .. } = &items[4] else {
        panic!()
    };
    assert_eq!((bytes.as_slice(), *cut), (&b"warn"[..], true));
    let Item::End(end, t) = &items[5] else {
        panic!()
    };
    assert_eq!(t.at_us, Some(30));
    assert_eq!(end.exit_code, Some(3));
    assert_eq!(end.run_end.cause, "exit");
    assert_eq!(
        end.run_end.extra,
        [
            ("exit_code".to_owned(), "3".to_owned()),
            ("signal".to_owned(), "null".to_owned()),
            ("elapsed_ms".to_owned(), "12".to_owned())
        ]
    );
    assert!(d.ended());
    assert!(matches!(items[6], Item::Skip));
}

#[test]
fn audit_runs_interleave_another_runs_records_are_skipped() {
    // Runs written at once (acp's sessions): run a goes on after b's record, and ends at its
    // own run.end (or the input's end), not where b began.
    let lines = [
        audit_rec(0, "a", 1, r#"{"type":"x"}"#, r#","raw":"1""#),
        audit_rec(0, "b", 2, r#"{"type":"x"}"#, r#","raw":"2""#),
        audit_rec(1, "a", 3, r#"{"type":"x"}"#, r#","raw":"3""#),
    ];
    let mut d = Decoder::new(Kind::Audit, None);
    assert!(matches!(
        d.decode(lines[0].as_bytes(), true),
        Ok(Item::Out(_))
    ));
    assert!(matches!(
        d.decode(lines[1].as_bytes(), true),
        Ok(Item::Skip)
    ));
    let Ok(Item::Out(o)) = d.decode(lines[2].as_bytes(), true) else {
        panic!()
    };
    assert_eq!(o.bytes, b"3");
    assert!(!d.ended());
}

#[test]
fn capture_records_decode_and_bad_ones_are_errors() {
    let mut d = Decoder::new(Kind::Capture, None);
    let h = d
        .decode(
            br#"{"rec":"header","format":"boo-capture","version":1,"run_id":"r1","start":"2025-11-22T15:32:00.000000Z","start_unix_us":1763825520000000,"source":"normalize","argv":null,"cli_version":null}"#,
            true,
        )
        .unwrap();
    let Item::Header(h) = h else { panic!() };
    assert_eq!(h.run_id, "r1");
    let Item::Out(o) = d
        .decode(
            br#"{"rec":"out","at_us":7,"line":"wyg=","b64":true,"nl":false}"#,
            true,
        )
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(o.bytes, [0xc3, 0x28]);
    assert!(!o.terminated);
    assert_eq!(o.time.unix_us, Some(1_763_825_520_000_007));
    assert!(matches!(
        d.decode(br#"{"rec":"future","x":1}"#, true),
        Ok(Item::Skip)
    ));
    assert_eq!(d.take_unknown().as_deref(), Some("future"));
    assert!(d.decode(br#"{"rec":"out","line":"x"}"#, true).is_err());
    assert!(d.decode(b"garbage", true).is_err());
    assert!(
        d.decode(br#"{"rec":"out","at_us":1,"line":"%%","b64":true}"#, true)
            .is_err()
    );
    let newer = br#"{"rec":"header","format":"boo-capture","version":99}"#;
    let e = Decoder::new(Kind::Capture, None)
        .decode(newer, true)
        .unwrap_err();
    assert!(e.contains("version 99"), "{e}");
}

#[test]
fn stream_lines_pass_through_and_results_are_noticed() {
    let mut d = Decoder::new(Kind::Stream, None);
    d.decode(br#"{"type":"result"}"#, true).unwrap();
    assert!(!d.result_seen(), "only tracked when asked");
    d.track_results(true);
    let Ok(Item::Out(o)) = d.decode(b"  not json \r", true) else {
        panic!()
    };
    assert_eq!(o.bytes, b"  not json \r");
    assert!(!d.result_seen());
    d.decode(br#"{"type":"user","x":"\"result\""}"#, true)
        .unwrap();
    assert!(!d.result_seen());
    d.decode(br#"{"type":"result","subtype":"success"}"#, true)
        .unwrap();
    assert!(d.result_seen());
}
