//! Changing the process's environment — its variables, and its allocator's
//! settings — which only the owner of a process may do, at boot. The one
//! module of the SDK with `unsafe` code: the platform gives no safe way.
//!
//! The tests named `miri_` run that code under Miri where Miri can (the
//! walk of `environ`, the wipe, a removal), with a nightly toolchain:
//!
//! ```text
//! MIRIFLAGS="-Zmiri-env-forward=PATH -Zmiri-isolation-error=warn-nobacktrace" \
//!   cargo +nightly miri test -p kindgi --lib --no-default-features -- process_env::tests::miri_
//! ```
//!
//! `mallopt` and `malloc_trim` are calls into C, which Miri can't run.

/// Removes `names` from the process environment, and on Linux also wipes
/// their `NAME=value` bytes in the process's initial environment block
/// (where the kernel put the environment at exec), so that the values no
/// longer show in `/proc/self/environ` or in a core dump.
///
/// Only the initial block is written: a string that libc allocated (for a
/// variable set by `setenv` since) may be freed by `unsetenv` — musl does —
/// so writing it afterwards could be a use after free. Such a copy isn't
/// what `/proc/self/environ` shows.
///
/// Call it only while the process has one thread: before the async runtime
/// and the log writer start. `serve` does, from `main`, after
/// [`threads_problem`] found no other thread.
pub(crate) fn remove_vars<'a>(names: impl IntoIterator<Item = &'a str>) {
    #[cfg(unix)]
    let block = environ::initial_block();
    for name in names {
        #[cfg(unix)]
        let found = environ::find(name).filter(|entry| block.is_some_and(|b| entry.is_within(b)));
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

/// Makes glibc's malloc give large blocks back to the system when they are
/// freed: its threshold for serving a block from `mmap` (which `free`
/// unmaps) is otherwise raised to the size of every large block freed, up
/// to 32 MiB, after which 10 MiB bodies come from its per-thread arenas and
/// stay there — about twice the bodies' bytes resident under load, which no
/// budget of reservations sees. From 1 MiB on, a block is `mmap`ed. No
/// effect with another allocator (a pack's `#[global_allocator]`,
/// mimalloc), or off glibc. `<pack> serve` calls it at boot.
///
/// It also keeps as many malloc arenas as the async runtime has workers
/// (`arenas`, at least 1): glibc's default, eight per core, lets each
/// thread keep what it freed in an arena of its own, which a call on
/// another thread can't reuse — a burst of object-heavy calls then peaks
/// at nearly three times the memory it does with one arena per worker.
#[allow(unsafe_code)]
pub(crate) fn return_large_blocks(arenas: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` takes two integers and changes only malloc's own
    // parameters; it is thread-safe, and `serve` calls it at boot anyway.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        libc::mallopt(
            libc::M_ARENA_MAX,
            i32::try_from(arenas.max(1)).unwrap_or(i32::MAX),
        );
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = arenas;
}

/// Whether [`give_back_free_memory`] can do anything here: on glibc.
pub(crate) const CAN_GIVE_BACK_MEMORY: bool = cfg!(all(target_os = "linux", target_env = "gnu"));

/// Gives the memory glibc's malloc holds free back to the system: after a
/// burst of large calls, its arenas keep what the calls freed (hundreds of
/// MiB after a burst of object-heavy bodies) until it is trimmed. Takes a
/// few milliseconds with much to give back: call it off the async
/// workers, when the service is idle. No effect with another allocator or
/// off glibc.
#[allow(unsafe_code)]
pub(crate) fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes an integer (how much to keep at the top
    // of the heap) and only returns free pages of malloc's own arenas to
    // the system; it takes each arena's lock, so it is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
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
    pub(super) struct Entry(pub(super) *mut c_char, pub(super) usize);

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

    /// The addresses `[start, end)` of the process's initial environment
    /// block: the strings the kernel placed at exec (on the initial stack),
    /// which `/proc/self/environ` shows and libc never frees. Linux's
    /// `/proc/self/stat` has them (fields 50 and 51, `env_start` and
    /// `env_end`); `None` elsewhere, or when they can't be read.
    pub(super) fn initial_block() -> Option<(usize, usize)> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The command name, in parentheses, may hold spaces: fields are
        // counted after its closing one, which is followed by field 3.
        let (_, rest) = stat.rsplit_once(')')?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let start: usize = fields.get(50 - 3)?.parse().ok()?;
        let end: usize = fields.get(51 - 3)?.parse().ok()?;
        (start < end).then_some((start, end))
    }

    impl Entry {
        /// Whether the whole string, its NUL included, lies in `block`.
        pub(super) fn is_within(&self, (start, end): (usize, usize)) -> bool {
            let at = self.0 as usize;
            at >= start && at.checked_add(self.1 + 1).is_some_and(|past| past <= end)
        }
    }

    /// Overwrites an entry's bytes with NULs once libc no longer lists it.
    /// The entry must lie in the initial block ([`Entry::is_within`]).
    pub(super) fn wipe(entry: Entry) {
        // SAFETY: the entry came from `environ` a moment ago in this same
        // single thread, and `remove_vars` wipes it only when its bytes lie
        // in the initial environment block (checked with `is_within`
        // against `/proc/self/stat`): memory the kernel mapped at exec,
        // which libc's unsetenv only unlinks from the array and never frees
        // (glibc and musl free only strings their own setenv allocated), so
        // its `len` bytes are still ours to write, and nothing reads them
        // any more.
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

    /// Removing variables wipes the bytes of the process's initial
    /// environment block (what `/proc/self/environ` shows), and never
    /// writes a string libc allocated: musl frees those on `unsetenv`.
    /// Run in a process of its own, where no other test's thread reads the
    /// environment while it changes.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    #[allow(unsafe_code)]
    fn removing_wipes_the_initial_block_and_never_a_string_libc_allocated() {
        const CHILD: &str = "KINDGI_TEST_ENV_WIPE_CHILD";
        const NAME: &str = "service::process_env::tests::removing_wipes_the_initial_block_and_never_a_string_libc_allocated";
        if std::env::var_os(CHILD).is_none() {
            let exe = std::env::current_exe().expect("the test binary");
            let out = std::process::Command::new(exe)
                .args(["--exact", NAME, "--test-threads=1"])
                .env(CHILD, "1")
                .env("KINDGI_TEST_WIPE_INITIAL", "initial-block-secret")
                .output()
                .expect("run the test in a process of its own");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("1 passed"),
                "{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        // SAFETY: this process runs this one test; no other thread reads or
        // writes the environment meanwhile.
        unsafe { std::env::set_var("KINDGI_TEST_WIPE_COPY", "setenv-copy") };
        let copy = environ::find("KINDGI_TEST_WIPE_COPY").expect("the variable just set");
        let (at, len) = (copy.0.cast::<u8>().cast_const(), copy.1);
        remove_vars(["KINDGI_TEST_WIPE_INITIAL", "KINDGI_TEST_WIPE_COPY"]);
        assert!(std::env::var_os("KINDGI_TEST_WIPE_INITIAL").is_none());
        assert!(std::env::var_os("KINDGI_TEST_WIPE_COPY").is_none());
        // SAFETY: glibc never frees a string its setenv made (it keeps them
        // for reuse), so after unsetenv these `len` bytes are still
        // allocated and readable; this test runs on glibc only.
        let after = unsafe { std::slice::from_raw_parts(at, len) };
        assert_eq!(
            after, b"KINDGI_TEST_WIPE_COPY=setenv-copy",
            "the wipe wrote a string libc allocated"
        );
        let shown = std::fs::read("/proc/self/environ").expect("/proc/self/environ");
        assert!(
            !shown
                .windows(b"initial-block-secret".len())
                .any(|w| w == b"initial-block-secret"),
            "the initial block still shows the value"
        );
    }

    /// The module's `unsafe` that Miri can run (the command is in the
    /// module's doc): `environ` walked to a variable's `NAME=value` bytes,
    /// and a wipe that writes those bytes and nothing past them. (The wipe
    /// of the initial block itself needs `/proc`, which Miri doesn't show.)
    #[cfg(unix)]
    #[test]
    fn miri_finds_an_entry_and_wipes_only_its_bytes() {
        // Any variable the process has (Miri shows the ones it forwards).
        let some = std::env::vars_os()
            .find_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)));
        if let Some((name, value)) = some {
            let entry = environ::find(&name).expect("a variable std lists");
            assert_eq!(entry.1, name.len() + 1 + value.len());
        }
        assert!(environ::find("KINDGI_TEST_NO_SUCH_VARIABLE").is_none());

        let mut bytes = *b"NAME=value\0after";
        let entry = environ::Entry(bytes.as_mut_ptr().cast(), "NAME=value".len());
        let start = bytes.as_ptr() as usize;
        assert!(entry.is_within((start, start + bytes.len())));
        assert!(!entry.is_within((start, start + "NAME=value".len())));
        environ::wipe(entry);
        assert_eq!(&bytes, b"\0\0\0\0\0\0\0\0\0\0\0after");
    }

    /// `remove_vars` of a variable the process doesn't have: the removal
    /// runs (under Miri too), and changes nothing.
    #[test]
    fn miri_removing_an_absent_variable_changes_nothing() {
        let before = names();
        remove_vars(["KINDGI_TEST_NO_SUCH_VARIABLE"]);
        assert_eq!(names(), before);
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
