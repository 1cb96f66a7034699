//! Building and indexing the pack: `cargo build` of its crate (its binary
//! found in cargo's JSON messages), then `<bin> index`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// How to build the pack.
#[derive(Debug, Clone)]
pub(crate) struct BuildOptions {
    /// The pack's folder (its `Cargo.toml`), canonical.
    pub(crate) pack_dir: PathBuf,
    /// The binary to serve, when the crate has several.
    pub(crate) bin: Option<String>,
    /// Build with `--release`.
    pub(crate) release: bool,
}

/// A finished build.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    /// The pack's binary as cargo left it.
    pub(crate) executable: PathBuf,
    /// How long the build took.
    pub(crate) took: Duration,
    /// The compiler's warnings, rendered.
    pub(crate) warnings: Vec<String>,
}

/// Why a build or index didn't produce something to serve: a headline and
/// the details to print under it (the compiler's rendered errors, or the
/// indexer's problems).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// One line: what failed.
    pub(crate) headline: String,
    /// The details, each printed as is.
    pub(crate) details: Vec<String>,
}

impl Failure {
    pub(crate) fn new(headline: impl Into<String>, details: Vec<String>) -> Self {
        Self {
            headline: headline.into(),
            details,
        }
    }
}

/// The `cargo` to run: `$CARGO` (set when `kindgi` itself runs under
/// cargo), else the one on `PATH`.
fn cargo() -> std::ffi::OsString {
    std::env::var_os("CARGO")
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "cargo".into())
}

/// What cargo's JSON messages said.
#[derive(Debug, Default)]
struct Messages {
    /// `(target name, executable)` of each binary of the pack's package.
    binaries: Vec<(String, PathBuf)>,
    errors: Vec<String>,
    warnings: Vec<String>,
    success: Option<bool>,
}

impl Messages {
    /// Reads one line of `cargo build --message-format=json…` output.
    fn read(&mut self, line: &str, manifest: &Path) {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            return;
        };
        match message["reason"].as_str() {
            Some("compiler-message") => {
                let rendered = message["message"]["rendered"].as_str().unwrap_or_default();
                match message["message"]["level"].as_str() {
                    Some("error" | "error: internal compiler error") => {
                        self.errors.push(rendered.trim_end().to_owned());
                    }
                    Some("warning") => self.warnings.push(rendered.trim_end().to_owned()),
                    _ => {}
                }
            }
            Some("compiler-artifact") => {
                let is_bin = message["target"]["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"));
                let ours = message["manifest_path"]
                    .as_str()
                    .is_some_and(|p| same_file(Path::new(p), manifest));
                if let (true, true, Some(executable)) =
                    (is_bin, ours, message["executable"].as_str())
                {
                    let name = message["target"]["name"].as_str().unwrap_or_default();
                    self.binaries
                        .push((name.to_owned(), PathBuf::from(executable)));
                }
            }
            Some("build-finished") => self.success = message["success"].as_bool(),
            _ => {}
        }
    }

    /// The binary to serve.
    fn binary(&self, wanted: Option<&str>, package: Option<&str>) -> Result<PathBuf, Failure> {
        let names = || {
            self.binaries
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(wanted) = wanted {
            return self
                .binaries
                .iter()
                .find(|(name, _)| name == wanted)
                .map(|(_, path)| path.clone())
                .ok_or_else(|| {
                    Failure::new(
                        format!(
                            "the build made no binary named {wanted} (it made: {})",
                            names()
                        ),
                        Vec::new(),
                    )
                });
        }
        match self.binaries.as_slice() {
            [] => Err(Failure::new(
                "the build made no binary: a pack is a binary crate whose main hands over to kindgi::Pack::run",
                Vec::new(),
            )),
            [(_, only)] => Ok(only.clone()),
            several => several
                .iter()
                .find(|(name, _)| Some(name.as_str()) == package)
                .map(|(_, path)| path.clone())
                .ok_or_else(|| {
                    Failure::new(
                        format!(
                            "the crate has several binaries ({}): pass --bin NAME",
                            names()
                        ),
                        Vec::new(),
                    )
                }),
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The `[package] name` of the pack's manifest, when it can be read.
fn package_name(manifest: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let doc: toml::Table = text.parse().ok()?;
    doc.get("package")?.get("name")?.as_str().map(str::to_owned)
}

/// Runs `cargo build` on the pack and finds its binary.
///
/// Cargo's own progress stays quiet, except a line saying it waits for
/// another build's lock; the compiler's errors are the failure's details.
pub(crate) async fn build(options: &BuildOptions) -> Result<Built, Failure> {
    let started = Instant::now();
    let manifest = options.pack_dir.join("Cargo.toml");
    let format = if std::io::stderr().is_terminal() {
        "--message-format=json-diagnostic-rendered-ansi"
    } else {
        "--message-format=json"
    };
    let mut command = Command::new(cargo());
    command
        .arg("build")
        .arg("--manifest-path")
        .arg(&manifest)
        .arg(format)
        .current_dir(&options.pack_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(bin) = &options.bin {
        command.arg("--bin").arg(bin);
    }
    if options.release {
        command.arg("--release");
    }
    let mut child = command.spawn().map_err(|e| {
        Failure::new(
            format!("cannot run cargo ({}): {e}", cargo().to_string_lossy()),
            Vec::new(),
        )
    })?;
    let stderr = child.stderr.take().map(|stderr| {
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            let mut kept = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("Blocking waiting for file lock") {
                    eprintln!("kindgi dev: cargo is waiting for another build to finish");
                }
                let trimmed = line.trim_start();
                if trimmed.starts_with("error")
                    || trimmed.starts_with("Caused by")
                    || trimmed.starts_with("  ")
                {
                    kept.push(line);
                }
            }
            kept
        })
    });
    let mut messages = Messages::default();
    if let Some(stdout) = child.stdout.take() {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            messages.read(&line, &manifest);
        }
    }
    let status = child
        .wait()
        .await
        .map_err(|e| Failure::new(format!("cargo didn't finish: {e}"), Vec::new()))?;
    let cargo_errors = match stderr {
        Some(task) => task.await.unwrap_or_default(),
        None => Vec::new(),
    };
    if !status.success() || messages.success == Some(false) {
        let mut details = messages.errors;
        if details.is_empty() {
            details = cargo_errors;
        }
        return Err(Failure::new("the build failed", details));
    }
    let executable = messages.binary(options.bin.as_deref(), package_name(&manifest).as_deref())?;
    Ok(Built {
        executable,
        took: started.elapsed(),
        warnings: messages.warnings,
    })
}

