//! Checking a wait's answer against the tool's output schema.

use kindgi_protocol::Issue;
use serde_json::Value;

/// Checks `value` against `schema` (JSON Schema 2020-12), collecting every
/// issue. A schema that doesn't compile is reported as one issue at the
/// root: the answer can't be shown valid.
pub(crate) fn validate(schema: &Value, value: &Value) -> Result<(), Vec<Issue>> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => {
            return Err(vec![Issue {
                instance_path: String::new(),
                schema_path: None,
                keyword: None,
                params: None,
                message: format!("the tool's output schema is invalid: {e}"),
            }]);
        }
    };
    let issues: Vec<Issue> = validator
        .iter_errors(value)
        .map(|e| Issue {
            instance_path: e.instance_path().as_str().to_owned(),
            schema_path: Some(format!("#{}", e.schema_path().as_str())),
            keyword: Some(e.kind().keyword().to_owned()),
            params: None,
            message: e.to_string(),
        })
        .collect();
    if issues.is_empty() {
        Ok(())
    } else {
        Err(issues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_issues_with_paths() {
        let schema =
            json!({"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}});
        assert!(validate(&schema, &json!({"ok": true})).is_ok());
        let issues = validate(&schema, &json!({"ok": 1})).expect_err("invalid");
        assert_eq!(issues[0].instance_path, "/ok");
        assert_eq!(issues[0].keyword.as_deref(), Some("type"));
    }
}
