//! Secrets under load and on every error path: none ever reaches stdout,
//! stderr or an answer; the pack token is gone from the process
//! environment, `/proc/<pid>/environ` included.

use std::time::Duration;

use kindgi_reliability::http::{self, Connection, Outcome, Request};
use kindgi_reliability::secrets::Sentinels;
use kindgi_reliability::{PackService, ServiceOptions, invoke, proc};
use kindgi_test_kit::{Reply, ScriptedServer};
use serde_json::{Value, json};

use crate::common::{heavy, start};

const WAIT: Duration = Duration::from_secs(30);

/// Nothing listens on port 1: a store there fails to connect.
const REFUSING_FILES_URL: &str = "http://127.0.0.1:1/v1/tool-files";

/// An invoke of `tool` with `input` whose context carries every sentinel.
fn call(service: &PackService, s: &Sentinels, tool: &str, input: Value) -> Request {
    call_with_files(service, s, tool, input, REFUSING_FILES_URL)
}

/// As [`call`], with the files URL `files_url`.
fn call_with_files(
    service: &PackService,
    s: &Sentinels,
    tool: &str,
    input: Value,
    files_url: &str,
) -> Request {
    let message = json!({
        "v": 2,
        "kind": "invoke",
        "tool": {"id": tool},
        "input": input,
        "ctx": s.ctx("run-secrets", files_url),
    });
    invoke::invoke(service.token(), &message)
}

/// Sends `request` with a `kindgi-timeout-ms`.
fn with_timeout(request: Request, ms: u64) -> Request {
    request.header("kindgi-timeout-ms", &ms.to_string())
}

