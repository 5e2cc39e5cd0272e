//! boo-normalize: Claude Code `stream-json` in, a stable versioned envelope out.
//!
//! The library holds everything the binary does, without clap: framing ([`read`]), parsing
//! ([`json`]), normalization ([`normalize`]), the envelope contract ([`envelope`]), sinks
//! ([`sink`]) and the one loop that ties them together ([`pipeline`]); [`spawn`] runs `claude`
//! as a supervised child and feeds its output through that loop.
//!
//! ```
//! use boo_normalize::{normalize::{EndInfo, Normalizer}, pipeline::Pipeline, sink::Ndjson};
//! let input = br#"{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/","tools":[]}"#;
//! let mut out = Vec::new();
//! {
//!     let sink = Ndjson::new(&mut out);
//!     let mut p = Pipeline::new(Normalizer::default(), vec![Box::new(sink)]);
//!     p.run(&input[..], None).unwrap();
//!     p.finish(&EndInfo::eof()).unwrap();
//! }
//! let text = String::from_utf8(out).unwrap();
//! assert!(text.starts_with(r#"{"v":1,"seq":0,"type":"session.init","session_id":"s1""#));
//! assert!(text.lines().last().unwrap().contains(r#""type":"run.end""#));
//! ```
// Unsafe only where the OS needs it: fork and pre-exec hooks of `spawn` (each allows it).
#![deny(unsafe_code)]
#![warn(missing_docs)]

#[cfg(unix)]
pub mod acp;
pub mod agent;
pub mod audit;
pub mod capture;
pub mod clock;
pub mod dialect;
pub mod envelope;
pub mod error;
pub mod exit;
pub mod files;
pub mod input;
#[cfg(unix)]
pub mod interrupt;
pub mod json;
pub mod normalize;
pub mod pipeline;
#[cfg(unix)]
pub mod probe;
pub mod profile;
pub mod read;
pub mod redact;
pub mod replay;
pub mod report;
pub mod schema;
pub mod sink;
pub mod sniff;
#[cfg(unix)]
pub mod spawn;
pub mod tool;
pub mod transcript;
pub mod transform;
pub mod view;
pub mod work;
