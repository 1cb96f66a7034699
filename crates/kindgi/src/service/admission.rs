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
//!    (503 `overloaded`);
//! 9. the body decoded ([`super::decode`]), and a tool call whose
//!    `ctx.tenantId` is another than the pinned tenant refused (421).
//!
//! What passes is an [`Admitted`] call: the call its body decoded to, and
//! the slot, memory and in-flight count it holds until it is answered. A
//! refusal is a [`Refusal`], which [`super::answer`] answers.

use std::sync::Arc;
use std::task::Poll;

use hyper::body::Incoming;
use kindgi_protocol::{ParseError, not_an_object};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::budget::{MemoryBudget, Reservation, parsed_cost};
use super::call_headers::CallHeaders;
use super::config::{EnvCheck, ServiceConfig};
use super::decode::{Decoded, decode};
use super::drain::{Drain, InFlightGuard};
use super::invoker::Invoker;
use super::pack_http::{self, BODY_TIMEOUT, BodyError};
use super::placement::Placement;
use super::refusal::Refusal;
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
    pub(crate) fn refuse(&self, headers: &CallHeaders<'_>) -> Option<Refusal> {
        if !pack_http::sent_token_matches(headers.token, &self.token) {
            return Some(Refusal::BadToken);
        }
        let sent = pack_http::header_text(headers.tenant_id);
        if !self.tenant_matches_header(sent) {
            return Some(Refusal::OtherTenant { via: "header" });
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
    fn tenant_matches(&self, tenant_id: &str) -> bool {
        self.tenant_id
            .as_deref()
            .is_none_or(|pinned| pinned == tenant_id)
    }

    /// Step 2, also `/readyz`'s answer: the first reason the service
    /// can't take a call.
    pub(crate) fn not_serving(&self, drain: &Drain) -> Option<Refusal> {
        if drain.is_draining() {
            return Some(Refusal::Draining);
        }
        if self.env_check == EnvCheck::Strict && !self.missing_env.is_empty() {
            return Some(Refusal::MissingEnv(self.missing_env.clone()));
        }
        None
    }

    /// Runs the checks of the module's list on an invoke with `headers`,
    /// reading its body out of `request_body` (left there when refused
    /// before it was read to its end) and decoding it for `invoker`.
    ///
    /// # Errors
    ///
    /// The refusal to answer with.
    pub(crate) async fn admit(
        &self,
        drain: &Drain,
        invoker: &Invoker,
        headers: &CallHeaders<'_>,
        request_body: &mut Option<Incoming>,
    ) -> Result<Admitted, Refusal> {
        if let Some(refused) = self.refuse(headers) {
            return Err(refused);
        }
        if let Some(refused) = self.not_serving(drain) {
            return Err(refused);
        }
        let in_flight = drain.enter();
        if drain.is_draining() {
            return Err(Refusal::Draining);
        }
        if self.capacity.available_permits() == 0 {
            return Err(Refusal::Overloaded);
        }
        if !pack_http::is_json_type(headers.content_type) {
            return Err(Refusal::NotJson);
        }
        let Ok(declared) = pack_http::length_declared(headers.content_length) else {
            return Err(Refusal::TooLarge);
        };
        let Some(incoming) = request_body.as_mut() else {
            return Err(Refusal::Unreadable);
        };
        // The body's memory and its document's, reserved until the call
        // ends.
        let mut memory = self.budget.reservation();
        let read = {
            let mut reading = std::pin::pin!(pack_http::read_body(incoming, declared, |bytes| {
                memory.grow(bytes)
            }));
            // Most bodies came with their head: one already in is read
            // without a timer (and its clock read).
            match futures::poll!(reading.as_mut()) {
                Poll::Ready(read) => Ok(read),
                Poll::Pending => tokio::select! {
                    read = tokio::time::timeout(BODY_TIMEOUT, reading) => read,
                    // The drain window closed before the body came: the
                    // call never ran.
                    () = drain.until_window_closed() => return Err(Refusal::Draining),
                },
            }
        };
        let body = match read {
            Ok(Ok(body)) => body,
            Ok(Err(BodyError::TooLarge)) => return Err(Refusal::TooLarge),
            Ok(Err(BodyError::Overloaded)) => return Err(Refusal::Overloaded),
            Ok(Err(_)) | Err(_) => return Err(Refusal::Unreadable),
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
                // The budget is full now, with other calls: later it may
                // not be.
                return Err(Refusal::Overloaded);
            }
        } else {
            // Past what one call may take, whatever the load: it can never
            // run, and is not answered as if it might later. A body that
            // is no JSON object gets the contract's answer, found without
            // building anything; a message, 413.
            match placement.run(|| not_an_object(&body)) {
                Some(refused) => malformed = Some(refused),
                None => {
                    return Err(Refusal::TooCostly {
                        limit: memory.call_limit(),
                    });
                }
            }
        }
        // The room seen before the body may be gone now: then this call is
        // refused like any other past the cap (it has not run).
        let Ok(slot) = Arc::clone(&self.capacity).try_acquire_owned() else {
            return Err(Refusal::Overloaded);
        };
        let hold = Hold {
            _slot: slot,
            _memory: memory,
            _in_flight: in_flight,
        };
        // The body is freed once decoded: what the call goes on with is
        // its own.
        let call = match malformed {
            Some(malformed) => Err(malformed),
            None => placement.run(|| decode(invoker, &body)),
        };
        drop(body);
        if let Ok(Decoded::Tool(call)) = &call
            && !self.tenant_matches(&call.ctx.tenant_id)
        {
            return Err(Refusal::OtherTenant { via: "context" });
        }
        Ok(Admitted {
            call,
            placement,
            hold,
        })
    }
}

/// An invoke let in: the call its body decoded to, and what it holds until
/// it is answered.
#[derive(Debug)]
pub(crate) struct Admitted {
    /// The call, or the contract's answer to a body that is no well-formed
    /// request.
    pub(crate) call: Result<Decoded, ParseError>,
    /// Where the call's CPU-bound work runs, decided by its body's size.
    pub(crate) placement: Placement,
    /// Its slot, memory and place in flight.
    pub(crate) hold: Hold,
}

/// What an admitted call holds: its call slot, the memory of its body and
/// document, and its place in flight. Dropped once its answer is made; the
/// in-flight count goes last, so that the drain sees the slot and memory
/// given back.
#[derive(Debug)]
pub(crate) struct Hold {
    _slot: OwnedSemaphorePermit,
    _memory: Reservation,
    _in_flight: InFlightGuard,
}
