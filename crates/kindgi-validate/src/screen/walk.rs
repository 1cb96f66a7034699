//! The walk: one pass over the text with serde_json's own parser, each
//! value checked against the schemas that apply to it as it is read. No
//! tree is built and nothing is allocated but an escaped key.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::number::Num;
use super::plan::{MAX_NODES, MAX_PROPERTIES, Node, NodeId, Plan, Rules, head, kind, slot, tail};

/// The most schemas one value may be checked against at once (through
/// `$ref`s and branches); past it, the screen gives up.
pub(super) const MAX_SCHEMAS: usize = 5;

/// Why the walk stopped early; every reason means "not passed".
#[derive(Debug)]
pub(super) struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not passed")
    }
}

/// How the message of a read stopped by [`ToFill`] begins.
pub(crate) const TO_FILL: &str = "a default to fill";

/// Why a walk stopped at an object's end that misses only properties
/// with a `default`: once they are filled in, its tree may well be valid.
#[derive(Debug)]
pub(super) struct ToFill;

impl fmt::Display for ToFill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(TO_FILL)
    }
}

/// A checking visitor's `visit_*` methods for scalars, each handing the
/// value to its own `null`, `boolean`, `number` or `string` check.
macro_rules! visit_scalars {
    () => {
        fn visit_unit<E: de::Error>(self) -> Result<(), E> {
            self.null().map_err(stop)
        }

        fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
            self.boolean(b).map_err(stop)
        }

        fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
            self.number(Num::Unsigned(n)).map_err(stop)
        }

        fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
            self.number(Num::Signed(n)).map_err(stop)
        }

        fn visit_f64<E: de::Error>(self, f: f64) -> Result<(), E> {
            self.number(Num::Float(f)).map_err(stop)
        }

        fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
            self.string(s).map_err(stop)
        }
    };
}

pub(super) use visit_scalars;

/// Whether `text` passes `plan` (see [`crate::Validator::accepts_text`]).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn passes(plan: &Plan, text: &[u8]) -> bool {
    // Read as `str`, checked once here rather than string by string.
    let Ok(text) = std::str::from_utf8(text) else {
        return false;
    };
    let mut reader = serde_json::Deserializer::from_str(text);
    Walk::root(plan).deserialize(&mut reader).is_ok() && reader.end().is_ok()
}

/// Schemas a value must pass, every one: up to [`MAX_SCHEMAS`] node ids
/// packed in one word, their count in its low bits, then [`ID_BITS`] bits
/// an id. A [`Walk`] is then two words, and goes from call to call in
/// registers: measured, as an array of ids and a count it went through
/// memory, each key's walk written in pieces and read back whole, and that
/// read waited on the writes (about a tenth of the 1 MiB bulk read).
#[derive(Clone, Copy)]
pub(super) struct Schemas(u64);

/// The bits of one id in [`Schemas`].
const ID_BITS: u32 = 12;
/// The bits of the count in [`Schemas`].
const COUNT_BITS: u32 = 4;
/// One id's bits, in place at the bottom.
const ID_MASK: u64 = (1 << ID_BITS) - 1;

const _: () = assert!(MAX_NODES <= 1 << ID_BITS, "a node's id fits its bits");
const _: () = assert!(
    MAX_SCHEMAS < 1 << COUNT_BITS && COUNT_BITS as usize + MAX_SCHEMAS * ID_BITS as usize <= 64,
    "the count and the ids fit a word"
);

impl Schemas {
    pub(super) const NONE: Schemas = Schemas(0);

    pub(super) fn one(id: NodeId) -> Schemas {
        Schemas(1 | u64::from(id) << COUNT_BITS)
    }

    fn len(self) -> usize {
        (self.0 & ((1 << COUNT_BITS) - 1)) as usize
    }

    /// Where the id at `index` lies in the word.
    fn shift(index: usize) -> u32 {
        COUNT_BITS + ID_BITS * index as u32
    }

    pub(super) fn push(&mut self, id: NodeId) -> Result<(), Stop> {
        let len = self.len();
        if len == MAX_SCHEMAS {
            return Err(Stop);
        }
        // The count's bits are below the ids': adding one doesn't carry.
        self.0 = (self.0 + 1) | (u64::from(id) & ID_MASK) << Schemas::shift(len);
        Ok(())
    }

