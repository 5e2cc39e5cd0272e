//! `normalize`: the envelope contract on every capture, golden snapshots, property tests, regressions and latency.

mod cli;
mod edges;
mod golden;
mod latency;
mod props;
mod regression;
mod signals;
mod streamed_calls;
mod tools;
mod usage_totals;
