//! The compiled validator.

use std::sync::OnceLock;

use jsonschema::Draft;
use kindgi_protocol::Issue;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::defaults::Defaults;
use crate::error::SchemaError;
use crate::first_error::{FirstError, Found};
use crate::formats;
use crate::issue::Collector;
use crate::multiple_of;
use crate::refs::Refs;
use crate::screen::{self, Plan};

/// The most issues [`Validator::validate`] reports for one instance.
pub const MAX_ISSUES: usize = 100;

/// The most values (objects, arrays, strings, numbers, … counted one each)
/// an invalid instance may hold for [`Validator::validate`] to look for every
/// issue. A larger invalid instance is answered with the issues of the first
/// error found only: the validator builds every error before any is kept, and
/// a 10 MiB list of wrong values would take gigabytes of them.
pub const MAX_VALUES_FOR_EVERY_ISSUE: usize = 100_000;

/// A JSON Schema (draft 2020-12) compiled once and used for many instances.
///
/// Validation collects every error, checks formats and never coerces types;
/// issues come out as Ajv (`allErrors: true` with ajv-formats) reports them,
/// in Ajv's order. [`fill_defaults`](Validator::fill_defaults) is Ajv's
/// `useDefaults`.
///
/// Building does all the schema work (compiling, resolving `$ref`s, planning
/// defaults), so a call costs only the walk over the instance; the one
/// exception is the schema [`first_issues`](Validator::first_issues) checks
/// on, compiled the first time it is needed. A `Validator` is
/// `Send + Sync`; share it behind an `Arc`.
///
/// # Example
///
/// ```
/// use kindgi_validate::Validator;
/// use serde_json::json;
///
/// let validator = Validator::new(&json!({
///     "type": "object",
///     "properties": {
///         "message": {"type": "string", "minLength": 1},
///         "loud": {"type": "boolean", "default": false}
///     },
///     "required": ["message"],
///     "additionalProperties": false
/// }))?;
///
/// let mut input = json!({"message": "hi"});
/// validator.fill_defaults(&mut input);
/// assert_eq!(input, json!({"message": "hi", "loud": false}));
/// assert!(validator.validate(&input).is_ok());
///
/// let issues = validator.validate(&json!({"message": ""})).unwrap_err();
/// assert_eq!(
///     serde_json::to_value(&issues)?,
///     json!([{
///         "instancePath": "/message",
///         "schemaPath": "#/properties/message/minLength",
///         "keyword": "minLength",
///         "params": {"limit": 1},
///         "message": "must NOT have fewer than 1 characters"
///     }])
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Validator {
    schema: Value,
    compiled: jsonschema::Validator,
    refs: Refs,
    defaults: Defaults,
    /// The screen's plan of the schema, when it has one.
    pub(crate) plan: Option<Plan>,
    /// Made the first time an instance too large for every issue is invalid.
    first_error: OnceLock<Option<FirstError>>,
}

/// Compiles `schema` with the options every validator here uses.
fn compile(schema: &Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'_>> {
    let options = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(true)
        .with_keyword("multipleOf", multiple_of::factory)
        .offline();
    formats::register(options).build(schema)
}

/// Why [`Validator::read_checked`] gave no value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TextRefusal {
    /// An object misses properties whose schema has a `default`, no more:
    /// filled in, its tree may well be valid.
    ToFill,
    /// Invalid: the issues its tree would get, in Ajv's order and words.
    Invalid(Vec<Issue>),
    /// Not settled from the text (several errors, a type that reads other
    /// than the schema says, text that isn't one JSON value): its tree
    /// answers.
    Unsure,
}

/// What [`Validator::read_checked_value`] read at the start of a text.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRead<T> {
    /// The value, or why it was not read.
    pub read: Result<T, TextRefusal>,
    /// The bytes the value took, whitespace before it included: the rest
    /// of the text starts there.
    pub len: usize,
}

/// Whether `text` is JSON whitespace only.
fn only_whitespace(text: &str) -> bool {
    text.bytes()
        .all(|byte| matches!(byte, b' ' | b'\n' | b'\r' | b'\t'))
}

