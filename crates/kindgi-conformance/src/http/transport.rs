//! Which HTTP a run of the suite speaks, and the exchanges each case
//! needs, in either.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use super::h2c::{self, H2Connection};
use super::{HttpRequest, HttpResponse, Outcome};

/// The HTTP the suite speaks to a service.
///
/// ```
/// use kindgi_conformance::Transport;
/// assert_eq!(Transport::default(), Transport::Http1);
/// assert_eq!(Transport::H2c.to_string(), "h2c (HTTP/2 over cleartext with prior knowledge)");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Transport {
    /// HTTP/1.1, one connection a request (`Connection: close`), written
    /// and read by hand ([`super::exchange`]).
    #[default]
    Http1,
    /// HTTP/2 over cleartext with prior knowledge: one connection a
    /// request, the request on one stream of it ([`h2c::exchange`]).
    H2c,
}

impl Transport {
    /// Its short name: `HTTP/1.1` or `h2c`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Http1 => "HTTP/1.1",
            Self::H2c => "h2c",
        }
    }

    /// Sends `request` to `addr` and reads the answer, within the request's
    /// timeout ([`super::send`], [`h2c::send`]).
    ///
    /// # Errors
    ///
    /// What went wrong, as text.
    pub async fn send(
        self,
        addr: SocketAddr,
        request: &HttpRequest,
    ) -> Result<HttpResponse, String> {
        match self {
            Self::Http1 => super::send(addr, request).await,
            Self::H2c => h2c::send(addr, request).await,
        }
    }

    /// Sends `request` to `addr` and tells how the exchange ended
    /// ([`super::exchange`], [`h2c::exchange`]).
    pub async fn exchange(
        self,
        addr: SocketAddr,
        request: &HttpRequest,
        timeout: Duration,
    ) -> Outcome {
        match self {
            Self::Http1 => super::exchange(addr, request, timeout).await,
            Self::H2c => h2c::exchange(addr, request, timeout).await,
        }
    }

    /// Sends `request`, waits `after`, and goes away without reading the
    /// answer: over HTTP/1.1 the connection is closed
    /// ([`super::send_then_disconnect`]); over h2c the request's stream is
    /// reset and the connection stays open until the [`Hangup`] is dropped
    /// ([`h2c::send_then_reset`]), so that what the service sees is the
    /// stream's end alone.
    ///
    /// # Errors
    ///
    /// When the service can't be reached or the request can't be sent.
    pub async fn send_then_disconnect(
        self,
        addr: SocketAddr,
        request: &HttpRequest,
        after: Duration,
    ) -> Result<Hangup, String> {
        match self {
            Self::Http1 => super::send_then_disconnect(addr, request, after)
                .await
                .map(|()| Hangup(None)),
            Self::H2c => h2c::send_then_reset(addr, request, after)
                .await
                .map(|connection| Hangup(Some(connection))),
        }
    }
}

impl fmt::Display for Transport {
    /// `HTTP/1.1`, or `h2c (HTTP/2 over cleartext with prior knowledge)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http1 => f.write_str("HTTP/1.1"),
            Self::H2c => f.write_str("h2c (HTTP/2 over cleartext with prior knowledge)"),
        }
    }
}

/// What is left of a call its caller went away from: over h2c, the
/// connection its stream was reset on, still open; dropping this closes it.
#[derive(Debug)]
#[must_use = "dropping it at once closes an h2c connection with the reset"]
pub struct Hangup(Option<H2Connection>);

impl Hangup {
    /// The connection still open, over h2c.
    pub fn connection(&self) -> Option<&H2Connection> {
        self.0.as_ref()
    }
}
