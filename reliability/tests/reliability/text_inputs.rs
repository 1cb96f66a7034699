//! A large tool input is read from its text when its schema's screen
//! passes it, else from its tree: the two answer alike, and a text that
//! only the tree can tell is malformed is answered as malformed.

use std::time::Duration;

use kindgi_reliability::http::{self, Request, Response};
use kindgi_reliability::{PackService, ServiceOptions};
use serde_json::{Value, json};

use crate::common::start;

const WAIT: Duration = Duration::from_secs(30);

async fn send(service: &PackService, input: &str) -> Response {
    let body = format!(
        r#"{{"v":2,"kind":"invoke","tool":{{"id":"stress.echo-input"}},"input":{input},"ctx":{{"tenantId":"t1","runId":"r1"}}}}"#
    );
    let request = Request::post("/v1/invoke")
        .token(service.token())
        .header("content-type", "application/json")
        .body(body.into_bytes());
    http::exchange(service.addr(), &request, WAIT)
        .await
        .expect_answer("an echo-input call")
}

/// Strings enough to make the body large (the text path starts at 1 KiB).
fn filler() -> String {
    let words: Vec<String> = (0..100).map(|i| format!("\"word {i}\"")).collect();
    format!("[{}]", words.join(","))
}

#[tokio::test]
async fn a_large_input_reads_alike_from_its_text_and_from_its_tree() {
    let service = start(&ServiceOptions::default());
    let filler = filler();
    let words: Vec<String> = (0..100).map(|i| format!("word {i}")).collect();
    let expected = json!({"v": 2, "kind": "result", "output": {
        "count": 5, "price": 2.0, "any": [1, 0, 1.5, {"a": "x", "b": 2}],
        "labels": {"a": -1, "b": 2}, "note": null, "filler": words
    }});
    // Integral floats where a typed field takes a float or any JSON, and
    // where only an integer does: what reading a tree changes.
    for fields in [
        r#""count":5,"price":2.0,"any":[1.0,-0.0,1.5,{"a":"x","b":2e0}],"labels":{"a":-1,"b":2}"#,
        r#""count":5.00,"price":2,"any":[1,0,1.5,{"a":"x","b":2}],"labels":{"a":-1.0,"b":2e0}"#,
    ] {
        // Passes the screen: read from the text.
        let text = format!(r#"{{{fields},"note":null,"filler":{filler}}}"#);
        // A repeated key: only the tree reads it (the last one counts).
        let tree = format!(r#"{{"note":"first",{fields},"note":null,"filler":{filler}}}"#);
        for input in [&text, &tree] {
            let answer = send(&service, input).await;
            assert_eq!(answer.status, 200);
            assert_eq!(answer.json_or_null(), expected, "{input}");
        }
    }
}

#[tokio::test]
async fn a_large_invalid_input_gets_its_issues() {
    let service = start(&ServiceOptions::default());
    let input = format!(
        r#"{{"count":-1,"price":2.5,"any":null,"labels":{{}},"note":null,"filler":{}}}"#,
        filler()
    );
    let answer = send(&service, &input).await;
    assert_eq!(answer.status, 200);
    let body = answer.json_or_null();
    assert_eq!(body["code"], "input-validation-failed", "{body}");
    assert_eq!(body["issues"][0]["instancePath"], "/count", "{body}");
    assert_eq!(body["issues"][0]["keyword"], "minimum", "{body}");
}

#[tokio::test]
async fn a_large_input_only_a_tree_finds_malformed_is_malformed() {
    let service = start(&ServiceOptions::default());
    let not_json: Value = json!({"kind": "error", "v": 2, "code": "malformed-message", "message": "Request body is not valid JSON"});
    let filler = filler();
    for (what, input) in [
        (
            "a number past f64",
            format!(r#"{{"count":1e400,"filler":{filler}}}"#),
        ),
        (
            "a lone surrogate",
            format!(r#"{{"note":"\ud800","filler":{filler}}}"#),
        ),
    ] {
        let answer = send(&service, &input).await;
        assert_eq!(answer.status, 200, "{what}");
        assert_eq!(answer.json_or_null(), not_json, "{what}: {}", answer.text());
    }
}
