//! `kindgi_validate::fuzzing::accepts_text` against the full path: the screen reads an
//! instance's text, the full path its tree. Whatever the schema and the
//! text, a text the screen passes parses, is valid, has no default to
//! fill and no repeated key — the full path would have run the call with
//! the very same input. `deserialize_passing` of a type that
//! skips every value, or takes every value, passes exactly the texts the
//! screen passes. The issues `issues_from_text` finds from a
//! text are exactly those the full path gives for its tree, filled, and
//! `issues_from_refused_text` finds the same past where a
//! typed read stopped. Never a panic or a hang. Its schemas are made from
//! the fuzz bytes (the shapes derived schemas take: nested objects, arrays,
//! `anyOf` / `oneOf`, bounds, formats, defaults), or are a few fixed ones,
//! or any JSON the bytes hold.

#![no_main]

use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use kindgi_validate::{TextRefusal, Validator, fuzzing};
use libfuzzer_sys::fuzz_target;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::{Value, json};

/// Schemas the screen has a plan for: the shapes derived schemas take.
fn schemas() -> &'static [Validator] {
    static SCHEMAS: OnceLock<Vec<Validator>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        [
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "minLength": 1, "maxLength": 4},
                    "count": {"type": "integer", "format": "int64", "minimum": 1, "exclusiveMaximum": 10},
                    "price": {"type": "number", "minimum": 0, "multipleOf": 0.01},
                    "status": {"$ref": "#/$defs/Status"},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                    "note": {"type": ["string", "null"], "default": null},
                    "when": {"type": "string", "format": "date-time"},
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
            }),
            json!({"enum": [1, 2.5, "a", null, true, 1e300]}),
            json!({"type": "array", "items": {"type": "number", "maximum": 9007199254740993_u64, "minimum": -1.5}, "minItems": 1}),
            json!({"oneOf": [{"type": "string", "format": "email"}, {"type": "integer", "multipleOf": 3}, {"type": "array"}]}),
            json!({"type": "object", "properties": {"a": {"default": {"b": 1}, "type": "object", "properties": {"b": {"default": 2}}}}}),
            // Names of more than eight bytes that share their first eight.
            json!({
                "type": "object",
                "properties": {
                    "quantity": {"type": "integer"},
                    "quantityMax": {"type": "string"},
                    "quantityMin": {"type": "boolean"},
                    "q": {"type": "null"}
                },
                "required": ["quantity", "quantityMin"],
                "additionalProperties": false
            }),
            // Bounds kept as a range of floats, exclusive ones moved inward;
            // an open object beside a closed one.
            json!({
                "type": "object",
                "properties": {
                    "x": {"type": "number", "exclusiveMinimum": 2, "maximum": 2.5},
                    "n": {"type": "integer", "minimum": -3, "exclusiveMaximum": -1},
                    "big": {"type": "number", "maximum": 1e17},
                    "open": {"type": "object", "properties": {"a": {"type": "integer"}}}
                },
                "additionalProperties": false
            }),
            json!({}),
            json!(true),
            json!(false),
        ]
        .iter()
        .filter_map(|s| Validator::new(s).ok())
        .collect()
    })
}

/// Whether a text repeats a key in one of its objects.
struct Repeats<'a>(&'a mut bool);

impl<'de> DeserializeSeed<'de> for Repeats<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Repeats<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Repeats(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key) {
                *self.0 = true;
            }
            map.next_value_seed(Repeats(&mut *self.0))?;
        }
        Ok(())
    }
}

/// Whether `T`, read in one pass with the checks, reads `text` to its end.
fn reads<T: DeserializeOwned>(validator: &Validator, text: &[u8]) -> bool {
    let mut reader = serde_json::Deserializer::from_slice(text);
    fuzzing::deserialize_passing(validator, PhantomData::<T>, &mut reader)
        .is_ok()
        && reader.end().is_ok()
}

