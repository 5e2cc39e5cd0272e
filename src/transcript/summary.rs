//! Session summaries for `sessions` (filled below).
