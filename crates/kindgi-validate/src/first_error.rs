//! The first error of a large invalid instance, found in bounded memory.
//!
//! `jsonschema` stops at the first error everywhere but in `anyOf` and
//! `oneOf`: an error of either carries the errors of every branch, all of
//! them built. A branch over a list of a million wrong items is a million
//! errors, and schemars writes untagged enums, and `Option<T>` of a struct
//! it refers to by `$ref`, as `anyOf`. So for the first error, a second validator runs on a rewritten
//! schema: each `anyOf: X` becomes an `allOf` entry `{"not": {"not":
//! {"anyOf": X}}}`, which accepts exactly what `anyOf` does but fails as a
//! `not`, and `not` decides by validity alone, building nothing. A `oneOf: X`
//! becomes two entries: the same wrapper over `anyOf: X` (no branch passes),
//! then `{"oneOf": X}` itself, reached only when one passes at least. Their
//! errors are turned back into the `anyOf` / `oneOf` issue Ajv reports.
//!
//! Only the `unevaluated*` keywords see a difference (a `not` passes no
//! annotations on); with either in the schema, or a `$ref` into a rewritten
//! `anyOf` / `oneOf`, there is no second validator and the first error comes
//! from the schema as written.

use std::collections::HashMap;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use kindgi_protocol::Issue;
use serde_json::{Map, Value, json};

use crate::issue::passing_schemas;
use crate::pointer::{push_fragment_token, push_token};

/// A rewritten `anyOf` / `oneOf`, by the canonical schema location of its
/// wrapper.
#[derive(Debug)]
struct Wrapper {
    /// Ajv's `schemaPath` of the keyword as written: `#/…/anyOf`.
    schema_path: String,
    /// `anyOf` or `oneOf`.
    keyword: &'static str,
}

/// The rewritten schema's validator, and what its wrappers stand for.
#[derive(Debug)]
pub(crate) struct FirstError {
    compiled: jsonschema::Validator,
    wrappers: HashMap<String, Wrapper>,
}

/// What the first error of an instance is.
#[derive(Debug)]
pub(crate) enum Found<'i> {
    /// An error of the schema as written: its issues are the collector's.
    Error(ValidationError<'i>),
    /// The issue of an `anyOf` / `oneOf` that failed.
    Issue(Issue),
}

impl FirstError {
    /// The validator for `schema`'s first errors, or `None` when the schema
    /// as written does as well (no `anyOf` / `oneOf`) or the rewriting can't
    /// be used (see the module's documentation).
    pub(crate) fn new(
        schema: &Value,
        compile: impl FnOnce(&Value) -> Option<jsonschema::Validator>,
    ) -> Option<FirstError> {
        let mut rewritten = schema.clone();
        let mut plan = Plan::default();
        plan.schema(&mut rewritten, &mut Vec::new());
        if plan.wrappers.is_empty() || plan.unevaluated {
            return None;
        }
        let compiled = compile(&rewritten)?;
        Some(FirstError {
            compiled,
            wrappers: plan.wrappers,
        })
    }

    /// The first error of `instance`, which the caller knows is invalid.
    pub(crate) fn find<'i>(&self, instance: &'i Value) -> Option<Found<'i>> {
        let error = self.compiled.validate(instance).err()?;
        let location = error.schema_path().as_str();
        let Some(wrapper) = self.wrappers.get(location) else {
            return Some(Found::Error(error));
        };
        let params = match (wrapper.keyword, error.kind()) {
            ("anyOf", _) => Map::new(),
            (_, ValidationErrorKind::OneOfMultipleValid { context }) => {
                Map::from_iter([("passingSchemas".to_owned(), passing_schemas(context))])
            }
            _ => Map::from_iter([("passingSchemas".to_owned(), Value::Null)]),
        };
        let message = if wrapper.keyword == "anyOf" {
            "must match a schema in anyOf"
        } else {
            "must match exactly one schema in oneOf"
        };
        Some(Found::Issue(Issue {
            instance_path: error.instance_path().as_str().to_owned(),
            schema_path: Some(wrapper.schema_path.clone()),
            keyword: Some(wrapper.keyword.to_owned()),
            params: Some(params),
            message: message.to_owned(),
        }))
    }
}

/// The rewriting: the wrappers made so far, and whether the schema has an
/// `unevaluated*` keyword.
#[derive(Debug, Default)]
struct Plan {
    wrappers: HashMap<String, Wrapper>,
    unevaluated: bool,
}

