//! Exact Ajv-shaped issues for combinators, references, paths and order.

mod common;

use common::{issue, issues, message_schema};
use kindgi_validate::Validator;
use serde_json::json;

#[test]
fn any_of_reports_branch_errors_then_its_own() {
    assert_eq!(
        issues(
            json!({"anyOf": [{"type": "string"}, {"type": "number"}]}),
            json!(true)
        ),
        json!([
            issue(
                "",
                "#/anyOf/0/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "",
                "#/anyOf/1/type",
                "type",
                json!({"type": "number"}),
                "must be number"
            ),
            issue(
                "",
                "#/anyOf",
                "anyOf",
                json!({}),
                "must match a schema in anyOf"
            ),
        ])
    );
}

#[test]
fn one_of_none_and_several_passing() {
    assert_eq!(
        issues(
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            json!(1)
        ),
        json!([
            issue(
                "",
                "#/oneOf/0/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "",
                "#/oneOf/1/type",
                "type",
                json!({"type": "null"}),
                "must be null"
            ),
            issue(
                "",
                "#/oneOf",
                "oneOf",
                json!({"passingSchemas": null}),
                "must match exactly one schema in oneOf"
            ),
        ])
    );
    assert_eq!(
        issues(
            json!({"oneOf": [{"type": "integer"}, {"minimum": 0}]}),
            json!(5)
        ),
        json!([issue(
            "",
            "#/oneOf",
            "oneOf",
            json!({"passingSchemas": [0, 1]}),
            "must match exactly one schema in oneOf"
        )])
    );
}

#[test]
fn one_of_with_two_passing_keeps_the_failing_branch_errors() {
    assert_eq!(
        issues(
            json!({"oneOf": [{"type": "integer"}, {"type": "string"}, {"minimum": 0}]}),
            json!(5)
        ),
        json!([
            issue(
                "",
                "#/oneOf/1/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "",
                "#/oneOf",
                "oneOf",
                json!({"passingSchemas": [0, 2]}),
                "must match exactly one schema in oneOf"
            ),
        ])
    );
}

#[test]
fn all_of_reports_each_branch() {
    assert_eq!(
        issues(
            json!({"allOf": [{"minLength": 3}, {"pattern": "^a"}]}),
            json!("b")
        ),
        json!([
            issue(
                "",
                "#/allOf/0/minLength",
                "minLength",
                json!({"limit": 3}),
                "must NOT have fewer than 3 characters"
            ),
            issue(
                "",
                "#/allOf/1/pattern",
                "pattern",
                json!({"pattern": "^a"}),
                "must match pattern \"^a\""
            ),
        ])
    );
}

#[test]
fn dependent_schemas_report_inside() {
    assert_eq!(
        issues(
            json!({"dependentSchemas": {"card": {"required": ["zip"]}}}),
            json!({"card": 1})
        ),
        json!([issue(
            "",
            "#/dependentSchemas/card/required",
            "required",
            json!({"missingProperty": "zip"}),
            "must have required property 'zip'"
        )])
    );
}

#[test]
fn prefix_items_and_unevaluated_items() {
    assert_eq!(
        issues(
            json!({"prefixItems": [{"type": "string"}], "unevaluatedItems": false}),
            json!([1, 2, 3])
        ),
        json!([
            issue(
                "/0",
                "#/prefixItems/0/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "",
                "#/unevaluatedItems",
                "unevaluatedItems",
                json!({"limit": 1}),
                "must NOT have more than 1 items"
            ),
        ])
    );
}

#[test]
fn keywords_for_any_type_come_before_object_keywords() {
    let schema = json!({
        "properties": {"kind": {"const": "a"}},
        "required": ["id"],
        "if": {"properties": {"kind": {"const": "b"}}},
        "then": {"required": ["b"]},
        "else": {"required": ["a"]}
    });
    assert_eq!(
        issues(schema, json!({"kind": "c"})),
        json!([
            issue(
                "",
                "#/else/required",
                "required",
                json!({"missingProperty": "a"}),
                "must have required property 'a'"
            ),
            issue(
                "",
                "#/if",
                "if",
                json!({"failingKeyword": "else"}),
                "must match \"else\" schema"
            ),
            issue(
                "",
                "#/required",
                "required",
                json!({"missingProperty": "id"}),
                "must have required property 'id'"
            ),
            issue(
                "/kind",
                "#/properties/kind/const",
                "const",
                json!({"allowedValue": "a"}),
                "must be equal to constant"
            ),
        ])
    );
}

