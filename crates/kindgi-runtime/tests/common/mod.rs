//! PDFs in the shapes writers produce, and the runtime to store them with.

#![allow(dead_code, unreachable_pub)]

use std::path::Path;
use std::process::Command;

use kindgi_runtime::{DevRuntime, OpenCall, RuntimeConfig};
use pdf_writer::{Content, Name, Pdf, Rect, Ref, Str};
use serde_json::Value;

/// The catalog's and the root page tree node's ids in [`document`].
pub const CATALOG: i32 = 1;
pub const ROOT: i32 = 2;
const FONT: i32 = 3;

/// A document with one page per text, written with `pdf-writer`: a
/// classic cross-reference table, or with `xref_stream` a cross-reference
/// stream. With `fanout`, the pages hang in a tree of nested `Pages` nodes
/// of at most that many kids each (levels of nodes until they fit).
pub fn document(texts: &[&str], fanout: Option<usize>, xref_stream: bool) -> Vec<u8> {
    let mut pdf = Pdf::new();
    pdf.set_version(1, 5);
    let mut next = 10;
    let mut id = || {
        next += 1;
        Ref::new(next)
    };
    let root = Ref::new(ROOT);
    pdf.catalog(Ref::new(CATALOG)).pages(root);
    pdf.type1_font(Ref::new(FONT)).base_font(Name(b"Helvetica"));

    // The tree, from the pages up: each level's nodes hold `fanout` of the
    // level below, until one node, the root, holds them all.
    let fanout = fanout.unwrap_or(usize::MAX).max(2);
    let pages: Vec<Ref> = texts.iter().map(|_| id()).collect();
    let mut parent_of: Vec<(Ref, Ref)> = Vec::new();
    let mut nodes: Vec<(Ref, Vec<Ref>, i32)> = Vec::new();
    let mut level: Vec<(Ref, i32)> = pages.iter().map(|&p| (p, 1)).collect();
    loop {
        let groups = level.len().div_ceil(fanout);
        if groups <= 1 {
            let count = level.iter().map(|k| k.1).sum();
            parent_of.extend(level.iter().map(|k| (k.0, root)));
            nodes.push((root, level.iter().map(|k| k.0).collect(), count));
            break;
        }
        let mut above = Vec::new();
        for chunk in level.chunks(fanout) {
            let node = id();
            let count = chunk.iter().map(|k| k.1).sum();
            parent_of.extend(chunk.iter().map(|k| (k.0, node)));
            nodes.push((node, chunk.iter().map(|k| k.0).collect(), count));
            above.push((node, count));
        }
        level = above;
    }
    let parent = |child: Ref| parent_of.iter().find(|(c, _)| *c == child).map(|(_, p)| *p);

    for (page, text) in pages.iter().zip(texts) {
        let contents = id();
        let mut content = Content::new();
        content.begin_text();
        content.set_font(Name(b"F1"), 14.0);
        content.next_line(72.0, 770.0);
        content.show(Str(text.as_bytes()));
        content.end_text();
        pdf.stream(contents, &content.finish());
        let mut p = pdf.page(*page);
        p.parent(parent(*page).expect("a parent"));
        p.media_box(Rect::new(0.0, 0.0, 595.0, 842.0));
        p.contents(contents);
        p.resources().fonts().pair(Name(b"F1"), Ref::new(FONT));
    }
    for (node, kids, count) in &nodes {
        let mut writer = pdf.pages(*node);
        writer.kids(kids.iter().copied()).count(*count);
        if let Some(up) = parent(*node) {
            writer.parent(up);
        }
    }
    if xref_stream {
        let xref = id();
        pdf.finish_with_xref_stream(xref)
    } else {
        pdf.finish()
    }
}

/// `n` pages saying their number.
pub fn texts(n: usize) -> Vec<String> {
    (1..=n).map(|p| format!("Page {p} of {n}")).collect()
}

/// [`document`] of [`texts`].
pub fn pages_doc(n: usize, fanout: Option<usize>, xref_stream: bool) -> Vec<u8> {
    let texts = texts(n);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    document(&refs, fanout, xref_stream)
}

