//! What the tests share.

use std::path::Path;

use tokio::sync::{Mutex, MutexGuard};

use kindgi_reliability::{PackService, ServiceOptions, bins};

static HEAVY: Mutex<()> = Mutex::const_new(());

/// Held by a test that loads the machine, so that such tests run one at a
/// time and their timings mean something on two cores.
pub(crate) async fn heavy() -> MutexGuard<'static, ()> {
    HEAVY.lock().await
}

/// The stress pack's binary, built for these tests.
pub(crate) fn pack_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_reliability-pack"))
}

/// Starts the stress pack's service.
pub(crate) fn start(options: &ServiceOptions) -> PackService {
    PackService::start(pack_bin(), &bins::stress_pack_dir(), options)
}
