//! The derived schemas say what serde does, on both sides: every value a
//! type writes passes its output schema, and every input its input schema
//! accepts (after its defaults are filled in) reads into the type.
//!
//! First a table of types, one for each serde feature, with the parts of
//! their schemas that matter; then property tests over the same types:
//! serialized values against the output schema; the same values (made what
//! a caller sends, where the two sides differ) against the input schema,
//! read back into the type; then those inputs spoiled at random (a field
//! dropped, nulled, renamed or added, a value replaced) against the input
//! schema, where every value it accepts must read into the type.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

use kindgi::{input_schema_for, output_schema_for};
use kindgi_validate::Validator;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use proptest_derive::Arbitrary;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value, json};

// ---------------------------------------------------------------------------
// The types.

/// `skip_serializing_if`, `Option`, `skip`, `default`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct Answer {
    text: String,
    /// Written only when not empty; serde still needs it (no `default`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[proptest(strategy = "prop::collection::vec(\"[a-z]{0,4}\", 0..3)")]
    notes: Vec<String>,
    /// Written only when set; serde reads a missing one as `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    /// Always written (`null` for `None`); optional to read.
    score: Option<u8>,
    #[serde(skip)]
    #[proptest(value = "0")]
    #[expect(dead_code, reason = "serde neither reads nor writes it")]
    cache: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    retries: u32,
    #[serde(default = "three")]
    level: i16,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn three() -> i16 {
    3
}

/// `rename`, `rename_all`, a name for each side, `skip_serializing`,
/// `skip_deserializing`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
#[serde(rename_all = "camelCase")]
struct Names {
    #[serde(rename = "who")]
    name: String,
    #[serde(rename(serialize = "sentAt", deserialize = "at"))]
    sent_at: u32,
    snake_case_field: bool,
    #[serde(skip_serializing, default)]
    #[expect(dead_code, reason = "read, never written")]
    secret: String,
    #[serde(skip_deserializing)]
    computed: u8,
}

/// A container `default`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
#[serde(default)]
struct Defaulted {
    limit: u16,
    mode: Plain,
    #[serde(rename = "dryRun")]
    dry_run: bool,
}

impl Default for Defaulted {
    fn default() -> Self {
        Defaulted {
            limit: 10,
            mode: Plain::DarkRed,
            dry_run: true,
        }
    }
}

/// Unit variants without doc comments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
#[serde(rename_all = "kebab-case")]
enum Plain {
    DarkRed,
    Blue,
}

/// Unit variants with doc comments (a `oneOf` of `const`s).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
#[serde(rename_all = "lowercase")]
enum Documented {
    /// The first.
    First,
    /// The second.
    Second,
}

/// Externally tagged, every kind of variant.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
enum External {
    Unit,
    Num(i32),
    Pair(u8, String),
    Named {
        flag: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

/// Internally tagged.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Internal {
    Unit,
    Named {
        x: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        label: Option<String>,
    },
    Wrapped(Inner<u8>),
}

/// Adjacently tagged.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Unit,
    Num(i32),
    Pair(u8, String),
    Named { a: bool },
}

/// Untagged, with alternatives that do not overlap.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
#[serde(untagged)]
enum Untagged {
    Nothing,
    Number(u8),
    Text(String),
    Pair { a: u8, b: String },
}

/// A generic struct with a `default`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct Inner<T> {
    value: T,
    #[serde(default)]
    #[proptest(strategy = "prop::collection::vec(\"[a-z]{0,4}\", 0..3)")]
    tags: Vec<String>,
}

/// A generic wrapper.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct Wrapper<T> {
    items: T,
}

/// A flattened internally tagged enum beside a flattened struct.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct Flattened {
    id: u8,
    #[serde(flatten)]
    shape: Shape,
    #[serde(flatten)]
    meta: Meta,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
#[serde(tag = "shape", rename_all = "lowercase")]
enum Shape {
    Circle { r: u16 },
    Square { side: u16 },
    Dot,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct Meta {
    #[serde(default)]
    label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    color: Option<String>,
}

/// A flattened externally tagged enum (its unit variant becomes
/// `{"Stop": null}`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct FlattenedExternal {
    id: u8,
    #[serde(flatten)]
    action: Action,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
enum Action {
    Stop,
    Go { speed: u8 },
    Turn(i16),
}

/// A flattened `Option` of an adjacently tagged enum.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct FlattenedOption {
    id: u8,
    #[serde(flatten)]
    extra: Option<Adjacent>,
}

/// A flattened map takes the other properties.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct FlattenedMap {
    id: u8,
    /// Keys unlike `id`: serde would write a key of the struct's own twice.
    #[serde(flatten)]
    #[proptest(strategy = "prop::collection::btree_map(\"x-[a-z]{1,3}\", any::<u8>(), 0..3)")]
    labels: BTreeMap<String, u8>,
}

