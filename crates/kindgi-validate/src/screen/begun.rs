//! Where a read stopped in a JSON text: the members it had begun, for
//! [`Validator::issues_from_refused_text`](crate::Validator::issues_from_refused_text).
//!
//! A read that checks every value in text order and stopped at byte `at`
//! had checked every member of an array or object that another member of
//! the same container follows before `at`: the read finished it, and its
//! checks, before it began the next. Those members need no second look;
//! the last member begun in each container still open at `at` does.

/// Where the reader of a JSON text stood when it failed with `error`: its
/// line and column as a byte offset of `text`. `None` for an error with no
/// position, or one outside the text.
pub(crate) fn reader_offset(text: &[u8], error: &serde_json::Error) -> Option<usize> {
    let line = error.line();
    if line == 0 {
        return None;
    }
    // serde_json's column is the bytes since the line's start.
    let line_start = match line - 1 {
        0 => 0,
        newlines => memchr::memchr_iter(b'\n', text).nth(newlines - 1)? + 1,
    };
    let offset = line_start.checked_add(error.column())?;
    (offset <= text.len()).then_some(offset)
}

/// The members begun before byte `at` of the JSON text `text`: for the
/// outermost container still open there, the index of the last member
/// begun in it (a key counts an object's member as begun); then the same
/// for the container that member's value opened, and so on while one is
/// open. Empty when the root is not an array or object, or nothing in it
/// was begun. A text that is not JSON gives a path to nothing in
/// particular, never a panic.
pub(crate) fn begun(text: &[u8], at: usize) -> Vec<usize> {
    let text = text.get(..at).unwrap_or(text);
    // The innermost container's members begun, and whether its next one
    // is yet to begin (after `[`, `{` or `,`); the same of the containers
    // around it. Outside every container, values begin nothing.
    let (mut count, mut waiting) = (0usize, false);
    let mut around: Vec<(usize, bool)> = Vec::new();
    let mut i = 0;
    while let Some(&byte) = text.get(i) {
        i += 1;
        let class = CLASS[usize::from(byte)];
        if class == Class::Blank {
            continue;
        }
        if class == Class::Comma {
            waiting = true;
            continue;
        }
        if class == Class::Close {
            if let Some(outer) = around.pop() {
                (count, waiting) = outer;
            }
            continue;
        }
        // A key or value: where a member waits, it begins one.
        if waiting {
            count += 1;
            waiting = false;
        }
        if class == Class::Open {
            around.push((count, waiting));
            (count, waiting) = (0, true);
        } else if class == Class::Quote {
            i = string_end(text, i);
        }
        // A number's or literal's other characters begin nothing.
    }
    if around.is_empty() {
        return Vec::new();
    }
    // The first entry is outside every container.
    let open = around.iter().skip(1).map(|&(count, _)| count);
    open.chain([count])
        .map_while(|count| count.checked_sub(1))
        .collect()
}

/// What a byte outside strings does to [`begun`]'s walk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Whitespace and `:`: nothing.
    Blank,
    /// `,`: the next member is yet to begin.
    Comma,
    /// `{` or `[`.
    Open,
    /// `}` or `]`.
    Close,
    /// `"`: a string, a key or value.
    Quote,
    /// A number's or literal's character.
    Other,
}

/// Each byte's [`Class`].
static CLASS: [Class; 256] = {
    let mut class = [Class::Other; 256];
    class[b' ' as usize] = Class::Blank;
    class[b'\t' as usize] = Class::Blank;
    class[b'\n' as usize] = Class::Blank;
    class[b'\r' as usize] = Class::Blank;
    class[b':' as usize] = Class::Blank;
    class[b',' as usize] = Class::Comma;
    class[b'{' as usize] = Class::Open;
    class[b'[' as usize] = Class::Open;
    class[b'}' as usize] = Class::Close;
    class[b']' as usize] = Class::Close;
    class[b'"' as usize] = Class::Quote;
    class
};

/// Where the string whose contents begin at `from` ends: just past its
/// closing quote, or the text's end. Eight bytes at a time while none of
/// them is a quote or a backslash.
fn string_end(text: &[u8], mut from: usize) -> usize {
    loop {
        while let Some(chunk) = text.get(from..from + 8) {
            let Ok(word) = <[u8; 8]>::try_from(chunk) else {
                break;
            };
            let word = u64::from_le_bytes(word);
            let found = bytes_equal(word, b'"') | bytes_equal(word, b'\\');
            if found != 0 {
                // The lowest byte flagged is always a true match.
                from += (found.trailing_zeros() / 8) as usize;
                break;
            }
            from += 8;
        }
        match text.get(from) {
            None => return text.len(),
            Some(b'"') => return from + 1,
            // An escape: the character after the backslash is its own.
            Some(b'\\') => from += 2,
            Some(_) => from += 1,
        }
    }
}

