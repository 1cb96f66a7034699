//! Local `$ref` resolution, computed once per schema.
//!
//! Ajv inlines a referenced schema that holds no reference of its own, and then
//! reports `schemaPath` through the `$ref` string (`#/$defs/name/type`); a target
//! that does hold references is compiled as a function of its own, and errors
//! inside it get a `schemaPath` relative to that target (`#/type`). Both the issue
//! mapping and default filling need to know where each `$ref` leads.

use std::collections::HashMap;

use kindgi_protocol::percent::decode_component;
use serde_json::Value;

use crate::pointer::push_token;

/// Keywords whose presence makes Ajv compile a referenced schema separately.
const REF_KEYWORDS: [&str; 5] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$dynamicAnchor",
    "$recursiveAnchor",
];

/// Where one `$ref` string leads inside the root schema.
#[derive(Debug, Clone)]
pub(crate) struct RefTarget {
    /// JSON Pointer of the target within the root schema (`""` for the root).
    pub(crate) pointer: String,
    /// Whether Ajv inlines the target (it contains no reference keyword).
    pub(crate) inlined: bool,
}

/// Every local `$ref` of a schema, resolved.
#[derive(Debug, Default)]
pub(crate) struct Refs {
    targets: HashMap<String, RefTarget>,
}

impl Refs {
    /// Resolves every `$ref` string found anywhere in `root`; ones that do not
    /// lead inside `root` are left out.
    pub(crate) fn collect(root: &Value) -> Refs {
        let mut anchors = HashMap::new();
        let mut ids = HashMap::new();
        let mut references = Vec::new();
        scan(
            root,
            &mut String::new(),
            &mut anchors,
            &mut ids,
            &mut references,
        );
        let mut targets = HashMap::new();
        for reference in references {
            if targets.contains_key(&reference) {
                continue;
            }
            if let Some(pointer) = resolve(root, &reference, &anchors, &ids) {
                let inlined = root.pointer(&pointer).is_none_or(|target| !has_ref(target));
                targets.insert(reference, RefTarget { pointer, inlined });
            }
        }
        Refs { targets }
    }

    /// The target of a `$ref` string, when it is local.
    pub(crate) fn get(&self, reference: &str) -> Option<&RefTarget> {
        self.targets.get(reference)
    }
}

fn scan(
    value: &Value,
    pointer: &mut String,
    anchors: &mut HashMap<String, String>,
    ids: &mut HashMap<String, String>,
    references: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("$ref" | "$dynamicRef", Value::String(r)) => references.push(r.clone()),
                    ("$anchor" | "$dynamicAnchor", Value::String(a)) => {
                        anchors.entry(a.clone()).or_insert_with(|| pointer.clone());
                    }
                    ("$id", Value::String(id)) => {
                        ids.entry(id.trim_end_matches('#').to_owned())
                            .or_insert_with(|| pointer.clone());
                    }
                    _ => {}
                }
                let len = pointer.len();
                push_token(pointer, key);
                scan(child, pointer, anchors, ids, references);
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let len = pointer.len();
                push_token(pointer, &index.to_string());
                scan(child, pointer, anchors, ids, references);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

fn resolve(
    root: &Value,
    reference: &str,
    anchors: &HashMap<String, String>,
    ids: &HashMap<String, String>,
) -> Option<String> {
    let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    let base_pointer = if base.is_empty() {
        String::new()
    } else {
        // A reference through an `$id`: match the whole id or its last segment.
        ids.iter()
            .find(|(id, _)| {
                id.as_str() == base || id.rsplit('/').next().is_some_and(|last| last == base)
            })
            .map(|(_, pointer)| pointer.clone())?
    };
    let fragment = decode_component(fragment)?;
    let pointer = if fragment.is_empty() {
        base_pointer
    } else if fragment.starts_with('/') {
        format!("{base_pointer}{fragment}")
    } else {
        anchors.get(&fragment)?.clone()
    };
    root.pointer(&pointer).map(|_| pointer)
}

/// Whether a schema holds a reference keyword anywhere inside it (Ajv's `hasRef`).
fn has_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, child)| REF_KEYWORDS.contains(&key.as_str()) || has_ref(child)),
        Value::Array(items) => items.iter().any(has_ref),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_pointers_anchors_and_root() {
        let schema = json!({
            "$id": "https://example.com/root.json",
            "$defs": {
                "leaf": {"type": "string"},
                "node": {"properties": {"next": {"$ref": "#/$defs/node"}}},
                "named": {"$anchor": "named", "type": "integer"},
                "my type": {"type": "null"}
            },
            "properties": {
                "a": {"$ref": "#/$defs/leaf"},
                "b": {"$ref": "#/$defs/node"},
                "c": {"$ref": "#named"},
                "d": {"$ref": "#"},
                "e": {"$ref": "#/$defs/my%20type"},
                "f": {"$ref": "https://example.com/root.json#/$defs/leaf"},
                "g": {"$ref": "https://elsewhere.example/x.json"}
            }
        });
        let refs = Refs::collect(&schema);
        let leaf = refs.get("#/$defs/leaf").expect("leaf");
        assert_eq!(leaf.pointer, "/$defs/leaf");
        assert!(leaf.inlined);
        let node = refs.get("#/$defs/node").expect("node");
        assert!(!node.inlined);
        assert_eq!(refs.get("#named").expect("anchor").pointer, "/$defs/named");
        let root = refs.get("#").expect("root");
        assert_eq!(root.pointer, "");
        assert!(!root.inlined);
        assert_eq!(
            refs.get("#/$defs/my%20type").expect("encoded").pointer,
            "/$defs/my type"
        );
        assert_eq!(
            refs.get("https://example.com/root.json#/$defs/leaf")
                .expect("by id")
                .pointer,
            "/$defs/leaf"
        );
        assert!(refs.get("https://elsewhere.example/x.json").is_none());
    }
}