/// Maps and JSON values.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct Maps {
    #[proptest(strategy = "prop::collection::btree_map(\"[a-z]{0,3}\", any::<Inner<u8>>(), 0..3)")]
    by_name: BTreeMap<String, Inner<u8>>,
    #[proptest(
        strategy = "prop::collection::hash_map(\"[a-z]{0,3}\", any::<Option<bool>>(), 0..3)"
    )]
    flags: HashMap<String, Option<bool>>,
    #[proptest(strategy = "json_value()")]
    any: Value,
    // `Some(Value::Null)` is written as `null`, which reads as `None`.
    #[proptest(
        strategy = "prop::option::of(json_value().prop_filter(\"not null\", |v| !v.is_null()))"
    )]
    maybe: Option<Value>,
}

/// Integers, floats and schemars' validation attributes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct Numbers {
    small: u8,
    /// A promise the handler keeps: serde does not check it.
    #[schemars(range(min = 1, max = 10))]
    #[proptest(strategy = "1u8..=10")]
    level: u8,
    signed: i8,
    medium: i32,
    count: u32,
    #[proptest(strategy = "prop_oneof![any::<i64>(), -1000i64..1000]")]
    big: i64,
    #[proptest(strategy = "prop_oneof![any::<u64>(), 0u64..1000]")]
    huge: u64,
    #[proptest(strategy = "prop_oneof![any::<usize>(), 0usize..1000]")]
    size: usize,
    #[proptest(strategy = "finite_f64()")]
    ratio: f64,
    #[proptest(strategy = "finite_f32()")]
    single: f32,
    #[schemars(length(min = 1))]
    #[proptest(strategy = "\"[a-z]{1,6}\"")]
    name: String,
}

/// A number that may be whole, untagged: the `i64` branch's schema stops
/// at 2^53 − 1, the `f64` branch takes any number.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum WholeOrPart {
    Whole(i64),
    Part(f64),
}

/// Types whose schemas once said other than serde: an `f32`, maps with
/// integer keys, a `Uuid`, and an untagged enum of an integer and a float.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Arbitrary)]
struct Corners {
    #[proptest(strategy = "finite_f32()")]
    single: f32,
    #[proptest(strategy = "prop::collection::btree_map(any::<u8>(), any::<bool>(), 0..3)")]
    by_byte: BTreeMap<u8, bool>,
    #[proptest(strategy = "prop::collection::btree_map(any::<i16>(), any::<bool>(), 0..3)")]
    by_offset: BTreeMap<i16, bool>,
    #[proptest(strategy = "any::<u128>().prop_map(uuid::Uuid::from_u128)")]
    id: uuid::Uuid,
    #[proptest(
        strategy = "prop_oneof![any::<i64>().prop_map(WholeOrPart::Whole), finite_f64().prop_map(WholeOrPart::Part)]"
    )]
    amount: WholeOrPart,
}

/// A recursive type keeps a `$ref`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Tree {
    value: u8,
    children: Vec<Tree>,
}

type Nested = Wrapper<Vec<Option<Inner<u8>>>>;

/// `Number.MAX_SAFE_INTEGER`: the input schemas' bound for 64-bit integers.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

// ---------------------------------------------------------------------------
// Helpers.

/// Reads `value` into `T` as the pack service does (`read_typed` in
/// `src/authoring/numbers.rs`): integral floats up to 2^53 − 1 become
/// integers first, integers past it the nearest float.
fn read<T: DeserializeOwned>(mut value: Value) -> serde_json::Result<T> {
    integral_floats_as_integers(&mut value);
    serde_json::from_value(value)
}

fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(float) = number.as_f64().filter(|_| number.is_f64())
                && float.fract() == 0.0
                && float.abs() <= 9_007_199_254_740_991.0
            {
                #[expect(clippy::cast_possible_truncation, reason = "checked to be exact")]
                let integer = float as i64;
                *number = Number::from(integer);
            } else if !number.is_f64()
                && number
                    .as_i128()
                    .is_some_and(|n| n.unsigned_abs() > (1 << 53) - 1)
                && let Some(float) = number.as_f64().and_then(Number::from_f64)
            {
                *number = float;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(members) => members.values_mut().for_each(integral_floats_as_integers),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

fn validator(schema: &Value) -> Validator {
    Validator::new(schema).expect("a derived schema compiles")
}

/// Every `$ref` of `schema` points into it.
fn assert_self_contained(schema: &Value) {
    fn walk(root: &Value, node: &Value) {
        match node {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref") {
                    let pointer = reference
                        .as_str()
                        .and_then(|r| r.strip_prefix('#'))
                        .expect("a local $ref");
                    assert!(root.pointer(pointer).is_some(), "dangling {reference}");
                }
                map.values().for_each(|child| walk(root, child));
            }
            Value::Array(items) => items.iter().for_each(|child| walk(root, child)),
            _ => {}
        }
    }
    walk(schema, schema);
}

