//! The integration test suite as one binary (as ripgrep does): each `tests/NAME.rs` is a module,
//! so the build links one test binary instead of dozens and `cargo test` runs tests from every
//! file side by side. Run one file's tests with `cargo test --test suite NAME::`. Only tests
//! that must own their process stay separate binaries: `alloc.rs` (a counting global allocator)
//! and `memory.rs` (`getrusage` of all the process's children).

mod common;
mod packaging;
mod redact_plants;
mod spawn_common;

mod adapters;
mod audit_replay;
mod audit_verify;
mod clients;
mod docs;
mod docs_go;
mod faults_kill;
mod faults_readers;
mod faults_sinks;
mod fidelity;
mod fidelity_items;
mod fidelity_modes;
mod fidelity_peers;
mod fidelity_sessions;
mod golden;
mod latency;
mod normalize;
mod npm;
mod otlp;
mod otlp_export;
mod otlp_phoenix;
mod otlp_spawn;
mod packages;
mod pretty;
mod profile_cli;
mod profile_prop;
mod props;
mod redact;
mod redact_identity;
mod redact_prop;
mod redact_wiring;
mod regression;
mod replay;
mod replay_live;
mod replay_spawn;
mod replay_tty;
mod sinks;
mod spawn_hygiene;
mod spawn_options;
mod spawn_sinks;
