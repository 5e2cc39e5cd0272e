//! Assembling a command's pipeline in one place: envelope options, the sinks its output settings
//! name, an optional redaction engine, the clock, the resume point. The files a setup needs (an
//! audit log to continue, redaction rule files) are read here, from a [`Plan`] that says what
//! the command line asked for; the run ends in [`super::conclude`].

use std::io::Write;
use std::sync::Arc;

use super::Pipeline;
use crate::clock::Clock;
use crate::error::Error;
use crate::normalize::{NormalizeOptions, Normalizer};
use crate::redact::setup::RuleOptions;
use crate::redact::{Engine, Redactor};
use crate::sink::registry::Outputs;
use crate::transcript::InputFormat;

/// What a command line asked of a run, before any file is read: a [`Setup`] without its
/// redaction engine, the redaction rules, and whether to continue the audit log's last run.
#[derive(Clone, Default)]
pub struct Plan {
    /// Everything but the redaction engine (`setup.redact` is ignored).
    pub setup: Setup,
    /// Redaction rules, when redacting (rule files and the environment are read by [`Plan::open`]).
    pub redact: Option<RuleOptions>,
    /// `--continue-run`: take the run id, `seq` and time base from the audit log's last run.
    pub continue_audit: bool,
}

impl Plan {
    /// Read what the plan names (the audit log's last run, redaction rule files) and return the
    /// setup.
    pub fn open(self) -> Result<Setup, Error> {
        let Plan {
            mut setup,
            redact,
            continue_audit,
        } = self;
        setup.redact = redact.map(|r| r.build()).transpose()?;
        if let (true, Some(path)) = (continue_audit, &setup.outputs.audit) {
            let tail = crate::audit::last_run(path)
                .map_err(|e| Error::io(path.display().to_string(), e))?;
            if let Some(t) = tail {
                setup.run_id = t.run_id;
                setup.first_seq = t.seq + 1;
                setup.outputs.audit_mono_base = t.mono_us;
            }
        }
        Ok(setup)
    }
}

/// Everything a command decides about its pipeline.
#[derive(Clone, Default)]
pub struct Setup {
    /// Normalizer options.
    pub envelope: NormalizeOptions,
    /// Flush after every input line.
    pub line_buffered: bool,
    /// Cut lines longer than this (`line_too_long`).
    pub max_line: Option<usize>,
    /// `--strict`: exit 1 when lines were unusable or of unknown types.
    pub strict: bool,
    /// Where the events go.
    pub outputs: Outputs,
    /// Resume after this event (`--last-event-id`): see [`Pipeline::start_after`].
    pub resume: Option<u64>,
    /// The run id of audit records and the trace.
    pub run_id: String,
    /// The first event's `seq` (0, or where a continued run goes on).
    pub first_seq: u64,
    /// Redaction of every input line, before anything is written or recorded.
    pub redact: Option<Arc<Engine>>,
    /// What the inputs are (`--input-format`): how each input's dialect is chosen.
    pub input_format: InputFormat,
}

impl Setup {
    /// Open the sinks (stdout's first, writing to `stdout`) and build the pipeline; `clock`
    /// replaces the system clock (replays, recordings); `hide_until`: no sink sees the events
    /// with `seq <= hide_until` (`replay --from-seq`).
    pub fn pipeline<'a, W: Write + 'a>(
        &self,
        stdout: W,
        clock: Option<Box<dyn Clock + 'a>>,
        hide_until: Option<u64>,
    ) -> Result<Pipeline<'a>, Error> {
        let sinks = self.outputs.sinks(stdout, &self.run_id)?;
        let mut p = Pipeline::new(Normalizer::new(self.envelope.clone()), sinks)
            .first_seq(self.first_seq)
            .line_buffered(self.line_buffered)
            .resume_after(hide_until)
            .start_after(self.resume)
            .dialect(self.input_format.dialect_choice());
        if let Some(r) = self.redactor() {
            p = p.transform(r);
        }
        if let Some(c) = clock {
            p = p.with_clock(c);
        }
        Ok(p)
    }

    /// A fresh redactor of this run's engine (its own state, the same key), if redacting.
    pub fn redactor(&self) -> Option<Box<Redactor>> {
        self.redact.clone().map(|e| Box::new(Redactor::new(e)))
    }
}