impl Validator {
    /// Compiles `schema` as JSON Schema draft 2020-12 (whatever its `$schema`
    /// says). References must be local to the schema; nothing is fetched.
    ///
    /// # Errors
    ///
    /// [`SchemaError`] when the schema is not valid against the 2020-12
    /// meta-schema, a `$ref` points outside the schema, or a `pattern` does
    /// not compile.
    pub fn new(schema: &Value) -> Result<Validator, SchemaError> {
        let compiled = compile(schema).map_err(|error| {
            SchemaError::new(
                format!("#{}", error.instance_path().as_str()),
                error.to_string(),
            )
        })?;
        let refs = Refs::collect(schema);
        let defaults = Defaults::new(schema, &refs);
        Ok(Validator {
            schema: schema.clone(),
            compiled,
            refs,
            defaults,
            plan: Plan::new(schema),
            first_error: OnceLock::new(),
        })
    }

    /// Validates `instance`, returning every issue in Ajv's shape and order.
    ///
    /// # Errors
    ///
    /// The issues, never empty, when `instance` is not valid: at most
    /// [`MAX_ISSUES`], the first ones found. For an instance of more than
    /// [`MAX_VALUES_FOR_EVERY_ISSUE`] values, those of the first error only;
    /// where that is an `anyOf` or `oneOf`, its own issue, without those of
    /// its branches.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<Issue>> {
        if self.compiled.is_valid(instance) {
            return Ok(());
        }
        self.validate_likely_invalid(instance)
    }

    /// The issues of an instance found invalid ([`validate`](Validator::validate)'s
    /// answer past its first check); `Ok` should it be valid all the same.
    fn validate_likely_invalid(&self, instance: &Value) -> Result<(), Vec<Issue>> {
        if holds_more_values_than(instance, MAX_VALUES_FOR_EVERY_ISSUE) {
            // Answers `Ok` for a valid instance: see `first_issues_of_invalid`.
            return self.first_issues_of_invalid(instance);
        }
        // Bounded: a list of many wrong items must not become as many issues
        // (and a large answer).
        self.issues(
            instance,
            self.compiled.iter_errors(instance).take(MAX_ISSUES),
        )
    }

    /// Validates `instance`, returning the issues of the first error found
    /// only: no other error is built, so the memory it takes does not grow
    /// with the number of wrong values. Where the first error is an `anyOf`
    /// or `oneOf` that failed, its own issue, without those of its branches.
    /// [`validate`](Validator::validate) answers this way for an instance of
    /// more than [`MAX_VALUES_FOR_EVERY_ISSUE`] values.
    ///
    /// # Errors
    ///
    /// The issues, never empty, when `instance` is not valid.
    ///
    /// # Example
    ///
    /// ```
    /// use kindgi_validate::Validator;
    /// use serde_json::json;
    ///
    /// let validator = Validator::new(&json!({
    ///     "properties": {"tags": {"anyOf": [
    ///         {"type": "array", "items": {"type": "string"}},
    ///         {"type": "null"}
    ///     ]}}
    /// }))?;
    /// let issues = validator.first_issues(&json!({"tags": [1, 2, 3]})).unwrap_err();
    /// assert_eq!(
    ///     serde_json::to_value(&issues)?,
    ///     json!([{
    ///         "instancePath": "/tags",
    ///         "schemaPath": "#/properties/tags/anyOf",
    ///         "keyword": "anyOf",
    ///         "params": {},
    ///         "message": "must match a schema in anyOf"
    ///     }])
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn first_issues(&self, instance: &Value) -> Result<(), Vec<Issue>> {
        if self.compiled.is_valid(instance) {
            return Ok(());
        }
        self.first_issues_of_invalid(instance)
    }

    /// [`first_issues`](Validator::first_issues) of an instance expected to
    /// be invalid; `Ok` for a valid one all the same: the rewritten schema
    /// accepts what the schema as written accepts, and the written one has
    /// the last word.
    fn first_issues_of_invalid(&self, instance: &Value) -> Result<(), Vec<Issue>> {
        let first_error = self
            .first_error
            .get_or_init(|| FirstError::new(&self.schema, |rewritten| compile(rewritten).ok()));
        // The schema as written is the judge: should the rewritten one find
        // nothing, its own first error stands.
        let found = first_error
            .as_ref()
            .and_then(|first_error| first_error.find(instance))
            .or_else(|| self.compiled.validate(instance).err().map(Found::Error));
        match found {
            Some(Found::Issue(issue)) => Err(vec![issue]),
            Some(Found::Error(error)) => self.issues(instance, [error]),
            None => Ok(()),
        }
    }

    /// The issues of `errors` in Ajv's shape and order, at most
    /// [`MAX_ISSUES`]; `Ok` when there are none.
    fn issues<'i>(
        &self,
        instance: &'i Value,
        errors: impl IntoIterator<Item = jsonschema::ValidationError<'i>>,
    ) -> Result<(), Vec<Issue>> {
        let mut collector = Collector::new(&self.schema, &self.refs, instance);
        for error in errors {
            collector.add(&error, None);
        }
        let mut issues = collector.finish();
        issues.truncate(MAX_ISSUES);
        if issues.is_empty() {
            Ok(())
        } else {
            Err(issues)
        }
    }

    /// Reads an instance from its JSON `text` straight into `seed`'s type,
    /// every value checked against the schema as it is read, in one pass
    /// and without building the instance's tree: the value when the text is
    /// one JSON value the schema passes with nothing to fill, read as its
    /// tree would be.
    ///
    /// The seed is the caller's own code: a panic in it goes on to the
    /// caller.
    ///
    /// # Errors
    ///
    /// Why the text was not read, as a [`TextRefusal`]: a default to fill,
    /// the issues of an invalid instance (those [`validate`](Validator::validate)
    /// would give its tree), or [`TextRefusal::Unsure`] — then parse the
    /// tree, fill its defaults and validate it.
    ///
    /// # Example
    ///
    /// ```
    /// use std::marker::PhantomData;
    ///
    /// use kindgi_validate::{TextRefusal, Validator};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, Debug, PartialEq)]
    /// struct Order {
    ///     count: u32,
    /// }
    ///
    /// let validator = Validator::new(&json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "count": {"type": "integer", "maximum": 9},
    ///         "note": {"type": "string", "default": ""}
    ///     },
    ///     "required": ["count"]
    /// }))?;
    /// let read = |text| validator.read_checked(text, PhantomData::<Order>);
    /// assert_eq!(read(r#"{"count": 3, "note": "hi"}"#), Ok(Order { count: 3 }));
    /// assert_eq!(read(r#"{"count": 3}"#), Err(TextRefusal::ToFill));
    /// let Err(TextRefusal::Invalid(issues)) = read(r#"{"count": 10, "note": ""}"#) else {
    ///     panic!("10 is past the maximum");
    /// };
    /// assert_eq!(issues[0].instance_path, "/count");
    /// assert_eq!(read(r#"{"count": 3, "note": "#), Err(TextRefusal::Unsure));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_checked<'de, S>(&self, text: &'de str, seed: S) -> Result<S::Value, TextRefusal>
    where
        S: serde::de::DeserializeSeed<'de>,
    {
        match self.read_checked_value(text, seed) {
            Some(ValueRead { read, len }) if only_whitespace(&text[len..]) => read,
            _ => Err(TextRefusal::Unsure),
        }
    }

    /// [`read_checked`](Validator::read_checked) for the JSON value that
    /// starts `text`, whatever follows it: what the read gave, and how many
    /// bytes of `text` the value took (whitespace before it included). A
    /// reader of a larger document reads a value of it this way without
    /// finding its end first, and goes on from `len`.
    ///
    /// `None` when `text` doesn't start with one well-formed JSON value.
    ///
    /// # Example
    ///
    /// ```
    /// use std::marker::PhantomData;
    ///
    /// use kindgi_validate::{TextRefusal, ValueRead, Validator};
    /// use serde_json::json;
    ///
    /// let validator = Validator::new(&json!({"type": "integer", "maximum": 9}))?;
    /// let read = |text| validator.read_checked_value(text, PhantomData::<u8>);
    /// assert_eq!(read(" 7, \"next\": 1}"), Some(ValueRead { read: Ok(7), len: 2 }));
    /// let Some(ValueRead { read: Err(TextRefusal::Invalid(issues)), len: 2 }) = read("10]") else {
    ///     panic!("10 is past the maximum");
    /// };
    /// assert_eq!(issues[0].keyword.as_deref(), Some("maximum"));
    /// assert_eq!(read("[1,"), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_checked_value<'de, S>(&self, text: &'de str, seed: S) -> Option<ValueRead<S::Value>>
    where
        S: serde::de::DeserializeSeed<'de>,
    {
        let mut reader = serde_json::Deserializer::from_str(text);
        let refused = match self.deserialize_passing(seed, &mut reader) {
            // serde_json tells where its reader is through the stream it
            // would go on reading: right after the value.
            Ok(value) => {
                let len = reader.into_iter::<IgnoredAny>().byte_offset();
                return Some(ValueRead {
                    read: Ok(value),
                    len,
                });
            }
            Err(refused) => refused,
        };
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
        values.next()?.ok()?;
        let len = values.byte_offset();
        let value = text.get(..len)?;
        let refusal = if Self::refused_for_a_default(&refused) {
            TextRefusal::ToFill
        } else {
            match self.issues_from_refused_text(value.as_bytes(), &refused) {
                Some(issues) => TextRefusal::Invalid(issues),
                None => TextRefusal::Unsure,
            }
        };
        Some(ValueRead {
            read: Err(refusal),
            len,
        })
    }

    /// Whether `instance` is valid; faster than [`validate`](Validator::validate)
    /// as it stops at the first error and builds no issue.
    #[must_use]
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.compiled.is_valid(instance)
    }

    /// Checks an instance from its JSON `text`, without building its tree:
    /// `true` only when the text is one well-formed JSON value that is
    /// valid, that [`fill_defaults`](Validator::fill_defaults) would leave
    /// as it is, in which no object repeats a key and every object holding
    /// a key its schema doesn't declare has its keys in sorted order. Such
    /// a text reads into any `Deserialize` type exactly as its tree does.
    ///
    /// `false` says nothing: the instance may well be valid (the schema
    /// uses a keyword this check doesn't know, such as `pattern` or
    /// `allOf`, or the text is one of the cases above). Parse it and use
    /// [`validate`](Validator::validate) then.
    #[cfg(any(test, feature = "fuzzing"))]
    #[must_use]
    pub(crate) fn accepts_text(&self, text: &[u8]) -> bool {
        self.plan
            .as_ref()
            .is_some_and(|plan| screen::passes(plan, text))
    }

    /// The issues of an invalid instance, found from its JSON `text`
    /// without building its tree. `Some` only when the text is one
    /// well-formed JSON value with exactly one error, of a kind this check
    /// names — a keyword a value fails (`type`, `enum`, `const`, the
    /// bounds, `multipleOf`, the formats `accepts_text` checks), a
    /// `required` property missing, a property `additionalProperties:
    /// false` refuses — outside every `anyOf` / `oneOf`, with no default to
    /// fill and no key that may repeat. The issues are then exactly those
    /// [`validate`](Validator::validate) gives for the text's tree after
    /// [`fill_defaults`](Validator::fill_defaults).
    ///
    /// `None` says nothing: the instance may be valid, or have more
    /// errors, or one this check doesn't name. Parse it and use
    /// [`validate`](Validator::validate) then.
    ///
    #[cfg(any(test, feature = "fuzzing"))]
    #[must_use]
    pub(crate) fn issues_from_text(&self, text: &[u8]) -> Option<Vec<Issue>> {
        self.issues_of_lone(text, None)
    }

    /// `issues_from_text` for a text that a
    /// read with `deserialize_passing`
    /// over serde_json's reader refused, with `refused` the read's error:
    /// the same answer, but what the read had already checked — every
    /// member of an array or object that it finished before it stopped —
    /// is left out, not read again. An input whose one error is near its
    /// end is then read once with checks, not twice.
    ///
    /// `refused` must come from a read of this very `text`: its position
    /// says how far the read got, and the position of an error from
    /// another read could leave out what was never checked. An error
    /// without a position is taken as no read at all.
    #[must_use]
    pub(crate) fn issues_from_refused_text(
        &self,
        text: &[u8],
        refused: &serde_json::Error,
    ) -> Option<Vec<Issue>> {
        self.issues_of_lone(text, screen::reader_offset(text, refused))
    }

    /// The issues of `text`'s one error, checked from its start or from
    /// where a read stopped (`read_to`).
    fn issues_of_lone(&self, text: &[u8], read_to: Option<usize>) -> Option<Vec<Issue>> {
        let lone = screen::lone(self.plan.as_ref()?, &self.schema, text, read_to)?;
        let instance = Value::Null;
        let mut collector = Collector::new(&self.schema, &self.refs, &instance);
        // One issue, when the schema could be followed to it.
        collector.add_lone(&lone).then(|| collector.finish())
    }

    /// Reads `seed` from `deserializer` and checks the text as it goes, in
    /// one pass: `Ok` only when `Validator::accepts_text` would pass the
    /// same text (valid, nothing to fill, read into any type as its tree
    /// would be) and the read itself succeeds. The values the seed's type
    /// skips are checked all the same.
    ///
    /// Any error — the text doesn't pass, the schema has no plan for
    /// text, the read failed, or the type takes a value in a shape the
    /// checks don't follow (bytes, a 128-bit integer, an enum variant with
    /// content, a `RawValue`) — means "take the full path": parse the
    /// tree, fill it, validate it, read it. Its message is not for users.
    ///
    /// The deserializer must, as serde_json's does, fail when a type stops
    /// reading an array or object before its end (a tuple shorter than
    /// the array): the items left unread are not checked.
    pub(crate) fn deserialize_passing<'de, S, D>(
        &self,
        seed: S,
        deserializer: D,
    ) -> Result<S::Value, D::Error>
    where
        S: serde::de::DeserializeSeed<'de>,
        D: serde::de::Deserializer<'de>,
    {
        match &self.plan {
            Some(plan) => screen::deserialize_passing(plan, seed, deserializer),
            None => Err(serde::de::Error::custom("no plan for this schema")),
        }
    }

    /// Whether `error`, from a read with
    /// `deserialize_passing`, says no
    /// more than that an object misses properties whose schema has a
    /// `default`: filled in, its tree may well be valid, and
    /// `issues_from_text` would find
    /// nothing to answer.
    #[must_use]
    pub(crate) fn refused_for_a_default(error: &dyn std::fmt::Display) -> bool {
        error.to_string().starts_with(screen::TO_FILL)
    }

    /// Fills missing properties that have a `default` in the schema, as Ajv's
    /// `useDefaults: true` does: a copy of the default is inserted, then filled
    /// itself; nested objects and array items are filled through `properties`,
    /// `items`, `prefixItems`, `allOf` and local `$ref`s, not through `anyOf`,
    /// `oneOf`, `not` or `if`. Values already present (`null` included) are
    /// left alone. Costs nothing for a schema without defaults.
    ///
    /// Filling is bounded, where Ajv's is not: it stops 128 levels deep, and
    /// after [`MAX_FILLED_DEFAULTS`](crate::MAX_FILLED_DEFAULTS) properties
    /// with a default (filled in or found there: that way filling twice is
    /// filling once). Only a schema whose defaults hold the schema itself,
    /// or an instance with that many defaulted properties, reaches either.
    pub fn fill_defaults(&self, instance: &mut Value) {
        if !self.defaults.is_empty() {
            self.defaults.fill(instance);
        }
    }

    /// The schema this validator was built from.
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

