//! Starting the child and the threads around it: stdout framed into line batches, stderr
//! drained line by line, the prompt written to stdin, and signals to boo-normalize, all
//! delivered as messages on one channel so the supervisor can wait for any of them with a
//! timeout.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread;

use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

use crate::read::{Line, LineReader};

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its whole environment (nothing else is inherited).
    pub env: Vec<(OsString, OsString)>,
    /// Written to its stdin, which is then closed; `None`: stdin is `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// Cut stdout lines longer than this (reported by the normalizer as `line_too_long`).
    pub max_line: Option<usize>,
    /// Its working directory (`None`: boo-normalize's).
    pub cwd: Option<PathBuf>,
    /// Keep its stdin open and hand the pipe (and the pid) over here instead of writing
    /// [`Spec::stdin`]: a conversation over stdin (`acp`). `None`: as `stdin` says.
    pub attach: Option<Attach>,
}

/// A started child's stdin pipe and pid, for the caller that talks to it while it runs.
#[derive(Debug, Default)]
pub struct Attached {
    /// The child's pid (also its process group id).
    pub pid: Option<i32>,
    /// Its stdin (`None` once closed).
    pub stdin: Option<std::process::ChildStdin>,
}

/// Where [`start`] hands over a child's stdin (see [`Spec::attach`]).
pub type Attach = Arc<std::sync::Mutex<Attached>>;

/// Longest stderr line kept (the rest of the line is dropped and the line marked truncated).
pub const STDERR_LINE_MAX: usize = 64 * 1024;

/// Bytes of stderr lines in flight to the supervisor (each line counts its length plus
/// `STDERR_LINE_COST`); a line read while the queue holds this much is dropped and counted, so
/// a flood costs at most about this much memory.
pub const STDERR_QUEUE: usize = 2 << 20;

/// What a queued stderr line costs besides its bytes (its message and allocation).
const STDERR_LINE_COST: usize = 64;

/// Stdout batches in flight between the reader thread and the supervisor.
const CREDITS: usize = 8;

/// Most stdout bytes gathered into one batch.
const BATCH_BYTES: usize = 1 << 20;

/// The framing of one line inside a [`Batch`].
#[derive(Debug, Clone, Copy)]
struct LineMeta {
    start: usize,
    end: usize,
    number: u64,
    raw_len: u64,
    terminated: bool,
    oversized: Option<u64>,
    cr: bool,
}

/// The stdout lines that were available without blocking, back to back.
#[derive(Debug, Default)]
pub struct Batch {
    buf: Vec<u8>,
    lines: Vec<LineMeta>,
}

impl Batch {
    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Line `i`.
    pub fn line(&self, i: usize) -> Line<'_> {
        let m = self.lines[i];
        Line {
            bytes: &self.buf[m.start..m.end],
            number: m.number,
            raw_len: m.raw_len,
            terminated: m.terminated,
            oversized: m.oversized,
            cr: m.cr,
        }
    }

    fn push(&mut self, l: &Line<'_>) {
        let start = self.buf.len();
        self.buf.extend_from_slice(l.bytes);
        self.lines.push(LineMeta {
            start,
            end: self.buf.len(),
            number: l.number,
            raw_len: l.raw_len,
            terminated: l.terminated,
            oversized: l.oversized,
            cr: l.cr,
        });
    }
}

/// Something that happened.
#[derive(Debug)]
pub enum Msg {
    /// Stdout lines.
    Lines(Batch),
    /// Stdout reached end of file (or failed: the error).
    StdoutEnd(Option<io::Error>),
    /// One stderr line (without its newline) and whether it was cut.
    Stderr(Vec<u8>, bool),
    /// Stderr reached end of file (or failed): every line before it was sent.
    StderrEnd,
    /// A signal to boo-normalize (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGCHLD`).
    Signal(i32),
}

/// A started child.
pub struct Running {
    /// Its pid, which is also its process group id.
    pub pid: i32,
    /// Every message, in arrival order.
    pub rx: Receiver<Msg>,
    /// Give back one stdout credit after handling a [`Msg::Lines`].
    pub credit: SyncSender<()>,
    signals: Handle,
    stderr: Arc<StderrCount>,
}

/// Stderr lines queued and dropped (shared with the stderr thread).
#[derive(Default)]
struct StderrCount {
    queued: AtomicUsize,
    dropped: AtomicU64,
}

impl Running {
    /// The supervisor took this [`Msg::Stderr`] line off the channel.
    pub fn stderr_taken(&self, line: &[u8]) {
        self.stderr
            .queued
            .fetch_sub(line.len() + STDERR_LINE_COST, Ordering::SeqCst);
    }

    /// Stderr lines dropped because [`STDERR_QUEUE`] bytes were waiting.
    pub fn stderr_dropped(&self) -> u64 {
        self.stderr.dropped.load(Ordering::SeqCst)
    }

    /// Stop listening for signals (they are ignored from now on).
    pub fn close_signals(&self) {
        self.signals.close();
    }
}

/// Signals forwarded to the supervisor. Registering handlers replaces their default action,
/// so from here on SIGINT and friends no longer kill boo-normalize: the supervisor decides.
pub const SIGNALS: [i32; 4] = [SIGINT, SIGTERM, SIGHUP, SIGCHLD];

