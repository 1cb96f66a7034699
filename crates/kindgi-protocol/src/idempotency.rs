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

    const RUN: &str = "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13";

    #[test]
    fn contract_vectors() {
        let cases = [
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
        for (scope, tool, call, expected) in cases {
            assert_eq!(
                idempotency_key(RUN, scope, tool, call).to_string(),
                expected
            );
        }
    }
}
