//! Ajv `useDefaults` filling.

use kindgi_validate::Validator;
use serde_json::{Value, json};

fn filled(schema: Value, mut instance: Value) -> Value {
    Validator::new(&schema)
        .expect("schema compiles")
        .fill_defaults(&mut instance);
    instance
}

#[test]
fn missing_property_gets_its_default() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer", "default": 1}, "b": {"type": "string"}}
    });
    assert_eq!(filled(schema.clone(), json!({})), json!({"a": 1}));
    assert_eq!(filled(schema.clone(), json!({"a": 5})), json!({"a": 5}));
    // Present values, null included, are left alone.
    assert_eq!(filled(schema, json!({"a": null})), json!({"a": null}));
}

#[test]
fn non_objects_are_left_alone() {
    let schema = json!({"properties": {"a": {"default": 1}}});
    assert_eq!(filled(schema.clone(), json!([1])), json!([1]));
    assert_eq!(filled(schema, json!("x")), json!("x"));
}

#[test]
fn nested_defaults_fill_present_objects() {
    let schema = json!({
        "properties": {
            "options": {
                "type": "object",
                "properties": {"depth": {"default": 3}, "mode": {"default": "fast"}}
            }
        }
    });
    assert_eq!(
        filled(schema.clone(), json!({"options": {"mode": "slow"}})),
        json!({"options": {"depth": 3, "mode": "slow"}})
    );
    // No default for `options` itself: nothing is created.
    assert_eq!(filled(schema, json!({})), json!({}));
}

#[test]
fn defaults_inside_an_inserted_default_are_filled() {
    let schema = json!({
        "properties": {
            "a": {
                "default": {},
                "properties": {
                    "b": {
                        "default": {"c": 1},
                        "properties": {"d": {"default": []}, "c": {"default": 2}}
                    }
                }
            }
        }
    });
    assert_eq!(
        filled(schema, json!({})),
        json!({"a": {"b": {"c": 1, "d": []}}})
    );
}

#[test]
fn inserted_defaults_are_copies() {
    let schema = json!({"properties": {"list": {"default": [], "items": {"properties": {"x": {"default": 0}}}}}});
    let validator = Validator::new(&schema).expect("compiles");
    let mut first = json!({});
    validator.fill_defaults(&mut first);
    if let Some(list) = first.get_mut("list").and_then(Value::as_array_mut) {
        list.push(json!({}));
    }
    let mut second = json!({});
    validator.fill_defaults(&mut second);
    assert_eq!(second, json!({"list": []}));
    assert_eq!(validator.schema(), &schema);
}

#[test]
fn array_items_and_prefix_items() {
    let schema = json!({
        "prefixItems": [{"properties": {"first": {"default": true}}}],
        "items": {"properties": {"rest": {"default": true}}}
    });
    assert_eq!(
        filled(schema, json!([{}, {}, {"rest": false}])),
        json!([{"first": true}, {"rest": true}, {"rest": false}])
    );
}

#[test]
fn refs_and_all_of_are_followed_any_of_is_not() {
    let schema = json!({
        "$defs": {
            "settings": {"properties": {"level": {"default": "info"}}},
            "tree": {"properties": {"name": {"default": "leaf"}, "kids": {"items": {"$ref": "#/$defs/tree"}}}}
        },
        "properties": {
            "settings": {"$ref": "#/$defs/settings"},
            "tree": {"$ref": "#/$defs/tree"},
            "merged": {"allOf": [{"properties": {"x": {"default": 1}}}, {"properties": {"y": {"default": 2}}}]},
            "either": {"anyOf": [{"properties": {"z": {"default": 3}}}]},
            "one": {"oneOf": [{"properties": {"z": {"default": 3}}}]}
        }
    });
    assert_eq!(
        filled(
            schema,
            json!({"settings": {}, "tree": {"kids": [{}, {"kids": [{}]}]}, "merged": {}, "either": {}, "one": {}})
        ),
        json!({
            "settings": {"level": "info"},
            "tree": {"name": "leaf", "kids": [{"name": "leaf"}, {"name": "leaf", "kids": [{"name": "leaf"}]}]},
            "merged": {"x": 1, "y": 2},
            "either": {},
            "one": {}
        })
    );
}

