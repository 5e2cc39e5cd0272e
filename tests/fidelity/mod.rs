//! Fidelity: every field of every capture reaches the envelope, in every mode, and what peer parsers read is there too.

mod corpus;
mod items;
mod modes;
mod peers;
mod sessions;