fn required(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn property_names(schema: &Value) -> Vec<&str> {
    schema["properties"]
        .as_object()
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

fn both<T: JsonSchema + DeserializeOwned>() -> (Value, Value) {
    let (input, output) = (input_schema_for::<T>(), output_schema_for::<T>());
    assert_self_contained(&input);
    assert_self_contained(&output);
    validator(&input);
    validator(&output);
    (input, output)
}

// ---------------------------------------------------------------------------
// The table.

#[test]
fn skip_serializing_if_option_skip_and_default() {
    let (input, output) = both::<Answer>();
    // serde needs `notes` (no `default`) but may not write it.
    assert_eq!(required(&input), ["text", "notes"]);
    assert_eq!(required(&output), ["text", "score", "level"]);
    for schema in [&input, &output] {
        assert_eq!(
            property_names(schema),
            ["level", "notes", "retries", "score", "source", "text"]
        );
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["level"]["default"], 3);
        // The default is skipped when written, so none is given.
        assert!(schema["properties"]["retries"].get("default").is_none());
        assert_eq!(
            schema["properties"]["score"]["type"],
            json!(["integer", "null"])
        );
    }
    let written = serde_json::to_value(Answer {
        text: "t".into(),
        notes: Vec::new(),
        source: None,
        score: None,
        cache: 0,
        retries: 0,
        level: 3,
    })
    .expect("serializes");
    assert_eq!(written, json!({"text": "t", "score": null, "level": 3}));
    assert!(validator(&output).is_valid(&written));
    assert!(!validator(&input).is_valid(&written), "serde needs notes");
}

/// The deserialize side, which output schemas were derived from before,
/// refuses what serde writes: the property test's first check fails on it.
#[test]
fn the_deserialize_side_refuses_what_serde_writes() {
    let written = json!({"text": "t", "score": null, "level": 3});
    let issues = validator(&input_schema_for::<Answer>())
        .validate(&written)
        .expect_err("refused");
    assert_eq!(issues[0].message, "must have required property 'notes'");
}

#[test]
fn renames_and_one_sided_fields() {
    let (input, output) = both::<Names>();
    assert_eq!(
        property_names(&input),
        ["at", "secret", "snakeCaseField", "who"]
    );
    assert_eq!(
        property_names(&output),
        ["computed", "sentAt", "snakeCaseField", "who"]
    );
    assert_eq!(required(&input), ["who", "at", "snakeCaseField"]);
    assert_eq!(
        required(&output),
        ["who", "sentAt", "snakeCaseField", "computed"]
    );
    assert_eq!(input["properties"]["secret"]["writeOnly"], true);
    assert_eq!(output["properties"]["computed"]["readOnly"], true);
}

#[test]
fn a_container_default_leaves_nothing_required_to_read() {
    let (input, output) = both::<Defaulted>();
    assert!(input.get("required").is_none(), "{input}");
    assert_eq!(required(&output), ["limit", "mode", "dryRun"]);
    assert_eq!(input["properties"]["limit"]["default"], 10);
    assert_eq!(input["properties"]["mode"]["default"], "dark-red");
    assert_eq!(input["properties"]["dryRun"]["default"], true);
    let mut filled = json!({});
    let input = validator(&input);
    input.fill_defaults(&mut filled);
    assert_eq!(
        filled,
        json!({"limit": 10, "mode": "dark-red", "dryRun": true})
    );
    assert!(input.is_valid(&filled));
}

#[test]
fn unit_variants_with_and_without_doc_comments() {
    let (input, output) = both::<Plain>();
    assert_eq!(input, output);
    assert_eq!(input["type"], "string");
    assert_eq!(input["enum"], json!(["dark-red", "blue"]));

    let (input, output) = both::<Documented>();
    assert_eq!(input, output);
    assert_eq!(input["oneOf"][0]["const"], "first");
    assert_eq!(input["oneOf"][0]["description"], "The first.");
    assert_eq!(input["oneOf"][1]["const"], "second");
    let documented = validator(&input);
    assert!(documented.is_valid(&json!("first")));
    assert!(!documented.is_valid(&json!("third")));
}

#[test]
fn externally_tagged_variants_are_closed_objects() {
    let (input, output) = both::<External>();
    let variants = input["oneOf"].as_array().expect("oneOf");
    assert_eq!(variants[0], json!({"type": "string", "enum": ["Unit"]}));
    assert_eq!(required(&variants[1]), ["Num"]);
    assert_eq!(variants[1]["additionalProperties"], false);
    assert_eq!(
        variants[2]["properties"]["Pair"]["prefixItems"][0]["maximum"],
        255
    );
    let named = &variants[3]["properties"]["Named"];
    assert_eq!(named["additionalProperties"], false);
    assert_eq!(required(named), ["flag"]);
    assert_eq!(
        required(&output["oneOf"][3]["properties"]["Named"]),
        ["flag"]
    );
}

#[test]
fn internally_tagged_variants_carry_their_tag() {
    let (input, output) = both::<Internal>();
    for schema in [&input, &output] {
        let variants = schema["oneOf"].as_array().expect("oneOf");
        assert_eq!(variants.len(), 3);
        for (variant, tag) in variants.iter().zip(["unit", "named", "wrapped"]) {
            assert_eq!(variant["properties"]["kind"]["const"], tag);
            assert_eq!(required(variant)[0], "kind");
            assert_eq!(variant["additionalProperties"], false);
        }
    }
    assert_eq!(required(&input["oneOf"][1]), ["kind", "x"]);
    assert_eq!(required(&output["oneOf"][1]), ["kind", "x", "label"]);
    assert_eq!(required(&input["oneOf"][2]), ["kind", "value"]);
    assert_eq!(required(&output["oneOf"][2]), ["kind", "value", "tags"]);
}

#[test]
fn adjacently_tagged_variants_have_tag_and_content() {
    let (input, output) = both::<Adjacent>();
    assert_eq!(input, output);
    let variants = input["oneOf"].as_array().expect("oneOf");
    assert_eq!(required(&variants[0]), ["t"]);
    for variant in &variants[1..] {
        assert_eq!(required(variant), ["t", "c"]);
        assert_eq!(variant["additionalProperties"], false);
    }
    assert_eq!(
        variants[3]["properties"]["c"]["additionalProperties"],
        false
    );
}

#[test]
fn untagged_variants_are_alternatives() {
    let (input, output) = both::<Untagged>();
    assert_eq!(input, output);
    let variants = input["anyOf"].as_array().expect("anyOf");
    assert_eq!(variants[0], json!({"type": "null"}));
    assert_eq!(variants[1]["type"], "integer");
    assert_eq!(variants[2], json!({"type": "string"}));
    assert_eq!(variants[3]["additionalProperties"], false);
    assert_eq!(required(&variants[3]), ["a", "b"]);
}

#[test]
fn a_flattened_enum_closes_the_whole_object_only() {
    let (input, output) = both::<Flattened>();
    for schema in [&input, &output] {
        // `additionalProperties: false` would refuse the enum's properties.
        assert!(schema.get("additionalProperties").is_none(), "{schema}");
        assert_eq!(schema["unevaluatedProperties"], false);
        assert_eq!(property_names(schema), ["color", "id", "label"]);
        for variant in schema["oneOf"].as_array().expect("oneOf") {
            assert!(variant.get("additionalProperties").is_none(), "{variant}");
            assert!(variant.get("unevaluatedProperties").is_none(), "{variant}");
        }
    }
    assert_eq!(required(&input), ["id"]);
    assert_eq!(required(&output), ["id", "label"]);
    let input = validator(&input);
    assert!(input.is_valid(&json!({"id": 1, "shape": "circle", "r": 2, "label": "l"})));
    assert!(!input.is_valid(&json!({"id": 1, "shape": "circle", "r": 2, "side": 3})));
    assert!(!input.is_valid(&json!({"id": 1, "shape": "dot", "other": 3})));
}

#[test]
fn a_flattened_externally_tagged_enum() {
    let (input, output) = both::<FlattenedExternal>();
    assert_eq!(input, output);
    assert_eq!(input["unevaluatedProperties"], false);
    let stop =
        json!({"type": "object", "properties": {"Stop": {"type": "null"}}, "required": ["Stop"]});
    assert!(input["oneOf"].as_array().expect("oneOf").contains(&stop));
    let input = validator(&input);
    assert!(input.is_valid(&json!({"id": 1, "Stop": null})));
    assert!(input.is_valid(&json!({"id": 1, "Go": {"speed": 3}})));
    assert!(!input.is_valid(&json!({"id": 1, "Go": {"speed": 3}, "Stop": null})));
    assert!(!input.is_valid(&json!({"id": 1, "Stop": null, "x": 1})));
}

#[test]
fn a_flattened_option_may_be_absent() {
    let (input, output) = both::<FlattenedOption>();
    assert_eq!(input, output);
    assert_eq!(input["unevaluatedProperties"], false);
    assert_eq!(input["anyOf"][1], json!({}));
    let input = validator(&input);
    assert!(input.is_valid(&json!({"id": 1})));
    assert!(input.is_valid(&json!({"id": 1, "t": "Num", "c": 3})));
    assert!(!input.is_valid(&json!({"id": 1, "c": 3})));
}

#[test]
fn a_flattened_map_leaves_the_object_open_to_its_values() {
    let (input, output) = both::<FlattenedMap>();
    assert_eq!(input, output);
    assert!(input.get("unevaluatedProperties").is_none());
    assert_eq!(input["additionalProperties"]["type"], "integer");
    assert_eq!(input["additionalProperties"]["maximum"], 255);
    let input = validator(&input);
    assert!(input.is_valid(&json!({"id": 1, "x-a": 2})));
    assert!(!input.is_valid(&json!({"id": 1, "x-a": "2"})));
}

#[test]
fn maps_and_json_values() {
    let (input, output) = both::<Maps>();
    assert_eq!(required(&input), ["by_name", "flags", "any"]);
    assert_eq!(required(&output), ["by_name", "flags", "any", "maybe"]);
    let by_name = &input["properties"]["by_name"];
    assert_eq!(by_name["type"], "object");
    assert_eq!(
        by_name["additionalProperties"]["additionalProperties"],
        false
    );
    assert_eq!(required(&by_name["additionalProperties"]), ["value"]);
    assert_eq!(
        input["properties"]["flags"]["additionalProperties"]["type"],
        json!(["boolean", "null"])
    );
    assert_eq!(input["properties"]["any"], true);
    assert_eq!(input["properties"]["maybe"], true);
}

#[test]
fn nested_generics_are_inlined() {
    let (input, output) = both::<Nested>();
    assert!(input.get("$defs").is_none());
    for (schema, inner_required) in [(&input, vec!["value"]), (&output, vec!["value", "tags"])] {
        let inner = &schema["properties"]["items"]["items"];
        assert_eq!(inner["type"], json!(["object", "null"]));
        assert_eq!(inner["additionalProperties"], false);
        assert_eq!(inner["properties"]["value"]["maximum"], 255);
        assert_eq!(required(inner), inner_required);
    }
}

#[test]
fn number_ranges_replace_rust_formats() {
    let (input, output) = both::<Numbers>();
    let range = |schema: &Value, name: &str| {
        let p = &schema["properties"][name];
        assert!(p.get("format").is_none(), "{p}");
        (p["minimum"].clone(), p["maximum"].clone())
    };
    for schema in [&input, &output] {
        assert_eq!(range(schema, "small"), (json!(0), json!(255)));
        assert_eq!(range(schema, "level"), (json!(1), json!(10)));
        assert_eq!(range(schema, "signed"), (json!(-128), json!(127)));
        assert_eq!(range(schema, "medium"), (json!(i32::MIN), json!(i32::MAX)));
        assert_eq!(range(schema, "count"), (json!(0), json!(u32::MAX)));
        assert_eq!(schema["properties"]["ratio"], json!({"type": "number"}));
        // An f32: the numbers that read as a finite one.
        let past = 3.4028235677973366e38;
        assert_eq!(
            schema["properties"]["single"],
            json!({"type": "number", "exclusiveMinimum": -past, "exclusiveMaximum": past})
        );
        assert_eq!(schema["properties"]["name"]["minLength"], 1);
    }
    // Past 2^53 an input is refused; an output is not.
    let safe = json!(MAX_SAFE_INTEGER);
    let minus_safe = json!(-MAX_SAFE_INTEGER);
    assert_eq!(range(&input, "big"), (minus_safe, safe.clone()));
    assert_eq!(range(&input, "huge"), (json!(0), safe.clone()));
    assert_eq!(range(&input, "size"), (json!(0), safe));
    assert_eq!(range(&output, "big"), (Value::Null, Value::Null));
    assert_eq!(range(&output, "huge"), (json!(0), Value::Null));
    assert_eq!(range(&output, "size"), (json!(0), Value::Null));

    let mut value = serde_json::to_value(Numbers {
        small: 1,
        level: 1,
        signed: -1,
        medium: 1,
        count: 1,
        big: i64::MIN,
        huge: u64::MAX,
        size: usize::MAX,
        ratio: 0.5,
        single: f32::MAX,
        name: "n".into(),
    })
    .expect("serializes");
    assert!(validator(&output).is_valid(&value));
    let input = validator(&input);
    assert!(!input.is_valid(&value));
    for field in ["big", "huge", "size"] {
        value[field] = json!(1);
    }
    assert!(input.is_valid(&value));
    for (field, wrong) in [
        ("medium", json!(3e9)),
        ("count", json!(-1)),
        ("big", json!(1e300)),
        ("big", json!(1.5e18)),
        ("big", json!(MAX_SAFE_INTEGER + 1)),
        ("huge", json!(-1)),
        ("huge", json!(u64::MAX)),
        ("level", json!(11)),
        ("small", json!(1.5)),
        ("single", json!(1e39)),
        ("single", json!(-3.4028235677973366e38)),
    ] {
        let right = std::mem::replace(&mut value[field], wrong);
        assert!(!input.is_valid(&value), "{field}: {}", value[field]);
        value[field] = right;
    }
}

#[test]
fn a_recursive_type_refers_to_itself() {
    let (input, output) = both::<Tree>();
    assert_eq!(input, output);
    assert_eq!(
        input["properties"]["children"]["items"],
        json!({"$ref": "#"})
    );
    let input = validator(&input);
    assert!(input.is_valid(&json!({"value": 1, "children": [{"value": 2, "children": []}]})));
    assert!(!input.is_valid(&json!({"value": 1, "children": [{"value": 2}]})));
}

// ---------------------------------------------------------------------------
// Property tests.

/// Finite floats: serde_json writes NaN and infinities as `null`.
fn finite_f64() -> impl Strategy<Value = f64> {
    prop_oneof![-1.0e6..1.0e6f64, Just(0.0), Just(-0.0), Just(1e300)]
}

/// Finite `f32`s, to its ends.
fn finite_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        -1.0e6..1.0e6f32,
        Just(0.0),
        Just(f32::MAX),
        Just(f32::MIN),
        Just(f32::MIN_POSITIVE)
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        finite_f64().prop_map(Value::from),
        "[a-z]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = any::<u8>().prop_map(|value| Tree {
        value,
        children: Vec::new(),
    });
    leaf.prop_recursive(3, 12, 3, |inner| {
        (any::<u8>(), prop::collection::vec(inner, 0..3))
            .prop_map(|(value, children)| Tree { value, children })
    })
}

