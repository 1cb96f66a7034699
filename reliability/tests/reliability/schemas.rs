//! Schemas from the index meet hostile input: the service compiles each
//! tool's input schema from its index, so a test can serve any schema.

use std::time::Duration;

use kindgi_reliability::http::{self, Outcome};
use kindgi_reliability::{PackService, ServiceOptions, bins, invoke};
use serde_json::{Value, json};

use crate::common::pack_bin;

/// Serves the stress pack with `stress.throws`'s input schema replaced.
fn serve_with_input_schema(schema: Value) -> PackService {
    PackService::start_edited(
        pack_bin(),
        &bins::stress_pack_dir(),
        &ServiceOptions::default(),
        move |index| {
            if let Some(tools) = index["tools"].as_array_mut() {
                for tool in tools.iter_mut().filter(|t| t["id"] == "stress.throws") {
                    tool["input"] = schema.clone();
                }
            }
        },
    )
}

/// A default that leads back into its own schema: Ajv's `useDefaults`
/// fills it once per level and stops with a RangeError. Ours used to fill
/// until the stack overflowed and the whole process (every call in flight)
/// died (F5); filling now stops at a depth.
#[tokio::test]
async fn a_recursive_default_does_not_crash_the_service() {
    let mut service = serve_with_input_schema(json!({
        "type": "object",
        "properties": {"child": {"$ref": "#", "default": {}}}
    }));
    let answer = http::exchange(
        service.addr(),
        &invoke::call(service.token(), "stress.throws", json!({})),
        Duration::from_secs(10),
    )
    .await;
    let alive = service.is_running();
    assert!(
        matches!(&answer, Outcome::Answered(r) if r.status == 200),
        "{answer}"
    );
    assert!(alive, "the service died: {}", service.output());
}

/// Two such defaults side by side: a depth bound alone still left a
/// binary tree 128 levels deep (2^128 defaults) to fill, and the call never
/// answered (F5b). Filling now also stops after 10 000 defaults: the call
/// reaches its handler (which throws) and is answered.
#[tokio::test]
async fn branching_recursive_defaults_are_bounded() {
    let mut service = serve_with_input_schema(json!({
        "type": "object",
        "properties": {
            "left": {"$ref": "#", "default": {}},
            "right": {"$ref": "#", "default": {}}
        }
    }));
    let answer = http::exchange(
        service.addr(),
        &invoke::call(service.token(), "stress.throws", json!({})),
        Duration::from_secs(10),
    )
    .await
    .expect_answer("branching recursive defaults");
    let alive = service.is_running();
    assert_eq!(answer.status, 200, "{}", answer.text());
    let body = answer.json_or_null();
    assert_eq!(body["kind"], "error", "{body}");
    assert_eq!(body["code"], "handler-throw", "{body}");
    assert_eq!(
        body["message"], "Handler for tool \"stress.throws\" threw: Error: boom",
        "{body}"
    );
    assert!(alive, "the service died: {}", service.output());
}

/// Schemas with every format and pattern keyword, against strings made to
/// trip parsers: always an answer, and the service stays up.
#[tokio::test]
async fn format_and_pattern_checks_survive_hostile_strings() {
    let formats = [
        "date",
        "time",
        "date-time",
        "iso-time",
        "iso-date-time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "uri-template",
        "url",
        "uuid",
        "byte",
        "regex",
        "json-pointer",
        "relative-json-pointer",
        "json-pointer-uri-fragment",
    ];
    let properties: serde_json::Map<String, Value> = formats
        .iter()
        .map(|f| ((*f).to_owned(), json!({"type": "string", "format": f})))
        .chain([(
            "pattern".to_owned(),
            json!({"type": "string", "pattern": "^(a+)+$"}),
        )])
        .collect();
    let mut service = serve_with_input_schema(json!({"type": "object", "properties": properties}));
    let nasty = [
        String::new(),
        "é".repeat(5000),
        "a".repeat(100_000) + "!",
        "9".repeat(10_000),
        "2024-02-30T25:61:61.999999999999999999+99:99".to_owned(),
        "[".repeat(10_000),
        "\\u0000\u{0}\u{7f}\u{feff}\u{10ffff}".to_owned(),
        "%".repeat(1000),
        "::".repeat(5000),
        "a@".repeat(5000),
        "(?:".repeat(2000),
        "P".to_owned() + &"1Y".repeat(5000),
    ];
    for value in &nasty {
        let input: serde_json::Map<String, Value> = properties
            .keys()
            .map(|k| (k.clone(), json!(value)))
            .collect();
        let answer = http::exchange(
            service.addr(),
            &invoke::call(service.token(), "stress.throws", Value::Object(input)),
            Duration::from_secs(30),
        )
        .await
        .expect_answer("hostile strings");
        assert_eq!(answer.status, 200);
        let code = answer.json_or_null()["code"].clone();
        assert!(
            code == "input-validation-failed" || code == "handler-throw",
            "{}",
            answer.text()
        );
    }
    assert!(service.is_running());
}
