//! `kindgi new NAME`: a pack crate in `./NAME`, ready for `cargo test` and
//! `kindgi dev`: one tool, one check, a test, a `.gitignore`, a container
//! recipe and an `AGENTS.md` for coding agents. The files are the
//! templates under `templates/`.

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
    /// Depend on the `kindgi` crate in this folder (default: the checkout
    /// this command was installed from, when it is still there).
    #[arg(long, value_name = "PATH", conflicts_with = "crates_io")]
    kindgi_path: Option<PathBuf>,
    /// Depend on `kindgi` from the registry (crates.io or your mirror) even
    /// when this command was installed from a checkout.
    #[arg(long)]
    crates_io: bool,
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
    ("AGENTS.md", include_str!("../templates/AGENTS.md")),
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

/// Where the new pack takes `kindgi` from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sdk {
    /// The registry's `kindgi` of this command's version.
    Registry,
    /// The `kindgi` crate in this folder (absolute).
    Path(PathBuf),
}

impl Sdk {
    /// The inside of the manifest's inline table: `version = "0.1.0"` or
    /// `path = "…"`.
    fn dependency(&self) -> String {
        match self {
            Self::Registry => format!("version = \"{}\"", env!("CARGO_PKG_VERSION")),
            Self::Path(folder) => {
                let quoted = toml::Value::String(folder.display().to_string()).to_string();
                format!("path = {quoted}")
            }
        }
    }
}

/// The `kindgi` crate of the checkout this command was built from, while
/// it is still there (`cargo install --path crates/kindgi-cli` from a clone
/// builds it there; one installed from a registry has no such folder).
fn checkout_sdk() -> Option<PathBuf> {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sdk = cli.parent()?.join("kindgi");
    let workspace = cli.parent()?.parent()?.join("Cargo.toml");
    (sdk.join("Cargo.toml").is_file() && workspace.is_file())
        .then(|| std::fs::canonicalize(&sdk).ok())
        .flatten()
}

/// Where the new pack takes `kindgi` from: `--kindgi-path`, else (without
/// `--crates-io`) the checkout this command was built from, else the
/// registry.
fn choose_sdk(args: &NewArgs, checkout: Option<PathBuf>) -> Result<Sdk, String> {
    if let Some(path) = &args.kindgi_path {
        return std::fs::canonicalize(path)
            .ok()
            .filter(|p| p.join("Cargo.toml").is_file())
            .map(Sdk::Path)
            .ok_or_else(|| {
                format!(
                    "--kindgi-path {} holds no Cargo.toml: point it at the kindgi crate's folder (crates/kindgi in a checkout)",
                    path.display()
                )
            });
    }
    Ok(match checkout {
        Some(folder) if !args.crates_io => Sdk::Path(folder),
        _ => Sdk::Registry,
    })
}

