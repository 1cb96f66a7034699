//! Where a call's CPU-bound work runs, decided once per call from its
//! body's size: in place on the async worker, or on tokio's blocking pool
//! so that parsing and checking megabytes holds up no other call.

/// Bodies from this size on are decoded, checked and evaluated off the
/// async worker.
pub(crate) const LARGE_BODY_BYTES: usize = 256 * 1024;

/// Where a call's CPU-bound work (decoding, default filling, validation,
/// a check's `evaluate`) runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the async worker that serves the connection: a small call, where
    /// handing work over would cost more than it saves.
    InPlace,
    /// On tokio's blocking pool: a large call, whose work takes tens of
    /// milliseconds.
    OffWorker,
}

impl Placement {
    /// The placement of a call whose body is `body_len` bytes long. On a
    /// runtime of one thread every call runs in place: there is no other
    /// worker to keep free, and the blocking pool would only add a hop.
    pub(crate) fn for_body(body_len: usize) -> Self {
        if body_len >= LARGE_BODY_BYTES && multi_thread() {
            Placement::OffWorker
        } else {
            Placement::InPlace
        }
    }

    /// Runs `work` where this placement says and returns what it gave. A
    /// panic in `work` goes on in the caller.
    pub(crate) async fn run<R: Send + 'static>(
        self,
        work: impl FnOnce() -> R + Send + 'static,
    ) -> R {
        match self {
            Placement::InPlace => work(),
            Placement::OffWorker => {
                // A test's process env for this call goes along to the thread.
                let env = crate::env::overrides();
                let job = tokio::task::spawn_blocking(move || crate::env::in_thread(env, work));
                match job.await {
                    Ok(value) => value,
                    Err(error) => match error.try_into_panic() {
                        Ok(payload) => std::panic::resume_unwind(payload),
                        // Cancelled: only when the runtime shuts down under
                        // a call.
                        Err(_) => std::panic::panic_any("the runtime shut down under a call"),
                    },
                }
            }
        }
    }
}

impl Placement {
    /// [`Placement::run`] for work on `data`, which is cloned only when the
    /// work leaves this thread.
    pub(crate) async fn run_on<D, R>(
        self,
        data: &D,
        work: impl FnOnce(&D) -> R + Send + 'static,
    ) -> R
    where
        D: Clone + Send + 'static,
        R: Send + 'static,
    {
        match self {
            Placement::InPlace => work(data),
            Placement::OffWorker => {
                let data = data.clone();
                self.run(move || work(&data)).await
            }
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
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_large_body_runs_off_the_worker() {
        assert_eq!(
            Placement::for_body(LARGE_BODY_BYTES - 1),
            Placement::InPlace
        );
        let placement = Placement::for_body(LARGE_BODY_BYTES);
        assert_eq!(placement, Placement::OffWorker);
        let worker = std::thread::current().id();
        let ran_on = placement.run(|| std::thread::current().id()).await;
        assert_ne!(ran_on, worker);
        let ran_on = Placement::InPlace.run(|| std::thread::current().id()).await;
        assert_eq!(ran_on, worker);
        let ran_on = placement
            .run_on(&7, |n| (*n, std::thread::current().id()))
            .await;
        assert_eq!(ran_on.0, 7);
        assert_ne!(ran_on.1, worker);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn one_thread_runs_everything_in_place() {
        assert_eq!(Placement::for_body(10 << 20), Placement::InPlace);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_panic_off_the_worker_goes_on_in_the_caller() {
        let caught = tokio::spawn(Placement::OffWorker.run(|| panic!("in the work")))
            .await
            .expect_err("the panic goes on");
        assert!(caught.is_panic());
    }
}
