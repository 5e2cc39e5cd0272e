//! The five adapters `spawn` replaces, each one's contract proven end to end: the real Claude
//! Code CLI (pinned in `harness`, installed project-locally) talking to the scripted loopback
//! Messages API `tests/support/fake_anthropic.py`, run by the real binary; assertions on its
//! stdout, stderr, exit status and `/proc` afterwards. One module per adapter, plus `cli` for
//! what every adapter relies on. Skipped, with a message, when node/npm/python3 or the CLI
//! package are not available.
#![cfg(target_os = "linux")]

#[path = "adapters/harness.rs"]
mod harness;

#[path = "adapters/cli.rs"]
mod cli;
#[path = "adapters/coding_app.rs"]
mod coding_app;
#[path = "adapters/go_backend.rs"]
mod go_backend;
#[path = "adapters/gui_manager.rs"]
mod gui_manager;
#[path = "adapters/readonly_service.rs"]
mod readonly_service;
#[path = "adapters/ts_runtime.rs"]
mod ts_runtime;
