//! Threads for the CPU-bound work of large calls (see
//! [`super::invoke::off_worker`]): one lane a core, each a thread of its
//! own, started when first needed. A job goes to the first free lane, so
//! one large call after another works on the same thread, and that
//! thread's allocator pages serve them all: spread over many threads, each
//! would keep a call's worth of freed pages. When every lane is busy, the
//! job goes to tokio's blocking pool.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use tokio::sync::oneshot;

/// A job, as a lane runs it: it frees the flag it is given once its work
/// is done, before it answers.
type Job = Box<dyn FnOnce(&AtomicBool) + Send>;

/// One thread and whether it is at work.
struct Lane {
    busy: AtomicBool,
    jobs: OnceLock<Option<mpsc::Sender<Job>>>,
}

impl Lane {
    /// The lane's queue, its thread started on first use; `None` when the
    /// thread can't be started.
    fn jobs(&'static self, number: usize) -> Option<&'static mpsc::Sender<Job>> {
        self.jobs
            .get_or_init(|| {
                let (send, receive) = mpsc::channel::<Job>();
                std::thread::Builder::new()
                    .name(format!("kindgi-large-{number}"))
                    .spawn(move || {
                        while let Ok(job) = receive.recv() {
                            job(&self.busy);
                        }
                    })
                    .ok()
                    .map(|_| send)
            })
            .as_ref()
    }
}

/// The lanes, one a core.
fn lanes() -> &'static [Lane] {
    static LANES: OnceLock<Vec<Lane>> = OnceLock::new();
    LANES.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (0..cores)
            .map(|_| Lane {
                busy: AtomicBool::new(false),
                jobs: OnceLock::new(),
            })
            .collect()
    })
}

/// Runs `work` on the first free lane (or tokio's blocking pool) and
/// waits for it; a panic in `work` goes on here.
pub(crate) async fn run<R: Send + 'static>(work: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, result) = oneshot::channel();
    let mut job: Job = Box::new(move |busy: &AtomicBool| {
        let outcome = catch_unwind(AssertUnwindSafe(work));
        // Free before the answer goes out, so that the caller's next job
        // finds this lane free.
        busy.store(false, Ordering::Release);
        // The caller may have gone (its call ended): then nothing waits.
        let _ = done.send(outcome);
    });
    for (number, lane) in lanes().iter().enumerate() {
        if lane
            .busy
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            continue;
        }
        let Some(jobs) = lane.jobs(number) else {
            lane.busy.store(false, Ordering::Release);
            continue;
        };
        match jobs.send(job) {
            Ok(()) => return answer(result).await,
            Err(returned) => {
                // The lane's thread is gone: try the next.
                lane.busy.store(false, Ordering::Release);
                job = returned.0;
            }
        }
    }
    // Every lane at work.
    tokio::task::spawn_blocking(move || job(&AtomicBool::new(false)));
    answer(result).await
}

/// What a job gave, or its panic, resumed here.
async fn answer<R>(result: oneshot::Receiver<std::thread::Result<R>>) -> R {
    match result.await {
        Ok(Ok(value)) => value,
        Ok(Err(payload)) => resume_unwind(payload),
        // Dropped unrun: only when the runtime shuts down under a call.
        Err(_) => std::panic::panic_any("the runtime shut down under a call"),
    }
}
