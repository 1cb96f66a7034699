//! Changing the process environment, which is only sound before threads.

/// Removes `names` from the process environment.
///
/// Call it only while the process has one thread: before the async runtime
/// and the log writer start. `serve` does, from `main`.
#[allow(unsafe_code)]
pub(crate) fn remove_vars<'a>(names: impl IntoIterator<Item = &'a str>) {
    for name in names {
        // SAFETY: `serve` calls this from the main thread before it starts
        // the log writer or the async runtime, so no other thread can be
        // reading or writing the environment at the same time. A pack's
        // `main` must not start threads before handing over to `Pack::run`
        // (documented on `Pack`).
        unsafe { std::env::remove_var(name) };
    }
}

/// Every variable name in the process environment.
pub(crate) fn names() -> Vec<String> {
    std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect()
}
