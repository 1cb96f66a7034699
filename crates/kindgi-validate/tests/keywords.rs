//! Exact Ajv-shaped issues, keyword by keyword.

mod common;

use common::{issue, issues, message_schema};
use kindgi_validate::Validator;
use serde_json::json;

#[test]
fn valid_instance_has_no_issues() {
    let validator = Validator::new(&message_schema()).expect("compiles");
    assert_eq!(validator.validate(&json!({"message": "hi"})), Ok(()));
    assert!(validator.is_valid(&json!({"message": "hi"})));
    assert!(!validator.is_valid(&json!({})));
}

#[test]
fn required() {
    assert_eq!(
        issues(message_schema(), json!({})),
        json!([issue(
            "",
            "#/required",
            "required",
            json!({"missingProperty": "message"}),
            "must have required property 'message'"
        )])
    );
}

#[test]
fn required_reports_each_missing_property_in_schema_order() {
    assert_eq!(
        issues(json!({"required": ["b", "a", "c"]}), json!({"c": 1})),
        json!([
            issue(
                "",
                "#/required",
                "required",
                json!({"missingProperty": "b"}),
                "must have required property 'b'"
            ),
            issue(
                "",
                "#/required",
                "required",
                json!({"missingProperty": "a"}),
                "must have required property 'a'"
            ),
        ])
    );
}

#[test]
fn min_length() {
    assert_eq!(
        issues(message_schema(), json!({"message": ""})),
        json!([issue(
            "/message",
            "#/properties/message/minLength",
            "minLength",
            json!({"limit": 1}),
            "must NOT have fewer than 1 characters"
        )])
    );
}

#[test]
fn max_length_counts_code_points() {
    let schema = json!({"maxLength": 2});
    assert_eq!(issues(schema.clone(), json!("😀😀")), json!([]));
    assert_eq!(
        issues(schema, json!("😀😀😀")),
        json!([issue(
            "",
            "#/maxLength",
            "maxLength",
            json!({"limit": 2}),
            "must NOT have more than 2 characters"
        )])
    );
}

#[test]
fn additional_properties_one_issue_per_extra() {
    assert_eq!(
        issues(
            message_schema(),
            json!({"message": "hi", "extra": 1, "more": 2})
        ),
        json!([
            issue(
                "",
                "#/additionalProperties",
                "additionalProperties",
                json!({"additionalProperty": "extra"}),
                "must NOT have additional properties"
            ),
            issue(
                "",
                "#/additionalProperties",
                "additionalProperties",
                json!({"additionalProperty": "more"}),
                "must NOT have additional properties"
            ),
        ])
    );
}

#[test]
fn additional_properties_schema_reports_inside() {
    assert_eq!(
        issues(
            json!({"additionalProperties": {"type": "integer"}}),
            json!({"z": "q"})
        ),
        json!([issue(
            "/z",
            "#/additionalProperties/type",
            "type",
            json!({"type": "integer"}),
            "must be integer"
        )])
    );
}

#[test]
fn type_single_and_list() {
    assert_eq!(
        issues(message_schema(), json!({"message": 5})),
        json!([issue(
            "/message",
            "#/properties/message/type",
            "type",
            json!({"type": "string"}),
            "must be string"
        )])
    );
    // Ajv joins a type list in the message and keeps the list in params.
    assert_eq!(
        issues(json!({"type": ["string", "null"]}), json!(1)),
        json!([issue(
            "",
            "#/type",
            "type",
            json!({"type": ["string", "null"]}),
            "must be string,null"
        )])
    );
}

