//! A session's conversation as the CLI keeps it on disk (its transcript under the CLI's
//! projects folder): where it is, whether it holds a conversation to resume, and its replay
//! as updates for `session/load`.

use std::path::PathBuf;
use std::sync::Arc;

use super::Session;
use crate::acp::updates::{AcpSink, Mode};
use crate::acp::wire::RpcError;
use crate::normalize::Normalizer;
use crate::pipeline::Pipeline;

impl Session {
    /// Where the CLI keeps the transcript of its session `id` for this session's directory
    /// (`None`: neither `CLAUDE_CONFIG_DIR` nor `HOME` is in its environment).
    pub fn transcript_path(&self, id: &str) -> Option<PathBuf> {
        let var = |k: &str| {
            self.cfg
                .env
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| PathBuf::from(v))
        };
        let root = var("CLAUDE_CONFIG_DIR").or_else(|| var("HOME").map(|h| h.join(".claude")))?;
        let dir = crate::transcript::listing::project_dir_name(&self.cwd.to_string_lossy());
        Some(root.join("projects").join(dir).join(format!("{id}.jsonl")))
    }

    /// Whether the CLI kept a conversation for its session `id` (its transcript has a message):
    /// `--resume` works only then.
    pub(super) fn has_conversation(&self, id: &str) -> bool {
        let Some(file) = self.transcript_path(id) else {
            return true;
        };
        std::fs::read_to_string(file).is_ok_and(|t| {
            t.lines()
                .any(|l| l.contains("\"type\":\"user\"") || l.contains("\"type\":\"assistant\""))
        })
    }

    /// `session/load`: the session's transcript (its subagents' included) as updates, through
    /// the transcript reader and the same envelope events and mapping as a live run.
    pub fn replay(self: &Arc<Self>) -> Result<(), RpcError> {
        let path = self
            .transcript_path(&self.id)
            .filter(|p| p.is_file())
            .ok_or_else(|| {
                RpcError::params(format!(
                    "sessionId: no Claude Code transcript of session {} for {}",
                    self.id,
                    self.cwd.display()
                ))
            })?;
        let tmp = crate::transcript::open::as_stream_json_file(std::slice::from_ref(&path))
            .map_err(|e| RpcError::internal(e.to_string()))?
            .ok_or_else(|| {
                RpcError::params(format!("sessionId: {} is not a transcript", path.display()))
            })?;
        let mut opts = self.cfg.envelope.clone();
        opts.allow_no_result = true;
        let sink = AcpSink::with_mode(Box::new(self.clone()), Mode::Replay);
        let mut p = Pipeline::new(Normalizer::new(opts), vec![Box::new(sink)]);
        if let Some(r) = self.cfg.setup.redactor() {
            p = p.transform(r);
        }
        let f = std::fs::File::open(tmp.path()).map_err(|e| RpcError::internal(e.to_string()))?;
        p.run(f, None)
            .and_then(|()| p.finish(&crate::normalize::EndInfo::eof()))
            .map_err(|e| RpcError::internal(format!("boo-normalize: acp: replay: {e}")))
    }
}
