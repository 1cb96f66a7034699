//! The pack's process environment, as its code reads it.
//!
//! [`var`] reads like `std::env::var`, and a test can give a pack its own
//! values for one call or one block of code
//! ([`TestContext::process_env`](crate::testing::TestContext::process_env),
//! [`testing::with_process_env`](crate::testing::with_process_env))
//! without `std::env::set_var`, which changes the environment of every
//! test running at the same time and is unsound beside other threads.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// Values that stand in for the process environment's, in one scope.
pub(crate) type Vars = Arc<HashMap<String, String>>;

tokio::task_local! {
    static TASK_VARS: Vars;
}

thread_local! {
    static THREAD_VARS: RefCell<Option<Vars>> = const { RefCell::new(None) };
}

/// The value of the process environment variable `name`: a test's own
/// value when one is in scope, else the process's (`None` when unset or
/// not Unicode).
///
/// ```
/// // The pack's declared env (`[package.metadata.kindgi.env]`).
/// let database = kindgi::env::var("DATABASE_URL").unwrap_or_else(|| "desk.db".to_owned());
/// # let _ = database;
/// ```
pub fn var(name: &str) -> Option<String> {
    match overrides() {
        Some(vars) => vars.get(name).cloned().or_else(|| process_var(name)),
        None => process_var(name),
    }
}

fn process_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The values in scope here, if any.
pub(crate) fn overrides() -> Option<Vars> {
    TASK_VARS
        .try_with(Arc::clone)
        .ok()
        .or_else(|| THREAD_VARS.with(|vars| vars.borrow().clone()))
}

/// Runs `future` with `vars` in scope.
pub(crate) fn in_task<F: Future>(vars: Vars, future: F) -> impl Future<Output = F::Output> {
    TASK_VARS.scope(vars, future)
}

/// Runs `work` with `vars` in scope on this thread (`None`: as it is).
pub(crate) fn in_thread<R>(vars: Option<Vars>, work: impl FnOnce() -> R) -> R {
    let Some(vars) = vars else {
        return work();
    };
    let before = THREAD_VARS.with(|current| current.borrow_mut().replace(vars));
    // Put back also when `work` panics.
    struct Restore(Option<Vars>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            THREAD_VARS.with(|current| *current.borrow_mut() = before);
        }
    }
    let _restore = Restore(before);
    work()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_stands_in_for_the_process_and_ends() {
        let vars: Vars = Arc::new(HashMap::from([(
            "PACK_TEST_ONLY_VAR".to_owned(),
            "inside".to_owned(),
        )]));
        assert_eq!(var("PACK_TEST_ONLY_VAR"), None);
        let seen = in_thread(Some(vars), || var("PACK_TEST_ONLY_VAR"));
        assert_eq!(seen.as_deref(), Some("inside"));
        assert_eq!(var("PACK_TEST_ONLY_VAR"), None);
        assert_eq!(var("PATH"), std::env::var("PATH").ok());
    }
}
