//! Following one error's evaluation path through the schema, the way Ajv would
//! have reached it.
//!
//! The walk yields what the issue mapping needs and the `jsonschema` crate does
//! not report: Ajv's `schemaPath` (which goes through inlined `$ref` strings and
//! restarts at `#` inside separately compiled ones), a sort key that puts the
//! error where Ajv's evaluation order would, the schema object that holds the
//! failing keyword, and the `if` / `propertyNames` errors Ajv adds around the
//! errors of their subschemas.

use jsonschema::paths::Location;
use serde_json::{Map, Value};

use crate::order::{self, LAST};
use crate::pointer::{self, push_fragment_token, push_token};
use crate::refs::Refs;

/// An error Ajv reports after the errors of a subschema, which the
/// `jsonschema` crate does not report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WrapperKind {
    /// `if` with a failing `then` or `else` (`"then"` / `"else"`).
    If(&'static str),
    /// `propertyNames` failing for one property name.
    PropertyNames(String),
}

/// A wrapper error found on the way, with where it sorts and points.
#[derive(Debug, Clone)]
pub(crate) struct Wrapper {
    pub(crate) kind: WrapperKind,
    pub(crate) key: Vec<u32>,
    pub(crate) schema_path: String,
    pub(crate) instance_path: String,
}

/// How the walk entered the subschema it ended on.
#[derive(Debug, Clone)]
pub(crate) struct Entry<'s> {
    /// The applicator keyword (`items`, `properties`, …).
    pub(crate) keyword: String,
    /// The schema object holding that keyword.
    pub(crate) level: &'s Map<String, Value>,
    /// Ajv schemaPath of that schema object.
    pub(crate) level_path: String,
    /// Sort key up to and including the keyword's rank.
    pub(crate) key: Vec<u32>,
    /// Instance path of the value the keyword applied to.
    pub(crate) instance_path: String,
}

/// The outcome of walking one error's evaluation path.
#[derive(Debug)]
pub(crate) struct Trail<'s, 'a> {
    /// Sort key, ending with the failing keyword's rank.
    pub(crate) key: Vec<u32>,
    /// Ajv schemaPath of the schema object reached (holding `keyword`, if any).
    pub(crate) path: String,
    /// The failing keyword; `None` when the path ends on a subschema (a false schema).
    pub(crate) keyword: Option<String>,
    /// The schema object holding `keyword`.
    pub(crate) level: Option<&'s Map<String, Value>>,
    /// The instance value the failing keyword applied to.
    pub(crate) instance: Option<&'a Value>,
    /// Set when the path ends on a subschema: how it was entered.
    pub(crate) entered: Option<Entry<'s>>,
    /// `if` / `propertyNames` errors to report around this one.
    pub(crate) wrappers: Vec<Wrapper>,
    /// False when the path could not be followed to its end.
    pub(crate) complete: bool,
}

impl Trail<'_, '_> {
    /// Ajv's schemaPath of the failing keyword (or of the subschema ended on).
    pub(crate) fn schema_path(&self) -> String {
        match &self.keyword {
            Some(keyword) => format!("{}/{keyword}", self.path),
            None => self.path.clone(),
        }
    }

    /// Ajv's schemaPath of another keyword in the same schema object.
    pub(crate) fn sibling_path(&self, keyword: &str) -> String {
        format!("{}/{keyword}", self.path)
    }

    /// The value of a keyword in the schema object holding the failing keyword.
    pub(crate) fn sibling(&self, keyword: &str) -> Option<&Value> {
        self.level.and_then(|level| level.get(keyword))
    }
}

/// Position of a member (object key or array index) within its container,
/// which is Ajv's iteration order over that container.
fn member_index(container: Option<&Value>, member: &str) -> u32 {
    let position = match container {
        Some(Value::Object(map)) => map.keys().position(|k| k == member),
        Some(Value::Array(_)) => member.parse().ok(),
        _ => None,
    };
    position
        .and_then(|p| u32::try_from(p).ok())
        .unwrap_or(LAST - 1)
}

fn member<'a>(container: Option<&'a Value>, member: &str) -> Option<&'a Value> {
    match container? {
        Value::Object(map) => map.get(member),
        Value::Array(items) => items.get(member.parse::<usize>().ok()?),
        _ => None,
    }
}