    /// The one schema, when there is exactly one.
    pub(super) fn only(&self) -> Option<NodeId> {
        (self.len() == 1).then_some((self.0 >> COUNT_BITS & ID_MASK) as NodeId)
    }

    /// Whether there are none.
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last one pushed, taken off.
    pub(super) fn pop(&mut self) -> Option<NodeId> {
        let len = self.len().checked_sub(1)?;
        let shift = Schemas::shift(len);
        let id = (self.0 >> shift & ID_MASK) as NodeId;
        self.0 = (self.0 & !(ID_MASK << shift)) - 1;
        Some(id)
    }
}

/// The rules that apply to a value of a known kind. Where a check runs
/// for every key or object (`MapCheck`), its one-schema case is matched
/// at the site, not through a shared helper taking a closure: measured,
/// such a helper kept the closure out of line (up to 3 M more
/// instructions for the 1 MiB bulk read).
enum Applying<'p> {
    /// One schema's, as for most values: made without filling the room
    /// for [`MAX_SCHEMAS`].
    One([Option<&'p Rules>; 1]),
    /// Any number's.
    Many(Followed<'p>),
}

impl<'p> Applying<'p> {
    fn iter(&self) -> impl Iterator<Item = &'p Rules> + '_ {
        let rules = match self {
            Applying::One(one) => one.as_slice(),
            Applying::Many(followed) => followed.rules(),
        };
        rules.iter().flatten().copied()
    }
}

/// The rules of a value's schemas found through its `$ref`s and branches
/// ([`Walk::applying_followed`]): the first `len`.
#[derive(Clone, Copy)]
struct Followed<'p> {
    rules: [Option<&'p Rules>; MAX_SCHEMAS],
    len: usize,
}

impl<'p> Followed<'p> {
    fn rules(&self) -> &[Option<&'p Rules>] {
        &self.rules[..self.len]
    }
}

/// The seed that checks one value.
#[derive(Clone, Copy)]
pub(super) struct Walk<'p> {
    plan: &'p Plan,
    schemas: Schemas,
}

impl<'p> Walk<'p> {
    /// The walk that checks a whole text against `plan`.
    pub(super) fn root(plan: &'p Plan) -> Walk<'p> {
        Walk {
            plan,
            schemas: Schemas::one(plan.root),
        }
    }

    /// The rules of the value's one schema, when it has exactly one and it
    /// has no `$ref` or branch to follow (most values), and they take a
    /// value of `kind`; `Stop` when they don't; `None` for any other value.
    #[inline(always)]
    fn lone(&self, kind: u8) -> Result<Option<&'p Rules>, Stop> {
        let Some(id) = self.schemas.only() else {
            return Ok(None);
        };
        match self.plan.node(id) {
            Node::Rules(rules) if rules.refs.is_empty() && rules.by_kind.is_empty() => {
                if takes(rules, kind) {
                    Ok(Some(rules))
                } else {
                    Err(Stop)
                }
            }
            _ => Ok(None),
        }
    }

    /// The rules of every schema that applies to a value of `kind`, through
    /// `$ref`s and branches; `Stop` when one of them refuses the kind.
    #[inline]
    fn applying(&self, kind: u8) -> Result<Applying<'p>, Stop> {
        Ok(match self.lone(kind)? {
            Some(rules) => Applying::One([Some(rules)]),
            None => Applying::Many(self.applying_followed(kind)?),
        })
    }

    /// [`Walk::applying`] for a value with several schemas, or `$ref`s or
    /// branches to follow.
    #[inline(never)]
    fn applying_followed(&self, kind: u8) -> Result<Followed<'p>, Stop> {
        let mut rules_found = [None; MAX_SCHEMAS];
        let mut found = 0;
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
                    if !takes(rules, kind) {
                        return Err(Stop);
                    }
                    let slot = rules_found.get_mut(found).ok_or(Stop)?;
                    *slot = Some(&**rules);
                    found += 1;
                    for &target in &rules.refs {
                        pending.push(target)?;
                    }
                    for dispatch in &rules.by_kind {
                        let branch = dispatch[kind.trailing_zeros() as usize].ok_or(Stop)?;
                        pending.push(branch)?;
                    }
                }
            }
        }
        Ok(Followed {
            rules: rules_found,
            len: found,
        })
    }

    /// Checks a scalar of `kind` against every applying schema. The one
    /// schema of most values is checked here, without the list of rules
    /// that several take: measured, that list and its loop were most of the
    /// instructions of a number's check.
    #[inline(always)]
    fn scalar(&self, kind: u8, value: impl Scalar) -> Result<(), Stop> {
        match self.lone(kind)? {
            Some(rules) => value.passes(rules),
            None => self.scalar_followed(kind, value),
        }
    }

    /// [`Walk::scalar`] for a value with several schemas, or `$ref`s or
    /// branches to follow.
    #[inline(never)]
    fn scalar_followed(&self, kind: u8, value: impl Scalar) -> Result<(), Stop> {
        for rules in self.applying_followed(kind)?.rules().iter().flatten() {
            value.passes(rules)?;
        }
        Ok(())
    }

    /// Checks a `null`.
    pub(super) fn null(self) -> Result<(), Stop> {
        self.scalar(kind::NULL, Null)
    }

    /// Checks a boolean.
    pub(super) fn boolean(self, b: bool) -> Result<(), Stop> {
        self.scalar(kind::BOOLEAN, b)
    }

    /// Checks a number.
    #[inline(always)]
    pub(super) fn number(self, n: Num) -> Result<(), Stop> {
        let kind = if n.is_integral() {
            kind::INTEGER
        } else {
            kind::FRACTION
        };
        self.scalar(
            kind,
            Number {
                n,
                exact: n.exact_f64(),
            },
        )
    }

    /// Checks a string.
    #[inline]
    pub(super) fn string(self, s: &str) -> Result<(), Stop> {
        self.scalar(kind::STRING, s)
    }
}

