//! Where a call's CPU-bound work runs, decided once per call from its
//! body's size: in place on the async worker, or in place all the same but
//! with the worker's other tasks handed to another thread meanwhile, so
//! that parsing and checking megabytes holds up no other call.

/// Bodies from this size on are decoded, checked and evaluated with the
/// worker's other tasks handed on.
pub(crate) const LARGE_BODY_BYTES: usize = 256 * 1024;

/// Where a call's CPU-bound work (decoding, default filling, validation,
/// a check's `evaluate`) runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the async worker that serves the connection, as any other code:
    /// a small call, whose work is over in microseconds.
    InPlace,
    /// On this thread, which stops being an async worker for the while
    /// (`tokio::task::block_in_place`): a large call, whose work takes
    /// milliseconds. What it allocates is freed on the thread that
    /// allocated it, where the call goes on.
    OffWorker,
}

impl Placement {
    /// The placement of a call whose body is `body_len` bytes long. On a
    /// runtime of one thread every call runs in place: there is no other
    /// worker to hand tasks to.
    pub(crate) fn for_body(body_len: usize) -> Self {
        if body_len >= LARGE_BODY_BYTES && multi_thread() {
            Placement::OffWorker
        } else {
            Placement::InPlace
        }
    }

    /// Runs `work` where this placement says and returns what it gave.
    pub(crate) fn run<R>(self, work: impl FnOnce() -> R) -> R {
        match self {
            Placement::InPlace => work(),
            Placement::OffWorker => tokio::task::block_in_place(work),
        }
    }
}

/// Whether this thread runs on a multi-thread tokio runtime.
fn multi_thread() -> bool {
    use tokio::runtime::{Handle, RuntimeFlavor};
    Handle::try_current()
        .is_ok_and(|runtime| runtime.runtime_flavor() == RuntimeFlavor::MultiThread)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn large_work_hands_the_worker_s_other_tasks_on() {
        assert_eq!(
            Placement::for_body(LARGE_BODY_BYTES - 1),
            Placement::InPlace
        );
        let placement = Placement::for_body(LARGE_BODY_BYTES);
        assert_eq!(placement, Placement::OffWorker);
        // The one worker's other task runs while the work blocks.
        let (ran, done) = std::sync::mpsc::channel();
        tokio::spawn(async move {
            let _ = ran.send(());
        });
        let other_ran = placement.run(|| done.recv_timeout(Duration::from_secs(10)).is_ok());
        assert!(other_ran, "the other task ran meanwhile");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn one_thread_runs_everything_in_place() {
        assert_eq!(Placement::for_body(10 << 20), Placement::InPlace);
        assert_eq!(Placement::InPlace.run(|| 7), 7);
    }
}