/// Walks `evaluation_path` from the root schema and `instance_path` from the
/// root instance together. `property_name` is the name being checked when the
/// error comes from inside `propertyNames`.
pub(crate) fn walk<'s, 'a>(
    root: &'s Value,
    refs: &Refs,
    instance: &'a Value,
    evaluation_path: &Location,
    instance_path: &Location,
    property_name: Option<&'a Value>,
) -> Trail<'s, 'a> {
    let mut trail = Trail {
        key: Vec::new(),
        path: String::from("#"),
        keyword: None,
        level: None,
        instance: Some(instance),
        entered: None,
        wrappers: Vec::new(),
        complete: true,
    };
    let mut schema = root;
    let mut inst = Some(instance);
    let mut ipath = String::new();
    let mut tokens = pointer::tokens(evaluation_path.as_str()).peekable();
    let mut members = pointer::tokens(instance_path.as_str()).peekable();

    while let Some(token) = tokens.next() {
        let Some(level) = schema.as_object() else {
            trail.complete = false;
            break;
        };
        let keyword = token.as_ref();
        let rank = order::rank(keyword, level, inst);
        let entry = |trail: &Trail<'s, 'a>, path: &str, ipath: &str| Entry {
            keyword: keyword.to_owned(),
            level,
            level_path: path.to_owned(),
            key: [trail.key.as_slice(), &[rank]].concat(),
            instance_path: ipath.to_owned(),
        };
        match keyword {
            "properties" | "patternProperties" | "prefixItems" | "dependentSchemas" | "anyOf"
            | "oneOf" | "allOf" => {
                let Some(name) = tokens.next() else {
                    leaf(&mut trail, keyword, level, inst, rank);
                    break;
                };
                let (child, index) = match level.get(keyword) {
                    Some(container @ Value::Object(map)) => {
                        (map.get(name.as_ref()), member_index(Some(container), &name))
                    }
                    Some(Value::Array(items)) => (
                        name.parse::<usize>().ok().and_then(|i| items.get(i)),
                        name.parse().unwrap_or(LAST - 1),
                    ),
                    _ => (None, 0),
                };
                let Some(child) = child else {
                    trail.complete = false;
                    break;
                };
                let consumes_member =
                    matches!(keyword, "properties" | "patternProperties" | "prefixItems");
                let entered = consumes_member.then(|| entry(&trail, &trail.path, &ipath));
                trail.key.push(rank);
                trail.key.push(index);
                trail.path.push('/');
                trail.path.push_str(keyword);
                push_fragment_token(&mut trail.path, &name);
                if consumes_member {
                    let Some(name) = members.next() else {
                        trail.complete = false;
                        break;
                    };
                    if keyword == "patternProperties" {
                        trail.key.push(member_index(inst, &name));
                    }
                    push_token(&mut ipath, &name);
                    inst = member(inst, &name);
                }
                trail.entered = entered;
                schema = child;
            }
            "additionalProperties"
            | "unevaluatedProperties"
            | "items"
            | "unevaluatedItems"
            | "contains"
                if members.peek().is_some() =>
            {
                let (Some(child), Some(name)) = (level.get(keyword), members.next()) else {
                    trail.complete = false;
                    break;
                };
                trail.entered = Some(entry(&trail, &trail.path, &ipath));
                trail.key.push(rank);
                trail.key.push(member_index(inst, &name));
                trail.path.push('/');
                trail.path.push_str(keyword);
                push_token(&mut ipath, &name);
                inst = member(inst, &name);
                schema = child;
            }
            "then" | "else" => {
                let Some(child) = level.get(keyword) else {
                    trail.complete = false;
                    break;
                };
                trail.wrappers.push(Wrapper {
                    kind: WrapperKind::If(if keyword == "then" { "then" } else { "else" }),
                    key: [trail.key.as_slice(), &[rank, LAST]].concat(),
                    schema_path: format!("{}/if", trail.path),
                    instance_path: ipath.clone(),
                });
                trail.key.push(rank);
                trail.key.push(u32::from(keyword == "else"));
                trail.path.push('/');
                trail.path.push_str(keyword);
                trail.entered = None;
                schema = child;
            }
            "$ref" | "$dynamicRef" | "$recursiveRef" => {
                let reference = level.get(keyword).and_then(Value::as_str);
                let resolved = reference.and_then(|r| Some((r, refs.get(r)?)));
                let Some((target, reference)) =
                    resolved.and_then(|(r, t)| Some((root.pointer(&t.pointer)?, (r, t.inlined))))
                else {
                    trail.complete = false;
                    break;
                };
                trail.key.push(rank);
                trail.path = if reference.1 {
                    reference.0.to_owned()
                } else {
                    String::from("#")
                };
                trail.entered = None;
                schema = target;
            }
            "propertyNames" if property_name.is_some() => {
                let (Some(child), Some(name)) =
                    (level.get(keyword), property_name.and_then(Value::as_str))
                else {
                    trail.complete = false;
                    break;
                };
                let index = member_index(inst, name);
                trail.wrappers.push(Wrapper {
                    kind: WrapperKind::PropertyNames(name.to_owned()),
                    key: [trail.key.as_slice(), &[rank, index, LAST]].concat(),
                    schema_path: format!("{}/propertyNames", trail.path),
                    instance_path: ipath.clone(),
                });
                trail.key.push(rank);
                trail.key.push(index);
                trail.path.push_str("/propertyNames");
                trail.entered = None;
                inst = property_name;
                schema = child;
            }
            _ => {
                leaf(&mut trail, keyword, level, inst, rank);
                if tokens.peek().is_some() {
                    trail.complete = false;
                }
                break;
            }
        }
        trail.instance = inst;
    }
    trail
}

