//! Building and indexing the pack: `cargo build` of its crate (its binary
//! found in cargo's JSON messages), then `<bin> index`. Each build also
//! says what it was built from ([`Inputs`]): the path packages cargo's
//! messages name, and the files cargo's dep-info for the binary lists.

use std::collections::BTreeSet;
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

/// What a build was built from, as far as cargo says: for the watcher.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Inputs {
    /// The folders of the build's path packages (the pack's, and its path
    /// dependencies'), as their manifests name them.
    pub(crate) packages: BTreeSet<PathBuf>,
    /// Every file cargo's dep-info for the binary lists (sources of path
    /// packages, files they include, build scripts' `rerun-if-changed`),
    /// but what lies under the build's output folders or cargo's home.
    pub(crate) files: BTreeSet<PathBuf>,
    /// The manifest of the workspace the pack belongs to, when there is one
    /// above the pack's folder.
    pub(crate) workspace_manifest: Option<PathBuf>,
}

/// What cargo's JSON messages said.
#[derive(Debug, Default)]
struct Messages {
    /// `(target name, executable)` of each binary of the pack's package.
    binaries: Vec<(String, PathBuf)>,
    errors: Vec<String>,
    warnings: Vec<String>,
    success: Option<bool>,
    /// The folders of the path packages any message named.
    packages: BTreeSet<PathBuf>,
    /// Build scripts' output folders.
    out_dirs: Vec<PathBuf>,
}

impl Messages {
    /// Reads one line of `cargo build --message-format=json…` output.
    fn read(&mut self, line: &str, manifest: &Path) {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            return;
        };
        if let (Some(id), Some(manifest)) = (
            message["package_id"].as_str(),
            message["manifest_path"].as_str(),
        ) && is_path_package(id)
            && let Some(dir) = Path::new(manifest).parent()
        {
            self.packages.insert(dir.to_path_buf());
        }
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
            Some("build-script-executed") => {
                if let Some(out_dir) = message["out_dir"].as_str() {
                    self.out_dirs.push(PathBuf::from(out_dir));
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

/// Whether a cargo package id is a path package's, in the current
/// (`path+file:///…#name@1.0.0`) or the older (`name 1.0.0 (path+file:///…)`)
/// spelling.
fn is_path_package(id: &str) -> bool {
    id.starts_with("path+") || id.contains("(path+")
}

/// The files a dep-info file (`target: dep dep…`, spaces in a path
/// escaped as `\ `) lists after its targets; a relative path is taken
/// from `base`.
fn dep_info_files(text: &str, base: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in text.lines() {
        let Some((_target, deps)) = line.split_once(": ") else {
            continue;
        };
        let mut current = String::new();
        let mut chars = deps.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        files.push(base.join(std::mem::take(&mut current)));
                    }
                }
                c => current.push(c),
            }
        }
        if !current.is_empty() {
            files.push(base.join(current));
        }
    }
    files
}

/// Where cargo keeps the registry's and git dependencies' sources.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
}

/// The dep-info file cargo writes beside a binary: `<bin>.d`.
fn dep_info_of(executable: &Path) -> Option<PathBuf> {
    let name = executable.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(std::env::consts::EXE_SUFFIX)
        .filter(|stem| !stem.is_empty())
        .unwrap_or(name);
    Some(executable.with_file_name(format!("{stem}.d")))
}

/// The manifest of the nearest folder above `pack_dir` whose `Cargo.toml`
/// has a `[workspace]` table.
fn workspace_manifest(pack_dir: &Path) -> Option<PathBuf> {
    pack_dir.ancestors().skip(1).find_map(|dir| {
        let manifest = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).ok()?;
        let doc: toml::Table = text.parse().ok()?;
        doc.contains_key("workspace").then_some(manifest)
    })
}

