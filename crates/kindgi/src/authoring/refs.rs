//! References from agents and flows to tools, guardrails and agents.
//!
//! A reference made from the primitive itself (`&tool`) can't name an id
//! the pack doesn't have: a rename changes both. A reference by id is for
//! another pack's primitive (or one built into Kindgi), which the indexer
//! can't see; one by id that names this pack's own is checked all the same.

use crate::{Agent, Guardrail, Tool};

/// Where a referenced primitive lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// In this pack: the indexer refuses the reference if it doesn't resolve.
    ThisPack,
    /// In another pack, or built into Kindgi: taken as written.
    OtherPack,
}

/// A tool an agent may call, or a flow node runs.
///
/// ```
/// use kindgi::{Agent, Tool, ToolRef};
/// let echo = Tool::new("acme.echo").version("1.2.0");
/// let agent = Agent::new("acme.helper", "1.0.0", "Helper")
///     .tool(&echo)                                         // pinned to 1.2.0
///     .tool(ToolRef::id("acme.lookup").version("^2.0.0"))  // this pack's, by id
///     .tool(ToolRef::other_pack("billing.charge", "^3.1.0"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRef {
    pub(crate) id: String,
    /// A semver range, or `None` for the tool's own version.
    pub(crate) version: Option<String>,
    pub(crate) scope: Scope,
}

impl ToolRef {
    /// A tool of this pack, by id. The indexer checks that the pack has
    /// it; an agent's reference is pinned to that tool's version unless
    /// [`ToolRef::version`] gives a range.
    pub fn id(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            version: None,
            scope: Scope::ThisPack,
        }
    }

    /// Another pack's tool (or one built into Kindgi) at a semver range
    /// (`1.0.0`, `^1.2`, `>=2, <3`). The indexer can't see it, so takes it
    /// as written — unless its id has this pack's prefix (`acme.` in pack
    /// `acme`): no other pack has such a tool, so the indexer refuses one
    /// this pack lacks.
    pub fn other_pack(id: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            version: Some(version.into()),
            scope: Scope::OtherPack,
        }
    }

    /// The semver range an agent's reference asks for, instead of the
    /// tool's exact version. The indexer checks that this pack's tool
    /// satisfies it.
    pub fn version(mut self, range: impl Into<String>) -> Self {
        self.version = Some(range.into());
        self
    }

    /// The tool's id.
    pub fn tool_id(&self) -> &str {
        &self.id
    }
}

impl From<&Tool> for ToolRef {
    fn from(tool: &Tool) -> Self {
        Self {
            id: tool.id.clone(),
            version: None,
            scope: Scope::ThisPack,
        }
    }
}

/// Declares a reference to a primitive by id alone: this pack's (checked)
/// or another pack's (taken as written), and made from the primitive.
macro_rules! id_ref {
    ($(#[$meta:meta])* $name:ident, $primitive:ident, $a_what:literal, $what:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            pub(crate) id: String,
            pub(crate) scope: Scope,
        }

        impl $name {
            #[doc = concat!("This pack's ", $what, ", by id: the indexer checks that the pack has it.")]
            pub fn id(id: impl Into<String>) -> Self {
                Self {
                    id: id.into(),
                    scope: Scope::ThisPack,
                }
            }

            #[doc = concat!("Another pack's ", $what, ", or ", $a_what, " built into Kindgi: taken as written.")]
            pub fn other_pack(id: impl Into<String>) -> Self {
                Self {
                    id: id.into(),
                    scope: Scope::OtherPack,
                }
            }
        }

        impl From<&$primitive> for $name {
            fn from(primitive: &$primitive) -> Self {
                Self::id(primitive.id.clone())
            }
        }
    };
}

id_ref!(
    /// A guardrail guarding an agent.
    ///
    /// ```
    /// use kindgi::{Agent, Guardrail, GuardrailRef};
    /// let short = Guardrail::new("acme.short");
    /// let agent = Agent::new("acme.helper", "1.0.0", "Helper")
    ///     .guardrail(&short)
    ///     .guardrail(GuardrailRef::other_pack("compliance.no-pii"));
    /// ```
    GuardrailRef,
    Guardrail,
    "a guardrail",
    "guardrail"
);

id_ref!(
    /// An agent a flow node runs.
    ///
    /// ```
    /// use kindgi::{Agent, AgentRef, Flow};
    /// let helper = Agent::new("acme.helper", "1.0.0", "Helper");
    /// let flow = Flow::new("acme.help", "1.0.0")
    ///     .agent_node("help", &helper)
    ///     .agent_node("review", AgentRef::other_pack("qa.reviewer"));
    /// ```
    AgentRef,
    Agent,
    "an agent",
    "agent"
);