/// Whether cargo can resolve the new pack's dependencies, `kindgi` from
/// the registry among them: `Err` says what to do when it can't.
fn resolves(dir: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let resolved = std::process::Command::new(cargo)
        .args(["generate-lockfile", "--quiet"])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("Cannot run cargo to resolve the pack's dependencies: {e}"))?;
    if resolved.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&resolved.stderr);
    if said.contains("no matching package named `kindgi` found") {
        return Err(format!(
            "kindgi {} is not on the registry cargo reaches (crates.io or your mirror), so the pack would not build. Make it against a checkout of the SDK instead: kindgi new NAME --kindgi-path <checkout>/crates/kindgi (or install this command from the checkout: cargo install --locked --path <checkout>/crates/kindgi-cli)",
            env!("CARGO_PKG_VERSION")
        ));
    }
    Err(format!(
        "cargo could not resolve the pack's dependencies:\n{}",
        said.trim_end()
    ))
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
    let sdk = match choose_sdk(args, checkout_sdk()) {
        Ok(sdk) => sdk,
        Err(problem) => return Ok(usage(&problem)),
    };
    let kindgi = sdk.dependency();
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
    let from = match &sdk {
        Sdk::Registry => {
            if let Err(problem) = resolves(&dir) {
                // Nothing half-made stays behind.
                let _ = std::fs::remove_dir_all(&dir);
                eprintln!("kindgi: {problem}");
                return Ok(ExitCode::FAILURE);
            }
            format!(
                "It depends on kindgi {} from the registry.",
                env!("CARGO_PKG_VERSION")
            )
        }
        Sdk::Path(folder) => format!(
            "It depends on the kindgi crate at {} (--kindgi-path, else the checkout this command was installed from). Its Dockerfile builds only what is in ./{name}: to build the image, copy that checkout into the pack's folder and point the path there, or depend on a published kindgi.",
            folder.display()
        ),
    };
    say(&format!(
        "Created the pack {name} in {shown}: a tool ({name}.greet), a check ({name}.not-empty), a test, a Dockerfile and an AGENTS.md for coding agents.\n{from}\nNext:\n  cd {name}\n  cargo test\n  kindgi dev"
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

    fn args(list: &[&str]) -> NewArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            new: NewArgs,
        }
        let argv = std::iter::once("new").chain(list.iter().copied());
        Cli::try_parse_from(argv).expect("arguments").new
    }

    #[test]
    fn the_sdk_is_the_flag_s_else_the_checkout_s_else_the_registry_s() {
        let checkout = std::env::temp_dir();
        let here = Some(checkout.clone());
        assert_eq!(
            choose_sdk(&args(&["p"]), here.clone()),
            Ok(Sdk::Path(checkout))
        );
        assert_eq!(
            choose_sdk(&args(&["p", "--crates-io"]), here),
            Ok(Sdk::Registry)
        );
        assert_eq!(choose_sdk(&args(&["p"]), None), Ok(Sdk::Registry));
        assert_eq!(
            choose_sdk(&args(&["p", "--kindgi-path", "/nowhere"]), None),
            Err("--kindgi-path /nowhere holds no Cargo.toml: point it at the kindgi crate's folder (crates/kindgi in a checkout)".to_owned())
        );
        // Built in this workspace: its SDK crate.
        let sdk = checkout_sdk().expect("this checkout's kindgi");
        assert!(sdk.ends_with("crates/kindgi"), "{}", sdk.display());
    }

    /// The Dockerfile's check for a kindgi the image build can't see, run
    /// by `sh` on each kind of manifest.
    #[test]
    fn the_dockerfile_refuses_a_kindgi_outside_the_pack() {
        let dockerfile = FILES
            .iter()
            .find(|(file, _)| *file == "Dockerfile")
            .map(|(_, text)| *text)
            .expect("a Dockerfile");
        let start = dockerfile.find("RUN if grep").expect("the check") + "RUN ".len();
        let end = start + dockerfile[start..].find("fi\n").expect("its end") + 2;
        let script = dockerfile[start..end].replace("\\\n", "\n");
        let dir = tempfile::tempdir().expect("temp dir");
        let run = |manifest: &str| {
            std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("manifest");
            let out = std::process::Command::new("sh")
                .args(["-c", &script])
                .current_dir(dir.path())
                .output()
                .expect("sh runs");
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        for outside in ["/home/me/kindgi/crates/kindgi", "../kindgi/crates/kindgi"] {
            let manifest = fill(FILES[0].1, "p", &format!("path = \"{outside}\""));
            assert_eq!(
                run(&manifest),
                (
                    Some(1),
                    "error: Cargo.toml takes kindgi from a folder outside this one, which the image build cannot see: copy that checkout into this folder and point the path there (kindgi = { path = \"vendor/kindgi/crates/kindgi\" }), or depend on a published kindgi\n".to_owned()
                ),
                "{outside}"
            );
        }
        for fine in [
            "path = \"vendor/kindgi/crates/kindgi\"",
            "version = \"0.1.0\"",
        ] {
            assert_eq!(
                run(&fill(FILES[0].1, "p", fine)),
                (Some(0), String::new()),
                "{fine}"
            );
        }
    }
}
