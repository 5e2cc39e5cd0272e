//! Faults: kills, stuck or closed readers, failing sinks; every run still ends cleanly.

mod batch;
mod kill;
mod readers;
mod sinks;
