//! `kindgi dev` end to end, on a copy of `examples/support-desk` in a
//! temporary folder: its `Cargo.toml` points at the workspace's crates by
//! absolute path, and `CARGO_TARGET_DIR` is the workspace's target folder,
//! so each build is incremental.
//!
//! One session, in order: the first build serves, started with what a
//! deployed pack sees plus its `.env`, and the banner's line answers as
//! printed; a call gets its connection from `.kindgi/connections.env`; an
//! edited tool answers its new output at the same URL; broken code prints
//! the compiler's error while the old build keeps answering; a call in
//! flight when the fix is swapped in finishes on the old process; a tool
//! that stores a file gets its grant from dev's runtime; a killed process
//! is restarted; Ctrl-C stops everything.

#![cfg(unix)]

mod dev_session;

use std::path::Path;
use std::time::{Duration, Instant};

use kindgi_test_kit::process::signal;
use kindgi_test_kit::{Reply, ScriptedServer};
use serde_json::{Value, json};
use tokio::sync::watch;

use dev_session::{Dev, TOKEN, alive, target_dir, workspace};

/// The first build may compile the workspace's crates for the copy.
const FIRST_BUILD: Duration = Duration::from_secs(900);
/// Later builds recompile only the pack (plus waits for other builds).
const REBUILD: Duration = Duration::from_secs(300);

/// Copies `from` into `to`, leaving out build output and local state.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.')
            || name == "target"
            || name.ends_with(".db")
            || name == "index.json"
        {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, &to.join(&*name));
        } else {
            std::fs::copy(&path, to.join(&*name)).expect("copy");
        }
    }
}

/// The example's manifest as a crate of its own: workspace-inherited
/// fields and dependencies resolved against the workspace's manifest,
/// paths (its build script's too) made absolute, a package name of its own (so its binary doesn't
/// overwrite the example's in the shared target folder).
fn standalone_manifest(example: &str, root_manifest: &str, root: &Path) -> String {
    let mut manifest: toml::Table = example.parse().expect("example manifest");
    let workspace_table: toml::Table = root_manifest.parse().expect("workspace manifest");
    let workspace = workspace_table["workspace"]
        .as_table()
        .expect("[workspace]");
    let inherited = |value: &toml::Value| {
        value
            .as_table()
            .is_some_and(|t| t.get("workspace").and_then(toml::Value::as_bool) == Some(true))
    };

    let package = manifest["package"].as_table_mut().expect("[package]");
    let keys: Vec<String> = package.keys().cloned().collect();
    for key in keys {
        if inherited(&package[&key]) {
            package.insert(key.clone(), workspace["package"][&key].clone());
        }
    }
    package.insert("name".into(), "support-desk-devtest".into());
    // The build script it shares with new packs, found from the copy too.
    if let Some(script) = package.get("build").and_then(toml::Value::as_str) {
        let absolute = root.join("examples/support-desk").join(script);
        package.insert("build".into(), absolute.display().to_string().into());
    }

    for section in ["dependencies", "dev-dependencies"] {
        let Some(deps) = manifest
            .get_mut(section)
            .and_then(toml::Value::as_table_mut)
        else {
            continue;
        };
        for (name, dep) in deps.iter_mut() {
            if !inherited(dep) {
                continue;
            }
            let mut resolved = match &workspace["dependencies"][name.as_str()] {
                toml::Value::String(version) => {
                    let mut t = toml::Table::new();
                    t.insert("version".into(), version.clone().into());
                    t
                }
                toml::Value::Table(t) => t.clone(),
                other => panic!("workspace dependency {name}: {other}"),
            };
            if let Some(path) = resolved.get("path").and_then(toml::Value::as_str) {
                let absolute = root.join(path).display().to_string();
                resolved.insert("path".into(), absolute.into());
            }
            let local = dep.as_table().cloned().unwrap_or_default();
            for (key, value) in local {
                match key.as_str() {
                    "workspace" => {}
                    "features" => {
                        let mut features = resolved
                            .get("features")
                            .and_then(toml::Value::as_array)
                            .cloned()
                            .unwrap_or_default();
                        features.extend(value.as_array().cloned().unwrap_or_default());
                        resolved.insert("features".into(), features.into());
                    }
                    _ => {
                        resolved.insert(key, value);
                    }
                }
            }
            *dep = resolved.into();
        }
    }
    manifest.remove("lints");
    let mut lib = toml::Table::new();
    lib.insert("name".into(), "support_desk".into());
    manifest.insert("lib".into(), lib.into());
    manifest.insert("workspace".into(), toml::Table::new().into());
    toml::to_string(&manifest).expect("manifest")
}

/// The pid in a `generation N is serving (pid P…` line.
fn serving_pid(line: &str) -> u32 {
    line.split("(pid ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"))
}

