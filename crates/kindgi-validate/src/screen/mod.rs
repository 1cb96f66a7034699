//! The screen: a valid instance checked straight from its JSON text, with
//! no tree built, for `Validator::accepts_text`.
//!
//! It knows the keywords derived schemas use — `type`, `enum`, `const`,
//! local `$ref`s, `properties`, `required`, `additionalProperties`,
//! `items`, the length, size and number bounds, `multipleOf`, the formats
//! checked here, and `anyOf` / `oneOf` whose branches take different kinds
//! of value — and checks them as the validator does. A schema with any
//! other keyword has no plan ([`Plan::new`] gives `None`). Where the screen
//! can't be sure — an invalid value, a default to fill, a repeated key — it
//! says no, and the caller takes the full path, whose answer then stands:
//! a "yes" must always be right, a "no" costs only time.

mod begun;
mod locate;
mod number;
mod plan;
mod read;
mod walk;

use serde::de::{DeserializeSeed, Deserializer};

pub(crate) use begun::reader_offset;
pub(crate) use locate::{Failure, Lone};
pub(crate) use plan::Plan;
pub(crate) use walk::TO_FILL;

/// The one error of the instance `text`, when it has exactly one that
/// the screen can be sure of (see [`locate`]). `read_to`: where a read
/// that checked the text in order stopped, if one did; the members it
/// finished are not read again.
pub(crate) fn lone(
    plan: &Plan,
    schema: &serde_json::Value,
    text: &[u8],
    read_to: Option<usize>,
) -> Option<Lone> {
    match read_to.and_then(|at| begun::shorten(text, at)) {
        Some(shortened) => locate::lone(plan, schema, &shortened.text, &shortened.passed),
        None => locate::lone(plan, schema, text, &[]),
    }
}

/// Whether `text` passes `plan`.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn passes(plan: &Plan, text: &[u8]) -> bool {
    walk::passes(plan, text)
}