/// Numbers at and past the edges of Rust's integer types and of the
/// integers a JSON number holds exactly, and floats that are (or are not)
/// integers.
fn edge_numbers() -> Vec<Value> {
    vec![
        json!(0),
        json!(1),
        json!(-1),
        json!(3.0),
        json!(-0.0),
        json!(1.5),
        json!(127),
        json!(128),
        json!(-129),
        json!(255),
        json!(256),
        json!(65535),
        json!(65536),
        json!(i32::MAX),
        json!(i64::from(i32::MAX) + 1),
        json!(i64::from(i32::MIN) - 1),
        json!(u32::MAX),
        json!(u64::from(u32::MAX) + 1),
        json!(MAX_SAFE_INTEGER),
        json!(MAX_SAFE_INTEGER + 1),
        json!(-MAX_SAFE_INTEGER - 1),
        json!(9_007_199_254_740_992.0),
        json!(1.5e18),
        json!(1.2e19),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1e20),
        json!(-1e20),
        json!(1e300),
    ]
}

/// One way to spoil a serialized value; the indexes pick where.
#[derive(Debug, Clone)]
enum Mutation {
    /// Drops a property (or an array item).
    Drop(Index),
    /// Sets a value to `null`.
    Null(Index),
    /// Puts another value in one's place.
    Replace(Index, Value),
    /// Adds a property, of a name the schemas know or not.
    Add(Index, Index, Value),
    /// Moves a property to another name.
    Rename(Index, Index),
}

