//! What every inspector request must show before it is answered: a `Host`
//! that is the inspector's own loopback address (a page on another site
//! that rebinds its name to 127.0.0.1 sends its own name), and so the
//! authority of a target in absolute form (`GET http://other/…`, which
//! stands for the `Host`), an `Origin`, when
//! the browser sends one, that is the inspector's own (a cross-site post
//! sends the other site's), and, on every API route, the dev token in
//! `Authorization: Bearer`.

use http::header::{AUTHORIZATION, HOST, ORIGIN};
use http::{HeaderMap, Uri};
use kindgi::Token;

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its `Host` is not the inspector's address.
    Host(String),
    /// Its `Origin` is another site.
    Origin(String),
    /// It carries no token, or the wrong one.
    Token,
}

impl Refusal {
    /// The refusal in words, for the JSON body.
    pub(crate) fn message(&self, port: u16) -> String {
        match self {
            Self::Host(host) => format!(
                "Refused: the inspector answers only to Host 127.0.0.1:{port} or localhost:{port}, not {host:?} (a site that points its name at this machine cannot use it)"
            ),
            Self::Origin(origin) => format!(
                "Refused: a request from {origin:?} is not from the inspector's own page (http://127.0.0.1:{port})"
            ),
            Self::Token => "The inspector needs the dev token: open the /inspector/#token=… URL that kindgi printed".to_owned(),
        }
    }
}

/// The checks for one listener.
#[derive(Debug)]
pub(crate) struct Guard {
    token: Token,
    port: u16,
}

impl Guard {
    /// A guard for the inspector on `127.0.0.1:port`, checking `token`.
    pub(crate) fn new(token: Token, port: u16) -> Self {
        Self { token, port }
    }

    /// The port it answers on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Whether `host` (a `Host` header, or an origin's host) names this
    /// listener on a loopback name.
    fn own_host(&self, host: &str) -> bool {
        let port = self.port.to_string();
        ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .any(|name| host.eq_ignore_ascii_case(&format!("{name}:{port}")))
    }

    /// The `Host` (and a target's authority) and `Origin` checks, for
    /// every request (assets too).
    pub(crate) fn check_site(&self, target: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        if let Some(authority) = target.authority()
            && !self.own_host(authority.as_str())
        {
            return Err(Refusal::Host(authority.as_str().to_owned()));
        }
        let host = headers
            .get(HOST)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        if !self.own_host(&host) {
            return Err(Refusal::Host(host));
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = String::from_utf8_lossy(origin.as_bytes()).into_owned();
            let own = origin
                .strip_prefix("http://")
                .is_some_and(|host| self.own_host(host));
            if !own {
                return Err(Refusal::Origin(origin));
            }
        }
        Ok(())
    }

    /// The token check, for the API routes.
    pub(crate) fn check_token(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let sent = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
            .unwrap_or_default();
        if self.token.matches(sent) {
            Ok(())
        } else {
            Err(Refusal::Token)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(http::HeaderName, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(name.clone(), HeaderValue::from_str(value).expect("value"));
        }
        headers
    }

    fn guard() -> Guard {
        Guard::new(Token::new("tok-1").expect("token"), 4100)
    }

    #[test]
    fn only_its_own_host_and_origin() {
        let guard = guard();
        for host in [
            "127.0.0.1:4100",
            "localhost:4100",
            "LOCALHOST:4100",
            "[::1]:4100",
        ] {
            assert_eq!(
                guard.check_site(&Uri::from_static("/inspector/"), &headers(&[(HOST, host)])),
                Ok(()),
                "{host}"
            );
        }
        for host in ["127.0.0.1:4101", "evil.example:4100", "127.0.0.1", ""] {
            assert_eq!(
                guard.check_site(&Uri::from_static("/inspector/"), &headers(&[(HOST, host)])),
                Err(Refusal::Host(host.to_owned()))
            );
        }
        let own = headers(&[(HOST, "127.0.0.1:4100"), (ORIGIN, "http://localhost:4100")]);
        assert_eq!(
            guard.check_site(&Uri::from_static("/inspector/"), &own),
            Ok(())
        );
        for origin in ["http://evil.example", "https://127.0.0.1:4100", "null"] {
            let foreign = headers(&[(HOST, "127.0.0.1:4100"), (ORIGIN, origin)]);
            assert_eq!(
                guard.check_site(&Uri::from_static("/inspector/"), &foreign),
                Err(Refusal::Origin(origin.to_owned()))
            );
        }
    }

    #[test]
    fn the_token_goes_in_authorization_bearer() {
        let guard = guard();
        assert_eq!(
            guard.check_token(&headers(&[(AUTHORIZATION, "Bearer tok-1")])),
            Ok(())
        );
        for sent in ["Bearer tok-2", "tok-1", "Bearer ", "Basic tok-1"] {
            assert_eq!(
                guard.check_token(&headers(&[(AUTHORIZATION, sent)])),
                Err(Refusal::Token)
            );
        }
        assert_eq!(guard.check_token(&HeaderMap::new()), Err(Refusal::Token));
    }
}