impl Messages {
    /// What the build was built from: the packages the messages named, and
    /// the files of the binary's dep-info, when the build made one.
    fn inputs(&self, pack_dir: &Path, executable: Option<&Path>) -> Inputs {
        let mut inputs = Inputs {
            packages: self.packages.clone(),
            workspace_manifest: workspace_manifest(pack_dir),
            ..Inputs::default()
        };
        let Some(executable) = executable else {
            return inputs;
        };
        let Some(text) = dep_info_of(executable).and_then(|d| std::fs::read_to_string(d).ok())
        else {
            return inputs;
        };
        // Nothing the build writes, nor the registry's sources, is source.
        let mut outputs: Vec<PathBuf> = self.out_dirs.clone();
        outputs.extend(
            executable
                .parent()
                .and_then(Path::parent)
                .map(Path::to_path_buf),
        );
        if let Some(home) = cargo_home() {
            outputs.push(home.join("registry"));
            outputs.push(home.join("git"));
        }
        inputs.files = dep_info_files(&text, pack_dir)
            .into_iter()
            .filter(|file| !outputs.iter().any(|out| file.starts_with(out)))
            .collect();
        inputs
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

/// Runs `cargo build` on the pack and finds its binary; says what the
/// build was built from, whether it succeeded or not.
///
/// Cargo's own progress stays quiet, except a line saying it waits for
/// another build's lock; the compiler's errors are the failure's details.
pub(crate) async fn build(options: &BuildOptions) -> (Inputs, Result<Built, Failure>) {
    let mut messages = Messages::default();
    let built = run_cargo(options, &mut messages).await;
    let executable = built.as_ref().ok().map(|b| b.executable.as_path());
    (messages.inputs(&options.pack_dir, executable), built)
}

async fn run_cargo(options: &BuildOptions, messages: &mut Messages) -> Result<Built, Failure> {
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
        let mut details = std::mem::take(&mut messages.errors);
        if details.is_empty() {
            details = cargo_errors;
        }
        return Err(Failure::new("the build failed", details));
    }
    let executable = messages.binary(options.bin.as_deref(), package_name(&manifest).as_deref())?;
    Ok(Built {
        executable,
        took: started.elapsed(),
        warnings: std::mem::take(&mut messages.warnings),
    })
}

/// Runs `<bin> index` into `output`, with `artifact_version` pinned: the
/// indexer's warnings (what the pack should change, though it builds).
pub(crate) async fn index(
    executable: &Path,
    pack_dir: &Path,
    output: &Path,
    artifact_version: &str,
) -> Result<Vec<String>, Failure> {
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
        Some(answer) if answer["kind"] == "ok" && ran.status.success() => {
            Ok(answer["value"]["warnings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|w| w["message"].as_str())
                .map(|message| format!("warning: {message}"))
                .collect())
        }
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
    fn reads_dep_info_and_the_path_packages_named() {
        let dir = tempfile::tempdir().expect("dir");
        let target = dir.path().join("target");
        let executable = target
            .join("debug")
            .join(format!("pack{}", std::env::consts::EXE_SUFFIX));
        std::fs::create_dir_all(executable.parent().expect("parent")).expect("mkdir");
        let pack = dir.path().join("my pack");
        let helper = dir.path().join("helper");
        let home = cargo_home().expect("cargo home");
        let registry = home.join("registry/src/index/serde-1.0.0/src/lib.rs");
        let out_dir = target.join("debug/build/pack-1/out");
        let dep_info = format!(
            "{exe}: {pack}/src/main.rs {pack}/src/tools/echo.rs {helper}/src/lib.rs {helper}/words.txt {registry} {out}/generated.rs src/relative.rs\n",
            exe = executable.display(),
            pack = pack.display().to_string().replace(' ', "\\ "),
            helper = helper.display(),
            registry = registry.display(),
            out = out_dir.display(),
        );
        std::fs::write(dep_info_of(&executable).expect("dep-info path"), dep_info).expect("write");

        let mut messages = Messages::default();
        for line in [
            serde_json::json!({"reason": "compiler-artifact", "package_id": format!("path+file://{}#helper@0.1.0", helper.display()),
                "manifest_path": helper.join("Cargo.toml"), "target": {"name": "helper", "kind": ["lib"]}}),
            serde_json::json!({"reason": "compiler-artifact", "package_id": "registry+https://github.com/rust-lang/crates.io-index#serde@1.0.0",
                "manifest_path": home.join("registry/src/index/serde-1.0.0/Cargo.toml"), "target": {"name": "serde", "kind": ["lib"]}}),
            serde_json::json!({"reason": "build-script-executed", "package_id": format!("pack 0.1.0 (path+file://{})", pack.display()),
                "manifest_path": pack.join("Cargo.toml"), "out_dir": out_dir}),
        ] {
            messages.read(&line.to_string(), &pack.join("Cargo.toml"));
        }
        let inputs = messages.inputs(&pack, Some(&executable));
        assert_eq!(
            inputs.packages,
            BTreeSet::from([helper.clone(), pack.clone()])
        );
        assert_eq!(
            inputs.files,
            BTreeSet::from([
                pack.join("src/main.rs"),
                pack.join("src/tools/echo.rs"),
                pack.join("src/relative.rs"),
                helper.join("src/lib.rs"),
                helper.join("words.txt"),
            ])
        );
        // Without a binary (a failed build), the packages alone.
        assert!(messages.inputs(&pack, None).files.is_empty());
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