/// A step from a value to one inside it.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Item(usize),
}

/// The paths to every value inside `value`, itself first.
fn paths(value: &Value) -> Vec<Vec<Step>> {
    fn walk(value: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        out.push(path.clone());
        match value {
            Value::Object(members) => {
                for (key, member) in members {
                    path.push(Step::Key(key.clone()));
                    walk(member, path, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Step::Item(i));
                    walk(item, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

fn at<'v>(value: &'v mut Value, path: &[Step]) -> &'v mut Value {
    path.iter().fold(value, |value, step| match step {
        Step::Key(key) => &mut value[key.as_str()],
        Step::Item(i) => &mut value[*i],
    })
}

fn get<'v>(value: &'v Value, path: &[Step]) -> &'v Value {
    path.iter().fold(value, |value, step| match step {
        Step::Key(key) => &value[key.as_str()],
        Step::Item(i) => &value[*i],
    })
}

fn pick<T: Clone>(items: &[T], index: &Index) -> Option<T> {
    (!items.is_empty()).then(|| items[index.index(items.len())].clone())
}

/// Applies `mutation` to `value`; `names` are the property names to add or
/// rename to.
fn mutate(value: &mut Value, mutation: &Mutation, names: &[String]) {
    let all = paths(value);
    let inner: Vec<_> = all
        .iter()
        .filter(|path| !path.is_empty())
        .cloned()
        .collect();
    let keyed: Vec<_> = inner
        .iter()
        .filter(|path| matches!(path.last(), Some(Step::Key(_))))
        .cloned()
        .collect();
    match mutation {
        Mutation::Drop(index) => {
            if let Some(mut path) = pick(&inner, index) {
                let last = path.pop();
                match (at(value, &path), last) {
                    (Value::Object(members), Some(Step::Key(key))) => {
                        members.remove(&key);
                    }
                    (Value::Array(items), Some(Step::Item(i))) => {
                        items.remove(i);
                    }
                    _ => {}
                }
            }
        }
        Mutation::Null(index) => {
            if let Some(path) = pick(&all, index) {
                *at(value, &path) = Value::Null;
            }
        }
        Mutation::Replace(index, replacement) => {
            if let Some(path) = pick(&all, index) {
                *at(value, &path) = replacement.clone();
            }
        }
        Mutation::Add(index, name, added) => {
            let objects: Vec<_> = all
                .iter()
                .filter(|path| get(value, path).is_object())
                .cloned()
                .collect();
            if let (Some(path), Some(name)) = (pick(&objects, index), pick(names, name))
                && let Value::Object(members) = at(value, &path)
            {
                members.insert(name, added.clone());
            }
        }
        Mutation::Rename(index, name) => {
            if let (Some(mut path), Some(name)) = (pick(&keyed, index), pick(names, name))
                && let Some(Step::Key(key)) = path.pop()
                && let Value::Object(members) = at(value, &path)
                && let Some(moved) = members.remove(&key)
            {
                members.insert(name, moved);
            }
        }
    }
}

/// Every string a schema holds (property names, tags, enum values): where
/// a spoiled value gets its names and strings from.
fn strings_of(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "properties" {
                    out.extend(
                        child
                            .as_object()
                            .into_iter()
                            .flat_map(|p| p.keys().cloned()),
                    );
                }
                strings_of(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| strings_of(item, out)),
        Value::String(text) => out.push(text.clone()),
        _ => {}
    }
}

/// One or two mutations; replacements are any JSON, numbers at the edges,
/// or one of `strings` (the schemas' own).
fn mutations(strings: Vec<Value>) -> impl Strategy<Value = Vec<Mutation>> {
    let replacement = move || {
        prop_oneof![
            json_value(),
            prop::sample::select(edge_numbers()),
            prop::sample::select(strings.clone()),
        ]
    };
    let mutation = prop_oneof![
        any::<Index>().prop_map(Mutation::Drop),
        any::<Index>().prop_map(Mutation::Null),
        (any::<Index>(), replacement()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        (any::<Index>(), any::<Index>(), replacement())
            .prop_map(|(i, n, v)| Mutation::Add(i, n, v)),
        (any::<Index>(), any::<Index>()).prop_map(|(i, n)| Mutation::Rename(i, n)),
    ];
    prop::collection::vec(mutation, 1..3)
}

/// JSON as the pack service compares it: integral floats as integers.
fn normalized(mut value: Value) -> Value {
    integral_floats_as_integers(&mut value);
    value
}

/// How what `T` reads relates to what it writes.
#[derive(Clone, Copy)]
enum Reads {
    /// It reads what it writes, back into the same value.
    WhatItWrites,
    /// It reads what this makes of what it writes: what a caller would
    /// send where the two sides differ.
    AsInput(fn(Value) -> Value),
}

/// The cases [`check_contract`] runs for one type, unless `PROPTEST_CASES`
/// says.
const CASES: u32 = 256;
/// How many rounds of [`CASES`] a type gets to have a spoiled value accepted.
const MAX_ROUNDS: u32 = 8;

/// Checks `T`'s schemas against values from `strategy`:
///
/// (a) what serde writes passes the output schema;
/// (b) that (as [`Reads`] makes it an input) passes the input schema, and
///     reads into `T`: back into the same value where `T` reads what it
///     writes;
/// (c) the input spoiled at random: where the input schema accepts it,
///     defaults filled in, it reads into `T`.
fn check_contract<T>(strategy: impl Strategy<Value = T>, reads: Reads)
where
    T: Serialize + DeserializeOwned + JsonSchema + Debug,
{
    let (input_schema, output_schema) = both::<T>();
    let input = validator(&input_schema);
    let output = validator(&output_schema);
    let mut names = Vec::new();
    strings_of(&input_schema, &mut names);
    strings_of(&output_schema, &mut names);
    names.extend(["unknown".to_owned(), String::new()]);
    // Integer map keys past each width's end (and the last in range).
    names.extend(["255", "256", "-128", "-129", "32767", "32768", "65536"].map(String::from));
    names.sort();
    names.dedup();
    // The schemas' own strings are candidate values too (tags, variants).
    let names_as_values: Vec<Value> = names.iter().cloned().map(Value::from).collect();

    // `PROPTEST_CASES` asks for more (or fewer), as proptest reads it.
    let cases = if std::env::var_os("PROPTEST_CASES").is_some() {
        Config::default().cases
    } else {
        CASES
    };
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let accepted = std::cell::Cell::new(0usize);
    let strategy = (strategy, mutations(names_as_values));
    let case = |(value, mutations): (T, Vec<Mutation>)| {
        let written = serde_json::to_value(&value).expect("serializes");
        // (a)
        if let Err(issues) = output.validate(&written) {
            return Err(TestCaseError::fail(format!(
                "the output schema refuses {written}: {issues:?}"
            )));
        }
        // (b)
        let sent = match reads {
            Reads::WhatItWrites => written.clone(),
            Reads::AsInput(as_input) => as_input(written.clone()),
        };
        let mut filled = sent.clone();
        input.fill_defaults(&mut filled);
        if let Err(issues) = input.validate(&filled) {
            return Err(TestCaseError::fail(format!(
                "the input schema refuses {filled}: {issues:?}"
            )));
        }
        let back: T = read(filled.clone()).map_err(|e| {
            TestCaseError::fail(format!("accepted {filled}, which does not read: {e}"))
        })?;
        if let Reads::WhatItWrites = reads {
            let again = serde_json::to_value(&back).expect("serializes");
            prop_assert_eq!(normalized(again), normalized(written));
        }
        // (c)
        let mut spoiled = sent;
        for mutation in &mutations {
            mutate(&mut spoiled, mutation, &names);
        }
        input.fill_defaults(&mut spoiled);
        if input.is_valid(&spoiled) {
            accepted.set(accepted.get() + 1);
            if let Err(e) = read::<T>(spoiled.clone()) {
                return Err(TestCaseError::fail(format!(
                    "the input schema accepts {spoiled}, which does not read: {e}"
                )));
            }
        }
        Ok(())
    };
    let name = std::any::type_name::<T>();
    // Not all refused: some spoiled values were read. For a type whose
    // schema refuses most spoilings (a few in 256 accepted), a round may
    // see none by chance: more rounds, each of fresh random cases, until
    // one is accepted.
    for _ in 0..MAX_ROUNDS {
        if let Err(failure) = TestRunner::new(config.clone()).run(&strategy, case) {
            panic!("{name}: {failure}");
        }
        if accepted.get() > 0 {
            return;
        }
    }
    panic!("{name}: no spoiled value was accepted in {MAX_ROUNDS} rounds of {cases} cases");
}

#[test]
fn contract_of_skips_and_options() {
    check_contract(
        any::<Answer>(),
        Reads::AsInput(|mut written| {
            written
                .as_object_mut()
                .expect("an object")
                .entry("notes")
                .or_insert(json!([]));
            written
        }),
    );
}

#[test]
fn contract_of_renames() {
    check_contract(
        any::<Names>(),
        Reads::AsInput(|mut written| {
            let members = written.as_object_mut().expect("an object");
            members.remove("computed");
            let sent_at = members.remove("sentAt").expect("written");
            members.insert("at".to_owned(), sent_at);
            members.insert("secret".to_owned(), json!("s"));
            written
        }),
    );
}

#[test]
fn contract_of_a_container_default() {
    check_contract(any::<Defaulted>(), Reads::WhatItWrites);
}

#[test]
fn contract_of_unit_variants() {
    check_contract(any::<Plain>(), Reads::WhatItWrites);
    check_contract(any::<Documented>(), Reads::WhatItWrites);
}

#[test]
fn contract_of_tagged_enums() {
    check_contract(any::<External>(), Reads::WhatItWrites);
    check_contract(any::<Internal>(), Reads::WhatItWrites);
    check_contract(any::<Adjacent>(), Reads::WhatItWrites);
}

#[test]
fn contract_of_an_untagged_enum() {
    check_contract(any::<Untagged>(), Reads::WhatItWrites);
}

#[test]
fn contract_of_flattening() {
    check_contract(any::<Flattened>(), Reads::WhatItWrites);
    check_contract(any::<FlattenedExternal>(), Reads::WhatItWrites);
    check_contract(any::<FlattenedOption>(), Reads::WhatItWrites);
    check_contract(any::<FlattenedMap>(), Reads::WhatItWrites);
}

#[test]
fn contract_of_maps_and_values() {
    check_contract(any::<Maps>(), Reads::WhatItWrites);
}

#[test]
fn contract_of_nested_generics() {
    check_contract(any::<Nested>(), Reads::WhatItWrites);
}

#[test]
fn contract_of_numbers() {
    // A caller sends 64-bit integers within ±(2^53 − 1) only.
    check_contract(
        any::<Numbers>(),
        Reads::AsInput(|mut written| {
            for field in ["big", "huge", "size"] {
                let number = &written[field];
                let number = number
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| number.as_u64().map(i128::from))
                    .expect("an integer");
                let safe = i128::from(MAX_SAFE_INTEGER);
                written[field] = json!(number.clamp(-safe, safe));
            }
            written
        }),
    );
}

#[test]
fn contract_of_the_validation_corners() {
    // A whole `Part` (3.0) reads back as `Whole(3)`, and an `i64` past
    // 2^53 − 1 as a `Part`: what reads is checked, not the round trip.
    check_contract(any::<Corners>(), Reads::AsInput(|written| written));
}

#[test]
fn contract_of_a_recursive_type() {
    check_contract(tree(), Reads::WhatItWrites);
}
