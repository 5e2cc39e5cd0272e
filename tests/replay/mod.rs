//! `replay`: captures, audit logs and stream-json again, live, timed and on a terminal.

mod cli;
mod live;
mod spawn;
mod tty;
