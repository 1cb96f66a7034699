//! Checking a wait's answer against the tool's output schema, with the
//! pack service's own validator: the issues read as the service's do
//! (Ajv's shape, order and messages).

use kindgi_protocol::Issue;
use kindgi_validate::Validator;
use serde_json::Value;

/// Checks `value` against `schema` (JSON Schema 2020-12). A schema that
/// doesn't compile is reported as one issue at the root: the answer can't
/// be shown valid.
pub(crate) fn validate(schema: &Value, value: &Value) -> Result<(), Vec<Issue>> {
    let validator = Validator::new(schema).map_err(|e| {
        vec![Issue {
            instance_path: String::new(),
            schema_path: None,
            keyword: None,
            params: None,
            message: format!("the tool's output schema is invalid: {e}"),
        }]
    })?;
    validator.validate(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn issues_read_as_the_services() {
        let schema =
            json!({"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}});
        assert!(validate(&schema, &json!({"ok": true})).is_ok());
        let issues = validate(&schema, &json!({"ok": 1})).expect_err("invalid");
        assert_eq!(
            serde_json::to_value(&issues).expect("serializes"),
            json!([{
                "instancePath": "/ok",
                "schemaPath": "#/properties/ok/type",
                "keyword": "type",
                "params": {"type": "boolean"},
                "message": "must be boolean"
            }])
        );
    }

    #[test]
    fn a_schema_that_does_not_compile_is_one_issue_at_the_root() {
        let issues = validate(&json!({"type": 7}), &json!({})).expect_err("invalid");
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].instance_path, "");
        assert!(
            issues[0]
                .message
                .starts_with("the tool's output schema is invalid: "),
            "{}",
            issues[0].message
        );
    }
}
