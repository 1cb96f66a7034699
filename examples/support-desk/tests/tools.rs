//! The pack's tools and check, called in-process exactly as the pack
//! service would call them (`kindgi::testing`), with the dev runtime for
//! files and pauses, and a local server standing in for the helpdesk app.

use kindgi::protocol::{ConnectionAccount, ErrorCode, Response};
use kindgi::testing::{TestContext, TestPack};
use kindgi::{CheckResult, Connection, Secret};
use kindgi_test_kit::{Reply, ScriptedServer};
use serde_json::{Value, json};
use support_desk::Settings;

/// The pack, its database in a fresh folder.
fn pack() -> (TestPack, Settings, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = Settings {
        database: dir.path().join("desk.db"),
        helpdesk_api: support_desk::tools::ticket_status::HELPDESK_API.to_owned(),
    };
    let pack = TestPack::new(support_desk::pack(&settings)).expect("a valid pack");
    (pack, settings, dir)
}

fn ticket() -> Value {
    json!({
        "customerEmail": "ana@example.com",
        "subject": "Charged twice",
        "body": "I was charged twice for order 1042.",
        "priority": "high"
    })
}

#[tokio::test]
async fn a_re_run_of_the_same_call_logs_the_ticket_once() {
    let (pack, settings, _dir) = pack();
    let call = || TestContext::new().tenant("acme").idempotency_key("key-1");
    let first = pack
        .call("support.log-ticket", ticket(), call())
        .await
        .output()
        .expect("logged");
    assert_eq!(first, json!({"ticketId": "T-000001", "created": true}));
    let again = pack
        .call("support.log-ticket", ticket(), call())
        .await
        .output()
        .expect("logged");
    assert_eq!(again, json!({"ticketId": "T-000001", "created": false}));

    let other = pack
        .call(
            "support.log-ticket",
            ticket(),
            TestContext::new().tenant("acme").idempotency_key("key-2"),
        )
        .await
        .output()
        .expect("logged");
    assert_eq!(other, json!({"ticketId": "T-000002", "created": true}));

    let db = rusqlite::Connection::open(&settings.database).expect("db");
    let rows: i64 = db
        .query_row("SELECT COUNT(*) FROM tickets", [], |r| r.get(0))
        .expect("count");
    assert_eq!(rows, 2);
}

#[tokio::test]
async fn a_ticket_without_a_valid_email_is_refused_before_the_tool_runs() {
    let (pack, _settings, _dir) = pack();
    let mut input = ticket();
    input["customerEmail"] = json!("not an email");
    input["priority"] = json!("whenever");
    let answer = pack
        .call("support.log-ticket", input, TestContext::new())
        .await;
    let error = answer.error().expect("an error");
    assert_eq!(error.code, ErrorCode::InputValidationFailed);
    let messages: Vec<&str> = error
        .issues
        .iter()
        .flatten()
        .map(|i| i.message.as_str())
        .collect();
    assert!(
        messages.contains(&"must match format \"email\""),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"must match exactly one schema in oneOf"),
        "{messages:?}"
    );
}

#[tokio::test]
async fn a_refund_quote_adds_up_its_lines_and_the_shipping() {
    let (pack, _settings, _dir) = pack();
    let input = json!({
        "ticketId": "T-000007",
        "lines": [
            {"sku": "MUG-1", "quantity": 2, "unitCents": 1250},
            {"sku": "CAP-3", "quantity": 1, "unitCents": 900},
        ],
        "shippingCents": 495,
    });
    let output = pack
        .call("support.refund-quote", input, TestContext::new())
        .await
        .output()
        .expect("a quote");
    assert_eq!(
        output,
        json!({"ticketId": "T-000007", "totalCents": 3895, "skus": ["MUG-1", "CAP-3"]})
    );
    let none = pack
        .call(
            "support.refund-quote",
            json!({"ticketId": "T-000007", "lines": []}),
            TestContext::new(),
        )
        .await;
    assert_eq!(
        none.error().expect("an error").code,
        ErrorCode::InputValidationFailed
    );
}

#[tokio::test]
async fn the_canned_reply_names_the_customer_and_topic() {
    let (pack, _settings, _dir) = pack();
    let output = pack
        .call(
            "support.canned-reply",
            json!({"customerName": "Ana", "topic": "billing"}),
            TestContext::new(),
        )
        .await
        .output()
        .expect("a reply");
    let text = output["text"].as_str().expect("text");
    assert!(text.starts_with("Hi Ana, "), "{text}");
    assert!(text.contains("your bill"), "{text}");
}