/// The high bit of each byte of `word` equal to `byte` (and maybe of
/// bytes above one that is, never below).
fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let zeroed = word ^ (LOW * u64::from(byte));
    zeroed.wrapping_sub(LOW) & !zeroed & HIGH
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path at the first byte of `marker` in `text`.
    fn begun_at(text: &str, marker: &str) -> Vec<usize> {
        let at = text.find(marker).expect("the marker");
        begun(text.as_bytes(), at)
    }

    #[test]
    fn the_last_member_begun_in_each_open_container() {
        let text = r#"{"a": 1, "b": [10, {"x": true, "y": "|"}, 30], "c": 3}"#;
        assert_eq!(begun_at(text, "|"), vec![1, 1, 1]);
        assert_eq!(begun_at(text, "30"), vec![1, 1]);
        assert_eq!(begun_at(text, ", 30"), vec![1, 1]);
        assert_eq!(begun_at(text, "\"c\""), vec![1]);
        assert_eq!(begun_at(text, ": 3}"), vec![2]);
        assert_eq!(begun(text.as_bytes(), 0), Vec::<usize>::new());
        assert_eq!(begun(text.as_bytes(), 1), Vec::<usize>::new());
        assert_eq!(begun(text.as_bytes(), text.len()), Vec::<usize>::new());
        assert_eq!(begun(text.as_bytes(), text.len() - 1), vec![2]);
        // Past the text: the whole text.
        assert_eq!(begun(text.as_bytes(), text.len() + 5), Vec::<usize>::new());
    }

    #[test]
    fn strings_hide_what_looks_like_structure() {
        let text = r#"[{"k\"{[,": "]}\\", "n": 1}, "|"]"#;
        assert_eq!(begun_at(text, "\"n\""), vec![0, 0]);
        assert_eq!(begun_at(text, ": 1"), vec![0, 1]);
        assert_eq!(begun_at(text, "|"), vec![1]);
        // An unclosed string runs to the end.
        assert_eq!(begun(br#"[1, "abc"#, 8), vec![1]);
    }

    #[test]
    fn a_string_ends_at_its_first_unescaped_quote_wherever_it_falls() {
        // Quotes and escapes at every place of an eight-byte word, and
        // past the last whole word.
        for length in 0..40 {
            for at in 0..length {
                let mut contents = vec![b'a'; length];
                contents[at] = b'"';
                if at > 0 {
                    contents[at - 1] = b'\\';
                }
                let mut text = vec![b'"'];
                text.extend_from_slice(&contents);
                text.extend_from_slice(b"\"]");
                // An escaped quote is the string's; the next one ends it.
                let end = if at > 0 { length + 2 } else { at + 2 };
                assert_eq!(
                    string_end(&text, 1),
                    end,
                    "{}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
        assert_eq!(string_end(b"\"abc\\", 1), 5);
        assert_eq!(string_end(b"\"abcdefghijklmnop", 1), 17);
    }

    #[test]
    fn a_scalar_root_or_nothing_begun_is_an_empty_path() {
        assert_eq!(begun(b"12345", 3), Vec::<usize>::new());
        assert_eq!(begun(b"[ ", 2), Vec::<usize>::new());
        assert_eq!(begun(b"[[], ", 5), vec![0]);
        assert_eq!(begun(b"[[], 7", 6), vec![1]);
        // Not JSON: some path, no panic.
        assert_eq!(begun(b"]]}{,,", 6), Vec::<usize>::new());
    }

    #[test]
    fn a_reader_error_is_found_by_its_line_and_column() {
        let offset = |text: &str| {
            let error = serde_json::from_str::<serde_json::Value>(text).expect_err("refused");
            reader_offset(text.as_bytes(), &error)
        };
        // serde_json stands just past the byte it refused.
        assert_eq!(offset("[1, x]"), Some(5));
        assert_eq!(offset("[1,\n 2,\n  x]"), Some(11));
        let custom = serde_json::Error::io(std::io::Error::other("no position"));
        assert_eq!(reader_offset(b"[1]", &custom), None);
    }
}
