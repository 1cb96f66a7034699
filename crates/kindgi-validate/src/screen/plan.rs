//! The schema as the screen reads it: the keywords it knows, compiled into
//! a graph of nodes. A schema with any keyword outside that set has no plan,
//! and every instance of it takes the full path.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::number::Num;
use crate::pointer::push_token;

/// Index of a node in [`Plan::nodes`].
pub(crate) type NodeId = u16;

/// The most nodes a plan holds; a larger schema has none.
pub(super) const MAX_NODES: usize = 4096;

const _: () = assert!(
    MAX_NODES <= NodeId::MAX as usize,
    "a node's id fits a NodeId"
);

/// The most properties one object schema may declare (one bit each).
pub(crate) const MAX_PROPERTIES: usize = 128;

/// Keywords that only annotate: no instance is judged by them.
const ANNOTATIONS: [&str; 9] = [
    "title",
    "description",
    "$comment",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "default",
];

/// Keywords whose presence anywhere leaves a schema without a plan, as they
/// change how a `$ref` is resolved.
const RESOLUTION: [&str; 6] = [
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveRef",
    "$recursiveAnchor",
];

/// The JSON kinds of value, one bit each.
pub(crate) mod kind {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 2;
    /// A number with no fraction (JSON Schema's `integer`).
    pub(crate) const INTEGER: u8 = 4;
    /// A number with a fraction.
    pub(crate) const FRACTION: u8 = 8;
    pub(crate) const STRING: u8 = 16;
    pub(crate) const ARRAY: u8 = 32;
    pub(crate) const OBJECT: u8 = 64;
    pub(crate) const NUMBER: u8 = INTEGER | FRACTION;
    pub(crate) const ANY: u8 = 127;
}

/// One schema of the graph.
#[derive(Debug)]
pub(crate) enum Node {
    /// `true` or `{}` (or only annotations): everything passes.
    Any,
    /// `false`: nothing passes.
    Never,
    /// A schema with keywords to check.
    Rules(Box<Rules>),
}

/// What an object schema says of a property it declares.
#[derive(Debug)]
pub(crate) struct Property {
    pub(crate) name: String,
    pub(crate) node: NodeId,
    pub(crate) required: bool,
    /// Its schema has a `default`: an object without it would be filled.
    pub(crate) defaulted: bool,
}

/// A string format the screen checks as the validator does.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Format(pub(crate) fn(&str) -> bool);

/// The keywords of one schema.
#[derive(Debug)]
pub(crate) struct Rules {
    /// The kinds `type` allows.
    pub(crate) kinds: u8,
    /// `$ref`: schemas the same value must also pass.
    pub(crate) refs: Vec<NodeId>,
    /// `anyOf` / `oneOf` whose branches accept disjoint kinds: the value
    /// passes the one branch that accepts its kind.
    pub(crate) by_kind: Vec<[Option<NodeId>; 7]>,
    /// `enum`, or `const` as an `enum` of one value.
    pub(crate) enumeration: Option<Vec<Value>>,
    /// `enumeration` is a `const`'s.
    pub(crate) constant: bool,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    /// `format`: `None` inside when the validator knows no check of its own
    /// for it here (the screen then gives up on a string).
    pub(crate) format: Option<Option<Format>>,
    /// `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum` as
    /// one closed range of `f64`s, where each of them is an exact `f64`
    /// (see [`Num::exact_f64`]); `None` where one isn't, or where there
    /// are none.
    pub(crate) range: Option<(f64, f64)>,
    pub(crate) minimum: Option<Num>,
    pub(crate) maximum: Option<Num>,
    pub(crate) exclusive_minimum: Option<Num>,
    pub(crate) exclusive_maximum: Option<Num>,
    pub(crate) multiple_of: Option<f64>,
    pub(crate) items: Option<NodeId>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) properties: Vec<Property>,
    /// Each property's name as words, in the order of `properties`: a key
    /// is compared in full only with those it matches, and a name of up to
    /// sixteen bytes is matched by them alone.
    pub(crate) keys: Vec<NameWords>,
    /// The properties' indexes by the [`slot`] of their name, a power of
    /// two of slots with at least one empty ([`EMPTY`]); a key is looked
    /// up from its slot on until it is found or a slot is empty.
    pub(crate) slots: Box<[u8]>,
    /// `additionalProperties` is a schema nothing passes (`false`): a key
    /// it doesn't declare is refused.
    pub(crate) closed: bool,
    /// One bit a property, in the order of `properties`: set for those an
    /// object must hold (required, or filled with a default when missing).
    pub(crate) must_hold: u128,
    /// `additionalProperties`; `None` allows any.
    pub(crate) additional: Option<NodeId>,
    pub(crate) min_properties: Option<u64>,
    pub(crate) max_properties: Option<u64>,
}

