//! How the long-running commands (`kindgi runtime`, `kindgi dev`) learn
//! that they should stop.

/// Resolves on Ctrl-C or SIGTERM (Ctrl-C alone where SIGTERM can't be
/// watched).
pub(crate) async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