#[test]
fn ref_defaults_apply_before_own_defaults() {
    // Ajv runs `$ref` before the object keywords, so the referenced default wins.
    let schema = json!({
        "$defs": {"base": {"properties": {"x": {"default": "from ref"}}}},
        "$ref": "#/$defs/base",
        "properties": {"x": {"default": "own"}}
    });
    assert_eq!(filled(schema, json!({})), json!({"x": "from ref"}));
}

#[test]
fn additional_properties_values_are_filled() {
    let schema = json!({
        "properties": {"fixed": {"properties": {"a": {"default": 1}}}},
        "additionalProperties": {"properties": {"b": {"default": 2}}}
    });
    assert_eq!(
        filled(schema, json!({"fixed": {}, "other": {}})),
        json!({"fixed": {"a": 1}, "other": {"b": 2}})
    );
}

#[test]
fn self_referencing_schema_without_descent_terminates() {
    let schema = json!({"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "$ref": "#/$defs/loop", "properties": {"a": {"default": 1}}});
    if let Ok(validator) = Validator::new(&schema) {
        let mut value = json!({});
        validator.fill_defaults(&mut value);
        assert_eq!(value, json!({"a": 1}));
    }
}

#[test]
fn schema_without_defaults_changes_nothing() {
    let schema = json!({"properties": {"a": {"properties": {"b": {"type": "string"}}}}});
    assert_eq!(filled(schema, json!({"a": {}})), json!({"a": {}}));
}

#[test]
fn filled_instance_validates() {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "integer", "default": 10}},
        "required": ["n"]
    });
    let validator = Validator::new(&schema).expect("compiles");
    let mut input = json!({});
    assert!(validator.validate(&input).is_err());
    validator.fill_defaults(&mut input);
    assert_eq!(validator.validate(&input), Ok(()));
}

#[test]
fn a_default_that_holds_its_own_schema_stops_filling() {
    let validator = kindgi_validate::Validator::new(&serde_json::json!({
        "type": "object",
        "properties": {"child": {"$ref": "#", "default": {}}}
    }))
    .expect("compiles");
    let mut instance = serde_json::json!({});
    validator.fill_defaults(&mut instance);
    let mut depth = 0;
    let mut cursor = &instance;
    while let Some(child) = cursor.get("child") {
        depth += 1;
        cursor = child;
    }
    assert!((100..=200).contains(&depth), "filled {depth} levels");
}

/// Every key in `value`, at every depth.
fn keys(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.len() + map.values().map(keys).sum::<usize>(),
        Value::Array(items) => items.iter().map(keys).sum(),
        _ => 0,
    }
}

#[test]
fn two_defaults_that_hold_their_own_schema_stop_at_the_budget() {
    // Bounded in depth only, this would fill a binary tree 128 levels deep.
    let validator = Validator::new(&json!({
        "type": "object",
        "properties": {
            "left": {"$ref": "#", "default": {}},
            "right": {"$ref": "#", "default": {}}
        }
    }))
    .expect("compiles");
    let mut once = json!({});
    validator.fill_defaults(&mut once);
    assert_eq!(keys(&once), kindgi_validate::MAX_FILLED_DEFAULTS);
    // The budget runs out at the same place again: filling twice is
    // filling once.
    let mut twice = once.clone();
    validator.fill_defaults(&mut twice);
    assert_eq!(twice, once);
    assert_eq!(validator.validate(&once), Ok(()));
}

#[test]
fn the_budget_counts_defaulted_properties_across_list_items() {
    let max = kindgi_validate::MAX_FILLED_DEFAULTS;
    let validator = Validator::new(&json!({
        "type": "array",
        "items": {"type": "object", "properties": {"k": {"default": "v"}}}
    }))
    .expect("compiles");
    // Under the budget, every item is filled.
    let mut under = Value::Array(vec![json!({}); max]);
    validator.fill_defaults(&mut under);
    assert!(
        under
            .as_array()
            .is_some_and(|items| items.iter().all(|i| *i == json!({"k": "v"})))
    );
    // Past it, the first `max` are, the rest are left as they were.
    let mut over = Value::Array(vec![json!({}); max + 5]);
    validator.fill_defaults(&mut over);
    let items = over.as_array().expect("a list");
    assert!(items[..max].iter().all(|i| *i == json!({"k": "v"})));
    assert!(items[max..].iter().all(|i| *i == json!({})));
}