/// A scalar as a schema checks it. Named types with methods always inlined,
/// not closures: a closure called from two places (one schema, several)
/// was kept out of line.
trait Scalar: Copy {
    /// Whether it equals `v`, a value of an `enum` (`None`: can't tell).
    fn equals(self, v: &Value) -> Option<bool>;

    /// Whether it passes `rules`' keywords other than `enum` and `type`.
    fn keywords(self, rules: &Rules) -> Result<(), Stop>;

    /// Whether it passes `rules`' `enum` and its other keywords (its `type`
    /// already checked).
    #[inline(always)]
    fn passes(self, rules: &Rules) -> Result<(), Stop> {
        if let Some(values) = &rules.enumeration
            && !values.iter().any(|v| self.equals(v) == Some(true))
        {
            return Err(Stop);
        }
        self.keywords(rules)
    }
}

/// A `null`.
#[derive(Clone, Copy)]
struct Null;

impl Scalar for Null {
    #[inline(always)]
    fn equals(self, v: &Value) -> Option<bool> {
        Some(v.is_null())
    }

    #[inline(always)]
    fn keywords(self, _: &Rules) -> Result<(), Stop> {
        Ok(())
    }
}

impl Scalar for bool {
    #[inline(always)]
    fn equals(self, v: &Value) -> Option<bool> {
        Some(v.as_bool() == Some(self))
    }

    #[inline(always)]
    fn keywords(self, _: &Rules) -> Result<(), Stop> {
        Ok(())
    }
}

/// A number, and its exact `f64` if it has one.
#[derive(Clone, Copy)]
struct Number {
    n: Num,
    exact: Option<f64>,
}

impl Scalar for Number {
    #[inline(always)]
    fn equals(self, v: &Value) -> Option<bool> {
        match v {
            Value::Number(e) => Some(Num::of(e)?.compare(self.n)? == Ordering::Equal),
            _ => Some(false),
        }
    }

    #[inline(always)]
    fn keywords(self, rules: &Rules) -> Result<(), Stop> {
        if let (Some((low, high)), Some(x)) = (rules.range, self.exact) {
            if !(low <= x && x <= high) {
                return Err(Stop);
            }
        } else {
            number_bounds(rules, self.n)?;
        }
        match rules.multiple_of {
            Some(divisor) if !crate::multiple_of::is_multiple(self.n.as_f64(), divisor) => {
                Err(Stop)
            }
            _ => Ok(()),
        }
    }
}

impl Scalar for &str {
    #[inline(always)]
    fn equals(self, v: &Value) -> Option<bool> {
        Some(v.as_str() == Some(self))
    }

