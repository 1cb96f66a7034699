//! What the indexer says of the ids a pack ships its checks under: never a
//! built-in check's id ([`RESERVED_CHECK_IDS`], refused), and the pack's
//! own prefix (a warning when it is missing: the pack still builds).

use crate::{Guardrail, Pack};

/// The ids of the runtime's built-in checks. A guardrail of the runtime may
/// name one; a pack may not ship a check of its own under one: the runtime
/// would run its built-in instead, silently.
pub const RESERVED_CHECK_IDS: &[&str] = &[
    "must-cite",
    "never-call-tool",
    "max-tool-calls",
    "output-matches",
    "tool-order",
    "required-substring",
    "forbidden-substring",
];

/// The problem with `guardrail` shipping its check under a built-in
/// check's id, if it does.
pub(super) fn reserved(guardrail: &Guardrail, pack_id: &str) -> Option<String> {
    let id = guardrail.resolved_check_id();
    RESERVED_CHECK_IDS.contains(&id).then(|| {
        format!(
            "guardrail \"{}\" ({}): ships its own check under \"{id}\", a built-in check's id: a pack can't replace a built-in, and the runtime would run the built-in instead. Rename the check, for example .check_id(\"{pack_id}.checks.{id}\")",
            guardrail.id,
            guardrail.source.module_path(),
        )
    })
}

/// A warning for every check whose id doesn't start with `<pack_id>.`:
/// packs in one tenant share one space of check ids, and a check named
/// for its pack can't collide with another pack's.
#[must_use]
pub fn unprefixed_check_warnings(pack: &Pack, pack_id: &str) -> Vec<String> {
    let prefix = format!("{pack_id}.");
    let mut warned = std::collections::BTreeSet::new();
    pack.guardrails
        .iter()
        .filter(|g| !g.resolved_check_id().starts_with(&prefix))
        .filter(|g| warned.insert(g.resolved_check_id().to_owned()))
        .map(|g| {
            format!(
                "guardrail \"{}\" ({}): check \"{}\" doesn't start with this pack's id (\"{prefix}\"). Name it \"{pack_id}.checks.<name>\" (.check_id(…), or check_id = \"…\" on #[kindgi::check]) so it can't collide with another pack's check in the same tenant. The pack builds as it is.",
                g.id,
                g.source.module_path(),
                g.resolved_check_id(),
            )
        })
        .collect()
}