async fn invoke(url: &str, tool: &str, input: Value, ctx: Value) -> (u16, Value) {
    let mut context = json!({"tenantId": "acme", "runId": "run-dev-test"});
    if let (Some(c), Some(extra)) = (context.as_object_mut(), ctx.as_object()) {
        c.extend(extra.clone());
    }
    let response = reqwest::Client::new()
        .post(format!("{url}/v1/invoke"))
        .header("kindgi-pack-token", TOKEN)
        // Long enough for a call held open across a rebuild that waits for other builds.
        .header("kindgi-timeout-ms", "600000")
        .json(&json!({"v": 2, "kind": "invoke", "tool": {"id": tool}, "input": input, "ctx": context}))
        .send()
        .await
        .expect("invoke");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn canned_reply(url: &str) -> String {
    let (status, answer) = invoke(
        url,
        "support.canned-reply",
        json!({"customerName": "Ana", "topic": "billing"}),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    answer["output"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
        .to_owned()
}

/// A helpdesk stand-in that holds every request until `release` is set,
/// then answers 201 `{"id": 5}`; it keeps every request.
async fn slow_helpdesk(release: watch::Receiver<bool>) -> (String, ScriptedServer) {
    let server = ScriptedServer::start(move |_| {
        let mut release = release.clone();
        Reply::after(
            async move {
                let _ = release.wait_for(|r| *r).await;
            },
            Reply::json_text(201, r#"{"id":5}"#),
        )
    })
    .await;
    (server.url(), server)
}

/// The heads of the requests `server` got, lowercased.
fn heads(server: &ScriptedServer) -> Vec<String> {
    server
        .seen()
        .iter()
        .map(|request| request.head.to_lowercase())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_serves_swaps_on_save_keeps_serving_through_errors_and_stops() {
    let root = workspace();
    let target = target_dir(&root);
    let tmp = tempfile::tempdir().expect("temp dir");
    let pack = tmp.path().join("support-desk");
    let state = tmp.path().join("state");
    copy_tree(&root.join("examples/support-desk"), &pack);
    let manifest = standalone_manifest(
        &std::fs::read_to_string(pack.join("Cargo.toml")).expect("manifest"),
        &std::fs::read_to_string(root.join("Cargo.toml")).expect("workspace manifest"),
        &root,
    );
    std::fs::write(pack.join("Cargo.toml"), manifest).expect("write manifest");
    std::fs::copy(root.join("Cargo.lock"), pack.join("Cargo.lock")).expect("lock file");
    let tool_source = pack.join("src/tools/canned_reply.rs");
    let original = std::fs::read_to_string(&tool_source).expect("tool source");
    assert!(original.contains("thanks for reaching out"));

    // The pack's .env reaches its process; .kindgi/connections.env gives
    // post-reply's connection to calls that don't carry one.
    let (_helpdesk_open, open) = watch::channel(true);
    let (helpdesk, helpdesk_requests) = slow_helpdesk(open).await;
    std::fs::write(
        pack.join(".env"),
        format!("# the helpdesk\nHELPDESK_URL={helpdesk}\n"),
    )
    .expect(".env");
    std::fs::create_dir_all(pack.join(".kindgi")).expect(".kindgi");
    std::fs::write(
        pack.join(".kindgi/connections.env"),
        "helpdesk=acme-helpdesk:dev-connection-token\n",
    )
    .expect("connections.env");

    // The declarative HTTP tool asks a stand-in helpdesk: its URL is in
    // the index, so the copy's source names the stand-in; its secret
    // comes from .kindgi/secrets.env.
    let status_desk = ScriptedServer::start(|request| {
        if request.header("authorization") == Some("Bearer dev-helpdesk-secret") {
            Reply::json_text(200, r#"{"status":"pending","assignee":null}"#)
        } else {
            Reply::json_text(401, r#"{"error":"invalid token"}"#)
        }
    })
    .await;
    let status_source = pack.join("src/tools/ticket_status.rs");
    let status_code = std::fs::read_to_string(&status_source).expect("status tool");
    assert!(status_code.contains("https://helpdesk.example.com/api"));
    std::fs::write(
        &status_source,
        status_code.replace(
            "https://helpdesk.example.com/api",
            &format!("{}/api", status_desk.url()),
        ),
    )
    .expect("point the status tool at the stand-in");
    std::fs::write(
        pack.join(".kindgi/secrets.env"),
        "HELPDESK_TOKEN=dev-helpdesk-secret\n",
    )
    .expect("secrets.env");

    let desk = state.join("desk.db");
    let dev = Dev::start(&pack, &state, &target, &[("SUPPORT_DESK_DB", &desk)]);

    // The first build serves, behind the URL printed once with the token
    // (a first build that fails says so at once: no need to wait on).
    let banner = dev
        .wait_line(0, FIRST_BUILD, |l| {
            l.contains(" is serving at http://") || l.contains("nothing is serving yet")
        })
        .await;
    assert!(
        banner.contains(" is serving at http://"),
        "the first build failed:\n{}",
        dev.seen().join("\n")
    );
    let url = banner.rsplit(' ').next().expect("url").trim().to_owned();
    let first = dev
        .wait_line(0, Duration::from_secs(5), |l| {
            l.contains("generation 1 is serving")
        })
        .await;
    assert!(
        dev.seen()
            .iter()
            .any(|l| l.contains(&format!("token: {TOKEN}")))
    );
    // The banner's line, run as printed, answers.
    let try_line = dev
        .seen()
        .iter()
        .find_map(|l| l.strip_prefix("  try:   ").map(str::to_owned))
        .expect("a try line");
    assert!(
        try_line.starts_with("kindgi call support.canned-reply --service "),
        "{try_line}"
    );
    let tried = dev_session::run_as_printed(&try_line, tmp.path()).await;
    assert!(
        tried.status.success(),
        "{}",
        String::from_utf8_lossy(&tried.stderr)
    );
    let tried: Value = serde_json::from_slice(&tried.stdout).expect("JSON output");
    assert!(
        tried["text"]
            .as_str()
            .is_some_and(|t| t.contains("Hi text")),
        "{tried}"
    );
    // Started with what a deployed pack sees, the service drops nothing.
    assert!(
        !dev.seen().iter().any(|l| l.contains("Dropped")),
        "{}",
        dev.seen().join("\n")
    );
    // A call without env or connection: .env's HELPDESK_URL, connections.env's token.
    let (status, posted) = invoke(
        &url,
        "support.post-reply",
        json!({"ticketId": "12", "message": "Hello."}),
        json!({}),
    )
    .await;
    assert_eq!(
        (status, &posted["output"]),
        (200, &json!({"replyId": "5"})),
        "{posted}"
    );
    assert!(
        heads(&helpdesk_requests)
            .iter()
            .any(|r| r.contains("authorization: bearer dev-connection-token")),
        "the helpdesk got the connection's token"
    );
    // The declarative HTTP tool: the service makes the index's request,
    // with the secret from .kindgi/secrets.env, through dev's front and
    // through `kindgi call`.
    let (status, answer) = invoke(
        &url,
        "support.ticket-status",
        json!({"ticketId": "HD 9"}),
        json!({}),
    )
    .await;
    assert_eq!(
        (status, &answer["output"]),
        (200, &json!({"status": "pending", "assignee": null})),
        "{answer}"
    );
    assert!(
        heads(&status_desk)
            .iter()
            .any(|r| r.starts_with("get /api/tickets/hd%209/status http/1.1")),
        "{:?}",
        heads(&status_desk)
    );
    let called = dev_session::run_as_printed(
        &format!(
            "kindgi call support.ticket-status --service {url} --token {TOKEN} --input '{{\"ticketId\":\"7\"}}' --secret HELPDESK_TOKEN=wrong"
        ),
        tmp.path(),
    )
    .await;
    let stderr = String::from_utf8_lossy(&called.stderr);
    assert!(!called.status.success(), "{stderr}");
    let refused: Value = serde_json::from_slice(&called.stdout).expect("the error as JSON");
    assert_eq!(refused["code"], "handler-throw", "{refused}");
    assert_eq!(
        refused["message"],
        r#"Handler for tool "support.ticket-status" threw: Error: http-tool "support.ticket-status" got status 401 Unauthorized — {"error":"invalid token"}"#
    );
    assert!(
        !String::from_utf8_lossy(&called.stdout).contains("dev-helpdesk-secret"),
        "{refused}"
    );
    // Neither secret is in anything dev or the service printed.
    assert!(
        !dev.seen()
            .iter()
            .any(|l| l.contains("dev-helpdesk-secret") || l.contains("HELPDESK_TOKEN=wrong")),
        "{}",
        dev.seen().join("\n")
    );
    let http = reqwest::Client::new();
    let ready = http
        .get(format!("{url}/readyz"))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 200);
    let info: Value = http
        .get(format!("{url}/v1/info"))
        .header("kindgi-pack-token", TOKEN)
        .send()
        .await
        .expect("info")
        .json()
        .await
        .expect("info json");
    assert_eq!(info["packId"], "support");
    assert_eq!(info["artifactVersion"], "dev.1");
    assert!(canned_reply(&url).await.contains("thanks for reaching out"));
    let first_pid = serving_pid(&first);

    // An edit is built and swapped in; the same URL answers the new output.
    let mark = dev.seen().len();
    let edited = original.replace("thanks for reaching out", "thanks for writing in");
    std::fs::write(&tool_source, &edited).expect("edit");
    dev.wait_line(mark, REBUILD, |l| l.contains("is serving (pid"))
        .await;
    assert!(canned_reply(&url).await.contains("thanks for writing in"));
    dev.wait_line(mark, Duration::from_secs(15), |l| {
        l.contains("generation 1 stopped after its calls finished")
    })
    .await;
    assert!(!alive(first_pid), "the swapped-out process stopped");

    // A pack the indexer refuses: its problems are printed, the old build answers.
    let lib = pack.join("src/lib.rs");
    let lib_source = std::fs::read_to_string(&lib).expect("lib.rs");
    let twice = ".tool(canned_reply)";
    assert!(lib_source.contains(twice));
    let mark = dev.seen().len();
    let dup = format!("{twice}.tool(tools::canned_reply::canned_reply_tool())");
    std::fs::write(&lib, lib_source.replace(twice, &dup)).expect("dup");
    dev.wait_line(mark, REBUILD, |l| {
        l.contains("indexing failed: The pack has mistakes; generation")
    })
    .await;
    dev.wait_line(mark, Duration::from_secs(5), |l| {
        l.contains(
            r#"tool "support.canned-reply" (src/tools/canned_reply.rs): repeats the id of the tool declared first in src/tools/canned_reply.rs"#,
        )
    })
    .await;
    assert!(canned_reply(&url).await.contains("thanks for writing in"));

    // Broken code: the compiler's error is printed, the old build answers.
    let mark = dev.seen().len();
    std::fs::write(&lib, &lib_source).expect("restore lib.rs");
    std::fs::write(
        &tool_source,
        format!("{edited}\nfn broken() -> u32 {{ \"not a number\" }}\n"),
    )
    .expect("break");
    dev.wait_line(mark, REBUILD, |l| {
        l.contains("the build failed; generation")
    })
    .await;
    dev.wait_line(mark, Duration::from_secs(5), |l| l.contains("error[E0308]"))
        .await;
    assert!(canned_reply(&url).await.contains("thanks for writing in"));

    // A call in flight when the fix is swapped in finishes on the old process.
    let (release, released) = watch::channel(false);
    let (helpdesk, received) = slow_helpdesk(released).await;
    let slow = tokio::spawn({
        let url = url.clone();
        async move {
            invoke(
                &url,
                "support.post-reply",
                json!({"ticketId": "77", "message": "On its way."}),
                json!({
                    "env": {"HELPDESK_URL": helpdesk},
                    "connections": {"helpdesk": {
                        "connectionId": "c1", "app": "acme-helpdesk", "appName": "Acme Helpdesk",
                        "accessToken": "good", "account": {"id": "a1", "label": "support@acme.example"}
                    }}
                }),
            )
            .await
        }
    });
    let until = Instant::now() + Duration::from_secs(30);
    while received.count() == 0 {
        assert!(
            Instant::now() < until,
            "the slow call never reached the helpdesk"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mark = dev.seen().len();
    std::fs::write(&tool_source, &edited).expect("fix");
    let swapped = dev
        .wait_line(mark, REBUILD, |l| l.contains("is serving (pid"))
        .await;
    let _ = release.send(true);
    let (status, answer) = slow.await.expect("slow call");
    assert_eq!(
        (status, &answer["output"]),
        (200, &json!({"replyId": "5"})),
        "{answer}"
    );
    dev.wait_line(mark, Duration::from_secs(15), |l| {
        l.contains("stopped after its calls finished")
    })
    .await;
    assert!(canned_reply(&url).await.contains("thanks for writing in"));

    // A tool that stores a file gets its files grant from dev's runtime.
    let (status, report) = invoke(
        &url,
        "support.weekly-report",
        json!({}),
        json!({"idempotencyKey": "report-1"}),
    )
    .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(
        report["output"]["files"][0]["contentType"], "application/pdf",
        "{report}"
    );

    // A process that dies is restarted behind the same URL.
    let crashed = serving_pid(&swapped);
    let mark = dev.seen().len();
    signal(crashed, "KILL");
    let again = dev
        .wait_line(mark, Duration::from_secs(60), |l| {
            l.contains("is serving again (pid")
        })
        .await;
    assert!(canned_reply(&url).await.contains("thanks for writing in"));

    // Ctrl-C stops everything dev started.
    let serving = serving_pid(&again);
    signal(dev.pid(), "INT");
    let mut dev = dev;
    let status = tokio::time::timeout(Duration::from_secs(20), dev.child.wait())
        .await
        .expect("dev stops after Ctrl-C")
        .expect("exit status");
    assert!(status.success(), "{status}");
    dev.wait_line(0, Duration::from_secs(10), |l| l == "kindgi dev: stopped")
        .await;
    assert!(!alive(serving), "the pack process stopped with dev");
    assert!(http.get(format!("{url}/healthz")).send().await.is_err());
}
