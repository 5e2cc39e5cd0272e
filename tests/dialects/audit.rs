//! The audit log of another agent's run is the lossless record of what the agent wrote: each
//! input line's `raw` is the line as read (not the stream-json the dialect reader made of it),
//! so the `raw`s rebuild the input byte for byte, the log verifies, and replaying it gives the
//! envelope of the run again.

use crate::common::bin;

use super::contract::agent_fixtures;

#[test]
fn the_audit_log_of_every_dialect_holds_the_input_lines_and_replays_to_the_same_envelope() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (_, path)) in agent_fixtures().into_iter().enumerate() {
        let p = path.to_str().unwrap();
        let log = dir.path().join(format!("{i}.audit.jsonl"));
        let direct = bin()
            .args(["--audit", log.to_str().unwrap(), p])
            .output()
            .unwrap();
        assert!(!direct.stdout.is_empty(), "{p}: {direct:?}");

        // The raw lines, each followed by its terminator, are the input.
        let mut rebuilt = String::new();
        for rec in std::fs::read_to_string(&log).unwrap().lines() {
            let rec: serde_json::Value = serde_json::from_str(rec).unwrap();
            if let Some(raw) = rec["raw"].as_str() {
                rebuilt.push_str(raw);
                rebuilt.push_str(rec["raw_eol"].as_str().unwrap_or("\n"));
            }
        }
        assert_eq!(rebuilt, std::fs::read_to_string(&path).unwrap(), "{p}");

        let verify = bin()
            .args(["audit", "verify", log.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(verify.status.success(), "{p}: {verify:?}");

        let replayed = bin()
            .args(["replay", "--speed", "max", log.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&replayed.stdout),
            String::from_utf8_lossy(&direct.stdout),
            "{p}: the replayed envelope differs"
        );
        assert_eq!(replayed.status.code(), direct.status.code(), "{p}");
    }
}