/// `bytes` rewritten by qpdf with `args`.
pub fn qpdf(bytes: &[u8], args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("temp dir");
    let (input, output) = (dir.path().join("in.pdf"), dir.path().join("out.pdf"));
    std::fs::write(&input, bytes).expect("write");
    let status = Command::new("qpdf")
        .args(args)
        .arg(&input)
        .arg(&output)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "qpdf could not run ({e}): these tests need it, from Debian's `qpdf` package \
                 (scripts/install-test-deps installs it)"
            )
        });
    // 3: written, with warnings.
    assert!(
        matches!(status.code(), Some(0 | 3)),
        "qpdf {args:?}: {status}"
    );
    std::fs::read(&output).expect("qpdf's output")
}

/// `base` (a [`document`]) with an incremental update appended: one more
/// page, and the root node rewritten to hold it.
pub fn with_page_added(base: &[u8], pages_before: usize) -> Vec<u8> {
    let text = String::from_utf8_lossy(base);
    let prev: usize = text
        .rsplit("startxref")
        .next()
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("startxref");
    let kids = kids_of_root(base);
    let (page, contents) = (900, 901);
    let mut out = base.to_vec();
    out.extend_from_slice(b"\n");
    let mut offsets = Vec::new();
    let mut object = |out: &mut Vec<u8>, id: i32, body: &str| {
        offsets.push((id, out.len()));
        out.extend_from_slice(format!("{id} 0 obj\n{body}\nendobj\n").as_bytes());
    };
    let stream = "BT /F1 14 Tf 72 770 Td (The added page) Tj ET";
    object(
        &mut out,
        contents,
        &format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ),
    );
    object(
        &mut out,
        page,
        &format!(
            "<< /Type /Page /Parent {ROOT} 0 R /MediaBox [0 0 595 842] /Contents {contents} 0 R \
             /Resources << /Font << /F1 {FONT} 0 R >> >> >>"
        ),
    );
    object(
        &mut out,
        ROOT,
        &format!(
            "<< /Type /Pages /Kids [{kids} {page} 0 R] /Count {} >>",
            pages_before + 1
        ),
    );
    offsets.sort();
    let xref = out.len();
    out.extend_from_slice(b"xref\n");
    for (id, at) in &offsets {
        out.extend_from_slice(format!("{id} 1\n{at:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size 902 /Root {CATALOG} 0 R /Prev {prev} >>\nstartxref\n{xref}\n%%EOF\n"
        )
        .as_bytes(),
    );
    out
}

/// The root node's `/Kids` entries in a [`document`], as written.
fn kids_of_root(doc: &[u8]) -> String {
    let text = String::from_utf8_lossy(doc);
    let node = text
        .split(&format!("\n{ROOT} 0 obj"))
        .nth(1)
        .expect("the root node");
    let kids = node.split("/Kids [").nth(1).expect("kids");
    kids.split(']').next().expect("kids").to_owned()
}

/// A dev runtime serving on a free port, and a call that stores files.
pub struct Runtime {
    pub runtime: DevRuntime,
    pub url: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Runtime {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = DevRuntime::open(RuntimeConfig::new(dir.path())).expect("runtime");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(runtime.clone().serve(listener, std::future::pending()));
        Self {
            runtime,
            url,
            http: reqwest::Client::new(),
            _dir: dir,
        }
    }

    /// A new call's files token.
    pub async fn token(&self, run: &str) -> String {
        let grant = self
            .runtime
            .open_call(OpenCall {
                run_id: run.to_owned(),
                tenant_id: "t1".to_owned(),
                tool_id: "acme.files".to_owned(),
                store: true,
                ..Default::default()
            })
            .await
            .expect("open")
            .expect("a call");
        grant
            .tool_files
            .expect("a files token")
            .token
            .expose()
            .to_owned()
    }

    /// `POST /v1/tool-files` with `bytes`, declared as a PDF: the answer.
    pub async fn store(&self, token: &str, bytes: &[u8]) -> Value {
        let answer = self
            .http
            .post(format!("{}/v1/tool-files", self.url))
            .bearer_auth(token)
            .header("content-type", "application/pdf")
            .body(bytes.to_vec())
            .send()
            .await
            .expect("send");
        assert_eq!(answer.status(), 200);
        answer.json().await.expect("json")
    }
}

/// Where a test's PDFs go for a person to open, when `KINDGI_KEEP_PDFS`
/// names a folder.
pub fn keep(name: &str, bytes: &[u8]) {
    if let Some(dir) = std::env::var_os("KINDGI_KEEP_PDFS") {
        let _ = std::fs::write(Path::new(&dir).join(name), bytes);
    }
}
