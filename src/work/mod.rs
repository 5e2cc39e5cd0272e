//! Batch work on every core: independent jobs (one per input file) run ahead on worker threads
//! while the calling thread takes their results in input order, so whatever the calling thread
//! does with them (merge, write) overlaps the work and the result is the same on any number of
//! threads.
//!
//! Jobs are claimed strictly in input order from one shared cursor, each by exactly one thread,
//! so no work is ever done twice. The calling thread takes part: when the next job in order is
//! still unclaimed it does that job itself, in turn (for `redact`: streamed straight to the
//! output with the redactor that carries state from file to file); while it waits for a job a
//! worker is still on, it claims the next job and does it ahead like a worker would. Threads
//! that have nothing to do block on a condition variable (no spinning), so on a loaded machine a
//! waiting thread costs nothing and the work simply flows to whichever thread runs.
//!
//! Work done ahead is held until it is taken; workers stop claiming while more than a budget of
//! input bytes is held (the caller's: [`AHEAD_BYTES`] where a job's result is as large as its
//! input, more where results are small), which bounds memory. The calling thread may go further
//! ([`MAIN_AHEAD_FACTOR`] times the budget) while it waits: on a loaded machine the worker it
//! waits for may not be running, and a thread that could work but waits is what would make two
//! threads slower than one.
//!
//! A result is dropped on the thread that made it ([`Held`]): freeing memory another thread
//! allocated costs the allocator a lock shared with that thread's allocations, and the thread
//! that made a result reuses the memory best.
//!
//! The number of threads is the number of cores not busy with other work ([`threads`]), or
//! `BOO_NORMALIZE_THREADS` (`1`: the calling thread only). A batch smaller than
//! [`PARALLEL_MIN_BYTES`] runs on the calling thread alone.

use std::sync::{Condvar, Mutex, PoisonError};
use std::thread;

/// Input bytes (in all, over the jobs that may run ahead) below which a batch runs on the
/// calling thread alone. Measured on 2 cores: starting a worker thread and handing a file's
/// result over costs in the order of 0.1 ms, and the work on one thread runs at 150 (`profile`)
/// to 700 (`redact`) MB/s, so under 1 MiB (at most a few milliseconds of work) a second thread
/// saves too little to be worth it, and can cost more than it saves on a loaded machine.
pub const PARALLEL_MIN_BYTES: u64 = 1 << 20;

/// A budget for [`in_order`] where a job's result is about as large as its input (`redact`'s
/// output): input bytes of jobs done ahead and not taken yet, beyond which workers wait (one job
/// is always allowed, whatever its size). Small enough that what a job's result holds is reused
/// soon (fresh memory costs page faults), large enough that workers rarely wait while the
/// calling thread does a large file in turn.
pub const AHEAD_BYTES: u64 = 8 << 20;

/// How many times the budget the calling thread may go ahead while it waits for a worker's job.
pub const MAIN_AHEAD_FACTOR: u64 = 2;

/// The number of threads batch work uses: `BOO_NORMALIZE_THREADS` if set to a positive number
/// (`RAYON_NUM_THREADS`, its older name, is read too), else the number of cores that are not busy
/// with other work as the batch starts (at least one; see `busy_cores`). A thread that only
/// competes for a core another process keeps busy gains nothing and costs a share of the work in
/// hand-overs, so on a loaded machine a batch runs on one thread rather than more slowly on two.
pub fn threads() -> usize {
    let set = ["BOO_NORMALIZE_THREADS", "RAYON_NUM_THREADS"]
        .iter()
        .find_map(|k| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
        })
        .filter(|&n| n > 0);
    set.unwrap_or_else(|| {
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        cores.saturating_sub(busy_cores(cores)).max(1)
    })
}

/// How many times the runnable count is read before a batch concludes that other work keeps
/// cores busy (see [`busy_cores`]).
const BUSY_SAMPLES: usize = 3;

