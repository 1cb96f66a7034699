//! The weekly report as a PDF, written with `pdf-writer`: a title, a line
//! of text and a table (a header row, one row per priority, a total) on A4
//! pages in the standard Helvetica fonts, which every viewer has, so the
//! file embeds none. Rows that don't fit on a page go on to the next, under
//! the table's header again, and every page says which of how many it is.

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str};

/// A4 in points.
const PAGE_WIDTH: f32 = 595.0;
const PAGE_HEIGHT: f32 = 842.0;
const MARGIN: f32 = 56.0;
const ROW_HEIGHT: f32 = 20.0;
/// Where the table's columns start, and where it ends.
const COLUMNS: [f32; 2] = [MARGIN, 360.0];
const TABLE_END: f32 = PAGE_WIDTH - MARGIN;
/// Where the first page's table starts (under the title and the text), and
/// where later pages' do.
const FIRST_TABLE_TOP: f32 = PAGE_HEIGHT - MARGIN - 80.0;
const LATER_TABLE_TOP: f32 = PAGE_HEIGHT - MARGIN - 40.0;
/// The lowest a row may sit, above the page number.
const TABLE_BOTTOM: f32 = MARGIN + 30.0;

const REGULAR: Name<'static> = Name(b"F1");
const BOLD: Name<'static> = Name(b"F2");

/// The report: its title, a line of text under it, and the table's rows
/// (a label and a count each), totalled in a last row.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// On the first page, large.
    pub title: &'a str,
    /// Under the title.
    pub text: &'a str,
    /// The table's two column headings.
    pub headings: [&'a str; 2],
    /// The table's rows.
    pub rows: &'a [(String, u64)],
}

/// How many of the table's rows (header excluded) fit on the first page
/// and on each later one.
fn rows_per_page(first: bool) -> usize {
    let top = if first {
        FIRST_TABLE_TOP
    } else {
        LATER_TABLE_TOP
    };
    // The header row takes one row's height.
    (((top - TABLE_BOTTOM) / ROW_HEIGHT) as usize).saturating_sub(1)
}

/// The table's body rows, the total included, cut into pages.
fn paginate(rows: Vec<(String, String)>) -> Vec<Vec<(String, String)>> {
    let mut pages = Vec::new();
    let mut rest = rows.as_slice();
    loop {
        let fit = rows_per_page(pages.is_empty()).min(rest.len());
        pages.push(rest[..fit].to_vec());
        rest = &rest[fit..];
        if rest.is_empty() {
            return pages;
        }
    }
}

/// Renders `report` as a PDF of as many pages as its table needs.
///
/// ```
/// use support_desk::pdf::{render, Report};
/// let rows = vec![("urgent".to_owned(), 3)];
/// let pdf = render(&Report { title: "Weekly report", text: "Open tickets.", headings: ["Priority", "Tickets"], rows: &rows });
/// assert!(pdf.starts_with(b"%PDF-1.7"));
/// ```
pub fn render(report: &Report<'_>) -> Vec<u8> {
    let total: u64 = report.rows.iter().map(|(_, n)| n).sum();
    let mut body: Vec<(String, String)> = report
        .rows
        .iter()
        .map(|(label, n)| (label.clone(), n.to_string()))
        .collect();
    body.push(("Total".to_owned(), total.to_string()));
    let pages = paginate(body);
    let last_row = pages.iter().map(Vec::len).sum::<usize>() - 1;

    let mut pdf = Pdf::new();
    let mut ids = (1..).map(Ref::new);
    let mut next = || ids.next().unwrap_or(Ref::new(i32::MAX));
    let (catalog, tree, regular, bold) = (next(), next(), next(), next());
    pdf.catalog(catalog).pages(tree);
    pdf.type1_font(regular)
        .base_font(Name(b"Helvetica"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold)
        .base_font(Name(b"Helvetica-Bold"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));

    let mut kids = Vec::with_capacity(pages.len());
    let mut row_number = 0;
    for (n, rows) in pages.iter().enumerate() {
        let (page_id, contents_id) = (next(), next());
        kids.push(page_id);
        let mut content = Content::new();
        let top = if n == 0 {
            text(
                &mut content,
                BOLD,
                18.0,
                MARGIN,
                PAGE_HEIGHT - MARGIN,
                report.title,
            );
            text(
                &mut content,
                REGULAR,
                11.0,
                MARGIN,
                PAGE_HEIGHT - MARGIN - 30.0,
                report.text,
            );
            FIRST_TABLE_TOP
        } else {
            let heading = format!("{} (continued)", report.title);
            text(
                &mut content,
                BOLD,
                12.0,
                MARGIN,
                PAGE_HEIGHT - MARGIN,
                &heading,
            );
            LATER_TABLE_TOP
        };
        // The header row, shaded, then the rows, ruled; the total in bold
        // under a heavier rule.
        content.set_fill_gray(0.9);
        content.rect(MARGIN, top - ROW_HEIGHT, TABLE_END - MARGIN, ROW_HEIGHT);
        content.fill_nonzero();
        content.set_fill_gray(0.0);
        for (column, heading) in COLUMNS.iter().zip(report.headings) {
            text(&mut content, BOLD, 11.0, column + 6.0, top - 14.0, heading);
        }
        let mut y = top - ROW_HEIGHT;
        for (label, count) in rows {
            let is_total = row_number == last_row;
            rule(&mut content, y, if is_total { 1.2 } else { 0.4 });
            let font = if is_total { BOLD } else { REGULAR };
            text(&mut content, font, 11.0, COLUMNS[0] + 6.0, y - 14.0, label);
            text(&mut content, font, 11.0, COLUMNS[1] + 6.0, y - 14.0, count);
            y -= ROW_HEIGHT;
            row_number += 1;
        }
        rule(&mut content, y, 0.4);
        let footer = format!("Page {} of {}", n + 1, pages.len());
        text(&mut content, REGULAR, 9.0, MARGIN, MARGIN, &footer);

        pdf.stream(contents_id, &content.finish());
        let mut page = pdf.page(page_id);
        page.parent(tree)
            .media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT))
            .contents(contents_id);
        let mut resources = page.resources();
        resources.fonts().pair(REGULAR, regular).pair(BOLD, bold);
        resources.finish();
        page.finish();
    }
    let count = i32::try_from(kids.len()).unwrap_or(i32::MAX);
    pdf.pages(tree).kids(kids).count(count);
    pdf.finish()
}

