//! What the detector says of each kind of input, the messages, and the head it keeps.

use super::*;

#[test]
fn each_format_is_recognised() {
    let cases: &[(&str, Kind)] = &[
        ("", Kind::Empty),
        ("\n \r\n", Kind::Blank),
        ("hello\nworld\n", Kind::Text),
        (
            "warning: x\n{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\n",
            Kind::StreamJson,
        ),
        (
            "{\"v\":1,\"seq\":0,\"type\":\"session.init\",\"session_id\":\"s\"}\n",
            Kind::Envelope,
        ),
        (
            "{\"seq\":0,\"run_id\":\"r\",\"event\":{\"v\":1},\"prev\":\"0\",\"hash\":\"a\"}\n",
            Kind::AuditLog,
        ),
        (
            "{\"rec\":\"header\",\"format\":\"boo-capture\",\"version\":1}\n",
            Kind::Capture,
        ),
        (
            "{\"type\":\"user\",\"parentUuid\":null,\"uuid\":\"u\",\"sessionId\":\"s\",\"isSidechain\":false}\n",
            Kind::Transcript,
        ),
        (
            "{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u\"}\n",
            Kind::Transcript,
        ),
        ("{\n  \"profile_version\": 1\n}\n", Kind::Profile),
        (
            "retry: 3000\n\nid: 0\nevent: session.init\ndata: {}\n",
            Kind::Sse,
        ),
        ("{\"resourceSpans\":[]}\n", Kind::Otlp),
        ("{\"a\":1}\n[1]\n", Kind::OtherJson),
        ("\u{0}\u{1}\u{2}\n", Kind::Binary),
        (
            "{\"type\":\"result\",\"subtype\":\"success\",\"total_cost_usd\":1e400}\n",
            Kind::OutOfRange,
        ),
        ("{\"a\":1e400}\n", Kind::OtherJson),
        ("{\"type\":\"result\",\"x\":1e400,}\n", Kind::Text),
    ];
    for (input, want) in cases {
        assert_eq!(sniff(input.as_bytes()), *want, "{input:?}");
    }
    assert_eq!(sniff(&[0xff, 0xfe, b'\n', b'x']), Kind::Binary);
}

#[test]
fn messages_say_what_and_what_to_do() {
    let m = message("a.jsonl", Kind::AuditLog, 792);
    assert_eq!(
        m,
        "a.jsonl: none of 792 lines is stream-json: this is a boo-normalize audit log (--audit); use `boo-normalize replay a.jsonl` or `boo-normalize audit verify a.jsonl`"
    );
    assert!(
        message("stdin", Kind::Empty, 0)
            .starts_with("stdin: empty; no bytes were read: the writer closed stdin")
    );
    assert!(message("x", Kind::Text, 1).contains("its one line is not stream-json"));
    let m = message("x", Kind::OutOfRange, 1);
    assert!(
        m.contains("its one line is not usable stream-json: JSON with a number beyond")
            && !m.contains("text, not JSON"),
        "{m}"
    );
}

#[test]
fn head_keeps_only_the_first_bytes() {
    let data = vec![b'x'; HEAD_BYTES + 10];
    let mut head = Vec::new();
    let mut out = Vec::new();
    Head::new(&data[..], &mut head)
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(out.len(), data.len());
    assert_eq!(head.len(), HEAD_BYTES);
}

#[test]
fn a_first_line_longer_than_the_head_is_judged_by_its_type() {
    // An init line listing many MCP tools: 99 KB, cut by the head.
    let mut line = br#"{ "type" : "system", "subtype":"init","tools":["#.to_vec();
    while line.len() < HEAD_BYTES + 100 {
        line.extend_from_slice(br#""mcp__server__tool_xxxxxxxxxxxxxxxxxxxxxxxxxx","#);
    }
    let head = &line[..HEAD_BYTES];
    assert_eq!(sniff(head), Kind::StreamJson);
    assert!(check_head("big.ndjson", head).is_none());
    // A long line of something else still says what it is, without "0 lines".
    let text = vec![b'x'; HEAD_BYTES];
    let (kind, why) = check_head("t.txt", &text).unwrap();
    assert_eq!(kind, Kind::Text);
    assert!(
        why.starts_with("its first line (longer than 64 KiB) is not stream-json: text"),
        "{why}"
    );
    let other = [
        br#"{"type":"nonsense","x":""#.to_vec(),
        vec![b'a'; HEAD_BYTES],
    ]
    .concat();
    assert_ne!(sniff(&other[..HEAD_BYTES]), Kind::StreamJson);
}

#[test]
fn a_newcomers_wrong_shapes_are_named() {
    let line = r#"{"type":"system","subtype":"init","session_id":"s"}"#;
    let cases: Vec<(Vec<u8>, Kind)> = vec![
        (format!("[{line},{line}]\n").into_bytes(), Kind::JsonArray),
        ("{\n  \"type\": \"result\"\n}\n".into(), Kind::MultiLineJson),
        (
            "[\n  {\"type\": \"result\"}\n]\n".into(),
            Kind::MultiLineJson,
        ),
        (vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3], Kind::Gzip),
        (
            [
                &[0xff, 0xfe][..],
                &line
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes)
                    .collect::<Vec<_>>(),
            ]
            .concat(),
            Kind::Utf16,
        ),
        (
            line.encode_utf16().flat_map(u16::to_le_bytes).collect(),
            Kind::Utf16,
        ),
        (
            line.encode_utf16().flat_map(u16::to_be_bytes).collect(),
            Kind::Utf16,
        ),
        (b"[1,2,3]\n".to_vec(), Kind::OtherJson),
    ];
    for (input, want) in cases {
        assert_eq!(sniff(&input), want, "{:?}", String::from_utf8_lossy(&input));
    }
    // An array longer than the head: judged by its first element's type.
    let mut big = b"[".to_vec();
    while big.len() < HEAD_BYTES + 10 {
        big.extend_from_slice(line.as_bytes());
        big.push(b',');
    }
    assert_eq!(sniff(&big[..HEAD_BYTES]), Kind::JsonArray);
    let m = message("out.json", Kind::JsonArray, 1);
    assert!(m.contains("jq -c '.[]' out.json"), "{m}");
}
