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
    use kindgi_test_kit::vectors::{IDEMPOTENCY_KEYS, IDEMPOTENCY_RUN_ID};

    use super::*;

    #[test]
    fn contract_vectors() {
        for vector in IDEMPOTENCY_KEYS {
            assert_eq!(
                idempotency_key(
                    IDEMPOTENCY_RUN_ID,
                    vector.step_scope,
                    vector.tool_id,
                    vector.model_call_id
                )
                .to_string(),
                vector.key
            );
        }
    }
}
