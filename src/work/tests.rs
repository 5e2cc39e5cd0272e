//! The batch queue's tests: order, memory bound, where results are dropped, and that a panic or
//! an error anywhere in a batch ends it instead of hanging it.

use super::*;

fn jobs(sizes: &[u64], ahead: impl Fn(usize) -> bool) -> Vec<Job<usize>> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &bytes)| Job {
            item: i,
            bytes,
            ahead: ahead(i),
        })
        .collect()
}

/// (the order jobs were taken in, how many were done ahead)
fn run(sizes: &[u64], threads: usize, ahead: impl Fn(usize) -> bool + Sync) -> (Vec<usize>, usize) {
    let mut order = Vec::new();
    let mut done_ahead = 0;
    in_order(
        jobs(sizes, &ahead),
        threads,
        AHEAD_BYTES,
        || (),
        |i, _| {
            assert!(ahead(i), "job {i} may not be done ahead");
            // Uneven work, so that workers finish out of order.
            let mut x = 0u64;
            for k in 0..(sizes[i] / 64) {
                x = x.wrapping_mul(31).wrapping_add(k);
            }
            (i, x)
        },
        |t, _| -> Result<(), ()> {
            order.push(match t {
                Turn::Own(i) => i,
                Turn::Done(held) => {
                    done_ahead += 1;
                    held.0
                }
            });
            Ok(())
        },
    )
    .unwrap();
    (order, done_ahead)
}

#[test]
fn every_job_once_in_input_order_on_any_number_of_threads() {
    let sizes: Vec<u64> = (0..200).map(|i| ((i * 7919) % 97 + 1) * 40_000).collect();
    let all: Vec<usize> = (0..sizes.len()).collect();
    for threads in [1, 2, 3, 8] {
        let (order, _) = run(&sizes, threads, |_| true);
        assert_eq!(order, all, "{threads} threads");
        let (order, _) = run(&sizes, threads, |i| i % 5 != 3);
        assert_eq!(order, all, "{threads} threads, some only in turn");
    }
}

#[test]
fn one_thread_or_a_small_batch_does_everything_in_turn() {
    let big: Vec<u64> = vec![1 << 20; 8];
    assert_eq!(run(&big, 1, |_| true).1, 0);
    let small: Vec<u64> = vec![1000; 50];
    assert_eq!(run(&small, 4, |_| true).1, 0, "under PARALLEL_MIN_BYTES");
    assert_eq!(run(&big, 4, |_| false).1, 0, "nothing may go ahead");
}

#[test]
fn work_goes_ahead_when_it_pays() {
    // The calling thread takes slowly; workers must have done jobs meanwhile.
    let sizes: Vec<u64> = vec![1 << 20; 16];
    let mut ahead = 0;
    in_order(
        jobs(&sizes, |_| true),
        2,
        AHEAD_BYTES,
        || (),
        |i, _| i,
        |t, _| -> Result<(), ()> {
            if let Turn::Done(_) = t {
                ahead += 1;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok(())
        },
    )
    .unwrap();
    assert!(ahead > 0);
}

/// Records, when dropped, which thread made it and which dropped it.
struct Marked<'a>(
    thread::ThreadId,
    &'a Mutex<Vec<(thread::ThreadId, thread::ThreadId)>>,
);

impl Drop for Marked<'_> {
    fn drop(&mut self) {
        self.1
            .lock()
            .unwrap()
            .push((self.0, thread::current().id()));
    }
}

#[test]
fn results_are_dropped_on_the_thread_that_made_them() {
    let sizes: Vec<u64> = vec![1 << 20; 24];
    let drops = Mutex::new(Vec::new());
    let main = thread::current().id();
    in_order(
        jobs(&sizes, |_| true),
        2,
        AHEAD_BYTES,
        || (),
        |_, _| Marked(thread::current().id(), &drops),
        |t, _| -> Result<(), ()> {
            // A slow taker: the worker runs ahead and waits for results to be taken.
            std::thread::sleep(std::time::Duration::from_millis(2));
            drop(t);
            Ok(())
        },
    )
    .unwrap();
    let drops = drops.into_inner().unwrap();
    let by_workers: Vec<_> = drops.iter().filter(|(made, _)| *made != main).collect();
    let at_home = by_workers.iter().filter(|(made, by)| made == by).count();
    assert!(!by_workers.is_empty(), "the worker did some jobs");
    // Only results taken after the worker's last job can be left to the calling thread.
    assert!(
        at_home * 2 >= by_workers.len(),
        "{at_home} of {} worker results dropped on the worker",
        by_workers.len()
    );
}

#[test]
fn a_panicking_worker_is_a_panic_not_a_hang() {
    let r = ends(|| {
        let _ = in_order(
            jobs(&[1 << 20; 32], |_| true),
            2,
            AHEAD_BYTES,
            || (),
            |i, _| {
                if i == 3 {
                    panic!("job three");
                }
                i
            },
            |turn, _| -> Result<(), ()> {
                // Job three panics whoever does it (under load the caller may reach it first).
                assert!(!matches!(turn, Turn::Own(3)), "job three, in turn");
                std::thread::sleep(std::time::Duration::from_millis(1));
                Ok(())
            },
        );
    });
    assert!(r.is_err());
}

