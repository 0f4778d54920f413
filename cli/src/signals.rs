//! SIGINT, SIGTERM and SIGHUP end a command without leaving its hidden temporary files beside
//! `--out` (`.rectcast-XXXXXX`, which a whole job's output may fill for minutes): a thread
//! waits for the signal, removes the files registered here, then ends the process as the
//! signal's default action would (so the shell still sees 130 for Ctrl-C, 143 for SIGTERM).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary files to remove if a signal ends the process.
static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Starts the thread that answers the signals. Called once, at the start of `main`.
#[cfg(unix)]
pub fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return; // No handler: the default action, as before, temporary files included.
    };
    let spawned = std::thread::Builder::new()
        .name("rectcast-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                remove_all();
                // The default action (the process ends by the signal); should it return, the
                // shell's convention.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    drop(spawned);
}

#[cfg(not(unix))]
pub fn install() {}

fn remove_all() {
    let paths = TEMPORARY.lock().unwrap_or_else(|p| p.into_inner());
    for path in paths.iter() {
        let _ = std::fs::remove_file(path);
    }
}

/// Removes `path` if a signal ends the process before [`forget`].
pub fn remove_on_signal(path: &Path) {
    TEMPORARY
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(path.to_owned());
}

/// `path` was moved into place or removed: a signal leaves it alone now.
pub fn forget(path: &Path) {
    TEMPORARY
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|p| p != path);
}
