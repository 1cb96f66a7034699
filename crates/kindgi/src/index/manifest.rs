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
//!
//! The package's version may be the workspace's (`version.workspace =
//! true`): [`read_pack_config`] then reads it from `[workspace.package]` of
//! the enclosing workspace, found as cargo finds it (the manifest's own
//! `[workspace]`, its `package.workspace` path, else the nearest folder
//! above whose `Cargo.toml` has `[workspace]`).

use std::path::{Path, PathBuf};

use kindgi_protocol::EnvSpec;
use toml::Value;

use super::PackProblems;

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

/// Reads `<pack_dir>/Cargo.toml`, and the enclosing workspace's manifest
/// when the package's version is the workspace's.
///
/// # Errors
///
/// Every problem found, each a sentence naming the file and the key.
pub fn read_pack_config(pack_dir: &Path) -> Result<PackConfig, PackProblems> {
    let path = pack_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| vec![format!("Cannot read {}: {e}", path.display())])?;
    let origin = path.display().to_string();
    Ok(parse_with(&text, &origin, &|doc| {
        workspace_version(doc, pack_dir, &origin)
    })?)
}

/// Parses the text of a pack's `Cargo.toml`; `origin` names it in messages.
///
/// Text alone has no folder to find a workspace from: a version inherited
/// from the workspace (`version.workspace = true`) is read only from the
/// same manifest's `[workspace.package]`. [`read_pack_config`] finds the
/// enclosing workspace.
///
/// # Errors
///
/// As [`read_pack_config`].
pub fn parse_pack_config(text: &str, origin: &str) -> Result<PackConfig, PackProblems> {
    Ok(parse_with(
        text,
        origin,
        &|doc| match doc.get("workspace") {
            Some(_) => version_of_workspace(doc, origin, origin),
            None => Err(format!(
                "{origin}: the package's version is the workspace's (version.workspace = true), and this manifest alone doesn't say the workspace's version: set version in [package.metadata.kindgi]"
            )),
        },
    )?)
}

/// The workspace's package version, for a manifest whose `[package]`
/// version is `{ workspace = true }`.
type WorkspaceVersion<'a> = dyn Fn(&toml::Table) -> Result<String, String> + 'a;

fn parse_with(
    text: &str,
    origin: &str,
    workspace: &WorkspaceVersion<'_>,
) -> Result<PackConfig, Vec<String>> {
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
            Some(Value::Table(inherit))
                if inherit.get("workspace").and_then(Value::as_bool) == Some(true) =>
            {
                workspace(&doc).unwrap_or_else(|problem| {
                    problems.push(problem);
                    String::new()
                })
            }
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

/// The version of the workspace that encloses the pack at `pack_dir`,
/// whose manifest `doc` (read from `origin`) inherits it.
fn workspace_version(doc: &toml::Table, pack_dir: &Path, origin: &str) -> Result<String, String> {
    if doc.contains_key("workspace") {
        return version_of_workspace(doc, origin, origin);
    }
    let root = match doc
        .get("package")
        .and_then(|p| p.get("workspace"))
        .and_then(Value::as_str)
    {
        Some(explicit) => pack_dir.join(explicit).join("Cargo.toml"),
        None => enclosing_workspace(pack_dir).ok_or_else(|| {
            format!(
                "{origin}: the package's version is the workspace's (version.workspace = true), but no folder above {} has a Cargo.toml with [workspace]",
                pack_dir.display()
            )
        })?,
    };
    let shown = root.display().to_string();
    let text = std::fs::read_to_string(&root).map_err(|e| format!("Cannot read {shown}: {e}"))?;
    let root_doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{shown} is not valid TOML: {}", e.message()))?;
    version_of_workspace(&root_doc, &shown, origin)
}

/// `[workspace.package] version` of the workspace manifest `doc`, read
/// from `root`, for the pack manifest `origin`.
fn version_of_workspace(doc: &toml::Table, root: &str, origin: &str) -> Result<String, String> {
    let version = doc
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("version"));
    match version {
        Some(Value::String(v)) if !v.trim().is_empty() => Ok(v.clone()),
        Some(_) => Err(format!(
            "{root}: [workspace.package] version must be a non-empty string"
        )),
        None => Err(format!(
            "{origin}: the package's version is the workspace's (version.workspace = true), but {root} has no version in [workspace.package]"
        )),
    }
}

