//! The corpus: the requests sent to both services, each with an id and
//! what it probes — valid calls, invalid ones, hostile bodies, every error
//! code and every transport status the fixture pack can be made to give.

use serde_json::{Value, json};

/// Which token a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Auth {
    /// The service's own.
    Good,
    /// None at all.
    Missing,
    /// One the service doesn't hold.
    Wrong,
}

/// One request, written the same way to each service (only the token is
/// each service's own).
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: &'static str,
    pub(crate) path: &'static str,
    pub(crate) auth: Auth,
    pub(crate) content_type: Option<&'static str>,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Vec<u8>,
}

/// What a probe does.
#[derive(Debug, Clone)]
pub(crate) enum Act {
    /// Sends one request and reads its answer.
    Send(Request),
    /// Starts a `conformance.hold` call and closes the connection once the
    /// handler runs: the caller going away.
    Disconnect,
    /// Sends the request and at once closes the sending side of the
    /// connection (`shutdown(SHUT_WR)`), then reads what comes.
    HalfClose(Request),
}

/// One entry of the corpus.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    /// Its id, as the report and the accepted differences name it.
    pub(crate) id: &'static str,
    /// The run id its message carries, whose records are compared.
    pub(crate) run: String,
    /// What it does.
    pub(crate) act: Act,
}

impl Probe {
    fn send(id: &'static str, request: Request) -> Self {
        Self {
            id,
            run: run_of(id),
            act: Act::Send(request),
        }
    }
}

/// The run id of probe `id`.
pub(crate) fn run_of(id: &str) -> String {
    format!("diff-{id}")
}

/// A `POST /v1/invoke` of `body` as raw bytes, with the service's token
/// and `Content-Type: application/json`.
fn raw(body: impl Into<Vec<u8>>) -> Request {
    Request {
        method: "POST",
        path: "/v1/invoke",
        auth: Auth::Good,
        content_type: Some("application/json"),
        headers: Vec::new(),
        body: body.into(),
    }
}

/// [`raw`] of a JSON message.
fn message(value: &Value) -> Request {
    raw(value.to_string())
}

