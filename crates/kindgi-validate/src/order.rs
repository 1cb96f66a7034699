//! The order in which Ajv evaluates keywords, and so reports their errors.
//!
//! Ajv does not follow the schema's key order. Within one schema object it runs
//! keyword groups in a fixed order: keywords for any type (`$ref`, `const`,
//! `enum`, `not`, `anyOf`, `oneOf`, `allOf`, `if`), then number, string, array
//! and object keywords, each group in the order its vocabulary defines them. A
//! `type` failure comes first, unless the schema has a single type with
//! keywords of that type's group, in which case it is reported where that group
//! would have run.

use serde_json::{Map, Value};

/// A rank that sorts after every keyword; also "after every branch".
pub(crate) const LAST: u32 = u32::MAX;

const ANY: u32 = 100;
const NUMBER: u32 = 200;
const STRING: u32 = 300;
const ARRAY: u32 = 400;
const OBJECT: u32 = 500;
/// Offset within a group of a `type` error reported in that group.
const TYPE_IN_GROUP: u32 = 99;

const NUMBER_KEYWORDS: [&str; 6] = [
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "multipleOf",
    "format",
];
const STRING_KEYWORDS: [&str; 4] = ["maxLength", "minLength", "pattern", "format"];
const ARRAY_KEYWORDS: [&str; 9] = [
    "maxItems",
    "minItems",
    "prefixItems",
    "items",
    "uniqueItems",
    "contains",
    "maxContains",
    "minContains",
    "unevaluatedItems",
];
const OBJECT_KEYWORDS: [&str; 11] = [
    "maxProperties",
    "minProperties",
    "required",
    "propertyNames",
    "additionalProperties",
    "dependencies",
    "properties",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
];

/// The sort rank of `keyword`'s errors within the schema object `schema`,
/// for an instance `instance` at that level.
pub(crate) fn rank(keyword: &str, schema: &Map<String, Value>, instance: Option<&Value>) -> u32 {
    match keyword {
        "type" => type_rank(schema),
        "format" => match instance {
            Some(Value::String(_)) => STRING + 4,
            _ => NUMBER + 6,
        },
        "$dynamicRef" | "$recursiveRef" => ANY + 1,
        "$ref" => ANY + 2,
        "const" => ANY + 3,
        "enum" => ANY + 4,
        "not" => ANY + 5,
        "anyOf" => ANY + 6,
        "oneOf" => ANY + 7,
        "allOf" => ANY + 8,
        "if" | "then" | "else" => ANY + 9,
        "maximum" => NUMBER + 1,
        "minimum" => NUMBER + 2,
        "exclusiveMaximum" => NUMBER + 3,
        "exclusiveMinimum" => NUMBER + 4,
        "multipleOf" => NUMBER + 5,
        "maxLength" => STRING + 1,
        "minLength" => STRING + 2,
        "pattern" => STRING + 3,
        "contains" | "minContains" | "maxContains" => ARRAY + 6,
        other => group_position(other).unwrap_or(LAST - 1),
    }
}

fn group_position(keyword: &str) -> Option<u32> {
    let position = |list: &[&str], base: u32| {
        list.iter()
            .position(|k| *k == keyword)
            .and_then(|i| u32::try_from(i + 1).ok())
            .map(|i| base + i)
    };
    position(&ARRAY_KEYWORDS, ARRAY).or_else(|| position(&OBJECT_KEYWORDS, OBJECT))
}

/// Where a `type` error sorts: first, or in the group of the schema's single type.
fn type_rank(schema: &Map<String, Value>) -> u32 {
    let single = match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(types)) if types.len() == 1 => types[0].as_str(),
        _ => None,
    };
    let group = match single {
        Some("number") => Some((NUMBER, &NUMBER_KEYWORDS[..])),
        Some("string") => Some((STRING, &STRING_KEYWORDS[..])),
        Some("array") => Some((ARRAY, &ARRAY_KEYWORDS[..])),
        Some("object") => Some((OBJECT, &OBJECT_KEYWORDS[..])),
        _ => None,
    };
    match group {
        Some((base, keywords)) if keywords.iter().any(|k| schema.contains_key(*k)) => {
            base + TYPE_IN_GROUP
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn type_first_unless_single_type_with_group_keywords() {
        assert_eq!(rank("type", &obj(json!({"type": "string"})), None), 0);
        assert_eq!(
            rank("type", &obj(json!({"type": "integer", "minimum": 1})), None),
            0
        );
        assert_eq!(
            rank(
                "type",
                &obj(json!({"type": ["string", "null"], "minLength": 1})),
                None
            ),
            0
        );
        let s = obj(json!({"type": "string", "minLength": 1, "enum": ["a"]}));
        assert!(rank("type", &s, None) > rank("enum", &s, None));
    }

    #[test]
    fn groups_run_in_ajv_order() {
        let s = Map::new();
        let order = [
            "$ref",
            "const",
            "enum",
            "anyOf",
            "maximum",
            "multipleOf",
            "maxLength",
            "pattern",
            "minItems",
            "items",
            "uniqueItems",
            "contains",
            "required",
            "additionalProperties",
            "properties",
            "dependentRequired",
            "unevaluatedProperties",
        ];
        for pair in order.windows(2) {
            assert!(
                rank(pair[0], &s, None) < rank(pair[1], &s, None),
                "{pair:?}"
            );
        }
        assert!(rank("format", &s, Some(&json!("x"))) > rank("pattern", &s, None));
        assert!(rank("format", &s, Some(&json!(1))) < rank("maxLength", &s, None));
    }
}
