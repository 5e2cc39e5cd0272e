//! Other agents' streams (`src/dialect/`): every fixture of `fixtures/agents/<cli>/` through the
//! contract (every line accounted for, calls and results paired, totals equal to the CLI's own
//! under its semantics, documented types mapped), every output format, recognition and
//! `--input-format`.

mod audit;
pub mod contract;
mod effects;
mod formats;
mod views;
