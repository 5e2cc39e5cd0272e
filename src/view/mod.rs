//! Renderer-neutral pieces of a human view of a run, shared by the terminal view
//! (`--format pretty`) and any other view of the same events: a tool call's one-line headline,
//! head/tail clipping with counts, edits as unified diffs, untrusted text made safe and measured
//! in display cells, and numbers for people. Nothing here writes or styles.

pub mod args;
pub mod clip;
pub mod diff;
pub mod num;
pub mod text;
pub mod tool;
