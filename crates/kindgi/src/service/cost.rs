//! What a JSON document costs once parsed: the upper bound the memory
//! budget ([`super::budget`]) reserves before a body is parsed, counted in
//! one pass over its text that allocates nothing.
//!
//! The pass reads the text eight bytes at a time: in a word, every quote,
//! separator and bracket is found at once with bit arithmetic, and which
//! bytes lie inside strings follows from the parity of the quotes before
//! them. A word holding a backslash (an escape, which can hide a quote) is
//! read byte by byte.

/// Bodies under this size are not scanned: their document is reserved at
/// [`SMALL_BODY_FACTOR`] times their size, an upper bound of any shape.
const SMALL_BODY_BYTES: usize = 64 * 1024;
/// See [`SMALL_BODY_BYTES`]: 2 bytes of `[0,0,…]` at [`VALUE_COST`] each,
/// with room for a string's overhead.
const SMALL_BODY_FACTOR: usize = VALUE_COST;

/// What one JSON value may cost parsed: a `serde_json::Value` (32 bytes),
/// and as much again for a list's spare capacity or a typed handler's own
/// copy of its input.
const VALUE_COST: usize = 64;
/// What an object's entry costs beyond its value and its key's bytes: the
/// key's `String` and its share of the map's node.
const ENTRY_COST: usize = 96;
/// What a string that isn't empty costs beyond its bytes: its allocation's
/// own overhead (an empty one allocates nothing).
const STRING_COST: usize = 32;

/// An upper bound of the memory the JSON document `body` takes once parsed
/// and read into a handler's input, from one pass over its bytes that
/// allocates nothing: [`VALUE_COST`] a value (counted by its separators and
/// brackets), [`ENTRY_COST`] an object entry, and each string's bytes plus,
/// unless it is empty, [`STRING_COST`]. Text that isn't JSON is bounded
/// the same way (parsing stops at its first error, having built less); a
/// string left open at the end counts nothing.
pub(crate) fn document_cost(body: &[u8]) -> usize {
    if body.len() < SMALL_BODY_BYTES {
        return body.len().saturating_mul(SMALL_BODY_FACTOR).max(VALUE_COST);
    }
    let mut count = Count {
        values: 1,
        ..Count::default()
    };
    let (words, rest) = body.as_chunks::<8>();
    for word in words {
        count.word(word);
    }
    for &byte in rest {
        count.byte(byte);
    }
    count.cost()
}

/// Each byte of a word: `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The low seven bits of every byte of a word.
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
/// The high bit of every byte of a word: where [`flags`] marks a byte.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of every byte of `word` equal to `byte`, and no other bit.
/// (Exact: unlike the usual zero-byte test, no borrow runs from one byte
/// into the next.)
fn flags(word: u64, byte: u8) -> u64 {
    let zero_where_equal = word ^ ONES.wrapping_mul(u64::from(byte));
    // The sum sets a byte's high bit when its low seven bits aren't all
    // zero, and never carries out of the byte; or-ing the byte in catches
    // its own high bit.
    !(((zero_where_equal & LOW7) + LOW7) | zero_where_equal | LOW7)
}

/// For each byte's high bit, the parity of the flags at it and before it
/// (bytes are in memory order: the word is read little-endian).
fn prefix_parity(flags: u64) -> u64 {
    let mut parity = flags;
    parity ^= parity << 8;
    parity ^= parity << 16;
    parity ^= parity << 32;
    parity
}

/// What [`document_cost`] counts, and where the pass is.
#[derive(Debug, Default)]
struct Count {
    values: usize,
    entries: usize,
    /// Strings closed that weren't empty.
    strings: usize,
    /// Bytes inside strings, the one open now included.
    string_bytes: usize,
    /// Whether the pass is inside a string.
    in_string: bool,
    /// Bytes of the string open now, so far.
    open_bytes: usize,
    /// Whether the byte before was a backslash inside a string.
    escaped: bool,
}