impl Rules {
    fn new() -> Rules {
        Rules {
            kinds: kind::ANY,
            refs: Vec::new(),
            by_kind: Vec::new(),
            enumeration: None,
            constant: false,
            min_length: None,
            max_length: None,
            format: None,
            range: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            multiple_of: None,
            items: None,
            min_items: None,
            max_items: None,
            properties: Vec::new(),
            keys: Vec::new(),
            slots: Box::new([]),
            closed: false,
            must_hold: 0,
            additional: None,
            min_properties: None,
            max_properties: None,
        }
    }
}

/// A property's name as a key is matched with it: its length, its
/// [`head`] and its [`tail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NameWords {
    pub(crate) len: usize,
    pub(crate) head: u64,
    pub(crate) tail: u64,
}

impl NameWords {
    pub(crate) fn of(name: &str) -> NameWords {
        NameWords {
            len: name.len(),
            head: head(name),
            tail: tail(name),
        }
    }
}

/// The last eight bytes of `name` as one word, when it is longer than
/// eight (they overlap its [`head`] when it is shorter than sixteen);
/// zero otherwise. With the head and the length, it tells a name of up to
/// sixteen bytes.
#[inline]
pub(crate) fn tail(name: &str) -> u64 {
    match name.as_bytes().last_chunk::<8>() {
        Some(word) if name.len() > 8 => u64::from_le_bytes(*word),
        _ => 0,
    }
}

/// The first eight bytes of `name` as one word, zeros past its end.
#[inline]
pub(crate) fn head(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let len = bytes.len();
    // Little-endian: the first byte lowest. A shorter name is read as two
    // pieces that may overlap, each put at its place (where they overlap
    // they hold the same bytes): no loop and no `memcpy` call.
    let at = |byte: usize| u64::from(bytes[byte]) << (8 * byte);
    if let Some(word) = bytes.first_chunk::<8>() {
        u64::from_le_bytes(*word)
    } else if let (Some(low), Some(high)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        u64::from(u32::from_le_bytes(*low))
            | u64::from(u32::from_le_bytes(*high)) << (8 * (len - 4))
    } else if len > 0 {
        at(0) | at(len / 2) | at(len - 1)
    } else {
        0
    }
}

/// A slot with no property in [`Rules::slots`].
pub(crate) const EMPTY: u8 = u8::MAX;

const _: () = assert!(
    MAX_PROPERTIES < EMPTY as usize,
    "a property's index fits a slot"
);

/// Where a name of `len` bytes whose [`head`] is `word` is looked up
/// first in a table of `mask + 1` slots.
#[inline]
pub(crate) fn slot(len: usize, word: u64, mask: usize) -> usize {
    let mixed = (word ^ len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // The product's high bits depend on every bit of the name's.
    (mixed >> 40) as usize & mask
}

/// The slot table of `keys` (see [`Rules::slots`]): twice as many slots as
/// names, rounded up to a power of two, so that most keys are found at
/// their first slot.
fn slots(keys: &[NameWords]) -> Box<[u8]> {
    let size = (keys.len() * 2).next_power_of_two();
    let mask = size - 1;
    let mut slots = vec![EMPTY; size];
    for (index, name) in keys.iter().enumerate() {
        let mut at = slot(name.len, name.head, mask);
        while slots[at] != EMPTY {
            at = (at + 1) & mask;
        }
        // Below `MAX_PROPERTIES`, checked when the properties were read.
        slots[at] = u8::try_from(index).unwrap_or(EMPTY);
    }
    slots.into_boxed_slice()
}

/// The closed range of `f64`s a number within the bounds is in, when each
/// bound is an exact `f64`: an exclusive bound moves to the next `f64`
/// inward, so that "above 2" is "at least the float after 2".
fn range(rules: &Rules) -> Option<(f64, f64)> {
    let exact = |bound: Option<Num>| match bound {
        None => Some(None),
        Some(bound) => bound.exact_f64().map(Some),
    };
    if rules.minimum.is_none()
        && rules.exclusive_minimum.is_none()
        && rules.maximum.is_none()
        && rules.exclusive_maximum.is_none()
    {
        return None;
    }
    let mut low = f64::NEG_INFINITY;
    let mut high = f64::INFINITY;
    if let Some(minimum) = exact(rules.minimum)? {
        low = low.max(minimum);
    }
    if let Some(above) = exact(rules.exclusive_minimum)? {
        low = low.max(above.next_up());
    }
    if let Some(maximum) = exact(rules.maximum)? {
        high = high.min(maximum);
    }
    if let Some(below) = exact(rules.exclusive_maximum)? {
        high = high.min(below.next_down());
    }
    Some((low, high))
}

/// A compiled schema.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) nodes: Vec<Node>,
    /// Where each node's schema is in the root, as a JSON Pointer, by id.
    pub(crate) locations: Vec<String>,
    pub(crate) root: NodeId,
}

