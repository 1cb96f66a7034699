//! The lone error: where the text of an instance with exactly one error
//! has it, found with no tree built, for
//! `Validator::issues_from_text`.
//!
//! The walk checks every value as the screen's does, but where a value
//! fails a keyword it notes where (the instance path) and which schema and
//! keyword, and reads on. A second error ends it without an answer, and so
//! does anything it can't be sure of: a failure inside an `anyOf` /
//! `oneOf` (whose issues are its branches'), a `false` schema other than
//! `additionalProperties: false`, an array or object of a type refused
//! (its members are checked all the same), a default to fill, a key that
//! may repeat, a format not checked here, numbers not compared exactly.
//! One error noted and everything else valid: it is the validator's only
//! error, whatever order the validator walks in.

use std::borrow::Cow;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::fmt;

use jsonschema::paths::Location;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::number::Num;
use super::plan::{Node, NodeId, Plan, Rules, head, kind};
use super::walk::{
    Key, MAX_SCHEMAS, Schemas, Stop, before, declared, length_surely_within, stop, takes,
    visit_scalars,
};
use crate::pointer::push_token;

/// What an instance's one error is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A keyword the value fails: `type`, `enum`, `maximum`, …
    Keyword(&'static str),
    /// `required`, for the property missing.
    Required(String),
    /// `additionalProperties: false`, for the property it refuses.
    Additional(String),
}

impl Failure {
    /// The keyword that fails.
    pub(crate) fn keyword(&self) -> &'static str {
        match self {
            Failure::Keyword(keyword) => keyword,
            Failure::Required(_) => "required",
            Failure::Additional(_) => "additionalProperties",
        }
    }
}

/// An instance's one error, where the validator would report it.
#[derive(Debug)]
pub(crate) struct Lone {
    /// The value that fails.
    pub(crate) instance_path: Location,
    /// The failing keyword's evaluation path, as the validator walks it.
    pub(crate) evaluation_path: Location,
    pub(crate) failure: Failure,
}

/// The one error of the instance `text` against `plan` (made from
/// `root`); `None` unless it has exactly one and the walk is sure of it.
///
/// `passed` is a path of members begun ([`super::begun`]): in each
/// container along it, the members before the path's are known to pass
/// (or are the placeholders of those that do) and are skipped unread;
/// their keys still count.
pub(crate) fn lone(plan: &Plan, root: &Value, text: &[u8], passed: &[usize]) -> Option<Lone> {
    let text = std::str::from_utf8(text).ok()?;
    let noted = RefCell::new(None);
    let mut reader = serde_json::Deserializer::from_str(text);
    let walk = Locate {
        plan,
        schemas: Schemas::one(plan.root),
        in_branch: false,
        at: None,
        passed,
        noted: &noted,
    };
    walk.deserialize(&mut reader).ok()?;
    reader.end().ok()?;
    let noted = noted.into_inner()?;
    let location = plan.locations.get(usize::from(noted.node))?;
    let evaluation_path = route(root, &noted.path, location)?.join(noted.failure.keyword());
    let instance_path = noted
        .path
        .iter()
        .fold(Location::new(), |path, member| match member {
            Owned::Key(key) => path.join(key.as_str()),
            Owned::Index(index) => path.join(*index),
        });
    Some(Lone {
        instance_path,
        evaluation_path,
        failure: noted.failure,
    })
}

/// One step from a value into one of its members.
#[derive(Clone, Copy)]
enum Member<'a> {
    Key(&'a str),
    Index(usize),
}

/// A [`Member`] kept past the walk.
#[derive(Debug)]
enum Owned {
    Key(String),
    Index(usize),
}

/// Where a value is: its member of its container, and where that is.
struct Frame<'a> {
    parent: Option<&'a Frame<'a>>,
    member: Member<'a>,
}

/// The error noted.
struct Noted {
    path: Vec<Owned>,
    /// The schema holding the failing keyword.
    node: NodeId,
    failure: Failure,
}