    #[inline(always)]
    fn keywords(self, rules: &Rules) -> Result<(), Stop> {
        if (rules.min_length.is_some() || rules.max_length.is_some())
            && !length_surely_within(self, rules.min_length, rules.max_length)
        {
            let chars = self.chars().count() as u64;
            if rules.min_length.is_some_and(|min| chars < min)
                || rules.max_length.is_some_and(|max| chars > max)
            {
                return Err(Stop);
            }
        }
        match rules.format {
            None => Ok(()),
            Some(Some(format)) if (format.0)(self) => Ok(()),
            Some(_) => Err(Stop),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// `Stop` as the parser's error.
pub(super) fn stop<E: de::Error>(_: Stop) -> E {
    E::custom(Stop)
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    visit_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut check = SeqCheck::new(self).map_err(stop)?;
        while seq.next_element_seed(check.items())?.is_some() {
            check.counted();
        }
        check.end().map_err(stop)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut check = MapCheck::new(self).map_err(stop)?;
        while let Some(key) = map.next_key_seed(Key)? {
            let value = check.key(key).map_err(stop)?;
            map.next_value_seed(value)?;
        }
        check.end()
    }
}

/// An array's checks, item by item: its items' schemas and its size.
pub(super) struct SeqCheck<'p> {
    applying: Applying<'p>,
    walk: Walk<'p>,
    count: u64,
}

impl<'p> SeqCheck<'p> {
    /// Starts checking an array under `walk`'s schemas.
    #[inline]
    pub(super) fn new(walk: Walk<'p>) -> Result<SeqCheck<'p>, Stop> {
        let applying = walk.applying(kind::ARRAY)?;
        let mut items = Schemas::NONE;
        for rules in applying.iter() {
            if let Some(id) = rules.items {
                items.push(id)?;
            }
        }
        Ok(SeqCheck {
            applying,
            walk: Walk {
                plan: walk.plan,
                schemas: items,
            },
            count: 0,
        })
    }

    /// The walk that checks an item.
    #[inline]
    pub(super) fn items(&self) -> Walk<'p> {
        self.walk
    }

    /// One more item was read.
    #[inline]
    pub(super) fn counted(&mut self) {
        self.count += 1;
    }

    /// The array ended: its size is checked.
    #[inline]
    pub(super) fn end(&self) -> Result<(), Stop> {
        for rules in self.applying.iter() {
            if rules.min_items.is_some_and(|min| self.count < min)
                || rules.max_items.is_some_and(|max| self.count > max)
            {
                return Err(Stop);
            }
        }
        Ok(())
    }
}

/// An object's checks, key by key: which properties came, in what order,
/// and what each value must pass.
pub(super) struct MapCheck<'p, 'de> {
    plan: &'p Plan,
    holding: Holding<'p>,
    count: u64,
    undeclared: bool,
    /// Whether the keys' order counts: it does unless a schema refuses
    /// every key it doesn't declare.
    tracks_order: bool,
    ascending: bool,
    previous: Option<Cow<'de, str>>,
}

/// The rules an object is checked against, each with the declared
/// properties of it that came. Most objects have one schema: its case
/// leaves the room for several unwritten (measured: filling it, and
/// copying it about, cost ~30 instructions an object).
enum Holding<'p> {
    One {
        rules: &'p Rules,
        seen: u128,
    },
    Many {
        followed: Followed<'p>,
        seen: [u128; MAX_SCHEMAS],
    },
}

impl Holding<'_> {
    /// Whether `test` passes for every schema's rules with the properties
    /// of it that came.
    #[inline(always)]
    fn all(&self, test: impl Fn(&Rules, u128) -> bool) -> bool {
        match self {
            Holding::One { rules, seen } => test(rules, *seen),
            Holding::Many { followed, seen } => followed
                .rules()
                .iter()
                .zip(seen)
                .all(|(rules, &seen)| rules.is_none_or(|rules| test(rules, seen))),
        }
    }
}

impl<'p, 'de> MapCheck<'p, 'de> {
    /// Starts checking an object under `walk`'s schemas.
    #[inline(always)]
    pub(super) fn new(walk: Walk<'p>) -> Result<MapCheck<'p, 'de>, Stop> {
        let holding = match walk.lone(kind::OBJECT)? {
            Some(rules) => Holding::One { rules, seen: 0 },
            None => Holding::Many {
                followed: walk.applying_followed(kind::OBJECT)?,
                seen: [0; MAX_SCHEMAS],
            },
        };
        let tracks_order = holding.all(|rules, _| !rules.closed);
        Ok(MapCheck {
            plan: walk.plan,
            holding,
            count: 0,
            undeclared: false,
            tracks_order,
            ascending: true,
            previous: None,
        })
    }