/// Runs `batch` on a thread of its own and returns how it ended (`Err`: it panicked, with
/// the panic's message); a batch that has not ended within 30 seconds hung, which fails the
/// test instead of hanging the suite.
fn ends(batch: impl FnOnce() + Send + 'static) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(batch));
        let _ = tx.send(r.map_err(|p| {
            p.downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        }));
    });
    rx.recv_timeout(std::time::Duration::from_secs(30))
        .expect("the batch hung instead of ending")
}

/// Jobs of 1 MiB with a budget of one job: a worker that did one job ahead finds the budget
/// full and parks until the calling thread takes it.
const TIGHT: u64 = 1;

/// Waits (bounded) until `done` counts at least one job done ahead by a worker.
fn until_a_worker_did_one(done: &std::sync::atomic::AtomicUsize) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while done.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < until, "no worker did a job");
        thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn a_panic_in_take_while_workers_are_parked_ends_the_batch() {
    // Job 0 may only be done in turn, so the calling thread does it, and it waits there until
    // a worker has done job 1 ahead and so filled the budget (the worker then parks): the
    // panic comes with a worker parked, on any machine, however loaded.
    let r = ends(|| {
        let done = std::sync::atomic::AtomicUsize::new(0);
        let main = thread::current().id();
        let _ = in_order(
            jobs(&[1 << 20; 8], |i| i != 0),
            2,
            TIGHT,
            || (),
            |i, _| {
                if thread::current().id() != main {
                    done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                i
            },
            |turn, _| -> Result<(), ()> {
                if let Turn::Own(0) = turn {
                    until_a_worker_did_one(&done);
                    panic!("taking job zero");
                }
                Ok(())
            },
        );
    });
    assert_eq!(r, Err("taking job zero".to_owned()));
}

#[test]
fn an_error_from_take_while_workers_are_parked_ends_the_batch() {
    let r = ends(|| {
        let done = std::sync::atomic::AtomicUsize::new(0);
        let main = thread::current().id();
        let r = in_order(
            jobs(&[1 << 20; 8], |i| i != 0),
            2,
            TIGHT,
            || (),
            |i, _| {
                if thread::current().id() != main {
                    done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                i
            },
            |turn, _| {
                if let Turn::Own(0) = turn {
                    until_a_worker_did_one(&done);
                    return Err("zero");
                }
                Ok(())
            },
        );
        assert_eq!(r.err(), Some("zero"));
    });
    assert_eq!(r, Ok(()));
}

#[test]
fn a_panic_in_a_job_the_calling_thread_does_ahead_ends_the_batch() {
    // The worker holds its first job until the calling thread has started one ahead (bounded
    // wait), so the calling thread, finding the job it waits for claimed, helps ahead and
    // panics there while the worker is still at work: when the worker comes back it must
    // find the batch stopped instead of going on to fill the budget and park for good.
    let r = ends(|| {
        let started = std::sync::atomic::AtomicBool::new(false);
        let helping = std::sync::atomic::AtomicBool::new(false);
        let main = thread::current().id();
        let _ = in_order(
            jobs(&[1 << 20; 32], |i| i != 0),
            2,
            AHEAD_BYTES,
            || (),
            |i, _| {
                if thread::current().id() == main {
                    helping.store(true, std::sync::atomic::Ordering::SeqCst);
                    panic!("ahead on the calling thread");
                }
                started.store(true, std::sync::atomic::Ordering::SeqCst);
                let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
                while !helping.load(std::sync::atomic::Ordering::SeqCst)
                    && std::time::Instant::now() < until
                {
                    thread::sleep(std::time::Duration::from_millis(1));
                }
                i
            },
            |turn, _| -> Result<(), ()> {
                if let Turn::Own(0) = turn {
                    // Let the worker claim job 1 before the calling thread comes to it.
                    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
                    while !started.load(std::sync::atomic::Ordering::SeqCst) {
                        assert!(std::time::Instant::now() < until, "no worker started");
                        thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
                Ok(())
            },
        );
    });
    assert_eq!(r, Err("ahead on the calling thread".to_owned()));
}

#[test]
fn busy_cores_are_read_from_loadavg() {
    assert_eq!(busy_elsewhere("0.10 0.20 0.30 1/160 4242\n"), Some(0));
    assert_eq!(busy_elsewhere("3.10 2.20 1.30 3/160 4242\n"), Some(2));
    assert_eq!(busy_elsewhere("garbage"), None);
}

#[test]
fn an_error_stops_the_batch() {
    let sizes: Vec<u64> = vec![1 << 20; 64];
    let mut taken = 0;
    let r = in_order(
        jobs(&sizes, |_| true),
        3,
        AHEAD_BYTES,
        || (),
        |i, _| i,
        |t, _| {
            taken += 1;
            match t {
                Turn::Own(5) => Err("five"),
                Turn::Done(held) if *held == 5 => Err("five"),
                _ => Ok(()),
            }
        },
    );
    assert_eq!(r, Err("five"));
    assert_eq!(taken, 6);
}