fn leaf<'s, 'a>(
    trail: &mut Trail<'s, 'a>,
    keyword: &str,
    level: &'s Map<String, Value>,
    instance: Option<&'a Value>,
    rank: u32,
) {
    trail.key.push(rank);
    trail.keyword = Some(keyword.to_owned());
    trail.level = Some(level);
    trail.instance = instance;
    trail.entered = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn location(tokens: &[&str]) -> Location {
        tokens
            .iter()
            .fold(Location::new(), |location, token| location.join(*token))
    }

    #[test]
    fn walks_through_properties_and_refs() {
        let schema = json!({
            "$defs": {"leaf": {"type": "string"}},
            "properties": {"b": {}, "a": {"$ref": "#/$defs/leaf"}}
        });
        let refs = Refs::collect(&schema);
        let instance = json!({"a": 1});
        let trail = walk(
            &schema,
            &refs,
            &instance,
            &location(&["properties", "a", "$ref", "type"]),
            &location(&["a"]),
            None,
        );
        assert!(trail.complete);
        assert_eq!(trail.schema_path(), "#/$defs/leaf/type");
        assert_eq!(trail.keyword.as_deref(), Some("type"));
        assert_eq!(trail.instance, Some(&json!(1)));
        // `properties` rank, then the property's position, then `$ref`, then `type`.
        assert_eq!(trail.key.len(), 4);
        assert_eq!(trail.key[1], 0, "serde_json orders `a` before `b`");
    }

    #[test]
    fn then_records_the_if_wrapper() {
        let schema = json!({"if": true, "then": {"minimum": 1}});
        let refs = Refs::collect(&schema);
        let instance = json!(0);
        let trail = walk(
            &schema,
            &refs,
            &instance,
            &location(&["then", "minimum"]),
            &Location::new(),
            None,
        );
        assert_eq!(trail.schema_path(), "#/then/minimum");
        assert_eq!(trail.wrappers.len(), 1);
        assert_eq!(trail.wrappers[0].kind, WrapperKind::If("then"));
        assert_eq!(trail.wrappers[0].schema_path, "#/if");
        assert!(trail.wrappers[0].key > trail.key);
    }

    #[test]
    fn unfollowable_path_is_incomplete() {
        let schema = json!({"$defs": {"x": {"type": "string"}}});
        let refs = Refs::collect(&schema);
        let instance = json!(1);
        let trail = walk(
            &schema,
            &refs,
            &instance,
            &location(&["$defs", "x", "type"]),
            &Location::new(),
            None,
        );
        assert!(!trail.complete);
    }
}