    /// The walk that checks the value of `key`, the next key read.
    #[inline(always)]
    pub(super) fn key(&mut self, key: Cow<'de, str>) -> Result<Walk<'p>, Stop> {
        self.count += 1;
        let mut values = Schemas::NONE;
        let mut known = false;
        let word = head(&key);
        match &mut self.holding {
            // Most objects have one schema.
            Holding::One { rules, seen } => {
                key_of(rules, seen, &key, word, &mut values, &mut known)?;
            }
            Holding::Many { followed, seen } => {
                for (rules, seen) in followed.rules().iter().zip(seen.iter_mut()) {
                    if let Some(rules) = rules {
                        key_of(rules, seen, &key, word, &mut values, &mut known)?;
                    }
                }
            }
        }
        self.undeclared |= !known;
        // An undeclared key is refused where the order doesn't count: an
        // object read on has all its keys declared.
        if self.tracks_order {
            if self.ascending
                && let Some(previous) = &self.previous
                && !before(previous, &key)
            {
                self.ascending = false;
            }
            self.previous = Some(key);
        }
        Ok(Walk {
            plan: self.plan,
            schemas: values,
        })
    }

    /// The object ended: what it must hold is checked; the error says
    /// whether it misses no more than defaults ([`MapCheck::refusal`]).
    #[inline(always)]
    pub(super) fn end<E: de::Error>(&self) -> Result<(), E> {
        // A map type read from the text sees its keys in the text's order,
        // from the tree in sorted order (and a repeated key twice): only
        // objects whose keys are all declared, or sorted, pass.
        if self.undeclared && !self.ascending {
            return Err(stop(Stop));
        }
        let held = self.holding.all(|rules, seen| {
            seen & rules.must_hold == rules.must_hold
                && rules.min_properties.is_none_or(|min| self.count >= min)
                && rules.max_properties.is_none_or(|max| self.count <= max)
        });
        if held { Ok(()) } else { Err(self.refusal()) }
    }

    /// The error of this object where [`MapCheck::end`] refused what it
    /// holds (its keys' order passed): [`ToFill`] where all it misses is
    /// properties with a `default`, else [`Stop`].
    #[cold]
    fn refusal<E: de::Error>(&self) -> E {
        let to_fill = self.holding.all(|rules, seen| {
            let missing = rules.must_hold & !seen;
            rules
                .properties
                .iter()
                .enumerate()
                .all(|(index, property)| missing & (1 << index) == 0 || property.defaulted)
                && rules.min_properties.is_none_or(|min| self.count >= min)
                && rules.max_properties.is_none_or(|max| self.count <= max)
        });
        if to_fill {
            E::custom(ToFill)
        } else {
            E::custom(Stop)
        }
    }
}

const _: () = assert!(MAX_PROPERTIES <= 128, "one bit a property in a u128");

/// `n` against `rules`' number bounds, compared exactly.
fn number_bounds(rules: &Rules, n: Num) -> Result<(), Stop> {
    let at_least = |limit: Option<Num>, pass: fn(Ordering) -> bool| match limit {
        None => Ok(()),
        Some(limit) => match n.compare(limit) {
            Some(order) if pass(order) => Ok(()),
            _ => Err(Stop),
        },
    };
    at_least(rules.minimum, Ordering::is_ge)?;
    at_least(rules.maximum, Ordering::is_le)?;
    at_least(rules.exclusive_minimum, Ordering::is_gt)?;
    at_least(rules.exclusive_maximum, Ordering::is_lt)
}

/// Whether `rules` can take a value of `kind` at all: its `type` allows
/// it, and no `enum` (of scalars only) rules an array or object out.
pub(super) fn takes(rules: &Rules, kind: u8) -> bool {
    rules.kinds & kind != 0
        && !(rules.enumeration.is_some() && kind & (kind::ARRAY | kind::OBJECT) != 0)
}

/// `key` (whose [`head`] is `word`) in an object under `rules`, whose
/// declared properties seen so far are `seen`: the schema its value must
/// pass is pushed to `values`, and `known` set when `rules` declares it.
#[inline(always)]
fn key_of(
    rules: &Rules,
    seen: &mut u128,
    key: &str,
    word: u64,
    values: &mut Schemas,
    known: &mut bool,
) -> Result<(), Stop> {
    match declared(rules, key, word) {
        Some(index) => {
            let bit = 1u128 << index;
            if *seen & bit != 0 {
                // A repeated key: its tree keeps the last value only.
                return Err(Stop);
            }
            *seen |= bit;
            *known = true;
            values.push(rules.properties[index].node)
        }
        None => match rules.additional {
            Some(id) => values.push(id),
            None => Ok(()),
        },
    }
}

/// The index of `key`, whose [`head`] is `word`, among the properties
/// `rules` declares: looked up from its slot (see [`Rules::slots`]).
#[inline(always)]
pub(super) fn declared(rules: &Rules, key: &str, word: u64) -> Option<usize> {
    let mask = rules.slots.len().wrapping_sub(1);
    let mut at = slot(key.len(), word, mask);
    // The table has an empty slot; bounded all the same.
    for _ in 0..rules.slots.len() {
        // `EMPTY` is past every index: no property, the key is undeclared.
        let index = usize::from(*rules.slots.get(at)?);
        let name = rules.keys.get(index)?;
        if name.len == key.len()
            && name.head == word
            && (name.len <= 8
                || (name.tail == tail(key)
                    && (name.len <= 16
                        || rules.properties[index].name.as_bytes()[8..] == key.as_bytes()[8..])))
        {
            return Some(index);
        }
        at = (at + 1) & mask;
    }
    None
}

/// Whether `s`'s length in characters is surely within `min..=max` from
/// its length in bytes alone: a character is one to four bytes.
pub(super) fn length_surely_within(s: &str, min: Option<u64>, max: Option<u64>) -> bool {
    let bytes = s.len() as u64;
    max.is_none_or(|max| bytes <= max) && min.is_none_or(|min| bytes.div_ceil(4) >= min)
}

/// Whether `a` sorts strictly before `b`, as a tree's keys are sorted.
pub(super) fn before(a: &str, b: &str) -> bool {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x < y,
        _ => a < b,
    }
}

