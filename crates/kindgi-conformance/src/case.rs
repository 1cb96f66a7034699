//! What a case is: an id, a feature, what it checks, and the check.

use std::fmt;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::http::{HttpResponse, shorten};
use crate::session::Session;

/// What a check finds: `Ok`, or the difference (`expected X, got Y`).
pub type Checked = Result<(), String>;

/// The part of the protocol a case checks. `--skip` takes these names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// `core`: HTTP routes, messages, tool and check calls.
    Core,
    /// `index`: the index the indexer writes.
    Index,
    /// `process`: configuration, boot, drain, the concurrency cap.
    Process,
    /// `env`: the env check and the env filter.
    Env,
    /// `logs`: the records on stderr, and what they never contain.
    Logs,
    /// `2.7-tenant`: a service pinned to one tenant.
    Tenant,
    /// `2.7-index-hash`: `indexHash` in `/v1/info`.
    IndexHash,
    /// `2.8-pause`: the `pause` answer and wait tokens.
    Pause,
    /// `2.9-connections`: connections in the call context.
    Connections,
    /// `2.10-files`: storing and reading files through the tool-files API.
    Files,
    /// `rust-only`: what only the Rust fixture has (panics, blocking handlers).
    RustOnly,
}

impl Feature {
    /// Every feature.
    pub const ALL: [Feature; 11] = [
        Self::Core,
        Self::Index,
        Self::Process,
        Self::Env,
        Self::Logs,
        Self::Tenant,
        Self::IndexHash,
        Self::Pause,
        Self::Connections,
        Self::Files,
        Self::RustOnly,
    ];

    /// Its name, as `--skip` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Core => "core",
            Self::Index => "index",
            Self::Process => "process",
            Self::Env => "env",
            Self::Logs => "logs",
            Self::Tenant => "2.7-tenant",
            Self::IndexHash => "2.7-index-hash",
            Self::Pause => "2.8-pause",
            Self::Connections => "2.9-connections",
            Self::Files => "2.10-files",
            Self::RustOnly => "rust-only",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Feature {
    type Err = String;

    /// ```
    /// use kindgi_conformance::Feature;
    /// assert_eq!("2.8-pause".parse::<Feature>(), Ok(Feature::Pause));
    /// assert!("nope".parse::<Feature>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown feature {s:?}; the features are {}",
                    names.join(", ")
                )
            })
    }
}

type CheckFn = Arc<dyn Fn(Session) -> BoxFuture<'static, Checked> + Send + Sync>;

/// One conformance case.
#[derive(Clone)]
pub struct Case {
    id: &'static str,
    feature: Feature,
    what: &'static str,
    last: bool,
    http1_only: Option<&'static str>,
    check: CheckFn,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Case")
            .field("id", &self.id)
            .field("feature", &self.feature)
            .field("what", &self.what)
            .field("http1_only", &self.http1_only)
            .finish_non_exhaustive()
    }
}

impl Case {
    pub(crate) fn new<F, Fut>(
        id: &'static str,
        feature: Feature,
        what: &'static str,
        check: F,
    ) -> Self
    where
        F: Fn(Session) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Checked> + Send + 'static,
    {
        Self {
            id,
            feature,
            what,
            last: false,
            http1_only: None,
            check: Arc::new(move |session| Box::pin(check(session))),
        }
    }

    /// Runs after every other case (it looks at what they left behind).
    pub(crate) fn last(mut self) -> Self {
        self.last = true;
        self
    }

    /// Only HTTP/1.1 framing can say what it sends (`why`): over any other
    /// transport it is skipped, with `why` on its line.
    pub(crate) fn http1_only(mut self, why: &'static str) -> Self {
        self.http1_only = Some(why);
        self
    }

    /// Why it runs only over HTTP/1.1, when it does: what it sends that
    /// only HTTP/1.1 framing can say.
    pub fn http1_only_because(&self) -> Option<&'static str> {
        self.http1_only
    }

    /// Its id (`invoke.echo.ok`).
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// Its feature.
    pub fn feature(&self) -> Feature {
        self.feature
    }

    /// What it checks, in a sentence.
    pub fn what(&self) -> &'static str {
        self.what
    }

    pub(crate) fn runs_last(&self) -> bool {
        self.last
    }

    pub(crate) fn run(&self, session: Session) -> BoxFuture<'static, Checked> {
        (self.check)(session)
    }
}

// ---- Expectations: each returns the difference as text. ----

/// `Ok` when `cond`, else the difference `why`.
pub(crate) fn ensure(cond: bool, why: impl FnOnce() -> String) -> Checked {
    if cond { Ok(()) } else { Err(why()) }
}

/// `what: expected X, got Y` unless equal.
pub(crate) fn eq<T: PartialEq + fmt::Debug>(what: &str, expected: T, got: T) -> Checked {
    ensure(expected == got, || {
        format!("{what}: expected {expected:?}, got {got:?}")
    })
}

/// `what: expected X, got Y` as compact JSON, unless equal.
pub(crate) fn json_eq(what: &str, expected: &Value, got: &Value) -> Checked {
    ensure(expected == got, || {
        format!(
            "{what}: expected {expected}, got {}",
            shorten(&got.to_string(), 600)
        )
    })
}

/// The answer's status must be `status`.
pub(crate) fn status(response: &HttpResponse, status: u16) -> Checked {
    response.expect_status(status)
}

/// Status `code` and exactly the JSON body `body`.
pub(crate) fn answer(response: &HttpResponse, code: u16, body: &Value) -> Checked {
    status(response, code)?;
    json_eq("body", body, &response.json()?)
}

/// A 503 with `Retry-After: 1` and exactly `body`.
pub(crate) fn unavailable(response: &HttpResponse, body: &Value) -> Checked {
    answer(response, 503, body)?;
    eq("Retry-After", Some("1"), response.header("retry-after"))
}

/// The string at `pointer` in `value`.
pub(crate) fn str_at<'v>(value: &'v Value, pointer: &str) -> Result<&'v str, String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| {
            format!(
                "expected a string at {pointer}, got {}",
                shorten(&value.to_string(), 400)
            )
        })
}

/// An error answer with `code`: checks `kind`, `v` and `code`.
pub(crate) fn error_code(answer: &Value, code: &str) -> Checked {
    ensure(
        answer.get("kind") == Some(&Value::from("error"))
            && answer.get("code") == Some(&Value::from(code)),
        || {
            format!(
                "expected an error {code:?}, got {}",
                shorten(&answer.to_string(), 600)
            )
        },
    )
}

/// An error answer with `code` and exactly `message`.
pub(crate) fn error_message(answer: &Value, code: &str, message: &str) -> Checked {
    error_code(answer, code)?;
    eq("message", message, str_at(answer, "/message")?)
}

/// An error answer about tool `tool`: `code`, `message` and `toolId`.
pub(crate) fn tool_error(answer: &Value, code: &str, tool: &str, message: &str) -> Checked {
    error_message(answer, code, message)?;
    eq("toolId", tool, str_at(answer, "/toolId")?)
}

/// A result answer whose output is exactly `output`.
pub(crate) fn result(answer: &Value, output: &Value) -> Checked {
    json_eq(
        "answer",
        &serde_json::json!({"v": 2, "kind": "result", "output": output}),
        answer,
    )
}
