//! Resolving what agents and flows name against what the pack declares.

use std::collections::{HashMap, HashSet};

use semver::{Version, VersionReq};

use crate::authoring::flow::NodeTarget;
use crate::authoring::refs::{Scope, ToolRef};
use crate::{Agent, Flow, Pack};

/// The pack's primitives by id, and its version (every tool's default).
pub(super) struct Lookup<'a> {
    /// The pack's id: its tools' ids start with it and a dot.
    pack_id: &'a str,
    tool_versions: HashMap<&'a str, &'a str>,
    guardrails: HashSet<&'a str>,
    agents: HashSet<&'a str>,
}

impl<'a> Lookup<'a> {
    /// What `pack` declares; tools without a version of their own have
    /// `pack_version`.
    pub(super) fn new(pack: &'a Pack, pack_id: &'a str, pack_version: &'a str) -> Self {
        Self {
            pack_id,
            tool_versions: pack
                .tools
                .iter()
                .map(|t| (t.id.as_str(), t.version.as_deref().unwrap_or(pack_version)))
                .collect(),
            guardrails: pack.guardrails.iter().map(|g| g.id.as_str()).collect(),
            agents: pack.agents.iter().map(|a| a.id.as_str()).collect(),
        }
    }

    /// The `{id, version}` an agent's reference to a tool becomes, or why
    /// it can't be one (`owner` names the agent).
    pub(super) fn agent_tool(
        &self,
        owner: &str,
        tool: &ToolRef,
    ) -> Result<(String, String), String> {
        let id = &tool.id;
        match tool.scope {
            Scope::OtherPack => {
                if let Some(problem) = self.own_prefix(owner, id) {
                    return Err(problem);
                }
                let range = tool.version.as_deref().unwrap_or_default();
                let _ = parse_range(range).map_err(|why| {
                    format!(
                        "{owner}: names tool \"{id}\" of another pack at version \"{range}\", which is not a semver range ({why}): give one like \"1.0.0\" or \"^1.2\""
                    )
                })?;
                Ok((id.clone(), range.to_owned()))
            }
            Scope::ThisPack => {
                let Some(version) = self.tool_versions.get(id.as_str()) else {
                    return Err(missing(
                        owner,
                        "tool",
                        id,
                        "Pack::tool",
                        "ToolRef::other_pack(id, version)",
                    ));
                };
                let Some(range) = tool.version.as_deref() else {
                    return Ok((id.clone(), (*version).to_owned()));
                };
                let satisfied = parse_range(range).map_err(|why| {
                    format!(
                        "{owner}: names tool \"{id}\" at version \"{range}\", which is not a semver range ({why}): give one like \"{version}\" or \"^{version}\""
                    )
                })?;
                if satisfied(version) {
                    Ok((id.clone(), range.to_owned()))
                } else {
                    Err(format!(
                        "{owner}: names tool \"{id}\" at version \"{range}\", but the pack's \"{id}\" is {version}: ask for a range that {version} satisfies, or name the tool with Agent::tool(&tool), which asks for its own version"
                    ))
                }
            }
        }
    }

    /// The problem with a reference to another pack's tool `id` that has
    /// this pack's prefix but isn't one of its tools: no other pack can
    /// have it, so it is a typo or a tool not added.
    fn own_prefix(&self, owner: &str, id: &str) -> Option<String> {
        let ours = id
            .strip_prefix(self.pack_id)
            .is_some_and(|rest| rest.starts_with('.'));
        (ours && !self.tool_versions.contains_key(id)).then(|| {
            format!(
                "{owner}: names tool \"{id}\" as another pack's, but \"{}.\" is this pack's prefix and this pack has no such tool: add it with Pack::tool(…), or fix the id",
                self.pack_id
            )
        })
    }

    /// The problem with an agent's guardrail `id` in `scope`, if any.
    pub(super) fn guardrail(&self, owner: &str, id: &str, scope: &Scope) -> Option<String> {
        (*scope == Scope::ThisPack && !self.guardrails.contains(id)).then(|| {
            missing(
                owner,
                "guardrail",
                id,
                "Pack::guardrail",
                "GuardrailRef::other_pack(id)",
            )
        })
    }

    /// The problems with what `agent` names.
    pub(super) fn agent_problems(&self, agent: &Agent, owner: &str) -> Vec<String> {
        agent
            .guardrails
            .iter()
            .filter_map(|g| self.guardrail(owner, &g.id, &g.scope))
            .collect()
    }

    /// The problems with what `flow`'s tool and agent nodes name.
    pub(super) fn flow_problems(&self, flow: &Flow, owner: &str) -> Vec<String> {
        let mut problems = Vec::new();
        for node in &flow.refs {
            let owner = format!("{owner}: node \"{}\"", node.node);
            match &node.target {
                NodeTarget::Tool(tool) => {
                    if tool.scope == Scope::OtherPack {
                        problems.extend(self.own_prefix(&owner, &tool.id));
                    } else if !self.tool_versions.contains_key(tool.id.as_str()) {
                        problems.push(missing(
                            &owner,
                            "tool",
                            &tool.id,
                            "Pack::tool",
                            "ToolRef::other_pack(id, version)",
                        ));
                    }
                }
                NodeTarget::Agent(agent) => {
                    if agent.scope == Scope::ThisPack && !self.agents.contains(agent.id.as_str()) {
                        problems.push(missing(
                            &owner,
                            "agent",
                            &agent.id,
                            "Pack::agent",
                            "AgentRef::other_pack(id)",
                        ));
                    }
                }
            }
        }
        problems
    }
}

/// `owner` names a `kind` the pack doesn't have.
fn missing(owner: &str, kind: &str, id: &str, add: &str, other: &str) -> String {
    format!(
        "{owner}: names {kind} \"{id}\", which this pack doesn't have: add it with {add}(…), fix the id, or name another pack's {kind} with {other}"
    )
}

/// A semver range as a test of a version: an exact version (`1.0.0`)
/// matches only itself, as in npm; anything else is a range (`^1.2`,
/// `>=1, <2`, `*`).
fn parse_range(range: &str) -> Result<impl Fn(&str) -> bool, String> {
    let exact = Version::parse(range).ok();
    let req = match &exact {
        Some(_) => None,
        None => Some(VersionReq::parse(range).map_err(|e| e.to_string())?),
    };
    Ok(move |version: &str| {
        let Ok(version) = Version::parse(version) else {
            return false;
        };
        match (&exact, &req) {
            (Some(exact), _) => *exact == version,
            (None, Some(req)) => req.matches(&version),
            (None, None) => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::parse_range;

    #[test]
    fn exact_versions_match_only_themselves_and_ranges_match_as_semver() {
        let exact = parse_range("1.0.0").expect("a version");
        assert!(exact("1.0.0"));
        assert!(!exact("1.2.0"));
        let caret = parse_range("^1.0.0").expect("a range");
        assert!(caret("1.2.0"));
        assert!(!caret("2.0.0"));
        let any = parse_range("*").expect("a range");
        assert!(any("3.1.4"));
        assert!(parse_range("one").is_err());
        assert!(!parse_range("^1").expect("a range")("not a version"));
    }
}
