//! Finding a session's files: the main transcript and its subagents' sidechain files, in every
//! layout the CLI versions used, and finding sessions by id under `~/.claude/projects`.
//!
//! Layouts (seen in the fixtures, `fixtures/transcripts/<version>/`):
//!
//! - CLI 1.0.x: sidechain lines inline in the main file (`isSidechain: true`).
//! - CLI 2.0.x: `<project>/agent-<agentId>.jsonl` beside the main file, one per subagent, whose
//!   lines name the owning session in `sessionId`.
//! - CLI 2.1.x: `<project>/<session>/subagents/agent-<agentId>.jsonl`, with (2.1.3xx) an
//!   `agent-<agentId>.meta.json` whose `toolUseId` is the call that started the subagent.
//!
//! The session id is the main file's name (what `claude --resume` takes); the lines inside may
//! name another one (a resumed run of CLI 1.0.x writes the old id into its new file).

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::Error;

/// One sidechain file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sidechain {
    /// The file.
    pub path: PathBuf,
    /// The agent id from the file name (`agent-<id>.jsonl`).
    pub agent_id: Option<String>,
    /// The tool call that started the subagent, when a file says so (see [`owners`]).
    pub owner: Option<String>,
}

/// A session's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFiles {
    /// The session id (the main file's name without `.jsonl`).
    pub id: String,
    /// The project directory's name (the working directory with `/` spelled `-`).
    pub project: String,
    /// The main transcript.
    pub main: PathBuf,
    /// Its sidechain files, in name order.
    pub sidechains: Vec<Sidechain>,
}

/// Where Claude Code keeps transcripts: `$CLAUDE_CONFIG_DIR/projects`, else
/// `$HOME/.claude/projects`.
pub fn projects_root() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("projects"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".claude").join("projects"))
}

/// Whether `name` is a main transcript's file name (`*.jsonl`, not `agent-*.jsonl`).
pub fn is_main_name(name: &str) -> bool {
    name.ends_with(".jsonl") && !name.starts_with("agent-") && name.len() > ".jsonl".len()
}

fn agent_id_of(name: &str) -> Option<String> {
    name.strip_prefix("agent-")
        .and_then(|s| s.strip_suffix(".jsonl"))
        .map(str::to_owned)
}

#[derive(Deserialize)]
struct FirstLine {
    #[serde(rename = "sessionId", default)]
    session: Option<String>,
}

/// The `sessionId` of a file's first line that has one (up to 8 lines are read).
fn session_of(path: &Path) -> Option<String> {
    let f = BufReader::new(File::open(path).ok()?);
    for line in f.split(b'\n').take(8) {
        let line = line.ok()?;
        if let Ok(FirstLine { session: Some(s) }) = serde_json::from_slice(&line) {
            return Some(s);
        }
    }
    None
}

/// The CLI 2.0.x sidechain files of a project directory, by the session their lines name.
pub fn flat_agents(dir: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut by: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return by;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("agent-") && name.ends_with(".jsonl") {
            let p = e.path();
            if let Some(s) = session_of(&p) {
                by.entry(s).or_default().push(p);
            }
        }
    }
    for v in by.values_mut() {
        v.sort();
    }
    by
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "toolUseId", default)]
    tool_use_id: Option<String>,
}

