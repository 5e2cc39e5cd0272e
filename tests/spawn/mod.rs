//! `spawn`: process hygiene, options and sinks of a supervised `claude` child.

pub mod common;

mod agents;
mod hygiene;
mod options;
mod sinks;