/// Why a read of `T` from `text` through `deserialize_passing`, to its
/// end, failed; `None` when it didn't.
fn refusal<T: DeserializeOwned>(validator: &Validator, text: &[u8]) -> Option<serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_slice(text);
    let read = fuzzing::deserialize_passing(validator, PhantomData::<T>, &mut reader);
    read.and_then(|_| reader.end()).err()
}

/// A text whose issues are found from the text has those issues on the
/// full path; found from where a typed read stopped, the same ones.
fn lone(validator: &Validator, text: &[u8]) {
    let issues = fuzzing::issues_from_text(validator, text);
    let refusals = [
        refusal::<IgnoredAny>(validator, text),
        refusal::<Value>(validator, text),
    ];
    for refused in refusals.iter().flatten() {
        let after = fuzzing::issues_from_refused_text(validator, text, refused);
        assert_eq!(after, issues, "the issues found past a read's refusal: {refused}");
    }
    let Some(issues) = issues else {
        return;
    };
    let mut tree: Value = serde_json::from_slice(text).expect("a text answered from its text parses");
    validator.fill_defaults(&mut tree);
    assert_eq!(validator.validate(&tree), Err(issues), "the issues found from the text");
}

/// The one public read, `Validator::read_checked`, answers as the tree
/// does: a value read is the tree's, valid with nothing to fill; issues
/// are the tree's issues.
fn read_checked(validator: &Validator, text: &[u8]) {
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let read = validator.read_checked(text, PhantomData::<Value>);
    let tree = || {
        let mut tree: Value = serde_json::from_str(text).expect("a text read or answered parses");
        validator.fill_defaults(&mut tree);
        tree
    };
    match read {
        Ok(value) => {
            let tree = tree();
            assert_eq!(validator.validate(&tree), Ok(()), "read, so valid");
            assert_eq!(value, tree, "read as its tree");
        }
        Err(TextRefusal::Invalid(issues)) => {
            assert_eq!(validator.validate(&tree()), Err(issues), "the tree's issues");
        }
        Err(_) => {}
    }
}

fn check(validator: &Validator, text: &[u8]) {
    lone(validator, text);
    read_checked(validator, text);
    // A read refused for no more than a default has no error to find.
    let mut reader = serde_json::Deserializer::from_slice(text);
    if let Err(error) = fuzzing::deserialize_passing(validator, PhantomData::<IgnoredAny>, &mut reader)
        && fuzzing::refused_for_a_default(&error)
    {
        assert_eq!(fuzzing::issues_from_text(validator, text), None, "refused for a default");
    }
    let passed = fuzzing::accepts_text(validator, text);
    assert_eq!(reads::<IgnoredAny>(validator, text), passed, "skipping every value");
    assert_eq!(reads::<Value>(validator, text), passed, "taking every value");
    if !passed {
        return;
    }
    let mut tree: Value = serde_json::from_slice(text).expect("a text the screen passed parses");
    if let Err(issues) = validator.validate(&tree) {
        panic!("the screen passed an invalid text: {issues:?}");
    }
    let before = tree.clone();
    validator.fill_defaults(&mut tree);
    assert_eq!(before, tree, "the screen passed a text with a default to fill");
    let mut repeats = false;
    let mut reader = serde_json::Deserializer::from_slice(text);
    Repeats(&mut repeats).deserialize(&mut reader).expect("JSON");
    assert!(!repeats, "the screen passed a text with a repeated key");
}

/// A schema of the shapes derived schemas take, made from fuzz bytes.
struct Generated<'a> {
    bytes: &'a [u8],
}

