//! The contract's test vectors: inputs and the outputs every
//! implementation must produce for them, checked wherever the value is
//! made (the protocol crate's function, the pack client's calls).

/// The run id of every [`IDEMPOTENCY_KEYS`] vector.
pub const IDEMPOTENCY_RUN_ID: &str = "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13";

/// One idempotency-key vector (protocol 2.6.0): a call of
/// [`IDEMPOTENCY_RUN_ID`] and the key it must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdempotencyVector {
    /// The step scope.
    pub step_scope: &'static str,
    /// The tool id.
    pub tool_id: &'static str,
    /// The model's call id, for a call a model asked for.
    pub model_call_id: Option<&'static str>,
    /// The key, as a hyphenated UUID.
    pub key: &'static str,
}

/// The idempotency-key vectors: a plain step, two model calls whose scopes
/// differ by the loop's turn only, and a scope beyond ASCII.
pub const IDEMPOTENCY_KEYS: [IdempotencyVector; 4] = [
    IdempotencyVector {
        step_scope: "charge-card",
        tool_id: "acme.payments.charge",
        model_call_id: None,
        key: "f6c8a374-b63c-5453-8320-1ca9c067447a",
    },
    IdempotencyVector {
        step_scope: "agent-loop#2/dispatch-tools",
        tool_id: "acme.refunds.issue",
        model_call_id: Some("call_0"),
        key: "bf055463-2cce-5e82-b31a-43d7698db52e",
    },
    IdempotencyVector {
        step_scope: "agent-loop#3/dispatch-tools",
        tool_id: "acme.refunds.issue",
        model_call_id: Some("call_0"),
        key: "f08fa71f-aaa9-5f9e-96bf-7e54d4f1af46",
    },
    IdempotencyVector {
        step_scope: "notify/branch-é",
        tool_id: "acme.mail.send",
        model_call_id: None,
        key: "873f6e4e-cd72-5604-ac09-ab1496cfeb8a",
    },
];