/// Every kind of call that ends in an error, each with its own sentinels,
/// and the code it must end with.
fn error_calls(
    service: &PackService,
    tag: &str,
    silent_url: &str,
) -> Vec<(Sentinels, Request, &'static str)> {
    let mut calls = Vec::new();
    let mut add = |what: &str, build: &dyn Fn(&Sentinels) -> Request, code: &'static str| {
        let s = Sentinels::new(&format!("{tag}-{what}"));
        let request = build(&s);
        calls.push((s, request, code));
    };
    add(
        "throws",
        &|s| call(service, s, "stress.throws", json!({})),
        "handler-throw",
    );
    add(
        "panics",
        &|s| call(service, s, "stress.panics", json!({})),
        "handler-throw",
    );
    add(
        "blocking-panics",
        &|s| call(service, s, "stress.blocking-panics", json!({})),
        "handler-throw",
    );
    add(
        "deadline",
        &|s| with_timeout(call(service, s, "stress.sleep", json!({"ms": 10_000})), 100),
        "deadline-exceeded",
    );
    add(
        "invalid-input",
        &|s| call(service, s, "stress.sleep", json!({"ms": "soon"})),
        "input-validation-failed",
    );
    add(
        "store-fails",
        &|s| {
            call(
                service,
                s,
                "stress.store",
                json!({"text": "hello", "name": "a.txt"}),
            )
        },
        "handler-throw",
    );
    add(
        "store-deadline",
        &|s| {
            // A files URL that accepts and never answers: the store runs
            // into the call's deadline.
            with_timeout(
                call_with_files(
                    service,
                    s,
                    "stress.store",
                    json!({"text": "hello"}),
                    silent_url,
                ),
                300,
            )
        },
        "deadline-exceeded",
    );
    add(
        "unknown-tool",
        &|s| call(service, s, "stress.nope", json!({})),
        "tool-not-in-pack",
    );
    add(
        "bad-ctx-type",
        &|s| {
            let mut message = invoke::tool_message("stress.sleep", json!({"ms": 1}));
            message["ctx"]["connections"] = json!([s.access_token, s.secret]);
            message["ctx"]["secrets"] = json!({"API_KEY": s.secret});
            invoke::invoke(service.token(), &message)
        },
        "malformed-message",
    );
    add(
        "bad-files-grant",
        &|s| {
            let mut message = invoke::tool_message("stress.sleep", json!({"ms": 1}));
            message["ctx"]["toolFiles"] = json!({"url": 5, "token": s.files_token});
            message["ctx"]["waitToken"] = json!({"id": 1, "url": s.wait_url});
            invoke::invoke(service.token(), &message)
        },
        "malformed-message",
    );
    add(
        "bad-json",
        &|s| {
            Request::post("/v1/invoke")
                .token(service.token())
                .header("content-type", "application/json")
                .body(format!(r#"{{"v":2,"secrets":"{}""#, s.secret).into_bytes())
        },
        "malformed-message",
    );
    add(
        "check-panics",
        &|s| {
            let message = json!({
                "v": 2, "kind": "check-invoke", "check": {"id": "stress.checks.panics"},
                "config": {"key": s.secret}, "trace": {"output": s.access_token}
            });
            invoke::invoke(service.token(), &message)
        },
        "handler-throw",
    );
    calls
}

/// How many `stress.sleep` handlers have begun (a debug record each).
fn sleeps_begun(records: &[Value]) -> usize {
    records
        .iter()
        .filter(|r| r["message"] == "stress.sleep began")
        .count()
}

/// Every sentinel of `sets`, and the pack token, absent from `text`.
fn assert_absent(sets: &[&Sentinels], token: &str, text: &str, where_: &str) {
    for s in sets {
        let found = s.found_in(text);
        assert!(found.is_empty(), "{where_} shows {found:?}");
    }
    assert!(!text.contains(token), "{where_} shows the pack token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_secret_reaches_logs_or_answers_under_load_and_errors() {
    let _heavy = heavy().await;
    // A files URL that never answers, for the store that meets its deadline.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let silent_url = format!(
        "http://{}/v1/tool-files",
        silent.local_addr().expect("addr")
    );
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            held.push(stream);
            if held.len() > 1000 {
                break;
            }
        }
    });
    // Debug records too: the handlers say when they began, and no secret
    // may reach those either.
    let service = start(
        &ServiceOptions::default()
            .max_concurrency(64)
            .env("KINDGI_LOG_LEVEL", "debug"),
    );
    let mut all_sets = Vec::new();
    let mut answers = String::new();
    // Eight rounds of every error path, all at once.
    let mut tasks = Vec::new();
    for round in 0..8 {
        for (s, request, code) in error_calls(&service, &format!("r{round}"), &silent_url) {
            let addr = service.addr();
            tasks.push(tokio::spawn(async move {
                let outcome = http::exchange(addr, &request, WAIT).await;
                (code, outcome)
            }));
            all_sets.push(s);
        }
    }
    for task in tasks {
        let (code, outcome) = task.await.expect("task");
        let answer = outcome.expect_answer(code);
        assert_eq!(answer.status, 200, "{code}: {}", answer.text());
        if code == "deadline-exceeded" && answer.json_or_null()["toolId"] == "stress.store" {
            // Under this load a starved worker may still let the store's own
            // timeout (100 ms past the deadline, F2) answer first; the quiet
            // case is `a_store_past_its_deadline_is_deadline_exceeded`.
            assert!(
                matches!(
                    answer.json_or_null()["code"].as_str(),
                    Some("deadline-exceeded" | "handler-throw")
                ),
                "{}",
                answer.text()
            );
        } else {
            assert_eq!(answer.json_or_null()["code"], code, "{}", answer.text());
        }
        answers.push_str(&format!("{:?}\n{}\n", answer.headers, answer.text()));
    }
    // Cancelled: the caller goes away mid-call, once its handler began.
    for i in 0..8 {
        let s = Sentinels::new(&format!("cancel-{i}"));
        let before = sleeps_begun(&service.records());
        let request = call(&service, &s, "stress.sleep", json!({"ms": 10_000}));
        let mut conn = Connection::open(service.addr()).await.expect("connect");
        conn.send(&request.to_bytes()).await.expect("send");
        let began = tokio::task::block_in_place(|| {
            service.wait_records(|records| sleeps_begun(records) > before, WAIT)
        });
        assert!(began, "the cancelled call's handler began");
        drop(conn);
        all_sets.push(s);
    }
    // Refused: overloaded and draining, with a bad token, and too large.
    // A wrong token that is itself a secret: refused, never echoed.
    let s = Sentinels::new("unauthorized");
    let message = json!({"v": 2, "kind": "invoke", "tool": {"id": "stress.sleep"},
        "input": {"ms": 1}, "ctx": s.ctx("run-secrets", REFUSING_FILES_URL)});
    let answer = http::exchange(service.addr(), &invoke::invoke(&s.secret, &message), WAIT)
        .await
        .expect_answer("401");
    assert_eq!(answer.status, 401);
    answers.push_str(&answer.text());
    all_sets.push(s);
    let logged = |records: &[Value]| {
        let cancelled = records
            .iter()
            .filter(|r| r["kind"] == "call" && r["outcome"] == "cancelled")
            .count();
        let panics = records.iter().filter(|r| r["kind"] == "panic").count();
        cancelled >= 8 && panics >= 8
    };
    let logged = tokio::task::block_in_place(|| service.wait_records(logged, WAIT));
    assert!(logged, "the cancelled calls and the panics were logged");
    let sets: Vec<&Sentinels> = all_sets.iter().collect();
    assert_absent(&sets, service.token(), &answers, "an answer");
    assert_absent(&sets, service.token(), &service.output(), "stdout/stderr");
    holder.abort();
}

