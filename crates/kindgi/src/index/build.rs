//! Turning a [`Pack`] into its [`PackIndex`], catching every mistake a
//! compiler couldn't.

use std::collections::{BTreeMap, BTreeSet};

use kindgi_protocol::ids::id_problem;
use kindgi_protocol::{
    AgentEntry, AgentToolRef, FlowEntry, GuardrailEntry, INDEX_ENVELOPE_VERSION, PackIndex,
    ToolEntry,
};
use serde_json::{Map, Value};

use super::PackConfig;
use crate::{Agent, Flow, Guardrail, Pack, Tool};

/// The pins that make an index reproducible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pins {
    /// `artifactVersion`.
    pub artifact_version: String,
    /// `publishedAt`.
    pub published_at: String,
}

/// Builds the index of `pack`, lists sorted by id.
///
/// # Errors
///
/// Every problem found, each naming the primitive and its file: an invalid
/// or duplicate id, a tool without a handler or with a schema that doesn't
/// compile, a guardrail with no action or no check, a flow edge to a node
/// it lacks, an agent naming a tool the pack lacks.
pub fn build_index(
    pack: &Pack,
    config: &PackConfig,
    pins: &Pins,
) -> Result<PackIndex, Vec<String>> {
    let mut problems = Vec::new();
    let mut tools: Vec<ToolEntry> = pack
        .tools
        .iter()
        .map(|tool| tool_entry(tool, &config.version, &mut problems))
        .collect();
    let mut guardrails: Vec<GuardrailEntry> = pack
        .guardrails
        .iter()
        .map(|g| guardrail_entry(g, &mut problems))
        .collect();
    let mut agents: Vec<AgentEntry> = pack.agents.iter().map(agent_entry).collect();
    let mut flows: Vec<FlowEntry> = pack
        .flows
        .iter()
        .map(|f| flow_entry(f, &mut problems))
        .collect();

    check_unique(
        "tool",
        tools.iter().map(|t| {
            let version = t.version.as_deref().unwrap_or_default();
            (format!("{}@{version}", t.id), t.module_path.as_str())
        }),
        &mut problems,
    );
    check_unique(
        "tool",
        tools.iter().map(|t| (t.id.clone(), t.module_path.as_str())),
        &mut problems,
    );
    check_unique(
        "guardrail",
        guardrails
            .iter()
            .map(|g| (g.id.clone(), g.check_module_path.as_str())),
        &mut problems,
    );
    check_unique(
        "check",
        guardrails.iter().map(|g| {
            (
                g.effective_check_id().to_owned(),
                g.check_module_path.as_str(),
            )
        }),
        &mut problems,
    );
    check_unique(
        "agent",
        agents
            .iter()
            .map(|a| (format!("{}@{}", a.id, a.version), a.module_path.as_str())),
        &mut problems,
    );
    check_unique(
        "flow",
        flows
            .iter()
            .map(|f| (format!("{}@{}", f.id, f.version), f.module_path.as_str())),
        &mut problems,
    );
    let tool_ids: BTreeSet<&str> = tools.iter().map(|t| t.id.as_str()).collect();
    for agent in &pack.agents {
        check_agent(agent, &tool_ids, &mut problems);
    }

    if !problems.is_empty() {
        // The same mistake can surface twice (id@version and id).
        let mut seen = BTreeSet::new();
        problems.retain(|p| seen.insert(p.clone()));
        return Err(problems);
    }
    tools.sort_by(|a, b| by_id(&a.id, &b.id));
    guardrails.sort_by(|a, b| by_id(&a.id, &b.id));
    agents.sort_by(|a, b| by_id(&a.id, &b.id).then_with(|| by_id(&a.version, &b.version)));
    flows.sort_by(|a, b| by_id(&a.id, &b.id).then_with(|| by_id(&a.version, &b.version)));
    Ok(PackIndex {
        v: INDEX_ENVELOPE_VERSION,
        pack_id: config.id.clone(),
        pack_version: config.version.clone(),
        artifact_version: pins.artifact_version.clone(),
        published_at: pins.published_at.clone(),
        tools,
        guardrails,
        agents,
        flows,
        env: config.env.clone(),
    })
}

