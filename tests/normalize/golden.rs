//! Golden snapshots (insta) of the envelope for a handful of real captures of different eras.
//! A change in any byte of the output shows up as a reviewable snapshot diff.

use crate::common;

use common::{bin, root};

fn golden(rel: &str) -> String {
    let out = bin().arg(root().join(rel)).output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 3)));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cli_1_0_1x_mcp_tool_without_result() {
    insta::assert_snapshot!(golden("fixtures/real/terragon__followup.ndjson"));
}

#[test]
fn permission_denials_as_error_results() {
    insta::assert_snapshot!(golden(
        "fixtures/real/happy-cli__sample-error-edit-multiedit.ndjson"
    ));
}

#[test]
fn cli_2_0_76_init_with_mcp_plugins_and_skills() {
    insta::assert_snapshot!(golden(
        "fixtures/real/effective-prompting__create-loop-script.ndjson"
    ));
}

#[test]
fn cli_2_1_330_partial_messages_with_tools() {
    insta::assert_snapshot!(golden("fixtures/captured/2.1.330/tools.partial.ndjson"));
}

#[test]
fn cli_2_1_330_background_subagent_two_results() {
    insta::assert_snapshot!(golden("fixtures/captured/2.1.330/subagent_bg.ndjson"));
}

#[test]
fn cli_1_0_128_api_error() {
    insta::assert_snapshot!(golden("fixtures/captured/1.0.128/api_error.ndjson"));
}
