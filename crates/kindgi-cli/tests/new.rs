//! `kindgi new` end to end: the scaffold's own tests pass, and `kindgi dev`
//! serves it so that a `kindgi call` through it answers. The scaffold
//! depends on the workspace's `kindgi` by path, builds into the workspace's
//! target folder and gets the workspace's `Cargo.lock`, so it reuses the
//! built dependencies and fetches nothing.

#![cfg(unix)]

mod dev_session;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use dev_session::{Dev, TOKEN, target_dir, workspace};

/// The scaffold's first build may compile the SDK for it.
const FIRST_BUILD: Duration = Duration::from_secs(900);

fn kindgi_new(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kindgi"))
        .arg("new")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("kindgi new runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_pack_passes_its_tests_and_answers_under_dev() {
    let root = workspace();
    let target = target_dir(&root);
    let tmp = tempfile::tempdir().expect("temp dir");
    let kindgi = root.join("crates/kindgi");
    let kindgi = kindgi.to_str().expect("a UTF-8 path");

    let created = kindgi_new(tmp.path(), &["demo-pack", "--kindgi-path", kindgi]);
    assert!(created.status.success(), "{created:?}");
    assert_eq!(
        String::from_utf8_lossy(&created.stdout),
        "Created the pack demo-pack in ./demo-pack: a tool (demo-pack.greet), a check (demo-pack.not-empty), a test and a Dockerfile.\nNext:\n  cd demo-pack\n  cargo test\n  kindgi dev\n"
    );
    let pack = tmp.path().join("demo-pack");
    for file in [
        "Cargo.toml",
        "src/main.rs",
        "src/lib.rs",
        "src/greet.rs",
        "src/not_empty.rs",
        "tests/pack.rs",
        ".gitignore",
        "Dockerfile",
        ".dockerignore",
    ] {
        assert!(pack.join(file).is_file(), "{file}");
    }

    // A folder with something in it is refused; so is a bad name.
    let again = kindgi_new(tmp.path(), &["demo-pack"]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&again.stderr),
        "kindgi: ./demo-pack already exists and is not empty: pick another name, or empty it\n"
    );
    let bad = kindgi_new(tmp.path(), &["Demo"]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "error: NAME must start with a lowercase letter and hold only lowercase letters, digits, - and _ (it names the crate, its folder and the pack), got \"Demo\"\n\nFor more information, try '--help'.\n"
    );

    // Its own tests pass, with the workspace's pinned versions.
    std::fs::copy(root.join("Cargo.lock"), pack.join("Cargo.lock")).expect("lock file");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let tested = Command::new(cargo)
        .args(["test", "--offline", "-q"])
        .current_dir(&pack)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo test runs");
    assert!(
        tested.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&tested.stdout),
        String::from_utf8_lossy(&tested.stderr)
    );

    // kindgi dev serves it with its .env, and a call through it answers.
    std::fs::write(pack.join(".env"), "GREETING=Hi\n").expect(".env");
    let state = tmp.path().join("state");
    let dev = Dev::start(&pack, &state, &target, &[]);
    let banner = dev
        .wait_line(0, FIRST_BUILD, |l| l.contains(" is serving at http://"))
        .await;
    let url = banner.rsplit(' ').next().expect("url").trim().to_owned();
    let called = tokio::process::Command::new(env!("CARGO_BIN_EXE_kindgi"))
        .args(["call", "demo-pack.greet", "--input", r#"{"name":"Ana"}"#])
        .args(["--service", &url, "--token", TOKEN, "--index"])
        .arg(state.join("index.json"))
        .current_dir(tmp.path())
        .output()
        .await
        .expect("kindgi call runs");
    assert!(
        called.status.success(),
        "{}",
        String::from_utf8_lossy(&called.stderr)
    );
    let output: Value = serde_json::from_slice(&called.stdout).expect("JSON output");
    assert_eq!(output, json!({"text": "Hi, Ana!"}));
}
