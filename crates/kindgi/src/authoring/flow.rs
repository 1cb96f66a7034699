//! Declaring a flow as data.

use serde_json::{Map, Value, json};

use super::refs::{AgentRef, ToolRef};
use crate::SourceFile;

/// The flow's entry, as an edge's `from`.
pub const START: &str = "$start";
/// The flow's exit, as an edge's `to`.
pub const END: &str = "$end";

/// A flow: nodes and the edges between them.
///
/// ```
/// use kindgi::{Flow, Tool, flow::{START, END}};
/// let echo = Tool::new("acme.echo");
/// let flow = Flow::new("acme.echo-flow", "1.0.0")
///     .tool_node("echo", &echo)
///     .edge(START, "echo")
///     .edge("echo", END);
/// assert_eq!(flow.id(), "acme.echo-flow");
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until it is used"]
pub struct Flow {
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) nodes: Vec<Value>,
    pub(crate) edges: Vec<Value>,
    /// What the nodes made by [`Flow::tool_node`] and [`Flow::agent_node`]
    /// name, for the indexer to resolve.
    pub(crate) refs: Vec<NodeRef>,
    pub(crate) extra: Map<String, Value>,
    pub(crate) source: SourceFile,
}

impl Flow {
    /// A flow with its id and version, declared in the file that calls
    /// this.
    #[track_caller]
    pub fn new(id: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            version: version.into(),
            name: None,
            description: None,
            nodes: Vec::new(),
            edges: Vec::new(),
            refs: Vec::new(),
            extra: Map::new(),
            source: SourceFile::caller(),
        }
    }

    /// The flow's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file the flow is declared in, when it isn't the one that
    /// calls `new` (e.g. `.source(kindgi::here!())` for a file outside
    /// `src/`).
    pub fn source(mut self, source: SourceFile) -> Self {
        self.source = source;
        self
    }

    /// Display name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// What the flow does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A node that runs a tool: `&tool`, or a [`ToolRef`] by id.
    pub fn tool_node(mut self, id: &str, tool: impl Into<ToolRef>) -> Self {
        let tool = tool.into();
        self.nodes
            .push(json!({"id": id, "kind": "tool", "ref": tool.id}));
        self.refs.push(NodeRef {
            node: id.to_owned(),
            target: NodeTarget::Tool(tool),
        });
        self
    }

    /// A node that runs an agent: `&agent`, or an [`AgentRef`] by id.
    pub fn agent_node(mut self, id: &str, agent: impl Into<AgentRef>) -> Self {
        let agent = agent.into();
        self.nodes
            .push(json!({"id": id, "kind": "agent", "ref": agent.id}));
        self.refs.push(NodeRef {
            node: id.to_owned(),
            target: NodeTarget::Agent(agent),
        });
        self
    }

    /// Any node, as `flow.schema.json` declares it (loops, fanouts, subflows).
    pub fn node(mut self, node: Value) -> Self {
        self.nodes.push(node);
        self
    }

    /// An unconditional edge; its id is `<from>-><to>`.
    pub fn edge(self, from: &str, to: &str) -> Self {
        self.edge_value(json!({"id": format!("{from}->{to}"), "from": from, "to": to}))
    }

    /// Any edge, as `flow.schema.json` declares it (`when`, `policy`).
    pub fn edge_value(mut self, edge: Value) -> Self {
        self.edges.push(edge);
        self
    }

    /// Any other declared field (`maxParallelism`, `metadata`, `output`).
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }
}

/// What a node of a flow names.
#[derive(Debug, Clone)]
pub(crate) struct NodeRef {
    /// The node's id.
    pub(crate) node: String,
    /// The tool or agent it runs.
    pub(crate) target: NodeTarget,
}

/// The primitive a node runs.
#[derive(Debug, Clone)]
pub(crate) enum NodeTarget {
    /// A tool.
    Tool(ToolRef),
    /// An agent.
    Agent(AgentRef),
}
