//! Ending the process the way a recorded run ended: with its exit code, or killed by its signal
//! (`replay --as-claude`).

#[cfg(unix)]
use signal_hook::consts::signal as sig;

/// Signal names a capture may hold, with their numbers on this platform.
#[cfg(unix)]
const SIGNALS: &[(&str, i32)] = &[
    ("SIGHUP", sig::SIGHUP),
    ("SIGINT", sig::SIGINT),
    ("SIGQUIT", sig::SIGQUIT),
    ("SIGILL", sig::SIGILL),
    ("SIGTRAP", sig::SIGTRAP),
    ("SIGABRT", sig::SIGABRT),
    ("SIGBUS", sig::SIGBUS),
    ("SIGFPE", sig::SIGFPE),
    ("SIGKILL", sig::SIGKILL),
    ("SIGUSR1", sig::SIGUSR1),
    ("SIGSEGV", sig::SIGSEGV),
    ("SIGUSR2", sig::SIGUSR2),
    ("SIGPIPE", sig::SIGPIPE),
    ("SIGALRM", sig::SIGALRM),
    ("SIGTERM", sig::SIGTERM),
    ("SIGXCPU", sig::SIGXCPU),
    ("SIGXFSZ", sig::SIGXFSZ),
    ("SIGVTALRM", sig::SIGVTALRM),
    ("SIGPROF", sig::SIGPROF),
    ("SIGSYS", sig::SIGSYS),
];

/// Elsewhere: no signals to die by (the exit status is `128 + n` for numbered ones).
#[cfg(not(unix))]
const SIGNALS: &[(&str, i32)] = &[];

/// The number of a signal given as `SIGTERM`, `TERM` or `15`.
pub fn signal_number(name: &str) -> Option<i32> {
    if let Ok(n) = name.parse::<i32>() {
        return (n > 0 && n < 128).then_some(n);
    }
    let up = name.to_ascii_uppercase();
    let full = if up.starts_with("SIG") {
        up
    } else {
        format!("SIG{up}")
    };
    SIGNALS.iter().find(|(n, _)| *n == full).map(|&(_, v)| v)
}

/// Die by signal `n` (its default action, even if it was ignored, like `SIGPIPE` is in Rust
/// programs). Returns the shell's `128 + n` status for the rare signal whose default action
/// does not end the process; exit with it.
pub fn die_by(n: i32) -> crate::exit::Exit {
    #[cfg(unix)]
    let _ = signal_hook::low_level::emulate_default_handler(n);
    crate::exit::Exit::signal(n)
}

/// The exit status of a recorded run that ended as `end` says (`None`: no end record, 0): die
/// by its signal, else its exit code (0 when it has none).
pub fn recorded(end: Option<&crate::capture::End>) -> crate::exit::Exit {
    let Some(end) = end else {
        return crate::exit::Exit::OK;
    };
    if let Some(n) = end.signal.as_deref().and_then(signal_number) {
        return die_by(n);
    }
    end.exit_code.map_or(crate::exit::Exit::OK, |c| {
        crate::exit::Exit::child((c & 0xff) as u8)
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(signal_number("SIGTERM"), Some(sig::SIGTERM));
        assert_eq!(signal_number("kill"), Some(9));
        assert_eq!(signal_number("2"), Some(2));
        assert_eq!(signal_number("SIGNOPE"), None);
        assert_eq!(signal_number("0"), None);
    }
}