#[test]
fn not_and_false_schema() {
    assert_eq!(
        issues(json!({"not": {"type": "string"}}), json!("x")),
        json!([issue("", "#/not", "not", json!({}), "must NOT be valid")])
    );
    assert_eq!(
        issues(json!(false), json!(1)),
        json!([issue(
            "",
            "#",
            "false schema",
            json!({}),
            "boolean schema is false"
        )])
    );
    assert_eq!(
        issues(json!({"properties": {"gone": false}}), json!({"gone": 1})),
        json!([issue(
            "/gone",
            "#/properties/gone",
            "false schema",
            json!({}),
            "boolean schema is false"
        )])
    );
}

#[test]
fn if_then_else_adds_the_if_issue() {
    let schema =
        json!({"if": {"type": "string"}, "then": {"minLength": 3}, "else": {"type": "integer"}});
    assert_eq!(
        issues(schema.clone(), json!("ab")),
        json!([
            issue(
                "",
                "#/then/minLength",
                "minLength",
                json!({"limit": 3}),
                "must NOT have fewer than 3 characters"
            ),
            issue(
                "",
                "#/if",
                "if",
                json!({"failingKeyword": "then"}),
                "must match \"then\" schema"
            ),
        ])
    );
    assert_eq!(
        issues(schema, json!(1.5)),
        json!([
            issue(
                "",
                "#/else/type",
                "type",
                json!({"type": "integer"}),
                "must be integer"
            ),
            issue(
                "",
                "#/if",
                "if",
                json!({"failingKeyword": "else"}),
                "must match \"else\" schema"
            ),
        ])
    );
}

#[test]
fn dependent_required() {
    assert_eq!(
        issues(
            json!({"dependentRequired": {"card": ["name", "zip"]}}),
            json!({"card": 1, "zip": 2})
        ),
        json!([issue(
            "",
            "#/dependentRequired",
            "dependentRequired",
            json!({"property": "card", "missingProperty": "name", "depsCount": 2, "deps": "name, zip"}),
            "must have properties name, zip when property card is present"
        )])
    );
    assert_eq!(
        issues(json!({"dependentRequired": {"a": ["b"]}}), json!({"a": 1})),
        json!([issue(
            "",
            "#/dependentRequired",
            "dependentRequired",
            json!({"property": "a", "missingProperty": "b", "depsCount": 1, "deps": "b"}),
            "must have property b when property a is present"
        )])
    );
}

#[test]
fn contains() {
    assert_eq!(
        issues(json!({"contains": {"type": "string"}}), json!([1])),
        json!([issue(
            "",
            "#/contains",
            "contains",
            json!({"minContains": 1}),
            "must contain at least 1 valid item(s)"
        )])
    );
    assert_eq!(
        issues(
            json!({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}),
            json!(["a"])
        ),
        json!([issue(
            "",
            "#/contains",
            "contains",
            json!({"minContains": 2, "maxContains": 3}),
            "must contain at least 2 and no more than 3 valid item(s)"
        )])
    );
}

#[test]
fn property_names() {
    assert_eq!(
        issues(
            json!({"propertyNames": {"maxLength": 2}}),
            json!({"ok": 1, "long": 2})
        ),
        json!([
            issue(
                "",
                "#/propertyNames/maxLength",
                "maxLength",
                json!({"limit": 2}),
                "must NOT have more than 2 characters"
            ),
            issue(
                "",
                "#/propertyNames",
                "propertyNames",
                json!({"propertyName": "long"}),
                "property name must be valid"
            ),
        ])
    );
}

#[test]
fn items_false_after_prefix_items_is_one_issue() {
    assert_eq!(
        issues(
            json!({"prefixItems": [{"type": "string"}], "items": false}),
            json!(["a", 2, 3])
        ),
        json!([issue(
            "",
            "#/items",
            "items",
            json!({"limit": 1}),
            "must NOT have more than 1 items"
        )])
    );
}

