//! What the tests that serve a pack with `kindgi::serve` share.

use std::path::{Path, PathBuf};

use kindgi::index::{PackConfig, Pins, build_index, index_bytes};
use kindgi::{Pack, ServeError, ServiceConfig, Token};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Writes `pack`'s index (pack `acme` 1.0.0) into `dir`; its path.
fn write_index(pack: &Pack, dir: &Path) -> PathBuf {
    let config = PackConfig {
        id: "acme".to_owned(),
        version: "1.0.0".to_owned(),
        env: None,
    };
    let pins = Pins {
        artifact_version: "20260101.1".to_owned(),
        published_at: "2026-01-01T00:00:00.000Z".to_owned(),
    };
    let index = build_index(pack, &config, &pins).expect("an index");
    let path = dir.join("index.json");
    std::fs::write(&path, index_bytes(&index)).expect("written");
    path
}

/// A pack served by `kindgi::serve` on 127.0.0.1, on the test's own
/// runtime, until [`Served::stop`] resolves its shutdown future.
pub(crate) struct Served {
    /// `http://127.0.0.1:PORT`.
    pub(crate) url: String,
    token: String,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), ServeError>>,
    /// Holds the index.
    _dir: tempfile::TempDir,
}

impl Served {
    /// Serves the pack `pack` makes, with its index, behind `token`.
    pub(crate) async fn start(pack: impl Fn() -> Pack, token: &str) -> Served {
        let dir = tempfile::tempdir().expect("a folder");
        let config = ServiceConfig::new(
            write_index(&pack(), dir.path()),
            Token::new(token).expect("a token"),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(kindgi::serve(pack(), config, listener, async move {
            let _ = stopped.await;
        }));
        Served {
            url,
            token: token.to_owned(),
            stop,
            task,
            _dir: dir,
        }
    }

    /// Invokes `tool` with `input` (for tenant `t`, run `r`), within
    /// `timeout_ms` when given; the answer's JSON, its status 200.
    pub(crate) async fn invoke(&self, tool: &str, input: Value, timeout_ms: Option<u64>) -> Value {
        let mut request = reqwest::Client::new()
            .post(format!("{}/v1/invoke", self.url))
            .header("kindgi-pack-token", &self.token);
        if let Some(ms) = timeout_ms {
            request = request.header("kindgi-timeout-ms", ms.to_string());
        }
        let response = request
            .json(&json!({
                "v": 2,
                "kind": "invoke",
                "tool": {"id": tool},
                "input": input,
                "ctx": {"tenantId": "t", "runId": "r"},
            }))
            .send()
            .await
            .expect("invoke");
        assert_eq!(response.status(), 200);
        response.json().await.expect("JSON")
    }

    /// Resolves the shutdown future; what `kindgi::serve` returned.
    pub(crate) async fn stop(self) -> Result<(), ServeError> {
        let _ = self.stop.send(());
        self.task.await.expect("the service task")
    }
}