/// Whether `instance` holds more than `limit` values, itself included.
/// Children are counted before they are visited, so the walk stops (and its
/// own list stays) within `limit`.
fn holds_more_values_than(instance: &Value, limit: usize) -> bool {
    let mut counted = 1usize;
    let mut pending = vec![instance];
    while let Some(value) = pending.pop() {
        let children = match value {
            Value::Array(items) => items.len(),
            Value::Object(members) => members.len(),
            _ => continue,
        };
        counted += children;
        if counted > limit {
            return true;
        }
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(members) => pending.extend(members.values()),
            _ => {}
        }
    }
    counted > limit
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_every_value_once() {
        let instance = json!({"a": [1, 2, {"b": null}], "c": "d"});
        // The object, a, 1, 2, {b}, null, c: seven values.
        assert!(!holds_more_values_than(&instance, 7));
        assert!(holds_more_values_than(&instance, 6));
        assert!(!holds_more_values_than(&json!(1), 1));
        assert!(holds_more_values_than(&json!([]), 0));
    }

    /// `{"x": [item; MAX_VALUES_FOR_EVERY_ISSUE]}`: too large for every issue.
    fn large(item: Value) -> Value {
        json!({"x": vec![item; MAX_VALUES_FOR_EVERY_ISSUE]})
    }

    /// `instance`'s issues; `validate_likely_invalid` finds the same.
    fn issues_of(schema: Value, instance: &Value) -> Value {
        let validator = Validator::new(&schema).expect("schema");
        let issues = validator.validate(instance).expect_err("invalid");
        assert_eq!(
            validator.validate_likely_invalid(instance),
            Err(issues.clone())
        );
        serde_json::to_value(&issues).expect("issues")
    }

    #[test]
    fn a_likely_invalid_instance_gets_the_answer_of_validate() {
        let schemas = [
            json!({"properties": {"x": {"type": "array", "items": {"type": "integer"}}}}),
            json!({"properties": {"x": {"anyOf": [
                {"type": "array", "items": {"type": "integer"}},
                {"type": "null"}
            ]}}}),
            json!({"properties": {"x": {"oneOf": [
                {"type": "array", "items": {"type": "integer"}},
                {"type": "array", "items": {"type": "string"}}
            ]}}}),
        ];
        for schema in &schemas {
            let validator = Validator::new(schema).expect("schema");
            for instance in [
                json!({"x": [1, 2]}),
                json!({"x": [1, "a", "b"]}),
                json!({"x": null}),
                json!({"x": "a"}),
                large(json!(1)),
                large(json!("a")),
                large(json!(null)),
            ] {
                assert_eq!(
                    validator.validate_likely_invalid(&instance),
                    validator.validate(&instance),
                    "{schema}"
                );
            }
            assert!(validator.validate_likely_invalid(&large(json!(1))).is_ok());
        }
    }

    #[test]
    fn a_large_list_under_any_of_gets_the_any_of_issue_only() {
        // What schemars makes of `Option<Payload>`.
        let schema = json!({
            "type": "object",
            "properties": {"x": {"anyOf": [{"$ref": "#/$defs/Items"}, {"type": "null"}]}},
            "$defs": {"Items": {"type": "array", "items": {"type": "string"}}}
        });
        assert_eq!(
            issues_of(schema, &large(json!(0))),
            json!([{
                "instancePath": "/x",
                "schemaPath": "#/properties/x/anyOf",
                "keyword": "anyOf",
                "params": {},
                "message": "must match a schema in anyOf"
            }])
        );
    }

    #[test]
    fn a_large_list_under_one_of_gets_the_one_of_issue_with_what_passed() {
        let schema = json!({"properties": {"x": {"oneOf": [
            {"type": "array"},
            {"items": {"type": "integer"}},
            {"items": {"type": "string"}}
        ]}}});
        let one_of = |passing: Value| {
            json!([{
                "instancePath": "/x",
                "schemaPath": "#/properties/x/oneOf",
                "keyword": "oneOf",
                "params": {"passingSchemas": passing},
                "message": "must match exactly one schema in oneOf"
            }])
        };
        // Two pass.
        assert_eq!(
            issues_of(schema.clone(), &large(json!(0))),
            one_of(json!([0, 1]))
        );
        // None passes.
        let none = json!({"properties": {"x": {"oneOf": [
            {"type": "object"},
            {"items": {"type": "string"}}
        ]}}});
        assert_eq!(issues_of(none, &large(json!(0))), one_of(Value::Null));
        // Exactly one passes: valid.
        let validator = Validator::new(&schema).expect("schema");
        assert!(validator.validate(&large(json!("a"))).is_err());
        assert!(validator.validate(&large(json!(true))).is_ok());
    }

    #[test]
    fn a_large_instance_with_an_error_outside_any_of_gets_that_error() {
        let schema = json!({
            "properties": {
                "x": {"anyOf": [{"type": "array"}, {"type": "null"}]},
                "y": {"type": "string"}
            }
        });
        let mut instance = large(json!(0));
        instance["y"] = json!(1);
        assert_eq!(
            issues_of(schema, &instance),
            json!([{
                "instancePath": "/y",
                "schemaPath": "#/properties/y/type",
                "keyword": "type",
                "params": {"type": "string"},
                "message": "must be string"
            }])
        );
    }

    #[test]
    fn unevaluated_keywords_keep_the_schema_as_written() {
        let schema = json!({
            "properties": {"x": {"type": "array", "items": {"type": "string"}}},
            "anyOf": [{"required": ["x"]}],
            "unevaluatedProperties": false
        });
        assert_eq!(
            issues_of(schema, &large(json!(0))),
            json!([{
                "instancePath": "/x/0",
                "schemaPath": "#/properties/x/items/type",
                "keyword": "type",
                "params": {"type": "string"},
                "message": "must be string"
            }])
        );
    }

    #[test]
    fn a_large_invalid_instance_gets_its_first_error_only() {
        let validator = Validator::new(&json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "string"}}}
        }))
        .expect("schema");
        let wrong = |n: usize| json!({"items": vec![0; n]});
        let issues = validator.validate(&wrong(1_000)).expect_err("invalid");
        assert_eq!(issues.len(), MAX_ISSUES);
        let issues = validator
            .validate(&wrong(MAX_VALUES_FOR_EVERY_ISSUE))
            .expect_err("invalid");
        let issues = serde_json::to_value(&issues).expect("issues");
        assert_eq!(
            issues,
            json!([{
                "instancePath": "/items/0",
                "schemaPath": "#/properties/items/items/type",
                "keyword": "type",
                "params": {"type": "string"},
                "message": "must be string"
            }])
        );
    }
}
