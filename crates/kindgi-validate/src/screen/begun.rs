//! Where a read stopped in a JSON text: the members it had begun, for
//! `Validator::issues_from_refused_text`.
//!
//! A read that checks every value in text order and stopped at byte `at`
//! had checked every member of an array or object that another member of
//! the same container follows before `at`: the read finished it, and its
//! checks, before it began the next. Those members need no second look;
//! the last member begun in each container still open at `at` does. The
//! text is shortened to what a second read needs: the members passed
//! become placeholders, and it need not go through them.

use std::ops::Range;

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

/// `text` shortened for a second read from where a first one stopped at
/// byte `at`: in each container still open there, every member before the
/// last one begun is a placeholder `0` (an object's keys kept as they
/// are), and the text goes on as it was from the innermost container's
/// last member begun. `None` when nothing would be left out (the root is
/// not an array or object, or nothing in it was begun before `at`), or
/// the text before `at` is not JSON: then read the text as it is.
pub(crate) fn shorten(text: &[u8], at: usize) -> Option<Shortened> {
    let open = open_at(text, at)?;
    if open.levels.iter().all(|level| level.count < 2) {
        return None;
    }
    let mut shortened = Shortened {
        passed: Vec::with_capacity(open.levels.len()),
        text: Vec::new(),
    };
    let out = &mut shortened.text;
    let last = open.levels.len().checked_sub(1)?;
    for (depth, level) in open.levels.iter().enumerate() {
        let passed = level.count.checked_sub(1)?;
        shortened.passed.push(passed);
        if level.object {
            out.push(b'{');
            let keys = open.keys.get(level.keys..level.keys + level.count)?;
            let (path_key, passed_keys) = keys.split_last()?;
            for key in passed_keys {
                out.extend_from_slice(text.get(key.clone())?);
                out.extend_from_slice(b":0,");
            }
            if depth < last {
                out.extend_from_slice(text.get(path_key.clone())?);
                out.push(b':');
            }
        } else {
            out.push(b'[');
            for _ in 0..passed {
                out.extend_from_slice(b"0,");
            }
        }
        if depth == last {
            out.extend_from_slice(text.get(level.last_start..)?);
        }
    }
    Some(shortened)
}

/// A text shortened by [`shorten`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Shortened {
    /// For each container left open, outermost first, the index of its
    /// last member begun: the members before it are placeholders.
    pub(crate) passed: Vec<usize>,
    /// The text, shortened.
    pub(crate) text: Vec<u8>,
}

/// The containers open at byte `at` of `text` with a member begun in
/// each, outermost first, and the keys of their members.
struct OpenAt {
    levels: Vec<Level>,
    /// The span (quotes included) of the key of every member begun in an
    /// object of `levels`, by level.
    keys: Vec<Range<usize>>,
}

/// An array or object, as far as [`open_at`] read it.
#[derive(Clone, Copy)]
struct Level {
    object: bool,
    /// Its members begun.
    count: usize,
    /// Its next member is yet to begin (after `[`, `{` or `,`).
    waiting: bool,
    /// Where its last member begun begins: its key, or the item.
    last_start: usize,
    /// Where its keys begin in [`OpenAt::keys`].
    keys: usize,
}

/// The containers open at byte `at` of `text` (see [`OpenAt`]); `None`
/// when there are none with a member begun. A text that is not JSON
/// gives containers of no particular meaning, never a panic.
fn open_at(text: &[u8], at: usize) -> Option<OpenAt> {
    let scanned = text.get(..at).unwrap_or(text);
    let mut keys: Vec<Range<usize>> = Vec::new();
    // The innermost container, and those around it; outside every
    // container (the first one around), values begin nothing.
    let mut level = Level {
        object: false,
        count: 0,
        waiting: false,
        last_start: 0,
        keys: 0,
    };
    let mut around: Vec<Level> = Vec::new();
    let mut i = 0;
    while let Some(&byte) = scanned.get(i) {
        i += 1;
        let class = CLASS[usize::from(byte)];
        if class == Class::Blank {
            continue;
        }
        if class == Class::Comma {
            level.waiting = true;
            continue;
        }
        if class == Class::Close {
            if let Some(outer) = around.pop() {
                keys.truncate(level.keys);
                level = outer;
            }
            continue;
        }
        // A key or value: where a member waits, it begins one.
        let begins = level.waiting;
        if begins {
            level.count += 1;
            level.waiting = false;
            level.last_start = i - 1;
        }
        if class == Class::Open {
            around.push(level);
            level = Level {
                object: byte == b'{',
                count: 0,
                waiting: true,
                last_start: 0,
                keys: keys.len(),
            };
        } else if class == Class::Quote {
            let end = string_end(scanned, i);
            if begins && level.object {
                keys.push(i - 1..end);
            }
            i = end;
        }
        // A number's or literal's other characters begin nothing.
    }
    if around.is_empty() {
        return None;
    }
    // The first one around is outside every container.
    around.push(level);
    let levels: Vec<Level> = around
        .into_iter()
        .skip(1)
        .take_while(|level| level.count > 0)
        .collect();
    (!levels.is_empty()).then_some(OpenAt { levels, keys })
}

/// What a byte outside strings does to [`open_at`]'s walk.
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

    /// The path of members begun before byte `at` of `text`: the index of
    /// the last one in each container open.
    fn begun(text: &[u8], at: usize) -> Vec<usize> {
        let levels = open_at(text, at).map(|open| open.levels);
        let last = |level: &Level| level.count - 1;
        levels.unwrap_or_default().iter().map(last).collect()
    }

    /// `text` shortened at the first byte of `marker`.
    fn shortened_at(text: &str, marker: &str) -> (Vec<usize>, String) {
        let at = text.find(marker).expect("the marker");
        let shortened = shorten(text.as_bytes(), at).expect("shortened");
        let text = String::from_utf8(shortened.text).expect("UTF-8");
        (shortened.passed, text)
    }

    #[test]
    fn a_shortened_text_keeps_the_keys_and_goes_on_from_the_last_member() {
        let text = r#"{"a": 1, "b": [10, {"x": true, "y": "|"}, 30], "c": 3}"#;
        assert_eq!(
            shortened_at(text, "|"),
            (
                vec![1, 1, 1],
                r#"{"a":0,"b":[0,{"x":0,"y": "|"}, 30], "c": 3}"#.to_owned()
            )
        );
        assert_eq!(
            shortened_at(text, "3}"),
            (vec![2], r#"{"a":0,"b":0,"c": 3}"#.to_owned())
        );
        // Keys as they were written, escapes and all.
        let text = r#"[{"k\"1": [1, 2], "n": 5}, 7]"#;
        assert_eq!(
            shortened_at(text, "5"),
            (vec![0, 1], r#"[{"k\"1":0,"n": 5}, 7]"#.to_owned())
        );
        // Nothing begun or passed, nothing left out.
        assert_eq!(shorten(text.as_bytes(), 1), None);
        assert_eq!(shorten(text.as_bytes(), text.find("1,").expect("1")), None);
        assert_eq!(shorten(b"123", 2), None);
    }

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
