//! Ajv's `useDefaults`: filling in missing properties from `default`.
//!
//! At build time the schema is turned into a small plan that keeps only the
//! places that can lead to a default, so filling walks just those parts of the
//! instance, and a schema without defaults costs one branch per call.
//!
//! Like Ajv, a property whose subschema has a `default` and that is missing
//! from an object gets a copy of it; then every present property (the one just
//! filled included) is filled through its own subschema. Filling follows
//! `properties`, `additionalProperties` (when there are no `patternProperties`),
//! `dependentSchemas`, `prefixItems`, `items`, local `$ref` and `allOf`, and
//! stops at `anyOf`, `oneOf`, `not` and `if`, where Ajv ignores defaults.
//!
//! Filling is bounded: in depth ([`MAX_DEPTH`]) and in count
//! ([`MAX_FILLED_DEFAULTS`]), as a default can hold the very schema that
//! defaults it, once or several times side by side.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::pointer::push_token;
use crate::refs::Refs;

/// The most properties with a `default` that one
/// [`Validator::fill_defaults`](crate::Validator::fill_defaults) call goes
/// through, whether it fills them in or finds them there; past it, filling
/// stops. A default can hold the schema that defaults it, side by side
/// with another (`"left"` and `"right"`, each
/// `{"$ref": "#", "default": {}}`): without a bound in count too, filling
/// would build a tree of 2^128 defaults.
pub const MAX_FILLED_DEFAULTS: usize = 10_000;

/// How many schemas may apply to one value through `$ref` / `allOf` chains
/// before filling gives up on that value (a guard against `$ref` cycles that
/// never descend into the instance).
const MAX_CHAIN: usize = 64;

/// How deep into an instance defaults are filled. A default can hold the
/// schema that defaults it (`{"child": {"$ref": "#", "default": {}}}`):
/// filling stops here instead of nesting forever. No parsed instance is
/// deeper than serde_json's own limit of 128.
const MAX_DEPTH: usize = 128;

type NodeId = usize;

#[derive(Debug, Default)]
struct Node {
    /// Schemas applied to the same value, in Ajv's order: `$ref`, then `allOf`.
    same_value: Vec<NodeId>,
    /// Properties with a default or a plan of their own.
    properties: Vec<Property>,
    /// Every name in `properties`, to tell additional properties apart.
    declared: Vec<String>,
    additional: Option<NodeId>,
    dependent: Vec<(String, NodeId)>,
    prefix_items: Vec<Option<NodeId>>,
    items: Option<NodeId>,
}

#[derive(Debug)]
struct Property {
    name: String,
    default: Option<Value>,
    schema: Option<NodeId>,
}

/// The precomputed default-filling plan of one schema.
#[derive(Debug, Default)]
pub(crate) struct Defaults {
    nodes: Vec<Node>,
    root: Option<NodeId>,
}

impl Defaults {
    /// Builds the plan for `schema`; empty when it has no `default` anywhere.
    pub(crate) fn new(schema: &Value, refs: &Refs) -> Defaults {
        if !mentions_default(schema) {
            return Defaults::default();
        }
        let mut builder = Builder {
            root: schema,
            refs,
            nodes: Vec::new(),
            by_pointer: HashMap::new(),
        };
        let root = builder.node(schema, String::new());
        let useful = builder.useful();
        let mut nodes = builder.nodes;
        for node in &mut nodes {
            node.prune(&useful);
        }
        Defaults {
            nodes,
            root: root.filter(|&id| useful[id]),
        }
    }

    /// Whether filling can change anything.
    pub(crate) fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Fills `instance` in place, going through at most
    /// [`MAX_FILLED_DEFAULTS`] properties that have a default.
    pub(crate) fn fill(&self, instance: &mut Value) {
        if let Some(root) = self.root {
            let mut left = MAX_FILLED_DEFAULTS;
            self.fill_node(root, instance, 0, 0, &mut left);
        }
    }

    /// Fills `value` through node `id`; `left` is what remains of the
    /// budget of defaulted properties, and filling stops when it is spent.
    fn fill_node(
        &self,
        id: NodeId,
        value: &mut Value,
        chain: usize,
        depth: usize,
        left: &mut usize,
    ) {
        if chain > MAX_CHAIN || depth > MAX_DEPTH || *left == 0 {
            return;
        }
        let node = &self.nodes[id];
        for &other in &node.same_value {
            self.fill_node(other, value, chain + 1, depth, left);
        }
        match value {
            Value::Object(object) => self.fill_object(node, object, depth, left),
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    if *left == 0 {
                        return;
                    }
                    let plan = node.prefix_items.get(index).copied().unwrap_or(node.items);
                    if let Some(plan) = plan {
                        self.fill_node(plan, item, 0, depth + 1, left);
                    }
                }
            }
            _ => {}
        }
    }

    fn fill_object(
        &self,
        node: &Node,
        object: &mut Map<String, Value>,
        depth: usize,
        left: &mut usize,
    ) {
        for property in &node.properties {
            let Some(default) = &property.default else {
                continue;
            };
            // A property already there counts as much as one filled in: the
            // budget then runs out at the same place however often the same
            // instance is filled, so filling twice is filling once.
            if *left == 0 {
                return;
            }
            *left -= 1;
            if !object.contains_key(&property.name) {
                object.insert(property.name.clone(), default.clone());
            }
        }
        if let Some(additional) = node.additional {
            for (name, value) in object.iter_mut() {
                if !node.declared.iter().any(|d| d == name) {
                    self.fill_node(additional, value, 0, depth + 1, left);
                }
            }
        }
        for property in &node.properties {
            if let (Some(plan), Some(value)) = (property.schema, object.get_mut(&property.name)) {
                self.fill_node(plan, value, 0, depth + 1, left);
            }
        }
        for (trigger, plan) in &node.dependent {
            if object.contains_key(trigger) {
                let mut value = Value::Object(std::mem::take(object));
                self.fill_node(*plan, &mut value, 1, depth, left);
                if let Value::Object(filled) = value {
                    *object = filled;
                }
            }
        }
    }
}

