//! `kindgi_runtime::sniff` on any bytes and declared type: never a panic
//! nor a hang (the PDF reader, its page tree walk and the measuring of its
//! streams included), and what it finds agrees with the bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

use kindgi_runtime::sniff::{FileKind, sniff};

fuzz_target!(|data: &[u8]| {
    // The first byte picks a declared type; the rest are the file's bytes.
    let declared = [
        None,
        Some("image/png"),
        Some("application/pdf"),
        Some("text/plain; charset=utf-8"),
        Some("application/octet-stream"),
        Some("IMAGE/JPEG"),
        Some("application/vnd.acme+json"),
        Some(""),
    ];
    let (pick, bytes) = data.split_first().map_or((0, data), |(b, rest)| (*b, rest));
    let declared = declared[usize::from(pick) % declared.len()];
    if let Ok(found) = sniff(bytes, declared) {
        match found.kind {
            FileKind::Pdf => {
                assert!(bytes.starts_with(b"%PDF-"));
                assert!(found.pages.is_some_and(|p| p > 0));
            }
            FileKind::Text => {
                assert!(std::str::from_utf8(bytes).is_ok());
                assert!(!bytes.is_empty() && !bytes.contains(&0));
            }
            FileKind::Png => assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n")),
            FileKind::Jpeg => assert!(bytes.starts_with(&[0xFF, 0xD8, 0xFF])),
            FileKind::Gif => assert!(bytes.starts_with(b"GIF8")),
            FileKind::Webp => assert!(bytes.starts_with(b"RIFF")),
        }
        if found.kind != FileKind::Pdf {
            assert!(found.pages.is_none());
        }
    }
});