impl Plan {
    /// The plan of `schema`, or `None` when it uses a keyword (or a form of
    /// one) the screen doesn't check.
    pub(crate) fn new(schema: &Value) -> Option<Plan> {
        if mentions_any(schema, &RESOLUTION) {
            return None;
        }
        let mut builder = Builder {
            root: schema,
            nodes: Vec::new(),
            locations: Vec::new(),
            by_pointer: HashMap::new(),
        };
        let root = builder.node(schema, String::new(), false)?;
        Some(Plan {
            nodes: builder.nodes,
            locations: builder.locations,
            root,
        })
    }

    pub(crate) fn node(&self, id: NodeId) -> &Node {
        // Ids are only made by the builder, below the length.
        &self.nodes[usize::from(id)]
    }
}

struct Builder<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    locations: Vec<String>,
    /// Nodes made for `$ref` targets, by pointer, so cycles close.
    by_pointer: HashMap<String, NodeId>,
}

impl<'s> Builder<'s> {
    fn push(&mut self, node: Node, at: String) -> Option<NodeId> {
        if self.nodes.len() >= MAX_NODES {
            return None;
        }
        self.nodes.push(node);
        self.locations.push(at);
        NodeId::try_from(self.nodes.len() - 1).ok()
    }

    /// The node of `schema`, found at the JSON Pointer `at` in the root;
    /// `memo` for a `$ref` target, made once.
    fn node(&mut self, schema: &'s Value, at: String, memo: bool) -> Option<NodeId> {
        if memo && let Some(&id) = self.by_pointer.get(&at) {
            return Some(id);
        }
        let map = match schema {
            Value::Bool(true) => return self.push(Node::Any, at),
            Value::Bool(false) => return self.push(Node::Never, at),
            Value::Object(map) => map,
            _ => return None,
        };
        // Reserved first, so a `$ref` cycle back here finds it.
        let id = self.push(Node::Any, at.clone())?;
        if memo {
            self.by_pointer.insert(at.clone(), id);
        }
        let rules = self.rules(map, &at)?;
        if let Some(rules) = rules {
            self.nodes[id as usize] = Node::Rules(Box::new(rules));
        }
        Some(id)
    }

