//! Serving the runtime's HTTP API ([`crate::api`]) on a listener: apart
//! from [`crate::runtime`], which the API's handlers use, so that the two
//! don't import each other.

use std::future::Future;

use tokio::net::TcpListener;

use crate::{DevRuntime, RuntimeError};

impl DevRuntime {
    /// Serves the HTTP API on `listener` until `shutdown` resolves, then
    /// finishes the requests in flight. Unless the config names a public
    /// URL, links point at the listener's address; that is set before this
    /// returns its future, so [`DevRuntime::public_url`] is right at once.
    ///
    /// # Errors
    ///
    /// [`RuntimeError::Serve`] when the listener fails.
    pub fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> impl Future<Output = Result<(), RuntimeError>> + Send + 'static {
        let local = listener.local_addr();
        if self.inner.config.public_url.is_none()
            && let Ok(addr) = &local
        {
            let host = if addr.ip().is_unspecified() {
                "127.0.0.1".to_owned()
            } else if addr.is_ipv6() {
                format!("[{}]", addr.ip())
            } else {
                addr.ip().to_string()
            };
            self.set_public_url(format!("http://{host}:{}", addr.port()));
        }
        async move {
            local.map_err(RuntimeError::Serve)?;
            let app = crate::api::router(self);
            axum::serve(
                listener,
                app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
            )
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(RuntimeError::Serve)
        }
    }
}
