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
    let kindgi = std::fs::canonicalize(root.join("crates/kindgi")).expect("the SDK's folder");

    // Without --kindgi-path: the checkout this command was built from.
    let created = kindgi_new(tmp.path(), &["demo-pack"]);
    assert!(created.status.success(), "{created:?}");
    assert_eq!(
        String::from_utf8_lossy(&created.stdout),
        format!(
            "Created the pack demo-pack in ./demo-pack: a tool (demo-pack.greet), a check (demo-pack.not-empty), a test, a Dockerfile and an AGENTS.md for coding agents.\nIt depends on the kindgi crate at {} (--kindgi-path, else the checkout this command was installed from). Its Dockerfile builds only what is in ./demo-pack: to build the image, copy that checkout into the pack's folder and point the path there, or depend on a published kindgi.\nNext:\n  cd demo-pack\n  cargo test\n  kindgi dev\n",
            kindgi.display()
        )
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
        "AGENTS.md",
    ] {
        assert!(pack.join(file).is_file(), "{file}");
    }
    let agents = std::fs::read_to_string(pack.join("AGENTS.md")).expect("AGENTS.md");
    assert!(agents.contains("`demo-pack.<tool>`"), "{agents}");
    assert!(!agents.contains("{{"), "a placeholder left: {agents}");

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

    // The author adds tools that share state, and tests for them.
    std::fs::write(pack.join("src/desk.rs"), DESK).expect("desk.rs");
    std::fs::write(pack.join("tests/desk.rs"), DESK_TEST).expect("tests/desk.rs");
    let lib = std::fs::read_to_string(pack.join("src/lib.rs")).expect("lib.rs");
    let lib = lib
        .replace("pub mod greet;", "pub mod desk;\npub mod greet;")
        .replace(
            "        .tool(greet::greet_tool())",
            "        .tool(greet::greet_tool())\n        .with_tools(desk::tools())",
        );
    assert!(lib.contains("desk::tools()"), "{lib}");
    std::fs::write(pack.join("src/lib.rs"), lib).expect("lib.rs");

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

    // AGENTS.md's index command runs as written, and the index has no
    // problems and no warnings.
    let index_line = agents
        .lines()
        .find(|l| l.starts_with("cargo run"))
        .and_then(|l| l.split('#').next())
        .expect("AGENTS.md names the index command")
        .trim()
        .to_owned();
    let indexed = Command::new("sh")
        .args(["-c", &index_line])
        .current_dir(&pack)
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .expect("sh runs");
    let said = String::from_utf8_lossy(&indexed.stderr);
    assert!(indexed.status.success(), "{index_line}: {said}");
    assert!(!said.contains("warning"), "{said}");
    let index: Value =
        serde_json::from_slice(&std::fs::read(pack.join("index.json")).expect("index.json"))
            .expect("JSON");
    let ids: Vec<&str> = index["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "demo-pack.approve",
            "demo-pack.charge",
            "demo-pack.count",
            "demo-pack.greet",
            "demo-pack.save"
        ]
    );

    // kindgi dev serves it with its .env, and a call through it answers.
    std::fs::write(pack.join(".env"), "GREETING=Hi\n").expect(".env");
    let state = tmp.path().join("state");
    let dev = Dev::start(&pack, &state, &target, &[]);
    let banner = dev
        .wait_line(0, FIRST_BUILD, |l| l.contains(" is serving at http://"))
        .await;
    let url = banner.rsplit(' ').next().expect("url").trim().to_owned();

    // The banner's `try:` line runs as printed, with `kindgi` on PATH.
    let tried = dev
        .wait_line(0, Duration::from_secs(30), |l| {
            l.starts_with("  try:   kindgi call ")
        })
        .await;
    let line = tried.trim_start().trim_start_matches("try:").trim();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_kindgi"));
    let path = std::env::join_paths(
        std::iter::once(bin.parent().expect("its folder").to_owned()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .expect("PATH");
    let ran = tokio::process::Command::new("sh")
        .args(["-c", line])
        .env("PATH", path)
        .current_dir(&pack)
        .output()
        .await
        .expect("sh runs");
    assert!(
        ran.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    // It calls the first tool that can run with what is configured: the
    // counter.
    assert!(line.starts_with("kindgi call demo-pack.count "), "{line}");
    let output: Value = serde_json::from_slice(&ran.stdout).expect("JSON output");
    assert_eq!(output, json!({"count": 1}), "{line}");
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

    // A tool that needs a secret, given on the command line; a stateful
    // one whose output leaves out an empty list.
    let call = |tool: &'static str, input: &'static str, extra: &'static [&'static str]| {
        let url = url.clone();
        let index = state.join("index.json");
        let dir = tmp.path().to_owned();
        async move {
            let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_kindgi"))
                .args(["call", tool, "--input", input])
                .args(["--service", &url, "--token", TOKEN, "--index"])
                .arg(index)
                .args(extra)
                .current_dir(dir)
                .output()
                .await
                .expect("kindgi call runs");
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
    };
    let (code, stdout, stderr) = call(
        "demo-pack.charge",
        "{}",
        &["--secret", "PAY_KEY=sk_test_4242"],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).expect("JSON"),
        json!({"last4": "4242"})
    );
    assert!(!stderr.contains("sk_test"), "{stderr}");
    let (code, stdout, stderr) = call("demo-pack.count", r#"{"text":"hi"}"#, &[]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).expect("JSON"),
        json!({"count": 2})
    );
    // A mistyped tool id: the pack answers tool-not-in-pack, and the dev
    // terminal names the nearest id.
    let typo = std::process::Command::new("curl")
        .args(["-s", &format!("{url}/v1/invoke"), "-H", &format!("kindgi-pack-token: {TOKEN}")])
        .args(["-H", "content-type: application/json", "-d"])
        .arg(r#"{"v":2,"kind":"invoke","tool":{"id":"demo-pack.cuont"},"input":{},"ctx":{"tenantId":"t","runId":"r"}}"#)
        .output()
        .unwrap_or_else(|e| panic!("curl could not run ({e}): Debian's `curl` package"));
    let answer: Value = serde_json::from_slice(&typo.stdout).expect("JSON answer");
    assert_eq!(answer["code"], "tool-not-in-pack", "{answer}");
    let hint = dev
        .wait_line(0, Duration::from_secs(30), |l| l.contains("has no tool"))
        .await;
    assert_eq!(
        hint.trim_end(),
        r#"kindgi dev: the pack has no tool "demo-pack.cuont"; did you mean "demo-pack.count"?"#
    );

    // The dev front takes h2c with prior knowledge too.
    let (code, stdout, stderr) = call("demo-pack.count", r#"{"text":"hi"}"#, &["--http2"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).expect("JSON"),
        json!({"count": 3})
    );
}

/// `kindgi new --crates-io` where the registry has no `kindgi` (here an
/// empty local one stands in for crates.io): it says so and how to make
/// the pack against a checkout, and leaves nothing behind.
#[test]
fn a_registry_without_kindgi_is_named_with_the_way_out() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let registry = tmp.path().join("empty-registry");
    std::fs::create_dir_all(registry.join("index")).expect("registry");
    std::fs::create_dir_all(tmp.path().join(".cargo")).expect(".cargo");
    std::fs::write(
        tmp.path().join(".cargo/config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"empty\"\n[source.empty]\nlocal-registry = {:?}\n",
            registry.display().to_string()
        ),
    )
    .expect("config");
    let created = kindgi_new(tmp.path(), &["demo-pack", "--crates-io"]);
    assert_eq!(created.status.code(), Some(1), "{created:?}");
    assert_eq!(
        String::from_utf8_lossy(&created.stderr),
        format!(
            "kindgi: kindgi {} is not on the registry cargo reaches (crates.io or your mirror), so the pack would not build. Make it against a checkout of the SDK instead: kindgi new NAME --kindgi-path <checkout>/crates/kindgi (or install this command from the checkout: cargo install --locked --path <checkout>/crates/kindgi-cli)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert!(!tmp.path().join("demo-pack").exists());
}

/// What the author adds to the scaffold: tools sharing a counter, one
/// that needs a secret, one that stores a file, one that pauses.
const DESK: &str = r##"//! The desk's tools, sharing one counter.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kindgi::schemars::{self, JsonSchema};
use kindgi::serde::{Deserialize, Serialize};
use kindgi::{FileValue, Pause, Reply, StoreOutcome, Tool, ToolContext, ToolError};

/// A note.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "kindgi::serde")]
pub struct Note {
    /// What it says.
    pub text: String,
}

/// How many notes the desk has seen.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "kindgi::serde")]
pub struct Counted {
    /// The count so far.
    pub count: u64,
    /// Anything odd about the note.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A charge.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "kindgi::serde")]
pub struct Charged {
    /// The key's last four characters.
    pub last4: String,
}

/// A saved note.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "kindgi::serde")]
pub struct Saved {
    /// The stored file.
    pub files: Vec<FileValue>,
}

/// A person's answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "kindgi::serde")]
pub struct Approval {
    /// Whether they said yes.
    pub approved: bool,
}

/// The desk.
#[derive(Debug, Default)]
pub struct Desk {
    notes: AtomicU64,
}

type Nothing = kindgi::serde_json::Map<String, kindgi::serde_json::Value>;

#[kindgi::tools]
impl Desk {
    /// Counts the notes it is given.
    #[tool(id = "demo-pack.count")]
    async fn count(&self, input: Note) -> Result<Counted, ToolError> {
        let count = self.notes.fetch_add(1, Ordering::SeqCst) + 1;
        let warnings = if input.text.trim().is_empty() { vec!["an empty note".to_owned()] } else { Vec::new() };
        Ok(Counted { count, warnings })
    }

    /// Charges with the payment key.
    #[tool(id = "demo-pack.charge")]
    async fn charge(&self, _input: Nothing, ctx: ToolContext) -> Result<Charged, ToolError> {
        let key = ctx.require_secret("PAY_KEY")?;
        let key = key.expose();
        Ok(Charged { last4: key[key.len().saturating_sub(4)..].to_owned() })
    }

    /// Saves a note as a text file.
    #[tool(id = "demo-pack.save", stores_files)]
    async fn save(&self, input: Note, ctx: ToolContext) -> Result<Saved, ToolError> {
        match ctx.files()?.store(input.text.into_bytes(), "note.txt", "text/plain").await? {
            StoreOutcome::File(file) => Ok(Saved { files: vec![file] }),
            StoreOutcome::NotStored(why) => Err(ToolError::new("NotStored", format!("{why:?}"))),
        }
    }

    /// Waits for a person's approval.
    #[tool(id = "demo-pack.approve")]
    async fn approve(&self, _input: Nothing, ctx: ToolContext) -> Result<Reply<Approval>, ToolError> {
        ctx.wait_link()?;
        Ok(Reply::Pause(Pause::new().name("a person's approval")))
    }
}

/// The desk's tools.
pub fn tools() -> Vec<Tool> {
    let desk = Arc::new(Desk::default());
    vec![
        desk.count_tool(),
        desk.charge_tool().needs_secret("PAY_KEY"),
        desk.save_tool(),
        desk.approve_tool(),
    ]
}
"##;

/// The author's tests of the desk, with the dev runtime in-process.
const DESK_TEST: &str = r##"//! The desk's tools, called as the pack service calls them.

use kindgi::protocol::Response;
use kindgi::serde_json::json;
use kindgi::testing::{TestContext, TestPack};

async fn pack() -> TestPack {
    TestPack::new(demo_pack::pack())
        .expect("a valid pack")
        .with_dev_runtime()
        .await
        .expect("the dev runtime")
}

#[tokio::test]
async fn the_desk_counts_saves_and_waits() {
    let pack = pack().await;
    let first = pack.call("demo-pack.count", json!({"text": "hi"}), TestContext::new()).await;
    assert_eq!(first.output().expect("a result"), json!({"count": 1}));
    let second = pack.call("demo-pack.count", json!({"text": " "}), TestContext::new()).await;
    assert_eq!(second.output().expect("a result"), json!({"count": 2, "warnings": ["an empty note"]}));

    let saved = pack
        .call("demo-pack.save", json!({"text": "hello"}), TestContext::new().idempotency_key("k1"))
        .await
        .output()
        .expect("a result");
    assert_eq!(saved["files"][0]["size"], 5);

    let charged = pack
        .call("demo-pack.charge", json!({}), TestContext::new().secret("PAY_KEY", "sk_9876"))
        .await;
    assert_eq!(charged.output().expect("a result"), json!({"last4": "9876"}));

    let paused = pack.call("demo-pack.approve", json!({}), TestContext::new()).await;
    assert!(matches!(paused.response, Response::Pause(_)), "{paused:?}");
    let token = paused.wait_token.expect("a wait link");
    let done = pack.complete_wait(&token, json!({"approved": true})).await.expect("completed");
    assert_eq!(done.output, Some(json!({"approved": true})));
}
"##;
