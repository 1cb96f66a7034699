//! Turning the `jsonschema` crate's errors into Ajv-shaped issues.
//!
//! Each error is walked through the schema (see [`crate::trail`]) for Ajv's
//! `schemaPath` and evaluation order, then given Ajv's keyword, params and
//! message. Where the two validators report a different number of errors the
//! mapping splits (`additionalProperties`, `unevaluatedProperties`), merges
//! (`items: false` after `prefixItems`), flattens (`anyOf` / `oneOf` branch
//! errors come before the combinator's own) or adds (`if`, `propertyNames`).

use std::collections::HashSet;

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use kindgi_protocol::Issue;
use serde_json::{Map, Value, json};

use crate::js;
use crate::order::LAST;
use crate::refs::Refs;
use crate::screen::{Failure, Lone};
use crate::trail::{self, Trail, WrapperKind};
use crate::unique;

/// Collects the issues of one validation run, in Ajv's order.
#[derive(Debug)]
pub(crate) struct Collector<'s, 'i> {
    root: &'s Value,
    refs: &'s Refs,
    instance: &'i Value,
    issues: Vec<(Vec<u32>, Issue)>,
    /// Issues already reported once that the crate may report several times.
    seen: HashSet<String>,
}

fn params<const N: usize>(entries: [(&str, Value); N]) -> Map<String, Value> {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

/// Whether a size keyword's limit (`minLength` … `maxProperties`) is a
/// floor (`fewer`) or a ceiling (`more`), and what it counts.
fn size_words(keyword: &str) -> (&'static str, &'static str) {
    match keyword {
        "minLength" => ("fewer", "characters"),
        "maxLength" => ("more", "characters"),
        "minItems" => ("fewer", "items"),
        "maxItems" => ("more", "items"),
        "minProperties" => ("fewer", "properties"),
        _ => ("more", "properties"),
    }
}

/// The comparison a number bound (`minimum` … `exclusiveMaximum`) asks for.
fn comparison_sign(keyword: &str) -> &'static str {
    match keyword {
        "minimum" => ">=",
        "exclusiveMinimum" => ">",
        "maximum" => "<=",
        _ => "<",
    }
}

