//! Turning command-line inputs (capture files, directories of captures, saved profiles, stdin)
//! into one [`Profile`].

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::infer::{version_from_path, version_like};
use super::{Profile, Profiler};
use crate::error::Error;
use crate::sniff;
use crate::transcript::session::{self, SessionFiles};
use crate::work::{self, Job, Turn};

/// File extensions picked up when a directory is given.
pub const CAPTURE_EXTENSIONS: &[&str] = &["ndjson", "jsonl"];

/// One input path, and whether it was found in a directory (rather than named).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The path (`-`: stdin).
    pub path: PathBuf,
    /// Found by walking a directory: skipped with a note when it holds no stream-json.
    pub in_dir: bool,
}

/// Expand directories (recursively, sorted) into capture files (`*.ndjson`, `*.jsonl`; other
/// files, such as a `profile.json` beside the captures, are not read); other paths are kept as
/// given.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<Source>, Error> {
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str() != "-" && p.is_dir() {
            let before = out.len();
            walk_dir(p, &mut out)?;
            if out.len() == before {
                return Err(Error::msg(
                    p.display().to_string(),
                    "no *.ndjson or *.jsonl files in this directory",
                ));
            }
        } else if let Some(s) = session_by_id(p)? {
            // A session id: the session's transcript files, its subagents' included, profiled
            // as they are written (transcript shape drift shows as in any capture).
            out.push(Source {
                path: s.main,
                in_dir: false,
            });
            out.extend(s.sidechains.into_iter().map(|c| Source {
                path: c.path,
                in_dir: false,
            }));
        } else {
            out.push(Source {
                path: p.clone(),
                in_dir: false,
            });
        }
    }
    Ok(out)
}

/// The session `p` names when it is no file but a session id (or its start) under
/// `~/.claude/projects`.
fn session_by_id(p: &Path) -> Result<Option<SessionFiles>, Error> {
    let arg = p.to_string_lossy();
    if arg == "-" || p.exists() || !session::looks_like_id(&arg) {
        return Ok(None);
    }
    let Some(root) = session::projects_root() else {
        return Ok(None);
    };
    let main = session::find(&root, &arg)?;
    Ok(Some(session::session_files(&main, None)))
}

fn walk_dir(dir: &Path, out: &mut Vec<Source>) -> Result<(), Error> {
    let ctx = || dir.display().to_string();
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error::io(ctx(), e))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(|e| Error::io(ctx(), e))?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk_dir(&p, out)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| CAPTURE_EXTENSIONS.contains(&e))
        {
            out.push(Source {
                path: p,
                in_dir: true,
            });
        }
    }
    Ok(())
}

/// Profile every input: captures are profiled, saved profiles merged in.
///
/// Each input is profiled on its own, on every core (see [`crate::work`]), and the parts are
/// merged in input order as they come: the document is the same whatever the number of threads,
/// and the same as profiling the inputs together (counts add up; see [`Profile::merge`]). The
/// first input that cannot be read is the error; so is a named file that holds no stream-json
/// (see [`crate::sniff`]), while such a file found in a directory is skipped with a line on
/// `notes`; and so is an input list that yields no stream-json object at all.
pub fn load(paths: &[PathBuf], by_version: bool, notes: &mut dyn Write) -> Result<Profile, Error> {
    let mut sides = load_sides(&[paths], by_version, notes)?;
    Ok(sides.pop().expect("one side"))
}

/// [`load`] for several lists of inputs at once (`diff`'s two sides): one profile per list, the
/// files of every list spread over the cores together. The first input that cannot be read, in
/// list order, is the error.
pub fn load_sides(
    sides: &[&[PathBuf]],
    by_version: bool,
    notes: &mut dyn Write,
) -> Result<Vec<Profile>, Error> {
    let mut jobs = Vec::new();
    for (side, paths) in sides.iter().enumerate() {
        for f in expand(paths)? {
            let size = (f.path.as_os_str() != "-")
                .then(|| fs::metadata(&f.path).ok())
                .flatten()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            jobs.push(Job {
                bytes: size.unwrap_or(0),
                // stdin, pipes and unreadable paths in turn (the latter fail there, in order).
                ahead: size.is_some(),
                item: (side, f, size),
            });
        }
    }
    let mut out: Vec<Profile> = sides.iter().map(|_| Profile::default()).collect();
    let mut skipped = vec![0u64; sides.len()];
    let load = |(side, f, size): (usize, Source, Option<u64>), p: &mut Profiler| {
        let part = load_one(&f.path, size, p);
        (side, f, part)
    };
    let mut take = |side: usize, f: &Source, part: Loaded| -> Result<(), Error> {
        match part {
            Loaded::Profile(p) => out[side].add(&p),
            Loaded::NotStreamJson(reason) => {
                let name = f.path.display().to_string();
                if !f.in_dir {
                    return Err(Error::msg(name, reason));
                }
                skipped[side] += 1;
                let _ = writeln!(notes, "boo-normalize: {name}: skipped: {reason}");
            }
        }
        Ok(())
    };
    work::in_order(
        jobs,
        work::threads(),
        AHEAD_BYTES,
        || Profiler::new().by_version(by_version),
        load,
        |turn, p| match turn {
            Turn::Own(job) => {
                let (side, f, part) = load(job, p);
                take(side, &f, part?)
            }
            Turn::Done(done) => {
                let (side, f, part) = done.into_inner();
                take(side, &f, part?)
            }
        },
    )?;
    for (side, p) in out.iter_mut().enumerate() {
        p.finalize();
        if p.stream_json_objects() == 0 && p.input.objects == 0 {
            let names: Vec<String> = sides[side]
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let why = match skipped[side] {
                0 => "no stream-json object in it".to_owned(),
                n => format!(
                    "no stream-json object in it ({} skipped, see above)",
                    crate::error::counted(n, "file")
                ),
            };
            return Err(Error::msg(names.join(" "), why));
        }
    }
    if !by_version {
        for p in &mut out {
            p.by_version.clear();
        }
    }
    Ok(out)
}

