//! The audit log: verification and replay.

mod replay;
mod verify;
