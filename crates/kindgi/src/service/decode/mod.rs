//! The decode seam: an admitted body becomes one [`Decoded`] call — a tool
//! invoke with its input ready for the handler's typed read, a check
//! invoke, or the contract's error — through [`decode`] alone. The rest of
//! the service never knows how the input was read.
//!
//! The plain path is [`parse_request`]: the body is parsed into a tree, and
//! the tool's input is filled with its defaults and validated later, as a
//! tree ([`Input::Unchecked`]). With the `fast-input` feature (on by
//! default) the body's envelope is read by hand ([`envelope`]) and a tool
//! invoke's input is read from its text straight into the handler's type,
//! checked against the schema as it is read ([`text`]); whatever that
//! reader can't settle falls back to the plain path, so both answer every
//! body alike.

#[cfg(feature = "fast-input")]
mod envelope;
#[cfg(feature = "fast-input")]
mod text;

use kindgi_protocol::{CallContext, CheckInvoke, ParseError, Request, ToolRef, parse_request};
use serde_json::Value;

use super::invoker::Invoker;

/// An admitted body, decoded.
#[derive(Debug)]
pub(crate) enum Decoded {
    /// A tool invoke.
    Tool(ToolCall),
    /// A check invoke.
    Check(CheckInvoke),
    /// A request of a kind this service doesn't run.
    Other,
}

/// A tool invoke as the service runs it.
#[derive(Debug)]
pub(crate) struct ToolCall {
    /// The tool called, and the version the caller asked for.
    pub(crate) tool: ToolRef,
    /// Its input, as far as decoding got with it.
    pub(crate) input: Input,
    /// The call's context.
    pub(crate) ctx: Box<CallContext>,
}

/// A tool's input as decoding left it.
#[derive(Debug)]
pub(crate) enum Input {
    /// Parsed, not checked yet: its defaults to fill, then to validate.
    Unchecked(Value),
    /// Read into the handler's input type, every value checked against
    /// the schema as it was read: valid, with nothing to fill.
    #[cfg(feature = "fast-input")]
    Checked(Box<dyn std::any::Any + Send>),
    /// Refused as it was read, with the issues its tree would get.
    #[cfg(feature = "fast-input")]
    Invalid(Vec<kindgi_protocol::Issue>),
    /// The input type's `Deserialize` (the pack's own code) panicked as the
    /// text was read: answered as the handler's panic would be, without
    /// running that code again.
    #[cfg(feature = "fast-input")]
    Panicked(Box<dyn std::any::Any + Send>),
}

/// Decodes `body`, which admission let in, for `invoker`'s tools.
///
/// # Errors
///
/// [`parse_request`]'s, with the contract's message, for a body that is
/// not a well-formed request.
pub(crate) fn decode(invoker: &Invoker, body: &[u8]) -> Result<Decoded, ParseError> {
    #[cfg(feature = "fast-input")]
    if let Some(decoded) = text::decode(invoker, body) {
        return Ok(decoded);
    }
    #[cfg(not(feature = "fast-input"))]
    let _ = invoker;
    parse_request(body).map(Decoded::from)
}

impl From<Request> for Decoded {
    fn from(request: Request) -> Self {
        match request {
            Request::Invoke(invoke) => Decoded::Tool(ToolCall {
                tool: invoke.tool,
                input: Input::Unchecked(invoke.input),
                ctx: invoke.ctx,
            }),
            Request::CheckInvoke(check) => Decoded::Check(check),
            _ => Decoded::Other,
        }
    }
}