#[test]
fn no_type_coercion() {
    assert_eq!(
        issues(json!({"type": "integer"}), json!("1")),
        json!([issue(
            "",
            "#/type",
            "type",
            json!({"type": "integer"}),
            "must be integer"
        )])
    );
    assert_eq!(
        issues(json!({"type": "boolean"}), json!("true")),
        json!([issue(
            "",
            "#/type",
            "type",
            json!({"type": "boolean"}),
            "must be boolean"
        )])
    );
    assert_eq!(issues(json!({"type": "integer"}), json!(1.0)), json!([]));
    assert_eq!(
        issues(json!({"type": "integer"}), json!(1.5)),
        json!([issue(
            "",
            "#/type",
            "type",
            json!({"type": "integer"}),
            "must be integer"
        )])
    );
}

#[test]
fn number_limits() {
    assert_eq!(
        issues(json!({"minimum": 0}), json!(-1)),
        json!([issue(
            "",
            "#/minimum",
            "minimum",
            json!({"comparison": ">=", "limit": 0}),
            "must be >= 0"
        )])
    );
    assert_eq!(
        issues(json!({"maximum": 10.0}), json!(11)),
        json!([issue(
            "",
            "#/maximum",
            "maximum",
            json!({"comparison": "<=", "limit": 10}),
            "must be <= 10"
        )])
    );
    assert_eq!(
        issues(json!({"exclusiveMinimum": 0.5}), json!(0.5)),
        json!([issue(
            "",
            "#/exclusiveMinimum",
            "exclusiveMinimum",
            json!({"comparison": ">", "limit": 0.5}),
            "must be > 0.5"
        )])
    );
    assert_eq!(
        issues(json!({"exclusiveMaximum": 3}), json!(3)),
        json!([issue(
            "",
            "#/exclusiveMaximum",
            "exclusiveMaximum",
            json!({"comparison": "<", "limit": 3}),
            "must be < 3"
        )])
    );
}

#[test]
fn multiple_of() {
    assert_eq!(
        issues(json!({"multipleOf": 2}), json!(3)),
        json!([issue(
            "",
            "#/multipleOf",
            "multipleOf",
            json!({"multipleOf": 2}),
            "must be multiple of 2"
        )])
    );
    assert_eq!(
        issues(json!({"multipleOf": 0.5}), json!(1.25)),
        json!([issue(
            "",
            "#/multipleOf",
            "multipleOf",
            json!({"multipleOf": 0.5}),
            "must be multiple of 0.5"
        )])
    );
}

#[test]
fn multiple_of_divides_in_doubles_like_ajv() {
    // 0.3 / 0.1 is 2.9999999999999996 in JavaScript, so Ajv rejects it.
    assert_eq!(
        issues(json!({"multipleOf": 0.1}), json!(0.3)),
        json!([issue(
            "",
            "#/multipleOf",
            "multipleOf",
            json!({"multipleOf": 0.1}),
            "must be multiple of 0.1"
        )])
    );
    assert_eq!(issues(json!({"multipleOf": 0.01}), json!(4.5)), json!([]));
    // Through a `$ref` the path still names the keyword.
    assert_eq!(
        issues(
            json!({"$defs": {"cents": {"multipleOf": 0.01}}, "properties": {"price": {"$ref": "#/$defs/cents"}}}),
            json!({"price": 4.02})
        ),
        json!([issue(
            "/price",
            "#/$defs/cents/multipleOf",
            "multipleOf",
            json!({"multipleOf": 0.01}),
            "must be multiple of 0.01"
        )])
    );
}

#[test]
fn item_and_property_counts() {
    assert_eq!(
        issues(json!({"minItems": 2}), json!([1])),
        json!([issue(
            "",
            "#/minItems",
            "minItems",
            json!({"limit": 2}),
            "must NOT have fewer than 2 items"
        )])
    );
    assert_eq!(
        issues(json!({"maxItems": 1}), json!([1, 2])),
        json!([issue(
            "",
            "#/maxItems",
            "maxItems",
            json!({"limit": 1}),
            "must NOT have more than 1 items"
        )])
    );
    assert_eq!(
        issues(json!({"minProperties": 1}), json!({})),
        json!([issue(
            "",
            "#/minProperties",
            "minProperties",
            json!({"limit": 1}),
            "must NOT have fewer than 1 properties"
        )])
    );
    assert_eq!(
        issues(json!({"maxProperties": 1}), json!({"a": 1, "b": 2})),
        json!([issue(
            "",
            "#/maxProperties",
            "maxProperties",
            json!({"limit": 1}),
            "must NOT have more than 1 properties"
        )])
    );
}