/// A handler that logs its secret, its connection and its whole context
/// through `tracing` (`?` on each): the record is written, each credential
/// in it redacted, none of their values anywhere in the output.
#[tokio::test]
async fn a_handler_logging_its_credentials_logs_them_redacted() {
    let service = start(&ServiceOptions::default());
    let s = Sentinels::new("logged");
    let answer = http::exchange(
        service.addr(),
        &call(&service, &s, "stress.log-context", json!({})),
        WAIT,
    )
    .await
    .expect_answer("log-context");
    assert_eq!(answer.json_or_null()["kind"], "result", "{}", answer.text());
    let record = service
        .wait_record_where(|r| r["message"] == "stress.log-context record", WAIT)
        .expect("the handler's record");
    // Its key looks secret: the value goes whole (it was `Some(Secret(***))`).
    assert_eq!(record["secret"], "[redacted]", "{record}");
    let connection = record["connection"].as_str().expect("a string");
    assert!(connection.contains("access_token: Secret(***)"), "{record}");
    let context = record["context"].as_str().expect("a string");
    assert!(context.contains("API_KEY"), "names its secrets: {record}");
    assert_absent(&[&s], service.token(), &answer.text(), "the answer");
    // The context's env values are not secrets (the protocol says so of
    // secrets, connections and the files grant only): the handler's own
    // `?ctx` shows them, as it would any setting.
    assert!(context.contains(&s.env_value), "{record}");
    let output = service.output();
    let leaked: Vec<String> = s
        .found_in(&output)
        .into_iter()
        .filter(|found| *found != s.env_value)
        .collect();
    assert!(leaked.is_empty(), "stdout/stderr shows {leaked:?}");
    assert!(
        !output.contains(service.token()),
        "stdout/stderr shows the token"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_no_secret() {
    let mut service = start(
        &ServiceOptions::default()
            .max_concurrency(1)
            .env("KINDGI_LOG_LEVEL", "debug"),
    );
    let s = Sentinels::new("refused");
    let hold = {
        let request = call(&service, &s, "stress.sleep", json!({"ms": 1500}));
        let addr = service.addr();
        tokio::spawn(async move { http::exchange(addr, &request, WAIT).await })
    };
    // The held call runs: the one slot is taken.
    let held_runs = tokio::task::block_in_place(|| {
        service.wait_records(|records| sleeps_begun(records) == 1, WAIT)
    });
    assert!(held_runs, "the held call began");
    let overloaded = http::exchange(
        service.addr(),
        &call(&service, &s, "stress.sleep", json!({"ms": 1})),
        WAIT,
    )
    .await
    .expect_answer("overloaded");
    assert_eq!(overloaded.status, 503);
    service.sigterm();
    let draining = tokio::task::block_in_place(|| service.wait_record("draining", WAIT));
    assert!(draining.is_some(), "the service began draining");
    let draining = http::exchange(
        service.addr(),
        &call(&service, &s, "stress.sleep", json!({"ms": 1})),
        WAIT,
    )
    .await;
    let held = hold.await.expect("held call");
    let status = tokio::task::block_in_place(|| service.wait_exit(Duration::from_secs(15)));
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let mut answers = format!("{overloaded:?}");
    if let Outcome::Answered(r) = &draining {
        assert_eq!(r.status, 503);
        answers.push_str(&r.text());
    }
    answers.push_str(&held.expect_answer("held").text());
    assert_absent(&[&s], service.token(), &answers, "an answer");
    assert_absent(&[&s], service.token(), &service.output(), "stdout/stderr");
}

#[tokio::test]
async fn the_pack_token_is_gone_from_the_environment_and_proc() {
    // Padded: the service trims it, and must wipe the whole entry.
    let token = format!("tok-{}", Sentinels::new("token").secret);
    let dropped = Sentinels::new("dropped").secret;
    let service = start(
        &ServiceOptions::default()
            .token(&format!(" {token}\n"))
            .env("AWS_SECRET_ACCESS_KEY", &dropped)
            .env("STRESS_DECLARED", "kept"),
    );
    let environ = proc::environ(service.pid()).expect("/proc/<pid>/environ");
    assert!(
        !proc::contains(&environ, token.as_bytes()),
        "token in environ"
    );
    assert!(
        !proc::contains(&environ, b"KINDGI_PACK_SERVICE_TOKEN"),
        "token's name in environ"
    );
    assert!(
        !proc::contains(&environ, dropped.as_bytes()),
        "a dropped variable's value in environ"
    );
    assert!(proc::contains(&environ, b"STRESS_DECLARED=kept"));
    let cmdline = proc::cmdline(service.pid()).expect("cmdline");
    assert!(!proc::contains(&cmdline, token.as_bytes()));
    for needle in [
        token.as_str(),
        "KINDGI_PACK_SERVICE_TOKEN",
        dropped.as_str(),
    ] {
        let answer = http::exchange(
            service.addr(),
            &Request::post("/v1/invoke")
                .token(&token)
                .json(&invoke::tool_message(
                    "stress.environ",
                    json!({"needle": needle}),
                )),
            WAIT,
        )
        .await
        .expect_answer("environ");
        let output = &answer.json_or_null()["output"];
        assert_eq!(output["inEnv"], false, "{needle}: {output}");
        assert_eq!(output["inProcEnviron"], false, "{needle}: {output}");
    }
    assert!(!service.output().contains(&token));
    assert!(!service.output().contains(&dropped));
}

/// A store that runs into the call's deadline ends `deadline-exceeded`
/// (F2: it used to end `handler-throw`, the store's own timeout answering
/// first), and the files token shows nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_past_its_deadline_is_deadline_exceeded() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}/v1/tool-files",
        silent.local_addr().expect("addr")
    );
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            held.push(stream);
            if held.len() > 10 {
                break;
            }
        }
    });
    let service = start(&ServiceOptions::default());
    for i in 0..5 {
        let s = Sentinels::new(&format!("store-deadline-{i}"));
        let request = with_timeout(
            call_with_files(&service, &s, "stress.store", json!({"text": "hello"}), &url),
            300,
        );
        let answer = http::exchange(service.addr(), &request, WAIT)
            .await
            .expect_answer("store past its deadline");
        assert_eq!(
            answer.json_or_null()["code"],
            "deadline-exceeded",
            "{}",
            answer.text()
        );
        assert_absent(&[&s], service.token(), &answer.text(), "an answer");
    }
    holder.abort();
}

