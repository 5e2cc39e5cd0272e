//! Turning command-line inputs (capture files, directories of captures, saved profiles, stdin)
//! into one [`Profile`].

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::infer::version_from_path;
use super::{Profile, Profiler};
use crate::batch::{self, Job, Turn};
use crate::error::Error;
use crate::transcript::session::{self, SessionFiles};

/// File extensions picked up when a directory is given.
pub const CAPTURE_EXTENSIONS: &[&str] = &["ndjson", "jsonl"];

/// Expand directories (recursively, sorted) into capture files; other paths are kept as given.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
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
            out.push(s.main);
            out.extend(s.sidechains.into_iter().map(|c| c.path));
        } else {
            out.push(p.clone());
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

fn walk_dir(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
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
            out.push(p);
        }
    }
    Ok(())
}

/// Profile every input: captures are profiled, saved profiles merged in.
///
/// Each input is profiled on its own, on every core (see [`crate::batch`]), and the parts are
/// merged in input order as they come: the document is the same whatever the number of threads,
/// and the same as profiling the inputs together (counts add up; see [`Profile::merge`]). The
/// first input that cannot be read is the error.
pub fn load(paths: &[PathBuf], by_version: bool) -> Result<Profile, Error> {
    let mut sides = load_sides(&[paths], by_version)?;
    Ok(sides.pop().expect("one side"))
}

/// [`load`] for several lists of inputs at once (`diff`'s two sides): one profile per list, the
/// files of every list spread over the cores together. The first input that cannot be read, in
/// list order, is the error.
pub fn load_sides(sides: &[&[PathBuf]], by_version: bool) -> Result<Vec<Profile>, Error> {
    let mut jobs = Vec::new();
    for (side, paths) in sides.iter().enumerate() {
        for f in expand(paths)? {
            let size = (f.as_os_str() != "-")
                .then(|| fs::metadata(&f).ok())
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
    let load = |(side, f, size): (usize, PathBuf, Option<u64>), p: &mut Profiler| {
        (side, load_one(&f, size, p))
    };
    batch::in_order(
        jobs,
        batch::threads(),
        AHEAD_BYTES,
        || Profiler::new().by_version(by_version),
        load,
        |turn, p| {
            match turn {
                Turn::Own(job) => {
                    let (side, part) = load(job, p);
                    out[side].add(&part?);
                }
                Turn::Done(done) => match &*done {
                    (side, Ok(part)) => out[*side].add(part),
                    (_, Err(_)) => return done.into_inner().1.map(drop),
                },
            }
            Ok::<(), Error>(())
        },
    )?;
    for p in &mut out {
        p.finalize();
    }
    if !by_version {
        for p in &mut out {
            p.by_version.clear();
        }
    }
    Ok(out)
}

/// Input bytes of captures profiled ahead and not merged yet (see [`batch::in_order`]): a
/// capture's profile is a small fraction of its size, and merging is quick, so workers may run
/// well ahead of a large capture the calling thread profiles in turn instead of waiting.
const AHEAD_BYTES: u64 = 32 << 20;

/// One input's profile: a capture of `size` bytes (when known) profiled with `profiler` (empty;
/// it keeps its buffers for the next), or a saved profile.
fn load_one(f: &Path, size: Option<u64>, profiler: &mut Profiler) -> Result<Profile, Error> {
    let name = f.display().to_string();
    if name == "-" {
        let read = profiler.add_stream(io::stdin().lock(), None);
        return taken(profiler, read, "stdin");
    }
    let mut file = File::open(f).map_err(|e| Error::io(&name, e))?;
    let mut head = Vec::with_capacity(512);
    (&mut file)
        .take(512)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(&name, e))?;
    if Profile::looks_like_profile(&head) {
        let mut text =
            String::from_utf8(head).map_err(|_| Error::msg(&name, "profile is not UTF-8"))?;
        file.read_to_string(&mut text)
            .map_err(|e| Error::io(&name, e))?;
        return Profile::from_json(&text)
            .map_err(|e| Error::msg(&name, format!("not a valid profile: {e}")));
    }
    let read = profiler.add_sized_stream(
        io::Cursor::new(head).chain(file),
        size,
        version_from_path(f),
    );
    taken(profiler, read, &name)
}

/// The profile of the stream `profiler` just read, or its read error. The profiler is emptied
/// either way (a failed read leaves part of a profile behind): it serves the thread's next file.
fn taken(profiler: &mut Profiler, read: io::Result<()>, name: &str) -> Result<Profile, Error> {
    let part = profiler.take();
    read.map_err(|e| Error::io(name, e))?;
    Ok(part)
}