impl Generated<'_> {
    /// The next byte; 0 once they run out.
    fn byte(&mut self) -> u8 {
        let Some((&first, rest)) = self.bytes.split_first() else {
            return 0;
        };
        self.bytes = rest;
        first
    }

    /// A small signed number.
    fn small(&mut self) -> i64 {
        i64::from(self.byte() as i8) / 4
    }

    /// A schema, nested at most `depth` more levels.
    fn schema(&mut self, depth: u8) -> Value {
        let kinds = if depth == 0 { 6 } else { 9 };
        let mut schema = match self.byte() % kinds {
            0 => json!({"type": "null"}),
            1 => json!({"type": "boolean"}),
            2 => json!({"type": "integer"}),
            3 => json!({"type": "number"}),
            4 => json!({"type": "string"}),
            5 => {
                let values = [json!(1), json!(2.5), json!("a"), json!(null), json!(true)];
                let count = 1 + usize::from(self.byte() % 4);
                json!({"enum": values[..count]})
            }
            6 => json!({"type": "array", "items": self.schema(depth - 1)}),
            7 => self.object(depth - 1),
            _ => {
                let keyword = if self.byte() % 2 == 0 { "anyOf" } else { "oneOf" };
                json!({keyword: [self.schema(depth - 1), self.schema(depth - 1)]})
            }
        };
        // Bounds, formats and defaults, each or not.
        let bits = self.byte();
        let map = schema.as_object_mut().expect("an object");
        match map.get("type").and_then(Value::as_str) {
            Some("integer" | "number") => {
                if bits & 1 != 0 {
                    map.insert("minimum".into(), json!(self.small()));
                }
                if bits & 2 != 0 {
                    map.insert("exclusiveMaximum".into(), json!(self.small() + 40));
                }
                if bits & 4 != 0 {
                    map.insert("multipleOf".into(), json!(1 + self.byte() % 4));
                }
            }
            Some("string") => {
                if bits & 1 != 0 {
                    map.insert("minLength".into(), json!(self.byte() % 3));
                }
                if bits & 2 != 0 {
                    map.insert("maxLength".into(), json!(2 + self.byte() % 6));
                }
                if bits & 4 != 0 {
                    let format = ["date-time", "email", "uuid", "date"][usize::from(self.byte() % 4)];
                    map.insert("format".into(), json!(format));
                }
            }
            Some("array") => {
                if bits & 1 != 0 {
                    map.insert("minItems".into(), json!(self.byte() % 2));
                }
                if bits & 2 != 0 {
                    map.insert("maxItems".into(), json!(1 + self.byte() % 3));
                }
            }
            _ => {}
        }
        if bits & 8 != 0 {
            // Nullable, as an `Option` derives.
            if let Some(Value::String(kind)) = map.get("type").cloned() {
                map.insert("type".into(), json!([kind, "null"]));
            }
        }
        schema
    }

    /// An object of up to four properties, some required, some with a
    /// default, open or closed.
    fn object(&mut self, depth: u8) -> Value {
        const NAMES: [&str; 5] = ["a", "b", "quantity", "quantityMax", "q"];
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for _ in 0..self.byte() % 5 {
            let name = NAMES[usize::from(self.byte()) % NAMES.len()];
            let mut property = self.schema(depth);
            match self.byte() % 4 {
                0 => required.push(json!(name)),
                1 => {
                    property
                        .as_object_mut()
                        .expect("an object")
                        .insert("default".into(), json!(null));
                }
                _ => {}
            }
            properties.insert(name.into(), property);
        }
        let additional = match self.byte() % 3 {
            0 => json!(false),
            1 => json!(true),
            _ => self.schema(0),
        };
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": additional
        })
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 4 == 1 {
        // A generated schema, then an arbitrary text.
        let mut generated = Generated { bytes: rest };
        let schema = generated.schema(3);
        if let Ok(validator) = Validator::new(&schema) {
            check(&validator, generated.bytes);
        }
        return;
    }
    if mode % 4 != 0 {
        // A schema with a plan and an arbitrary text.
        let schemas = schemas();
        check(&schemas[usize::from(mode) % schemas.len()], rest);
        return;
    }
    // An arbitrary schema, NUL, an arbitrary text.
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let (schema, text) = (&rest[..split], rest.get(split + 1..).unwrap_or_default());
    let Ok(schema) = serde_json::from_slice::<Value>(schema) else {
        return;
    };
    if let Ok(validator) = Validator::new(&schema) {
        check(&validator, text);
    }
});