impl Count {
    /// Counts one byte.
    fn byte(&mut self, byte: u8) {
        if !self.in_string {
            match byte {
                b'"' => {
                    self.in_string = true;
                    self.open_bytes = 0;
                }
                b',' | b'[' | b'{' => self.values += 1,
                b':' => self.entries += 1,
                _ => {}
            }
            return;
        }
        if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            self.in_string = false;
            self.strings += usize::from(self.open_bytes > 0);
            return;
        }
        self.string_bytes += 1;
        self.open_bytes += 1;
    }

    /// Counts eight bytes, all at once unless an escape is in them.
    fn word(&mut self, word: &[u8; 8]) {
        let bits = u64::from_le_bytes(*word);
        if self.escaped || flags(bits, b'\\') != 0 {
            for &byte in word {
                self.byte(byte);
            }
            return;
        }
        let quotes = flags(bits, b'"');
        // Inside a string after each byte: the quotes' parity, turned over
        // if the word began inside one.
        let inside = prefix_parity(quotes) ^ if self.in_string { HIGH } else { 0 };
        let outside = !inside & HIGH;
        let separators = flags(bits, b',') | flags(bits, b'[') | flags(bits, b'{');
        self.values += (separators & outside).count_ones() as usize;
        self.entries += (flags(bits, b':') & outside).count_ones() as usize;
        let opening = quotes & inside;
        let closing = quotes & outside;
        // A string is empty when its closing quote comes right after its
        // opening one, which may have been the last byte of the word before.
        let opened_just_before = if self.in_string && self.open_bytes == 0 {
            0x80
        } else {
            0
        };
        let empty = closing & ((opening << 8) | opened_just_before);
        self.strings += (closing.count_ones() - empty.count_ones()) as usize;
        self.string_bytes += (inside & !quotes).count_ones() as usize;
        self.in_string = inside >> 63 == 1;
        if self.in_string {
            // Every byte after the last opening quote is the open string's.
            self.open_bytes = match opening {
                0 => self.open_bytes + 8,
                _ => (opening.leading_zeros() / 8) as usize,
            };
        }
    }

    fn cost(&self) -> usize {
        // The string left open at the end was never built.
        let open = if self.in_string { self.open_bytes } else { 0 };
        self.values
            .saturating_mul(VALUE_COST)
            .saturating_add(self.entries.saturating_mul(ENTRY_COST))
            .saturating_add(self.strings.saturating_mul(STRING_COST))
            .saturating_add(self.string_bytes.saturating_sub(open))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time count [`document_cost`] must agree with.
    fn document_cost_byte_by_byte(body: &[u8]) -> usize {
        if body.len() < SMALL_BODY_BYTES {
            return body.len().saturating_mul(SMALL_BODY_FACTOR).max(VALUE_COST);
        }
        let mut count = Count {
            values: 1,
            ..Count::default()
        };
        for &byte in body {
            count.byte(byte);
        }
        count.cost()
    }

    #[test]
    fn flags_mark_exactly_the_bytes_asked_for() {
        let word = u64::from_le_bytes(*b"\"\x00\x01\"\x80\xa2\"\xff");
        assert_eq!(flags(word, b'"'), 0x0080_0000_8000_0080);
        assert_eq!(flags(word, 0), 0x0000_0000_0000_8000);
        assert_eq!(flags(word, 1), 0x0000_0000_0080_0000);
        assert_eq!(flags(word, 0x80), 0x0000_0080_0000_0000);
        assert_eq!(flags(word, 0xff), 0x8000_0000_0000_0000);
        assert_eq!(prefix_parity(0x0000_0000_8000_0080), 0x0000_0000_0080_8080);
    }

    #[test]
    fn the_word_count_is_the_byte_by_byte_count() {
        let pad = " ".repeat(SMALL_BODY_BYTES);
        let bodies = [
            format!(r#"{{"a": [1, "x", {{"b": "\"q\\"}}], "": "", "c": "\u00e9"}}{pad}"#),
            format!(r#"{pad}["unterminated, {{"#),
            format!(r#"{pad}["ends in a backslash\"#),
            format!(r#"{pad}"\"#),
            format!("{pad}[1,2,{{\"k\":3}}]"),
            format!("{pad}[\"\",\"\"\"\",\"a\",\"\"]"),
        ];
        for body in &bodies {
            assert_eq!(
                document_cost(body.as_bytes()),
                document_cost_byte_by_byte(body.as_bytes()),
                "{body}"
            );
        }
        // Quotes, backslashes and brackets in every order, at every offset
        // from a word's start, across words and at the very end.
        let mut state = 0x9e37_79b9_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as usize
        };
        for round in 0..3000 {
            let mut body = vec![b' '; SMALL_BODY_BYTES + round % 8];
            let length = next() % 400;
            // Few quotes in some bodies, so that long strings span words.
            let alphabet: &[u8] = if round % 3 == 0 {
                b"\"\\,[{:a }\xc3"
            } else {
                b"\",[{:aaaaaaaaaa}"
            };
            for _ in 0..length {
                body.push(alphabet[next() % alphabet.len()]);
            }
            assert_eq!(
                document_cost(&body),
                document_cost_byte_by_byte(&body),
                "{}",
                String::from_utf8_lossy(&body[SMALL_BODY_BYTES..])
            );
        }
    }

    #[test]
    fn documents_that_expand_cost_more_than_their_size() {
        let zeros = format!("[{}0]", "0,".repeat(1 << 20));
        assert!(document_cost(zeros.as_bytes()) >= (1 << 20) * 64);
        // 10 MiB of them pass one call's share.
        let ten = format!("[{}0]", "0,".repeat(5 << 20));
        assert!(document_cost(ten.as_bytes()) > super::super::budget::MAX_CALL_BYTES);
        let strings = format!("[{}\"a\"]", "\"a\",".repeat(1 << 18));
        assert!(document_cost(strings.as_bytes()) >= (1 << 18) * (VALUE_COST + STRING_COST));
        let one_string = format!("{{\"s\":\"{}\"}}", "x".repeat(4 << 20));
        let cost = document_cost(one_string.as_bytes());
        assert!((4 << 20..5 << 20).contains(&cost), "{cost}");
        // Escapes and brackets inside strings are string bytes.
        let quoted = format!("[\"{}\"]", "\\\"[,{:".repeat(1 << 16));
        assert!(document_cost(quoted.as_bytes()) < 6 << 17);
        assert_eq!(document_cost(b"{}"), VALUE_COST * 2);
        // Empty strings allocate nothing.
        let empty = format!("[{}\"\"]", "\"\",".repeat(1 << 18));
        assert_eq!(
            document_cost(empty.as_bytes()),
            ((1 << 18) + 2) * VALUE_COST
        );
        // An exact count: four values (the document, `{`, `[`, `,`), one
        // entry, one string of two bytes.
        let exact = format!("{{\"ab\":[1,2]}}{}", " ".repeat(SMALL_BODY_BYTES));
        assert_eq!(
            document_cost(exact.as_bytes()),
            4 * VALUE_COST + ENTRY_COST + STRING_COST + 2
        );
    }
}
