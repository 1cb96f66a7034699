//! Wait links over HTTP against the real `kindgi runtime` process.

mod common;

use std::time::Duration;

use common::Runtime;
use reqwest::Method;
use serde_json::{Value, json};

fn schema() -> Value {
    json!({"type": "object", "required": ["picked"], "properties": {"picked": {"type": "boolean"}}, "additionalProperties": false})
}

async fn open(rt: &Runtime, key: &str) -> Value {
    rt.open_call(json!({"store": false, "read": false, "pauses": true, "idempotencyKey": key, "outputSchema": schema()}))
        .await
}

async fn post(rt: &Runtime, url: &str, body: &str) -> common::Answer {
    let resp = rt
        .http
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("post");
    common::Answer::of(resp).await
}

fn url(call: &Value) -> String {
    call["waitToken"]["url"]
        .as_str()
        .expect("waitToken.url")
        .to_owned()
}

#[tokio::test]
async fn a_wait_completes_once() {
    let rt = Runtime::start(&[]);
    let call = open(&rt, "k1").await;
    let wait_id = call["waitToken"]["id"].as_str().expect("id").to_owned();
    assert!(url(&call).starts_with(&format!("{}/v1/waits/kgi_wl_", rt.url)));
    let call_id = call["callId"].as_str().expect("callId");
    let (status, paused) = rt
        .admin(
            Method::POST,
            &format!("/v1/dev/calls/{call_id}/pause"),
            Some(json!({"timeoutMs": 60_000, "name": "pickup"})),
        )
        .await;
    assert_eq!(
        (status, &paused["state"], &paused["name"]),
        (200, &json!("waiting"), &json!("pickup"))
    );

    // A long-poll that the answer ends.
    let poll = {
        let (http, url) = (
            rt.http.clone(),
            format!("{}/v1/dev/waits/{wait_id}?waitMs=10000", rt.url),
        );
        tokio::spawn(async move {
            http.get(url)
                .bearer_auth(common::ADMIN)
                .send()
                .await
                .expect("poll")
                .json::<Value>()
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let first = post(&rt, &url(&call), r#"{"picked":true}"#).await;
    assert_eq!(
        (first.status, first.json()),
        (
            200,
            json!({"waitId": wait_id, "state": "completed", "alreadyComplete": false})
        )
    );
    let polled = poll.await.expect("join").expect("json");
    assert_eq!(
        (&polled["state"], &polled["output"]),
        (&json!("completed"), &json!({"picked": true}))
    );

    // Twice: told it is complete, and nothing changes.
    let second = post(&rt, &url(&call), r#"{"picked":false}"#).await;
    assert_eq!(
        (second.status, second.json()),
        (
            200,
            json!({"waitId": wait_id, "state": "completed", "alreadyComplete": true})
        )
    );
    let (_, now) = rt
        .admin(Method::GET, &format!("/v1/dev/waits/{wait_id}"), None)
        .await;
    assert_eq!(now["output"], json!({"picked": true}));
}

#[tokio::test]
async fn an_invalid_body_is_400_and_changes_nothing() {
    let rt = Runtime::start(&[]);
    let call = open(&rt, "k1").await;
    post(&rt, &url(&call), "not json")
        .await
        .assert_error(400, "bad-input");
    let invalid = post(&rt, &url(&call), r#"{"picked":"yes","extra":1}"#).await;
    let body = invalid.assert_error(400, "output-invalid");
    let issues = body["error"]["details"]["issues"]
        .as_array()
        .expect("issues");
    let mut found: Vec<(String, String)> = issues
        .iter()
        .map(|i| {
            (
                i["instancePath"].as_str().unwrap_or("?").to_owned(),
                i["keyword"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("".to_owned(), "additionalProperties".to_owned()),
            ("/picked".to_owned(), "type".to_owned())
        ]
    );
    let wait_id = call["waitToken"]["id"].as_str().expect("id");
    let (_, wait) = rt
        .admin(Method::GET, &format!("/v1/dev/waits/{wait_id}"), None)
        .await;
    assert_eq!(wait["state"], "open");
    assert!(wait.get("output").is_none());
    // Unknown and mangled links.
    post(&rt, &format!("{}/v1/waits/kgi_wl_00_00", rt.url), "{}")
        .await
        .assert_error(404, "wait-not-found");
    let link = url(&call);
    let flipped = if link.ends_with('0') { '1' } else { '0' };
    let wrong_secret = format!("{}{flipped}", &link[..link.len() - 1]);
    post(&rt, &wrong_secret, r#"{"picked":true}"#)
        .await
        .assert_error(404, "wait-not-found");
}

#[tokio::test]
async fn a_wait_times_out() {
    let rt = Runtime::start(&[]);
    let call = open(&rt, "k1").await;
    let call_id = call["callId"].as_str().expect("callId");
    let wait_id = call["waitToken"]["id"].as_str().expect("id");
    rt.admin(
        Method::POST,
        &format!("/v1/dev/calls/{call_id}/pause"),
        Some(json!({"timeoutMs": 200})),
    )
    .await;
    // A long-poll wakes when the time passes.
    let started = std::time::Instant::now();
    let (_, polled) = rt
        .admin(
            Method::GET,
            &format!("/v1/dev/waits/{wait_id}?waitMs=5000"),
            None,
        )
        .await;
    assert_eq!(polled["state"], "timed-out");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    post(&rt, &url(&call), r#"{"picked":true}"#)
        .await
        .assert_error(410, "wait-timed-out");
}

#[tokio::test]
async fn a_rerun_gets_a_new_link_to_the_same_wait() {
    let rt = Runtime::start(&[]);
    let first = open(&rt, "k1").await;
    let rerun = open(&rt, "k1").await;
    assert_eq!(rerun["rerun"], true);
    assert_eq!(rerun["waitToken"]["id"], first["waitToken"]["id"]);
    assert_ne!(url(&rerun), url(&first));
    let done = post(&rt, &url(&first), r#"{"picked":true}"#).await.json();
    assert_eq!(done["alreadyComplete"], false);
    let via_new = post(&rt, &url(&rerun), r#"{"picked":false}"#).await.json();
    assert_eq!(
        via_new["alreadyComplete"], true,
        "either link names the same wait"
    );
    // A different call has a different wait.
    let other = open(&rt, "k2").await;
    assert_ne!(other["waitToken"]["id"], first["waitToken"]["id"]);
    let fresh = post(&rt, &url(&other), r#"{"picked":false}"#).await.json();
    assert_eq!(fresh["alreadyComplete"], false);
}

#[tokio::test]
async fn wait_links_are_rate_limited_before_the_link_is_looked_up() {
    let rt = Runtime::start(&["--rate-limit", "3"]);
    let call = open(&rt, "k1").await;
    let guess = format!("{}/v1/waits/kgi_wl_00_00", rt.url);
    // A guessed link counts against its own budget before it is looked
    // up: the fourth guess is refused without a lookup.
    for _ in 0..3 {
        post(&rt, &guess, r#"{"picked":true}"#)
            .await
            .assert_error(404, "wait-not-found");
    }
    post(&rt, &guess, r#"{"picked":true}"#)
        .await
        .assert_rate_limited();
    // The guesses used up none of the real link's budget.
    let posted = post(&rt, &url(&call), r#"{"picked":true}"#).await;
    assert_eq!(posted.status, 200, "{}", posted.json());
    // Refused before the body is read: a client that declares a body and
    // sends none has its 429 at once.
    let addr = rt.url.trim_start_matches("http://");
    let mut raw = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /v1/waits/kgi_wl_00_00 HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    );
    tokio::io::AsyncWriteExt::write_all(&mut raw, head.as_bytes())
        .await
        .expect("write");
    let mut answer = [0u8; 12];
    tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read_exact(&mut raw, &mut answer),
    )
    .await
    .expect("answered without the body")
    .expect("read");
    assert_eq!(&answer, b"HTTP/1.1 429");
    // The wait was answered by its own link, and by nothing else.
    let (status, wait) = rt
        .admin(
            Method::GET,
            &format!(
                "/v1/dev/waits/{}",
                call["waitToken"]["id"].as_str().expect("id")
            ),
            None,
        )
        .await;
    assert_eq!((status, &wait["state"]), (200, &json!("completed")));
}
