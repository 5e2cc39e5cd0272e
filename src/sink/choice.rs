//! `Choice`: a closed set of named values with a line of help each, which the command line and
//! the man page are built from (the output formats, the SSE dialects, the terminal view's settings).

/// A closed set of named values with a line of help each, for command-line parsers (the
/// library has no clap; the binary builds its parsers from this table).
pub trait Choice: Copy + Send + Sync + 'static {
    /// Every value: its name on the command line, the value, and its help.
    const CHOICES: &'static [(&'static str, Self, &'static str)];

    /// The value called `name`.
    fn named(name: &str) -> Option<Self> {
        Self::CHOICES
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, v, _)| *v)
    }
}