#[test]
fn unevaluated_properties_one_issue_per_property() {
    assert_eq!(
        issues(
            json!({"properties": {"a": {}}, "unevaluatedProperties": false}),
            json!({"a": 1, "b": 2, "c": 3})
        ),
        json!([
            issue(
                "",
                "#/unevaluatedProperties",
                "unevaluatedProperties",
                json!({"unevaluatedProperty": "b"}),
                "must NOT have unevaluated properties"
            ),
            issue(
                "",
                "#/unevaluatedProperties",
                "unevaluatedProperties",
                json!({"unevaluatedProperty": "c"}),
                "must NOT have unevaluated properties"
            ),
        ])
    );
}

#[test]
fn nested_instance_paths() {
    let schema = json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }
            }
        }
    });
    assert_eq!(
        issues(schema, json!({"items": [{"name": 1}, {}]})),
        json!([
            issue(
                "/items/0/name",
                "#/properties/items/items/properties/name/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "/items/1",
                "#/properties/items/items/required",
                "required",
                json!({"missingProperty": "name"}),
                "must have required property 'name'"
            ),
        ])
    );
}

#[test]
fn paths_are_escaped_like_ajv() {
    let schema = json!({
        "properties": {"a/b": {"type": "string"}, "my prop": {"minimum": 0}},
        "patternProperties": {"^x": {"type": "string"}}
    });
    assert_eq!(
        issues(schema, json!({"a/b": 1, "my prop": -1, "x~": 2})),
        json!([
            issue(
                "/a~1b",
                "#/properties/a~1b/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "/my prop",
                "#/properties/my%20prop/minimum",
                "minimum",
                json!({"comparison": ">=", "limit": 0}),
                "must be >= 0"
            ),
            issue(
                "/x~0",
                "#/patternProperties/%5Ex/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
        ])
    );
}

#[test]
fn many_errors_are_collected_in_ajv_order() {
    let schema = json!({
        "type": "object",
        "properties": {
            "age": {"type": "integer", "minimum": 0},
            "name": {"type": "string", "minLength": 1, "pattern": "^[A-Z]"}
        },
        "required": ["id", "name"],
        "additionalProperties": false
    });
    assert_eq!(
        issues(schema, json!({"age": -1.5, "name": "", "zzz": true})),
        json!([
            issue(
                "",
                "#/required",
                "required",
                json!({"missingProperty": "id"}),
                "must have required property 'id'"
            ),
            issue(
                "",
                "#/additionalProperties",
                "additionalProperties",
                json!({"additionalProperty": "zzz"}),
                "must NOT have additional properties"
            ),
            issue(
                "/age",
                "#/properties/age/type",
                "type",
                json!({"type": "integer"}),
                "must be integer"
            ),
            issue(
                "/age",
                "#/properties/age/minimum",
                "minimum",
                json!({"comparison": ">=", "limit": 0}),
                "must be >= 0"
            ),
            issue(
                "/name",
                "#/properties/name/minLength",
                "minLength",
                json!({"limit": 1}),
                "must NOT have fewer than 1 characters"
            ),
            issue(
                "/name",
                "#/properties/name/pattern",
                "pattern",
                json!({"pattern": "^[A-Z]"}),
                "must match pattern \"^[A-Z]\""
            ),
        ])
    );
}

#[test]
fn type_error_sorts_into_its_group_when_the_group_has_keywords() {
    // A single type with keywords of its own group: Ajv reports `type` where that
    // group would have run, after keywords for any type such as `enum`.
    assert_eq!(
        issues(
            json!({"type": "string", "minLength": 1, "enum": ["a"]}),
            json!(5)
        ),
        json!([
            issue(
                "",
                "#/enum",
                "enum",
                json!({"allowedValues": ["a"]}),
                "must be equal to one of the allowed values"
            ),
            issue(
                "",
                "#/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
        ])
    );
    assert_eq!(
        issues(json!({"type": "string", "enum": ["a"]}), json!(5)),
        json!([
            issue(
                "",
                "#/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "",
                "#/enum",
                "enum",
                json!({"allowedValues": ["a"]}),
                "must be equal to one of the allowed values"
            ),
        ])
    );
}

#[test]
fn refs_inlined_and_compiled_separately() {
    // `leaf` holds no reference: Ajv inlines it and reports through the `$ref` string.
    // `node` refers to itself: Ajv compiles it separately and restarts schemaPath at `#`.
    let schema = json!({
        "$defs": {
            "leaf": {"type": "string"},
            "node": {
                "type": "object",
                "properties": {"head": {"$ref": "#/$defs/leaf"}, "tail": {"$ref": "#/$defs/node"}},
                "required": ["head"]
            }
        },
        "properties": {"label": {"$ref": "#/$defs/leaf"}, "list": {"$ref": "#/$defs/node"}}
    });
    assert_eq!(
        issues(
            schema,
            json!({"label": 1, "list": {"head": 2, "tail": {"tail": 5}}})
        ),
        json!([
            issue(
                "/label",
                "#/$defs/leaf/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "/list/head",
                "#/$defs/leaf/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "/list/tail",
                "#/required",
                "required",
                json!({"missingProperty": "head"}),
                "must have required property 'head'"
            ),
            issue(
                "/list/tail/tail",
                "#/type",
                "type",
                json!({"type": "object"}),
                "must be object"
            ),
        ])
    );
}

#[test]
fn recursion_through_the_root() {
    let schema = json!({
        "type": "object",
        "properties": {"child": {"$ref": "#"}, "n": {"type": "number"}}
    });
    assert_eq!(
        issues(schema, json!({"child": {"child": {"n": "x"}}})),
        json!([issue(
            "/child/child/n",
            "#/properties/n/type",
            "type",
            json!({"type": "number"}),
            "must be number"
        )])
    );
}

#[test]
fn errors_inside_any_of_through_refs() {
    let schema = json!({
        "$defs": {"s": {"type": "string"}},
        "anyOf": [{"$ref": "#/$defs/s"}, {"type": "object", "properties": {"a": {"$ref": "#/$defs/s"}}}]
    });
    assert_eq!(
        issues(schema, json!({"a": 1})),
        json!([
            issue(
                "",
                "#/$defs/s/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "/a",
                "#/$defs/s/type",
                "type",
                json!({"type": "string"}),
                "must be string"
            ),
            issue(
                "",
                "#/anyOf",
                "anyOf",
                json!({}),
                "must match a schema in anyOf"
            ),
        ])
    );
}

#[test]
fn issue_without_optional_fields_still_serializes_ajv_keys() {
    let validator = Validator::new(&json!({"required": ["a"]})).expect("compiles");
    let issues = validator.validate(&json!({})).expect_err("invalid");
    let text = serde_json::to_string(&issues).expect("serializes");
    assert_eq!(
        text,
        r##"[{"instancePath":"","schemaPath":"#/required","keyword":"required","params":{"missingProperty":"a"},"message":"must have required property 'a'"}]"##
    );
}

#[test]
fn bad_schemas_are_rejected_with_a_location() {
    let err =
        Validator::new(&json!({"properties": {"a": {"type": "strin"}}})).expect_err("invalid");
    assert_eq!(err.location(), "#/properties/a/type");
    assert!(
        err.to_string()
            .starts_with("invalid JSON Schema at #/properties/a/type: "),
        "{err}"
    );
    assert!(Validator::new(&json!({"pattern": "("})).is_err());
    assert!(Validator::new(&json!({"$ref": "https://example.com/elsewhere.json"})).is_err());
}

#[test]
fn validator_is_shareable() {
    fn assert_send_sync<T: Send + Sync + std::fmt::Debug>() {}
    assert_send_sync::<Validator>();
    let validator = Validator::new(&message_schema()).expect("compiles");
    assert_eq!(validator.schema(), &message_schema());
}

#[test]
fn issues_are_bounded() {
    let validator = kindgi_validate::Validator::new(&serde_json::json!({
        "type": "array",
        "items": {"type": "string"}
    }))
    .expect("compiles");
    let instance = serde_json::Value::Array(vec![serde_json::json!(1); 10_000]);
    let issues = validator.validate(&instance).expect_err("invalid");
    assert_eq!(issues.len(), kindgi_validate::MAX_ISSUES);
    assert_eq!(issues[0].instance_path, "/0");
}
