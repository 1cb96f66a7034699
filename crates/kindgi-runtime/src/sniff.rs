//! What a file's bytes are. Only the bytes decide a file's type: the type
//! its source declares is checked against them, never believed.

/// The kinds of file a model is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/gif`.
    Gif,
    /// `image/webp`.
    Webp,
    /// `application/pdf`.
    Pdf,
    /// UTF-8 text.
    Text,
}

impl FileKind {
    /// The content type recorded for a file of this kind.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
            Self::Pdf => "application/pdf",
            Self::Text => "text/plain; charset=utf-8",
        }
    }

    /// Whether this is one of the image kinds.
    pub fn is_image(self) -> bool {
        matches!(self, Self::Png | Self::Jpeg | Self::Gif | Self::Webp)
    }

    /// Whether a declared content type (its essence, lowercase) agrees with
    /// this kind. Absent and generic declarations agree with every kind.
    fn agrees_with(self, declared: &str) -> bool {
        if matches!(
            declared,
            "" | "*/*" | "application/octet-stream" | "binary/octet-stream"
        ) {
            return true;
        }
        match self {
            Self::Png => declared == "image/png",
            Self::Jpeg => matches!(declared, "image/jpeg" | "image/jpg" | "image/pjpeg"),
            Self::Gif => declared == "image/gif",
            Self::Webp => declared == "image/webp",
            Self::Pdf => matches!(declared, "application/pdf" | "application/x-pdf"),
            Self::Text => {
                declared.starts_with("text/")
                    || matches!(
                        declared,
                        "application/json"
                            | "application/x-ndjson"
                            | "application/xml"
                            | "application/yaml"
                            | "application/x-yaml"
                            | "application/javascript"
                            | "application/toml"
                    )
                    || declared.ends_with("+json")
                    || declared.ends_with("+xml")
            }
        }
    }
}

/// What the bytes were found to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    /// The kind.
    pub kind: FileKind,
    /// A PDF's page count.
    pub pages: Option<u32>,
}

/// Why bytes are not stored as a file a model is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SniffRefusal {
    /// Not a kind a model is shown (binary, or a PDF whose pages can't be counted).
    Unknown,
    /// A kind a model is shown, but not the one the source declared.
    Contradicts,
}

/// The essence of a `Content-Type` value: before any `;`, trimmed, lowercase.
///
/// ```
/// assert_eq!(kindgi_runtime::sniff::essence("Text/Plain; charset=utf-8"), "text/plain");
/// ```
pub fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Finds the kind of `bytes` and checks it against `declared` (the
/// request's `Content-Type`, if any).
///
/// ```
/// use kindgi_runtime::sniff::{sniff, FileKind, SniffRefusal};
/// let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
/// assert_eq!(sniff(png, Some("image/png")).map(|s| s.kind), Ok(FileKind::Png));
/// assert_eq!(sniff(png, Some("application/pdf")), Err(SniffRefusal::Contradicts));
/// assert_eq!(sniff(b"hello", None).map(|s| s.kind), Ok(FileKind::Text));
/// assert_eq!(sniff(b"\0\x01\x02", None), Err(SniffRefusal::Unknown));
/// ```
///
/// # Errors
///
/// [`SniffRefusal`] when the bytes are no kind a model is shown, or not the
/// kind declared.
pub fn sniff(bytes: &[u8], declared: Option<&str>) -> Result<Sniffed, SniffRefusal> {
    let kind = kind_of(bytes).ok_or(SniffRefusal::Unknown)?;
    let declared = declared.map(essence).unwrap_or_default();
    if !kind.agrees_with(&declared) {
        return Err(SniffRefusal::Contradicts);
    }
    let pages = match kind {
        FileKind::Pdf => Some(pdf_page_count(bytes).ok_or(SniffRefusal::Unknown)?),
        _ => None,
    };
    Ok(Sniffed { kind, pages })
}

fn kind_of(bytes: &[u8]) -> Option<FileKind> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(FileKind::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(FileKind::Jpeg)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(FileKind::Gif)
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some(FileKind::Webp)
    } else if bytes.starts_with(b"%PDF-") {
        Some(FileKind::Pdf)
    } else if is_text(bytes) {
        Some(FileKind::Text)
    } else {
        None
    }
}

