//! Output formats: SSE, the AI SDK profile, OTLP (files, export, receivers) and the real clients that read them.

pub mod clients;
mod formats;
mod otlp;
pub mod otlp_export;
mod otlp_phoenix;
mod otlp_proto;
mod otlp_spawn;