/// The nearest `Cargo.toml` with a `[workspace]` table in a folder above
/// `pack_dir`.
fn enclosing_workspace(pack_dir: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(pack_dir).unwrap_or_else(|_| pack_dir.to_path_buf());
    start.ancestors().skip(1).find_map(|dir| {
        let manifest = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).ok()?;
        let doc: toml::Table = text.parse().ok()?;
        doc.contains_key("workspace").then_some(manifest)
    })
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
        .expect_err("invalid")
        .into_vec();
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

    /// A workspace in a temporary folder: its root manifest, and a pack in
    /// `packs/acme` whose manifest is `pack`.
    fn workspace(root: &str, pack: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("Cargo.toml"), root).expect("root manifest");
        let pack_dir = dir.path().join("packs/acme");
        std::fs::create_dir_all(&pack_dir).expect("pack folder");
        std::fs::write(pack_dir.join("Cargo.toml"), pack).expect("pack manifest");
        dir
    }

    const INHERITING: &str = r#"
        [package]
        name = "acme"
        version.workspace = true
        [package.metadata.kindgi]
        id = "acme"
        "#;

    #[test]
    fn reads_a_version_inherited_from_the_workspace() {
        let dir = workspace(
            "[workspace]\nmembers = [\"packs/*\"]\n[workspace.package]\nversion = \"2.4.1\"\n",
            INHERITING,
        );
        let config = read_pack_config(&dir.path().join("packs/acme")).expect("resolved");
        assert_eq!(config.version, "2.4.1");

        // `package.workspace` names the root; a manifest that is its own
        // workspace reads its own [workspace.package].
        let elsewhere = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            elsewhere.path().join("Cargo.toml"),
            "[workspace]\n[workspace.package]\nversion = \"3.0.0\"\n",
        )
        .expect("root");
        let pointed = INHERITING.replace(
            "version.workspace = true",
            &format!(
                "version.workspace = true\nworkspace = {:?}",
                elsewhere.path().display().to_string()
            ),
        );
        let dir = workspace("[package]\nname = \"not-a-workspace\"\n", &pointed);
        let config = read_pack_config(&dir.path().join("packs/acme")).expect("resolved");
        assert_eq!(config.version, "3.0.0");
        let own = format!("{INHERITING}\n[workspace]\n[workspace.package]\nversion = \"0.9.0\"\n");
        assert_eq!(
            parse_pack_config(&own, "Cargo.toml")
                .expect("resolved")
                .version,
            "0.9.0"
        );
        // [package.metadata.kindgi] version still wins.
        let pinned = INHERITING.replace("id = \"acme\"", "id = \"acme\"\nversion = \"1.0.0\"");
        assert_eq!(
            parse_pack_config(&pinned, "Cargo.toml")
                .expect("pinned")
                .version,
            "1.0.0"
        );
    }

    #[test]
    fn an_inherited_version_that_cant_be_resolved_names_the_files() {
        let dir = workspace("[workspace]\nmembers = [\"packs/*\"]\n", INHERITING);
        let pack_dir = dir.path().join("packs/acme");
        let problems = read_pack_config(&pack_dir)
            .expect_err("no version")
            .into_vec();
        let root = std::fs::canonicalize(dir.path())
            .expect("root")
            .join("Cargo.toml");
        assert_eq!(
            problems,
            [format!(
                "{}: the package's version is the workspace's (version.workspace = true), but {} has no version in [workspace.package]",
                pack_dir.join("Cargo.toml").display(),
                root.display()
            )]
        );

        let alone = tempfile::tempdir().expect("temp dir");
        std::fs::write(alone.path().join("Cargo.toml"), INHERITING).expect("manifest");
        let problems = read_pack_config(alone.path())
            .expect_err("no workspace")
            .into_vec();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with(&format!(
                "{}: the package's version is the workspace's (version.workspace = true), but no folder above ",
                alone.path().join("Cargo.toml").display()
            )),
            "{problems:?}"
        );

        assert_eq!(
            parse_pack_config(INHERITING, "x/Cargo.toml")
                .expect_err("text alone")
                .into_vec(),
            [
                "x/Cargo.toml: the package's version is the workspace's (version.workspace = true), and this manifest alone doesn't say the workspace's version: set version in [package.metadata.kindgi]"
            ]
        );
    }

    #[test]
    fn missing_table_and_bad_toml() {
        assert_eq!(
            parse_pack_config("[package]\nname='p'\n", "x/Cargo.toml")
                .expect_err("no table")
                .into_vec(),
            [
                "x/Cargo.toml has no [package.metadata.kindgi] table: add one with the pack's id, e.g. id = \"acme\""
            ]
        );
        let problems = parse_pack_config("[package", "Cargo.toml")
            .expect_err("bad toml")
            .into_vec();
        assert!(
            problems[0].starts_with("Cargo.toml is not valid TOML: "),
            "{problems:?}"
        );
    }
}
