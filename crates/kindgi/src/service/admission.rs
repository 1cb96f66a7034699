//! Admission: whether the service takes an invoke, checked in the
//! contract's order (CONTRACT §3) — cheapest and most telling first, and
//! every refusal before the call could have run:
//!
//! 1. the token (401) and the pinned tenant (421): a caller that may not
//!    call learns nothing else;
//! 2. draining, or strictly missing env (503): the service can't take it;
//! 3. counted in flight, then draining checked again (see
//!    [`Drain::enter`](super::drain::Drain::enter));
//! 4. the concurrency cap (503 `overloaded`) — refused before the body, as
//!    the contract says; the slot itself is taken only once the body is in,
//!    so that a client sending its body slowly never holds one;
//! 5. the content type (415) and a declared length past the limit (413);
//! 6. the body, within its limit (413), its time ([`BODY_TIMEOUT`], 400)
//!    and the memory budget (503 `overloaded`), and given up if the drain
//!    window closes meanwhile (503 `draining`);
//! 7. what parsing it will build, reserved from the budget (503
//!    `overloaded`) — or, past what one call may ever take, refused for
//!    good: 413 naming the limit, or the contract's `malformed-message`
//!    for a body that is no JSON object;
//! 8. the call slot, which the body's wait may have let another call take
//!    (503 `overloaded`).
//!
//! What passes is an [`Admitted`] call: its body, and the slot, memory and
//! in-flight count it holds until it is answered.

use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use hyper::body::Incoming;
use kindgi_protocol::{ParseError, not_an_object};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::answer::{HttpResponse, draining, overloaded, refused, tenant_mismatch};
use super::budget::{MemoryBudget, Reservation, parsed_cost};
use super::call_headers::CallHeaders;
use super::config::{EnvCheck, ServiceConfig};
use super::drain::{Drain, InFlightGuard};
use super::pack_http::{self, BODY_TIMEOUT, BodyError};
use super::placement::Placement;
use super::token::Token;

/// Who may call and how many at once: the configuration's token, pinned
/// tenant, env check and limits.
#[derive(Debug)]
pub(crate) struct Admission {
    token: Token,
    tenant_id: Option<String>,
    env_check: EnvCheck,
    missing_env: Vec<String>,
    /// One permit per call running: `max_concurrency`.
    capacity: Arc<Semaphore>,
    /// The memory budget of request bodies and their parsed documents.
    budget: Arc<MemoryBudget>,
}

impl Admission {
    /// The admission `config` asks for, with `missing_env` the required
    /// names found without a value at boot.
    pub(crate) fn new(config: &ServiceConfig, missing_env: Vec<String>) -> Self {
        Self {
            token: config.token.clone(),
            tenant_id: config.tenant_id.clone(),
            env_check: config.env_check,
            missing_env,
            capacity: Arc::new(Semaphore::new(config.max_concurrency)),
            budget: MemoryBudget::new(config.body_memory),
        }
    }

    /// Step 1, of `/v1/info` and `/v1/invoke`: 401 without the token, 421
    /// for another tenant than the one pinned; `None` when neither.
    pub(crate) fn refuse(&self, headers: &CallHeaders<'_>) -> Option<HttpResponse> {
        if !pack_http::sent_token_matches(headers.token, &self.token) {
            return Some(pack_http::bad_token());
        }
        let sent = pack_http::header_text(headers.tenant_id);
        if !self.tenant_matches_header(sent) {
            return Some(tenant_mismatch());
        }
        None
    }

    fn tenant_matches_header(&self, sent: Option<&str>) -> bool {
        match &self.tenant_id {
            None => true,
            Some(pinned) => sent.is_some_and(|t| t == pinned),
        }
    }

    /// Whether a message's `ctx.tenantId` is the pinned tenant (any, when
    /// none is): a header can be right and the body wrong.
    pub(crate) fn tenant_matches(&self, tenant_id: &str) -> bool {
        self.tenant_id
            .as_deref()
            .is_none_or(|pinned| pinned == tenant_id)
    }

    /// Step 2, also `/readyz`'s answer: the first reason the service
    /// can't take a call, as its 503.
    pub(crate) fn not_serving(&self, drain: &Drain) -> Option<HttpResponse> {
        if drain.is_draining() {
            return Some(draining());
        }
        if self.env_check == EnvCheck::Strict && !self.missing_env.is_empty() {
            let body = serde_json::json!({
                "error": "missing env",
                "missingEnv": self.missing_env,
            });
            return Some(refused(pack_http::unavailable(&body), "missing-env"));
        }
        None
    }
}