/// Ajv's `passingSchemas` of a `oneOf` that failed, from the errors of each
/// branch: the first two that passed, or `null` when fewer did.
pub(crate) fn passing_schemas(context: &[Vec<ValidationError<'_>>]) -> Value {
    let passing: Vec<usize> = context
        .iter()
        .enumerate()
        .filter(|(_, branch)| branch.is_empty())
        .map(|(i, _)| i)
        .take(2)
        .collect();
    if passing.len() == 2 {
        json!(passing)
    } else {
        Value::Null
    }
}

fn limit_value(value: Option<&Value>, fallback: u64) -> Value {
    value.map_or_else(|| Value::from(fallback), js::normalize)
}

impl<'s, 'i> Collector<'s, 'i> {
    /// A collector for one instance validated against `root`.
    pub(crate) fn new(root: &'s Value, refs: &'s Refs, instance: &'i Value) -> Self {
        Collector {
            root,
            refs,
            instance,
            issues: Vec::new(),
            seen: HashSet::new(),
        }
    }

    /// The issues, sorted into Ajv's order.
    pub(crate) fn finish(mut self) -> Vec<Issue> {
        // A stable sort: errors with equal keys keep the crate's order.
        self.issues.sort_by(|a, b| a.0.cmp(&b.0));
        self.issues.into_iter().map(|(_, issue)| issue).collect()
    }

    fn push(
        &mut self,
        key: Vec<u32>,
        instance_path: &str,
        schema_path: String,
        keyword: &str,
        params: Map<String, Value>,
        message: String,
    ) {
        self.issues.push((
            key,
            Issue {
                instance_path: instance_path.to_owned(),
                schema_path: Some(schema_path),
                keyword: Some(keyword.to_owned()),
                params: Some(params),
                message,
            },
        ));
    }

    /// Whether `id` is reported for the first time.
    fn first(&mut self, id: String) -> bool {
        self.seen.insert(id)
    }

    /// Adds the issues for one error of the `jsonschema` crate.
    pub(crate) fn add(&mut self, error: &ValidationError<'_>, property_name: Option<&Value>) {
        let trail = trail::walk(
            self.root,
            self.refs,
            self.instance,
            error.evaluation_path(),
            error.instance_path(),
            property_name,
        );
        self.add_walked(error, &trail, property_name);
        for wrapper in trail.wrappers {
            let (keyword, params, message) = match &wrapper.kind {
                WrapperKind::If(clause) => (
                    "if",
                    params([("failingKeyword", json!(clause))]),
                    format!("must match \"{clause}\" schema"),
                ),
                WrapperKind::PropertyNames(name) => (
                    "propertyNames",
                    params([("propertyName", json!(name))]),
                    "property name must be valid".to_owned(),
                ),
            };
            let id = format!(
                "{keyword}\u{0}{:?}\u{0}{}\u{0}{:?}",
                wrapper.key, wrapper.instance_path, wrapper.kind
            );
            if self.first(id) {
                self.push(
                    wrapper.key,
                    &wrapper.instance_path,
                    wrapper.schema_path,
                    keyword,
                    params,
                    message,
                );
            }
        }
    }

    /// Adds the issue of an instance's one error, found from its text
    /// ([`crate::screen::Lone`]) rather than reported by the crate; `false`
    /// when the schema can't be followed to it.
    pub(crate) fn add_lone(&mut self, lone: &Lone) -> bool {
        let trail = trail::walk(
            self.root,
            self.refs,
            self.instance,
            &lone.evaluation_path,
            &lone.instance_path,
            None,
        );
        let keyword = lone.failure.keyword();
        if !trail.complete
            || !trail.wrappers.is_empty()
            || trail.keyword.as_deref() != Some(keyword)
        {
            return false;
        }
        let Some(value) = trail.sibling(keyword) else {
            return false;
        };
        let instance_path = lone.instance_path.as_str();
        let schema_path = trail.schema_path();
        let key = trail.key.clone();
        match (&lone.failure, keyword) {
            (Failure::Required(name), _) => {
                self.required(&trail, instance_path, schema_path, name);
            }
            (Failure::Additional(name), _) => self.push(
                key,
                instance_path,
                schema_path,
                keyword,
                params([("additionalProperty", json!(name))]),
                "must NOT have additional properties".to_owned(),
            ),
            (_, "type") if value.is_string() || value.is_array() => {
                self.type_issue(
                    key,
                    instance_path,
                    schema_path,
                    &js::display(value),
                    value.clone(),
                );
            }
            (_, "enum" | "const") => {
                self.equal_to(key, instance_path, schema_path, keyword, value);
            }
            (_, "format") => match value.as_str() {
                Some(format) => self.format(key, instance_path, schema_path, format),
                None => return false,
            },
            (_, "multipleOf") => {
                self.multiple_of(key, instance_path, schema_path, js::normalize(value));
            }
            (_, "minimum" | "exclusiveMinimum" | "maximum" | "exclusiveMaximum") => {
                self.comparison(key, instance_path, schema_path, keyword, value);
            }
            (
                _,
                "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
                | "maxProperties",
            ) => self.size(key, instance_path, schema_path, keyword, Some(value), 0),
            _ => return false,
        }
        true
    }

    #[allow(clippy::too_many_lines)]
    fn add_walked(
        &mut self,
        error: &ValidationError<'_>,
        trail: &Trail<'_, '_>,
        property_name: Option<&Value>,
    ) {
        let instance_path = error.instance_path().as_str();
        let schema_path = if trail.complete {
            trail.schema_path()
        } else {
            format!("#{}", error.schema_path().as_str())
        };
        let keyword = trail
            .keyword
            .clone()
            .unwrap_or_else(|| error.kind().keyword().to_owned());
        let key = trail.key.clone();
        let with = |extra: u32| [key.as_slice(), &[extra]].concat();
        let sibling = |name: &str| trail.sibling(name);
        match error.kind() {
            ValidationErrorKind::AnyOf { context } => {
                for branch in context {
                    for inner in branch {
                        self.add(inner, property_name);
                    }
                }
                self.push(
                    with(LAST),
                    instance_path,
                    schema_path,
                    "anyOf",
                    Map::new(),
                    "must match a schema in anyOf".to_owned(),
                );
            }
            ValidationErrorKind::OneOfNotValid { context }
            | ValidationErrorKind::OneOfMultipleValid { context } => {
                for branch in context {
                    for inner in branch {
                        self.add(inner, property_name);
                    }
                }
                let passing = passing_schemas(context);
                self.push(
                    with(LAST),
                    instance_path,
                    schema_path,
                    "oneOf",
                    params([("passingSchemas", passing)]),
                    "must match exactly one schema in oneOf".to_owned(),
                );
            }
            ValidationErrorKind::PropertyNames { error: inner } => {
                self.add(inner, Some(inner.instance().as_ref()));
            }
            ValidationErrorKind::Required { property } => {
                if keyword == "dependentRequired" {
                    self.dependent_required(trail, instance_path, &schema_path);
                    return;
                }
                let name = property.as_str().unwrap_or_default();
                self.required(trail, instance_path, schema_path, name);
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                self.per_property(
                    &key,
                    error,
                    unexpected,
                    schema_path,
                    ("additionalProperties", "additionalProperty"),
                    "must NOT have additional properties",
                );
            }
            ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                self.per_property(
                    &key,
                    error,
                    unexpected,
                    schema_path,
                    ("unevaluatedProperties", "unevaluatedProperty"),
                    "must NOT have unevaluated properties",
                );
            }
            ValidationErrorKind::UnevaluatedItems { unexpected } => {
                let length = error.instance().as_array().map_or(0, Vec::len);
                let limit = length.saturating_sub(unexpected.len());
                self.push(
                    key,
                    instance_path,
                    schema_path,
                    "unevaluatedItems",
                    params([("limit", json!(limit))]),
                    format!("must NOT have more than {limit} items"),
                );
            }
            ValidationErrorKind::AdditionalItems { limit } => {
                self.push(
                    key,
                    instance_path,
                    schema_path,
                    &keyword,
                    params([("limit", json!(limit))]),
                    format!("must NOT have more than {limit} items"),
                );
            }
            ValidationErrorKind::FalseSchema => {
                self.false_schema(trail, instance_path, schema_path)
            }
            ValidationErrorKind::Type { kind } => {
                let (shown, param) = match sibling("type") {
                    Some(types @ (Value::String(_) | Value::Array(_))) => {
                        (js::display(types), types.clone())
                    }
                    _ => {
                        let names: Vec<&str> = match kind {
                            TypeKind::Single(t) => vec![t.as_str()],
                            TypeKind::Multiple(set) => set.iter().map(|t| t.as_str()).collect(),
                        };
                        let param = match names.as_slice() {
                            [one] => json!(one),
                            many => json!(many),
                        };
                        (names.join(","), param)
                    }
                };
                self.type_issue(key, instance_path, schema_path, &shown, param);
            }
            ValidationErrorKind::Minimum { limit }
            | ValidationErrorKind::Maximum { limit }
            | ValidationErrorKind::ExclusiveMinimum { limit }
            | ValidationErrorKind::ExclusiveMaximum { limit } => {
                let keyword = error.kind().keyword();
                let limit = sibling(keyword).unwrap_or(limit);
                self.comparison(key, instance_path, schema_path, keyword, limit);
            }
            ValidationErrorKind::MinLength { limit }
            | ValidationErrorKind::MaxLength { limit }
            | ValidationErrorKind::MinItems { limit }
            | ValidationErrorKind::MaxItems { limit }
            | ValidationErrorKind::MinProperties { limit }
            | ValidationErrorKind::MaxProperties { limit } => {
                let keyword = error.kind().keyword();
                let limit_value = sibling(keyword);
                self.size(
                    key,
                    instance_path,
                    schema_path,
                    keyword,
                    limit_value,
                    *limit,
                );
            }
            ValidationErrorKind::Enum { options } => {
                let allowed = sibling("enum").unwrap_or(options);
                self.equal_to(key, instance_path, schema_path, "enum", allowed);
            }
            ValidationErrorKind::Constant { expected_value } => {
                let allowed = sibling("const").unwrap_or(expected_value);
                self.equal_to(key, instance_path, schema_path, "const", allowed);
            }
            ValidationErrorKind::Pattern { pattern } => {
                self.pattern(key, instance_path, schema_path, sibling("pattern"), pattern);
            }
            ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. } => {
                self.pattern(key, instance_path, schema_path, sibling("pattern"), "");
            }
            ValidationErrorKind::Format { format } => {
                self.format(key, instance_path, schema_path, format);
            }
            ValidationErrorKind::MultipleOf { multiple_of } => {
                let divisor =
                    sibling("multipleOf").map_or_else(|| json!(multiple_of), js::normalize);
                self.multiple_of(key, instance_path, schema_path, divisor);
            }
            ValidationErrorKind::UniqueItems => {
                let items = error.instance().as_array().map_or(&[][..], Vec::as_slice);
                let (i, j) = unique::duplicate_pair(items, sibling("items")).unwrap_or((1, 0));
                self.push(
                    key,
                    instance_path,
                    schema_path,
                    "uniqueItems",
                    params([("i", json!(i)), ("j", json!(j))]),
                    format!("must NOT have duplicate items (items ## {j} and {i} are identical)"),
                );
            }
            ValidationErrorKind::Contains => self.contains(trail, key, instance_path),
            ValidationErrorKind::Not { .. } => {
                self.push(
                    key,
                    instance_path,
                    schema_path,
                    "not",
                    Map::new(),
                    "must NOT be valid".to_owned(),
                );
            }
            // Ajv's 2020-12 vocabulary only annotates content; it never fails on it.
            ValidationErrorKind::ContentEncoding { .. }
            | ValidationErrorKind::ContentMediaType { .. }
            | ValidationErrorKind::FromUtf8 { .. } => {}
            ValidationErrorKind::Custom { keyword, .. } if keyword == "multipleOf" => {
                let divisor = self.keyword_value(trail, error, "multipleOf");
                let divisor = divisor.map_or(Value::Null, js::normalize);
                self.multiple_of(key, instance_path, schema_path, divisor);
            }
            ValidationErrorKind::Custom { keyword, message } => {
                self.push(
                    key,
                    instance_path,
                    schema_path,
                    keyword,
                    Map::new(),
                    message.clone(),
                );
            }
            ValidationErrorKind::Referencing(reason) => {
                self.push(
                    key,
                    instance_path,
                    schema_path,
                    "$ref",
                    Map::new(),
                    reason.to_string(),
                );
            }
        }
    }

    /// A keyword's value beside the failing one: from the walked schema object,
    /// or, when the walk could not follow the path, from the crate's canonical
    /// location of the failing keyword.
    fn keyword_value<'t>(
        &self,
        trail: &'t Trail<'s, '_>,
        error: &ValidationError<'_>,
        name: &str,
    ) -> Option<&'t Value>
    where
        's: 't,
    {
        trail.sibling(name).or_else(|| {
            let location = error.schema_path().as_str();
            let parent = location.rsplit_once('/').map_or("", |(parent, _)| parent);
            self.root.pointer(parent)?.get(name)
        })
    }

    fn required(
        &mut self,
        trail: &Trail<'_, '_>,
        instance_path: &str,
        schema_path: String,
        name: &str,
    ) {
        let index = trail
            .sibling("required")
            .and_then(Value::as_array)
            .and_then(|names| names.iter().position(|n| n.as_str() == Some(name)))
            .and_then(|i| u32::try_from(i).ok())
            .unwrap_or(LAST - 1);
        self.push(
            [trail.key.as_slice(), &[index]].concat(),
            instance_path,
            schema_path,
            "required",
            params([("missingProperty", json!(name))]),
            format!("must have required property '{name}'"),
        );
    }

    fn type_issue(
        &mut self,
        key: Vec<u32>,
        instance_path: &str,
        schema_path: String,
        shown: &str,
        param: Value,
    ) {
        self.push(
            key,
            instance_path,
            schema_path,
            "type",
            params([("type", param)]),
            format!("must be {shown}"),
        );
    }

    /// `enum`'s issue (one of `allowed`) or `const`'s (`allowed` itself).
    fn equal_to(
        &mut self,
        key: Vec<u32>,
        instance_path: &str,
        schema_path: String,
        keyword: &str,
        allowed: &Value,
    ) {
        let (param, message) = if keyword == "const" {
            ("allowedValue", "must be equal to constant")
        } else {
            (
                "allowedValues",
                "must be equal to one of the allowed values",
            )
        };
        self.push(
            key,
            instance_path,
            schema_path,
            keyword,
            params([(param, js::normalize(allowed))]),
            message.to_owned(),
        );
    }

    fn format(&mut self, key: Vec<u32>, instance_path: &str, schema_path: String, format: &str) {
        self.push(
            key,
            instance_path,
            schema_path,
            "format",
            params([("format", json!(format))]),
            format!("must match format \"{format}\""),
        );
    }

    fn multiple_of(
        &mut self,
        key: Vec<u32>,
        instance_path: &str,
        schema_path: String,
        divisor: Value,
    ) {
        let message = format!("must be multiple of {}", js::display(&divisor));
        self.push(
            key,
            instance_path,
            schema_path,
            "multipleOf",
            params([("multipleOf", divisor)]),
            message,
        );
    }

    fn per_property(
        &mut self,
        key: &[u32],
        error: &ValidationError<'_>,
        names: &[String],
        schema_path: String,
        (keyword, param): (&str, &str),
        message: &str,
    ) {
        let instance_path = error.instance_path().as_str();
        let object = error.instance();
        for name in names {
            let index = object
                .as_object()
                .and_then(|map| map.keys().position(|k| k == name))
                .and_then(|i| u32::try_from(i).ok())
                .unwrap_or(LAST - 1);
            self.push(
                [key, &[index]].concat(),
                instance_path,
                schema_path.clone(),
                keyword,
                params([(param, json!(name))]),
                message.to_owned(),
            );
        }
    }

    /// A number bound's issue: `keyword` with its `limit`.
    fn comparison(
        &mut self,
        key: Vec<u32>,
        instance_path: &str,
        schema_path: String,
        keyword: &str,
        limit: &Value,
    ) {
        let comparison = comparison_sign(keyword);
        let limit = js::normalize(limit);
        let message = format!("must be {comparison} {}", js::display(&limit));
        self.push(
            key,
            instance_path,
            schema_path,
            keyword,
            params([("comparison", json!(comparison)), ("limit", limit)]),
            message,
        );
    }

    /// A size keyword's issue: `keyword` with its limit as written
    /// (`value`), else the crate's (`fallback`).
    fn size(
        &mut self,
        key: Vec<u32>,
        instance_path: &str,
        schema_path: String,
        keyword: &str,
        value: Option<&Value>,
        fallback: u64,
    ) {
        let (bound, unit) = size_words(keyword);
        let limit = limit_value(value, fallback);
        let message = format!("must NOT have {bound} than {} {unit}", js::display(&limit));
        self.push(
            key,
            instance_path,
            schema_path,
            keyword,
            params([("limit", limit)]),
            message,
        );
    }

    fn pattern(
        &mut self,
        key: Vec<u32>,
        instance_path: &str,
        schema_path: String,
        value: Option<&Value>,
        fallback: &str,
    ) {
        let pattern = value.and_then(Value::as_str).unwrap_or(fallback).to_owned();
        let message = format!("must match pattern \"{pattern}\"");
        self.push(
            key,
            instance_path,
            schema_path,
            "pattern",
            params([("pattern", json!(pattern))]),
            message,
        );
    }

    fn false_schema(&mut self, trail: &Trail<'_, '_>, instance_path: &str, schema_path: String) {
        // `items: false` after `prefixItems` is one `items` error about the array.
        if let Some(entry) = &trail.entered
            && entry.keyword == "items"
            && let Some(prefix) = entry.level.get("prefixItems").and_then(Value::as_array)
        {
            let path = format!("{}/items", entry.level_path);
            if self.first(format!(
                "items\u{0}{:?}\u{0}{}",
                entry.key, entry.instance_path
            )) {
                let limit = prefix.len();
                self.push(
                    entry.key.clone(),
                    &entry.instance_path,
                    path,
                    "items",
                    params([("limit", json!(limit))]),
                    format!("must NOT have more than {limit} items"),
                );
            }
            return;
        }
        self.push(
            trail.key.clone(),
            instance_path,
            schema_path,
            "false schema",
            Map::new(),
            "boolean schema is false".to_owned(),
        );
    }

    fn contains(&mut self, trail: &Trail<'_, '_>, key: Vec<u32>, instance_path: &str) {
        let min = trail
            .sibling("minContains")
            .map_or_else(|| json!(1), js::normalize);
        let max = trail.sibling("maxContains").map(js::normalize);
        let (params, message) = match max {
            None => (
                params([("minContains", min.clone())]),
                format!("must contain at least {} valid item(s)", js::display(&min)),
            ),
            Some(max) => (
                params([("minContains", min.clone()), ("maxContains", max.clone())]),
                format!(
                    "must contain at least {} and no more than {} valid item(s)",
                    js::display(&min),
                    js::display(&max)
                ),
            ),
        };
        let path = trail.sibling_path("contains");
        self.push(key, instance_path, path, "contains", params, message);
    }

    /// Ajv reports one issue per (present property, missing dependency) pair;
    /// the crate reports one per missing name. Report Ajv's set once.
    fn dependent_required(
        &mut self,
        trail: &Trail<'_, '_>,
        instance_path: &str,
        schema_path: &str,
    ) {
        let id = format!("dependentRequired\u{0}{:?}\u{0}{instance_path}", trail.key);
        if !self.first(id) {
            return;
        }
        let (Some(Value::Object(dependencies)), Some(Value::Object(object))) =
            (trail.sibling("dependentRequired"), trail.instance)
        else {
            return;
        };
        for (trigger_index, (property, names)) in dependencies.iter().enumerate() {
            let Some(names) = names.as_array() else {
                continue;
            };
            if names.is_empty() || !object.contains_key(property) {
                continue;
            }
            let deps: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
            let joined = deps.join(", ");
            let noun = if deps.len() == 1 {
                "property"
            } else {
                "properties"
            };
            for (dep_index, missing) in deps.iter().enumerate() {
                if object.contains_key(*missing) {
                    continue;
                }
                let sub = [trigger_index, dep_index].map(|i| u32::try_from(i).unwrap_or(LAST - 1));
                self.push(
                    [trail.key.as_slice(), &sub].concat(),
                    instance_path,
                    schema_path.to_owned(),
                    "dependentRequired",
                    params([
                        ("property", json!(property)),
                        ("missingProperty", json!(missing)),
                        ("depsCount", json!(deps.len())),
                        ("deps", json!(joined)),
                    ]),
                    format!("must have {noun} {joined} when property {property} is present"),
                );
            }
        }
    }
}