/// A files store whose answer is a redirect to another origin: the files
/// client follows it nowhere (the other origin gets neither the bytes nor,
/// in `Referer`, the files URL), and the handler is told its store failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_redirect_to_another_origin_is_not_followed() {
    let service = start(&ServiceOptions::default());
    // The other origin records whatever reaches it.
    let other = ScriptedServer::start(|_| Reply::Answer {
        status: 500,
        headers: Vec::new(),
        body: Vec::new(),
    })
    .await;
    let other_url = format!("{}/collect", other.url());
    // The store answers every request with a 307 to the other origin.
    let store = ScriptedServer::start(move |_| Reply::Answer {
        status: 307,
        headers: vec![("location".to_owned(), other_url.clone())],
        body: Vec::new(),
    })
    .await;
    let store_url = format!("{}/v1/tool-files/secret-path-of-the-call", store.url());
    let message = json!({
        "v": 2, "kind": "invoke", "tool": {"id": "stress.store"},
        "input": {"text": "the file's private bytes", "name": "a.txt"},
        "ctx": {
            "tenantId": "t1", "runId": "run-redirect",
            "idempotencyKey": "00000000-0000-5000-8000-000000000002",
            "toolFiles": {"url": store_url, "token": "files-token-sentinel"}
        }
    });
    let answer = http::exchange(
        service.addr(),
        &invoke::invoke(service.token(), &message),
        WAIT,
    )
    .await
    .expect_answer("the store call");
    let body = answer.json_or_null();
    // The handler answered once its store was: a retry or a followed
    // redirect would have reached the servers (which record a request
    // before they answer it) by now.
    let sent_to_store = store.seen();
    let elsewhere: Vec<String> = other
        .seen()
        .iter()
        .map(|r| format!("{}\r\n\r\n{}", r.head, String::from_utf8_lossy(&r.body)))
        .collect();
    println!("answer: {body}\nsent to the other origin: {elsewhere:#?}");
    assert_eq!(sent_to_store.len(), 1, "the store was asked once");
    assert!(
        elsewhere.is_empty(),
        "the other origin was sent: {elsewhere:#?}"
    );
    for request in &sent_to_store {
        let text = request.head.to_ascii_lowercase();
        assert!(!text.contains("\r\nreferer:"), "{text}");
    }
    assert_eq!(invoke::error_code(&body), Some("handler-throw"), "{body}");
    let said = body["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("redirect") && !said.contains("secret-path-of-the-call"),
        "{said}"
    );
}
