//! `report` in headless Chromium: with JavaScript on and off nothing from the stream runs,
//! nothing is fetched, no console message appears and the payloads are visible as text; the
//! URL-hash state filters and searches (full bodies included); "show full body" inflates;
//! a deep link opens its folds; long unbroken words wrap; a malformed fragment is ignored.

use crate::common;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::{bin, root};
use sha2::{Digest, Sha256};

use super::render::{report, xss};

const CHROMIUM: &str = "/usr/bin/chromium";

/// Chromium's flags for a quiet, offline-minded headless run.
fn chromium(profile: &Path) -> Command {
    let mut c = Command::new(CHROMIUM);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-domain-reliability",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .stdin(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    c
}

/// Run chromium to completion (killing its process group after 60 s): stdout, stderr.
fn browse(mut c: Command) -> (String, String) {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.wait();
    (t1.join().unwrap(), t2.join().unwrap())
}

/// Whether Chromium is installed (else the test says SKIP, or fails under
/// `BOO_REQUIRE_CLIENTS=1`).
fn have_chromium() -> bool {
    let there = Path::new(CHROMIUM).exists();
    if !there {
        crate::sinks::clients::skip(&format!(
            "{CHROMIUM} is missing (Debian: apt-get install -y chromium)"
        ));
    }
    there
}

