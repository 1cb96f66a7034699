//! What a file's bytes are. Only the bytes decide a file's type: the type
//! its source declares is checked against them, never believed.
//!
//! - Images (PNG, JPEG, GIF, WebP): their signature, then their header read
//!   with the `image` crate's decoder for that format, up to the
//!   dimensions (no pixels are decoded). Bytes that start like an image but
//!   whose header doesn't read, or that have no width or height, are no
//!   image.
//! - PDF: `%PDF-`, then its page tree read with `hayro-syntax` (module `pdf`),
//!   after its streams were measured (module `streams`); one whose pages can't
//!   be counted is no PDF.
//! - Text: UTF-8 with no control characters but white space.

mod pdf;
mod streams;

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
    /// Not a kind a model is shown: binary, an image whose header doesn't
    /// read, or a PDF whose pages can't be counted.
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
/// // A 1×1 PNG.
/// let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\
///             \0\0\0\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\0\x05\0\x01\xff\x89\x99=\x1d\0\0\0\0IEND\xaeB`\x82";
/// assert_eq!(sniff(png, Some("image/png")).map(|s| s.kind), Ok(FileKind::Png));
/// assert_eq!(sniff(png, Some("application/pdf")), Err(SniffRefusal::Contradicts));
/// // PNG's signature, but no PNG after it.
/// assert_eq!(sniff(&png[..20], None), Err(SniffRefusal::Unknown));
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
        FileKind::Pdf => Some(pdf::page_count(bytes).ok_or(SniffRefusal::Unknown)?),
        _ if kind.is_image() => {
            image_dimensions(bytes, kind).ok_or(SniffRefusal::Unknown)?;
            None
        }
        _ => None,
    };
    Ok(Sniffed { kind, pages })
}

/// An image's width and height, from its header as its format's decoder
/// reads it; `None` when it doesn't read or either is zero.
fn image_dimensions(bytes: &[u8], kind: FileKind) -> Option<(u32, u32)> {
    let format = match kind {
        FileKind::Png => image::ImageFormat::Png,
        FileKind::Jpeg => image::ImageFormat::Jpeg,
        FileKind::Gif => image::ImageFormat::Gif,
        FileKind::Webp => image::ImageFormat::WebP,
        FileKind::Pdf | FileKind::Text => return None,
    };
    image::ImageReader::with_format(std::io::Cursor::new(bytes), format)
        .into_dimensions()
        .ok()
        .filter(|&(width, height)| width > 0 && height > 0)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `pages` pages under one node, written with `pdf-writer`.
    fn pdf(pages: i32) -> Vec<u8> {
        let mut pdf = pdf_writer::Pdf::new();
        let tree = pdf_writer::Ref::new(2);
        pdf.catalog(pdf_writer::Ref::new(1)).pages(tree);
        let kids = (0..pages).map(|n| pdf_writer::Ref::new(n + 3));
        pdf.pages(tree).kids(kids.clone()).count(pages);
        for kid in kids {
            pdf.page(kid).parent(tree);
        }
        pdf.finish()
    }

    fn image(format: image::ImageFormat) -> Vec<u8> {
        let pixels = image::RgbaImage::from_pixel(3, 2, image::Rgba([200, 10, 10, 255]));
        let mut out = std::io::Cursor::new(Vec::new());
        let pixels = image::DynamicImage::ImageRgba8(pixels);
        let pixels = if format == image::ImageFormat::Jpeg {
            image::DynamicImage::ImageRgb8(pixels.to_rgb8())
        } else {
            pixels
        };
        pixels.write_to(&mut out, format).expect("encode");
        out.into_inner()
    }

    #[test]
    fn counts_pdf_pages() {
        assert_eq!(
            sniff(&pdf(3), Some("application/pdf")).map(|s| s.pages),
            Ok(Some(3))
        );
        assert_eq!(sniff(&pdf(0), None), Err(SniffRefusal::Unknown));
        assert_eq!(sniff(b"%PDF-1.7\n%%EOF", None), Err(SniffRefusal::Unknown));
        // A page count alone, with no tree to read it from, is not a PDF.
        let tree_only = b"%PDF-1.7\n<< /Type /Pages /Count 7 >>\n%%EOF";
        assert_eq!(sniff(tree_only, None), Err(SniffRefusal::Unknown));
    }

    #[test]
    fn images_are_read_up_to_their_dimensions() {
        for (format, kind) in [
            (image::ImageFormat::Png, FileKind::Png),
            (image::ImageFormat::Jpeg, FileKind::Jpeg),
            (image::ImageFormat::Gif, FileKind::Gif),
            (image::ImageFormat::WebP, FileKind::Webp),
        ] {
            let bytes = image(format);
            assert_eq!(
                sniff(&bytes, Some(kind.content_type())),
                Ok(Sniffed { kind, pages: None }),
                "{format:?}"
            );
            assert_eq!(
                sniff(&bytes, Some("application/pdf")),
                Err(SniffRefusal::Contradicts)
            );
            // The signature and then nothing an image decoder reads.
            let magic = match kind {
                FileKind::Webp => 12,
                FileKind::Jpeg => 3,
                _ => 8,
            };
            let mut fake = bytes[..magic].to_vec();
            fake.extend_from_slice(&[0; 40]);
            assert_eq!(sniff(&fake, None), Err(SniffRefusal::Unknown), "{format:?}");
        }
        assert_eq!(sniff(b"GIF89a....", None), Err(SniffRefusal::Unknown));
        assert_eq!(
            sniff(b"RIFF\0\0\0\0WEBPVP8 ", None),
            Err(SniffRefusal::Unknown)
        );
        assert_eq!(
            sniff(&[0xFF, 0xD8, 0xFF, 0xE0], None),
            Err(SniffRefusal::Unknown)
        );
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
            sniff(&image(image::ImageFormat::Gif), Some("IMAGE/GIF")).map(|s| s.kind),
            Ok(FileKind::Gif)
        );
        assert_eq!(
            sniff(&image(image::ImageFormat::Jpeg), Some("image/jpg")).map(|s| s.kind),
            Ok(FileKind::Jpeg)
        );
    }
}
