//! A one-page PDF written by hand: a title and lines of text in Helvetica.
//!
//! Enough PDF for a report a person opens in any viewer, without a PDF
//! library: a catalog, one page, two standard fonts, a content stream and
//! an exact cross-reference table.

use std::fmt::Write as _;

/// A4 in points.
const PAGE_WIDTH: u32 = 595;
const PAGE_HEIGHT: u32 = 842;
const MARGIN: u32 = 56;
const LINE_HEIGHT: u32 = 16;
/// How many body lines fit under the title.
pub const MAX_LINES: usize = 44;

/// Renders `title` and `lines` as a one-page PDF. Lines past
/// [`MAX_LINES`] are left out and counted in a last line.
///
/// ```
/// let pdf = support_desk::pdf::render("Weekly report", &["3 urgent tickets".to_owned()]);
/// assert!(pdf.starts_with(b"%PDF-1.4"));
/// assert!(pdf.ends_with(b"%%EOF\n"));
/// ```
pub fn render(title: &str, lines: &[String]) -> Vec<u8> {
    let mut content = String::new();
    let top = PAGE_HEIGHT - MARGIN;
    let _ = writeln!(
        content,
        "BT /F2 18 Tf {MARGIN} {top} Td ({}) Tj ET",
        escape(title)
    );
    let mut shown: Vec<String> = lines.iter().take(MAX_LINES).cloned().collect();
    if lines.len() > MAX_LINES {
        shown.pop();
        shown.push(format!("... and {} more", lines.len() - MAX_LINES + 1));
    }
    let mut y = top - 2 * LINE_HEIGHT;
    for line in &shown {
        let _ = writeln!(
            content,
            "BT /F1 11 Tf {MARGIN} {y} Td ({}) Tj ET",
            escape(line)
        );
        y = y.saturating_sub(LINE_HEIGHT);
    }

    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] \
             /Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 6 0 R >>"
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
            .to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{content}endstream",
            content.len()
        ),
    ];

    // The binary comment line tells tools the file holds binary data.
    let mut out: Vec<u8> = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", n + 1).as_bytes());
    }
    let xref_at = out.len();
    let mut xref = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        // Each entry is exactly 20 bytes, its end of line included.
        let _ = writeln!(xref, "{offset:010} 00000 n ");
    }
    let _ = write!(
        xref,
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref_at}\n%%EOF\n",
        objects.len() + 1
    );
    out.extend_from_slice(xref.as_bytes());
    out
}

/// Text as a PDF literal string's inside, in WinAnsi: `\`, `(` and `)`
/// escaped, Latin-1 letters as octal escapes, anything else as `?`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '(' | ')' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            '\u{a0}'..='\u{ff}' => {
                let _ = write!(out, "\\{:03o}", u32::from(c));
            }
            _ => out.push('?'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PDF as text, byte for byte: the binary comment's bytes as `?`.
    fn text(pdf: &[u8]) -> String {
        pdf.iter()
            .map(|&b| if b.is_ascii() { char::from(b) } else { '?' })
            .collect()
    }

    #[test]
    fn the_cross_reference_table_points_at_every_object() {
        let pdf = render("Report (weekly)", &["a line".to_owned()]);
        let body = text(&pdf);
        let xref_at: usize = body
            .lines()
            .rev()
            .nth(1)
            .and_then(|l| l.parse().ok())
            .expect("startxref offset");
        assert!(body[xref_at..].starts_with("xref\n0 7\n"));
        let entries: Vec<&str> = body[xref_at..].lines().skip(3).take(6).collect();
        for (n, entry) in entries.iter().enumerate() {
            assert_eq!(entry.len() + 1, 20, "{entry:?}");
            let offset: usize = entry[..10].parse().expect("offset");
            assert!(
                body[offset..].starts_with(&format!("{} 0 obj\n", n + 1)),
                "object {} at {offset}",
                n + 1
            );
        }
        assert!(body.contains("(Report \\(weekly\\)) Tj"));
    }

    #[test]
    fn the_stream_length_is_exact() {
        let pdf = text(&render("T", &["x".to_owned(), "y".to_owned()]));
        let start = pdf.find("stream\n").expect("stream") + "stream\n".len();
        let end = pdf.find("endstream").expect("endstream");
        let declared: usize = pdf
            .split("/Length ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("length");
        assert_eq!(declared, end - start);
    }

    #[test]
    fn text_is_escaped_for_win_ansi() {
        assert_eq!(escape(r"a\b(c)"), r"a\\b\(c\)");
        assert_eq!(escape("café"), "caf\\351");
        assert_eq!(escape("→ ok"), "? ok");
    }

    #[test]
    fn too_many_lines_are_counted() {
        let lines: Vec<String> = (0..50).map(|n| format!("line {n}")).collect();
        let pdf = text(&render("T", &lines));
        assert!(pdf.contains("(... and 7 more)"));
        assert!(!pdf.contains("(line 43)"));
    }
}
