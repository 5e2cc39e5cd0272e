//! A fault injected on purpose, for tests of the whole binary (which run the debug build; release
//! builds have no such seam): with `BOO_NORMALIZE_TEST_PANIC=caller:N` in the environment, the
//! calling thread of a batch that runs workers panics as it comes to job `N`, once every worker
//! is parked on a full budget (or has left, or after a few seconds), which is the case a panic
//! must not turn into a hang.

use super::{PoisonError, Shared};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub(super) const VAR: &str = "BOO_NORMALIZE_TEST_PANIC";

fn at() -> Option<usize> {
    static AT: OnceLock<Option<usize>> = OnceLock::new();
    *AT.get_or_init(|| {
        std::env::var(VAR)
            .ok()?
            .strip_prefix("caller:")?
            .trim()
            .parse()
            .ok()
    })
}

pub(super) fn caller_reaches<T, R>(shared: &Shared<T, R>, pos: usize) {
    if at() != Some(pos) {
        return;
    }
    let workers = shared.spent.len();
    let until = Instant::now() + Duration::from_secs(10);
    let mut st = shared.lock();
    while st.workers_waiting < workers
        && !st.stop
        && st.next < st.items.len()
        && Instant::now() < until
    {
        st = shared
            .for_main
            .wait_timeout(st, Duration::from_millis(20))
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    let parked = st.workers_waiting;
    drop(st);
    panic!("{VAR}: the calling thread panics at job {pos} ({parked} of {workers} workers parked)");
}
