//! Helpers shared by the issue tests.

#![allow(dead_code, unreachable_pub)]

use kindgi_validate::Validator;
use serde_json::{Value, json};

pub fn issues(schema: Value, instance: Value) -> Value {
    let validator = Validator::new(&schema).expect("schema compiles");
    match validator.validate(&instance) {
        Ok(()) => json!([]),
        Err(issues) => serde_json::to_value(issues).expect("issues serialize"),
    }
}

pub fn issue(
    instance_path: &str,
    schema_path: &str,
    keyword: &str,
    params: Value,
    message: &str,
) -> Value {
    json!({
        "instancePath": instance_path,
        "schemaPath": schema_path,
        "keyword": keyword,
        "params": params,
        "message": message,
    })
}

pub fn message_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"message": {"type": "string", "minLength": 1}},
        "required": ["message"],
        "additionalProperties": false
    })
}