/// UTF-8 with no NUL and no control characters other than whitespace.
fn is_text(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    !text.is_empty()
        && !text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}'))
}

/// A PDF's page count: its page objects (`/Type /Page`), else the largest
/// `/Count` of a page tree (for PDFs that keep pages in object streams).
fn pdf_page_count(bytes: &[u8]) -> Option<u32> {
    let pages = count_page_objects(bytes);
    let pages = if pages > 0 {
        pages
    } else {
        largest_count(bytes)
    };
    (pages > 0).then_some(pages)
}

fn count_page_objects(bytes: &[u8]) -> u32 {
    let mut count = 0u32;
    let mut at = 0;
    while let Some(found) = find(&bytes[at..], b"/Type") {
        let mut i = at + found + b"/Type".len();
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes[i..].starts_with(b"/Page") {
            let next = bytes.get(i + b"/Page".len()).copied();
            // `/Pages` is a page tree node, not a page.
            if !next.is_some_and(|b| b.is_ascii_alphanumeric()) {
                count = count.saturating_add(1);
            }
        }
        at = i;
    }
    count
}

fn largest_count(bytes: &[u8]) -> u32 {
    let mut largest = 0u32;
    let mut at = 0;
    while let Some(found) = find(&bytes[at..], b"/Count") {
        let mut i = at + found + b"/Count".len();
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if let Some(n) = std::str::from_utf8(&bytes[start..i])
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
        {
            largest = largest.max(n);
        }
        at = i;
    }
    largest
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdf(pages: usize) -> Vec<u8> {
        let mut out = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n".to_vec();
        out.extend_from_slice(
            format!("2 0 obj << /Type /Pages /Count {pages} >> endobj\n").as_bytes(),
        );
        for n in 0..pages {
            out.extend_from_slice(
                format!("{} 0 obj << /Type/Page /Parent 2 0 R >> endobj\n", n + 3).as_bytes(),
            );
        }
        out.extend_from_slice(b"%%EOF\n");
        out
    }

    #[test]
    fn counts_pdf_pages() {
        assert_eq!(
            sniff(&pdf(3), Some("application/pdf")).map(|s| s.pages),
            Ok(Some(3))
        );
        let tree_only = b"%PDF-1.7\n<< /Type /Pages /Count 7 >>\n%%EOF";
        assert_eq!(sniff(tree_only, None).map(|s| s.pages), Ok(Some(7)));
        assert_eq!(sniff(b"%PDF-1.7\n%%EOF", None), Err(SniffRefusal::Unknown));
    }

    #[test]
    fn text_and_declared_types() {
        assert_eq!(
            sniff("héllo\n".as_bytes(), Some("text/markdown")).map(|s| s.kind),
            Ok(FileKind::Text)
        );
        assert_eq!(
            sniff(b"{\"a\":1}", Some("application/json")).map(|s| s.kind),
            Ok(FileKind::Text)
        );
        assert_eq!(
            sniff(b"hello", Some("image/png")),
            Err(SniffRefusal::Contradicts)
        );
        assert_eq!(
            sniff(&[0xff, 0xfe, 0x00], Some("text/plain")),
            Err(SniffRefusal::Unknown)
        );
        assert_eq!(
            sniff(b"GIF89a....", Some("IMAGE/GIF")).map(|s| s.kind),
            Ok(FileKind::Gif)
        );
        assert_eq!(
            sniff(b"RIFF\0\0\0\0WEBPVP8 ", None).map(|s| s.kind),
            Ok(FileKind::Webp)
        );
        assert_eq!(
            sniff(&[0xFF, 0xD8, 0xFF, 0xE0], Some("image/jpg")).map(|s| s.kind),
            Ok(FileKind::Jpeg)
        );
    }
}