/// Cores kept busy by other work (at most `cores`): the fewest threads found runnable besides
/// this one over [`BUSY_SAMPLES`] readings, this thread yielding its core between them. One
/// reading is a snapshot, and a process that just started this one (a shell, a script about to
/// wait for it) is often still runnable at that instant: on an idle 2-core machine a single
/// reading saw a core busy in one run of four or five, three readings in one run of 40. Work
/// that really occupies a core is there at every reading, and yielding costs next to nothing
/// (with one busy process beside it: 33.5 against 34.1 ms for 200 captures, noise).
fn busy_cores(cores: usize) -> usize {
    let mut busy = cores;
    for i in 0..BUSY_SAMPLES {
        if i > 0 {
            thread::yield_now();
        }
        let now = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|t| busy_elsewhere(&t))
            .unwrap_or(0);
        busy = busy.min(now);
        if busy == 0 {
            break;
        }
    }
    busy
}

/// Threads running or ready to run right now other than the caller, from the text of Linux's
/// `/proc/loadavg` (its fourth field, `runnable/total`, counts the reading thread too).
fn busy_elsewhere(loadavg: &str) -> Option<usize> {
    let field = loadavg.split_whitespace().nth(3)?;
    let running: usize = field.split('/').next()?.parse().ok()?;
    Some(running.saturating_sub(1))
}

/// One job of a batch.
pub struct Job<T> {
    /// What the job works on (a path, an open file).
    pub item: T,
    /// Its size in input bytes (0 when unknown), for [`PARALLEL_MIN_BYTES`] and [`AHEAD_BYTES`].
    pub bytes: u64,
    /// Whether it may be done ahead; a job that may not is only done in turn, by the calling
    /// thread (stdin, a pipe, a file too large to hold).
    pub ahead: bool,
}

/// A job as the calling thread gets it, in input order.
pub enum Turn<'a, T, R> {
    /// Nobody did it yet: do it now, in turn.
    Own(T),
    /// It was done ahead: here is its result.
    Done(Held<'a, R>),
}

/// The result of a job done ahead, as the calling thread takes it: dropped, it goes back to the
/// thread that made it, which drops it there before its next job (see the module docs).
pub struct Held<'a, R> {
    value: Option<R>,
    /// Where the thread that made it collects its spent results; `None` when that is the
    /// calling thread.
    home: Option<&'a Mutex<Vec<R>>>,
}

impl<R> Held<'_, R> {
    /// The result itself, to keep or to drop on this thread.
    pub fn into_inner(mut self) -> R {
        self.value
            .take()
            .expect("a held result is there until taken")
    }
}

impl<R> std::ops::Deref for Held<'_, R> {
    type Target = R;
    fn deref(&self) -> &R {
        self.value
            .as_ref()
            .expect("a held result is there until taken")
    }
}

impl<R> std::ops::DerefMut for Held<'_, R> {
    fn deref_mut(&mut self) -> &mut R {
        self.value
            .as_mut()
            .expect("a held result is there until taken")
    }
}

impl<R> Drop for Held<'_, R> {
    fn drop(&mut self) {
        if let (Some(v), Some(home)) = (self.value.take(), self.home) {
            home.lock().unwrap_or_else(PoisonError::into_inner).push(v);
        }
    }
}

struct State<T, R> {
    items: Vec<Option<T>>,
    /// Results done ahead, with the worker that made each (`None`: the calling thread).
    done: Vec<Option<(R, Option<usize>)>>,
    /// The first job nobody claimed yet.
    next: usize,
    /// Input bytes claimed ahead and not taken yet.
    held: u64,
    /// Set when the calling thread stops early (an error): workers finish and leave.
    stop: bool,
    /// The job the calling thread waits for, if it waits.
    main_waits_for: Option<usize>,
    /// Workers waiting for a job they may claim.
    workers_waiting: usize,
    /// Set when a worker panicked: the job it had will never be done.
    lost: bool,
}