/// The files of the session whose main transcript is `main`. `flat`: the project directory's
/// [`flat_agents`], when the caller has it already (it is read otherwise).
pub fn session_files(main: &Path, flat: Option<&HashMap<String, Vec<PathBuf>>>) -> SessionFiles {
    let dir = main.parent().unwrap_or(Path::new("."));
    let name = main
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let id = name.strip_suffix(".jsonl").unwrap_or(name).to_owned();
    let project = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Ok(rd) = fs::read_dir(dir.join(&id).join("subagents")) {
        for e in rd.flatten() {
            let n = e.file_name();
            if n.to_str()
                .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
            {
                paths.push(e.path());
            }
        }
    }
    let owned;
    let flat = match flat {
        Some(f) => f,
        None => {
            owned = flat_agents(dir);
            &owned
        }
    };
    if let Some(v) = flat.get(&id) {
        paths.extend(v.iter().cloned());
    }
    paths.sort();
    let sidechains = paths
        .into_iter()
        .map(|path| {
            let agent_id = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(agent_id_of);
            let owner = fs::read(path.with_extension("meta.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<Meta>(&b).ok())
                .and_then(|m| m.tool_use_id);
            Sidechain {
                path,
                agent_id,
                owner,
            }
        })
        .collect();
    SessionFiles {
        id,
        project,
        main: main.to_path_buf(),
        sidechains,
    }
}

#[derive(Deserialize)]
struct ResultLine<'a> {
    #[serde(rename = "toolUseResult", default)]
    result: Option<AgentResult>,
    #[serde(borrow, default)]
    message: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct AgentResult {
    #[serde(rename = "agentId", default)]
    agent_id: Option<String>,
}

#[derive(Deserialize)]
struct UserMessage {
    #[serde(default)]
    content: Option<Vec<ResultBlock>>,
}

#[derive(Deserialize)]
struct ResultBlock {
    #[serde(default)]
    tool_use_id: Option<String>,
}

/// Fill in the owners of `s`'s sidechains that no meta file named, from the main transcript:
/// the tool result of a subagent call says `toolUseResult.agentId` (CLI 2.0.x and 2.1.x). Only
/// lines that mention `agentId` are parsed.
pub fn owners(s: &mut SessionFiles) -> io::Result<()> {
    if s.sidechains
        .iter()
        .all(|c| c.owner.is_some() || c.agent_id.is_none())
    {
        return Ok(());
    }
    let finder = memchr::memmem::Finder::new(b"\"agentId\"");
    let mut found: HashMap<String, String> = HashMap::new();
    let f = BufReader::new(File::open(&s.main)?);
    for line in f.split(b'\n') {
        let line = line?;
        if finder.find(&line).is_none() {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<ResultLine<'_>>(&line) else {
            continue;
        };
        let (Some(AgentResult { agent_id: Some(a) }), Some(m)) = (l.result, l.message) else {
            continue;
        };
        let id = serde_json::from_str::<UserMessage>(m.get())
            .ok()
            .and_then(|m| m.content)
            .and_then(|c| c.into_iter().find_map(|b| b.tool_use_id));
        if let Some(id) = id {
            found.insert(a, id);
        }
    }
    for c in &mut s.sidechains {
        if c.owner.is_none()
            && let Some(a) = &c.agent_id
        {
            c.owner = found.get(a).cloned();
        }
    }
    Ok(())
}

/// Every session under `root` (one directory per project), projects and sessions in name order.
/// `want_project`: only projects whose directory name it accepts.
pub fn all_sessions(
    root: &Path,
    want_project: Option<&dyn Fn(&str) -> bool>,
) -> Result<Vec<SessionFiles>, Error> {
    let name = root.display().to_string();
    let rd = fs::read_dir(root).map_err(|e| Error::io(&name, e))?;
    let mut dirs: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| want_project.is_none_or(|want| want(&e.file_name().to_string_lossy())))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for d in dirs {
        out.extend(project_sessions(&d));
    }
    Ok(out)
}

/// The sessions of one project directory, in name order.
pub fn project_sessions(dir: &Path) -> Vec<SessionFiles> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut mains: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(is_main_name))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    mains.sort();
    let flat = flat_agents(dir);
    mains
        .iter()
        .map(|m| session_files(m, Some(&flat)))
        .collect()
}

/// The main transcript of session `id` (or of the one session whose id starts with `id`) under
/// `root`.
pub fn find(root: &Path, id: &str) -> Result<PathBuf, Error> {
    let ctx = format!("session {id}");
    let rd = match fs::read_dir(root) {
        Ok(rd) => rd,
        // No Claude Code history on this machine: name what was asked for.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::msg(
                ctx,
                format!(
                    "no such file, and no session transcripts here ({} does not exist)",
                    root.display()
                ),
            ));
        }
        Err(e) => return Err(Error::io(root.display().to_string(), e)),
    };
    let mut hits: Vec<PathBuf> = Vec::new();
    for d in rd.flatten() {
        let exact = d.path().join(format!("{id}.jsonl"));
        if exact.is_file() {
            return Ok(exact);
        }
        if let Ok(files) = fs::read_dir(d.path()) {
            for f in files.flatten() {
                let n = f.file_name();
                if n.to_str()
                    .is_some_and(|n| is_main_name(n) && n.starts_with(id))
                {
                    hits.push(f.path());
                }
            }
        }
    }
    match hits.len() {
        1 => Ok(hits.pop().expect("one")),
        0 => Err(Error::msg(
            ctx,
            format!(
                "no such file, and no session with that id under {}",
                root.display()
            ),
        )),
        n => Err(Error::msg(
            ctx,
            format!("the id is ambiguous: {n} sessions start with it"),
        )),
    }
}

/// Whether `arg` could be a session id (or the start of one): hex digits and dashes, 4 or more.
pub fn looks_like_id(arg: &str) -> bool {
    arg.len() >= 4 && arg.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}
