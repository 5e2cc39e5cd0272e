//! Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl` and their
//! subagents' sidechain files) as input: recognising them ([`detect`]), rewriting their lines
//! into the stream-json the normalizer reads ([`map`]), finding and merging a session's files
//! ([`session`], [`reader`]), counting usage once per API message ([`usage`]), estimating cost
//! ([`prices`]), summarising sessions for `sessions` ([`summary`]), and opening a command's
//! inputs in whichever format they are ([`open`]).

pub mod detect;
pub mod listing;
pub mod map;
pub mod open;
pub mod prices;
pub mod reader;
pub mod session;
pub mod summary;
pub mod usage;

pub use detect::looks_like_transcript;

/// What a command's input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputFormat {
    /// Decide from the first lines of each input (see [`detect`]).
    #[default]
    Auto,
    /// `claude -p --output-format stream-json` output.
    StreamJson,
    /// A session transcript.
    Transcript,
    /// Another coding agent's stream, read by its dialect reader ([`crate::dialect`]).
    Agent(crate::dialect::Dialect),
}

impl InputFormat {
    /// How the pipeline picks each input's dialect (`None`: stream-json as it is).
    pub fn dialect_choice(self) -> Option<crate::dialect::Choice> {
        use crate::dialect::Choice;
        match self {
            InputFormat::StreamJson => None,
            InputFormat::Auto | InputFormat::Transcript => Some(Choice::Auto),
            InputFormat::Agent(d) => Some(Choice::Forced(d)),
        }
    }
}
