//! `spawn`: run `claude` as a child, safely, and normalize its output live (Linux only).
//!
//! The pieces, in the order a run uses them:
//!
//! - [`command`]: which binary, which flags are added, and whether the prompt goes in argv or
//!   on stdin;
//! - [`env`](mod@env): the environment allowlist and credential removal;
//! - [`guardian`]: the guardian/worker split that survives `kill -9` of boo-normalize;
//! - [`procs`]: subreaper, `/proc` descendant tracking, signalling and reaping;
//! - [`child`]: starting the child in its own process group, with reader threads;
//! - [`supervise`](mod@supervise): the loop with timeouts, interrupt forwarding and escalation;
//! - [`cleanup`](mod@cleanup): killing and reaping what is left once the child is gone;
//! - [`drive`] and [`guard`]: the output side: the [`Pipeline`](crate::pipeline::Pipeline),
//!   `policy.violation` and `child.stderr` events;
//! - [`outbox`]: stdout and stderr written by threads of their own, so a stuck reader cannot stall the supervisor;
//! - [`outcome`]: `run.end` members and the exit status mapping;
//! - [`worker`]: the whole run in the worker process, from the child's spec to `run.end`.
//!
//! Linux only: descendants are found through `/proc` and the child subreaper is a Linux
//! `prctl`. The module builds on other Unix systems, but [`supported`] is false there and the
//! command refuses to run.

pub mod child;
pub mod cleanup;
pub mod command;
pub mod drive;
pub mod env;
pub mod guard;
pub mod guardian;
pub mod outbox;
pub mod outcome;
pub mod procs;
pub mod supervise;
pub mod tap;
pub mod worker;

pub use child::Spec;
pub use outcome::{Cause, Outcome};
pub use supervise::{Driver, Halt, Limits, RunError, StopSignal, supervise};

/// Whether this platform supports `spawn`.
pub const fn supported() -> bool {
    cfg!(target_os = "linux")
}