/// A request with no body.
fn bare(method: &'static str, path: &'static str, auth: Auth) -> Request {
    Request {
        method,
        path,
        auth,
        content_type: None,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

impl Request {
    fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    fn content_type(mut self, content_type: Option<&'static str>) -> Self {
        self.content_type = content_type;
        self
    }
}

/// The context of probe `id`'s call: tenant `t1`, its own run.
fn ctx(id: &str) -> Value {
    json!({"tenantId": "t1", "runId": run_of(id)})
}

/// A tool invoke for probe `id`.
fn tool(id: &'static str, tool: &str, input: Value) -> Probe {
    Probe::send(
        id,
        message(
            &json!({"v": 2, "kind": "invoke", "tool": {"id": tool}, "input": input, "ctx": ctx(id)}),
        ),
    )
}

/// A check invoke for probe `id`, its trace's output `output`.
fn check(id: &'static str, check: &str, config: Value, output: &str) -> Probe {
    let trace = json!({"runId": run_of(id), "tenantId": "t1", "output": output});
    Probe::send(
        id,
        message(
            &json!({"v": 2, "kind": "check-invoke", "check": {"id": check}, "config": config, "trace": trace}),
        ),
    )
}

/// `depth` nested arrays around `0`.
fn nested(depth: usize) -> String {
    format!("{}0{}", "[".repeat(depth), "]".repeat(depth))
}

/// Every probe, in report order. Ids are unique.
pub(crate) fn corpus() -> Vec<Probe> {
    let echo = "conformance.echo";
    vec![
        // The transport.
        Probe::send("http.healthz", bare("GET", "/healthz", Auth::Missing)),
        Probe::send("http.readyz", bare("GET", "/readyz", Auth::Missing)),
        Probe::send("http.404", bare("GET", "/nope", Auth::Good)),
        Probe::send(
            "http.404.trailing-slash",
            bare("POST", "/v1/invoke/", Auth::Good),
        ),
        Probe::send("http.405.invoke", bare("GET", "/v1/invoke", Auth::Good)),
        Probe::send("http.405.info", bare("POST", "/v1/info", Auth::Good)),
        Probe::send("http.401.missing", message(&json!({})).auth(Auth::Missing)),
        Probe::send("http.401.wrong", message(&json!({})).auth(Auth::Wrong)),
        Probe::send("http.401.info", bare("GET", "/v1/info", Auth::Wrong)),
        Probe::send(
            "http.415.text",
            message(&json!({})).content_type(Some("text/plain")),
        ),
        Probe::send("http.415.none", message(&json!({})).content_type(None)),
        tool("http.json-charset", echo, json!({"message": "hi"}))
            .map(|r| r.content_type(Some("application/json; charset=utf-8"))),
        Probe::send("http.413", raw(vec![b' '; 10 * 1024 * 1024 + 1])),
        Probe::send("http.info", bare("GET", "/v1/info", Auth::Good)),
        // Messages that don't parse, in the contract's order.
        Probe::send("message.empty", raw("")),
        Probe::send("message.not-json", raw("{\"v\":")),
        Probe::send("message.array", raw("[]")),
        Probe::send("message.string", raw("\"invoke\"")),
        Probe::send("message.v1", message(&json!({"v": 1, "kind": "invoke"}))),
        Probe::send(
            "message.v-string",
            message(&json!({"v": "2", "kind": "invoke"})),
        ),
        Probe::send("message.kind", message(&json!({"v": 2, "kind": "nope"}))),
        Probe::send("message.no-kind", message(&json!({"v": 2}))),
        Probe::send(
            "message.tool-id",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {}, "input": {}, "ctx": ctx("message.tool-id")}),
            ),
        ),
        Probe::send(
            "message.tool-version",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": echo, "version": 1}, "input": {}, "ctx": ctx("message.tool-version")}),
            ),
        ),
        Probe::send(
            "message.ctx-missing",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": echo}, "input": {"message": "hi"}}),
            ),
        ),
        Probe::send(
            "message.ctx-run",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": echo}, "input": {"message": "hi"}, "ctx": {"tenantId": "t1"}}),
            ),
        ),
        Probe::send(
            "message.check-id",
            message(
                &json!({"v": 2, "kind": "check-invoke", "check": {}, "config": {}, "trace": {"runId": run_of("message.check-id"), "tenantId": "t1", "output": "x"}}),
            ),
        ),
        Probe::send(
            "message.check-config",
            message(
                &json!({"v": 2, "kind": "check-invoke", "check": {"id": "conformance.checks.min-length"}, "config": [], "trace": {"runId": run_of("message.check-config"), "tenantId": "t1", "output": "x"}}),
            ),
        ),
        // Tools: answers and every error code.
        tool("tool.echo", echo, json!({"message": "hello"})),
        tool(
            "tool.echo.unicode",
            echo,
            json!({"message": "é ✓ 🦀 \u{0}"}),
        ),
        tool("tool.echo.missing", echo, json!({})),
        tool(
            "tool.echo.extra",
            echo,
            json!({"message": "hi", "extra": 1}),
        ),
        tool("tool.echo.empty", echo, json!({"message": ""})),
        tool("tool.echo.type", echo, json!({"message": 42})),
        tool("tool.echo.null", echo, Value::Null),
        tool("tool.echo.array", echo, json!(["hi"])),
        tool(
            "tool.echo.many",
            echo,
            json!({"message": 1, "a": 1, "b": 2}),
        ),
        Probe::send(
            "tool.echo.no-input",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": echo}, "ctx": ctx("tool.echo.no-input")}),
            ),
        ),
        Probe::send(
            "tool.version.ok",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": echo, "version": "1.0.0"}, "input": {"message": "hi"}, "ctx": ctx("tool.version.ok")}),
            ),
        ),
        Probe::send(
            "tool.version.mismatch",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": echo, "version": "2.0.0"}, "input": {"message": "hi"}, "ctx": ctx("tool.version.mismatch")}),
            ),
        ),
        tool("tool.unknown", "conformance.nope", json!({})),
        tool("tool.bad-output", "conformance.bad-output", json!({})),
        tool("tool.throws", "conformance.throws", json!({})),
        tool("tool.sleep", "conformance.sleep", json!({"ms": 0})),
        tool(
            "tool.sleep.negative",
            "conformance.sleep",
            json!({"ms": -1}),
        ),
        tool(
            "tool.sleep.fraction",
            "conformance.sleep",
            json!({"ms": 1.5}),
        ),
        tool(
            "tool.sleep.integral-float",
            "conformance.sleep",
            json!({"ms": 1.0}),
        ),
        tool("tool.deadline", "conformance.sleep", json!({"ms": 60_000}))
            .map(|r| r.header("kindgi-timeout-ms", "200")),
        tool("tool.deadline.junk", echo, json!({"message": "hi"}))
            .map(|r| r.header("kindgi-timeout-ms", "soon")),
        tool(
            "tool.defaults",
            "conformance.defaults",
            json!({"name": "Ada"}),
        ),
        tool(
            "tool.defaults.partial",
            "conformance.defaults",
            json!({"name": "Ada", "options": {}}),
        ),
        tool(
            "tool.defaults.given",
            "conformance.defaults",
            json!({"name": "Ada", "greeting": "Hi", "options": {"loud": true}}),
        ),
        tool("tool.noisy", "conformance.noisy", json!({})),
        Probe::send(
            "tool.context",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.context"}, "input": {},
                "ctx": {"tenantId": "t1", "runId": run_of("tool.context"), "requestId": "req-1",
                    "idempotencyKey": "idem-1", "projectId": "p1", "orgId": "o1",
                    "settings": {"acme.weights": {"recency": 0.5}}, "env": {"REGION": "eu"},
                    "secrets": {"API_KEY": "diff-secret-value"}, "config": {"limit": 3},
                    "futureField": true}}),
            ),
        ),
        tool("tool.traceparent", echo, json!({"message": "hi"})).map(|r| {
            r.header(
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            )
        }),
        tool("tool.traceparent.zero", echo, json!({"message": "hi"})).map(|r| {
            r.header(
                "traceparent",
                "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            )
        }),
        // Hostile bodies.
        Probe::send(
            "hostile.ctx-types",
            message(
                &json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.context"}, "input": {},
                "ctx": {"tenantId": "t1", "runId": run_of("hostile.ctx-types"), "env": {"A": 1},
                    "settings": {"mode": "strict"}}}),
            ),
        ),
        Probe::send("hostile.nesting", raw(nested(129))),
        Probe::send(
            "hostile.nesting-input",
            raw(format!(
                r#"{{"v":2,"kind":"invoke","tool":{{"id":"{echo}"}},"input":{{"message":{}}},"ctx":{}}}"#,
                nested(100),
                ctx("hostile.nesting-input")
            )),
        ),
        Probe::send(
            "hostile.huge-number",
            raw(format!(
                r#"{{"v":2,"kind":"invoke","tool":{{"id":"{echo}"}},"input":{{"message":1e400}},"ctx":{}}}"#,
                ctx("hostile.huge-number")
            )),
        ),
        Probe::send(
            "hostile.lone-surrogate",
            raw(format!(
                r#"{{"v":2,"kind":"invoke","tool":{{"id":"{echo}"}},"input":{{"message":"\ud800"}},"ctx":{}}}"#,
                ctx("hostile.lone-surrogate")
            )),
        ),
        Probe::send(
            "hostile.duplicate-key",
            raw(format!(
                r#"{{"v":2,"kind":"invoke","tool":{{"id":"{echo}"}},"input":{{"message":"a","message":"b"}},"ctx":{}}}"#,
                ctx("hostile.duplicate-key")
            )),
        ),
        tool(
            "hostile.proto-key",
            echo,
            json!({"message": "hi", "__proto__": {"polluted": true}}),
        ),
        Probe::send(
            "hostile.invalid-utf8",
            raw(b"{\"v\":2,\"kind\":\"invoke\",\"tool\":{\"id\":\"\xff\"}}".to_vec()),
        ),
        Probe::send("hostile.trailing", raw(r#"{"v":2} {"v":2}"#)),
        tool(
            "hostile.big-string",
            echo,
            json!({"message": "x".repeat(1024 * 1024)}),
        ),
        // Checks.
        check(
            "check.pass",
            "conformance.checks.min-length",
            json!({"minLength": 3}),
            "hello",
        ),
        check(
            "check.fail",
            "conformance.checks.min-length",
            json!({"minLength": 10}),
            "  hi  ",
        ),
        check(
            "check.default-config",
            "conformance.checks.min-length",
            json!({}),
            "",
        ),
        check(
            "check.config-invalid",
            "conformance.checks.min-length",
            json!({"minLength": -1}),
            "hello",
        ),
        check(
            "check.config-type",
            "conformance.checks.min-length",
            json!({"minLength": "3"}),
            "hello",
        ),
        check(
            "check.throws",
            "conformance.checks.throws",
            json!({}),
            "hello",
        ),
        check(
            "check.unknown",
            "conformance.checks.nope",
            json!({}),
            "hello",
        ),
        // The caller going away.
        Probe {
            id: "tool.disconnect",
            run: run_of("tool.disconnect"),
            act: Act::Disconnect,
        },
        // A caller that half-closes with its request: a call that answers
        // at once, and one still running when the end of input comes.
        Probe {
            id: "tool.half-close.quick",
            run: run_of("tool.half-close.quick"),
            act: Act::HalfClose(message(&json!({"v": 2, "kind": "invoke",
                "tool": {"id": echo}, "input": {"message": "hi"},
                "ctx": ctx("tool.half-close.quick")}))),
        },
        Probe {
            id: "tool.half-close.running",
            run: run_of("tool.half-close.running"),
            act: Act::HalfClose(message(&json!({"v": 2, "kind": "invoke",
                "tool": {"id": "conformance.sleep"}, "input": {"ms": 300},
                "ctx": ctx("tool.half-close.running")}))),
        },
    ]
}

/// The call sent after probe number `n`, run `diff-fence-<n>`: the records
/// written after the probe and before the fence's `call` record are the
/// probe's, whatever run they name.
pub(crate) fn fence(n: usize) -> (String, Request) {
    let run = format!("diff-fence-{n}");
    let request = message(
        &json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.echo"},
        "input": {"message": "fence"}, "ctx": {"tenantId": "t1", "runId": run}}),
    );
    (run, request)
}

impl Probe {
    /// The probe with its request changed by `change`.
    fn map(mut self, change: impl FnOnce(Request) -> Request) -> Self {
        if let Act::Send(request) = self.act {
            self.act = Act::Send(change(request));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn ids_are_unique_and_no_run_is_a_fence() {
        let probes = corpus();
        let ids: HashSet<&str> = probes.iter().map(|p| p.id).collect();
        assert_eq!(ids.len(), probes.len());
        assert!(probes.iter().all(|p| !p.run.starts_with("diff-fence-")));
    }
}
