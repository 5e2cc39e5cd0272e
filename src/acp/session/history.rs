//! A session's conversation as the CLI keeps it on disk (its transcript under the CLI's
//! projects folder): where it is, whether it holds a conversation to resume, its replay as
//! updates for `session/load`, and the list of those on disk for `session/list`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol_schema::v1::SessionInfo;

use super::Session;
use crate::acp::Config;
use crate::acp::updates::{AcpSink, Mode};
use crate::acp::wire::RpcError;
use crate::normalize::Normalizer;
use crate::pipeline::Pipeline;
use crate::transcript::listing::{self, Filter};

/// The CLI's folder of transcripts (`CLAUDE_CONFIG_DIR`, else `~/.claude`, of its
/// environment), `None` when its environment names neither.
fn config_root(cfg: &Config) -> Option<PathBuf> {
    let var = |k: &str| {
        cfg.env
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| PathBuf::from(v))
    };
    var("CLAUDE_CONFIG_DIR").or_else(|| var("HOME").map(|h| h.join(".claude")))
}

/// The CLI's folder of the transcripts of the sessions run in `cwd`.
fn project_dir(cfg: &Config, cwd: &Path) -> Option<PathBuf> {
    let dir = crate::transcript::listing::project_dir_name(&cwd.to_string_lossy());
    Some(config_root(cfg)?.join("projects").join(dir))
}

/// `session/list`: the sessions the CLI keeps on disk, those run in `cwd` (every one when
/// `None`), read by the transcript reader, most recent first; each as ACP's `SessionInfo`.
pub fn on_disk(cfg: &Config, cwd: Option<&Path>) -> Vec<SessionInfo> {
    let f = Filter::default();
    let found = match cwd {
        Some(c) => project_dir(cfg, c).map(|d| listing::list_project(&d, &f)),
        None => config_root(cfg).map(|r| listing::list(&r.join("projects"), &f)),
    };
    let Some(Ok((mut list, _))) = found else {
        return Vec::new();
    };
    list.sort_by(|a, b| b.end.cmp(&a.end));
    list.into_iter()
        .filter(|s| uuid::Uuid::parse_str(&s.id).is_ok() && s.messages > 0)
        .filter_map(|s| {
            let dir = s
                .cwd
                .map(PathBuf::from)
                .or_else(|| cwd.map(Path::to_path_buf))?;
            if !dir.is_absolute() || cwd.is_some_and(|c| c != dir) {
                return None;
            }
            Some(SessionInfo::new(s.id, dir).updated_at(s.end))
        })
        .collect()
}

impl Session {
    /// Where the CLI keeps the transcript of its session `id` for this session's directory
    /// (`None`: neither `CLAUDE_CONFIG_DIR` nor `HOME` is in its environment).
    pub fn transcript_path(&self, id: &str) -> Option<PathBuf> {
        let dir = project_dir(&self.cfg, &self.cwd)?;
        Some(dir.join(format!("{id}.jsonl")))
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
