//! The rate limit of the public routes (tool files, wait links): one route
//! layer a route, counted before the route reads its body or looks up its
//! credential, so that a flood costs no database work — against the
//! budget of the credential the request carries, or of its client when it
//! carries none ([`Bucket`]).

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;

use super::ApiError;
use crate::DevRuntime;
use crate::limits::Bucket;
use crate::tokens;

/// Where a route's requests carry their credential.
#[derive(Debug, Clone, Copy)]
pub(super) enum Credential {
    /// A files token, `Authorization: Bearer kgi_tf_…`.
    FilesToken,
    /// A wait link, the path's last segment `kgi_wl_…`.
    WaitLink,
}

impl Credential {
    /// The id of the credential `request` carries, if one is well formed
    /// (not checked: that is the route's work).
    fn id(self, request: &Request) -> Option<String> {
        let (prefix, presented) = match self {
            Self::FilesToken => {
                let header = request.headers().get(AUTHORIZATION)?.to_str().ok()?;
                let (scheme, token) = header.trim().split_once(' ')?;
                if !scheme.eq_ignore_ascii_case("bearer") {
                    return None;
                }
                (tokens::TOOL_FILES_PREFIX, token.trim())
            }
            Self::WaitLink => (
                tokens::WAIT_LINK_PREFIX,
                request.uri().path().rsplit('/').next()?,
            ),
        };
        tokens::split(prefix, presented).map(|(id, _)| id.to_owned())
    }
}

/// What the layer needs: the runtime (its limiter), where the route's
/// credential is, and what its refusal says was not done (e.g. "nothing
/// was stored").
#[derive(Debug, Clone)]
struct Limited {
    runtime: DevRuntime,
    credential: Credential,
    not_done: &'static str,
}

/// `route`, counted against the limit of its request's credential (or
/// client): past it, 429 `rate-limit-exceeded` with `Retry-After`, saying
/// that `not_done`.
pub(super) fn limited(
    route: MethodRouter<DevRuntime>,
    runtime: &DevRuntime,
    credential: Credential,
    not_done: &'static str,
) -> MethodRouter<DevRuntime> {
    let state = Limited {
        runtime: runtime.clone(),
        credential,
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
    let bucket = match limited.credential.id(&request) {
        Some(id) => Bucket::Credential(id),
        None => Bucket::Anonymous(peer),
    };
    match limited.runtime.inner.rate.check(bucket) {
        Ok(()) => next.run(request).await,
        Err(after) => ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate-limit-exceeded",
            format!(
                "Too many requests with this credential, or from this client without one; {}",
                limited.not_done
            ),
        )
        .retry_after(after)
        .into_response(),
    }
}
