//! The per-client rate limit of the public routes (tool files, wait
//! links): one route layer a route, counted before the route reads its
//! body or looks up its credential, so that a flood costs no database
//! work.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;

use super::ApiError;
use crate::DevRuntime;

/// What the layer needs: the runtime (its limiter) and what the route's
/// refusal says was not done (e.g. "nothing was stored").
#[derive(Debug, Clone)]
struct Limited {
    runtime: DevRuntime,
    not_done: &'static str,
}

/// `route`, counted against the per-client limit: past it, 429
/// `rate-limit-exceeded` with `Retry-After`, saying that `not_done`.
pub(super) fn limited(
    route: MethodRouter<DevRuntime>,
    runtime: &DevRuntime,
    not_done: &'static str,
) -> MethodRouter<DevRuntime> {
    let state = Limited {
        runtime: runtime.clone(),
        not_done,
    };
    route.route_layer(middleware::from_fn_with_state(state, count))
}

async fn count(State(limited): State<Limited>, request: Request, next: Next) -> Response {
    // Served with `into_make_service_with_connect_info`: every request has
    // its peer. Without one (a router driven in memory), all share one
    // bucket, which errs on the side of refusing.
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip())
        .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED.into());
    match limited.runtime.inner.rate.check(peer) {
        Ok(()) => next.run(request).await,
        Err(after) => ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate-limit-exceeded",
            format!("Too many requests from this client; {}", limited.not_done),
        )
        .retry_after(after)
        .into_response(),
    }
}