impl Node {
    fn prune(&mut self, useful: &[bool]) {
        let keep = |id: &NodeId| useful[*id];
        self.same_value.retain(keep);
        for property in &mut self.properties {
            property.schema = property.schema.filter(keep);
        }
        self.properties
            .retain(|p| p.default.is_some() || p.schema.is_some());
        self.additional = self.additional.filter(keep);
        if self.additional.is_none() {
            self.declared = Vec::new();
        }
        self.dependent.retain(|(_, id)| keep(id));
        for plan in &mut self.prefix_items {
            *plan = plan.filter(keep);
        }
        if self.prefix_items.iter().all(Option::is_none) && self.items.is_none_or(|id| !keep(&id)) {
            self.prefix_items = Vec::new();
        }
        self.items = self.items.filter(keep);
    }
}

struct Builder<'s> {
    root: &'s Value,
    refs: &'s Refs,
    nodes: Vec<Node>,
    by_pointer: HashMap<String, NodeId>,
}

impl Builder<'_> {
    /// The plan node of the schema at `pointer` (`None` for a boolean schema).
    fn node(&mut self, schema: &Value, pointer: String) -> Option<NodeId> {
        let map = schema.as_object()?;
        if let Some(&id) = self.by_pointer.get(&pointer) {
            return Some(id);
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.by_pointer.insert(pointer.clone(), id);
        let child = |key: &str| {
            let mut p = pointer.clone();
            push_token(&mut p, key);
            p
        };
        let mut node = Node::default();
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.refs.get(r))
            && let Some(schema) = self.root.pointer(&target.pointer)
            && let Some(target) = self.node(schema, target.pointer.clone())
        {
            node.same_value.push(target);
        }
        if let Some(Value::Array(branches)) = map.get("allOf") {
            for (index, branch) in branches.iter().enumerate() {
                let p = format!("{}/{index}", child("allOf"));
                if let Some(branch) = self.node(branch, p) {
                    node.same_value.push(branch);
                }
            }
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            let base = child("properties");
            for (name, schema) in properties {
                let mut p = base.clone();
                push_token(&mut p, name);
                node.declared.push(name.clone());
                node.properties.push(Property {
                    name: name.clone(),
                    default: schema.get("default").cloned(),
                    schema: self.node(schema, p),
                });
            }
        }
        if !map.contains_key("patternProperties")
            && let Some(schema) = map.get("additionalProperties")
        {
            node.additional = self.node(schema, child("additionalProperties"));
        }
        if let Some(Value::Object(dependent)) = map.get("dependentSchemas") {
            let base = child("dependentSchemas");
            for (name, schema) in dependent {
                let mut p = base.clone();
                push_token(&mut p, name);
                if let Some(plan) = self.node(schema, p) {
                    node.dependent.push((name.clone(), plan));
                }
            }
        }
        if let Some(Value::Array(prefix)) = map.get("prefixItems") {
            for (index, schema) in prefix.iter().enumerate() {
                let p = format!("{}/{index}", child("prefixItems"));
                node.prefix_items.push(self.node(schema, p));
            }
        }
        if let Some(schema) = map.get("items") {
            node.items = self.node(schema, child("items"));
        }
        self.nodes[id] = node;
        Some(id)
    }

    /// Which nodes can lead to a default (a fixpoint, as plans may be cyclic).
    fn useful(&self) -> Vec<bool> {
        let mut useful = vec![false; self.nodes.len()];
        loop {
            let mut changed = false;
            for (id, node) in self.nodes.iter().enumerate() {
                if useful[id] {
                    continue;
                }
                let is = |child: &Option<NodeId>| child.is_some_and(|c| useful[c]);
                let now = node.same_value.iter().any(|&c| useful[c])
                    || node
                        .properties
                        .iter()
                        .any(|p| p.default.is_some() || is(&p.schema))
                    || is(&node.additional)
                    || node.dependent.iter().any(|(_, c)| useful[*c])
                    || node.prefix_items.iter().any(is)
                    || is(&node.items);
                if now {
                    useful[id] = true;
                    changed = true;
                }
            }
            if !changed {
                return useful;
            }
        }
    }
}

/// Whether any object inside `value` has a `default` key.
fn mentions_default(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("default") || map.values().any(mentions_default),
        Value::Array(items) => items.iter().any(mentions_default),
        _ => false,
    }
}
