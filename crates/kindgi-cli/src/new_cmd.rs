//! `kindgi new NAME`: a pack crate in `./NAME`, ready for `cargo test` and
//! `kindgi dev`: one tool, one check, a test, a `.gitignore` and a
//! container recipe. The files are the templates under `templates/`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::out::say;

/// Options of `kindgi new`.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The pack's name: its crate's, its folder's (`./NAME`) and its id.
    name: String,
    /// Depend on the `kindgi` crate in this folder instead of crates.io.
    #[arg(long, value_name = "PATH")]
    kindgi_path: Option<PathBuf>,
}

/// The files of a new pack: where each goes, and its template.
const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../templates/Cargo.toml.tmpl")),
    ("src/main.rs", include_str!("../templates/main.rs")),
    ("src/lib.rs", include_str!("../templates/lib.rs")),
    ("src/greet.rs", include_str!("../templates/greet.rs")),
    (
        "src/not_empty.rs",
        include_str!("../templates/not_empty.rs"),
    ),
    ("tests/pack.rs", include_str!("../templates/pack_test.rs")),
    (".gitignore", include_str!("../templates/gitignore")),
    ("Dockerfile", include_str!("../templates/Dockerfile")),
    (".dockerignore", include_str!("../templates/dockerignore")),
];

/// Crate names a pack can't take: Rust's own, and the one it depends on.
const TAKEN: &[&str] = &[
    "kindgi",
    "std",
    "core",
    "alloc",
    "test",
    "proc_macro",
    "proc-macro",
];

/// Why `name` can't name a pack, if it can't.
fn name_problem(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !well_formed {
        return Some(format!(
            "NAME must start with a lowercase letter and hold only lowercase letters, digits, - and _ (it names the crate, its folder and the pack), got {name:?}"
        ));
    }
    TAKEN.contains(&name).then(|| {
        format!("NAME can't be {name:?}: Rust or the pack's own dependencies use that crate name")
    })
}

/// Where the new `Cargo.toml` takes `kindgi` from, as the inside of an
/// inline table: `version = "0.1.0"` or `path = "…"`.
fn kindgi_dependency(path: Option<&Path>) -> Result<String, String> {
    let Some(path) = path else {
        return Ok(format!("version = \"{}\"", env!("CARGO_PKG_VERSION")));
    };
    let folder = std::fs::canonicalize(path)
        .ok()
        .filter(|p| p.join("Cargo.toml").is_file())
        .ok_or_else(|| {
            format!(
                "--kindgi-path {} holds no Cargo.toml: point it at the kindgi crate's folder",
                path.display()
            )
        })?;
    let quoted = toml::Value::String(folder.display().to_string()).to_string();
    Ok(format!("path = {quoted}"))
}

/// A template with its placeholders filled.
fn fill(template: &str, name: &str, kindgi: &str) -> String {
    template
        .replace("{{name}}", name)
        .replace("{{crate}}", &name.replace('-', "_"))
        .replace("{{kindgi}}", kindgi)
}

/// Whether `dir` can take the new pack: absent, or an empty folder.
fn refusal(dir: &Path, shown: &str) -> Option<String> {
    if !dir.exists() {
        return None;
    }
    if !dir.is_dir() {
        return Some(format!("{shown} exists and is not a folder"));
    }
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
        Ok(true) => None,
        Ok(false) => Some(format!(
            "{shown} already exists and is not empty: pick another name, or empty it"
        )),
        Err(e) => Some(format!("Cannot read {shown}: {e}")),
    }
}

/// `kindgi new`.
pub(crate) fn run(args: &NewArgs) -> anyhow::Result<ExitCode> {
    let usage = |msg: &str| {
        eprintln!("error: {msg}\n\nFor more information, try '--help'.");
        ExitCode::from(2)
    };
    if let Some(problem) = name_problem(&args.name) {
        return Ok(usage(&problem));
    }
    let kindgi = match kindgi_dependency(args.kindgi_path.as_deref()) {
        Ok(line) => line,
        Err(problem) => return Ok(usage(&problem)),
    };
    let name = &args.name;
    let dir = PathBuf::from(name);
    let shown = format!("./{name}");
    if let Some(refused) = refusal(&dir, &shown) {
        eprintln!("kindgi: {refused}");
        return Ok(ExitCode::FAILURE);
    }
    for (file, template) in FILES {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("Cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, fill(template, name, &kindgi))
            .with_context(|| format!("Cannot write {}", path.display()))?;
    }
    say(&format!(
        "Created the pack {name} in {shown}: a tool ({name}.greet), a check ({name}.not-empty), a test and a Dockerfile.\nNext:\n  cd {name}\n  cargo test\n  kindgi dev"
    ));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_crate_name_and_a_pack_id() {
        assert_eq!(name_problem("acme-desk_2"), None);
        assert_eq!(
            name_problem("Acme").as_deref(),
            Some(
                r#"NAME must start with a lowercase letter and hold only lowercase letters, digits, - and _ (it names the crate, its folder and the pack), got "Acme""#
            )
        );
        for bad in ["", "1pack", "a.b", "a/b", "../x"] {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
        assert_eq!(
            name_problem("kindgi").as_deref(),
            Some(
                r#"NAME can't be "kindgi": Rust or the pack's own dependencies use that crate name"#
            )
        );
    }

    #[test]
    fn placeholders_are_filled() {
        let manifest = fill(FILES[0].1, "acme-desk", "version = \"0.1.0\"");
        let parsed: toml::Table = manifest.parse().expect("a manifest");
        assert_eq!(parsed["package"]["name"].as_str(), Some("acme-desk"));
        assert_eq!(
            parsed["package"]["metadata"]["kindgi"]["id"].as_str(),
            Some("acme-desk")
        );
        assert_eq!(
            parsed["dependencies"]["kindgi"]["version"].as_str(),
            Some("0.1.0")
        );
        assert_eq!(
            parsed["dev-dependencies"]["kindgi"]["features"][0].as_str(),
            Some("testing")
        );
        assert!(parsed["dependencies"].get("serde").is_none());
        assert_eq!(
            parsed["profile"]["dev"]["debug"].as_str(),
            Some("line-tables-only")
        );
        assert_eq!(parsed["profile"]["release"]["lto"].as_str(), Some("fat"));
        assert_eq!(
            parsed["profile"]["release"]["codegen-units"].as_integer(),
            Some(1)
        );
        let main = FILES
            .iter()
            .find(|(file, _)| *file == "src/main.rs")
            .map(|(_, template)| fill(template, "acme-desk", ""))
            .expect("a main.rs template");
        assert!(main.contains("acme_desk::pack().run()"), "{main}");
        for (file, template) in FILES {
            assert!(!fill(template, "a", "k").contains("{{"), "{file}");
        }
    }
}
