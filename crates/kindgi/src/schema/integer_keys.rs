//! The range of a map's integer keys, which a derived schema leaves out,
//! asked of the type's own `Deserialize`.
//!
//! schemars writes a map with integer keys (`BTreeMap<u8, T>`) as
//! `patternProperties` of digits whatever the key's width, so `"256"`
//! would pass a `u8` map's schema and then be refused by serde. Nothing in
//! the schema schemars writes says the width, but the type can be asked:
//! for every such map the schema reaches (through properties, array items,
//! map values and the branches of `anyOf` / `oneOf` / `allOf`), a small
//! instance with one key at that map is read into the type, the key
//! taking each integer width's last value and the one past it (`"255"`,
//! `"256"`, `"65535"`, …). A key the type takes leaves the read's outcome
//! what it is with the key `"0"`; one it refuses changes it. The first
//! width whose last value is taken and whose next is refused is the
//! key's range, and the map's pattern becomes one that matches just it.
//!
//! Where the probe can't tell (the map sits inside an internally tagged or
//! untagged enum, whose content serde buffers and where no key reads as an
//! integer; the key type has a range of its own), the pattern stays the
//! digits it was, and serde refuses a key it can't read at the map.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The key pattern of a map with unsigned integer keys, as the schema's
/// tidying leaves it: the keys serde_json reads into an integer.
pub(super) const UNSIGNED: &str = r"^(0|[1-9]\d*)$";
/// The key pattern of a map with signed integer keys.
pub(super) const SIGNED: &str = r"^(0|-?[1-9]\d*)$";

/// The last value of each unsigned integer width.
const UNSIGNED_MAXES: [u128; 5] = [
    u8::MAX as u128,
    u16::MAX as u128,
    u32::MAX as u128,
    u64::MAX as u128,
    u128::MAX,
];
/// The last value of each signed integer width; the first negative one is
/// one further from zero.
const SIGNED_MAXES: [u128; 5] = [
    i8::MAX as u128,
    i16::MAX as u128,
    i32::MAX as u128,
    i64::MAX as u128,
    i128::MAX as u128,
];
/// `u128::MAX + 1`, past every integer width.
const PAST_U128: &str = "340282366920938463463374607431768211456";
/// How many `$ref`s deep the walk follows (a recursive type's schema
/// refers to itself).
const MAX_REFS: usize = 8;

/// Narrows the key pattern of every map with integer keys in `schema`
/// (`T`'s input schema) to the range `T` reads.
pub(super) fn narrow<T: DeserializeOwned>(schema: &mut Value) {
    let mut maps = Vec::new();
    find(schema, schema, String::new(), &mut Vec::new(), 0, &mut maps);
    for map in maps {
        let Some(pattern) = probe::<T>(&map.path, map.signed) else {
            continue;
        };
        let loose = if map.signed { SIGNED } else { UNSIGNED };
        if let Some(Value::Object(patterns)) = schema.pointer_mut(&map.pointer)
            && let Some(values) = patterns.remove(loose)
        {
            patterns.insert(pattern, values);
        }
    }
}

/// A map with integer keys, found in a schema.
struct IntegerKeyed {
    /// The JSON pointer of its `patternProperties` in the schema.
    pointer: String,
    /// How an instance reaches it from the root.
    path: Vec<Step>,
    /// Whether its keys may be negative.
    signed: bool,
}

