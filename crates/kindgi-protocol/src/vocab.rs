//! The index's closed lists as enums: each value spelt on the wire exactly
//! as the index schemas spell it.
//!
//! Two kinds of list:
//!
//! - **Closed** ([`EffectKind`], [`Sandbox`]): the schema
//!   lists every value (`enum`), so the type has no other.
//! - **Open** ([`OnViolation`], [`Severity`], [`GuardrailKind`],
//!   [`ScopeWhen`]): the schema names the built-in values and accepts any
//!   other non-empty name a newer runtime (or an adapter) adds. Those go in
//!   `Other`, made with `other("…")`; reading a known name always gives its
//!   variant, never `Other`.
//!
//! The protocol's own open lists are of the second kind too:
//! [`ErrorCode`](crate::ErrorCode) (a newer pack service may answer a code
//! this crate doesn't know), and [`NotStored`](crate::NotStored) and
//! [`NotRead`](crate::NotRead) (a newer runtime may refuse a file for a new
//! reason).
//!
//! ```
//! use kindgi_protocol::vocab::{EffectKind, OnViolation};
//!
//! assert_eq!(EffectKind::ExternalSideEffect.as_str(), "external-side-effect");
//! assert_eq!(OnViolation::parse("log-only"), Some(OnViolation::LogOnly));
//! assert_eq!(OnViolation::parse("page-oncall"), Some(OnViolation::other("page-oncall")));
//! assert_eq!(OnViolation::parse(""), None);
//! assert_eq!(serde_json::to_value(OnViolation::Halt).unwrap(), "halt");
//! ```

/// The name inside an open list's `Other`: any name but a built-in's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OtherName(pub(crate) String);

impl OtherName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `"a", "b" or "c"`.
pub(crate) fn spelled<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.map(|n| format!("\"{n}\"")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

closed_set! {
    /// A tool's declared side effect (`effects[].kind` of `tool.schema.json`).
    EffectKind {
        /// Reads a resource.
        Reads = "reads",
        /// Writes a resource.
        Writes = "writes",
        /// Deletes from a resource.
        Deletes = "deletes",
        /// Talks to the network.
        Network = "network",
        /// Starts another run.
        SpawnsRun = "spawns-run",
        /// Emits an event.
        EmitsEvent = "emits-event",
        /// Does something outside Kindgi that can't be taken back (sends a
        /// message, charges a card).
        ExternalSideEffect = "external-side-effect",
        /// Sends sensitive data out of the tenant.
        SensitiveDataEgress = "sensitive-data-egress",
    }
}

closed_set! {
    /// The isolation the runtime keeps around a tool's handler
    /// (`sandbox` of `tool.schema.json`).
    Sandbox {
        /// No isolation.
        None = "none",
        /// The handler sees only its own call's context.
        ContextIsolated = "context-isolated",
        /// Full isolation.
        Strict = "strict",
    }
}

open_set! {
    /// What a failed check does to the agent turn (a guardrail's
    /// `action.on-violation`).
    OnViolation {
        /// The turn fails with `guardrail-violation`.
        Halt = "halt",
        /// The turn is run again.
        Retry = "retry",
        /// The violation goes to a person (`escalateTo`).
        Escalate = "escalate",
        /// The violation is recorded and the turn completes.
        LogOnly = "log-only",
        /// A compensating tool is called (`compensateWith`).
        Compensate = "compensate",
    }
}

open_set! {
    /// How serious a guardrail's violation is (`severity`).
    Severity {
        /// For information.
        Info = "info",
        /// A warning.
        Warn = "warn",
        /// An error.
        Error = "error",
        /// A critical error.
        Critical = "critical",
    }
}

open_set! {
    /// How a guardrail is checked (`kind`).
    GuardrailKind {
        /// Code, no model: what a pack's check is.
        ZeroLlm = "zero-llm",
        /// A model judges.
        LlmJudge = "llm-judge",
        /// Another service checks.
        External = "external",
    }
}

open_set! {
    /// When a guardrail applies (`scope.when`).
    ScopeWhen {
        /// Always.
        Always = "always",
        /// Only in CI.
        CiOnly = "ci-only",
        /// Only at run time.
        RuntimeOnly = "runtime-only",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_lists_spell_the_schema_values() {
        let kinds: Vec<&str> = EffectKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "reads",
                "writes",
                "deletes",
                "network",
                "spawns-run",
                "emits-event",
                "external-side-effect",
                "sensitive-data-egress"
            ]
        );
        for kind in EffectKind::ALL {
            assert_eq!(EffectKind::parse(kind.as_str()), Some(*kind));
        }
        assert_eq!(EffectKind::parse("write"), None);
        let err = serde_json::from_str::<EffectKind>("\"write\"").expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "unknown EffectKind \"write\": one of \"reads\", \"writes\", \"deletes\", \"network\", \"spawns-run\", \"emits-event\", \"external-side-effect\" or \"sensitive-data-egress\""
        );
        assert_eq!(Sandbox::ContextIsolated.as_str(), "context-isolated");
    }

    #[test]
    fn open_lists_keep_other_names_and_never_shadow_built_ins() {
        assert_eq!(OnViolation::other("halt"), OnViolation::Halt);
        let page = OnViolation::other("page-oncall");
        assert!(matches!(page, OnViolation::Other(_)));
        assert_eq!(page.as_str(), "page-oncall");
        assert_eq!(
            serde_json::to_string(&page).expect("json"),
            "\"page-oncall\""
        );
        assert_eq!(
            serde_json::from_str::<Severity>("\"critical\"").expect("json"),
            Severity::Critical
        );
        assert!(serde_json::from_str::<Severity>("\"\"").is_err());
        assert_eq!(GuardrailKind::ZeroLlm.as_str(), "zero-llm");
        assert_eq!(ScopeWhen::parse("ci-only"), Some(ScopeWhen::CiOnly));
        assert_eq!(
            OnViolation::built_in_names(),
            "\"halt\", \"retry\", \"escalate\", \"log-only\" or \"compensate\""
        );
    }
}