/// Start `spec` in a process group of its own, with the reader threads running.
pub fn start(spec: &Spec) -> io::Result<Running> {
    // Unbounded, so the stderr and signal threads never block; stdout is bounded by credits
    // (at most CREDITS batches in flight), so a slow consumer slows the child down instead of
    // filling memory.
    let (tx, rx) = channel::<Msg>();
    let (credit, credits) = sync_channel::<()>(CREDITS);
    for _ in 0..CREDITS {
        credit.send(()).expect("room for every credit");
    }
    let mut signals = Signals::new(SIGNALS)?;
    let handle = signals.handle();
    {
        let tx = tx.clone();
        thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for s in signals.forever() {
                    if tx.send(Msg::Signal(s)).is_err() {
                        break;
                    }
                }
            })?;
    }
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .process_group(0);
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    cmd.stdin(if spec.stdin.is_some() || spec.attach.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    die_with_parent(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            handle.close();
            return Err(e);
        }
    };
    let pid = child.id() as i32;
    if let Some(slot) = &spec.attach {
        let mut a = slot.lock().unwrap_or_else(|e| e.into_inner());
        a.pid = Some(pid);
        a.stdin = child.stdin.take();
    }
    if let (Some(mut w), Some(data)) = (child.stdin.take(), spec.stdin.clone()) {
        // On its own thread: the child may read its stdin late, and a prompt can exceed the
        // pipe buffer. Dropping `w` closes stdin right after the prompt (EPIPE is ignored: the
        // child may exit without reading).
        thread::Builder::new().name("stdin".into()).spawn(move || {
            let _ = w.write_all(&data);
        })?;
    }
    let out = child.stdout.take().expect("stdout is piped");
    let max_line = spec.max_line;
    let txo = tx.clone();
    thread::Builder::new()
        .name("stdout".into())
        .spawn(move || read_stdout(out, max_line, txo, credits))?;
    let err = child.stderr.take().expect("stderr is piped");
    let count = Arc::new(StderrCount::default());
    let c = count.clone();
    thread::Builder::new()
        .name("stderr".into())
        .spawn(move || read_stderr(err, tx, &c))?;
    // `child` is dropped without waiting: the supervisor reaps the pid itself.
    Ok(Running {
        pid,
        rx,
        credit,
        signals: handle,
        stderr: count,
    })
}

/// The child gets SIGKILL when the thread that started it (the supervisor) dies, so a killed
/// supervisor does not leave `claude` running (see [`super::guardian`] for the rest of the run).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as i32;
    // SAFETY: the hook only calls signal (to SIG_DFL), prctl and getppid, which are
    // async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            use nix::sys::signal::{SigHandler, Signal, signal};
            // The worker ignores SIGTTOU (see guardian); the child starts with the default.
            signal(Signal::SIGTTOU, SigHandler::SigDfl)?;
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The parent may have died before the prctl: then nobody will signal us.
            if nix::unistd::getppid().as_raw() != parent {
                return Err(io::Error::other("the supervisor is gone"));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut Command) {}

fn read_stdout(
    src: impl io::Read,
    max_line: Option<usize>,
    tx: Sender<Msg>,
    credits: Receiver<()>,
) {
    let mut r = LineReader::new(src).with_max_line(max_line);
    loop {
        let mut batch = Batch::default();
        let mut end = None;
        loop {
            match r.next_line() {
                Ok(Some(l)) => batch.push(&l),
                Ok(None) => {
                    end = Some(None);
                    break;
                }
                Err(e) => {
                    end = Some(Some(e));
                    break;
                }
            }
            if !r.has_buffered_line() || batch.buf.len() >= BATCH_BYTES {
                break;
            }
        }
        if !batch.is_empty() && (credits.recv().is_err() || tx.send(Msg::Lines(batch)).is_err()) {
            return;
        }
        if let Some(e) = end {
            let _ = tx.send(Msg::StdoutEnd(e));
            return;
        }
    }
}

fn read_stderr(src: impl io::Read, tx: Sender<Msg>, count: &StderrCount) {
    send_stderr(src, &tx, count);
    // The supervisor waits for this (bounded by the grace period) before the run ends, so a
    // child that writes to stderr and exits at once still has every line passed on.
    let _ = tx.send(Msg::StderrEnd);
}

fn send_stderr(src: impl io::Read, tx: &Sender<Msg>, count: &StderrCount) {
    let mut r = LineReader::new(src).with_max_line(Some(STDERR_LINE_MAX));
    while let Ok(Some(l)) = r.next_line() {
        // Keep reading (a child blocked on stderr would stall), but bound what waits.
        let cost = l.bytes.len() + STDERR_LINE_COST;
        if count.queued.load(Ordering::SeqCst) + cost > STDERR_QUEUE {
            count.dropped.fetch_add(1, Ordering::SeqCst);
            continue;
        }
        count.queued.fetch_add(cost, Ordering::SeqCst);
        if tx
            .send(Msg::Stderr(l.bytes.to_vec(), l.oversized.is_some()))
            .is_err()
        {
            return;
        }
    }
}
