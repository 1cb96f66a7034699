//! The environment the pack process starts with: what a deployed pack
//! would have, not what `kindgi dev` inherited from the shell and cargo.
//!
//! From dev's own environment, only the variables the pack service's env
//! filter keeps (the contract's list, §5) and the ones the pack declares;
//! then the pack folder's `.env` for names not set already (as dotenv
//! does: the environment wins). The service's own variables (`PORT`,
//! `KINDGI_PACK_SERVICE_TOKEN`, …) are set by [`super::child`] on top.

use std::ffi::OsString;

/// The `kindgi` command's own variables: its tokens and URLs are no
/// deployed pack's business.
const CLI_PREFIXES: &[&str] = &["KINDGI_DEV_", "KINDGI_SERVICE_", "KINDGI_RUNTIME_"];

/// Whether the pack process gets dev's variable `name`.
fn passed(name: &str, declared: &[String]) -> bool {
    if CLI_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    kindgi_protocol::env_filter::keeps(name, declared)
}

/// The pack process's environment: from `inherited` (dev's own) what a
/// deployed pack would see, then `dotenv` (the pack's `.env`) for the names
/// still unset.
pub(crate) fn pack_env(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    declared: &[String],
    dotenv: &[(String, String)],
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(name, _)| name.to_str().is_some_and(|n| passed(n, declared)))
        .collect();
    for (name, value) in dotenv {
        if !env.iter().any(|(set, _)| set == name.as_str()) {
            env.push((name.into(), value.into()));
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect()
    }

    #[test]
    fn keeps_what_a_deployed_pack_sees() {
        let inherited = vars(&[
            ("PATH", "/bin"),
            ("CARGO_PKG_NAME", "kindgi-cli"),
            ("RUSTFLAGS", "-x"),
            ("DATABASE_URL", "sqlite://from-shell"),
            ("KINDGI_LOG_LEVEL", "debug"),
            ("KINDGI_DEV_TOKEN", "front-token"),
            ("KINDGI_SERVICE_TOKEN", "t"),
            ("LC_ALL", "C"),
        ]);
        let dotenv = vec![
            ("DATABASE_URL".to_owned(), "sqlite://from-dotenv".to_owned()),
            ("REGION".to_owned(), "eu".to_owned()),
        ];
        let env = pack_env(inherited, &["DATABASE_URL".to_owned()], &dotenv);
        assert_eq!(
            env,
            vars(&[
                ("PATH", "/bin"),
                ("DATABASE_URL", "sqlite://from-shell"),
                ("KINDGI_LOG_LEVEL", "debug"),
                ("LC_ALL", "C"),
                ("REGION", "eu"),
            ])
        );
    }
}