/// JavaScript's default sort order: UTF-16 code units.
fn by_id(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

fn check_id(kind: &str, id: &str, file: &str, problems: &mut Vec<String>) {
    if let Some(problem) = id_problem(id) {
        problems.push(format!("{kind} \"{id}\" ({file}): {problem}"));
    }
}

fn check_unique<'a>(
    kind: &str,
    keys: impl Iterator<Item = (String, &'a str)>,
    problems: &mut Vec<String>,
) {
    let mut files: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (key, file) in keys {
        files.entry(key).or_default().push(file);
    }
    for (key, files) in files.into_iter().filter(|(_, f)| f.len() > 1) {
        problems.push(format!(
            "{kind} \"{key}\" is declared {} times: {}",
            files.len(),
            files.join(", ")
        ));
    }
}

fn check_schema(owner: &str, which: &str, schema: &Value, problems: &mut Vec<String>) {
    if let Err(e) = kindgi_validate::Validator::new(schema) {
        problems.push(format!(
            "{owner}: its {which} schema is not a valid JSON Schema: {e}"
        ));
    }
}

fn tool_entry(tool: &Tool, pack_version: &str, problems: &mut Vec<String>) -> ToolEntry {
    let module_path = tool.source.module_path();
    check_id("tool", &tool.id, &module_path, problems);
    let owner = format!("tool \"{}\" ({module_path})", tool.id);
    if tool.handler.is_none() {
        problems.push(format!(
            "{owner}: has no handler: call .handler(…) or .blocking_handler(…)"
        ));
    }
    check_schema(&owner, "input", &tool.input_schema, problems);
    check_schema(&owner, "output", &tool.output_schema, problems);
    ToolEntry {
        id: tool.id.clone(),
        description: tool.description.clone(),
        version: Some(
            tool.version
                .clone()
                .unwrap_or_else(|| pack_version.to_owned()),
        ),
        input: tool.input_schema.clone(),
        output: tool.output_schema.clone(),
        effects: (!tool.effects.is_empty()).then(|| tool.effects.clone()),
        needs: None,
        needs_spec: (!tool.needs_spec.is_empty()).then(|| tool.needs_spec.clone()),
        mutating: tool.mutating,
        needs_approval_when_unattended: tool.needs_approval_when_unattended,
        pauses: tool.effective_pauses(),
        stores_files: tool.stores_files,
        reads_files: tool.reads_files,
        module_path,
        extra: tool.extra.clone(),
    }
}

fn guardrail_entry(guardrail: &Guardrail, problems: &mut Vec<String>) -> GuardrailEntry {
    let module_path = guardrail.source.module_path();
    check_id("guardrail", &guardrail.id, &module_path, problems);
    if let Some(check_id_value) = &guardrail.check_id {
        check_id("check", check_id_value, &module_path, problems);
    }
    let owner = format!("guardrail \"{}\" ({module_path})", guardrail.id);
    let mut action = Map::new();
    match &guardrail.on_violation {
        Some(on_violation) => {
            action.insert(
                "on-violation".to_owned(),
                Value::from(on_violation.as_str()),
            );
        }
        None => problems.push(format!(
            "{owner}: has no action: call .on_violation(\"halt\") (or another action)"
        )),
    }
    if guardrail.evaluate.is_none() {
        problems.push(format!("{owner}: has no check: call .evaluate(…)"));
    }
    if let Some(schema) = &guardrail.config_schema {
        check_schema(&owner, "config", schema, problems);
    }
    GuardrailEntry {
        id: guardrail.id.clone(),
        name: guardrail.name.clone(),
        kind: guardrail.kind.clone(),
        action,
        severity: guardrail.severity.clone(),
        scope: guardrail.scope.clone(),
        check_module_path: module_path,
        check_id: guardrail.check_id.clone(),
        config_schema: guardrail.config_schema.clone(),
        config: guardrail.config.clone(),
        extra: guardrail.extra.clone(),
    }
}

fn agent_entry(agent: &Agent) -> AgentEntry {
    AgentEntry {
        id: agent.id.clone(),
        version: agent.version.clone(),
        name: agent.name.clone(),
        instructions: agent.instructions.clone(),
        capabilities: agent.capabilities.clone(),
        tools: agent
            .tools
            .iter()
            .map(|(id, version)| AgentToolRef {
                id: id.clone(),
                version: version.clone(),
            })
            .collect(),
        guardrails: (!agent.guardrails.is_empty()).then(|| agent.guardrails.clone()),
        description: agent.description.clone(),
        module_path: agent.source.module_path(),
        extra: agent.extra.clone(),
    }
}

fn check_agent(agent: &Agent, tool_ids: &BTreeSet<&str>, problems: &mut Vec<String>) {
    let file = agent.source.module_path();
    check_id("agent", &agent.id, &file, problems);
    for (id, version) in &agent.tools {
        if !tool_ids.contains(id.as_str()) {
            problems.push(format!(
                "agent \"{}\" ({file}): names tool \"{id}@{version}\", which this pack doesn't have",
                agent.id
            ));
        }
    }
}

fn flow_entry(flow: &Flow, problems: &mut Vec<String>) -> FlowEntry {
    let module_path = flow.source.module_path();
    check_id("flow", &flow.id, &module_path, problems);
    let owner = format!("flow \"{}\" ({module_path})", flow.id);
    let nodes: BTreeSet<&str> = flow
        .nodes
        .iter()
        .filter_map(|n| n.get("id").and_then(Value::as_str))
        .collect();
    if flow.nodes.is_empty() {
        problems.push(format!("{owner}: has no nodes"));
    }
    for edge in &flow.edges {
        let edge_id = edge.get("id").and_then(Value::as_str).unwrap_or("?");
        for (end, sentinel) in [("from", crate::flow::START), ("to", crate::flow::END)] {
            let node = edge.get(end).and_then(Value::as_str).unwrap_or("");
            if node != sentinel && !nodes.contains(node) {
                problems.push(format!(
                    "{owner}: edge \"{edge_id}\" {} node \"{node}\", which the flow doesn't have",
                    if end == "from" {
                        "comes from"
                    } else {
                        "goes to"
                    }
                ));
            }
        }
    }
    FlowEntry {
        id: flow.id.clone(),
        version: flow.version.clone(),
        name: flow.name.clone(),
        description: flow.description.clone(),
        nodes: flow.nodes.clone(),
        edges: flow.edges.clone(),
        kernel_payload_version: 1,
        module_path,
        extra: flow.extra.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolContext, ToolError};
    use serde_json::json;

    async fn noop(input: Value, _ctx: ToolContext) -> Result<Value, ToolError> {
        Ok(input)
    }

    fn config() -> PackConfig {
        PackConfig {
            id: "p".into(),
            version: "2.0.0".into(),
            env: None,
        }
    }

    fn pins() -> Pins {
        Pins {
            artifact_version: "20260101.1".into(),
            published_at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    fn tool(id: &str) -> Tool {
        Tool::new(id, crate::here!()).handler(noop)
    }

    #[test]
    fn sorts_and_defaults_versions() {
        let pack = Pack::new()
            .tool(tool("b.tool"))
            .tool(tool("a.tool").version("1.0.0"));
        let index = build_index(&pack, &config(), &pins()).expect("valid");
        let ids: Vec<_> = index.tools.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a.tool", "b.tool"]);
        assert_eq!(index.tools[0].version.as_deref(), Some("1.0.0"));
        assert_eq!(index.tools[1].version.as_deref(), Some("2.0.0"));
        assert_eq!(index.tools[1].module_path, "src/index/build.rs");
    }

    #[test]
    fn names_every_mistake_with_its_file() {
        let pack = Pack::new()
            .tool(tool("dup"))
            .tool(tool("dup"))
            .tool(tool("bad id"))
            .tool(Tool::new("no.handler", crate::here!()))
            .guardrail(
                Guardrail::new("g", crate::here!()).evaluate(|_: Value, _: crate::RunTrace| true),
            )
            .agent(Agent::new("a", "1.0.0", "A", crate::here!()).tool("missing.tool", "1.0.0"))
            .flow(
                Flow::new("f", "1.0.0", crate::here!())
                    .tool_node("n", "dup")
                    .edge(crate::flow::START, "n")
                    .edge("n", "ghost"),
            );
        let problems = build_index(&pack, &config(), &pins()).expect_err("invalid");
        let file = "src/index/build.rs";
        let expected = [
            format!(
                "tool \"bad id\" ({file}): an id is ASCII letters, digits and . _ - : /, starting with a letter or digit, at most 200 characters"
            ),
            format!(
                "tool \"no.handler\" ({file}): has no handler: call .handler(…) or .blocking_handler(…)"
            ),
            format!(
                "guardrail \"g\" ({file}): has no action: call .on_violation(\"halt\") (or another action)"
            ),
            format!(
                "flow \"f\" ({file}): edge \"n->ghost\" goes to node \"ghost\", which the flow doesn't have"
            ),
            format!("tool \"dup@2.0.0\" is declared 2 times: {file}, {file}"),
            format!("tool \"dup\" is declared 2 times: {file}, {file}"),
            format!(
                "agent \"a\" ({file}): names tool \"missing.tool@1.0.0\", which this pack doesn't have"
            ),
        ];
        assert_eq!(problems, expected);
    }

    #[test]
    fn refuses_a_schema_that_does_not_compile() {
        let pack = Pack::new().tool(tool("t").input_schema(json!({"type": 12})));
        let problems = build_index(&pack, &config(), &pins()).expect_err("invalid");
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with(
                "tool \"t\" (src/index/build.rs): its input schema is not a valid JSON Schema: "
            ),
            "{problems:?}"
        );
    }
}