struct Shared<T, R> {
    bytes: Vec<u64>,
    ahead: Vec<bool>,
    /// Input bytes workers may hold ahead, and the calling thread.
    budget: u64,
    main_budget: u64,
    state: Mutex<State<T, R>>,
    /// Per worker, its results taken and dropped by the calling thread, to drop on the worker.
    spent: Vec<Mutex<Vec<R>>>,
    /// Signalled when the job the calling thread waits for is done.
    for_main: Condvar,
    /// Signalled when workers may claim again (the calling thread claimed a job or took one
    /// held), and on stop. Only waiting threads are woken: each wake-up is a context switch.
    for_workers: Condvar,
}

impl<T, R> Shared<T, R> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T, R>> {
        // A panicking worker poisons the lock; the scope re-raises its panic anyway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wake_workers(&self, st: &State<T, R>) {
        if st.workers_waiting > 0 {
            self.for_workers.notify_all();
        }
    }

    /// Claim the next job to do ahead, if it may be done ahead and fits the memory bound.
    fn claim_ahead(&self, st: &mut State<T, R>, limit: u64) -> Option<(usize, T)> {
        let i = st.next;
        if i >= st.items.len() || !self.ahead[i] || st.stop {
            return None;
        }
        if st.held > 0 && st.held + self.bytes[i] > limit {
            return None;
        }
        st.next += 1;
        st.held += self.bytes[i];
        Some((i, st.items[i].take().expect("each job is claimed once")))
    }
}

/// Tells the calling thread when a worker panics, so that it does not wait for that worker's
/// job forever.
struct PanicGuard<'a, T, R>(&'a Shared<T, R>);

impl<T, R> Drop for PanicGuard<'_, T, R> {
    fn drop(&mut self) {
        if thread::panicking() {
            let mut st = self.0.lock();
            st.lost = true;
            st.stop = true;
            self.0.for_main.notify_all();
            self.0.for_workers.notify_all();
        }
    }
}

/// The calling thread's counterpart of [`PanicGuard`]: however the calling thread leaves the
/// batch (done, an error from `take`, or a panic in `take` or in a job it does ahead), workers
/// are told to stop and every parked one is woken, so that the scope, which joins them before
/// it returns or re-raises the panic, never waits for a worker parked on a full budget.
struct StopOnLeave<'a, T, R>(&'a Shared<T, R>);

impl<T, R> Drop for StopOnLeave<'_, T, R> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.stop = true;
        self.0.for_workers.notify_all();
    }
}