/// Keywords whose value is one schema.
const ONE: [&str; 12] = [
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

/// Keywords whose value maps names to schemas.
const MAP: [&str; 5] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// Keywords whose value is a list of schemas.
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

impl Plan {
    /// Rewrites `schema`, found at the tokens `at` of the root, and every
    /// schema in it.
    fn schema(&mut self, schema: &mut Value, at: &mut Vec<String>) {
        let Value::Object(members) = schema else {
            return;
        };
        for (key, value) in members.iter_mut() {
            if key.starts_with("unevaluated") {
                self.unevaluated = true;
            }
            at.push(key.clone());
            match value {
                _ if ONE.contains(&key.as_str()) => self.schema(value, at),
                Value::Object(schemas) if MAP.contains(&key.as_str()) => {
                    for (name, schema) in schemas.iter_mut() {
                        at.push(name.clone());
                        self.schema(schema, at);
                        at.pop();
                    }
                }
                Value::Array(schemas) if LIST.contains(&key.as_str()) => {
                    for (i, schema) in schemas.iter_mut().enumerate() {
                        at.push(i.to_string());
                        self.schema(schema, at);
                        at.pop();
                    }
                }
                _ => {}
            }
            at.pop();
        }
        self.wrap(members, "anyOf", at);
        self.wrap(members, "oneOf", at);
    }

    /// Moves `keyword` (`anyOf` or `oneOf`) of the schema `members` at `at`
    /// into its `allOf`, wrapped.
    fn wrap(&mut self, members: &mut Map<String, Value>, keyword: &'static str, at: &[String]) {
        // An `allOf` that is not a list would not have compiled.
        if !matches!(members.get("allOf"), None | Some(Value::Array(_))) {
            return;
        }
        let Some(branches) = members.remove(keyword) else {
            return;
        };
        let mut entries = vec![("not", json!({"not": {"not": {"anyOf": branches.clone()}}}))];
        if keyword == "oneOf" {
            entries.push(("oneOf", json!({"oneOf": branches})));
        }
        let Value::Array(list) = members
            .entry("allOf")
            .or_insert_with(|| Value::Array(Vec::new()))
        else {
            return;
        };
        let (mut pointer, mut fragment) = (String::new(), String::from("#"));
        for token in at {
            push_token(&mut pointer, token);
            push_fragment_token(&mut fragment, token);
        }
        for (fails_as, entry) in entries {
            self.wrappers.insert(
                format!("{pointer}/allOf/{}/{fails_as}", list.len()),
                Wrapper {
                    schema_path: format!("{fragment}/{keyword}"),
                    keyword,
                },
            );
            list.push(entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(schema: Value) -> (Value, Plan) {
        let mut rewritten = schema;
        let mut plan = Plan::default();
        plan.schema(&mut rewritten, &mut Vec::new());
        (rewritten, plan)
    }

    #[test]
    fn wraps_every_any_of_and_one_of_where_schemas_are() {
        let (rewritten, plan) = plan(json!({
            "properties": {
                "anyOf": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "b": {"allOf": [{"minimum": 1}], "oneOf": [{"type": "integer"}]}
            },
            "enum": [{"anyOf": []}]
        }));
        assert_eq!(
            rewritten,
            json!({
                "properties": {
                    "anyOf": {"allOf": [{"not": {"not": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}]},
                    "b": {"allOf": [
                        {"minimum": 1},
                        {"not": {"not": {"anyOf": [{"type": "integer"}]}}},
                        {"oneOf": [{"type": "integer"}]}
                    ]}
                },
                "enum": [{"anyOf": []}]
            })
        );
        let mut locations: Vec<_> = plan
            .wrappers
            .iter()
            .map(|(at, w)| (at.as_str(), w.schema_path.as_str(), w.keyword))
            .collect();
        locations.sort();
        assert_eq!(
            locations,
            [
                (
                    "/properties/anyOf/allOf/0/not",
                    "#/properties/anyOf/anyOf",
                    "anyOf"
                ),
                ("/properties/b/allOf/1/not", "#/properties/b/oneOf", "oneOf"),
                (
                    "/properties/b/allOf/2/oneOf",
                    "#/properties/b/oneOf",
                    "oneOf"
                ),
            ]
        );
        assert!(!plan.unevaluated);
    }

    #[test]
    fn notes_unevaluated_keywords() {
        let (_, plan) = plan(json!({"anyOf": [true], "unevaluatedProperties": false}));
        assert!(plan.unevaluated);
    }
}
