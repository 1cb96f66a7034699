//! Turning a [`Pack`] into its [`PackIndex`], catching every mistake a
//! compiler couldn't.

use std::collections::{BTreeSet, HashMap};

use kindgi_protocol::ids::id_problem;
use kindgi_protocol::{
    AgentEntry, AgentToolRef, FlowEntry, GuardrailEntry, INDEX_ENVELOPE_VERSION, PackIndex,
    ToolEntry,
};
use serde_json::{Map, Value};

use super::resolve::Lookup;
use super::{PackConfig, PackProblems, checks};
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
/// Every problem found, each naming the primitive, its file and the fix:
/// an invalid id, an id another primitive of the same kind already has
/// (reported at the one that repeats it), a tool without a handler or a
/// description, a schema that doesn't compile, an input or config schema
/// that isn't an object schema, a guardrail with no name, action or check,
/// a check shipped under a built-in check's id ([`RESERVED_CHECK_IDS`](super::RESERVED_CHECK_IDS)),
/// a config that doesn't fit its schema, a flow edge to a node it lacks,
/// and an agent or flow naming a tool, guardrail or agent of this pack
/// that the pack doesn't have (or a tool at a version it doesn't have).
pub fn build_index(
    pack: &Pack,
    config: &PackConfig,
    pins: &Pins,
) -> Result<PackIndex, PackProblems> {
    let mut problems = Vec::new();
    let lookup = Lookup::new(pack, &config.id, &config.version);

    let mut seen = Seen::default();
    let mut tools = Vec::new();
    for tool in &pack.tools {
        let entry = tool_entry(tool, &config.version, &mut problems);
        seen.first("tool", &entry.id, &entry.module_path, &mut problems);
        tools.push(entry);
    }
    let mut guardrails = Vec::new();
    for guardrail in &pack.guardrails {
        problems.extend(checks::reserved(guardrail, &config.id));
        let entry = guardrail_entry(guardrail, &mut problems);
        seen.first(
            "guardrail",
            &entry.id,
            &entry.check_module_path,
            &mut problems,
        );
        if entry.check_id.is_some() || !seen.has("check", &entry.id) {
            seen.first(
                "check",
                entry.effective_check_id(),
                &entry.check_module_path,
                &mut problems,
            );
        }
        guardrails.push(entry);
    }
    let mut agents = Vec::new();
    for agent in &pack.agents {
        let entry = agent_entry(agent, &lookup, &mut problems);
        let key = format!("{}@{}", entry.id, entry.version);
        seen.first("agent", &key, &entry.module_path, &mut problems);
        agents.push(entry);
    }
    let mut flows = Vec::new();
    for flow in &pack.flows {
        let entry = flow_entry(flow, &lookup, &mut problems);
        let key = format!("{}@{}", entry.id, entry.version);
        seen.first("flow", &key, &entry.module_path, &mut problems);
        flows.push(entry);
    }

    if !problems.is_empty() {
        let mut reported = BTreeSet::new();
        problems.retain(|p| reported.insert(p.clone()));
        return Err(problems.into());
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

/// The file each id was first declared in, by kind.
#[derive(Default)]
struct Seen(HashMap<(&'static str, String), String>);

impl Seen {
    /// Records `key` of `kind` declared in `file`; if it was declared
    /// before, says so at this, the repeating, declaration.
    fn first(&mut self, kind: &'static str, key: &str, file: &str, problems: &mut Vec<String>) {
        match self.0.get(&(kind, key.to_owned())) {
            Some(first) => problems.push(format!(
                "{kind} \"{key}\" ({file}): repeats the id of the {kind} declared first in {first}: a pack's {kind} ids are unique, so rename one"
            )),
            None => {
                self.0.insert((kind, key.to_owned()), file.to_owned());
            }
        }
    }

    fn has(&self, kind: &'static str, key: &str) -> bool {
        self.0.contains_key(&(kind, key.to_owned()))
    }
}

fn check_id(kind: &str, id: &str, file: &str, problems: &mut Vec<String>) {
    if let Some(problem) = id_problem(id) {
        problems.push(format!("{kind} \"{id}\" ({file}): the id {problem}"));
    }
}

/// Whether `version` is an exact semver (`MAJOR.MINOR.PATCH`), as the
/// index schema's tool and agent versions are.
fn check_version(owner: &str, version: &str, problems: &mut Vec<String>) {
    if semver::Version::parse(version).is_err() {
        problems.push(format!(
            "{owner}: version \"{version}\" is not an exact semver (MAJOR.MINOR.PATCH): write it like \"1.0.0\""
        ));
    }
}

/// Checks that `schema` compiles, answering the compiled schema; `object`
/// asks for an object schema too, with `fix` saying how to get one.
fn check_schema(
    owner: &str,
    which: &str,
    schema: &Value,
    object: Option<&str>,
    problems: &mut Vec<String>,
) -> Option<kindgi_validate::Validator> {
    let validator = match kindgi_validate::Validator::new(schema) {
        Ok(validator) => validator,
        Err(e) => {
            problems.push(format!(
                "{owner}: its {which} schema is not a valid JSON Schema: {e}"
            ));
            return None;
        }
    };
    if let Some(fix) = object
        && !is_object_schema(schema)
    {
        problems.push(format!(
            "{owner}: its {which} schema is not an object schema ({}): {fix}",
            describe_type(schema)
        ));
    }
    Some(validator)
}

/// Whether `schema` only accepts objects: `type: "object"`, or a
/// `oneOf`/`anyOf` whose every branch does (a tagged enum).
fn is_object_schema(schema: &Value) -> bool {
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return true;
    }
    ["oneOf", "anyOf"].iter().any(|key| {
        schema
            .get(*key)
            .and_then(Value::as_array)
            .is_some_and(|branches| !branches.is_empty() && branches.iter().all(is_object_schema))
    })
}

/// What a schema that isn't an object schema accepts, in a few words.
fn describe_type(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => format!("it says \"type\": \"{t}\""),
        Some(other) => format!("it says \"type\": {other}"),
        None if accepts_anything(schema) => "it accepts any value".to_owned(),
        None => "it has no \"type\": \"object\"".to_owned(),
    }
}

/// Whether `schema` has no keyword that constrains a value (`true`, `{}`,
/// or only annotations, as schemars writes for `serde_json::Value`).
fn accepts_anything(schema: &Value) -> bool {
    match schema {
        Value::Bool(accepts) => *accepts,
        Value::Object(map) => map.keys().all(|k| {
            matches!(
                k.as_str(),
                "$schema" | "$id" | "$comment" | "title" | "description" | "default" | "examples"
            )
        }),
        _ => false,
    }
}

fn tool_entry(tool: &Tool, pack_version: &str, problems: &mut Vec<String>) -> ToolEntry {
    let module_path = tool.source.module_path();
    check_id("tool", &tool.id, &module_path, problems);
    let owner = format!("tool \"{}\" ({module_path})", tool.id);
    if tool
        .description
        .as_deref()
        .is_none_or(|d| d.trim().is_empty())
    {
        problems.push(format!(
            "{owner}: has no description, which the model reads to choose the tool: give the function a doc comment (#[kindgi::tool]) or call .description(\"…\")"
        ));
    }
    if let Some(version) = &tool.version {
        check_version(&owner, version, problems);
    }
    if tool.handler.is_none() {
        problems.push(format!(
            "{owner}: has no handler: call .handler(…) or .blocking_handler(…)"
        ));
    }
    let input = tool
        .effective_input_schema()
        .cloned()
        .unwrap_or(Value::Bool(true));
    let output = tool
        .effective_output_schema()
        .cloned()
        .unwrap_or(Value::Bool(true));
    if tool.handler.is_some() || tool.input_schema.is_some() {
        check_schema(
            &owner,
            "input",
            &input,
            Some(
                "a model calls a tool with an object of arguments: make the input type a struct (or a tagged enum), or call .input_schema(json!({\"type\": \"object\", …}))",
            ),
            problems,
        );
        check_schema(&owner, "output", &output, None, problems);
    }
    let mut extra = tool.extra.clone();
    if let Some(spec) = &tool.http {
        problems.extend(spec.problems(&owner, &input, &tool.needs_spec));
        extra.insert("spec".to_owned(), spec.to_value());
    }
    ToolEntry {
        id: tool.id.clone(),
        description: tool.description.clone(),
        version: Some(
            tool.version
                .clone()
                .unwrap_or_else(|| pack_version.to_owned()),
        ),
        input,
        output,
        effects: (!tool.effects.is_empty()).then(|| tool.effects.clone()),
        needs: None,
        needs_spec: (!tool.needs_spec.is_empty()).then(|| tool.needs_spec.clone()),
        mutating: tool.mutating,
        needs_approval_when_unattended: tool.needs_approval_when_unattended,
        pauses: tool.effective_pauses(),
        stores_files: tool.stores_files,
        reads_files: tool.reads_files,
        module_path,
        extra,
    }
}

fn guardrail_entry(guardrail: &Guardrail, problems: &mut Vec<String>) -> GuardrailEntry {
    let module_path = guardrail.source.module_path();
    check_id("guardrail", &guardrail.id, &module_path, problems);
    if let Some(check_id_value) = &guardrail.check_id {
        check_id("check", check_id_value, &module_path, problems);
    }
    let owner = format!("guardrail \"{}\" ({module_path})", guardrail.id);
    if guardrail
        .name
        .as_deref()
        .is_none_or(|n| n.trim().is_empty())
    {
        problems.push(format!(
            "{owner}: has no name, which people read on the run's violations: call .name(\"…\") (or give the #[kindgi::check] function a doc comment)"
        ));
    }
    let mut action = Map::new();
    match &guardrail.on_violation {
        Some(on_violation) if on_violation.as_str().is_empty() => problems.push(format!(
            "{owner}: its action is empty: call .on_violation(OnViolation::Halt) (or another action)"
        )),
        Some(on_violation) => {
            action.insert("on-violation".to_owned(), Value::from(on_violation.as_str()));
        }
        None => problems.push(format!(
            "{owner}: has no action: call .on_violation(OnViolation::Halt) (or another action)"
        )),
    }
    if guardrail.kind.as_str().is_empty() {
        problems.push(format!(
            "{owner}: its kind is empty: leave the kind out (zero-llm) or name one"
        ));
    }
    if guardrail
        .severity
        .as_ref()
        .is_some_and(|s| s.as_str().is_empty())
    {
        problems.push(format!(
            "{owner}: its severity is empty: leave it out or name one, e.g. Severity::Error"
        ));
    }
    if guardrail.evaluate.is_none() {
        problems.push(format!("{owner}: has no check: call .evaluate(…)"));
    }
    let config_schema = guardrail.effective_config_schema().cloned();
    let config_validator = config_schema.as_ref().and_then(|schema| {
        check_schema(
            &owner,
            "config",
            schema,
            Some(
                "a check's config is an object: make the config type a struct, or call .config_schema(json!({\"type\": \"object\", …}))",
            ),
            problems,
        )
    });
    let config = guardrail
        .config
        .as_ref()
        .and_then(|config| check_config(&owner, config, config_validator.as_ref(), problems));
    GuardrailEntry {
        id: guardrail.id.clone(),
        name: guardrail.name.clone(),
        kind: guardrail.kind.as_str().to_owned(),
        action,
        severity: guardrail.severity.as_ref().map(|s| s.as_str().to_owned()),
        scope: guardrail.scope.clone(),
        check_module_path: module_path,
        check_id: guardrail.check_id.clone(),
        config_schema,
        config,
        extra: guardrail.extra.clone(),
    }
}

/// The guardrail's config as the index carries it, if it is an object
/// that fits the config schema (its defaults filled, as a call's are).
fn check_config(
    owner: &str,
    config: &Value,
    validator: Option<&kindgi_validate::Validator>,
    problems: &mut Vec<String>,
) -> Option<Map<String, Value>> {
    let Value::Object(map) = config else {
        problems.push(format!(
            "{owner}: its config is not an object: pass .config(json!({{…}}))"
        ));
        return None;
    };
    if let Some(validator) = validator {
        let mut filled = config.clone();
        validator.fill_defaults(&mut filled);
        if let Err(issues) = validator.validate(&filled) {
            let first = issues
                .first()
                .map(|i| format!("{} {}", i.instance_path, i.message))
                .unwrap_or_default();
            problems.push(format!(
                "{owner}: its config doesn't fit its config schema ({}): fix .config(…)",
                first.trim()
            ));
        }
    }
    Some(map.clone())
}

fn agent_entry(agent: &Agent, lookup: &Lookup<'_>, problems: &mut Vec<String>) -> AgentEntry {
    let module_path = agent.source.module_path();
    check_id("agent", &agent.id, &module_path, problems);
    let owner = format!("agent \"{}\" ({module_path})", agent.id);
    check_version(&owner, &agent.version, problems);
    let mut tools = Vec::new();
    for tool in &agent.tools {
        match lookup.agent_tool(&owner, tool) {
            Ok((id, version)) => tools.push(AgentToolRef { id, version }),
            Err(problem) => problems.push(problem),
        }
    }
    problems.extend(lookup.agent_problems(agent, &owner));
    let guardrails: Vec<String> = agent.guardrails.iter().map(|g| g.id.clone()).collect();
    AgentEntry {
        id: agent.id.clone(),
        version: agent.version.clone(),
        name: agent.name.clone(),
        instructions: agent.instructions.clone(),
        capabilities: agent.capabilities.clone(),
        tools,
        guardrails: (!guardrails.is_empty()).then_some(guardrails),
        description: agent.description.clone(),
        module_path,
        extra: agent.extra.clone(),
    }
}

fn flow_entry(flow: &Flow, lookup: &Lookup<'_>, problems: &mut Vec<String>) -> FlowEntry {
    let module_path = flow.source.module_path();
    check_id("flow", &flow.id, &module_path, problems);
    let owner = format!("flow \"{}\" ({module_path})", flow.id);
    let nodes: BTreeSet<&str> = flow
        .nodes
        .iter()
        .filter_map(|n| n.get("id").and_then(Value::as_str))
        .collect();
    if flow.nodes.is_empty() {
        problems.push(format!(
            "{owner}: has no nodes: add one with .tool_node(…), .agent_node(…) or .node(…)"
        ));
    }
    problems.extend(lookup.flow_problems(flow, &owner));
    for edge in &flow.edges {
        let edge_id = edge.get("id").and_then(Value::as_str).unwrap_or("?");
        for (end, sentinel) in [("from", crate::flow::START), ("to", crate::flow::END)] {
            let node = edge.get(end).and_then(Value::as_str).unwrap_or("");
            if node != sentinel && !nodes.contains(node) {
                problems.push(format!(
                    "{owner}: edge \"{edge_id}\" {} node \"{node}\", which the flow doesn't have: add the node, or fix the edge",
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
    use crate::{
        AgentRef, GuardrailRef, OnViolation, RunTrace, Severity, ToolContext, ToolError, ToolRef,
    };
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
        Tool::new(id)
            .description("Does it.")
            .input_schema(json!({"type": "object"}))
            .handler(noop)
    }

    fn guardrail(id: &str) -> Guardrail {
        Guardrail::new(id)
            .name("G")
            .on_violation(OnViolation::Halt)
            .config_schema(json!({"type": "object"}))
            .evaluate(|_: Value, _: RunTrace| true)
    }

    const FILE: &str = "src/index/build.rs";

    fn problems(pack: &Pack) -> Vec<String> {
        build_index(pack, &config(), &pins())
            .expect_err("invalid")
            .into_vec()
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
        assert_eq!(index.tools[1].module_path, FILE);
    }

    #[test]
    fn names_every_mistake_with_its_file_and_fix() {
        let pack = Pack::new()
            .tool(tool("bad id"))
            .tool(Tool::new("no.handler").description("x"))
            .guardrail(Guardrail::new("g").evaluate(|_: Value, _: RunTrace| true))
            .flow(
                Flow::new("f", "1.0.0")
                    .node(json!({"id": "n", "kind": "tool", "ref": "x"}))
                    .edge(crate::flow::START, "n")
                    .edge("n", "ghost"),
            );
        let expected = [
            format!(
                "tool \"bad id\" ({FILE}): the id contains ` `; an id is ASCII letters, digits and `. _ - : /`"
            ),
            format!(
                "tool \"no.handler\" ({FILE}): has no handler: call .handler(…) or .blocking_handler(…)"
            ),
            format!(
                "guardrail \"g\" ({FILE}): has no name, which people read on the run's violations: call .name(\"…\") (or give the #[kindgi::check] function a doc comment)"
            ),
            format!(
                "guardrail \"g\" ({FILE}): has no action: call .on_violation(OnViolation::Halt) (or another action)"
            ),
            format!(
                "guardrail \"g\" ({FILE}): its config schema is not an object schema (it accepts any value): a check's config is an object: make the config type a struct, or call .config_schema(json!({{\"type\": \"object\", …}}))"
            ),
            format!(
                "flow \"f\" ({FILE}): edge \"n->ghost\" goes to node \"ghost\", which the flow doesn't have: add the node, or fix the edge"
            ),
        ];
        assert_eq!(problems(&pack), expected);
    }

    #[test]
    fn a_check_under_a_built_in_checks_id_is_refused() {
        let pack = Pack::new()
            .guardrail(guardrail("acme.cite").check_id("must-cite"))
            .guardrail(guardrail("max-tool-calls"))
            .guardrail(guardrail("acme.fine"));
        assert_eq!(
            problems(&pack),
            [
                format!(
                    "guardrail \"acme.cite\" ({FILE}): ships its own check under \"must-cite\", a built-in check's id: a pack can't replace a built-in, and the runtime would run the built-in instead. Rename the check, for example .check_id(\"p.checks.must-cite\")"
                ),
                format!(
                    "guardrail \"max-tool-calls\" ({FILE}): ships its own check under \"max-tool-calls\", a built-in check's id: a pack can't replace a built-in, and the runtime would run the built-in instead. Rename the check, for example .check_id(\"p.checks.max-tool-calls\")"
                ),
            ]
        );
    }

    #[test]
    fn a_check_without_the_packs_prefix_is_warned_of_once() {
        let pack = Pack::new()
            .guardrail(guardrail("acme.ok"))
            .guardrail(guardrail("acme.named").check_id("shared.check"))
            .guardrail(guardrail("loose"));
        assert_eq!(
            crate::index::unprefixed_check_warnings(&pack, "acme"),
            [
                format!(
                    "guardrail \"acme.named\" ({FILE}): check \"shared.check\" doesn't start with this pack's id (\"acme.\"). Name it \"acme.checks.<name>\" (.check_id(…), or check_id = \"…\" on #[kindgi::check]) so it can't collide with another pack's check in the same tenant. The pack builds as it is."
                ),
                format!(
                    "guardrail \"loose\" ({FILE}): check \"loose\" doesn't start with this pack's id (\"acme.\"). Name it \"acme.checks.<name>\" (.check_id(…), or check_id = \"…\" on #[kindgi::check]) so it can't collide with another pack's check in the same tenant. The pack builds as it is."
                ),
            ]
        );
        // Still a pack that builds.
        assert!(build_index(&pack, &config(), &pins()).is_ok());
    }

    #[test]
    fn a_repeated_id_is_reported_once_at_the_repeat() {
        let pack = Pack::new()
            .tool(tool("dup"))
            .tool(tool("dup").version("1.0.0"))
            .guardrail(guardrail("g"))
            .guardrail(guardrail("g2").check_id("g"))
            .agent(Agent::new("a", "1.0.0", "A"))
            .agent(Agent::new("a", "1.0.0", "A"))
            .agent(Agent::new("a", "1.1.0", "A"));
        assert_eq!(
            problems(&pack),
            [
                format!(
                    "tool \"dup\" ({FILE}): repeats the id of the tool declared first in {FILE}: a pack's tool ids are unique, so rename one"
                ),
                format!(
                    "check \"g\" ({FILE}): repeats the id of the check declared first in {FILE}: a pack's check ids are unique, so rename one"
                ),
                format!(
                    "agent \"a@1.0.0\" ({FILE}): repeats the id of the agent declared first in {FILE}: a pack's agent ids are unique, so rename one"
                ),
            ]
        );
    }

    #[test]
    fn refuses_what_can_not_work() {
        let pack = Pack::new()
            .tool(
                Tool::new("no.description")
                    .input_schema(json!({"type": "object"}))
                    .handler(noop),
            )
            .tool(tool("string.input").input_schema(json!({"type": "string"})))
            .tool(Tool::new("any.input").description("x").handler(noop))
            .tool(tool("bad.version").version("1.0"))
            .guardrail(
                guardrail("g")
                    .config_schema(
                        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
                    )
                    .config(json!({"n": "x"})),
            );
        assert_eq!(
            problems(&pack),
            [
                format!(
                    "tool \"no.description\" ({FILE}): has no description, which the model reads to choose the tool: give the function a doc comment (#[kindgi::tool]) or call .description(\"…\")"
                ),
                format!(
                    "tool \"string.input\" ({FILE}): its input schema is not an object schema (it says \"type\": \"string\"): a model calls a tool with an object of arguments: make the input type a struct (or a tagged enum), or call .input_schema(json!({{\"type\": \"object\", …}}))"
                ),
                format!(
                    "tool \"any.input\" ({FILE}): its input schema is not an object schema (it accepts any value): a model calls a tool with an object of arguments: make the input type a struct (or a tagged enum), or call .input_schema(json!({{\"type\": \"object\", …}}))"
                ),
                format!(
                    "tool \"bad.version\" ({FILE}): version \"1.0\" is not an exact semver (MAJOR.MINOR.PATCH): write it like \"1.0.0\""
                ),
                format!(
                    "guardrail \"g\" ({FILE}): its config doesn't fit its config schema (/n must be integer): fix .config(…)"
                ),
            ]
        );
    }

    #[test]
    fn references_resolve_or_are_refused() {
        let echo = tool("p.echo").version("1.2.0");
        let g = guardrail("p.guard");
        let helper = Agent::new("p.helper", "1.0.0", "Helper")
            .tool(&echo)
            .tool(ToolRef::id("p.echo").version("^1.0.0"))
            .tool(ToolRef::other_pack("billing.charge", "^3"))
            .guardrail(&g)
            .guardrail(GuardrailRef::other_pack("compliance.no-pii"));
        let flow = Flow::new("p.flow", "1.0.0")
            .tool_node("echo", &echo)
            .agent_node("help", &helper)
            .agent_node("qa", AgentRef::other_pack("qa.reviewer"))
            .edge(crate::flow::START, "echo")
            .edge("echo", crate::flow::END);
        let pack = Pack::new()
            .tool(echo.clone())
            .guardrail(g.clone())
            .agent(helper.clone())
            .flow(flow);
        let index = build_index(&pack, &config(), &pins()).expect("valid");
        let tools = serde_json::to_value(&index.agents[0].tools).expect("json");
        assert_eq!(
            tools,
            json!([
                {"id": "p.echo", "version": "1.2.0"},
                {"id": "p.echo", "version": "^1.0.0"},
                {"id": "billing.charge", "version": "^3"},
            ])
        );
        assert_eq!(
            index.agents[0].guardrails,
            Some(vec!["p.guard".to_owned(), "compliance.no-pii".to_owned()])
        );

        let renamed = tool("p.echo2");
        let pack = Pack::new()
            .tool(renamed)
            .agent(
                Agent::new("p.a", "1", "A")
                    .tool(&echo)
                    .tool(ToolRef::id("p.echo2").version("^1"))
                    .tool(ToolRef::other_pack("x.y", "one"))
                    .tool(ToolRef::other_pack("p.lookup", "^1"))
                    .guardrail(&g),
            )
            .flow(
                Flow::new("p.f", "1.0.0")
                    .tool_node("n", ToolRef::id("p.missing"))
                    .tool_node("o", ToolRef::other_pack("p.elsewhere", "1.0.0"))
                    .tool_node("q", ToolRef::other_pack("pp.fine", "1.0.0"))
                    .agent_node("m", &helper),
            );
        assert_eq!(
            problems(&pack),
            [
                format!(
                    "agent \"p.a\" ({FILE}): version \"1\" is not an exact semver (MAJOR.MINOR.PATCH): write it like \"1.0.0\""
                ),
                format!(
                    "agent \"p.a\" ({FILE}): names tool \"p.echo\", which this pack doesn't have: add it with Pack::tool(…), fix the id, or name another pack's tool with ToolRef::other_pack(id, version)"
                ),
                format!(
                    "agent \"p.a\" ({FILE}): names tool \"p.echo2\" at version \"^1\", but the pack's \"p.echo2\" is 2.0.0: ask for a range that 2.0.0 satisfies, or name the tool with Agent::tool(&tool), which asks for its own version"
                ),
                format!(
                    "agent \"p.a\" ({FILE}): names tool \"x.y\" of another pack at version \"one\", which is not a semver range (unexpected character 'o' while parsing major version number): give one like \"1.0.0\" or \"^1.2\""
                ),
                format!(
                    "agent \"p.a\" ({FILE}): names tool \"p.lookup\" as another pack's, but \"p.\" is this pack's prefix and this pack has no such tool: add it with Pack::tool(…), or fix the id"
                ),
                format!(
                    "agent \"p.a\" ({FILE}): names guardrail \"p.guard\", which this pack doesn't have: add it with Pack::guardrail(…), fix the id, or name another pack's guardrail with GuardrailRef::other_pack(id)"
                ),
                format!(
                    "flow \"p.f\" ({FILE}): node \"n\": names tool \"p.missing\", which this pack doesn't have: add it with Pack::tool(…), fix the id, or name another pack's tool with ToolRef::other_pack(id, version)"
                ),
                format!(
                    "flow \"p.f\" ({FILE}): node \"o\": names tool \"p.elsewhere\" as another pack's, but \"p.\" is this pack's prefix and this pack has no such tool: add it with Pack::tool(…), or fix the id"
                ),
                format!(
                    "flow \"p.f\" ({FILE}): node \"m\": names agent \"p.helper\", which this pack doesn't have: add it with Pack::agent(…), fix the id, or name another pack's agent with AgentRef::other_pack(id)"
                ),
            ]
        );
    }

    #[test]
    fn explicit_schemas_stand_in_either_order() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct In {
            #[allow(dead_code)]
            a: String,
        }
        async fn typed(_: In, _: ToolContext) -> Result<Value, ToolError> {
            Ok(Value::Null)
        }
        let given = json!({"type": "object", "properties": {"given": {"type": "string"}}});
        let out = json!({"type": "object"});
        let before = Tool::new("t.before")
            .description("x")
            .input_schema(given.clone())
            .output_schema(out.clone())
            .pauses(false)
            .handler(typed);
        let after = Tool::new("t.after")
            .description("x")
            .handler(typed)
            .input_schema(given.clone())
            .output_schema(out.clone())
            .pauses(false);
        let derived = Tool::new("t.derived").description("x").handler(typed);
        let index = build_index(
            &Pack::new().tool(before).tool(after).tool(derived),
            &config(),
            &pins(),
        )
        .expect("valid");
        for entry in &index.tools[..2] {
            assert_eq!(entry.input, given, "{}", entry.id);
            assert_eq!(entry.output, out, "{}", entry.id);
        }
        assert_eq!(index.tools[2].input["required"], json!(["a"]));

        let schema = json!({"type": "object", "properties": {"max": {"type": "integer"}}});
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct Config {}
        let check = |_: Config, _: RunTrace| true;
        let g_before = Guardrail::new("g.before")
            .name("G")
            .severity(Severity::Warn)
            .on_violation(OnViolation::LogOnly)
            .config_schema(schema.clone())
            .evaluate(check);
        let g_after = Guardrail::new("g.after")
            .evaluate(check)
            .config_schema(schema.clone())
            .on_violation(OnViolation::LogOnly)
            .severity(Severity::Warn)
            .name("G");
        let index = build_index(
            &Pack::new().guardrail(g_before).guardrail(g_after),
            &config(),
            &pins(),
        )
        .expect("valid");
        for entry in &index.guardrails {
            assert_eq!(entry.config_schema.as_ref(), Some(&schema), "{}", entry.id);
            assert_eq!(entry.action["on-violation"], "log-only");
            assert_eq!(entry.severity.as_deref(), Some("warn"));
        }
    }

    #[test]
    fn refuses_a_schema_that_does_not_compile() {
        let pack = Pack::new().tool(tool("t").input_schema(json!({"type": 12})));
        let problems = problems(&pack);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with(
                "tool \"t\" (src/index/build.rs): its input schema is not a valid JSON Schema: "
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn an_empty_other_value_is_refused() {
        let pack = Pack::new().guardrail(
            guardrail("g")
                .on_violation(OnViolation::other(""))
                .severity(Severity::other("")),
        );
        assert_eq!(
            problems(&pack),
            [
                format!(
                    "guardrail \"g\" ({FILE}): its action is empty: call .on_violation(OnViolation::Halt) (or another action)"
                ),
                format!(
                    "guardrail \"g\" ({FILE}): its severity is empty: leave it out or name one, e.g. Severity::Error"
                ),
            ]
        );
    }
}
