//! The accepted differences: a Markdown document whose table rows each
//! name a probe (or, ending in `*`, every probe whose id starts so), a
//! part, and why the services may differ there.
//!
//! ```markdown
//! | probe | part | why |
//! |---|---|---|
//! | `http.info` | body | The reference predates protocol 2.8: fewer tools. |
//! | `tool.*` | records /*/inMessage | … |
//! ```
//!
//! Rows whose first cell isn't one backticked id (the header, the rule,
//! any other table) are not entries.

use super::compare::{Part, PartPattern};

/// One accepted difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The probe id, or a prefix of ids when it ends in `*`.
    pub probe: String,
    /// The parts that may differ.
    pub part: PartPattern,
    /// Why.
    pub why: String,
}

impl Accepted {
    /// Whether this entry covers `part` of probe `id`.
    pub fn covers(&self, id: &str, part: &Part) -> bool {
        let probe = match self.probe.strip_suffix('*') {
            Some(prefix) => id.starts_with(prefix),
            None => id == self.probe,
        };
        probe && self.part.covers(part)
    }
}

/// The entries of an accepted-differences document.
///
/// # Errors
///
/// An entry row without three cells, with an unknown part or an empty
/// reason, named by its line number.
///
/// ```
/// use kindgi_conformance::differential::parse_accepted;
/// let doc = "| probe | part | why |\n|---|---|---|\n| `http.info` | body | fewer tools |\n";
/// let accepted = parse_accepted(doc).unwrap();
/// assert_eq!(accepted[0].probe, "http.info");
/// assert_eq!(accepted[0].why, "fewer tools");
/// ```
pub fn parse_accepted(document: &str) -> Result<Vec<Accepted>, String> {
    let mut entries = Vec::new();
    for (number, line) in document.lines().enumerate() {
        let Some(row) = line.trim().strip_prefix('|') else {
            continue;
        };
        let cells: Vec<&str> = row
            .trim_end_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let Some(probe) = cells
            .first()
            .and_then(|c| c.strip_prefix('`'))
            .and_then(|c| c.strip_suffix('`'))
            .filter(|c| !c.is_empty() && !c.contains('`'))
        else {
            continue;
        };
        let line_no = number + 1;
        let [_, part, why] = cells[..] else {
            return Err(format!(
                "line {line_no}: an entry has three cells (probe, part, why), this one has {}",
                cells.len()
            ));
        };
        let part = part.parse().map_err(|e| format!("line {line_no}: {e}"))?;
        if why.is_empty() {
            return Err(format!("line {line_no}: `{probe}` says no reason"));
        }
        entries.push(Accepted {
            probe: probe.to_owned(),
            part,
            why: why.to_owned(),
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_entries_and_prefixes_cover_their_ids() {
        let doc = "Some prose | with a bar.\n\n| probe | part | why |\n|---|---|---|\n\
                   | `tool.throws*` | header retry-after | a reason |\n| `http.info` | body | another |\n";
        let entries = parse_accepted(doc).expect("parses");
        assert_eq!(entries.len(), 2);
        let retry = Part::Header("retry-after".to_owned());
        assert!(entries[0].covers("tool.throws", &retry));
        assert!(entries[0].covers("tool.throws.deep", &retry));
        assert!(!entries[0].covers("tool.throws", &Part::Body(String::new())));
        assert!(entries[1].covers("http.info", &Part::Body("/indexHash".into())));
        assert!(!entries[1].covers("http.info.x", &Part::Body(String::new())));
    }

    #[test]
    fn a_bad_entry_is_refused_with_its_line() {
        assert_eq!(
            parse_accepted("\n| `a` | bodies | x |"),
            Err("line 2: \"bodies\" is not a part: status, body [pointer], records [pointer] or header <content-type|retry-after|kindgi-duration-ms|kindgi-artifact-version>".to_owned())
        );
        assert_eq!(
            parse_accepted("| `a` | body |  |"),
            Err("line 1: `a` says no reason".to_owned())
        );
        assert_eq!(
            parse_accepted("| `a` | body |"),
            Err("line 1: an entry has three cells (probe, part, why), this one has 2".to_owned())
        );
    }
}