#[test]
fn chromium_runs_nothing_fetches_nothing_and_shows_everything() {
    if !have_chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A listener that any fetch from the page would reach: payloads point at it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let bait = format!(
        "<img src=\"http://127.0.0.1:{port}/img\"> ![x](http://127.0.0.1:{port}/md) <link rel=stylesheet href=\"http://127.0.0.1:{port}/css\"> <iframe src=\"http://127.0.0.1:{port}/frame\"></iframe>"
    );
    let mut input = std::fs::read_to_string(xss()).unwrap();
    input.push_str(&serde_json::json!({"type": "assistant", "message": {"id": "bait", "model": "m", "content": [{"type": "text", "text": bait}]}}).to_string());
    input.push('\n');
    let src = dir.path().join("in.ndjson");
    std::fs::write(&src, input).unwrap();
    let page = dir.path().join("report.html");
    let st = bin()
        .args([
            "report",
            src.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    // JavaScript off: the same page without its script (Chromium's --dump-dom needs
    // JavaScript itself, so the page's script is removed instead of switched off).
    let html = std::fs::read_to_string(&page).unwrap();
    let at = html.rfind("<script>").unwrap();
    let end = at + html[at..].find("</script>").unwrap() + "</script>".len();
    let no_js = dir.path().join("report-nojs.html");
    std::fs::write(&no_js, format!("{}{}", &html[..at], &html[end..])).unwrap();
    for js in [true, false] {
        let url = format!("file://{}", if js { &page } else { &no_js }.display());
        let mut c = chromium(&dir.path().join(format!("profile-{js}")));
        let net = dir.path().join(format!("net-{js}.json"));
        c.arg(format!("--log-net-log={}", net.display()));
        c.args(["--virtual-time-budget=3000", "--dump-dom", &url]);
        let (dom, log) = browse(c);
        assert!(
            dom.contains("</html>"),
            "chromium rendered the page (js {js}): {log}"
        );
        let consoles: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
        assert!(
            consoles.is_empty(),
            "console messages (js {js}): {consoles:#?}"
        );
        let title = dom
            .split("<title>")
            .nth(1)
            .unwrap()
            .split("</title>")
            .next()
            .unwrap();
        assert!(
            title.starts_with("Claude Code run · "),
            "title untouched: {title}"
        );
        assert!(
            !dom.contains("<img") && !dom.contains("<iframe") && !dom.contains("<svg onload"),
            "no payload element"
        );
        assert!(
            dom.contains("&lt;script&gt;document.title='PWNED'&lt;/script&gt;"),
            "payload shown as text"
        );
        // Every tool call is there, and the toolbar only with JavaScript.
        assert_eq!(
            dom.matches("data-k=\"tool\" data-tool=").count(),
            8,
            "js {js}"
        );
        assert_eq!(
            dom.contains("<nav id=\"bar\" hidden"),
            !js,
            "toolbar (js {js})"
        );
        let netlog = std::fs::read_to_string(&net).unwrap_or_default();
        for host in [format!("127.0.0.1:{port}"), "ok.example".to_owned()] {
            assert!(
                !netlog.contains(&host),
                "the page requested {host} (js {js})"
            );
        }
    }
    assert!(
        listener.accept().is_err(),
        "nothing connected to the bait listener"
    );
}

#[test]
fn chromium_hash_state_filters_searches_and_inflates() {
    if !have_chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let html = report(&[xss().to_str().unwrap()]);
    // State in the URL hash: a search plus a tool filter.
    let page = dir.path().join("r.html");
    std::fs::write(&page, &html).unwrap();
    let url = format!("file://{}#!q=pwned&tool=Bash", page.display());
    let mut c = chromium(&dir.path().join("p1"));
    c.args(["--virtual-time-budget=5000", "--dump-dom", &url]);
    let (dom, log) = browse(c);
    assert!(!log.lines().any(|l| l.contains(":CONSOLE")), "{log}");
    assert_eq!(
        dom.matches("class=\"ev call hit\" id=").count(),
        1,
        "the Bash call matches"
    );
    assert_eq!(dom.matches("data-k=\"tool\" data-tool=").count(), 8);
    assert!(
        dom.contains("class=\"ev call err hide\""),
        "calls of other tools hidden"
    );
    assert!(dom.contains(">1 shown</span>"), "match count shown");
    // "show full body": the page's own script inflates the deflated body. A copy of the page
    // with one more script (allowed by its hash) clicks the first button.
    let click = "document.querySelector('button.full').click();";
    let h = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(click.as_bytes()));
    let clicked = html
        .replacen("script-src ", &format!("script-src 'sha256-{h}' "), 1)
        .replacen("</body>", &format!("<script>{click}</script></body>"), 1);
    let page2 = dir.path().join("r2.html");
    std::fs::write(&page2, clicked).unwrap();
    let mut c = chromium(&dir.path().join("p2"));
    c.args([
        "--virtual-time-budget=5000",
        "--dump-dom",
        &format!("file://{}", page2.display()),
    ]);
    let (dom, log) = browse(c);
    assert!(!log.lines().any(|l| l.contains(":CONSOLE")), "{log}");
    let bash_result = dom
        .split("data-tool=\"Bash\"")
        .nth(1)
        .unwrap()
        .split("</details>")
        .next()
        .unwrap();
    // The command and its description, then all 200 lines of the result.
    assert_eq!(
        bash_result.matches("SGVsbG8=").count(),
        2 + 200,
        "the whole result, inflated"
    );
    assert!(
        !bash_result.contains("more lines"),
        "the preview was replaced"
    );
}

/// A large run starts folded; `#seq-N` of a result inside a folded call opens that call.
#[test]
fn chromium_deep_link_opens_its_folds() {
    if !have_chromium() {
        return;
    }
    let f = root().join("fixtures/real/better-use__claude-output-4sessions.ndjson");
    let env = common::events(&bin().arg(&f).output().unwrap().stdout);
    let result = common::of_type(&env, "tool.result")[100];
    let call = env
        .iter()
        .find(|e| e["type"] == "tool.call" && e["tool_use_id"] == result["tool_use_id"])
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    std::fs::write(&page, report(&[f.to_str().unwrap()])).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    let folded = format!("id=\"seq-{}\" data-k=\"tool\"", call["seq"]);
    let at = html.find(&folded).expect("the call is drawn");
    assert!(!html[at..at + 200].contains(" open>"), "folded by default");
    let url = format!("file://{}#seq-{}", page.display(), result["seq"]);
    let mut c = chromium(&dir.path().join("p"));
    c.args(["--virtual-time-budget=3000", "--dump-dom", &url]);
    let (dom, log) = browse(c);
    assert!(!log.lines().any(|l| l.contains(":CONSOLE")), "{log}");
    let at = dom.find(&folded).expect("the call is in the DOM");
    let tag_end = at + dom[at..].find('>').unwrap();
    assert!(
        dom[at..tag_end].contains("open"),
        "the linked result's call was opened: {}",
        &dom[at..tag_end]
    );
}

/// A 480-character word in text, thinking, a list item, a quote, a heading and the result text
/// wraps inside the transcript column (no element's content is wider than the element), and a
/// fragment that is not valid percent-encoding logs nothing.
#[test]
fn chromium_long_words_wrap_and_a_malformed_fragment_is_quiet() {
    if !have_chromium() {
        return;
    }
    let w = format!("data:{}", "QUJDRA".repeat(80));
    let lines = [
        serde_json::json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "cwd": "/x", "tools": [], "claude_code_version": "2.1.45"}),
        serde_json::json!({"type": "assistant", "session_id": "s", "message": {"id": "m", "role": "assistant", "content": [
            {"type": "text", "text": format!("Here is the blob: {w} end.")},
            {"type": "thinking", "thinking": format!("think {w}")}]}}),
        serde_json::json!({"type": "assistant", "session_id": "s", "message": {"id": "m2", "role": "assistant", "content": [
            {"type": "text", "text": format!("- item {w}\n> quote {w}\n# head {w}")}]}}),
        serde_json::json!({"type": "result", "subtype": "success", "is_error": false, "session_id": "s", "result": format!("x {w}"), "num_turns": 1}),
    ];
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("long.ndjson");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&src, text).unwrap();
    let html = report(&[src.to_str().unwrap()]);
    // One more script (allowed by its hash) lists the elements whose content overflows them.
    let measure = "document.body.setAttribute('data-over', Array.prototype.filter.call(document.querySelectorAll('main *, footer *'), function (e) { return e instanceof HTMLElement && e.clientWidth > 0 && getComputedStyle(e).overflowX === 'visible' && e.scrollWidth > e.clientWidth + 1; }).map(function (e) { return e.tagName + '.' + e.className; }).join(' '));";
    let h = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(measure.as_bytes()));
    let measured = html
        .replacen("script-src ", &format!("script-src 'sha256-{h}' "), 1)
        .replacen("</body>", &format!("<script>{measure}</script></body>"), 1);
    let page = dir.path().join("r.html");
    std::fs::write(&page, measured).unwrap();
    let url = format!("file://{}#%E0%A4%A", page.display());
    let mut c = chromium(&dir.path().join("p"));
    c.args([
        "--window-size=900,3000",
        "--virtual-time-budget=3000",
        "--dump-dom",
        &url,
    ]);
    let (dom, log) = browse(c);
    assert!(dom.contains("</html>"), "{log}");
    let consoles: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(consoles.is_empty(), "console messages: {consoles:#?}");
    let over = dom
        .split("data-over=\"")
        .nth(1)
        .expect("the measuring script ran")
        .split('"')
        .next()
        .unwrap();
    assert_eq!(over, "", "elements whose content overflows them");
}
