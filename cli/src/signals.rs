//! A signal that ends the process ends a command without leaving its hidden temporary files
//! beside `--out` (`.rectcast-XXXXXX`, which a whole job's output may fill for minutes): every
//! signal whose default action is to end the process ([`ENDING`]: INT, TERM, HUP, QUIT, USR1,
//! USR2, PIPE, ALRM, XCPU, XFSZ, VTALRM, PROF, IO, SYS, the real-time ones…) has a handler that
//! unlinks the files registered here, then ends the process as the default action would (the
//! shell still sees 130 for Ctrl-C, 143 for SIGTERM, 141 for a closed pipe).
//!
//! The handler runs in the signal's own context, before the interrupted call returns (a write
//! past `ulimit -f` raises SIGXFSZ, a write to a closed pipe SIGPIPE, and the process ends then,
//! as it did with the default action). So it does only what is async-signal-safe: the paths
//! wait as C strings in a fixed table of atomic slots, and it calls `unlink`, `signal`,
//! `sigprocmask` and `raise`.
//!
//! What can still leave a temporary file: SIGKILL (it cannot be caught), and the signals of a
//! crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP), left to their defaults.

use std::path::Path;

/// The signals handled: each one whose default action ends the process, but SIGKILL and a
/// crash's.
#[cfg(unix)]
fn ending() -> Vec<libc::c_int> {
    let mut signals = vec![
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGPIPE,
        libc::SIGALRM,
        libc::SIGTERM,
        libc::SIGXCPU,
        libc::SIGXFSZ,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGSYS,
    ];
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        signals.extend([libc::SIGSTKFLT, libc::SIGIO, libc::SIGPWR]);
        signals.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    }
    signals
}

/// The most temporary files registered at once (a command has one or two).
#[cfg(unix)]
const SLOTS: usize = 64;

/// The registered paths, NUL-terminated, each leaked when registered (a handler may be reading
/// it whenever it is forgotten, so it is never freed: a command registers a few).
#[cfg(unix)]
static TEMPORARY: [std::sync::atomic::AtomicPtr<libc::c_char>; SLOTS] =
    [const { std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// Installs the handlers. Called once, at the start of `main`. A signal the process was
/// started ignoring stays ignored (`nohup` ignores SIGHUP, a shell's background job SIGINT).
#[cfg(unix)]
pub fn install() {
    for signal in ending() {
        // SAFETY: a query (no new action) into a zeroed sigaction of this process.
        let ignored = unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut current) == 0
                && current.sa_sigaction == libc::SIG_IGN
        };
        if ignored {
            continue;
        }
        // SAFETY: `end` calls only async-signal-safe functions and reads atomics.
        let _ = unsafe { signal_hook::low_level::register(signal, move || end(signal)) };
    }
}

#[cfg(not(unix))]
pub fn install() {}

/// In the handler of `signal`: the registered files unlinked, then the default action.
#[cfg(unix)]
fn end(signal: libc::c_int) {
    use std::sync::atomic::Ordering;
    for slot in &TEMPORARY {
        let path = slot.load(Ordering::SeqCst);
        if !path.is_null() {
            // SAFETY: a NUL-terminated string that is never freed.
            unsafe {
                libc::unlink(path);
            }
        }
    }
    // SAFETY: each is async-signal-safe; the signal, blocked while its handler runs, is
    // unblocked so that raising it with its default action ends the process now.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
        libc::_exit(128 + signal);
    }
}

/// Removes `path` if a signal ends the process before [`forget`].
#[cfg(unix)]
pub fn remove_on_signal(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    use std::sync::atomic::Ordering;
    let Ok(text) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    let text = text.into_raw();
    for slot in &TEMPORARY {
        let free = slot.compare_exchange(
            std::ptr::null_mut(),
            text,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        if free.is_ok() {
            return;
        }
    }
    // More than SLOTS at once: this one is not removed by a signal.
    // SAFETY: from `into_raw` above, never shared.
    drop(unsafe { std::ffi::CString::from_raw(text) });
}

/// `path` was moved into place or removed: a signal leaves it alone now.
#[cfg(unix)]
pub fn forget(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    use std::sync::atomic::Ordering;
    for slot in &TEMPORARY {
        let text = slot.load(Ordering::SeqCst);
        // SAFETY: a registered string, never freed.
        if !text.is_null()
            && unsafe { std::ffi::CStr::from_ptr(text) }.to_bytes() == path.as_os_str().as_bytes()
        {
            let _ = slot.compare_exchange(
                text,
                std::ptr::null_mut(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
            return;
        }
    }
}

#[cfg(not(unix))]
pub fn remove_on_signal(_path: &Path) {}

#[cfg(not(unix))]
pub fn forget(_path: &Path) {}