/// A step from an instance to one inside it.
#[derive(Clone)]
enum Step {
    /// A property, with the properties whose schema is a `const` beside it
    /// (an internally tagged enum's tag).
    Property(String, Map<String, Value>),
    /// An array's item.
    Item,
    /// A map's value, under this key.
    Key(&'static str),
}

/// Finds the maps with integer keys under `node` (at `pointer` in `root`,
/// reached by `path`).
fn find(
    root: &Value,
    node: &Value,
    pointer: String,
    path: &mut Vec<Step>,
    refs: usize,
    out: &mut Vec<IntegerKeyed>,
) {
    let Value::Object(schema) = node else {
        return;
    };
    if let Some(Value::String(target)) = schema.get("$ref")
        && refs < MAX_REFS
        && let Some(target) = target.strip_prefix('#')
        && let Some(referred) = root.pointer(target)
    {
        find(root, referred, target.to_owned(), path, refs + 1, out);
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = schema.get(combinator) {
            for (i, branch) in branches.iter().enumerate() {
                find(
                    root,
                    branch,
                    format!("{pointer}/{combinator}/{i}"),
                    path,
                    refs,
                    out,
                );
            }
        }
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        let tags: Map<String, Value> = properties
            .iter()
            .filter_map(|(name, property)| Some((name.clone(), property.get("const")?.clone())))
            .collect();
        for (name, property) in properties {
            let at = format!("{pointer}/properties/{}", escape(name));
            path.push(Step::Property(name.clone(), tags.clone()));
            find(root, property, at, path, refs, out);
            path.pop();
        }
    }
    if let Some(items) = schema.get("items") {
        path.push(Step::Item);
        find(root, items, format!("{pointer}/items"), path, refs, out);
        path.pop();
    }
    if let Some(Value::Object(patterns)) = schema.get("patternProperties") {
        let at = format!("{pointer}/patternProperties");
        for (pattern, values) in patterns {
            let signed = match pattern.as_str() {
                UNSIGNED => false,
                SIGNED => true,
                _ => continue,
            };
            if !out.iter().any(|found| found.pointer == at) {
                out.push(IntegerKeyed {
                    pointer: at.clone(),
                    path: path.clone(),
                    signed,
                });
            }
            path.push(Step::Key("0"));
            find(
                root,
                values,
                format!("{at}/{}", escape(pattern)),
                path,
                refs,
                out,
            );
            path.pop();
        }
    }
    if let Some(values @ Value::Object(_)) = schema.get("additionalProperties") {
        path.push(Step::Key("key"));
        find(
            root,
            values,
            format!("{pointer}/additionalProperties"),
            path,
            refs,
            out,
        );
        path.pop();
    }
}

/// `name` as one JSON pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The pattern of the keys `T` takes at the map `path` leads to, if the
/// probe tells.
fn probe<T: DeserializeOwned>(path: &[Step], signed: bool) -> Option<String> {
    let outcome = |key: &str| {
        serde_json::from_value::<T>(instance(path, key))
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let zero = outcome("0");
    let takes = |key: &str| outcome(key) == zero;
    // A read that tells keys apart only by refusing them (its message
    // names the key it was given) tells nothing.
    if !takes("1") || takes(PAST_U128) {
        return None;
    }
    if !signed {
        return Some(format!(
            "^(0|{})$",
            up_to(last_taken(&UNSIGNED_MAXES, |n| takes(&n))?)
        ));
    }
    let positive = last_taken(&SIGNED_MAXES, |n| takes(&n))?;
    let negative = last_taken(&SIGNED_MAXES.map(|max| max + 1), |n| {
        takes(&format!("-{n}"))
    })?;
    Some(format!("^(0|{}|-({}))$", up_to(positive), up_to(negative)))
}

/// The first of `maxes` that `takes` and whose next value it doesn't;
/// `None` if the first it refuses is one of `maxes` (a range of the type's
/// own).
fn last_taken(maxes: &[u128], takes: impl Fn(String) -> bool) -> Option<u128> {
    for &max in maxes {
        if !takes(max.to_string()) {
            return None;
        }
        let next = max
            .checked_add(1)
            .map_or_else(|| PAST_U128.to_owned(), |n| n.to_string());
        if !takes(next) {
            return Some(max);
        }
    }
    None
}

/// The instance `path` describes, holding `{key: null}` at its end.
fn instance(path: &[Step], key: &str) -> Value {
    let mut value = Value::Object(Map::from_iter([(key.to_owned(), Value::Null)]));
    for step in path.iter().rev() {
        value = match step {
            Step::Property(name, tags) => {
                let mut object = tags.clone();
                object.insert(name.clone(), value);
                Value::Object(object)
            }
            Step::Item => Value::Array(vec![value]),
            Step::Key(key) => Value::Object(Map::from_iter([((*key).to_owned(), value)])),
        };
    }
    value
}

/// A regular expression matching the decimal numbers 1 to `max` (`max` ≥ 1),
/// without leading zeros: `255` gives `[1-9]\d{0,1}|1\d{2}|2[0-4]\d|25[0-4]|255`.
fn up_to(max: u128) -> String {
    let digits: Vec<u8> = max.to_string().bytes().map(|b| b - b'0').collect();
    let n = digits.len();
    let mut alternatives = Vec::new();
    if n > 1 {
        alternatives.push(format!("[1-9]{}", any_digits(0, n - 2)));
    }
    for (i, &digit) in digits.iter().enumerate() {
        let lowest = u8::from(i == 0);
        if digit > lowest {
            let prefix: String = digits[..i].iter().map(|d| char::from(b'0' + d)).collect();
            let rest = n - i - 1;
            alternatives.push(format!(
                "{prefix}{}{}",
                class(lowest, digit - 1),
                any_digits(rest, rest)
            ));
        }
    }
    alternatives.push(max.to_string());
    alternatives.join("|")
}

/// `from` to `to` digits.
fn any_digits(from: usize, to: usize) -> String {
    match (from, to) {
        (_, 0) => String::new(),
        (1, 1) => r"\d".to_owned(),
        (from, to) if from == to => format!(r"\d{{{to}}}"),
        (from, to) => format!(r"\d{{{from},{to}}}"),
    }
}

/// One digit from `low` to `high`.
fn class(low: u8, high: u8) -> String {
    match (low, high) {
        (low, high) if low == high => low.to_string(),
        (0, 9) => r"\d".to_owned(),
        (low, high) => format!("[{low}-{high}]"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};
    use std::num::NonZeroU8;

    use kindgi_validate::Validator;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::up_to;
    use crate::input_schema_for;

    /// Whether `pattern` matches `text`, as the pack service checks it.
    fn matches(pattern: &str, text: &str) -> bool {
        Validator::new(&json!({"type": "string", "pattern": pattern}))
            .expect("compiles")
            .is_valid(&json!(text))
    }

    #[test]
    fn up_to_matches_one_to_its_max_without_leading_zeros() {
        assert_eq!(up_to(255), r"[1-9]\d{0,1}|1\d{2}|2[0-4]\d|25[0-4]|255");
        assert_eq!(up_to(7), "[1-6]|7");
        for max in [
            1u128, 7, 9, 10, 19, 99, 100, 101, 127, 128, 255, 300, 999, 1000,
        ] {
            let pattern = format!("^(0|{})$", up_to(max));
            for n in 0..=1100u128 {
                assert_eq!(
                    matches(&pattern, &n.to_string()),
                    n <= max,
                    "{n} against {max}"
                );
            }
            for text in ["00", "01", "007", "-1", "+1", "", "1a"] {
                assert!(!matches(&pattern, text), "{text} against {max}");
            }
        }
        let widest = format!("^(0|{})$", up_to(u128::MAX));
        assert!(matches(&widest, &u128::MAX.to_string()));
        assert!(!matches(&widest, super::PAST_U128));
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Keyed {
        by_byte: BTreeMap<u8, bool>,
        by_port: HashMap<u16, String>,
        by_offset: BTreeMap<i8, u32>,
        by_id: Option<BTreeMap<i64, bool>>,
        nested: Vec<BTreeMap<String, BTreeMap<u32, bool>>>,
        nonzero: BTreeMap<NonZeroU8, bool>,
        tagged: Tagged,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(tag = "kind")]
    #[allow(dead_code)]
    enum Tagged {
        Counts { counts: BTreeMap<u16, bool> },
    }

    /// The one key pattern of the map at `pointer` in `schema`.
    fn key_pattern(schema: &serde_json::Value, pointer: &str) -> String {
        let patterns = schema
            .pointer(&format!("{pointer}/patternProperties"))
            .and_then(serde_json::Value::as_object)
            .unwrap_or_else(|| panic!("no patternProperties at {pointer}: {schema:#}"));
        assert_eq!(patterns.len(), 1, "{patterns:?}");
        patterns.keys().next().cloned().unwrap_or_default()
    }

    #[test]
    fn each_map_gets_its_key_types_range() {
        let schema = input_schema_for::<Keyed>();
        let byte = key_pattern(&schema, "/properties/by_byte");
        assert_eq!(byte, format!("^(0|{})$", up_to(255)));
        let port = key_pattern(&schema, "/properties/by_port");
        assert_eq!(port, format!("^(0|{})$", up_to(65_535)));
        let offset = key_pattern(&schema, "/properties/by_offset");
        assert_eq!(offset, format!("^(0|{}|-({}))$", up_to(127), up_to(128)));
        let id = schema["properties"]["by_id"].clone();
        let id = if id.get("patternProperties").is_some() {
            "/properties/by_id"
        } else {
            "/properties/by_id/anyOf/0"
        };
        let id = key_pattern(&schema, id);
        assert_eq!(
            id,
            format!("^(0|{}|-({}))$", up_to(i64::MAX as u128), up_to(1 << 63))
        );
        let nested = key_pattern(&schema, "/properties/nested/items/additionalProperties");
        assert_eq!(nested, format!("^(0|{})$", up_to(u32::MAX.into())));
        // A range of its own (schemars calls a key type whose minimum isn't
        // 0 signed): the digits stay, and serde refuses "0" at the map.
        assert_eq!(key_pattern(&schema, "/properties/nonzero"), super::SIGNED);
        // Inside an internally tagged enum, serde reads a key from the
        // content it buffered, where no key reads as an integer: the probe
        // can't tell a range, and the digits stay.
        let read =
            serde_json::from_value::<Tagged>(json!({"kind": "Counts", "counts": {"1": true}}));
        assert!(read.is_err());
        let tagged = key_pattern(&schema, "/properties/tagged/oneOf/0/properties/counts");
        assert_eq!(tagged, super::UNSIGNED);
    }
}