/// Input bytes of captures profiled ahead and not merged yet (see [`work::in_order`]): a
/// capture's profile is a small fraction of its size, and merging is quick, so workers may run
/// well ahead of a large capture the calling thread profiles in turn instead of waiting.
const AHEAD_BYTES: u64 = 32 << 20;

/// What one input gave: its profile, or why it is not a capture.
enum Loaded {
    /// A capture's profile, or a saved profile.
    Profile(Profile),
    /// No stream-json in it: what it is and what to use instead ([`sniff::reason`]).
    NotStreamJson(String),
}

/// One input's profile: a capture of `size` bytes (when known) profiled with `profiler` (empty;
/// it keeps its buffers for the next), or a saved profile. A file whose beginning is another
/// format (envelope output, an audit log, …) is not profiled; one that turns out to hold no
/// stream-json object is not a capture either.
fn load_one(f: &Path, size: Option<u64>, profiler: &mut Profiler) -> Result<Loaded, Error> {
    let name = f.display().to_string();
    if name == "-" {
        let mut head = Vec::new();
        let stdin = sniff::Head::new(io::stdin().lock(), &mut head);
        let read = profiler.add_source(stdin, None, None, Some("-"));
        let part = taken(profiler, read, "stdin")?;
        return Ok(checked(part, "stdin", &head));
    }
    let mut file = File::open(f).map_err(|e| Error::io(&name, e))?;
    let mut head = Vec::with_capacity(4096);
    (&mut file)
        .take(sniff::HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(&name, e))?;
    if Profile::looks_like_profile(&head) {
        let mut text =
            String::from_utf8(head).map_err(|_| Error::msg(&name, "profile is not UTF-8"))?;
        file.read_to_string(&mut text)
            .map_err(|e| Error::io(&name, e))?;
        return Profile::from_json(&text)
            .map(Loaded::Profile)
            .map_err(|e| Error::msg(&name, format!("not a valid profile: {e}")));
    }
    if let Some((kind, reason)) = sniff::check_head(&name, &head)
        && kind.is_other_format()
        && kind != sniff::Kind::Transcript
    {
        return Ok(Loaded::NotStreamJson(reason));
    }
    let read = profiler.add_source(
        io::Cursor::new(&head[..]).chain(file),
        size,
        version_from_path(f).or_else(|| probe_version(f)),
        Some(&name),
    );
    let part = taken(profiler, read, &name)?;
    Ok(checked(part, &name, &head))
}

/// The CLI version a probe recorded for the capture `f`: the `cli_version` of the probe's
/// `summary.json` beside it (a probe directory need not be named after the version, and another
/// agent's stream does not say it).
fn probe_version(f: &Path) -> Option<String> {
    let text = fs::read_to_string(f.parent()?.join("summary.json")).ok()?;
    let summary: serde_json::Value = serde_json::from_str(&text).ok()?;
    let v = summary.get("cli_version")?.as_str()?;
    version_like(v).then(|| v.to_owned())
}

/// `part`, or why it is not a capture when it holds no stream-json object.
fn checked(part: Profile, name: &str, head: &[u8]) -> Loaded {
    // A session transcript, or another agent's stream (crate::dialect), is profiled as it is
    // written (its shape drifts like a capture's).
    let other_agent =
        crate::dialect::detect(head).is_some_and(|d| d != crate::dialect::Dialect::Claude);
    if part.stream_json_objects() > 0
        || other_agent
        || sniff::sniff(head) == sniff::Kind::Transcript
    {
        return Loaded::Profile(part);
    }
    // Another agent's JSON stream (Codex, Gemini CLI, OpenCode, Copilot CLI): every line a JSON
    // object with a `type`, profiled by that type as any capture is.
    let i = &part.input;
    if i.objects > 0 && i.objects + i.blank == i.lines {
        return Loaded::Profile(part);
    }
    let kind = match part.input.lines {
        0 => sniff::Kind::Empty,
        _ => sniff::sniff(head),
    };
    Loaded::NotStreamJson(sniff::reason(name, kind, part.input.lines))
}

/// The profile of the stream `profiler` just read, or its read error. The profiler is emptied
/// either way (a failed read leaves part of a profile behind): it serves the thread's next file.
fn taken(profiler: &mut Profiler, read: io::Result<()>, name: &str) -> Result<Profile, Error> {
    let part = profiler.take();
    read.map_err(|e| Error::io(name, e))?;
    Ok(part)
}
