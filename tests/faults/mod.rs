//! Faults: kills, stuck or closed readers, failing sinks; every run still ends cleanly.

mod kill;
mod readers;
mod sinks;