/// Runs `<bin> index` into `output`, with `artifact_version` pinned.
pub(crate) async fn index(
    executable: &Path,
    pack_dir: &Path,
    output: &Path,
    artifact_version: &str,
) -> Result<(), Failure> {
    let ran = Command::new(executable)
        .arg("index")
        .arg("--pack-dir")
        .arg(pack_dir)
        .arg("--output")
        .arg(output)
        .args(["--artifact-version", artifact_version, "--json"])
        .current_dir(pack_dir)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| {
            Failure::new(
                format!("cannot run the pack's index command: {e}"),
                Vec::new(),
            )
        })?;
    let stdout = String::from_utf8_lossy(&ran.stdout);
    let answer = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<Value>(line).ok());
    match answer {
        Some(answer) if answer["kind"] == "ok" && ran.status.success() => Ok(()),
        Some(answer) if answer["kind"] == "err" => {
            let error = &answer["error"];
            let message = error["message"].as_str().unwrap_or("failed");
            let problems = error["problems"]
                .as_array()
                .map(|p| {
                    p.iter()
                        .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            Err(Failure::new(
                format!("indexing failed: {message}"),
                problems,
            ))
        }
        _ => {
            let stderr = String::from_utf8_lossy(&ran.stderr);
            Err(Failure::new(
                format!("indexing failed ({})", ran.status),
                stderr.lines().map(str::to_owned).collect(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(manifest: &str, name: &str, kind: &str, exe: Option<&str>) -> String {
        serde_json::json!({
            "reason": "compiler-artifact",
            "manifest_path": manifest,
            "target": {"name": name, "kind": [kind]},
            "executable": exe,
        })
        .to_string()
    }

    #[test]
    fn finds_the_packs_binary_among_the_artifacts() {
        let manifest = Path::new("/nowhere/pack/Cargo.toml");
        let mut messages = Messages::default();
        for line in [
            artifact("/nowhere/dep/Cargo.toml", "dep", "bin", Some("/t/dep")),
            artifact("/nowhere/pack/Cargo.toml", "pack", "lib", None),
            artifact("/nowhere/pack/Cargo.toml", "pack", "bin", Some("/t/pack")),
            r#"{"reason":"build-finished","success":true}"#.to_owned(),
            "not json".to_owned(),
        ] {
            messages.read(&line, manifest);
        }
        assert_eq!(messages.success, Some(true));
        assert_eq!(messages.binary(None, None), Ok(PathBuf::from("/t/pack")));
        assert!(messages.binary(Some("other"), None).is_err());
    }

    #[test]
    fn several_binaries_need_a_choice() {
        let manifest = Path::new("/nowhere/pack/Cargo.toml");
        let mut messages = Messages::default();
        messages.read(
            &artifact("/nowhere/pack/Cargo.toml", "a", "bin", Some("/t/a")),
            manifest,
        );
        messages.read(
            &artifact("/nowhere/pack/Cargo.toml", "b", "bin", Some("/t/b")),
            manifest,
        );
        let failure = messages.binary(None, Some("pack")).expect_err("ambiguous");
        assert_eq!(
            failure.headline,
            "the crate has several binaries (a, b): pass --bin NAME"
        );
        assert_eq!(messages.binary(None, Some("b")), Ok(PathBuf::from("/t/b")));
        assert_eq!(messages.binary(Some("a"), None), Ok(PathBuf::from("/t/a")));
    }

    #[test]
    fn keeps_the_compilers_rendered_errors() {
        let mut messages = Messages::default();
        let error = serde_json::json!({
            "reason": "compiler-message",
            "message": {"level": "error", "rendered": "error[E0308]: mismatched types\n --> src/a.rs:1:1\n"},
        });
        messages.read(&error.to_string(), Path::new("/x/Cargo.toml"));
        assert_eq!(
            messages.errors,
            ["error[E0308]: mismatched types\n --> src/a.rs:1:1"]
        );
    }
}
