//! Redaction: the `redact` command, identity on clean input, property tests and its wiring into every output.

pub mod plants;

mod agents;
mod cli;
mod identity;
mod props;
mod wiring;