#[test]
fn enum_and_const() {
    assert_eq!(
        issues(json!({"enum": ["a", 1.0, null]}), json!("b")),
        json!([issue(
            "",
            "#/enum",
            "enum",
            json!({"allowedValues": ["a", 1, null]}),
            "must be equal to one of the allowed values"
        )])
    );
    assert_eq!(
        issues(json!({"const": {"a": 1}}), json!({"a": 2})),
        json!([issue(
            "",
            "#/const",
            "const",
            json!({"allowedValue": {"a": 1}}),
            "must be equal to constant"
        )])
    );
}

#[test]
fn pattern() {
    assert_eq!(
        issues(json!({"pattern": "^[a-z]+$"}), json!("A1")),
        json!([issue(
            "",
            "#/pattern",
            "pattern",
            json!({"pattern": "^[a-z]+$"}),
            "must match pattern \"^[a-z]+$\""
        )])
    );
}

#[test]
fn formats_are_checked() {
    let cases = [
        ("date-time", "2024-01-01T10:00:00", false),
        ("date-time", "2024-01-01T10:00:00Z", true),
        ("date-time", "2024-01-01 10:00:00+01:00", true),
        ("date", "2023-02-29", false),
        ("time", "10:00:00Z", true),
        ("email", "someone@example.com", true),
        ("email", "not an email", false),
        ("email", "someone@localhost", false),
        ("uri", "https://example.com/a?b=c", true),
        ("uri", "not a uri", false),
        ("uri-reference", "../a", true),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
        ("uuid", "123e4567", false),
        ("ipv4", "10.0.0.256", false),
        ("ipv6", "::1", true),
        ("hostname", "example.com", true),
        ("hostname", "-example.com", false),
        ("duration", "P1D", true),
        ("duration", "1D", false),
        ("byte", "aGk=", true),
        ("byte", "aGk", false),
        ("regex", "([a-z]", false),
        ("json-pointer", "/a/b", true),
        ("json-pointer", "a/b", false),
        ("url", "https://example.com", true),
    ];
    for (format, value, valid) in cases {
        let got = issues(json!({"format": format}), json!(value));
        let want = if valid {
            json!([])
        } else {
            json!([issue(
                "",
                "#/format",
                "format",
                json!({"format": format}),
                &format!("must match format \"{format}\"")
            )])
        };
        assert_eq!(got, want, "{format} {value:?}");
    }
}

#[test]
fn formats_apply_to_strings_only_and_unknown_ones_are_ignored() {
    assert_eq!(issues(json!({"format": "email"}), json!(5)), json!([]));
    assert_eq!(issues(json!({"format": "made-up"}), json!("x")), json!([]));
    assert_eq!(
        issues(json!({"type": "integer", "format": "int32"}), json!(5)),
        json!([])
    );
}

#[test]
fn unique_items_reports_ajv_indices() {
    assert_eq!(
        issues(json!({"uniqueItems": true}), json!([1, 2, 1])),
        json!([issue(
            "",
            "#/uniqueItems",
            "uniqueItems",
            json!({"i": 2, "j": 0}),
            "must NOT have duplicate items (items ## 0 and 2 are identical)"
        )])
    );
    // With scalar item types Ajv uses a lookup table and reports the pair the other way round.
    assert_eq!(
        issues(
            json!({"uniqueItems": true, "items": {"type": "integer"}}),
            json!([1, 2, 1])
        ),
        json!([issue(
            "",
            "#/uniqueItems",
            "uniqueItems",
            json!({"i": 0, "j": 2}),
            "must NOT have duplicate items (items ## 2 and 0 are identical)"
        )])
    );
}
