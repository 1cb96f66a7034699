//! Starts the real `kindgi runtime` process on 127.0.0.1 port 0 and talks
//! HTTP to it.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};

use kindgi_test_kit::process::{ListeningProcess, start_dev_runtime};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const ADMIN: &str = "test-admin-token";

/// A running `kindgi runtime`.
pub struct Runtime {
    process: ListeningProcess,
    pub url: String,
    pub port: u16,
    pub data_dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    pub http: reqwest::Client,
}

impl Runtime {
    /// Starts a runtime on a fresh data directory.
    pub fn start(args: &[&str]) -> Self {
        let tmp = tempfile::tempdir().expect("temp dir");
        let mut rt = Self::start_in(tmp.path(), args);
        rt._tmp = Some(tmp);
        rt
    }

    /// Starts a runtime on `data_dir`.
    pub fn start_in(data_dir: &Path, args: &[&str]) -> Self {
        let bin = Path::new(env!("CARGO_BIN_EXE_kindgi"));
        let process = start_dev_runtime(bin, data_dir, ADMIN, args).expect("listening line");
        let listening = process.record();
        assert_eq!(listening["kind"], "listening");
        assert!(
            listening.get("adminToken").is_none(),
            "a token from the env is not printed"
        );
        Self {
            url: listening["url"].as_str().expect("url").to_owned(),
            port: process.port(),
            process,
            data_dir: data_dir.to_path_buf(),
            _tmp: None,
            http: reqwest::Client::new(),
        }
    }

    /// Kills the process (as a crash would).
    pub fn kill(mut self) -> Option<tempfile::TempDir> {
        self.process.kill();
        self._tmp.take()
    }

    pub async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(ADMIN);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.expect("admin request");
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// Opens a call; `extra` overrides the defaults (run r1, tenant t1, store+read).
    pub async fn open_call(&self, extra: Value) -> Value {
        let mut body = json!({"runId": "r1", "tenantId": "t1", "projectId": "p1", "toolId": "acme.tool", "store": true, "read": true});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        let (status, call) = self
            .admin(reqwest::Method::POST, "/v1/dev/calls", Some(body))
            .await;
        assert_eq!(status, 201, "open call: {call}");
        call
    }

    /// Stores `bytes` with `token`.
    pub async fn store(
        &self,
        token: &str,
        bytes: &[u8],
        content_type: Option<&str>,
        name: Option<&str>,
    ) -> Answer {
        let mut req = self
            .http
            .post(format!("{}/v1/tool-files", self.url))
            .bearer_auth(token)
            .body(bytes.to_vec());
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        if let Some(name) = name {
            req = req.header("kindgi-file-name", name);
        }
        Answer::of(req.send().await.expect("store request")).await
    }

    /// Reads a file with `token`.
    pub async fn read(&self, token: &str, artifact_id: &str) -> Answer {
        let resp = self
            .http
            .get(format!("{}/v1/tool-files/{artifact_id}", self.url))
            .bearer_auth(token)
            .send()
            .await
            .expect("read request");
        Answer::of(resp).await
    }

    /// Sends raw bytes and reads the whole answer (the request should ask
    /// for `Connection: close`).
    pub async fn raw(&self, request: &[u8]) -> String {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .expect("connect");
        stream.write_all(request).await.expect("write");
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub bytes: Vec<u8>,
}

impl Answer {
    pub async fn of(resp: reqwest::Response) -> Self {
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.expect("body").to_vec();
        Self {
            status,
            headers,
            bytes,
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&self.bytes)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a 429 `rate-limit-exceeded` whose `Retry-After` is within the
    /// one-minute window.
    pub fn assert_rate_limited(&self) {
        self.assert_error(429, "rate-limit-exceeded");
        let after: u64 = self
            .header("retry-after")
            .expect("Retry-After")
            .parse()
            .expect("seconds");
        assert!((1..=60).contains(&after), "{after}");
    }

    /// Asserts an error answer: status, code, and the request id in body and header.
    pub fn assert_error(&self, status: u16, code: &str) -> Value {
        let body = self.json();
        assert_eq!(
            (self.status, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
        let id = self.header("x-request-id").expect("X-Request-Id");
        assert_eq!(body["error"]["requestId"], id);
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        body
    }
}

pub fn token(call: &Value) -> String {
    call["toolFiles"]["token"]
        .as_str()
        .expect("toolFiles.token")
        .to_owned()
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A 1×1 PNG, its one pixel's grey `tag`: other tags, other bytes.
pub fn png(tag: u8) -> Vec<u8> {
    let pixel = image::GrayImage::from_pixel(1, 1, image::Luma([tag]));
    let mut out = std::io::Cursor::new(Vec::new());
    pixel
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode a PNG");
    out.into_inner()
}

/// A PDF of `pages` empty A4 pages, written with `pdf-writer`.
pub fn pdf(pages: usize) -> Vec<u8> {
    use pdf_writer::{Pdf, Rect, Ref};
    let mut doc = Pdf::new();
    let (catalog, root) = (Ref::new(1), Ref::new(2));
    let leaves: Vec<Ref> = (3..).take(pages).map(Ref::new).collect();
    doc.catalog(catalog).pages(root);
    doc.pages(root)
        .kids(leaves.iter().copied())
        .count(i32::try_from(pages).expect("pages"));
    for leaf in leaves {
        doc.page(leaf)
            .parent(root)
            .media_box(Rect::new(0.0, 0.0, 595.0, 842.0));
    }
    doc.finish()
}
