//! The integration test suite as one binary (as ripgrep does), grouped by feature: each folder
//! `tests/FAMILY/` is a module (`normalize`, `spawn`, `sinks`, …) whose files are its tests, so the
//! build links one test binary instead of dozens and `cargo test` runs tests from every file side
//! by side. Run a family with `cargo test --test suite FAMILY::`, one file with
//! `cargo test --test suite FAMILY::FILE::`. Helpers every family uses are in `common`. Only tests
//! that must own their process stay separate binaries: `alloc.rs` (a counting global allocator)
//! and `memory.rs` (`getrusage` of all the process's children).

mod common;

mod acp;
mod adapters;
mod audit;
mod dialects;
mod docs;
mod faults;
mod fidelity;
mod first_hour;
mod normalize;
mod packaging;
mod pretty;
mod pretty_cuts;
mod probe;
mod probe_agents;
mod profile;
mod redact;
mod replay;
mod report;
mod sinks;
mod spawn;
mod transcripts;
