//! Changing the process environment, which is only sound before threads.

/// Removes `names` from the process environment, and on Unix also wipes
/// their `NAME=value` bytes where the process keeps them, so that the
/// values no longer show in `/proc/self/environ` or in a core dump.
///
/// Call it only while the process has one thread: before the async runtime
/// and the log writer start. `serve` does, from `main`.
pub(crate) fn remove_vars<'a>(names: impl IntoIterator<Item = &'a str>) {
    for name in names {
        #[cfg(unix)]
        let found = environ::find(name);
        remove_var(name);
        #[cfg(unix)]
        if let Some(entry) = found {
            environ::wipe(entry);
        }
    }
}

#[allow(unsafe_code)]
fn remove_var(name: &str) {
    // SAFETY: `serve` calls this from the main thread before it starts the
    // log writer or the async runtime, so no other thread can be reading or
    // writing the environment at the same time. A pack's `main` must not
    // start threads before handing over to `Pack::run` (documented on
    // `Pack`).
    unsafe { std::env::remove_var(name) };
}

#[cfg(unix)]
#[allow(unsafe_code)]
mod environ {
    //! The C `environ` array, read to find where a variable's bytes live.

    use std::ffi::{CStr, c_char};

    unsafe extern "C" {
        static environ: *const *mut c_char;
    }

    /// A `NAME=value` string of the environment: where it starts, and its length.
    pub(super) struct Entry(*mut c_char, usize);

    /// The entry of `name`, if the environment has one.
    pub(super) fn find(name: &str) -> Option<Entry> {
        // SAFETY: single-threaded (see `remove_var`); `environ` is a
        // NULL-terminated array of NUL-terminated strings maintained by libc.
        unsafe {
            let mut cursor = environ;
            if cursor.is_null() {
                return None;
            }
            while !(*cursor).is_null() {
                let entry = *cursor;
                let bytes = CStr::from_ptr(entry).to_bytes();
                if bytes.len() > name.len()
                    && bytes.starts_with(name.as_bytes())
                    && bytes[name.len()] == b'='
                {
                    return Some(Entry(entry, bytes.len()));
                }
                cursor = cursor.add(1);
            }
        }
        None
    }

    /// Overwrites an entry's bytes with NULs once libc no longer lists it.
    pub(super) fn wipe(entry: Entry) {
        // SAFETY: the entry came from `environ` a moment ago in this same
        // single thread; libc's unsetenv only unlinks a string from the
        // array and never frees it, so its `len` bytes are still ours to
        // write, and nothing reads them any more.
        unsafe { std::ptr::write_bytes(entry.0, 0, entry.1) };
    }
}

/// Every variable name in the process environment.
pub(crate) fn names() -> Vec<String> {
    std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect()
}

/// How many threads the process runs, where the platform says (Linux's
/// `/proc/self/task`); `None` elsewhere.
pub(crate) fn thread_count() -> Option<usize> {
    std::fs::read_dir("/proc/self/task")
        .ok()
        .map(|tasks| tasks.count())
}

/// Why the process can't safely change its environment now, if it can't:
/// other threads run (an async runtime started by `#[tokio::main]`, say).
pub(crate) fn threads_problem() -> Option<String> {
    let in_runtime = tokio::runtime::Handle::try_current().is_ok();
    let threads = thread_count().unwrap_or(1);
    if !in_runtime && threads <= 1 {
        return None;
    }
    let what = if in_runtime {
        "inside an async runtime (`#[tokio::main]`?)".to_owned()
    } else {
        format!("with {threads} threads running")
    };
    Some(format!(
        "Pack::run was called {what}: `serve` removes variables from the process environment, which is only sound while no other thread runs. Call it from a plain `fn main() -> std::process::ExitCode {{ pack().run() }}`; the pack service starts its own async runtime"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_threads_are_counted_and_named() {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || stopped.recv());
        let count = thread_count().expect("Linux");
        assert!(count >= 2, "{count}");
        let problem = threads_problem().expect("a problem");
        let _ = stop.send(());
        let _ = other.join();
        assert!(
            problem.starts_with("Pack::run was called with ")
                && problem.contains(" threads running: `serve` removes variables"),
            "{problem}"
        );
    }

    #[tokio::test]
    async fn an_async_runtime_is_named() {
        let problem = threads_problem().expect("a problem");
        assert!(
            problem
                .starts_with("Pack::run was called inside an async runtime (`#[tokio::main]`?): "),
            "{problem}"
        );
    }
}
