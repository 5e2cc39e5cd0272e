//! The five adapters `spawn` replaces, each one's contract proven end to end: the real Claude
//! Code CLI (pinned in `harness`, installed project-locally) talking to the scripted loopback
//! Messages API `tests/support/fake_anthropic.py`, run by the real binary; assertions on its
//! stdout, stderr, exit status and `/proc` afterwards. One module per adapter, plus `cli` for
//! what every adapter relies on. Skipped, with a message, when node/npm/python3 or the CLI
//! package are not available.
#![cfg(target_os = "linux")]

pub mod harness;

mod cli;
mod coding_app;
mod go_backend;
mod gui_manager;
mod readonly_service;
mod ts_runtime;
