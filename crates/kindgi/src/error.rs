//! What a handler reports when it doesn't produce a result.

use kindgi_protocol::ThrownCause;

/// The error side of a tool handler.
///
/// Any `std::error::Error` converts into it with `?` (it becomes a
/// `handler-throw` whose `cause.name` is the error's type name), and two
/// protocol outcomes are made with its constructors:
/// [`ToolError::connection_rejected`] and [`ToolError::pause_not_available`].
///
/// Like `anyhow::Error`, it doesn't implement `std::error::Error` itself,
/// which is what lets every error type convert into it.
///
/// ```
/// use kindgi::ToolError;
/// fn parse(n: &str) -> Result<u32, ToolError> {
///     Ok(n.parse::<u32>()?)
/// }
/// let err = parse("x").unwrap_err();
/// assert_eq!(err.cause().map(|c| c.name.as_str()), Some("ParseIntError"));
/// ```
#[derive(Debug)]
pub struct ToolError {
    kind: ToolErrorKind,
}

#[derive(Debug)]
enum ToolErrorKind {
    Thrown(ThrownCause),
    ConnectionRejected(String),
    PauseNotAvailable,
}

impl ToolError {
    /// A thrown error with a type name and message of your choosing.
    pub fn new(name: impl Into<String>, message: impl Into<String>) -> Self {
        let (name, message) = (name.into(), message.into());
        let stack = format!("{name}: {message}");
        Self {
            kind: ToolErrorKind::Thrown(ThrownCause {
                name,
                message,
                stack,
            }),
        }
    }

    /// The app refused the token of the connection the tool calls `name`:
    /// the answer is `connection-rejected`, and the runtime renews that
    /// connection's token once and runs the call again (protocol 2.9.0).
    pub fn connection_rejected(name: impl Into<String>) -> Self {
        Self {
            kind: ToolErrorKind::ConnectionRejected(name.into()),
        }
    }

    /// The tool tried to pause, but the call carried no wait token.
    pub fn pause_not_available() -> Self {
        Self {
            kind: ToolErrorKind::PauseNotAvailable,
        }
    }

    /// A boxed error, as `anyhow`-style code holds one.
    pub fn from_boxed(error: Box<dyn std::error::Error + Send + Sync + 'static>) -> Self {
        Self {
            kind: ToolErrorKind::Thrown(cause_of_dyn("Error", &*error)),
        }
    }

    /// The serialized throw, when this is one.
    pub fn cause(&self) -> Option<&ThrownCause> {
        match &self.kind {
            ToolErrorKind::Thrown(cause) => Some(cause),
            _ => None,
        }
    }

    /// The rejected connection's name, when this is a rejection.
    pub fn rejected_connection(&self) -> Option<&str> {
        match &self.kind {
            ToolErrorKind::ConnectionRejected(name) => Some(name),
            _ => None,
        }
    }

    /// Whether this says the call can't pause.
    pub fn is_pause_not_available(&self) -> bool {
        matches!(self.kind, ToolErrorKind::PauseNotAvailable)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(error: E) -> Self {
        Self {
            kind: ToolErrorKind::Thrown(cause_of_dyn(short_type_name::<E>(), &error)),
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            ToolErrorKind::Thrown(cause) => write!(f, "{}: {}", cause.name, cause.message),
            ToolErrorKind::ConnectionRejected(name) => {
                write!(f, "the app refused the token of connection \"{name}\"")
            }
            ToolErrorKind::PauseNotAvailable => f.write_str("this call can't pause"),
        }
    }
}

/// The serialized form of an error: its type name, its `Display`, and its
/// `source()` chain as the stack.
pub(crate) fn cause_of_dyn(name: &str, error: &(dyn std::error::Error + 'static)) -> ThrownCause {
    let message = error.to_string();
    let mut stack = format!("{name}: {message}");
    let mut source = error.source();
    while let Some(inner) = source {
        stack.push_str("\n    caused by: ");
        stack.push_str(&inner.to_string());
        source = inner.source();
    }
    ThrownCause {
        name: name.to_owned(),
        message,
        stack,
    }
}

/// The last path segment of a type's name, without generic arguments:
/// `my_pack::tools::Boom<u8>` → `Boom`.
pub(crate) fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// The serialized form of a panic.
pub(crate) fn cause_of_panic(payload: &(dyn std::any::Any + Send)) -> ThrownCause {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_owned());
    ThrownCause {
        name: "panic".to_owned(),
        stack: format!("panic: {message}"),
        message,
    }
}

/// The error of a [`crate::ToolContext::wait_link`] on a call that carries
/// no wait token: `?` turns it into a `pause-not-available` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseNotAvailable;

impl std::fmt::Display for PauseNotAvailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("this call carries no wait token, so the tool can't pause")
    }
}

impl From<PauseNotAvailable> for ToolError {
    fn from(_: PauseNotAvailable) -> Self {
        Self::pause_not_available()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn error_becomes_cause_with_chain() {
        let err = ToolError::from(Outer(std::io::Error::other("inner")));
        let cause = err.cause().expect("thrown");
        assert_eq!(cause.name, "Outer");
        assert_eq!(cause.message, "outer");
        assert_eq!(cause.stack, "Outer: outer\n    caused by: inner");
    }

    #[test]
    fn panic_payloads() {
        assert_eq!(cause_of_panic(&"boom").message, "boom");
        assert_eq!(cause_of_panic(&String::from("b")).message, "b");
    }
}