#[tokio::test]
async fn the_weekly_report_is_a_stored_pdf_with_its_page_count() {
    let (pack, _settings, _dir) = pack();
    let pack = pack.with_dev_runtime().await.expect("dev runtime");
    for key in ["a", "b"] {
        pack.call(
            "support.log-ticket",
            ticket(),
            TestContext::new().tenant("acme").idempotency_key(key),
        )
        .await
        .output()
        .expect("logged");
    }
    let output = pack
        .call(
            "support.weekly-report",
            json!({}),
            TestContext::new()
                .tenant("acme")
                .idempotency_key("report-1"),
        )
        .await
        .output()
        .expect("a report");
    assert_eq!(output["tickets"], 2);
    let file = &output["files"][0];
    assert_eq!(file["type"], "kindgi.file");
    assert_eq!(file["contentType"], "application/pdf");
    assert_eq!(file["pages"], 1);
    assert_eq!(file["name"], "support-report.pdf");
}

#[tokio::test]
async fn the_weekly_report_needs_the_runtimes_files() {
    let (pack, _settings, _dir) = pack();
    // With its idempotency key (without one, the key is what it lacks
    // first), but no dev runtime to grant files.
    let answer = pack
        .call(
            "support.weekly-report",
            json!({}),
            TestContext::new().idempotency_key("k-1"),
        )
        .await;
    let error = answer.error().expect("an error");
    assert_eq!(error.code, ErrorCode::HandlerThrow);
    assert!(
        error.message.contains("the runtime sent no files grant"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn small_refunds_are_approved_by_policy() {
    let (pack, _settings, _dir) = pack();
    let output = pack
        .call(
            "support.approve-refund",
            json!({"ticketId": "T-000001", "amountCents": 1999, "reason": "late"}),
            TestContext::new(),
        )
        .await
        .output()
        .expect("a decision");
    assert_eq!(output["approved"], true);
    assert_eq!(output["approver"], "policy");
}

#[tokio::test]
async fn a_large_refund_waits_for_a_lead() {
    let (pack, settings, _dir) = pack();
    let pack = pack.with_dev_runtime().await.expect("dev runtime");
    let answer = pack
        .call(
            "support.approve-refund",
            json!({"ticketId": "T-000001", "amountCents": 25000, "reason": "broken on arrival"}),
            TestContext::new()
                .tenant("acme")
                .idempotency_key("refund-1"),
        )
        .await;
    let Response::Pause(pause) = &answer.response else {
        panic!("expected a pause, got {answer:?}");
    };
    assert_eq!(
        pause.name.as_deref(),
        Some("a lead's approval of a $250.00 refund")
    );
    assert_eq!(pause.timeout_ms, Some(48 * 60 * 60 * 1000));

    // The link is on the approvals queue.
    let db = support_desk::db::open(&settings.database).expect("db");
    assert_eq!(
        support_desk::db::queued_approvals(&db, "acme").expect("queue"),
        ["T-000001"]
    );

    // The lead decides; the run gets the decision as the tool's output.
    let token = answer.wait_token.expect("a wait link");
    let refused = pack
        .complete_wait(&token, json!({"approved": "yes"}))
        .await
        .expect_err("the output schema guards the link");
    assert!(
        refused.starts_with("the wait link answered 400: "),
        "{refused}"
    );
    let wait = pack
        .complete_wait(
            &token,
            json!({"approved": true, "approver": "Sam", "note": "customer since 2019"}),
        )
        .await
        .expect("the wait");
    assert_eq!(
        wait.output,
        Some(json!({"approved": true, "approver": "Sam", "note": "customer since 2019"}))
    );
}

#[tokio::test]
async fn a_large_refund_without_a_wait_link_cannot_pause() {
    let (pack, _settings, _dir) = pack();
    let answer = pack
        .call(
            "support.approve-refund",
            json!({"ticketId": "T-1", "amountCents": 25000, "reason": "r"}),
            TestContext::new(),
        )
        .await;
    assert_eq!(
        answer.error().map(|e| &e.code),
        Some(&ErrorCode::PauseNotAvailable)
    );
}

/// What the helpdesk stand-in saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    line: String,
    authorization: Option<String>,
    idempotency_key: Option<String>,
    body: Value,
}

/// A helpdesk stand-in: `Bearer good` is accepted (201 `{"id": 981}`),
/// any other token refused (401).
async fn helpdesk() -> (String, ScriptedServer) {
    let server = ScriptedServer::start(|request| {
        if request.header("authorization") == Some("Bearer good") {
            Reply::json_text(201, r#"{"id":981}"#)
        } else {
            Reply::json_text(401, r#"{"error":"invalid token"}"#)
        }
    })
    .await;
    (server.url(), server)
}

/// What the helpdesk stand-in has seen so far.
fn seen(server: &ScriptedServer) -> Vec<Seen> {
    server
        .seen()
        .iter()
        .map(|request| Seen {
            line: request.line().to_owned(),
            authorization: request.header("authorization").map(str::to_owned),
            idempotency_key: request.header("idempotency-key").map(str::to_owned),
            body: request.json(),
        })
        .collect()
}

fn helpdesk_connection(token: &str) -> Connection {
    Connection {
        connection_id: "conn_1".to_owned(),
        app: "acme-helpdesk".to_owned(),
        app_name: "Acme Helpdesk".to_owned(),
        access_token: Secret::new(token),
        account: ConnectionAccount {
            id: "agent-7".to_owned(),
            label: "support@acme.example".to_owned(),
        },
        expires_at: None,
    }
}

#[tokio::test]
async fn a_reply_is_posted_through_the_helpdesk_connection() {
    let (pack, _settings, _dir) = pack();
    let (url, helpdesk) = helpdesk().await;
    let output = pack
        .call(
            "support.post-reply",
            json!({"ticketId": "HD 77", "message": "Refund is on its way."}),
            TestContext::new()
                .env("HELPDESK_URL", &url)
                .idempotency_key("reply-1")
                .connection("helpdesk", helpdesk_connection("good")),
        )
        .await
        .output()
        .expect("posted");
    assert_eq!(output, json!({"replyId": "981"}));
    let seen = seen(&helpdesk);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].line, "POST /api/tickets/HD%2077/replies HTTP/1.1");
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer good"));
    assert_eq!(seen[0].idempotency_key.as_deref(), Some("reply-1"));
    assert_eq!(
        seen[0].body,
        json!({"body": "Refund is on its way.", "public": true})
    );
}

#[tokio::test]
async fn a_refused_token_answers_connection_rejected() {
    let (pack, _settings, _dir) = pack();
    let (url, _seen) = helpdesk().await;
    let answer = pack
        .call(
            "support.post-reply",
            json!({"ticketId": "77", "message": "Hello"}),
            TestContext::new()
                .env("HELPDESK_URL", &url)
                .connection("helpdesk", helpdesk_connection("expired")),
        )
        .await;
    let error = answer.error().expect("an error");
    assert_eq!(error.code, ErrorCode::ConnectionRejected);
}

#[tokio::test]
async fn a_reply_without_a_connection_says_so() {
    let (pack, _settings, _dir) = pack();
    let answer = pack
        .call(
            "support.post-reply",
            json!({"ticketId": "77", "message": "Hello"}),
            TestContext::new(),
        )
        .await;
    let error = answer.error().expect("an error");
    assert_eq!(error.code, ErrorCode::HandlerThrow);
    assert!(
        error
            .message
            .contains(r#"the call carries no connection "helpdesk""#),
        "{}",
        error.message
    );
}

/// The pack asking a helpdesk stand-in at `url` for ticket statuses:
/// `Bearer good` gets `{"status": "open", "assignee": "Ana"}`, any other
/// token 401.
async fn status_desk() -> (TestPack, ScriptedServer, tempfile::TempDir) {
    let server = ScriptedServer::start(|request| {
        if request.header("authorization") == Some("Bearer good") {
            Reply::json_text(200, r#"{"status":"open","assignee":"Ana"}"#)
        } else {
            Reply::json_text(401, r#"{"error":"invalid token"}"#)
        }
    })
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = Settings {
        database: dir.path().join("desk.db"),
        helpdesk_api: format!("{}/api", server.url()),
    };
    let pack = TestPack::new(support_desk::pack(&settings)).expect("a valid pack");
    (pack, server, dir)
}

#[tokio::test]
async fn the_ticket_status_is_the_helpdesks_answer() {
    let (pack, server, _dir) = status_desk().await;
    let output = pack
        .call(
            "support.ticket-status",
            json!({"ticketId": "HD 77"}),
            TestContext::new().secret("HELPDESK_TOKEN", "good"),
        )
        .await
        .output()
        .expect("an answer");
    assert_eq!(output, json!({"status": "open", "assignee": "Ana"}));
    let seen = seen(&server);
    assert_eq!(seen[0].line, "GET /api/tickets/HD%2077/status HTTP/1.1");
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer good"));
}

#[tokio::test]
async fn a_refused_status_request_fails_without_the_token() {
    let (pack, _server, _dir) = status_desk().await;
    let answer = pack
        .call(
            "support.ticket-status",
            json!({"ticketId": "77"}),
            TestContext::new().secret("HELPDESK_TOKEN", "expired-token"),
        )
        .await;
    let error = answer.error().expect("an error");
    assert_eq!(error.code, ErrorCode::HandlerThrow);
    assert_eq!(
        error.message,
        r#"Handler for tool "support.ticket-status" threw: Error: http-tool "support.ticket-status" got status 401 Unauthorized — {"error":"invalid token"}"#
    );
}

#[test]
fn the_check_halts_on_a_card_number() {
    let (pack, _settings, _dir) = pack();
    let leaked = pack.check(
        "support.no-card-numbers",
        json!({}),
        json!({"output": "Your card 4111 1111 1111 1111 was refunded."}),
    );
    assert_eq!(
        leaked.response,
        Response::check_result(CheckResult::fail(
            "the output shows what looks like a payment card number"
        ))
    );
    let fine = pack.check(
        "support.no-card-numbers",
        json!({"minDigits": 13}),
        json!({"output": "Ticket T-000042 is solved."}),
    );
    assert_eq!(fine.response, Response::check_result(CheckResult::pass()));
    let bad_config = pack.check(
        "support.no-card-numbers",
        json!({"minDigits": 3}),
        json!({"output": ""}),
    );
    assert_eq!(
        bad_config.error().map(|e| &e.code),
        Some(&ErrorCode::InputValidationFailed)
    );
}

#[test]
fn a_trace_part_of_another_type_hides_no_card_number() {
    let (pack, _settings, _dir) = pack();
    for (field, value) in [
        ("toolCalls", json!(null)),
        ("toolResults", json!("x")),
        ("modelCalls", json!({})),
    ] {
        let mut trace =
            json!({"runId": "r", "tenantId": "t", "output": "card 4111 1111 1111 1111"});
        trace[field] = value;
        let answer = pack.check("support.no-card-numbers", json!({}), trace);
        assert_eq!(
            answer.response,
            Response::check_result(CheckResult::fail(
                "the output shows what looks like a payment card number"
            )),
            "{field}"
        );
    }
}

#[test]
fn the_index_lists_every_primitive() {
    let settings = Settings {
        database: "unused.db".into(),
        helpdesk_api: support_desk::tools::ticket_status::HELPDESK_API.to_owned(),
    };
    let config = kindgi::index::read_pack_config(env!("CARGO_MANIFEST_DIR").as_ref())
        .expect("the pack's config");
    let pins = kindgi::index::Pins {
        artifact_version: "test".to_owned(),
        published_at: "2026-01-01T00:00:00.000Z".to_owned(),
    };
    let index = kindgi::index::build_index(&support_desk::pack(&settings), &config, &pins)
        .expect("an index");
    assert_eq!(index.pack_id, "support");
    let tools: Vec<(&str, &str)> = index
        .tools
        .iter()
        .map(|t| (t.id.as_str(), t.module_path.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            ("support.approve-refund", "src/tools/mod.rs"),
            ("support.canned-reply", "src/tools/canned_reply.rs"),
            ("support.log-ticket", "src/tools/mod.rs"),
            ("support.post-reply", "src/tools/post_reply.rs"),
            ("support.refund-quote", "src/tools/refund_quote.rs"),
            ("support.ticket-status", "src/tools/ticket_status.rs"),
            ("support.weekly-report", "src/tools/weekly_report.rs"),
        ]
    );
    let by_id = |id: &str| index.tools.iter().find(|t| t.id == id).expect(id);
    assert!(by_id("support.approve-refund").pauses);
    assert!(by_id("support.weekly-report").stores_files);
    assert_eq!(
        by_id("support.post-reply")
            .needs_spec
            .as_ref()
            .map(|n| n["connections"].clone()),
        Some(json!({"helpdesk": {"app": "acme-helpdesk", "scopes": ["tickets.write"]}}))
    );
    assert_eq!(index.guardrails[0].id, "support.no-card-numbers");
    assert_eq!(index.agents[0].id, "support.triage");
    let agent_tools: Vec<(&str, &str)> = index.agents[0]
        .tools
        .iter()
        .map(|t| (t.id.as_str(), t.version.as_str()))
        .collect();
    assert_eq!(
        agent_tools,
        [
            ("support.log-ticket", "1.0.0"),
            ("support.canned-reply", "1.0.0"),
            ("support.post-reply", "1.0.0"),
            ("support.approve-refund", "1.0.0"),
            ("support.weekly-report", "1.0.0"),
            ("support.refund-quote", "1.0.0"),
            ("support.ticket-status", "1.0.0"),
        ]
    );
    assert_eq!(
        index.agents[0].guardrails,
        Some(vec!["support.no-card-numbers".to_owned()])
    );
    let flows: Vec<&str> = index.flows.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(flows, ["support.intake", "support.refund"]);
}