/// `seed` read from `deserializer`, every value checked against `plan` as
/// it is read; an error unless the text passes.
pub(crate) fn deserialize_passing<'de, S, D>(
    plan: &Plan,
    seed: S,
    deserializer: D,
) -> Result<S::Value, D::Error>
where
    S: DeserializeSeed<'de>,
    D: Deserializer<'de>,
{
    seed.deserialize(read::Checked {
        walk: walk::Walk::root(plan),
        inner: deserializer,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::marker::PhantomData;

    use serde::Deserialize;
    use serde::de::{DeserializeOwned, IgnoredAny};
    use serde_json::{Value, json};

    use crate::Validator;

    /// `T` read from `text` through `deserialize_passing`, to its end.
    fn read<T: DeserializeOwned>(validator: &Validator, text: &str) -> serde_json::Result<T> {
        let mut reader = serde_json::Deserializer::from_str(text);
        let value = validator.deserialize_passing(PhantomData::<T>, &mut reader)?;
        reader.end()?;
        Ok(value)
    }

    /// `T` read in one pass where the screen passes `text`, else `None`;
    /// a value read is the one its tree gives.
    fn typed<T: DeserializeOwned + PartialEq + std::fmt::Debug>(
        schema: &Value,
        text: &str,
    ) -> Option<T> {
        let validator = Validator::new(schema).expect("a schema");
        let value = read::<T>(&validator, text).ok()?;
        assert!(validator.accepts_text(text.as_bytes()), "{schema} {text}");
        let tree: Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(
            serde_json::from_value::<T>(tree).ok().as_ref(),
            Some(&value)
        );
        Some(value)
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Status {
        Open,
        Paid,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Typed {
        id: String,
        count: u32,
        status: Option<Status>,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[test]
    fn a_typed_read_checks_every_value_it_reads_and_skips() {
        let schema = order();
        let read = |text| typed::<Typed>(&schema, text);
        assert_eq!(
            read(r#"{"id": "a", "count": 3, "status": "paid", "tags": ["x"]}"#),
            Some(Typed {
                id: "a".into(),
                count: 3,
                status: Some(Status::Paid),
                tags: vec!["x".into()]
            })
        );
        // Fields `Typed` doesn't have are checked all the same.
        assert!(read(r#"{"id": "a", "count": 3, "price": 0.5, "line": {"sku": "s"}}"#).is_some());
        for text in [
            r#"{"id": "a", "count": 3, "price": 0.125}"#,
            r#"{"id": "a", "count": 3, "line": {"next": {"sku": "t"}}}"#,
            r#"{"id": "a", "count": 3, "extra": {"b": 1, "a": 2}}"#,
            r#"{"id": "a", "count": 10}"#,
            r#"{"id": "abcde", "count": 3}"#,
            r#"{"id": "a", "count": 3, "status": "shipped"}"#,
            r#"{"id": "a", "count": 3, "tags": ["x", "y", "z"]}"#,
            r#"{"id": "a", "count": 3, "count": 3}"#,
            r#"{"id": "a"}"#,
            r#"{"count": 3, "id": "a", "other": 1}"#,
            // Valid, but not a `Typed`: the full path answers.
            r#"{"id": "a", "count": 3, "status": null, "tags": null}"#,
        ] {
            assert_eq!(read(text), None, "{text}");
        }
    }

    #[test]
    fn a_typed_read_of_maps_options_and_tuples() {
        let schema = json!({
            "type": "object",
            "properties": {
                "pair": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                "maybe": {"type": ["string", "null"], "maxLength": 2}
            }
        });
        #[derive(Debug, Deserialize, PartialEq)]
        struct Shapes {
            pair: Option<(u8, u8)>,
            #[serde(default)]
            counts: BTreeMap<String, i64>,
            maybe: Option<String>,
        }
        let value = typed::<Shapes>(
            &schema,
            r#"{"pair": [1, 2], "counts": {"a": 1, "b": -2}, "maybe": null}"#,
        )
        .expect("passes");
        assert_eq!(value.pair, Some((1, 2)));
        assert_eq!(value.counts.len(), 2);
        assert_eq!(value.maybe, None);
        assert!(typed::<Shapes>(&schema, r#"{"pair": [1, -2]}"#).is_none());
        assert!(typed::<Shapes>(&schema, r#"{"maybe": "abc"}"#).is_none());
        // A tuple shorter than the array stops before its end.
        assert!(typed::<Shapes>(&schema, r#"{"pair": [1, 2, 3]}"#).is_none());
    }

    #[test]
    fn shapes_the_checks_cannot_follow_stop_the_read() {
        let schema = json!({"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "object"}]});
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(rename_all = "lowercase")]
        enum Shape {
            A,
            B { size: u8 },
        }
        assert_eq!(typed::<Shape>(&schema, r#""a""#), Some(Shape::A));
        // Valid, and a `Shape`, but written as an object: not followed.
        assert_eq!(typed::<Shape>(&schema, r#"{"b": {"size": 1}}"#), None);
        let bytes = json!({"type": "string"});
        assert!(typed::<serde_bytes_like::Bytes>(&bytes, r#""ab""#).is_none());
        let wide = json!({"type": "integer"});
        assert_eq!(typed::<u128>(&wide, "3"), None);
        let validator = Validator::new(&json!({"type": "object"})).expect("a schema");
        assert!(read::<Box<serde_json::value::RawValue>>(&validator, "{}").is_err());
    }

    #[test]
    fn a_schema_without_a_plan_reads_nothing() {
        let validator =
            Validator::new(&json!({"type": "string", "pattern": "^a"})).expect("a schema");
        let error = read::<String>(&validator, r#""abc""#).expect_err("no plan");
        assert_eq!(error.to_string(), "no plan for this schema");
    }

    /// A type that reads a string as bytes.
    mod serde_bytes_like {
        use serde::de::{Deserialize, Deserializer, Error, Visitor};

        #[derive(Debug, PartialEq)]
        pub(super) struct Bytes(pub(super) Vec<u8>);

        impl<'de> Deserialize<'de> for Bytes {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
                struct Read;
                impl<'de> Visitor<'de> for Read {
                    type Value = Bytes;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("bytes")
                    }
                    fn visit_bytes<E: Error>(self, b: &[u8]) -> Result<Bytes, E> {
                        Ok(Bytes(b.to_vec()))
                    }
                    fn visit_str<E: Error>(self, s: &str) -> Result<Bytes, E> {
                        Ok(Bytes(s.as_bytes().to_vec()))
                    }
                }
                deserializer.deserialize_bytes(Read)
            }
        }
    }

    /// `accepts_text` on `text`, checked against the full path: a text it
    /// passes is valid and has nothing to fill. A read through
    /// `deserialize_passing` of a type that takes every value, or skips
    /// every value, passes the same texts.
    fn screen(schema: &Value, text: &str) -> bool {
        let validator = Validator::new(schema).expect("a schema");
        let passed = validator.accepts_text(text.as_bytes());
        assert_eq!(
            read::<IgnoredAny>(&validator, text).is_ok(),
            passed,
            "skipping {schema} {text}"
        );
        assert_eq!(
            read::<Value>(&validator, text).is_ok(),
            passed,
            "taking {schema} {text}"
        );
        if passed {
            let mut value: Value = serde_json::from_str(text).expect("JSON");
            assert!(validator.validate(&value).is_ok(), "{schema} {text}");
            let before = value.clone();
            validator.fill_defaults(&mut value);
            assert_eq!(before, value, "{schema} {text}");
        }
        passed
    }

    fn order() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Order",
            "type": "object",
            "properties": {
                "id": {"type": "string", "minLength": 1, "maxLength": 4},
                "count": {"type": "integer", "format": "int64", "minimum": 1, "exclusiveMaximum": 10},
                "price": {"type": "number", "minimum": 0, "multipleOf": 0.01},
                "status": {"$ref": "#/$defs/Status"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "note": {"type": ["string", "null"]},
                "when": {"type": "string", "format": "date"},
                "line": {"anyOf": [{"$ref": "#/$defs/Line"}, {"type": "null"}]},
                "extra": {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 3}
            },
            "required": ["id", "count"],
            "additionalProperties": false,
            "$defs": {
                "Status": {"type": "string", "enum": ["open", "paid"]},
                "Line": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "next": {"$ref": "#/$defs/Line"}},
                    "required": ["sku"]
                }
            }
        })
    }

    #[test]
    fn valid_texts_pass() {
        let schema = order();
        for text in [
            r#"{"id": "a", "count": 3}"#,
            r#"{"count": 9, "id": "abcd"}"#,
            r#"{"count": 9, "id": "abcd", "price": 0.25}"#,
            r#"{"count": 9, "id": "abcd", "status": "paid"}"#,
            r#"{"count": 9, "id": "abcd", "tags": ["x", "y"]}"#,
            r#"{"count": 9, "id": "abcd", "note": null}"#,
            r#"{"count": 9, "id": "abcd", "when": "2026-12-01"}"#,
            r#"{"count": 9, "id": "abcd", "line": {"sku": "s", "next": {"sku": "t"}}}"#,
            r#"{"count": 9, "id": "abcd", "extra": {"a": 1, "b": 2}}"#,
            r#"{"count": 9, "id": "abcd", "price": 0.25, "status": "paid", "tags": ["x", "y"],
                "note": null, "when": "2026-12-01", "line": {"sku": "s", "next": {"sku": "t"}},
                "extra": {"a": 1, "b": 2}}"#,
            r#"{"id": "\u00e9t\u00e9", "count": 5.00, "line": null}"#,
            r#"  {"id":"a","count":1}  "#,
        ] {
            assert!(screen(&schema, text), "{text}");
        }
    }

    #[test]
    fn invalid_texts_do_not() {
        let schema = order();
        for text in [
            r#"{"id": "a"}"#,
            r#"{"id": "", "count": 3}"#,
            r#"{"id": "abcde", "count": 3}"#,
            r#"{"id": "a", "count": 10}"#,
            r#"{"id": "a", "count": 0}"#,
            r#"{"id": "a", "count": 2.5}"#,
            r#"{"id": "a", "count": null}"#,
            r#"{"id": "a", "count": 3, "price": 0.125}"#,
            r#"{"id": "a", "count": 3, "price": -1}"#,
            r#"{"id": "a", "count": 3, "status": "shipped"}"#,
            r#"{"id": "a", "count": 3, "tags": ["x", "y", "z"]}"#,
            r#"{"id": "a", "count": 3, "tags": [1]}"#,
            r#"{"id": "a", "count": 3, "when": "2026-13-01"}"#,
            r#"{"id": "a", "count": 3, "line": {"next": {"sku": "t"}}}"#,
            r#"{"id": "a", "count": 3, "line": 7}"#,
            r#"{"id": "a", "count": 3, "other": 1}"#,
            r#"{"id": "a", "count": 3, "extra": {"a": 1.5}}"#,
            r#"{"id": "a", "count": 3, "extra": {"a": 1, "b": 2, "c": 3, "d": 4}}"#,
            r#"[]"#,
            r#"{"id": "a", "count": 3"#,
            r#"{"id": "a", "count": 3} x"#,
            r#"{"id": "a", "count": 1e400}"#,
            r#"{"id": "\ud800", "count": 3}"#,
        ] {
            assert!(!screen(&schema, text), "{text}");
        }
    }

    /// `issues_from_text` on `text`, checked against the full path: the
    /// issues it gives are those of the text's tree, filled. Read on from
    /// where a typed read (of a tree, or of a struct) stopped, the answer
    /// is the same.
    fn lone(schema: &Value, text: &str) -> Option<Value> {
        let validator = Validator::new(schema).expect("a schema");
        let issues = validator.issues_from_text(text.as_bytes());
        let refusals = [
            read::<Value>(&validator, text).err(),
            read::<Typed>(&validator, text).err(),
        ];
        for refused in refusals.iter().flatten() {
            assert_eq!(
                validator.issues_from_refused_text(text.as_bytes(), refused),
                issues,
                "{schema} {text} {refused}"
            );
        }
        let issues = issues?;
        let mut tree: Value = serde_json::from_str(text).expect("JSON");
        validator.fill_defaults(&mut tree);
        assert_eq!(
            validator.validate(&tree),
            Err(issues.clone()),
            "{schema} {text}"
        );
        Some(serde_json::to_value(issues).expect("issues"))
    }

    #[test]
    fn a_lone_error_is_answered_from_the_text() {
        let schema = order();
        assert_eq!(
            lone(&schema, r#"{"id": "a", "count": 3, "status": "shipped"}"#),
            Some(json!([{
                "instancePath": "/status",
                "schemaPath": "#/$defs/Status/enum",
                "keyword": "enum",
                "params": {"allowedValues": ["open", "paid"]},
                "message": "must be equal to one of the allowed values"
            }]))
        );
        assert_eq!(
            lone(&schema, r#"{"id": "a", "count": 3, "tags": ["x", 1]}"#),
            Some(json!([{
                "instancePath": "/tags/1",
                "schemaPath": "#/properties/tags/items/type",
                "keyword": "type",
                "params": {"type": "string"},
                "message": "must be string"
            }]))
        );
        assert_eq!(
            lone(&schema, r#"{"count": 3}"#),
            Some(json!([{
                "instancePath": "",
                "schemaPath": "#/required",
                "keyword": "required",
                "params": {"missingProperty": "id"},
                "message": "must have required property 'id'"
            }]))
        );
        for text in [
            r#"{"id": "", "count": 3}"#,
            r#"{"id": "abcde", "count": 3}"#,
            r#"{"id": "a", "count": 0}"#,
            r#"{"id": "a", "count": 10}"#,
            r#"{"id": "a", "count": 2.5}"#,
            r#"{"id": "a", "count": null}"#,
            r#"{"id": "a", "count": 3, "price": 0.125}"#,
            r#"{"id": "a", "count": 3, "price": -1}"#,
            r#"{"id": "a", "count": 3, "tags": ["x", "y", "z"]}"#,
            r#"{"id": "a", "count": 3, "note": 1}"#,
            r#"{"id": "a", "count": 3, "when": "2026-13-01"}"#,
            r#"{"id": "a", "count": 3, "other": {"b": [1, 2]}}"#,
            r#"{"id": "a", "count": 3, "extra": {"a": 1.5}}"#,
            r#"{"id": "a", "count": 3, "extra": {"a": 1, "b": 2, "c": 3, "d": 4}}"#,
            r#"{"id": "a", "count": 3, "extra": {"a": 1, "b": "x"}}"#,
        ] {
            assert!(lone(&schema, text).is_some(), "{text}");
        }
    }

    #[test]
    fn other_texts_are_left_to_the_full_path() {
        let schema = order();
        for text in [
            // Valid.
            r#"{"id": "a", "count": 3}"#,
            // Two errors, in one value or two.
            r#"{"id": "", "count": 0}"#,
            r#"{"id": "a", "count": 10.5}"#,
            r#"{"count": 3, "other": 1}"#,
            r#"{"id": "a", "count": 3, "x": 1, "y": 2}"#,
            // Inside an `anyOf` branch, or failing every branch.
            r#"{"id": "a", "count": 3, "line": {"next": {"sku": "t"}}}"#,
            r#"{"id": "a", "count": 3, "line": 7}"#,
            // An array or object of a type refused: its members count too.
            r#"[]"#,
            r#"{"id": "a", "count": 3, "tags": {}}"#,
            // A key that repeats; keys that may.
            r#"{"id": "a", "count": 3, "count": 10}"#,
            r#"{"id": "a", "count": 3, "extra": {"a": 1.5, "a": 1}}"#,
            // Not one JSON value.
            r#"{"id": "a", "count": 10"#,
            r#"{"id": "a", "count": 10} x"#,
            r#"{"id": "a", "count": 1e400}"#,
        ] {
            assert_eq!(lone(&schema, text), None, "{text}");
        }
        let defaulted = json!({
            "type": "object",
            "properties": {
                "loud": {"type": "boolean", "default": false},
                "level": {"type": "integer", "maximum": 3},
                "mode": {"const": "fast"},
                "host": {"type": "string", "format": "ipv6"}
            }
        });
        assert!(lone(&defaulted, r#"{"loud": true, "level": 4}"#).is_some());
        assert!(lone(&defaulted, r#"{"loud": true, "mode": "slow"}"#).is_some());
        // A default to fill first; a format not checked here.
        assert_eq!(lone(&defaulted, r#"{"level": 4}"#), None);
        assert_eq!(lone(&defaulted, r#"{"loud": true, "host": "x"}"#), None);
    }

    #[test]
    fn a_lone_error_in_a_large_instance_is_its_first() {
        // More values than every issue is looked for in: the full path
        // answers the first error's issues, the one error's here.
        let item =
            json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}});
        let schema = json!({"type": "array", "items": item});
        let mut items = vec![r#"{"n": 1}"#; 60_000];
        items[59_999] = r#"{"n": 10}"#;
        let text = format!("[{}]", items.join(","));
        let issues = lone(&schema, &text).expect("one error");
        assert_eq!(issues[0]["instancePath"], "/59999/n");
    }

    #[test]
    fn what_a_read_passed_is_not_read_again() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "integer", "maximum": 9}},
                "name": {"type": "string"}
            },
            "required": ["name"],
            "additionalProperties": false
        });
        let validator = Validator::new(&schema).expect("a schema");
        let plan = validator.plan.as_ref().expect("a plan");
        let text = r#"{"items": [10, 11, 12], "name": "x"}"#;
        let lone_from = |at: Option<usize>| {
            super::lone(plan, &schema, text.as_bytes(), at).map(|lone| lone.instance_path)
        };
        // Three errors: no lone one.
        assert!(lone_from(None).is_none());
        // Told that a read passed the first two items (it stood at the
        // third), the walk looks no further back: the third is the one.
        let third = text.find("12").expect("the third");
        assert_eq!(
            lone_from(Some(third + 1)).map(|path| path.to_string()),
            Some("/items/2".to_owned())
        );
        // Past the array: all of it passed; the keys of its object still
        // count (`name` is there, nothing is missing).
        let name = text.find(r#""x""#).expect("the name");
        assert!(lone_from(Some(name)).is_none());
        let valid = r#"{"items": [1, 2], "name": "x"}"#;
        let at_end = super::lone(plan, &schema, valid.as_bytes(), Some(valid.len()));
        assert!(at_end.is_none());
        let missing = r#"{"items": [1, 2]}"#;
        let at_end = super::lone(plan, &schema, missing.as_bytes(), Some(missing.len()));
        assert_eq!(
            at_end.map(|lone| lone.failure),
            Some(super::Failure::Required("name".to_owned()))
        );
    }

    #[test]
    fn keys_are_told_apart_past_their_first_eight_bytes() {
        // Names of up to eight bytes are matched by their head word alone;
        // longer ones by the rest too. Every one is typed apart, and two
        // are required.
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "ab": {"type": "string"},
                "quantity": {"type": "integer"},
                "quantityMax": {"type": "string"},
                "quantityMin": {"type": "boolean"},
                "ü": {"type": "null"}
            },
            "required": ["quantity", "quantityMin"],
            "additionalProperties": false
        });
        for (text, passes) in [
            (r#"{"quantity": 1, "quantityMin": true}"#, true),
            (
                r#"{"a": 1, "ab": "x", "quantity": 1, "quantityMax": "y", "quantityMin": false, "ü": null}"#,
                true,
            ),
            (r#"{"quantity": 1, "quantityMin": 1}"#, false),
            (
                r#"{"quantity": 1, "quantityMin": true, "quantityMax": true}"#,
                false,
            ),
            (r#"{"quantity": 1, "quantityMin": true, "ab": 1}"#, false),
            (r#"{"quantity": 1, "quantityMin": true, "a": "x"}"#, false),
            (r#"{"quantity": 1, "quantityMin": true, "ü": 1}"#, false),
            // Not declared: a prefix, a longer name, the same head.
            (
                r#"{"quantity": 1, "quantityMin": true, "quantit": 1}"#,
                false,
            ),
            (
                r#"{"quantity": 1, "quantityMin": true, "quantityMinimum": 1}"#,
                false,
            ),
            (
                r#"{"quantity": 1, "quantityMin": true, "quantityMix": true}"#,
                false,
            ),
            // A required one missing, the other there.
            (r#"{"quantity": 1, "quantityMax": "y"}"#, false),
            (r#"{"quantityMin": true}"#, false),
        ] {
            assert_eq!(screen(&schema, text), passes, "{text}");
        }
    }

    #[test]
    fn each_of_many_properties_is_checked_by_its_own_schema() {
        // As many properties as a plan takes, names of every length, many
        // sharing a head word: each one's value must be at most its index,
        // so a key found at another property's schema fails some text.
        let names: Vec<String> = (0..128)
            .map(|i| match i % 4 {
                0 => format!("p{i}"),
                1 => format!("property{i}"),
                2 => format!("propertyName{i}"),
                _ => "x".repeat(i / 4 + 1),
            })
            .collect();
        let properties: serde_json::Map<String, Value> = names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.clone(), json!({"type": "integer", "maximum": i})))
            .collect();
        let schema = json!({
            "type": "object",
            "properties": properties,
            "additionalProperties": false
        });
        let text = |values: &dyn Fn(usize) -> usize| {
            let entries: Vec<String> = names
                .iter()
                .enumerate()
                .rev()
                .map(|(i, name)| format!("\"{name}\": {}", values(i)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        };
        assert!(screen(&schema, &text(&|i| i)));
        for (index, name) in names.iter().enumerate() {
            let over = text(&|i| if i == index { i + 1 } else { i });
            assert!(!screen(&schema, &over), "{name}");
        }
        for undeclared in ["p128", "property", "propertyName", "xx2", "", "P0"] {
            let text = format!("{{\"{undeclared}\": 0}}");
            assert!(!screen(&schema, &text), "{undeclared}");
        }
    }

    #[test]
    fn number_bounds_hold_to_the_last_float() {
        let schema = json!({"type": "number", "exclusiveMinimum": 2, "maximum": 2.5});
        for (text, passes) in [
            ("2", false),
            ("2.0", false),
            ("2.0000000000000004", true),
            ("2.25", true),
            ("2.5", true),
            ("2.5000000000000004", false),
            ("3", false),
        ] {
            assert_eq!(screen(&schema, text), passes, "{text}");
        }
        let schema = json!({"type": "integer", "minimum": -3, "exclusiveMaximum": -1});
        for (text, passes) in [("-4", false), ("-3", true), ("-2", true), ("-1", false)] {
            assert_eq!(screen(&schema, text), passes, "{text}");
        }
        // Integers past 2^53 against a float bound: left to the full path.
        let schema = json!({"type": "integer", "maximum": 1e17});
        assert!(screen(&schema, "9007199254740992"));
        assert!(!screen(&schema, "9007199254740993"));
        assert!(!screen(&schema, "-9007199254740993"));
    }

    #[test]
    fn texts_a_tree_would_read_otherwise_do_not() {
        let schema = order();
        // A repeated key: the tree keeps the last one.
        assert!(!screen(&schema, r#"{"id": "a", "count": 3, "count": 4}"#));
        // A map's keys out of order: a map type would see them in another order.
        assert!(!screen(
            &schema,
            r#"{"id": "a", "count": 3, "extra": {"b": 1, "a": 2}}"#
        ));
        assert!(!screen(
            &schema,
            r#"{"id": "a", "count": 3, "extra": {"a": 1, "a": 2}}"#
        ));
        assert!(screen(
            &schema,
            r#"{"id": "a", "count": 3, "extra": {"a": 1, "b": 2}}"#
        ));
    }

    #[test]
    fn a_missing_default_is_left_to_the_full_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "loud": {"type": "boolean", "default": false},
                "level": {"$ref": "#/$defs/Level"}
            },
            "$defs": {"Level": {"type": "integer", "default": 3}}
        });
        assert!(screen(&schema, r#"{"loud": true, "level": 1}"#));
        assert!(!screen(&schema, r#"{"level": 1}"#));
        assert!(!screen(&schema, r#"{"loud": true}"#));
    }

    #[test]
    fn lengths_count_characters_not_bytes() {
        let schema = json!({"type": "string", "minLength": 2, "maxLength": 3});
        for text in [
            r#""ab""#,
            r#""abc""#,
            r#""éé""#,
            r#""ééé""#,
            r#""😀😀""#,
            r#""a😀""#,
        ] {
            assert!(screen(&schema, text), "{text}");
        }
        for text in [
            r#""a""#,
            r#""abcd""#,
            r#""é""#,
            r#""😀""#,
            r#""éééé""#,
            r#""😀😀😀😀""#,
        ] {
            assert!(!screen(&schema, text), "{text}");
        }
    }

    #[test]
    fn numbers_compare_exactly() {
        let schema = json!({"type": "integer", "maximum": 9007199254740993_u64});
        assert!(screen(&schema, "9007199254740993"));
        assert!(!screen(&schema, "9007199254740994"));
        let schema = json!({"enum": [1, "a", null, true]});
        for text in ["1", "1.0", "\"a\"", "null", "true"] {
            assert!(screen(&schema, text), "{text}");
        }
        for text in ["2", "\"b\"", "false", "[]"] {
            assert!(!screen(&schema, text), "{text}");
        }
        let schema = json!({"type": "number", "exclusiveMinimum": 0.5});
        assert!(screen(&schema, "0.5000001"));
        assert!(!screen(&schema, "0.5"));
    }

    #[test]
    fn schemas_with_other_keywords_have_no_plan() {
        for schema in [
            json!({"type": "string", "pattern": "^a"}),
            json!({"allOf": [{"type": "string"}]}),
            json!({"type": "array", "uniqueItems": true}),
            json!({"type": "object", "patternProperties": {"^a": {}}}),
            json!({"not": {"type": "null"}}),
            json!({"$id": "https://x", "type": "string"}),
            // Branches that take the same kind of value.
            json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 3}]}),
            json!({"anyOf": [{"type": "object"}, {"properties": {"a": {}}}]}),
            // A required property the schema doesn't declare.
            json!({"type": "object", "required": ["a"]}),
            // Both `const` and `enum`: the value must be in both.
            json!({"const": 1, "enum": [1, 2]}),
        ] {
            let validator = Validator::new(&schema).expect("a schema");
            assert!(validator.plan.is_none(), "{schema}");
        }
    }

    #[test]
    fn a_string_of_a_format_not_checked_here_is_left_to_the_full_path() {
        let schema = json!({"type": ["string", "integer"], "format": "ipv6"});
        assert!(!screen(&schema, r#""::1""#));
        // The format judges strings only.
        assert!(screen(&schema, "7"));
    }

    #[test]
    fn reference_cycles_end() {
        let schema = json!({"$ref": "#"});
        assert!(!screen(&schema, "1"));
        let schema = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert!(!screen(&schema, "1"));
    }

    #[test]
    fn deep_texts_end() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(!screen(&json!({}), &deep));
        let shallow = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(screen(&json!({}), &shallow));
    }
}
