//! `kindgi dev` rebuilds on a change to any file the build used: a pack in
//! a temporary folder depends on a crate beside it (outside the pack
//! folder) whose greeting is a text file it includes, outside its `src/`
//! too. Editing that file rebuilds and swaps the pack.
//!
//! The pack depends on `kindgi` by path and builds into the workspace's
//! target folder with the workspace's lock file, as `tests/dev.rs` does,
//! so the dependencies are built once for both.

#![cfg(unix)]

mod dev_session;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use dev_session::{Dev, TOKEN, target_dir, workspace};

/// The first build may compile the workspace's crates for the pack.
const FIRST_BUILD: Duration = Duration::from_secs(900);
/// The rebuild compiles the helper and the pack (plus waits for other builds).
const REBUILD: Duration = Duration::from_secs(300);

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

async fn greet(url: &str) -> String {
    let answer: Value = reqwest::Client::new()
        .post(format!("{url}/v1/invoke"))
        .header("kindgi-pack-token", TOKEN)
        .json(
            &json!({"v": 2, "kind": "invoke", "tool": {"id": "pathdep.greet"}, "input": {},
            "ctx": {"tenantId": "acme", "runId": "run-path-dep"}}),
        )
        .send()
        .await
        .expect("invoke")
        .json()
        .await
        .expect("a JSON answer");
    answer["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no output in {answer}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_rebuilds_when_a_path_dependency_changes() {
    let root = workspace();
    let target = target_dir(&root);
    let tmp = tempfile::tempdir().expect("temp dir");
    let pack = tmp.path().join("pack");
    let helper = tmp.path().join("helper");
    write(
        &helper.join("Cargo.toml"),
        "[package]\nname = \"dev-path-dep-helper\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    );
    write(
        &helper.join("src/lib.rs"),
        "//! The greeting.\n\n/// What the pack says.\npub const GREETING: &str = include_str!(\"../greeting.txt\");\n",
    );
    let greeting = helper.join("greeting.txt");
    write(&greeting, "hello from the helper");
    write(
        &pack.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"dev-path-dep-pack\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [package.metadata.kindgi]\nid = \"pathdep\"\nversion = \"1.0.0\"\n\n\
             [dependencies]\nkindgi = {{ path = {:?} }}\ndev-path-dep-helper = {{ path = \"../helper\" }}\n\n\
             [workspace]\n",
            root.join("crates/kindgi").display().to_string()
        ),
    );
    write(
        &pack.join("src/main.rs"),
        r#"//! A pack whose one tool says its path dependency's greeting.

use kindgi::ToolError;
use kindgi::serde_json::{Map, Value};

/// Says the helper's greeting.
#[kindgi::tool(id = "pathdep.greet", mutating = false)]
async fn greet(_input: Map<String, Value>) -> Result<String, ToolError> {
    Ok(dev_path_dep_helper::GREETING.to_owned())
}

fn main() -> std::process::ExitCode {
    kindgi::Pack::new().tool(greet_tool()).run()
}
"#,
    );
    std::fs::copy(root.join("Cargo.lock"), pack.join("Cargo.lock")).expect("lock file");

    let dev = Dev::start(&pack, &tmp.path().join("state"), &target, &[]);
    let banner = dev
        .wait_line(0, FIRST_BUILD, |l| l.contains(" is serving at http://"))
        .await;
    let url = banner.rsplit(' ').next().expect("url").trim().to_owned();
    assert_eq!(greet(&url).await, "hello from the helper");

    // The included file is no pack source and lies outside every src/:
    // only cargo's dep-info names it.
    let mark = dev.seen().len();
    write(&greeting, "hello again, from the edited helper");
    dev.wait_line(mark, REBUILD, |l| l.contains("generation 2 is serving"))
        .await;
    assert_eq!(greet(&url).await, "hello again, from the edited helper");
    assert!(
        dev.seen()[mark..]
            .iter()
            .any(|l| l.contains("change seen; rebuilding")),
        "{}",
        dev.seen().join("\n")
    );
}