/// Run `jobs` on up to `threads` threads and hand each to `take` on the calling thread, in input
/// order: as [`Turn::Own`] when the calling thread gets to it first, else as [`Turn::Done`] with
/// what `ahead` made of it on some thread. Workers hold results of at most `budget` input bytes
/// ahead ([`AHEAD_BYTES`] where results are as large as their input). Each thread has a state
/// made by `init` (warm caches, reused buffers), given to `ahead` on that thread; the calling
/// thread's is given to `take` too, and returned at the end. The first error from `take` stops
/// the batch (jobs under way finish, no new one starts) and is returned.
pub fn in_order<T, R, S, E>(
    jobs: Vec<Job<T>>,
    threads: usize,
    budget: u64,
    init: impl Fn() -> S + Sync,
    ahead: impl Fn(T, &mut S) -> R + Sync,
    mut take: impl FnMut(Turn<'_, T, R>, &mut S) -> Result<(), E>,
) -> Result<S, E>
where
    T: Send,
    R: Send,
{
    let worth: u64 = jobs.iter().filter(|j| j.ahead).map(|j| j.bytes).sum();
    let ahead_jobs = jobs.iter().filter(|j| j.ahead).count();
    let workers = if worth < PARALLEL_MIN_BYTES || ahead_jobs < 2 {
        0
    } else {
        threads.saturating_sub(1).min(ahead_jobs - 1)
    };
    let mut mine = init();
    if workers == 0 {
        for j in jobs {
            take(Turn::Own(j.item), &mut mine)?;
        }
        return Ok(mine);
    }
    let n = jobs.len();
    let mut bytes = Vec::with_capacity(n);
    let mut can = Vec::with_capacity(n);
    let mut items = Vec::with_capacity(n);
    for j in jobs {
        bytes.push(j.bytes);
        can.push(j.ahead);
        items.push(Some(j.item));
    }
    let shared = Shared {
        bytes,
        ahead: can,
        budget,
        main_budget: budget.saturating_mul(MAIN_AHEAD_FACTOR),
        spent: (0..workers).map(|_| Mutex::new(Vec::new())).collect(),
        state: Mutex::new(State {
            items,
            done: (0..n).map(|_| None).collect(),
            next: 0,
            held: 0,
            stop: false,
            main_waits_for: None,
            workers_waiting: 0,
            lost: false,
        }),
        for_main: Condvar::new(),
        for_workers: Condvar::new(),
    };
    let (shared, init, ahead) = (&shared, &init, &ahead);
    thread::scope(|scope| {
        for w in 0..workers {
            scope.spawn(move || {
                let _guard = PanicGuard(shared);
                let mut s = init();
                let mut spent = Vec::new();
                let mut st = shared.lock();
                loop {
                    if st.stop || st.next >= n {
                        return;
                    }
                    let Some((i, item)) = shared.claim_ahead(&mut st, shared.budget) else {
                        st.workers_waiting += 1;
                        st = shared
                            .for_workers
                            .wait(st)
                            .unwrap_or_else(PoisonError::into_inner);
                        st.workers_waiting -= 1;
                        continue;
                    };
                    drop(st);
                    spent.append(
                        &mut shared.spent[w]
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner),
                    );
                    spent.clear();
                    let r = ahead(item, &mut s);
                    st = shared.lock();
                    st.done[i] = Some((r, Some(w)));
                    if st.main_waits_for == Some(i) {
                        shared.for_main.notify_one();
                    }
                }
            });
        }
        let leaving = StopOnLeave(shared);
        let result = run_calling_thread(shared, n, &mut mine, ahead, &mut take);
        drop(leaving);
        result.map(|()| mine)
    })
}

/// The calling thread's part of [`in_order`]: take jobs in order, doing them in turn when
/// unclaimed and helping ahead while waiting.
fn run_calling_thread<T, R, S, E>(
    shared: &Shared<T, R>,
    n: usize,
    mine: &mut S,
    ahead: &(impl Fn(T, &mut S) -> R + Sync),
    take: &mut impl FnMut(Turn<'_, T, R>, &mut S) -> Result<(), E>,
) -> Result<(), E> {
    for pos in 0..n {
        #[cfg(debug_assertions)]
        seam::caller_reaches(shared, pos);
        let mut st = shared.lock();
        let turn = loop {
            if st.next == pos {
                // Unclaimed: do it in turn.
                st.next += 1;
                let item = st.items[pos].take().expect("each job is claimed once");
                shared.wake_workers(&st);
                break Turn::Own(item);
            }
            if let Some((r, by)) = st.done[pos].take() {
                st.held -= shared.bytes[pos];
                shared.wake_workers(&st);
                break Turn::Done(Held {
                    value: Some(r),
                    home: by.map(|w| &shared.spent[w]),
                });
            }
            // A worker is on it: help ahead meanwhile, or wait.
            if let Some((i, item)) = shared.claim_ahead(&mut st, shared.main_budget) {
                drop(st);
                let r = ahead(item, mine);
                st = shared.lock();
                st.done[i] = Some((r, None));
                continue;
            }
            // The scope re-raises the worker's panic once this thread is out.
            assert!(!st.lost, "a batch worker thread panicked");
            st.main_waits_for = Some(pos);
            st = shared
                .for_main
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
            st.main_waits_for = None;
        };
        drop(st);
        take(turn, mine)?;
    }
    Ok(())
}

#[cfg(debug_assertions)]
mod seam;

#[cfg(test)]
mod tests;
