//! `spawn`: process hygiene, options and sinks of a supervised `claude` child.

pub mod common;

mod hygiene;
mod options;
mod sinks;