/// The rules that apply to a value, each with its node.
struct Applying<'p> {
    /// The first, and most often the only one.
    first: Option<(NodeId, &'p Rules)>,
    more: Vec<(NodeId, &'p Rules)>,
    /// Some of them came through an `anyOf` / `oneOf` branch.
    in_branch: bool,
}

impl<'p> Applying<'p> {
    fn push(&mut self, rules: (NodeId, &'p Rules)) -> Result<(), Stop> {
        if self.first.is_none() {
            self.first = Some(rules);
        } else if self.more.len() + 1 < MAX_SCHEMAS {
            self.more.push(rules);
        } else {
            return Err(Stop);
        }
        Ok(())
    }

    fn iter(&self) -> impl Iterator<Item = (NodeId, &'p Rules)> + '_ {
        self.first.iter().chain(&self.more).copied()
    }
}

/// The seed that checks one value, noting its errors.
#[derive(Clone, Copy)]
struct Locate<'p, 'a> {
    plan: &'p Plan,
    schemas: Schemas,
    /// The value is inside an `anyOf` / `oneOf` branch.
    in_branch: bool,
    at: Option<&'a Frame<'a>>,
    /// A path of members begun, from this value (see [`lone`]).
    passed: &'a [usize],
    noted: &'a RefCell<Option<Noted>>,
}

impl<'p, 'a> Locate<'p, 'a> {
    /// The walk of the member `index` of this value, at `frame`.
    fn member<'b>(
        &self,
        schemas: Schemas,
        in_branch: bool,
        index: usize,
        frame: &'b Frame<'b>,
    ) -> Locate<'p, 'b>
    where
        'a: 'b,
    {
        let passed = match self.passed.split_first() {
            Some((&last, rest)) if last == index => rest,
            _ => &[],
        };
        Locate {
            plan: self.plan,
            schemas,
            in_branch,
            at: Some(frame),
            passed,
            noted: self.noted,
        }
    }

    /// Whether this value's member `index` is known to pass.
    fn passed(&self, index: usize) -> bool {
        self.passed.first().is_some_and(|&last| index < last)
    }

    /// Notes that this value fails `failure` of the schema `node`: `Stop`
    /// for a second error, or one inside a branch.
    fn note(&self, node: NodeId, failure: Failure, in_branch: bool) -> Result<(), Stop> {
        let mut noted = self.noted.borrow_mut();
        if in_branch || noted.is_some() {
            return Err(Stop);
        }
        let mut path = Vec::new();
        let mut at = self.at;
        while let Some(frame) = at {
            path.push(match frame.member {
                Member::Key(key) => Owned::Key(key.to_owned()),
                Member::Index(index) => Owned::Index(index),
            });
            at = frame.parent;
        }
        path.reverse();
        *noted = Some(Noted {
            path,
            node,
            failure,
        });
        Ok(())
    }

    /// Notes the size keywords of the schema `node` that `count` members
    /// fail: `[(min keyword, min), (max keyword, max)]`.
    fn size(
        &self,
        node: NodeId,
        in_branch: bool,
        count: u64,
        [(min_keyword, min), (max_keyword, max)]: [(&'static str, Option<u64>); 2],
    ) -> Result<(), Stop> {
        if min.is_some_and(|min| count < min) {
            self.note(node, Failure::Keyword(min_keyword), in_branch)?;
        }
        if max.is_some_and(|max| count > max) {
            self.note(node, Failure::Keyword(max_keyword), in_branch)?;
        }
        Ok(())
    }

    /// The rules of every schema that applies to a value of `kind`, through
    /// `$ref`s and branches. A `type` refusing a scalar is noted; refusing
    /// an array or object, it is `Stop`.
    fn applying(&self, kind: u8) -> Result<Applying<'p>, Stop> {
        let mut applying = Applying {
            first: None,
            more: Vec::new(),
            in_branch: self.in_branch,
        };
        // Most values have one schema, with nothing to follow.
        if let Some(id) = self.schemas.only()
            && let Node::Rules(rules) = self.plan.node(id)
            && rules.refs.is_empty()
            && rules.by_kind.is_empty()
            && takes(rules, kind)
        {
            applying.first = Some((id, &**rules));
            return Ok(applying);
        }
        let mut pending = self.schemas;
        let mut steps = 0;
        while let Some(id) = pending.pop() {
            steps += 1;
            if steps > 64 {
                return Err(Stop);
            }
            match self.plan.node(id) {
                Node::Any => {}
                Node::Never => return Err(Stop),
                Node::Rules(rules) => {
                    applying.push((id, &**rules))?;
                    for &target in &rules.refs {
                        pending.push(target)?;
                    }
                    for dispatch in &rules.by_kind {
                        let branch = dispatch[kind.trailing_zeros() as usize].ok_or(Stop)?;
                        pending.push(branch)?;
                        applying.in_branch = true;
                    }
                }
            }
        }
        for (id, rules) in applying.iter() {
            if !takes(rules, kind) {
                if kind & (kind::ARRAY | kind::OBJECT) != 0 {
                    return Err(Stop);
                }
                self.note(id, Failure::Keyword("type"), applying.in_branch)?;
            }
        }
        Ok(applying)
    }

    /// Checks a scalar of `kind`: every applying schema's `enum` with
    /// `equals` (`None`: can't tell), then its other keywords with `check`,
    /// which calls its last argument with each keyword failing.
    fn scalar(
        &self,
        kind: u8,
        equals: impl Fn(&Value) -> Option<bool>,
        check: impl Fn(&Rules, &mut dyn FnMut(&'static str) -> Result<(), Stop>) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        let applying = self.applying(kind)?;
        for (id, rules) in applying.iter() {
            let mut fail = |keyword| self.note(id, Failure::Keyword(keyword), applying.in_branch);
            if let Some(values) = &rules.enumeration {
                let mut found = false;
                for value in values {
                    if equals(value).ok_or(Stop)? {
                        found = true;
                        break;
                    }
                }
                if !found {
                    fail(if rules.constant { "const" } else { "enum" })?;
                }
            }
            check(rules, &mut fail)?;
        }
        Ok(())
    }

    fn null(&self) -> Result<(), Stop> {
        self.scalar(kind::NULL, |v| Some(v.is_null()), |_, _| Ok(()))
    }

    fn boolean(&self, b: bool) -> Result<(), Stop> {
        let equals = |v: &Value| Some(v.as_bool() == Some(b));
        self.scalar(kind::BOOLEAN, equals, |_, _| Ok(()))
    }

    fn number(&self, n: Num) -> Result<(), Stop> {
        let kind = if n.is_integral() {
            kind::INTEGER
        } else {
            kind::FRACTION
        };
        let equals = |v: &Value| match v {
            Value::Number(e) => Some(Num::of(e)?.compare(n)? == Ordering::Equal),
            _ => Some(false),
        };
        let exact = n.exact_f64();
        self.scalar(kind, equals, |rules, fail| {
            let within = |(low, high)| exact.is_some_and(|x| low <= x && x <= high);
            if !rules.range.is_some_and(within) {
                bounds(rules, n, fail)?;
            }
            match rules.multiple_of {
                Some(divisor) if !crate::multiple_of::is_multiple(n.as_f64(), divisor) => {
                    fail("multipleOf")
                }
                _ => Ok(()),
            }
        })
    }

    fn string(&self, s: &str) -> Result<(), Stop> {
        let equals = |v: &Value| Some(v.as_str() == Some(s));
        self.scalar(kind::STRING, equals, |rules, fail| {
            if (rules.min_length.is_some() || rules.max_length.is_some())
                && !length_surely_within(s, rules.min_length, rules.max_length)
            {
                let chars = s.chars().count() as u64;
                if rules.min_length.is_some_and(|min| chars < min) {
                    fail("minLength")?;
                }
                if rules.max_length.is_some_and(|max| chars > max) {
                    fail("maxLength")?;
                }
            }
            match rules.format {
                None => Ok(()),
                Some(Some(format)) if (format.0)(s) => Ok(()),
                Some(Some(_)) => fail("format"),
                Some(None) => Err(Stop),
            }
        })
    }
}

/// `n` against each of `rules`' number bounds, compared exactly: `fail`
/// is called with each one it fails.
fn bounds(
    rules: &Rules,
    n: Num,
    fail: &mut dyn FnMut(&'static str) -> Result<(), Stop>,
) -> Result<(), Stop> {
    let bounds = [
        (
            rules.minimum,
            "minimum",
            Ordering::is_ge as fn(Ordering) -> bool,
        ),
        (rules.maximum, "maximum", Ordering::is_le),
        (rules.exclusive_minimum, "exclusiveMinimum", Ordering::is_gt),
        (rules.exclusive_maximum, "exclusiveMaximum", Ordering::is_lt),
    ];
    for (limit, keyword, passes) in bounds {
        if let Some(limit) = limit
            && !passes(n.compare(limit).ok_or(Stop)?)
        {
            fail(keyword)?;
        }
    }
    Ok(())
}

impl<'de> DeserializeSeed<'de> for Locate<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Locate<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    visit_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let applying = self.applying(kind::ARRAY).map_err(stop)?;
        let mut items = Schemas::NONE;
        for (_, rules) in applying.iter() {
            if let Some(id) = rules.items {
                items.push(id).map_err(stop)?;
            }
        }
        let mut count = 0;
        loop {
            let next = if self.passed(count) {
                seq.next_element::<IgnoredAny>()?.map(drop)
            } else {
                let frame = Frame {
                    parent: self.at,
                    member: Member::Index(count),
                };
                let item = self.member(items, applying.in_branch, count, &frame);
                seq.next_element_seed(item)?
            };
            if next.is_none() {
                break;
            }
            count += 1;
        }
        for (id, rules) in applying.iter() {
            let sizes = [("minItems", rules.min_items), ("maxItems", rules.max_items)];
            self.size(id, applying.in_branch, count as u64, sizes)
                .map_err(stop)?;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let applying = self.applying(kind::OBJECT).map_err(stop)?;
        let mut seen = [0u128; MAX_SCHEMAS];
        let mut count = 0u64;
        let mut undeclared = false;
        let mut ascending = true;
        let mut previous: Option<Cow<'de, str>> = None;
        // Where the number of keys counts, a repeated one counts once.
        let counts_keys = applying
            .iter()
            .any(|(_, rules)| rules.min_properties.is_some() || rules.max_properties.is_some());
        while let Some(key) = map.next_key_seed(Key)? {
            let index = count as usize;
            count += 1;
            let mut values = Schemas::NONE;
            let mut known = false;
            let word = head(&key);
            for ((id, rules), seen) in applying.iter().zip(seen.iter_mut()) {
                if let Some(index) = declared(rules, &key, word) {
                    let bit = 1u128 << index;
                    if *seen & bit != 0 {
                        // A repeated key: its tree keeps the last value only.
                        return Err(stop(Stop));
                    }
                    *seen |= bit;
                    known = true;
                    values.push(rules.properties[index].node).map_err(stop)?;
                } else if rules.closed {
                    let failure = Failure::Additional(key.clone().into_owned());
                    self.note(id, failure, applying.in_branch).map_err(stop)?;
                } else if let Some(additional) = rules.additional {
                    values.push(additional).map_err(stop)?;
                }
            }
            // A repeated key no schema declares matters where its value is
            // checked (the tree keeps the last one), or keys are counted.
            undeclared |= !known && (!values.is_empty() || counts_keys);
            if previous
                .as_ref()
                .is_some_and(|previous| !before(previous, &key))
            {
                ascending = false;
            }
            if self.passed(index) {
                map.next_value::<IgnoredAny>()?;
            } else {
                let frame = Frame {
                    parent: self.at,
                    member: Member::Key(&key),
                };
                let value = self.member(values, applying.in_branch, index, &frame);
                map.next_value_seed(value)?;
            }
            previous = Some(key);
        }
        // Such keys, not in order: one may repeat.
        if undeclared && !ascending {
            return Err(stop(Stop));
        }
        for ((id, rules), seen) in applying.iter().zip(seen) {
            let mut missing = rules.must_hold & !seen;
            while missing != 0 {
                let index = missing.trailing_zeros() as usize;
                missing &= missing - 1;
                let property = &rules.properties[index];
                if property.defaulted {
                    // Filled before the validator sees it.
                    return Err(stop(Stop));
                }
                let failure = Failure::Required(property.name.clone());
                self.note(id, failure, applying.in_branch).map_err(stop)?;
            }
            let sizes = [
                ("minProperties", rules.min_properties),
                ("maxProperties", rules.max_properties),
            ];
            self.size(id, applying.in_branch, count, sizes)
                .map_err(stop)?;
        }
        Ok(())
    }
}

/// The most schema objects [`route`] visits.
const ROUTE_BUDGET: usize = 512;

/// The evaluation path by which the validator reaches the schema at the
/// JSON Pointer `target` (in `root`) for the value at `path`: through
/// `properties`, `additionalProperties`, `items` and `$ref`s, never an
/// `anyOf` / `oneOf` branch. `None` unless there is exactly one.
fn route(root: &Value, path: &[Owned], target: &str) -> Option<Location> {
    let mut search = Search {
        root,
        target,
        found: Vec::new(),
        budget: ROUTE_BUDGET,
    };
    search.visit(root, String::new(), path, &Location::new())?;
    match <[Location; 1]>::try_from(search.found) {
        Ok([one]) => Some(one),
        Err(_) => None,
    }
}

/// [`route`]'s walk through the schema.
struct Search<'s> {
    root: &'s Value,
    target: &'s str,
    found: Vec<Location>,
    budget: usize,
}

impl Search<'_> {
    /// Every route from `schema`, at `at` in the root and reached by
    /// `evaluation`, down `path`; `None` past the budget.
    fn visit(
        &mut self,
        schema: &Value,
        at: String,
        path: &[Owned],
        evaluation: &Location,
    ) -> Option<()> {
        self.budget = self.budget.checked_sub(1)?;
        let Some(map) = schema.as_object() else {
            return Some(());
        };
        if path.is_empty() && at == self.target {
            self.found.push(evaluation.clone());
        }
        if let Some(reference) = map.get("$ref") {
            let pointer = reference.as_str()?.strip_prefix('#')?;
            let target = self.root.pointer(pointer)?;
            self.visit(target, pointer.to_owned(), path, &evaluation.join("$ref"))?;
        }
        match path.split_first() {
            Some((Owned::Key(key), rest)) => {
                if let Some(child) = map.get("properties").and_then(|p| p.get(key)) {
                    let mut child_at = format!("{at}/properties");
                    push_token(&mut child_at, key);
                    let evaluation = evaluation.join("properties").join(key.as_str());
                    self.visit(child, child_at, rest, &evaluation)?;
                } else if let Some(child) = map.get("additionalProperties") {
                    let evaluation = evaluation.join("additionalProperties");
                    self.visit(
                        child,
                        format!("{at}/additionalProperties"),
                        rest,
                        &evaluation,
                    )?;
                }
            }
            Some((Owned::Index(_), rest)) => {
                if let Some(child) = map.get("items") {
                    let evaluation = evaluation.join("items");
                    self.visit(child, format!("{at}/items"), rest, &evaluation)?;
                }
            }
            None => {}
        }
        Some(())
    }
}
