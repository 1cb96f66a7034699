//! PDFs in the shapes writers produce, stored through `POST /v1/tool-files`:
//! each is `application/pdf` with the pages it has, read from its bytes;
//! damaged ones are not stored (`type`).
//!
//! The shapes are written with `pdf-writer` and rewritten with qpdf (which
//! `.ci/run` installs from Debian's packages): object streams compressed
//! and not, cross-reference streams, linearization, incremental updates
//! and nested page trees.

mod common;

use common::{Runtime, document, keep, pages_doc, qpdf, with_page_added};
use serde_json::{Value, json};

/// Every shape, named, with its page count.
fn shapes() -> Vec<(&'static str, Vec<u8>, u64)> {
    let classic = pages_doc(3, None, false);
    let long = pages_doc(36, Some(4), false);
    let objstm = ["--object-streams=generate"];
    let mut shapes = vec![
        ("classic xref table", classic.clone(), 3),
        ("xref stream", pages_doc(2, None, true), 2),
        ("one page", document(&["Only page"], None, false), 1),
        ("nested Pages nodes, three levels", long.clone(), 36),
        ("object streams (compressed)", qpdf(&classic, &objstm), 3),
        (
            "object streams of a nested tree, 36 pages",
            qpdf(&long, &objstm),
            36,
        ),
        (
            "object streams (uncompressed)",
            qpdf(
                &long,
                &["--object-streams=generate", "--compress-streams=n"],
            ),
            36,
        ),
        (
            "object streams, qdf",
            qpdf(&long, &["--qdf", "--object-streams=generate"]),
            36,
        ),
        ("linearized", qpdf(&long, &["--linearize"]), 36),
        (
            "linearized with object streams",
            qpdf(&long, &["--linearize", "--object-streams=generate"]),
            36,
        ),
        ("incremental update", with_page_added(&classic, 3), 4),
        (
            "incremental update of an xref stream",
            with_page_added(&pages_doc(2, None, true), 2),
            3,
        ),
        (
            "17 pages, object streams, flattened by qpdf",
            qpdf(&pages_doc(17, Some(3), false), &objstm),
            17,
        ),
    ];
    shapes.push((
        "an update rewritten with object streams",
        qpdf(&with_page_added(&classic, 3), &objstm),
        4,
    ));
    shapes
}

/// Damaged or hostile files that are no PDF a model is shown.
fn damaged() -> Vec<(&'static str, Vec<u8>)> {
    let long = pages_doc(36, Some(4), false);
    let objstm = qpdf(&long, &["--object-streams=generate"]);
    let mut cycle = pages_doc(3, Some(2), false);
    // A node that names the root among its kids: a tree with a cycle.
    let text = String::from_utf8_lossy(&cycle).into_owned();
    let node = text.find("/Type /Pages\n  /Kids [").expect("a node");
    let at = node + "/Type /Pages\n  /Kids [".len();
    assert!(!text[..node].contains("/Count"), "the first node written");
    cycle.splice(at..at, b"2 0 R ".iter().copied());
    vec![
        ("truncated in half", long[..long.len() / 2].to_vec()),
        (
            "object streams, truncated in half",
            objstm[..objstm.len() / 2].to_vec(),
        ),
        (
            "object streams, cut before their end",
            objstm[..objstm.len() - 200].to_vec(),
        ),
        ("a page tree with a cycle", cycle),
        ("no pages", document(&[], None, false)),
        (
            "a page tree that names a missing page",
            String::from_utf8_lossy(&pages_doc(2, None, false))
                .replacen("/Kids [", "/Kids [777 0 R ", 1)
                .into_bytes(),
        ),
        (
            "only a page count, no tree",
            b"%PDF-1.7\n1 0 obj << /Type /Pages /Count 7 >> endobj\n%%EOF\n".to_vec(),
        ),
    ]
}

#[tokio::test]
async fn every_shape_is_stored_with_its_pages() {
    let rt = Runtime::start().await;
    for (n, (name, bytes, pages)) in shapes().into_iter().enumerate() {
        keep(&format!("shape-{n}.pdf"), &bytes);
        // A call stores 10 files at most: one call per shape.
        let token = rt.token(&format!("run-{n}")).await;
        let answer = rt.store(&token, &bytes).await;
        let file = &answer["file"];
        assert_eq!(
            (&file["contentType"], &file["pages"]),
            (&json!("application/pdf"), &json!(pages)),
            "{name}: {answer}"
        );
        assert_eq!(file["size"], bytes.len(), "{name}");
    }
}

#[tokio::test]
async fn damaged_pdfs_are_not_stored() {
    let rt = Runtime::start().await;
    for (n, (name, bytes)) in damaged().into_iter().enumerate() {
        keep(&format!("damaged-{n}.pdf"), &bytes);
        let token = rt.token(&format!("run-{n}")).await;
        let answer: Value = rt.store(&token, &bytes).await;
        assert_eq!(answer, json!({"notStored": "type"}), "{name}");
    }
}

#[test]
fn the_shapes_are_what_they_say() {
    // qpdf's rewrites hold what they are named for, and the hand-written
    // update appends to its base.
    let shapes = shapes();
    let find = |name: &str| {
        &shapes
            .iter()
            .find(|s| s.0 == name)
            .unwrap_or_else(|| panic!("{name}"))
            .1
    };
    let has = |bytes: &[u8], what: &str| bytes.windows(what.len()).any(|w| w == what.as_bytes());
    assert!(has(find("object streams (compressed)"), "/ObjStm"));
    assert!(has(find("object streams (compressed)"), "/XRef"));
    assert!(!has(find("object streams (compressed)"), "/Type /Page "));
    assert!(has(find("xref stream"), "/XRef"));
    assert!(has(find("linearized"), "/Linearized"));
    assert!(has(find("linearized with object streams"), "/ObjStm"));
    let update = find("incremental update");
    assert!(has(update, "/Prev"));
    assert_eq!(
        update.windows(5).filter(|w| *w == b"%%EOF").count(),
        2,
        "two revisions"
    );
}