/// An object's key, borrowed from the text unless it had escapes.
pub(super) struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_declared_only_when_every_byte_matches() {
        // Names of every length up to 24: a key matched by its words alone
        // (up to 16 bytes) or by its bytes past the first eight too.
        let names: Vec<String> = (1..=24)
            .map(|len| (0..len).map(|i| char::from(b'a' + i as u8)).collect())
            .collect();
        let properties: serde_json::Map<String, Value> = names
            .iter()
            .map(|name| (name.clone(), serde_json::json!({})))
            .collect();
        let schema = serde_json::json!({"type": "object", "properties": properties});
        let plan = Plan::new(&schema).expect("a plan");
        let Node::Rules(rules) = plan.node(plan.root) else {
            panic!("rules at the root");
        };
        let find = |key: &str| {
            declared(rules, key, head(key)).map(|index| rules.properties[index].name.clone())
        };
        for name in &names {
            assert_eq!(find(name).as_deref(), Some(name.as_str()));
            for at in 0..name.len() {
                let mut other = name.clone().into_bytes();
                other[at] = b'Z';
                let other = String::from_utf8(other).expect("ASCII");
                assert_eq!(find(&other), None, "{other}");
            }
        }
    }

    #[test]
    fn schemas_keep_their_ids_up_to_the_most() {
        let last = NodeId::try_from(MAX_NODES - 1).expect("a node id");
        let ids = [0, 7, last, 1, last];
        let mut schemas = Schemas::NONE;
        assert!(schemas.is_empty());
        for (count, &id) in ids.iter().enumerate() {
            assert!(schemas.push(id).is_ok());
            assert_eq!(schemas.only(), (count == 0).then_some(0));
        }
        assert!(schemas.push(2).is_err(), "one past MAX_SCHEMAS");
        for &id in ids.iter().rev() {
            assert_eq!(schemas.pop(), Some(id));
        }
        assert!(schemas.is_empty());
        assert_eq!(schemas.pop(), None);
        assert_eq!(Schemas::one(last).only(), Some(last));
    }
}