/// A line of text at (`x`, `y`).
fn text(content: &mut Content, font: Name<'_>, size: f32, x: f32, y: f32, line: &str) {
    let bytes = win_ansi(line);
    content.begin_text();
    content.set_font(font, size);
    content.next_line(x, y);
    content.show(Str(&bytes));
    content.end_text();
}

/// A horizontal rule across the table at `y`.
fn rule(content: &mut Content, y: f32, width: f32) {
    content.set_line_width(width);
    content.move_to(MARGIN, y);
    content.line_to(TABLE_END, y);
    content.stroke();
}

/// Text in WinAnsi, the standard fonts' encoding: ASCII and Latin-1 as
/// they are, anything else as `?`.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match c {
            ' '..='~' | '\u{a0}'..='\u{ff}' => u8::try_from(u32::from(c)).unwrap_or(b'?'),
            _ => b'?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(rows: &[(String, u64)]) -> Vec<u8> {
        render(&Report {
            title: "Report (weekly)",
            text: "Tickets by priority.",
            headings: ["Priority", "Tickets"],
            rows,
        })
    }

    /// What the runtime finds the bytes to be: their page count.
    fn pages(pdf: &[u8]) -> Option<u32> {
        kindgi_runtime::sniff::sniff(pdf, Some("application/pdf"))
            .ok()
            .and_then(|s| s.pages)
    }

    #[test]
    fn a_short_table_is_one_page() {
        let rows = vec![("high".to_owned(), 2), ("low".to_owned(), 1)];
        let pdf = report(&rows);
        assert_eq!(pages(&pdf), Some(1));
        let text = String::from_utf8_lossy(&pdf);
        assert!(text.contains("/BaseFont /Helvetica-Bold"), "{text}");
        assert!(text.contains("/WinAnsiEncoding"));
    }

    #[test]
    fn a_long_table_goes_on_to_more_pages() {
        let first = rows_per_page(true);
        let later = rows_per_page(false);
        assert!(first > 20 && later > first, "{first} {later}");
        // The rows and the total fill the first page exactly; one more row
        // needs a second, and a third past what two pages hold.
        let rows =
            |n: usize| -> Vec<(String, u64)> { (0..n).map(|i| (format!("row {i}"), 1)).collect() };
        assert_eq!(pages(&report(&rows(first - 1))), Some(1));
        assert_eq!(pages(&report(&rows(first))), Some(2));
        assert_eq!(pages(&report(&rows(first + later))), Some(3));
        if let Some(dir) = std::env::var_os("KINDGI_KEEP_PDFS") {
            let _ = std::fs::write(
                std::path::Path::new(&dir).join("report.pdf"),
                report(&rows(first + 3)),
            );
        }
        let split = paginate(vec![("a".to_owned(), "1".to_owned()); first + 1]);
        assert_eq!(split.iter().map(Vec::len).collect::<Vec<_>>(), [first, 1]);
    }

    #[test]
    fn text_is_written_in_win_ansi() {
        assert_eq!(win_ansi("café"), b"caf\xe9");
        assert_eq!(win_ansi("→ ok"), b"? ok");
        let rows = vec![("très urgent".to_owned(), 1)];
        let text = String::from_utf8_lossy(&report(&rows)).to_ascii_lowercase();
        // Past ASCII, pdf-writer writes a hex string.
        assert!(text.contains("<7472e8732075726765"), "{text}");
        assert!(text.contains("(report (weekly))"), "{text}");
    }
}
