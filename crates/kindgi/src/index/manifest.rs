//! The pack's config in its own `Cargo.toml`: `[package.metadata.kindgi]`.
//!
//! ```toml
//! [package]
//! name = "acme-pack"
//! version = "1.0.0"
//!
//! [package.metadata.kindgi]
//! id = "acme"                  # required
//! version = "1.0.0"            # default: the package's version
//!
//! [package.metadata.kindgi.env]
//! required = ["DATABASE_URL"]  # the service isn't ready without them
//! optional = ["LOG_SQL"]
//! ```

use std::path::Path;

use kindgi_protocol::EnvSpec;
use toml::Value;

/// The pack's id, version and declared process env.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackConfig {
    /// The pack's id.
    pub id: String,
    /// The pack's version.
    pub version: String,
    /// The declared process env; `None` when the pack declares none.
    pub env: Option<EnvSpec>,
}

/// Whether `name` may be a pack's env name:
/// `^(?!KINDGI_)[A-Za-z_][A-Za-z0-9_]*$`.
pub(crate) fn env_name_problem(name: &str) -> Option<String> {
    let mut bytes = name.bytes();
    let well_formed = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !well_formed {
        Some(format!(
            "env name \"{name}\" is not a variable name (letters, digits and _, not starting with a digit)"
        ))
    } else if name.starts_with("KINDGI_") {
        Some(format!(
            "env name \"{name}\" starts with KINDGI_: those names configure Kindgi and are never a pack's"
        ))
    } else {
        None
    }
}

/// Reads `<pack_dir>/Cargo.toml`.
///
/// # Errors
///
/// Every problem found, each a sentence naming the file and the key.
pub fn read_pack_config(pack_dir: &Path) -> Result<PackConfig, Vec<String>> {
    let path = pack_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| vec![format!("Cannot read {}: {e}", path.display())])?;
    parse_pack_config(&text, &path.display().to_string())
}

/// Parses the text of a pack's `Cargo.toml`; `origin` names it in messages.
///
/// # Errors
///
/// As [`read_pack_config`].
pub fn parse_pack_config(text: &str, origin: &str) -> Result<PackConfig, Vec<String>> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        vec![format!("{origin} is not valid TOML: {}", e.message())]
    })?;
    let package = doc.get("package").and_then(Value::as_table);
    let Some(table) = package
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("kindgi"))
    else {
        return Err(vec![format!(
            "{origin} has no [package.metadata.kindgi] table: add one with the pack's id, e.g. id = \"acme\""
        )]);
    };
    let Some(table) = table.as_table() else {
        return Err(vec![format!(
            "{origin}: [package.metadata.kindgi] must be a table"
        )]);
    };
    let mut problems = Vec::new();
    let id = match table.get("id") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        Some(_) => {
            problems.push(format!(
                "{origin}: [package.metadata.kindgi] id must be a non-empty string"
            ));
            String::new()
        }
        None => {
            problems.push(format!(
                "{origin}: [package.metadata.kindgi] needs id, the pack's id"
            ));
            String::new()
        }
    };
    let version = match table.get("version") {
        Some(Value::String(v)) if !v.trim().is_empty() => v.clone(),
        Some(_) => {
            problems.push(format!(
                "{origin}: [package.metadata.kindgi] version must be a non-empty string"
            ));
            String::new()
        }
        None => match package.and_then(|p| p.get("version")) {
            Some(Value::String(v)) => v.clone(),
            _ => {
                problems.push(format!(
                    "{origin}: the pack has no version: set version in [package.metadata.kindgi]"
                ));
                String::new()
            }
        },
    };
    let env = parse_env(table.get("env"), origin, &mut problems);
    for key in table.keys() {
        if !matches!(key.as_str(), "id" | "version" | "env") {
            problems.push(format!(
                "{origin}: [package.metadata.kindgi] has an unknown key \"{key}\" (known: id, version, env)"
            ));
        }
    }
    if problems.is_empty() {
        Ok(PackConfig { id, version, env })
    } else {
        Err(problems)
    }
}

fn parse_env(env: Option<&Value>, origin: &str, problems: &mut Vec<String>) -> Option<EnvSpec> {
    let env = env?;
    let Some(env) = env.as_table() else {
        problems.push(format!(
            "{origin}: [package.metadata.kindgi.env] must be a table with required and optional lists"
        ));
        return None;
    };
    let mut list = |key: &str| -> Vec<String> {
        let mut names = Vec::new();
        match env.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    match item.as_str() {
                        Some(name) => match env_name_problem(name) {
                            Some(problem) => problems.push(format!("{origin}: {problem}")),
                            None => names.push(name.to_owned()),
                        },
                        None => problems.push(format!(
                            "{origin}: [package.metadata.kindgi.env] {key} must list strings"
                        )),
                    }
                }
            }
            Some(_) => problems.push(format!(
                "{origin}: [package.metadata.kindgi.env] {key} must be a list of names"
            )),
        }
        names.sort();
        names.dedup();
        names
    };
    let required = list("required");
    let optional = list("optional");
    for name in required.iter().filter(|n| optional.contains(n)) {
        problems.push(format!(
            "{origin}: env name \"{name}\" is both required and optional"
        ));
    }
    for key in env.keys() {
        if key != "required" && key != "optional" {
            problems.push(format!(
                "{origin}: [package.metadata.kindgi.env] has an unknown key \"{key}\""
            ));
        }
    }
    Some(EnvSpec { required, optional })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_id_version_env() {
        let config = parse_pack_config(
            r#"
            [package]
            name = "p"
            version = "0.3.0"
            [package.metadata.kindgi]
            id = "acme"
            [package.metadata.kindgi.env]
            required = ["B", "A"]
            optional = ["_C"]
            "#,
            "Cargo.toml",
        )
        .expect("valid");
        assert_eq!(config.id, "acme");
        assert_eq!(config.version, "0.3.0");
        let env = config.env.expect("env");
        assert_eq!(env.required, ["A", "B"]);
        assert_eq!(env.optional, ["_C"]);
    }

    #[test]
    fn lists_every_problem() {
        let problems = parse_pack_config(
            r#"
            [package]
            name = "p"
            [package.metadata.kindgi]
            id = ""
            colour = 1
            [package.metadata.kindgi.env]
            required = ["KINDGI_TOKEN", "1BAD", "OK"]
            optional = ["OK"]
            "#,
            "Cargo.toml",
        )
        .expect_err("invalid");
        assert_eq!(
            problems,
            [
                "Cargo.toml: [package.metadata.kindgi] id must be a non-empty string",
                "Cargo.toml: the pack has no version: set version in [package.metadata.kindgi]",
                "Cargo.toml: env name \"KINDGI_TOKEN\" starts with KINDGI_: those names configure Kindgi and are never a pack's",
                "Cargo.toml: env name \"1BAD\" is not a variable name (letters, digits and _, not starting with a digit)",
                "Cargo.toml: env name \"OK\" is both required and optional",
                "Cargo.toml: [package.metadata.kindgi] has an unknown key \"colour\" (known: id, version, env)",
            ]
        );
    }

    #[test]
    fn missing_table_and_bad_toml() {
        assert_eq!(
            parse_pack_config("[package]\nname='p'\n", "x/Cargo.toml").expect_err("no table"),
            [
                "x/Cargo.toml has no [package.metadata.kindgi] table: add one with the pack's id, e.g. id = \"acme\""
            ]
        );
        let problems = parse_pack_config("[package", "Cargo.toml").expect_err("bad toml");
        assert!(
            problems[0].starts_with("Cargo.toml is not valid TOML: "),
            "{problems:?}"
        );
    }
}
