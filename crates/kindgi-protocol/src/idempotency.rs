//! The call's idempotency key (protocol 2.6.0).
//!
//! A version 5 UUID under [`NAMESPACE`] over the UTF-8 bytes of the JSON
//! array `[runId, stepScope, toolId]` (plus the model's call id for a call a
//! model asked for), written as JavaScript's `JSON.stringify` writes it: no
//! whitespace, characters beyond ASCII as themselves.

use uuid::Uuid;

/// The namespace of every idempotency key.
pub const NAMESPACE: Uuid = Uuid::from_u128(0xa70d5bff_e713_4322_b2ea_9d5c4926a861);

/// The idempotency key of one call.
///
/// ```
/// use kindgi_protocol::idempotency::idempotency_key;
/// let key = idempotency_key(
///     "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13",
///     "charge-card",
///     "acme.payments.charge",
///     None,
/// );
/// assert_eq!(key.to_string(), "f6c8a374-b63c-5453-8320-1ca9c067447a");
/// ```
pub fn idempotency_key(
    run_id: &str,
    step_scope: &str,
    tool_id: &str,
    model_call_id: Option<&str>,
) -> Uuid {
    let mut parts = vec![run_id, step_scope, tool_id];
    parts.extend(model_call_id);
    // serde_json writes compact JSON with non-ASCII characters as
    // themselves, the same bytes JSON.stringify produces for strings.
    let text = crate::canonical::to_compact_string(&parts);
    Uuid::new_v5(&NAMESPACE, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run id of every vector.
    const RUN_ID: &str = "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13";

    /// The contract's vectors (protocol 2.6.0), as (step scope, tool id,
    /// model call id, key): a plain step, two model calls whose scopes
    /// differ by the loop's turn only, and a scope beyond ASCII.
    const VECTORS: [(&str, &str, Option<&str>, &str); 4] = [
        (
            "charge-card",
            "acme.payments.charge",
            None,
            "f6c8a374-b63c-5453-8320-1ca9c067447a",
        ),
        (
            "agent-loop#2/dispatch-tools",
            "acme.refunds.issue",
            Some("call_0"),
            "bf055463-2cce-5e82-b31a-43d7698db52e",
        ),
        (
            "agent-loop#3/dispatch-tools",
            "acme.refunds.issue",
            Some("call_0"),
            "f08fa71f-aaa9-5f9e-96bf-7e54d4f1af46",
        ),
        (
            "notify/branch-é",
            "acme.mail.send",
            None,
            "873f6e4e-cd72-5604-ac09-ab1496cfeb8a",
        ),
    ];

    #[test]
    fn contract_vectors() {
        for (scope, tool, model_call, key) in VECTORS {
            assert_eq!(
                idempotency_key(RUN_ID, scope, tool, model_call).to_string(),
                key,
                "{scope} {tool}"
            );
        }
    }
}
