//! The compiled validator.

use jsonschema::Draft;
use kindgi_protocol::Issue;
use serde_json::Value;

use crate::defaults::Defaults;
use crate::error::SchemaError;
use crate::formats;
use crate::issue::Collector;
use crate::multiple_of;
use crate::refs::Refs;

/// The most issues [`Validator::validate`] reports for one instance.
pub const MAX_ISSUES: usize = 100;

/// The most values (objects, arrays, strings, numbers, … counted one each)
/// an invalid instance may hold for [`Validator::validate`] to look for every
/// issue. A larger invalid instance is answered with the issues of the first
/// error found only: the validator builds every error before any is kept, and
/// a 10 MiB list of wrong values would take gigabytes of them.
pub const MAX_VALUES_FOR_EVERY_ISSUE: usize = 100_000;

/// The most properties with a `default` that one
/// [`Validator::fill_defaults`] call goes through, whether it fills them in
/// or finds them there; past it, filling stops. A default can hold the
/// schema that defaults it, side by side with another (`"left"` and
/// `"right"`, each `{"$ref": "#", "default": {}}`): without a bound in count
/// too, filling would build a tree of 2^128 defaults.
pub const MAX_FILLED_DEFAULTS: usize = 10_000;

/// A JSON Schema (draft 2020-12) compiled once and used for many instances.
///
/// Validation collects every error, checks formats and never coerces types;
/// issues come out as Ajv (`allErrors: true` with ajv-formats) reports them,
/// in Ajv's order. [`fill_defaults`](Validator::fill_defaults) is Ajv's
/// `useDefaults`.
///
/// Building does all the schema work (compiling, resolving `$ref`s, planning
/// defaults), so a call costs only the walk over the instance. A `Validator`
/// is `Send + Sync`; share it behind an `Arc`.
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
        let options = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(true)
            .should_ignore_unknown_formats(true)
            .with_keyword("multipleOf", multiple_of::factory)
            .offline();
        let compiled = formats::register(options).build(schema).map_err(|error| {
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
        })
    }

    /// Validates `instance`, returning every issue in Ajv's shape and order.
    ///
    /// # Errors
    ///
    /// The issues, never empty, when `instance` is not valid: at most
    /// [`MAX_ISSUES`], the first ones found. For an instance of more than
    /// [`MAX_VALUES_FOR_EVERY_ISSUE`] values, those of the first error only.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<Issue>> {
        if self.compiled.is_valid(instance) {
            return Ok(());
        }
        let mut collector = Collector::new(&self.schema, &self.refs, instance);
        if holds_more_values_than(instance, MAX_VALUES_FOR_EVERY_ISSUE) {
            // The first error alone: the validator stops there.
            if let Err(error) = self.compiled.validate(instance) {
                collector.add(&error, None);
            }
        } else {
            // Bounded: a list of many wrong items must not become as many
            // issues (and a large answer).
            for error in self.compiled.iter_errors(instance).take(MAX_ISSUES) {
                collector.add(&error, None);
            }
        }
        let mut issues = collector.finish();
        issues.truncate(MAX_ISSUES);
        if issues.is_empty() {
            Ok(())
        } else {
            Err(issues)
        }
    }

    /// Whether `instance` is valid; faster than [`validate`](Validator::validate)
    /// as it stops at the first error and builds no issue.
    #[must_use]
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.compiled.is_valid(instance)
    }

    /// Fills missing properties that have a `default` in the schema, as Ajv's
    /// `useDefaults: true` does: a copy of the default is inserted, then filled
    /// itself; nested objects and array items are filled through `properties`,
    /// `items`, `prefixItems`, `allOf` and local `$ref`s, not through `anyOf`,
    /// `oneOf`, `not` or `if`. Values already present (`null` included) are
    /// left alone. Costs nothing for a schema without defaults.
    ///
    /// Filling is bounded, where Ajv's is not: it stops 128 levels deep, and
    /// after [`MAX_FILLED_DEFAULTS`] properties with a default (filled in or
    /// found there: that way filling twice is filling once). Only a schema
    /// whose defaults hold the schema itself, or an instance with that many
    /// defaulted properties, reaches either.
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
