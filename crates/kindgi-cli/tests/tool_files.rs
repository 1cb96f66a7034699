//! The tool-files API over HTTP against the real `kindgi runtime` process.

mod common;

use std::time::Duration;

use common::{Runtime, pdf, png, sha256_hex, token};
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn stores_and_reads_a_file_with_its_exact_value() {
    let rt = Runtime::start(&[]);
    let call = rt.open_call(json!({})).await;
    let tok = token(&call);
    assert!(tok.starts_with("kgi_tf_"));
    assert_eq!(
        call["toolFiles"]["url"],
        format!("{}/v1/tool-files", rt.url)
    );
    let bytes = png(1);
    let answer = rt
        .store(
            &tok,
            &bytes,
            Some("image/png"),
            Some("r%C3%A9sum%C3%A9%20v1.png"),
        )
        .await;
    assert_eq!(answer.status, 200);
    assert!(answer.header("x-request-id").is_some());
    let file = answer.json()["file"].clone();
    let id = file["artifactId"].as_str().expect("artifactId").to_owned();
    assert_eq!(
        file,
        json!({"type": "kindgi.file", "artifactId": id, "name": "résumé v1.png", "contentType": "image/png",
               "size": bytes.len(), "sha256": sha256_hex(&bytes)})
    );
    let read = rt.read(&tok, &id).await;
    assert_eq!(read.status, 200);
    assert_eq!(
        read.header("content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(read.bytes, bytes);
    // An empty name is unnamed.
    let unnamed = rt
        .store(&tok, b"plain text", Some("text/plain"), Some(""))
        .await
        .json();
    assert!(unnamed["file"].get("name").is_none(), "{unnamed}");
    assert_eq!(unnamed["file"]["contentType"], "text/plain; charset=utf-8");
}

#[tokio::test]
async fn same_bytes_in_a_call_and_its_rerun_answer_the_first_file() {
    let rt = Runtime::start(&[]);
    let first = rt.open_call(json!({"idempotencyKey": "k-1"})).await;
    assert_eq!(first["rerun"], false);
    let a = rt
        .store(&token(&first), &png(2), None, Some("a.png"))
        .await
        .json();
    let again = rt
        .store(&token(&first), &png(2), Some("image/png"), Some("b.png"))
        .await
        .json();
    assert_eq!(
        again, a,
        "same bytes, same call: the first file, name included"
    );
    let rerun = rt.open_call(json!({"idempotencyKey": "k-1"})).await;
    assert_eq!(rerun["rerun"], true);
    assert_eq!(rerun["callId"], first["callId"]);
    assert_ne!(token(&rerun), token(&first));
    let after = rt.store(&token(&rerun), &png(2), None, None).await.json();
    assert_eq!(after, a, "a re-run answers the first file");
    // Another call (another key) stores the same bytes as its own file.
    let other = rt.open_call(json!({"idempotencyKey": "k-2"})).await;
    let theirs = rt.store(&token(&other), &png(2), None, None).await.json();
    assert_ne!(theirs["file"]["artifactId"], a["file"]["artifactId"]);
    assert_eq!(theirs["file"]["sha256"], a["file"]["sha256"]);
}

#[tokio::test]
async fn the_eleventh_file_is_not_stored() {
    let rt = Runtime::start(&[]);
    let tok = token(&rt.open_call(json!({})).await);
    for i in 0..10 {
        let answer = rt
            .store(&tok, format!("file number {i}").as_bytes(), None, None)
            .await;
        assert!(
            answer.json()["file"].is_object(),
            "file {i}: {:?}",
            answer.json()
        );
    }
    let eleventh = rt.store(&tok, b"file number 10", None, None).await;
    assert_eq!(
        (eleventh.status, eleventh.json()),
        (200, json!({"notStored": "limit"}))
    );
    // The first file's bytes again still answer the first file.
    let repeat = rt.store(&tok, b"file number 0", None, None).await.json();
    assert!(repeat["file"].is_object(), "{repeat}");
}

#[tokio::test]
async fn the_bytes_decide_the_type() {
    let rt = Runtime::start(&[]);
    let tok = token(&rt.open_call(json!({})).await);
    let as_pdf = rt
        .store(&tok, &png(3), Some("application/pdf"), None)
        .await
        .json();
    assert_eq!(
        as_pdf,
        json!({"notStored": "type"}),
        "a PNG sent as application/pdf"
    );
    let doc = pdf(3);
    let stored = rt
        .store(&tok, &doc, Some("application/pdf"), None)
        .await
        .json();
    assert_eq!(stored["file"]["contentType"], "application/pdf");
    assert_eq!(stored["file"]["pages"], 3);
    let text = rt
        .store(
            &tok,
            "héllo, wörld\n".as_bytes(),
            Some("text/markdown; charset=utf-8"),
            None,
        )
        .await
        .json();
    assert_eq!(text["file"]["contentType"], "text/plain; charset=utf-8");
    let binary = rt
        .store(
            &tok,
            &[0u8, 159, 146, 150, 1, 2, 3],
            Some("application/octet-stream"),
            None,
        )
        .await
        .json();
    assert_eq!(binary, json!({"notStored": "type"}), "binary bytes");
    let lying = rt
        .store(&tok, b"just text", Some("image/png"), None)
        .await
        .json();
    assert_eq!(
        lying,
        json!({"notStored": "type"}),
        "text claiming to be a PNG"
    );
    let pageless = rt
        .store(&tok, b"%PDF-1.7\n%%EOF\n", None, None)
        .await
        .json();
    assert_eq!(
        pageless,
        json!({"notStored": "type"}),
        "a PDF whose pages can't be counted"
    );
}

#[tokio::test]
async fn size_limits_by_type_and_body() {
    let rt = Runtime::start(&["--text-limit-bytes", "16", "--image-limit-bytes", "30"]);
    let tok = token(&rt.open_call(json!({})).await);
    assert!(rt.store(&tok, b"sixteen bytes!!!", None, None).await.json()["file"].is_object());
    let big = rt.store(&tok, b"seventeen bytes!!", None, None).await;
    assert_eq!(big.json(), json!({"notStored": "size"}));
    let mut image = png(4);
    image.extend_from_slice(&[0; 10]);
    assert_eq!(
        rt.store(&tok, &image, None, None).await.json(),
        json!({"notStored": "size"})
    );

    // Declared past 10 MB: 413, nothing read.
    let head = format!(
        "POST /v1/tool-files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tok}\r\nContent-Length: 20971520\r\nConnection: close\r\n\r\n"
    );
    let answer = rt.raw(head.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains(r#""code":"request-too-large""#), "{answer}");
    assert!(
        answer.contains(r#""details":{"maxBytes":10485760}"#),
        "{answer}"
    );

    // A chunked body past 10 MB: not read to its end, notStored size.
    let mut req = format!(
        "POST /v1/tool-files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tok}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    let chunk = vec![b'a'; 1024 * 1024];
    for _ in 0..11 {
        req.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        req.extend_from_slice(&chunk);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    let answer = rt.raw(&req).await;
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "{}",
        &answer[..answer.len().min(300)]
    );
    assert!(
        answer.ends_with(r#"{"notStored":"size"}"#),
        "{}",
        &answer[..answer.len().min(300)]
    );
}

#[tokio::test]
async fn a_tenants_storage_quota() {
    let rt = Runtime::start(&[]);
    let (status, body) = rt
        .admin(
            Method::PUT,
            "/v1/dev/tenants/t1",
            Some(json!({"quotaBytes": 20})),
        )
        .await;
    assert_eq!(
        (status, body),
        (200, json!({"tenantId": "t1", "usedBytes": 0}))
    );
    let tok = token(&rt.open_call(json!({})).await);
    assert!(rt.store(&tok, b"eleven byte", None, None).await.json()["file"].is_object());
    let full = rt.store(&tok, b"eleven more", None, None).await;
    assert_eq!(
        (full.status, full.json()),
        (200, json!({"notStored": "storage"}))
    );
    // Another tenant has its own room.
    let other = token(&rt.open_call(json!({"runId": "r2", "tenantId": "t2"})).await);
    assert!(rt.store(&other, b"eleven more", None, None).await.json()["file"].is_object());
}

#[tokio::test]
async fn rate_limit_is_counted_before_the_token() {
    let rt = Runtime::start(&["--rate-limit", "3"]);
    let tok = token(&rt.open_call(json!({})).await);
    // A token that matches nothing counts against its own budget before it
    // is looked up: the fourth request is refused without a lookup.
    for _ in 0..3 {
        rt.store("kgi_tf_00_00", b"x", None, None)
            .await
            .assert_error(401, "tool-file-token-not-found");
    }
    rt.store("kgi_tf_00_00", b"x", None, None)
        .await
        .assert_rate_limited();
    // Requests without a well-formed credential share their client's budget.
    for _ in 0..3 {
        rt.store("not-a-token", b"x", None, None)
            .await
            .assert_error(401, "tool-file-token-not-found");
    }
    rt.read("not-a-token", "art_x")
        .await
        .assert_error(429, "rate-limit-exceeded");
    // Neither flood used up the valid token's budget.
    assert!(rt.store(&tok, b"a text", None, None).await.json()["file"].is_object());
    for more in [&b"two"[..], b"three"] {
        assert!(rt.store(&tok, more, None, None).await.json()["file"].is_object());
    }
    // Its own budget is counted all the same.
    rt.store(&tok, b"four", None, None)
        .await
        .assert_rate_limited();
}

#[tokio::test]
async fn busy_when_the_memory_budget_has_no_room() {
    let rt = Runtime::start(&["--memory-budget-bytes", "1000", "--memory-wait-ms", "100"]);
    let tok = token(&rt.open_call(json!({})).await);
    // A slow upload holds 800 bytes of the budget.
    let mut slow = tokio::net::TcpStream::connect(("127.0.0.1", rt.port))
        .await
        .expect("connect");
    let head = format!(
        "POST /v1/tool-files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tok}\r\nContent-Length: 800\r\n\r\nstart of it"
    );
    tokio::io::AsyncWriteExt::write_all(&mut slow, head.as_bytes())
        .await
        .expect("write");
    // Once the runtime holds the slow upload's bytes, a second is refused.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let busy = loop {
        let answer = rt.store(&tok, &[b'b'; 500], None, None).await;
        if answer.status == 503 || std::time::Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    busy.assert_error(503, "tool-files-busy");
    assert_eq!(busy.header("retry-after"), Some("1"));
    // Once the slow upload is gone, its bytes are given back.
    drop(slow);
    let stored = loop {
        let answer = rt.store(&tok, &[b'b'; 500], None, None).await;
        if answer.status != 503 || std::time::Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(stored.json()["file"].is_object(), "{:?}", stored.json());
}

#[tokio::test]
async fn tokens_that_match_nothing_are_401() {
    let rt = Runtime::start(&[]);
    let call = rt.open_call(json!({})).await;
    let tok = token(&call);
    let send = |auth: Option<String>| {
        let mut req = rt
            .http
            .post(format!("{}/v1/tool-files", rt.url))
            .body("some text");
        if let Some(auth) = auth {
            req = req.header("authorization", auth);
        }
        req.send()
    };
    // The token with its last character changed (to one it isn't).
    let last = if tok.ends_with('0') { '1' } else { '0' };
    for auth in [
        None,
        Some("Bearer kgi_tf_abc_def".into()),
        Some(format!("Bearer {}{last}", &tok[..tok.len() - 1])),
        Some(tok.clone()),
    ] {
        let answer = common::Answer::of(send(auth.clone()).await.expect("send")).await;
        answer.assert_error(401, "tool-file-token-not-found");
    }
    // A call that only reads can't store; one that only stores can't read.
    let reader = token(&rt.open_call(json!({"store": false, "read": true})).await);
    rt.store(&reader, b"text", None, None)
        .await
        .assert_error(401, "tool-file-token-not-found");
    let writer = token(&rt.open_call(json!({"store": true, "read": false})).await);
    let id = rt.store(&writer, b"text", None, None).await.json()["file"]["artifactId"].clone();
    rt.read(&writer, id.as_str().expect("id"))
        .await
        .assert_error(401, "tool-file-token-not-found");
    // A call that neither stores nor reads gets no token at all.
    let none = rt.open_call(json!({"store": false, "read": false})).await;
    assert!(none.get("toolFiles").is_none(), "{none}");
}

#[tokio::test]
async fn closed_tokens_and_closed_places_are_403() {
    let rt = Runtime::start(&[]);
    let answered = rt.open_call(json!({})).await;
    let (status, _) = rt
        .admin(
            Method::POST,
            &format!(
                "/v1/dev/calls/{}/answer",
                answered["callId"].as_str().expect("id")
            ),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let body = rt
        .store(&token(&answered), b"text", None, None)
        .await
        .assert_error(403, "tool-file-token-closed");
    assert_eq!(body["error"]["details"]["reason"], "answered");

    // Its token closes once the call's deadline passes: read (which
    // changes nothing) until it has.
    let late = token(&rt.open_call(json!({"deadlineMs": 150})).await);
    let waited = std::time::Instant::now() + Duration::from_secs(10);
    let closed = loop {
        let answer = rt.read(&late, "art_x").await;
        if answer.status == 403 || std::time::Instant::now() > waited {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let body = closed.assert_error(403, "tool-file-token-closed");
    assert_eq!(body["error"]["details"]["reason"], "deadline");
    let body = rt
        .store(&late, b"text", None, None)
        .await
        .assert_error(403, "tool-file-token-closed");
    assert_eq!(body["error"]["details"]["reason"], "deadline");

    let ended = rt.open_call(json!({"runId": "r-end"})).await;
    assert_eq!(
        rt.admin(Method::POST, "/v1/dev/runs/r-end/end", None)
            .await
            .0,
        200
    );
    let body = rt
        .read(&token(&ended), "art_x")
        .await
        .assert_error(403, "tool-file-token-closed");
    assert_eq!(body["error"]["details"]["reason"], "run-ended");
    let (status, body) = rt
        .admin(
            Method::POST,
            "/v1/dev/calls",
            Some(json!({"runId": "r-end", "tenantId": "t1", "toolId": "x", "store": true})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("run-ended"))
    );

    let tok = token(
        &rt.open_call(json!({"runId": "r-t", "tenantId": "t9", "projectId": "p9"}))
            .await,
    );
    let set = |state: &'static str| {
        rt.admin(
            Method::PUT,
            "/v1/dev/tenants/t9",
            Some(json!({"state": state})),
        )
    };
    set("closing").await;
    rt.store(&tok, b"text", None, None)
        .await
        .assert_error(403, "tenant-closing");
    set("suspended").await;
    let body = rt
        .store(&tok, b"text", None, None)
        .await
        .assert_error(403, "tenant-suspended");
    assert_eq!(body["error"]["details"], json!({"state": "suspended"}));
    set("unavailable").await;
    let unavailable = rt.store(&tok, b"text", None, None).await;
    unavailable.assert_error(503, "tenant-state-unavailable");
    assert_eq!(unavailable.header("retry-after"), Some("1"));
    set("active").await;
    rt.admin(
        Method::PUT,
        "/v1/dev/projects/p9",
        Some(json!({"suspended": true})),
    )
    .await;
    rt.store(&tok, b"text", None, None)
        .await
        .assert_error(403, "project-suspended");
    rt.admin(
        Method::PUT,
        "/v1/dev/projects/p9",
        Some(json!({"suspended": false})),
    )
    .await;
    let stored = rt.store(&tok, b"text", None, None).await.json();
    assert!(
        stored["file"].is_object(),
        "nothing was stored before: {stored}"
    );
}

#[tokio::test]
async fn a_bad_file_name_is_400_and_stores_nothing() {
    let rt = Runtime::start(&[]);
    let tok = token(&rt.open_call(json!({})).await);
    let bad = rt.store(&tok, b"named text", None, Some("%FF%FE")).await;
    bad.assert_error(400, "bad-input");
    let good = rt
        .store(&tok, b"named text", None, Some("ok.txt"))
        .await
        .json();
    assert_eq!(
        good["file"]["name"], "ok.txt",
        "the bad request left no file: {good}"
    );
}

#[tokio::test]
async fn reads_follow_the_rules() {
    let rt = Runtime::start(&[]);
    let mine = token(&rt.open_call(json!({"runId": "run-a"})).await);
    let theirs = token(&rt.open_call(json!({"runId": "run-b"})).await);
    let text = rt
        .store(&mine, b"the text of run a", None, None)
        .await
        .json();
    let id = text["file"]["artifactId"].as_str().expect("id").to_owned();
    // Another call of the same run may read it.
    let sibling = token(
        &rt.open_call(json!({"runId": "run-a", "store": false}))
            .await,
    );
    assert_eq!(rt.read(&sibling, &id).await.bytes, b"the text of run a");
    assert_eq!(
        rt.read(&theirs, &id).await.json(),
        json!({"notRead": "rule"}),
        "another run"
    );
    assert_eq!(
        rt.read(&mine, "art_unknown").await.json(),
        json!({"notRead": "rule"})
    );

    // Changed bytes, missing bytes, deleted records.
    let sha = text["file"]["sha256"].as_str().expect("sha").to_owned();
    let blob = rt.data_dir.join("blobs").join(&sha[..2]).join(&sha);
    std::fs::write(&blob, b"tampered").expect("tamper");
    assert_eq!(
        rt.read(&mine, &id).await.json(),
        json!({"notRead": "changed"})
    );
    std::fs::remove_file(&blob).expect("remove");
    assert_eq!(rt.read(&mine, &id).await.json(), json!({"notRead": "gone"}));
    let other = rt.store(&mine, &png(9), None, None).await.json();
    let other_id = other["file"]["artifactId"].as_str().expect("id").to_owned();
    assert_eq!(
        rt.admin(Method::DELETE, &format!("/v1/dev/files/{other_id}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        rt.read(&mine, &other_id).await.json(),
        json!({"notRead": "gone"})
    );
}

#[tokio::test]
async fn a_restart_keeps_files_and_tokens() {
    let rt = Runtime::start(&[]);
    let tok = token(&rt.open_call(json!({"deadlineMs": 600_000})).await);
    let doc = pdf(2);
    let file = rt.store(&tok, &doc, None, Some("doc.pdf")).await.json();
    let id = file["file"]["artifactId"].as_str().expect("id").to_owned();
    let text = rt
        .store(&tok, b"a longer text file", None, None)
        .await
        .json();
    let text_id = text["file"]["artifactId"].as_str().expect("id").to_owned();
    let dir = rt.kill().expect("temp dir");

    // A leftover temporary file from a crash mid-upload is swept.
    std::fs::write(dir.path().join("tmp").join("half-written"), b"partial").expect("write");
    let again = Runtime::start_in(dir.path(), &["--text-limit-bytes", "8"]);
    let read = again.read(&tok, &id).await;
    assert_eq!((read.status, read.bytes), (200, doc.clone()));
    assert_eq!(
        std::fs::read_dir(dir.path().join("tmp"))
            .expect("tmp")
            .count(),
        0
    );
    // The same bytes after the restart still answer the first file.
    assert_eq!(again.store(&tok, &doc, None, None).await.json(), file);
    // Limits are the current process's: a text now over its type's limit.
    assert_eq!(
        again.read(&tok, &text_id).await.json(),
        json!({"notRead": "size"})
    );
}

#[tokio::test]
async fn admin_api_wants_its_token_and_unknown_routes_are_404() {
    let rt = Runtime::start(&[]);
    let answer = |method: reqwest::Method, path: &str| {
        let request = rt
            .http
            .request(method, format!("{}{path}", rt.url))
            .bearer_auth("wrong")
            .body("{}");
        async move { common::Answer::of(request.send().await.expect("send")).await }
    };
    answer(reqwest::Method::POST, "/v1/dev/calls")
        .await
        .assert_error(401, "admin-token-invalid");
    // The token comes first: a wrong query learns nothing of the route.
    answer(reqwest::Method::GET, "/v1/dev/waits/w1?waitMs=soon")
        .await
        .assert_error(401, "admin-token-invalid");
    answer(reqwest::Method::GET, "/v1/nothing")
        .await
        .assert_error(404, "not-found");
    answer(reqwest::Method::PUT, "/v1/tool-files")
        .await
        .assert_error(405, "method-not-allowed");
}
