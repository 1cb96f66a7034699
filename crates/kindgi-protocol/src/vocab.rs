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
//! ```
//! use kindgi_protocol::vocab::{EffectKind, OnViolation};
//!
//! assert_eq!(EffectKind::ExternalSideEffect.as_str(), "external-side-effect");
//! assert_eq!(OnViolation::parse("log-only"), Some(OnViolation::LogOnly));
//! assert_eq!(OnViolation::parse("page-oncall"), Some(OnViolation::other("page-oncall")));
//! assert_eq!(OnViolation::parse(""), None);
//! assert_eq!(serde_json::to_value(OnViolation::Halt).unwrap(), "halt");
//! ```

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares a closed list: its variants and their wire spelling.
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )+ }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in the schema's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value as the index spells it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            /// The value spelt `wire`, if the list has it.
            pub fn parse(wire: &str) -> Option<Self> {
                match wire {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let wire = String::deserialize(deserializer)?;
                Self::parse(&wire).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "unknown {} {wire:?}: one of {}",
                        stringify!($name),
                        spelled(Self::ALL.iter().map(|v| v.as_str()))
                    ))
                })
            }
        }
    };
}

/// Declares an open list: its built-in variants, their wire spelling, and
/// `Other` for any other non-empty name.
macro_rules! open_set {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )+ }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this crate doesn't know yet (a newer runtime's, or an
            /// adapter's): made with `other`, never empty, never a built-in
            /// value's spelling.
            Other(OtherName),
        }

        impl $name {
            /// The built-in values, in the schema's order.
            pub const BUILT_IN: &'static [$name] = &[$($name::$variant),+];

            /// A value the built-in list doesn't have. A built-in's spelling
            /// gives that variant, so `other("halt")` is `Halt`; an empty
            /// name stays `Other("")`, which the indexer refuses.
            pub fn other(name: impl Into<String>) -> Self {
                let name = name.into();
                match Self::built_in(&name) {
                    Some(known) => known,
                    None => $name::Other(OtherName(name)),
                }
            }

            /// The value as the index spells it.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $wire,)+
                    $name::Other(name) => &name.0,
                }
            }

            /// The value spelt `wire`: a built-in's variant, else `Other`;
            /// `None` for an empty name.
            pub fn parse(wire: &str) -> Option<Self> {
                (!wire.is_empty()).then(|| Self::other(wire))
            }

            /// The built-in value spelt `wire`, if there is one.
            pub fn built_in(wire: &str) -> Option<Self> {
                match wire {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The built-in values' spellings, for messages: `"a", "b" or "c"`.
            pub fn built_in_names() -> String {
                spelled(Self::BUILT_IN.iter().map(|v| v.as_str()))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let wire = String::deserialize(deserializer)?;
                Self::parse(&wire).ok_or_else(|| {
                    serde::de::Error::custom(concat!("an empty ", stringify!($name)))
                })
            }
        }
    };
}

/// The name inside an open list's `Other`: any name but a built-in's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OtherName(String);

impl OtherName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `"a", "b" or "c"`.
fn spelled<'a>(names: impl Iterator<Item = &'a str>) -> String {
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
