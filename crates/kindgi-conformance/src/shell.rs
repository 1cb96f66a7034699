//! Command lines: splitting one into argv, quoting a value for `sh`.

/// Splits a command line into its argv the way `sh` would for plain words,
/// 'single' and "double" quotes and backslash escapes (no expansions).
///
/// ```
/// use kindgi_conformance::harness::split_command;
/// assert_eq!(split_command(r#"node "my dir/serve.js" --x 'a b'"#),
///            Ok(vec!["node".to_owned(), "my dir/serve.js".to_owned(), "--x".to_owned(), "a b".to_owned()]));
/// assert!(split_command("node 'open").is_err());
/// ```
///
/// # Errors
///
/// An unclosed quote or a trailing backslash.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            '\'' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => current.push(c),
                        None => return Err(format!("unclosed ' in {line:?}")),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => current.push(c),
                            Some(c) => {
                                current.push('\\');
                                current.push(c);
                            }
                            None => return Err(format!("unclosed \" in {line:?}")),
                        },
                        Some(c) => current.push(c),
                        None => return Err(format!("unclosed \" in {line:?}")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err(format!("a trailing backslash in {line:?}")),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// `value` in single quotes for `sh`.
pub(crate) fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_sh() {
        assert_eq!(
            split_command(r#"  a "" b\ c "x\"y" 'p\q'  "#).expect("valid"),
            ["a", "", "b c", "x\"y", "p\\q"]
        );
        assert!(split_command("a \\").is_err());
        assert!(split_command("a \"b").is_err());
    }

    #[test]
    fn quotes_for_sh() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
