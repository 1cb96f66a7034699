//! `kindgi_validate`: compile a schema, fill defaults, validate — on
//! schemas of every keyword and on arbitrary ones. Never a panic or a
//! hang; `validate` and `first_issues` agree with `is_valid`; filling twice
//! is filling once.

#![no_main]

use std::sync::OnceLock;

use kindgi_validate::Validator;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// Schemas that exercise every keyword, format and default path.
fn schemas() -> &'static [Validator] {
    static SCHEMAS: OnceLock<Vec<Validator>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let formats = [
            "date", "time", "date-time", "iso-time", "iso-date-time", "duration", "email",
            "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference",
            "uri-template", "url", "uuid", "byte", "regex", "json-pointer",
            "relative-json-pointer", "json-pointer-uri-fragment", "iri", "int32", "int64",
            "float", "double",
        ];
        let mut all = vec![
            json!({
                "type": "object",
                "properties": Value::Object(formats.iter().map(|f| (f.to_string(), json!({"type": "string", "format": f}))).collect()),
                "additionalProperties": {"type": "number", "multipleOf": 0.01, "minimum": -1e308, "exclusiveMaximum": 1e308}
            }),
            json!({
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z]+(-[a-z0-9]+)*$"},
                    "greeting": {"type": "string", "default": "Hello"},
                    "options": {
                        "type": "object",
                        "default": {},
                        "properties": {
                            "loud": {"type": "boolean", "default": false},
                            "level": {"type": "integer", "default": 3, "minimum": 0, "maximum": 10}
                        },
                        "additionalProperties": false
                    },
                    "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"default": "v"}}}, "uniqueItems": true, "maxItems": 50},
                    "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string", "default": "x"}], "items": false}
                },
                "dependentSchemas": {"name": {"properties": {"dep": {"default": 1}}}},
                "additionalProperties": {"type": ["string", "null"]}
            }),
            json!({
                "$defs": {
                    "node": {
                        "type": "object",
                        "properties": {"value": {"type": "integer", "default": 0}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                        "required": ["value"]
                    }
                },
                "$ref": "#/$defs/node"
            }),
            json!({
                "anyOf": [{"type": "string", "enum": ["a", "b", "c"]}, {"type": "integer", "multipleOf": 3}],
                "not": {"const": 9}
            }),
            json!({
                "oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                    {"type": "object", "properties": {"kind": {"const": "b"}, "n": {"type": "number", "default": 1}}, "required": ["kind"]}
                ],
                "if": {"properties": {"kind": {"const": "a"}}},
                "then": {"required": ["x"]},
                "else": {"propertyNames": {"maxLength": 8}}
            }),
            json!({
                "type": "array",
                "contains": {"type": "string"},
                "minContains": 1,
                "maxContains": 3,
                "items": {"allOf": [{"type": ["string", "number", "object"]}, {"properties": {"d": {"default": {"e": 1}}}}]},
                "unevaluatedItems": false
            }),
            json!({
                "type": "object",
                "patternProperties": {"^x-": {"type": "string"}, "[": {"type": "string"}},
                "minProperties": 1,
                "maxProperties": 20,
                "unevaluatedProperties": false
            }),
        ];
        all.retain(|s| Validator::new(s).is_ok());
        all.iter().filter_map(|s| Validator::new(s).ok()).collect()
    })
}

fn check(validator: &Validator, instance: &Value) {
    let valid = validator.is_valid(instance);
    match validator.validate(instance) {
        Ok(()) => assert!(valid),
        Err(issues) => {
            assert!(!valid);
            assert!(!issues.is_empty());
        }
    }
    // The first error, found on the schema with `anyOf`/`oneOf` wrapped in
    // `not`/`not`: the same verdict.
    match validator.first_issues(instance) {
        Ok(()) => assert!(valid),
        Err(issues) => {
            assert!(!valid);
            assert!(!issues.is_empty());
        }
    }
    let mut once = instance.clone();
    validator.fill_defaults(&mut once);
    let mut twice = once.clone();
    validator.fill_defaults(&mut twice);
    assert_eq!(once, twice, "filling is idempotent");
    let _ = validator.validate(&once);
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 4 != 0 {
        // A fixed schema and an arbitrary instance.
        let schemas = schemas();
        let Ok(instance) = serde_json::from_slice::<Value>(rest) else {
            return;
        };
        check(&schemas[usize::from(mode) % schemas.len()], &instance);
        return;
    }
    // An arbitrary schema, NUL, an arbitrary instance.
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let (schema, instance) = (&rest[..split], rest.get(split + 1..).unwrap_or_default());
    let (Ok(schema), Ok(instance)) = (
        serde_json::from_slice::<Value>(schema),
        serde_json::from_slice::<Value>(instance),
    ) else {
        return;
    };
    if let Ok(validator) = Validator::new(&schema) {
        check(&validator, &instance);
    }
});