    /// The rules of an object schema, at `at` in the root; `Some(None)`
    /// when it has none to check.
    fn rules(&mut self, map: &'s Map<String, Value>, at: &str) -> Option<Option<Rules>> {
        let mut rules = Rules::new();
        let mut checks = false;
        let required = match map.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|name| name.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?,
            Some(_) => return None,
        };
        for (keyword, value) in map {
            checks |= !matches!(
                keyword.as_str(),
                k if ANNOTATIONS.contains(&k) || k == "$defs" || k == "definitions"
            );
            match keyword.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "$defs" | "definitions" => {
                    // Containers: their schemas count only where referenced.
                    if !value.is_object() {
                        return None;
                    }
                }
                "type" => rules.kinds = kinds(value)?,
                "$ref" => {
                    let target = value.as_str()?;
                    rules.refs.push(self.reference(target)?);
                }
                "anyOf" | "oneOf" => {
                    let branches = value.as_array()?;
                    let dispatch = self.by_kind(branches, &format!("{at}/{keyword}"))?;
                    rules.by_kind.push(dispatch);
                }
                // Both in one schema: left to the full path.
                "enum" | "const" if rules.enumeration.is_some() => return None,
                "enum" => {
                    let values = value.as_array()?;
                    if values.iter().any(|v| v.is_array() || v.is_object()) {
                        return None;
                    }
                    rules.enumeration = Some(values.clone());
                }
                "const" => {
                    if value.is_array() || value.is_object() {
                        return None;
                    }
                    rules.enumeration = Some(vec![value.clone()]);
                    rules.constant = true;
                }
                "minLength" => rules.min_length = Some(count(value)?),
                "maxLength" => rules.max_length = Some(count(value)?),
                "format" => rules.format = Some(format(value.as_str()?)),
                "minimum" => rules.minimum = Some(number(value)?),
                "maximum" => rules.maximum = Some(number(value)?),
                "exclusiveMinimum" => rules.exclusive_minimum = Some(number(value)?),
                "exclusiveMaximum" => rules.exclusive_maximum = Some(number(value)?),
                "multipleOf" => {
                    let divisor = value.as_f64().filter(|d| *d > 0.0)?;
                    rules.multiple_of = Some(divisor);
                }
                "items" => rules.items = Some(self.node(value, format!("{at}/items"), false)?),
                "minItems" => rules.min_items = Some(count(value)?),
                "maxItems" => rules.max_items = Some(count(value)?),
                "properties" => {
                    let declared = value.as_object()?;
                    if declared.len() > MAX_PROPERTIES {
                        return None;
                    }
                    for (name, schema) in declared {
                        let mut location = format!("{at}/properties");
                        push_token(&mut location, name);
                        let node = self.node(schema, location, false)?;
                        rules.properties.push(Property {
                            name: name.clone(),
                            node,
                            required: required.contains(name),
                            defaulted: self.has_default(schema),
                        });
                    }
                }
                "required" => {}
                "additionalProperties" => {
                    let id = self.node(value, format!("{at}/additionalProperties"), false)?;
                    rules.closed = matches!(self.nodes[usize::from(id)], Node::Never);
                    rules.additional = Some(id);
                }
                "minProperties" => rules.min_properties = Some(count(value)?),
                "maxProperties" => rules.max_properties = Some(count(value)?),
                _ => return None,
            }
        }
        rules.keys = rules
            .properties
            .iter()
            .map(|p| NameWords::of(&p.name))
            .collect();
        rules.slots = slots(&rules.keys);
        rules.range = range(&rules);
        rules.must_hold = rules
            .properties
            .iter()
            .enumerate()
            .filter(|(_, p)| p.required || p.defaulted)
            .fold(0, |mask, (index, _)| mask | 1u128 << index);
        // A required name the schema doesn't declare: left to the full path.
        if required
            .iter()
            .any(|name| !rules.properties.iter().any(|p| &p.name == name))
        {
            return None;
        }
        Some(checks.then_some(rules))
    }

    /// The node a local `$ref` leads to.
    fn reference(&mut self, target: &str) -> Option<NodeId> {
        let pointer = target.strip_prefix('#')?;
        if !(pointer.is_empty() || pointer.starts_with('/')) || pointer.contains('%') {
            return None;
        }
        let schema = self.root.pointer(pointer)?;
        self.node(schema, pointer.to_owned(), true)
    }

    /// An `anyOf` / `oneOf` whose branches accept kinds no two share.
    fn by_kind(&mut self, branches: &'s [Value], at: &str) -> Option<[Option<NodeId>; 7]> {
        let mut dispatch = [None; 7];
        let mut taken = 0u8;
        for (index, branch) in branches.iter().enumerate() {
            let node = self.node(branch, format!("{at}/{index}"), false)?;
            let kinds = self.kinds_of(node, 0)?;
            // Both number kinds go together: a branch for one and a branch
            // for the other would split on the value's fraction.
            let kinds = if kinds & kind::NUMBER != 0 {
                kinds | kind::NUMBER
            } else {
                kinds
            };
            if kinds & taken != 0 {
                return None;
            }
            taken |= kinds;
            for (bit, slot) in dispatch.iter_mut().enumerate() {
                if kinds & (1 << bit) != 0 {
                    *slot = Some(node);
                }
            }
        }
        Some(dispatch)
    }

    /// The kinds a node can accept at most (through its `type`, `enum` and
    /// `$ref`s); `None` past a depth of references.
    fn kinds_of(&self, id: NodeId, depth: usize) -> Option<u8> {
        if depth > 16 {
            return None;
        }
        match &self.nodes[id as usize] {
            Node::Any => Some(kind::ANY),
            Node::Never => Some(0),
            Node::Rules(rules) => {
                let mut kinds = rules.kinds;
                if let Some(values) = &rules.enumeration {
                    kinds &= values.iter().map(kind_of_value).fold(0, |a, b| a | b);
                }
                for &target in &rules.refs {
                    kinds &= self.kinds_of(target, depth + 1)?;
                }
                Some(kinds)
            }
        }
    }

    /// Whether a property's schema, or one its `$ref`s lead to, has a
    /// `default`.
    fn has_default(&self, schema: &Value) -> bool {
        let mut seen = 0;
        let mut current = schema;
        loop {
            let Some(map) = current.as_object() else {
                return false;
            };
            if map.contains_key("default") {
                return true;
            }
            let next = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|p| self.root.pointer(p));
            match next {
                Some(next) if seen < 64 => {
                    current = next;
                    seen += 1;
                }
                // A chain longer than that is a cycle: count it defaulted,
                // so the full path fills (or finds) it.
                Some(_) => return true,
                None => return false,
            }
        }
    }
}

