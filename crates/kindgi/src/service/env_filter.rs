//! The env filter (CONTRACT §5): which process variables pack code may see.

/// Whether the filter keeps `name` for a pack that declares `declared`.
pub(crate) fn keeps(name: &str, declared: &[String]) -> bool {
    kindgi_protocol::env_filter::keeps(name, declared)
}

/// The names the filter drops from `names`, sorted.
pub(crate) fn dropped<'a>(
    names: impl Iterator<Item = &'a str>,
    declared: &[String],
) -> Vec<String> {
    let mut dropped: Vec<String> = names
        .filter(|name| !keeps(name, declared))
        .map(str::to_owned)
        .collect();
    dropped.sort();
    dropped.dedup();
    dropped
}

/// The `env-dropped` record's message.
pub(crate) fn dropped_message(names: &[String]) -> String {
    let what = if names.len() == 1 {
        "a variable".to_owned()
    } else {
        format!("{} variables", names.len())
    };
    format!(
        "Dropped {what} the pack doesn't declare: {} (declare them in the pack's env, or set KINDGI_PACK_ENV_FILTER=off)",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_declared_listed_and_prefixed() {
        let declared = vec!["DATABASE_URL".to_owned()];
        let names = [
            "DATABASE_URL",
            "PATH",
            "LC_ALL",
            "KINDGI_LOG_LEVEL",
            "AWS_SECRET_ACCESS_KEY",
            "OTEL_X",
            "B_SECRET",
        ];
        assert_eq!(
            dropped(names.into_iter(), &declared),
            ["AWS_SECRET_ACCESS_KEY", "B_SECRET"]
        );
    }

    #[test]
    fn messages() {
        assert_eq!(
            dropped_message(&["A".to_owned()]),
            "Dropped a variable the pack doesn't declare: A (declare them in the pack's env, or set KINDGI_PACK_ENV_FILTER=off)"
        );
        assert_eq!(
            dropped_message(&["A".to_owned(), "B".to_owned()]),
            "Dropped 2 variables the pack doesn't declare: A, B (declare them in the pack's env, or set KINDGI_PACK_ENV_FILTER=off)"
        );
    }
}
