//! Hostile PDFs of about 10 MB, the most a file may be, through
//! `POST /v1/tool-files`: each is answered within seconds, and the whole
//! process (the runtime is in it) stays within a few hundred megabytes.
//! One test, so that nothing else runs in the process while it measures.

mod common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::Runtime;
use serde_json::{Value, json};

/// Just under the 10 MiB a body may be.
const SIZE: usize = 10 * 1024 * 1024 - 64 * 1024;

/// The process's peak resident memory, in bytes (Linux).
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A classic PDF of `objects` (numbered from 1), `trailer` after its
/// cross-reference table, or none.
fn classic(objects: &[Vec<u8>], xref: bool) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", n + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    if xref {
        let at = out.len();
        out.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
        );
        for offset in offsets {
            out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        out.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{at}\n%%EOF\n",
                objects.len() + 1
            )
            .as_bytes(),
        );
    } else {
        out.extend_from_slice(b"%%EOF\n");
    }
    out
}

/// `zeros` zero bytes, deflated.
fn deflated_zeros(zeros: usize) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![0u8; 1024 * 1024];
    for _ in 0..zeros / chunk.len() {
        z.write_all(&chunk).expect("deflate");
    }
    z.finish().expect("deflate")
}

/// The catalog and its page tree in an object stream that goes on to
/// inflate to hundreds of megabytes, and more such streams to fill 10 MB:
/// gigabytes in all.
fn decompression_bomb() -> Vec<u8> {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R >>",
    ];
    let (mut index, mut body) = (String::new(), String::new());
    for (n, object) in objects.iter().enumerate() {
        index.push_str(&format!("{} {} ", n + 1, body.len()));
        body.push_str(object);
        body.push(' ');
    }
    let members = format!("{index}{body}");
    let bomb = deflated_zeros(512 * 1024 * 1024);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(members.as_bytes()).expect("deflate");
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..512 {
        z.write_all(&chunk).expect("deflate");
    }
    let first = z.finish().expect("deflate");
    let mut out = b"%PDF-1.7\n".to_vec();
    let objstm_at = out.len();
    out.extend_from_slice(
        format!(
            "4 0 obj\n<< /Type /ObjStm /N 3 /First {} /Length {} /Filter /FlateDecode >>\nstream\n",
            index.len(),
            first.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&first);
    out.extend_from_slice(b"\nendstream\nendobj\n");
    let mut n = 6;
    while out.len() + bomb.len() + 400 < SIZE {
        out.extend_from_slice(
            format!(
                "{n} 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Length {} /Filter /FlateDecode >>\nstream\n",
                bomb.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(&bomb);
        out.extend_from_slice(b"\nendstream\nendobj\n");
        n += 1;
    }
    // A cross-reference stream: objects 1-3 in object 4.
    let xref_at = out.len();
    let mut rows = vec![0u8, 0, 0, 0, 0, 0xff];
    for index in 0..3u8 {
        rows.extend_from_slice(&[2, 0, 0, 0, 4, index]);
    }
    rows.push(1);
    rows.extend_from_slice(&u32::try_from(objstm_at).expect("offset").to_be_bytes());
    rows.push(0);
    rows.push(1);
    rows.extend_from_slice(&u32::try_from(xref_at).expect("offset").to_be_bytes());
    rows.push(0);
    out.extend_from_slice(
        format!(
            "5 0 obj\n<< /Type /XRef /Size 6 /W [1 4 1] /Root 1 0 R /Length {} >>\nstream\n",
            rows.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&rows);
    out.extend_from_slice(format!("\nendstream\nendobj\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
    out
}

/// A page tree whose node names the root among its kids, among hundreds of
/// thousands of small objects, with no cross-reference table to find them
/// by: the reader rebuilds one by scanning.
fn cycle_among_many_objects() -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Pages /Kids [4 0 R 2 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 3 0 R >>".to_vec(),
    ];
    let mut size = 0;
    while size < SIZE - 200 {
        objects.push(b"[0]".to_vec());
        size += 20 + format!("{}", objects.len()).len();
    }
    classic(&objects, false)
}

/// A page tree nested 100 000 levels deep.
fn deep_tree() -> Vec<u8> {
    let levels = 100_000;
    let mut objects = vec![b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()];
    for n in 0..levels {
        objects.push(format!("<< /Type /Pages /Kids [{} 0 R] /Count 1 >>", n + 3).into_bytes());
    }
    objects.push(b"<< /Type /Page >>".to_vec());
    classic(&objects, true)
}

/// A real PDF of 10 MB: 125 000 pages under one node.
fn many_pages() -> (Vec<u8>, u64) {
    let pages = 125_000;
    let kids: Vec<String> = (0..pages).map(|n| format!("{} 0 R", n + 3)).collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {pages} >>",
            kids.join(" ")
        )
        .into_bytes(),
    ];
    objects.extend((0..pages).map(|_| b"<</Type/Page/Parent 2 0 R>>".to_vec()));
    (classic(&objects, true), pages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pdfs_are_answered_promptly_in_bounded_memory() {
    let rt = Runtime::start().await;
    let (pages, count) = many_pages();
    let cases: Vec<(&str, Vec<u8>, Value)> = vec![
        (
            "decompression bomb",
            decompression_bomb(),
            json!({"notStored": "type"}),
        ),
        (
            "cycle among many objects",
            cycle_among_many_objects(),
            json!({"notStored": "type"}),
        ),
        ("deep tree", deep_tree(), json!({"notStored": "type"})),
        ("many pages", pages, json!(count)),
    ];
    let before = peak_memory();
    for (n, (name, bytes, expected)) in cases.into_iter().enumerate() {
        assert!(bytes.len() <= 10 * 1024 * 1024, "{name}: {}", bytes.len());
        let token = rt.token(&format!("run-{n}")).await;
        let start = Instant::now();
        let answer = rt.store(&token, &bytes).await;
        let took = start.elapsed();
        eprintln!("{name}: {} bytes, answered in {took:?}", bytes.len());
        let got = if expected.is_number() {
            answer["file"]["pages"].clone()
        } else {
            answer.clone()
        };
        assert_eq!(got, expected, "{name}: {answer}");
        assert!(took < Duration::from_secs(8), "{name} took {took:?}");
    }
    if let (Some(before), Some(after)) = (before, peak_memory()) {
        eprintln!(
            "peak memory: {} MB before, {} MB after",
            before >> 20,
            after >> 20
        );
        assert!(after < 512 << 20, "peak memory {} MB", after >> 20);
    }
}
