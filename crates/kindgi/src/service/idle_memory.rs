//! Memory given back after a burst: once calls have come and the service
//! has then been idle for a moment, the memory the allocator holds free is
//! returned to the system ([`process_env::give_back_free_memory`]), once
//! per idle spell.
//!
//! glibc's malloc keeps what a burst of large calls freed in its arenas;
//! without this a service that served one burst stays hundreds of MiB
//! larger for good. A look every [`LOOK_EVERY`] costs nothing measurable;
//! the trim itself runs on the blocking pool.

use std::sync::Arc;
use std::time::Duration;

use super::process_env;
use super::state::ServiceState;

/// How often the service looks whether it has gone idle, and how long it
/// must have been idle (no call started, none in flight) before memory is
/// given back.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Gives memory back whenever calls have come and gone and none started
/// for [`LOOK_EVERY`]; runs until dropped. `None` where there is nothing to
/// give back this way (not glibc).
pub(crate) fn watch(state: Arc<ServiceState>) -> Option<tokio::task::JoinHandle<()>> {
    process_env::CAN_GIVE_BACK_MEMORY.then(|| tokio::spawn(give_back_when_idle(state)))
}

async fn give_back_when_idle(state: Arc<ServiceState>) {
    let drain = &state.drain;
    let mut seen = drain.calls().0;
    let mut given_back_at = seen;
    loop {
        tokio::time::sleep(LOOK_EVERY).await;
        let (entered, in_flight) = drain.calls();
        if should_give_back(entered, in_flight, seen, given_back_at) {
            given_back_at = entered;
            let _ = tokio::task::spawn_blocking(process_env::give_back_free_memory).await;
        }
        seen = entered;
    }
}

/// Whether to give memory back now: calls came since the last time
/// (`given_back_at`), none is in flight, and none started since the last
/// look (`seen`).
fn should_give_back(entered: u64, in_flight: usize, seen: u64, given_back_at: u64) -> bool {
    in_flight == 0 && entered == seen && entered != given_back_at
}

#[cfg(test)]
mod tests {
    use super::should_give_back;

    #[test]
    fn memory_is_given_back_once_per_idle_spell_after_calls() {
        // No call since the last time: nothing to give back.
        assert!(!should_give_back(5, 0, 5, 5));
        // Calls came, and the service has been idle since the last look.
        assert!(should_give_back(9, 0, 9, 5));
        // A call is in flight, or one started since the last look.
        assert!(!should_give_back(9, 1, 9, 5));
        assert!(!should_give_back(10, 0, 9, 5));
    }
}
