//! `profile` and `diff`: the drift check on the command line and as properties.

mod cli;
mod options;
mod props;
