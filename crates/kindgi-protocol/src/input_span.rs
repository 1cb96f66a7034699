//! Where a tool invoke's input lies in its body, found without reading the
//! input: a scan of the body's top-level object that follows only quotes,
//! escapes and brackets. It checks nothing; what it finds is checked by
//! others — the body around the input by serde_json, the input's text by
//! whoever reads it (see [`crate::parse_invoke_unchecked`]).

use std::ops::Range;

/// The bytes of `text` a value may end at when it is a number or a
/// literal: a separator, a closing bracket or white space.
fn ends_a_scalar(byte: u8) -> bool {
    matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
}

/// The byte range of the value of the top-level `"input"` key of `text`,
/// a JSON object; `None` where the scan can't follow the text (it is no
/// object, a key is written with an escape, a string never ends) or the
/// object has no `"input"`, or two.
///
/// For well-formed JSON the range is exactly the input's text. For other
/// text it is some range: the caller checks both the text around it and
/// the text in it.
pub(crate) fn input_span(text: &[u8]) -> Option<Range<usize>> {
    let mut at = skip_space(text, 0);
    if text.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    let mut found = None;
    loop {
        at = skip_space(text, at);
        match text.get(at)? {
            b'"' => {}
            b'}' => return found,
            _ => return None,
        }
        let key_end = string_end(text, at)?;
        let key = text.get(at + 1..key_end - 1)?;
        // `"inp\u0075t"` is `"input"` too: left to the reading path.
        if key.contains(&b'\\') {
            return None;
        }
        at = skip_space(text, key_end);
        if text.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_space(text, at + 1);
        let end = value_end(text, start)?;
        if key == b"input" {
            if found.is_some() {
                return None;
            }
            found = Some(start..end);
        }
        at = skip_space(text, end);
        match text.get(at)? {
            b',' => at += 1,
            b'}' => return found,
            _ => return None,
        }
    }
}

/// The first index from `at` on that isn't JSON white space.
fn skip_space(text: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = text.get(at) {
        at += 1;
    }
    at
}

/// The index just past the string whose opening quote is at `at`; `None`
/// when it never closes.
fn string_end(text: &[u8], at: usize) -> Option<usize> {
    let mut at = at + 1;
    loop {
        let found = at + memchr::memchr2(b'"', b'\\', text.get(at..)?)?;
        if text[found] == b'"' {
            return Some(found + 1);
        }
        // A backslash and the byte it escapes.
        at = found + 2;
    }
}

/// The index just past the value that starts at `at`: a string to its
/// closing quote, an object or array to its closing bracket, anything
/// else to the next separator or space.
fn value_end(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at)? {
        b'"' => string_end(text, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                match text.get(at)? {
                    b'"' => {
                        at = string_end(text, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let rest = text.get(at..)?;
            let length = rest
                .iter()
                .position(|&byte| ends_a_scalar(byte))
                .unwrap_or(rest.len());
            (length > 0).then_some(at + length)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: &str) -> Option<&str> {
        input_span(text.as_bytes()).and_then(|span| text.get(span))
    }

    #[test]
    fn the_span_is_the_input_value_exactly() {
        let ctx = r#""ctx":{"tenantId":"t","runId":"r","input":9}"#;
        for (value, body) in [
            (
                r#"{"a": "}]\"", "b": [[{}]]}"#,
                format!(
                    r#"{{"v":2,"tool":{{"id":"x","input":[1]}},"input":{{"a": "}}]\"", "b": [[{{}}]]}},{ctx}}}"#
                ),
            ),
            (
                "[1, [2], \"[\"]",
                format!("{{ \"input\" :\n[1, [2], \"[\"] ,{ctx} }}"),
            ),
            ("-1.5e3", format!(r#"{{{ctx},"input":-1.5e3}}"#)),
            ("null", r#"{"input":null}"#.to_owned()),
            (r#""\\\"""#, r#"{"input":"\\\""}"#.to_owned()),
            ("true", "\t{\"input\"\r:true\n}".to_owned()),
        ] {
            assert_eq!(input(&body), Some(value), "{body}");
        }
    }

    #[test]
    fn what_the_scan_cant_follow_is_none() {
        for body in [
            "",
            "[]",
            r#"{"tool":{"id":"x"}}"#,
            r#"{"input":1,"input":2}"#,
            r#"{"inp\u0075t":1}"#,
            r#"{"input":"never closed}"#,
            r#"{"input":[1,2}"#,
            r#"{"input":}"#,
            r#"{"input" 1}"#,
            r#"{"input":1 2}"#,
            r#"{"a":1;"input":2}"#,
            r#"{"input":1"#,
        ] {
            assert_eq!(input_span(body.as_bytes()), None, "{body}");
        }
    }
}