/// 413 for a body whose parsed document would take more than `limit`
/// bytes, the most one call may: it can never run.
fn too_costly(limit: usize) -> HttpResponse {
    pack_http::error(
        http::StatusCode::PAYLOAD_TOO_LARGE,
        &format!(
            "Request body too large to parse: its JSON would take more than {} MiB, the most one call may",
            limit / (1024 * 1024)
        ),
    )
}

/// An invoke let in: its body, and what it holds until it is answered.
/// Dropped once the answer is made; the in-flight count goes last, so that
/// the drain sees the call's slot and memory given back.
#[derive(Debug)]
pub(crate) struct Admitted {
    /// The request body, read whole.
    pub(crate) body: Bytes,
    /// The contract's answer to a body too large to parse that is no JSON
    /// object: decoding it would build what admission refused to.
    pub(crate) malformed: Option<ParseError>,
    /// Where the call's CPU-bound work runs, decided by its body's size.
    pub(crate) placement: Placement,
    _slot: OwnedSemaphorePermit,
    _memory: Reservation,
    _in_flight: InFlightGuard,
}

/// Runs the checks of the module's list on an invoke with `headers`,
/// reading its body out of `request_body` (left there when refused before
/// it was read to its end).
///
/// # Errors
///
/// The refusal to answer with.
pub(crate) async fn admit(
    admission: &Admission,
    drain: &Drain,
    headers: &CallHeaders<'_>,
    request_body: &mut Option<Incoming>,
) -> Result<Admitted, HttpResponse> {
    if let Some(refused) = admission.refuse(headers) {
        return Err(refused);
    }
    if let Some(refused) = admission.not_serving(drain) {
        return Err(refused);
    }
    let in_flight = drain.enter();
    if drain.is_draining() {
        return Err(draining());
    }
    if admission.capacity.available_permits() == 0 {
        return Err(overloaded());
    }
    if !pack_http::is_json_type(headers.content_type) {
        return Err(pack_http::not_json());
    }
    let Ok(declared) = pack_http::length_declared(headers.content_length) else {
        return Err(pack_http::too_large());
    };

    let Some(incoming) = request_body.as_mut() else {
        return Err(pack_http::unreadable());
    };
    // The body's memory and its document's, reserved until the call ends.
    let mut memory = admission.budget.reservation();
    let read = {
        let mut reading = std::pin::pin!(pack_http::read_body(incoming, declared, |bytes| {
            memory.grow(bytes)
        }));
        // Most bodies came with their head: one already in is read without
        // a timer (and its clock read).
        match futures::poll!(reading.as_mut()) {
            Poll::Ready(read) => Ok(read),
            Poll::Pending => tokio::select! {
                read = tokio::time::timeout(BODY_TIMEOUT, reading) => read,
                // The drain window closed before the body came: the call
                // never ran.
                () = drain.until_window_closed() => return Err(draining()),
            },
        }
    };
    let body = match read {
        Ok(Ok(body)) => body,
        Ok(Err(BodyError::TooLarge)) => return Err(pack_http::too_large()),
        Ok(Err(BodyError::Overloaded)) => return Err(overloaded()),
        Ok(Err(_)) | Err(_) => return Err(pack_http::unreadable()),
    };
    // Read to its end: nothing is left to discard.
    *request_body = None;

    // What parsing will build, at most: past the budget, the call is
    // refused before it is parsed (it has not run).
    let placement = Placement::for_body(body.len());
    let cost = placement.run(|| parsed_cost(&body));
    let mut malformed = None;
    if memory.could_fit(cost) {
        if !memory.grow(cost) {
            // The budget is full now, with other calls: later it may not be.
            return Err(overloaded());
        }
    } else {
        // Past what one call may take, whatever the load: it can never
        // run, and is not answered as if it might later. A body that is
        // no JSON object gets the contract's answer, found without
        // building anything; a message, 413.
        match placement.run(|| not_an_object(&body)) {
            Some(refused) => malformed = Some(refused),
            None => return Err(too_costly(memory.call_limit())),
        }
    }
    // The room seen before the body may be gone now: then this call is
    // refused like any other past the cap (it has not run).
    let Ok(slot) = Arc::clone(&admission.capacity).try_acquire_owned() else {
        return Err(overloaded());
    };
    Ok(Admitted {
        body,
        malformed,
        placement,
        _slot: slot,
        _memory: memory,
        _in_flight: in_flight,
    })
}