/// The kinds of one value.
fn kind_of_value(value: &Value) -> u8 {
    match value {
        Value::Null => kind::NULL,
        Value::Bool(_) => kind::BOOLEAN,
        Value::Number(n) => match Num::of(n) {
            Some(n) if n.is_integral() => kind::INTEGER,
            _ => kind::FRACTION,
        },
        Value::String(_) => kind::STRING,
        Value::Array(_) => kind::ARRAY,
        Value::Object(_) => kind::OBJECT,
    }
}

/// The kinds a `type` keyword allows.
fn kinds(value: &Value) -> Option<u8> {
    let one = |name: &str| {
        Some(match name {
            "null" => kind::NULL,
            "boolean" => kind::BOOLEAN,
            "integer" => kind::INTEGER,
            "number" => kind::NUMBER,
            "string" => kind::STRING,
            "array" => kind::ARRAY,
            "object" => kind::OBJECT,
            _ => return None,
        })
    };
    match value {
        Value::String(name) => one(name),
        Value::Array(names) => names
            .iter()
            .try_fold(0, |all, name| Some(all | one(name.as_str()?)?)),
        _ => None,
    }
}

/// A non-negative integer keyword (`minLength`, `maxItems`, …).
fn count(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
                .map(|f| f as u64)
        }),
        _ => None,
    }
}

/// A number keyword (`minimum`, …).
fn number(value: &Value) -> Option<Num> {
    match value {
        Value::Number(n) => Num::of(n),
        _ => None,
    }
}

/// The check of a `format`, as the validator has it: the formats it checks
/// with its own rules. Other names are left to the full path for strings.
fn format(name: &str) -> Option<Format> {
    use crate::formats;
    let check: fn(&str) -> bool = match name {
        "date" => formats::date,
        "time" => |s| formats::time(s, true),
        "date-time" => |s| formats::date_time(s, true),
        "iso-time" => |s| formats::time(s, false),
        "iso-date-time" => |s| formats::date_time(s, false),
        "email" => formats::email,
        "hostname" => formats::hostname,
        "ipv4" => formats::ipv4,
        "uuid" => formats::uuid,
        "byte" => formats::byte,
        "url" => formats::url,
        "json-pointer-uri-fragment" => formats::json_pointer_uri_fragment,
        "password" | "binary" | "iri" | "iri-reference" => |_| true,
        _ => return None,
    };
    Some(Format(check))
}

/// Whether any object in `schema` has one of `keywords` as a key.
fn mentions_any(schema: &Value, keywords: &[&str]) -> bool {
    match schema {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| keywords.contains(&k.as_str()) || mentions_any(v, keywords)),
        Value::Array(items) => items.iter().any(|v| mentions_any(v, keywords)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_the_first_eight_bytes_zero_padded() {
        let text = "abcdefghijkl\u{e9}\u{1f600}";
        for start in 0..text.len() {
            for end in start..=text.len() {
                let Some(name) = text.get(start..end) else {
                    continue;
                };
                let mut padded = [0u8; 8];
                let len = name.len().min(8);
                padded[..len].copy_from_slice(&name.as_bytes()[..len]);
                assert_eq!(head(name), u64::from_le_bytes(padded), "{name:?}");
            }
        }
    }
}
