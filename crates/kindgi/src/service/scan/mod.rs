//! One pass over a body's text that builds and checks nothing: what its
//! document costs once parsed, the upper bound the memory budget
//! ([`super::budget`]) reserves before anything is parsed; and, for a JSON
//! object, where the value of its top-level `"input"` key lies, so that a
//! tool invoke's body can be read around its input
//! ([`kindgi_protocol::parse_invoke_around`]) and the input read once.
//!
//! The scan follows only quotes, escapes and brackets. The place it finds
//! is exact for well-formed JSON; for other text it is some range, and the
//! readers check both the text around it and the text in it.

use std::ops::Range;

use super::read::TEXT_INPUT_BODY_BYTES;

mod masks;

use masks::{BLOCK, Masks, escaped, prefix_xor};

/// Bodies under this size are not counted: their document is reserved at
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

/// How far a string is searched eight bytes at a time before the rest is
/// searched with `memchr`: most strings of a document are short, and a
/// call to `memchr` costs more than a few words.
const SHORT_STRING: usize = 64;

/// What [`scan`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// An upper bound of the memory the document takes once parsed and
    /// read into a handler's input: [`VALUE_COST`] a value (counted by its
    /// separators and brackets), [`ENTRY_COST`] an object entry, and each
    /// string's bytes plus, unless it is empty, [`STRING_COST`]. Text that
    /// isn't JSON is bounded the same way (parsing stops at its first
    /// error, having built less); a string left open counts nothing more.
    pub(crate) cost: usize,
    /// Where the value of the top-level `"input"` key lies: `None` when the
    /// body is no object the scan can follow (a key written with an escape,
    /// a string that never ends, a stray byte between members), has no
    /// `"input"`, or has two.
    pub(crate) input: Option<Range<usize>>,
}

/// Scans `body`: see [`Scanned`]. A body under [`SMALL_BODY_BYTES`] costs
/// [`SMALL_BODY_FACTOR`] times its size, however it is made; one under
/// [`TEXT_INPUT_BODY_BYTES`], whose input is read with the rest of it, is
/// not scanned at all.
pub(crate) fn scan(body: &[u8]) -> Scanned {
    scan_with(body, Counts::detected())
}

/// [`scan`], its blocks counted as `counts` says.
fn scan_with(body: &[u8], counts: Counts) -> Scanned {
    let small = body.len().saturating_mul(SMALL_BODY_FACTOR).max(VALUE_COST);
    if body.len() < TEXT_INPUT_BODY_BYTES {
        return Scanned {
            cost: small,
            input: None,
        };
    }
    let mut scan = Scan {
        text: body,
        at: 0,
        count: Count {
            values: 1,
            ..Count::default()
        },
        counts,
    };
    let input = scan.object();
    // Past the object, or wherever it stopped making sense (outside any
    // string): the rest is counted all the same.
    scan.rest();
    let cost = if body.len() < SMALL_BODY_BYTES {
        small
    } else {
        scan.count.cost()
    };
    Scanned { cost, input }
}

/// What [`scan`] counts.
#[derive(Debug, Default)]
struct Count {
    values: usize,
    entries: usize,
    strings: usize,
    string_bytes: usize,
}

impl Count {
    fn cost(&self) -> usize {
        self.values
            .saturating_mul(VALUE_COST)
            .saturating_add(self.entries.saturating_mul(ENTRY_COST))
            .saturating_add(self.strings.saturating_mul(STRING_COST))
            .saturating_add(self.string_bytes)
    }
}

/// How a block's bits are found and counted: a block's counts take eight
/// bit counts, which baseline x86-64 makes of a dozen instructions each and
/// POPCNT (nearly every x86-64 processor in use) of one; its masks take
/// 24 compares of 16 bytes with SSE2 (baseline x86-64), 12 of 32 with AVX2;
/// its strings a dozen shifts and xors, or one carry-less multiplication
/// (PCLMULQDQ, which every processor with AVX2 has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counts {
    /// With the baseline instructions of the target.
    Baseline,
    /// With POPCNT, which the processor was found to have.
    #[cfg(target_arch = "x86_64")]
    Popcnt,
    /// With POPCNT, AVX2 and PCLMULQDQ, which the processor was found to
    /// have.
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Counts {
    /// The fastest way this processor has.
    fn detected() -> Counts {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("pclmulqdq")
            {
                return Counts::Avx2;
            }
            return Counts::Popcnt;
        }
        Counts::Baseline
    }
}

/// The pass: where it is, and what it has counted.
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
    count: Count,
    counts: Counts,
}

impl Scan<'_> {
    /// Follows a top-level object member by member; the place of its
    /// `"input"` value when it has exactly one. Stops where the text
    /// stops being an object it can follow, or at its end: `at` is then
    /// outside any string, or at the end of the text.
    fn object(&mut self) -> Option<Range<usize>> {
        self.skip_space();
        if self.text.get(self.at) != Some(&b'{') {
            return None;
        }
        self.count.values += 1;
        self.at += 1;
        let mut input = None;
        loop {
            self.skip_space();
            match self.text.get(self.at)? {
                b'"' => {}
                b'}' => {
                    self.at += 1;
                    return input;
                }
                _ => return None,
            }
            let key_start = self.at + 1;
            self.string()?;
            let key = self.text.get(key_start..self.at - 1)?;
            // `"inp\u0075t"` is `"input"` too: left to the checked read.
            if key.contains(&b'\\') {
                return None;
            }
            self.skip_space();
            if self.text.get(self.at) != Some(&b':') {
                return None;
            }
            self.count.entries += 1;
            self.at += 1;
            self.skip_space();
            let start = self.at;
            self.value()?;
            if key == b"input" {
                // A second one: the rest is only counted.
                if input.is_some() {
                    return None;
                }
                input = Some(start..self.at);
            }
            self.skip_space();
            match self.text.get(self.at)? {
                b',' => {
                    self.count.values += 1;
                    self.at += 1;
                }
                b'}' => {
                    self.at += 1;
                    return input;
                }
                _ => return None,
            }
        }
    }

    /// Passes one value: a string to its closing quote, an object or array
    /// to its closing bracket, anything else to the next separator, space,
    /// bracket or quote. `None` when the text ends first, or nothing is
    /// there.
    fn value(&mut self) -> Option<()> {
        match self.text.get(self.at)? {
            b'"' => self.string(),
            b'{' | b'[' => self.nested(),
            _ => {
                // No number or literal holds any of these; past them (text
                // that isn't JSON) the rest is counted.
                let rest = self.text.get(self.at..)?;
                let length = rest
                    .iter()
                    .position(|&byte| {
                        matches!(
                            byte,
                            b',' | b'}'
                                | b']'
                                | b' '
                                | b'\t'
                                | b'\n'
                                | b'\r'
                                | b'"'
                                | b'['
                                | b'{'
                                | b':'
                        )
                    })
                    .unwrap_or(rest.len());
                self.at += length;
                (length > 0).then_some(())
            }
        }
    }

    /// Passes an object or array, from its opening bracket to the bracket
    /// that closes it, counting what is inside.
    fn nested(&mut self) -> Option<()> {
        self.counting(true)
    }

    /// Counts the rest of the text, whatever its shape, from outside any
    /// string.
    fn rest(&mut self) {
        let _ = self.counting(false);
    }

    /// Counts from `at`, outside any string: when `closing`, up to and past
    /// the bracket that closes the one at `at` (`Some`); else, or when the
    /// text or a string ends first, to the end of the text (`None`).
    ///
    /// [`BLOCK`] bytes at a time ([`Scan::block`]) where a block's strings
    /// can be followed at once; a byte at a time, and a string at a time,
    /// elsewhere.
    fn counting(&mut self, closing: bool) -> Option<()> {
        match self.counts {
            Counts::Baseline => self.counting_here(closing, Masks::of, prefix_xor),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Counts::Popcnt` is made only once the processor was
            // found to have POPCNT (`Counts::detected`).
            #[allow(unsafe_code)]
            Counts::Popcnt => unsafe { self.counting_with_popcnt(closing) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Counts::Avx2` is made only once the processor was
            // found to have POPCNT, AVX2 and PCLMULQDQ (`Counts::detected`).
            #[allow(unsafe_code)]
            Counts::Avx2 => unsafe { self.counting_with_avx2(closing) },
        }
    }

    /// [`Scan::counting`] compiled with POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn counting_with_popcnt(&mut self, closing: bool) -> Option<()> {
        self.counting_here(closing, Masks::of, prefix_xor)
    }

    /// [`Scan::counting`] compiled with POPCNT, AVX2 and PCLMULQDQ, a
    /// block's masks found 32 bytes at a time and its strings by a
    /// carry-less multiplication.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,avx2,pclmulqdq")]
    fn counting_with_avx2(&mut self, closing: bool) -> Option<()> {
        self.counting_here(
            closing,
            |block| masks::avx2::masks(block),
            |quotes| masks::clmul::prefix_xor(quotes),
        )
    }

    /// [`Scan::counting`] with a block's masks from `masks_of` and its
    /// strings from `prefix_xor_of` (see [`prefix_xor`]), inlined into its
    /// caller to take on its instructions.
    #[inline(always)]
    fn counting_here(
        &mut self,
        closing: bool,
        masks_of: impl Fn(&[u8; BLOCK]) -> Masks,
        prefix_xor_of: impl Fn(u64) -> u64,
    ) -> Option<()> {
        let mut depth = 0usize;
        // Up to here, a byte at a time: a block from before here held a
        // backslash outside every string.
        let mut bytewise_until = 0;
        loop {
            if self.at >= bytewise_until
                && let Some(block) = self.text.get(self.at..).and_then(<[u8]>::first_chunk)
            {
                let masks = masks_of(block);
                match self.block(&masks, &prefix_xor_of, &mut depth, closing) {
                    Block::Closed => return Some(()),
                    Block::Counted => continue,
                    Block::Escapes => bytewise_until = self.at + BLOCK,
                    Block::OpenString => {}
                }
            }
            match *self.text.get(self.at)? {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'{' | b'[' => {
                    self.count.values += 1;
                    depth += 1;
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if closing && depth == 0 {
                        self.at += 1;
                        return Some(());
                    }
                }
                b',' => self.count.values += 1,
                b':' => self.count.entries += 1,
                _ => {}
            }
            self.at += 1;
        }
    }

    /// Counts the block at `at`, outside any string, whose bytes are
    /// `masks`, up to a string still open at its end (counted from its
    /// opening quote by the caller) or, when `closing`, past the bracket
    /// that brings `depth` to zero. Moves `at` past what it counted.
    #[inline(always)]
    fn block(
        &mut self,
        masks: &Masks,
        prefix_xor_of: impl Fn(u64) -> u64,
        depth: &mut usize,
        closing: bool,
    ) -> Block {
        // The quotes a backslash doesn't escape, and from each opening one
        // up to its closing one, the strings.
        let quotes = masks.quotes & !escaped(masks.backslashes);
        let inside = prefix_xor_of(quotes);
        // A string still open at the block's end opens at its last quote:
        // only what comes before that quote is counted here.
        let mut counted = if inside >> (BLOCK - 1) == 0 {
            u64::MAX
        } else {
            let open_at = BLOCK - 1 - quotes.leading_zeros() as usize;
            if open_at == 0 {
                return Block::OpenString;
            }
            (1u64 << open_at) - 1
        };
        // A backslash outside every string (not JSON) escapes nothing,
        // which `escaped` can't tell: such a block is counted a byte at a
        // time.
        if masks.backslashes & !inside & counted != 0 {
            return Block::Escapes;
        }
        let outside = !inside & !quotes;
        let (opens, closes) = (masks.opens & outside, masks.closes & outside);
        let mut closed = false;
        if closing && closes.count_ones() as usize >= *depth {
            // The depth may reach zero in this block: bracket by bracket.
            let mut brackets = (opens | closes) & counted;
            while brackets != 0 {
                let bracket = brackets & brackets.wrapping_neg();
                if opens & bracket != 0 {
                    *depth += 1;
                } else {
                    *depth = depth.saturating_sub(1);
                    if *depth == 0 {
                        // Up to and with this bracket.
                        counted &= bracket | (bracket - 1);
                        closed = true;
                        break;
                    }
                }
                brackets ^= bracket;
            }
        } else {
            // Not to zero when `closing`; past it, when not, as it may.
            let opened = *depth + (opens & counted).count_ones() as usize;
            *depth = opened.saturating_sub((closes & counted).count_ones() as usize);
        }
        let closing_quotes = quotes & !inside & counted;
        let empty = closing_quotes & ((quotes & inside) << 1);
        self.count.values += ((opens | (masks.commas & outside)) & counted).count_ones() as usize;
        self.count.entries += (masks.colons & outside & counted).count_ones() as usize;
        self.count.strings += (closing_quotes.count_ones() - empty.count_ones()) as usize;
        self.count.string_bytes += (inside & !quotes & counted).count_ones() as usize;
        self.at += (u64::BITS - counted.leading_zeros()) as usize;
        if closed {
            Block::Closed
        } else {
            Block::Counted
        }
    }

    /// Passes the string whose opening quote is at `at`, and counts it;
    /// `None` when it never closes (it counts nothing then, and `at` is
    /// left at the end).
    fn string(&mut self) -> Option<()> {
        let start = self.at + 1;
        let mut at = start;
        loop {
            let Some(found) = quote_or_backslash(self.text, at) else {
                self.at = self.text.len();
                return None;
            };
            if self.text[found] == b'"' {
                let length = found - start;
                self.count.strings += usize::from(length > 0);
                self.count.string_bytes += length;
                self.at = found + 1;
                return Some(());
            }
            // A backslash and the byte it escapes.
            at = found + 2;
        }
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
        }
    }
}

/// What [`Scan::block`] did.
enum Block {
    /// Counted up to and past the bracket that closes the nested value.
    Closed,
    /// Counted part or all of the block, and moved past it.
    Counted,
    /// Nothing: a backslash stands outside every string of the block (not
    /// JSON), where it escapes nothing, which the masks can't tell.
    Escapes,
    /// Nothing: a string that opens at the block's first byte doesn't close
    /// in it.
    OpenString,
}

/// The index of the first quote or backslash of `text` from `at` on.
fn quote_or_backslash(text: &[u8], mut at: usize) -> Option<usize> {
    let head_end = text.len().min(at.saturating_add(SHORT_STRING));
    while let Some(word) = text.get(at..head_end).and_then(<[u8]>::first_chunk::<8>) {
        let bits = u64::from_le_bytes(*word);
        let found = flags(bits, b'"') | flags(bits, b'\\');
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = text.get(at..head_end)?;
    if let Some(offset) = tail.iter().position(|&b| b == b'"' || b == b'\\') {
        return Some(at + offset);
    }
    let rest = text.get(head_end..)?;
    memchr::memchr2(b'"', b'\\', rest).map(|offset| head_end + offset)
}

/// Each byte of a word: `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The low seven bits of every byte of a word.
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// The high bit of every byte of `word` (read little-endian) equal to
/// `byte`, and no other bit. Exact: unlike the usual zero-byte test, no
/// borrow runs from one byte into the next, so the lowest bit set is the
/// first such byte.
fn flags(word: u64, byte: u8) -> u64 {
    let zero_where_equal = word ^ ONES.wrapping_mul(u64::from(byte));
    // The sum sets a byte's high bit when its low seven bits aren't all
    // zero, and never carries out of the byte; or-ing the byte in catches
    // its own high bit.
    !(((zero_where_equal & LOW7) + LOW7) | zero_where_equal | LOW7)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time count the scan's cost must agree with.
    fn cost_byte_by_byte(body: &[u8]) -> usize {
        if body.len() < SMALL_BODY_BYTES {
            return body.len().saturating_mul(SMALL_BODY_FACTOR).max(VALUE_COST);
        }
        let mut count = Count {
            values: 1,
            ..Count::default()
        };
        let (mut in_string, mut escaped, mut length) = (false, false, 0usize);
        for &byte in body {
            if in_string {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                    count.strings += usize::from(length > 0);
                    count.string_bytes += length;
                    continue;
                }
                length += 1;
                continue;
            }
            match byte {
                b'"' => {
                    in_string = true;
                    length = 0;
                }
                b',' | b'[' | b'{' => count.values += 1,
                b':' => count.entries += 1,
                _ => {}
            }
        }
        count.cost()
    }

    /// Every way this processor can count a block.
    fn every_counts() -> Vec<Counts> {
        let mut every = vec![Counts::Baseline];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            every.push(Counts::Popcnt);
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("pclmulqdq")
            {
                every.push(Counts::Avx2);
            }
        }
        every
    }

    /// `body`'s cost, the same counted every way.
    fn cost_every_way(body: &[u8]) -> usize {
        let costs: Vec<usize> = every_counts()
            .into_iter()
            .map(|counts| scan_with(body, counts).cost)
            .collect();
        assert!(costs.windows(2).all(|pair| pair[0] == pair[1]), "{costs:?}");
        costs[0]
    }

    /// The input the scan finds in `text`, made large enough to be
    /// scanned.
    fn input(text: &str) -> Option<String> {
        let padded = format!("{text}{}", " ".repeat(TEXT_INPUT_BODY_BYTES));
        let spans: Vec<_> = every_counts()
            .into_iter()
            .map(|counts| scan_with(padded.as_bytes(), counts).input)
            .collect();
        assert!(spans.windows(2).all(|pair| pair[0] == pair[1]), "{spans:?}");
        let span = spans[0].clone()?;
        padded.get(span).map(str::to_owned)
    }

    #[test]
    fn the_cost_is_the_byte_by_byte_count() {
        let pad = " ".repeat(SMALL_BODY_BYTES);
        let bodies = [
            format!(r#"{{"a": [1, "x", {{"b": "\"q\\"}}], "": "", "c": "\u00e9"}}{pad}"#),
            format!(r#"{{"input": [1, "x", {{"b": "\"q\\"}}], "": "", "c": "\u00e9"}}{pad}"#),
            format!(r#"{pad}["unterminated, {{"#),
            format!(r#"{{"input": "unterminated, {{{pad}"#),
            format!(r#"{pad}["ends in a backslash\"#),
            format!(r#"{pad}"\"#),
            format!("{pad}[1,2,{{\"k\":3}}]"),
            format!("{{\"input\":[1,2,{{\"k\":3}}]}} {pad} [\"after\"]"),
            format!("{{\"input\":{{}},\"input\":[]}}{pad}"),
        ];
        for body in &bodies {
            assert_eq!(
                cost_every_way(body.as_bytes()),
                cost_byte_by_byte(body.as_bytes()),
                "{body}"
            );
        }
        // Quotes, backslashes and brackets in every order, inside an object
        // and not, in strings short and long.
        let mut state = 0x9e37_79b9_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as usize
        };
        for round in 0..2000 {
            let mut body = match round % 3 {
                0 => b"{\"input\":".to_vec(),
                1 => b"{\"a\":1,\"input\":[".to_vec(),
                _ => Vec::new(),
            };
            // With backslashes (counted a byte at a time), and without (a
            // block at a time): strings long and short, brackets few and
            // many.
            let alphabet: &[u8] = match round % 4 {
                0 => b"\"\\,[{:a }]",
                1 => b"\",[{:aaaaaaaaaaaaaaaaaaaa}]",
                2 => b"\",[{:a }]",
                _ => b"\"\"\"\"[[[[]]]]{}aaaaaaaaa\\",
            };
            for _ in 0..next() % 1500 {
                body.push(alphabet[next() % alphabet.len()]);
            }
            body.extend(std::iter::repeat_n(b' ', SMALL_BODY_BYTES));
            assert_eq!(
                cost_every_way(&body),
                cost_byte_by_byte(&body),
                "{}",
                String::from_utf8_lossy(&body[..body.len() - SMALL_BODY_BYTES])
            );
        }
    }

    #[test]
    fn documents_with_escapes_cost_their_byte_by_byte_count() {
        let mut state = 0x5bd1_e995_u32;
        for round in 0..400 {
            let value = generated(&mut state, 7);
            let mut text = if round % 2 == 0 {
                serde_json::to_vec(&value)
            } else {
                serde_json::to_vec_pretty(&value)
            }
            .expect("JSON");
            text.extend(std::iter::repeat_n(b' ', SMALL_BODY_BYTES));
            assert_eq!(cost_every_way(&text), cost_byte_by_byte(&text));
        }
    }

    #[test]
    fn documents_that_expand_cost_more_than_their_size() {
        let cost = |text: &str| cost_every_way(text.as_bytes());
        let zeros = format!("[{}0]", "0,".repeat(1 << 20));
        assert!(cost(&zeros) >= (1 << 20) * 64);
        // 10 MiB of them pass one call's share.
        let ten = format!("[{}0]", "0,".repeat(5 << 20));
        assert!(cost(&ten) > super::super::budget::MAX_CALL_BYTES);
        let strings = format!("[{}\"a\"]", "\"a\",".repeat(1 << 18));
        assert!(cost(&strings) >= (1 << 18) * (VALUE_COST + STRING_COST));
        let one_string = format!("{{\"s\":\"{}\"}}", "x".repeat(4 << 20));
        assert!((4 << 20..5 << 20).contains(&cost(&one_string)));
        // Escapes and brackets inside strings are string bytes.
        let quoted = format!("[\"{}\"]", "\\\"[,{:".repeat(1 << 16));
        assert!(cost(&quoted) < 6 << 17);
        assert_eq!(cost("{}"), VALUE_COST * 2);
        // Empty strings allocate nothing.
        let empty = format!("[{}\"\"]", "\"\",".repeat(1 << 18));
        assert_eq!(cost(&empty), ((1 << 18) + 2) * VALUE_COST);
        // Exactly: four values (the document, `{`, `[`, `,`), one entry,
        // one string of two bytes.
        let exact = format!("{{\"ab\":[1,2]}}{}", " ".repeat(SMALL_BODY_BYTES));
        assert_eq!(cost(&exact), 4 * VALUE_COST + ENTRY_COST + STRING_COST + 2);
    }

    #[test]
    fn the_input_is_the_value_of_the_top_level_key() {
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
            (
                "\"long string past the first bytes\"",
                r#"{"input":"long string past the first bytes"}"#.to_owned(),
            ),
        ] {
            assert_eq!(input(&body).as_deref(), Some(value), "{body}");
        }
        // The same place serde_json reads, for generated documents.
        let mut state = 0x2545_f491_u32;
        for round in 0..500 {
            let value = generated(&mut state, if round % 5 == 0 { 7 } else { 4 });
            let body = serde_json::json!({"v": 2, "input": value, "ctx": {"input": [1]}});
            let text = if state.is_multiple_of(2) {
                serde_json::to_string(&body)
            } else {
                serde_json::to_string_pretty(&body)
            }
            .expect("JSON");
            #[derive(serde::Deserialize)]
            struct Message<'a> {
                #[serde(borrow)]
                input: &'a serde_json::value::RawValue,
            }
            let read: Message<'_> = serde_json::from_str(&text).expect("JSON");
            assert_eq!(input(&text).as_deref(), Some(read.input.get()), "{text}");
        }
    }

    /// A JSON value of at most `depth` levels, from a xorshift state.
    fn generated(state: &mut u32, depth: u32) -> serde_json::Value {
        use serde_json::Value;
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        let pick = *state % if depth == 0 { 4 } else { 6 };
        match pick {
            0 => Value::from(*state % 1000),
            1 => Value::from(
                ["", "a", "]}\"\\", "é\n", "x".repeat(40).as_str()][*state as usize % 5],
            ),
            2 => Value::Bool(state.is_multiple_of(2)),
            3 => Value::Null,
            4 => (0..*state % 4)
                .map(|_| generated(state, depth - 1))
                .collect(),
            _ => (0..*state % 4)
                .map(|i| (format!("k{i}"), generated(state, depth - 1)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }

    #[test]
    fn quotes_and_backslashes_are_found_at_any_offset() {
        let word = u64::from_le_bytes(*b"\"\x00\x01\"\x80\xa2\"\xff");
        assert_eq!(flags(word, b'"'), 0x0080_0000_8000_0080);
        assert_eq!(flags(word, 0), 0x0000_0000_0000_8000);
        assert_eq!(flags(word, 0xff), 0x8000_0000_0000_0000);
        for length in 0..200 {
            for (at, end) in [(0, b'"'), (3, b'\\'), (5, b'"')] {
                let mut text = vec![b'a'; at];
                text.extend(std::iter::repeat_n(0xa2, length));
                text.push(end);
                text.extend_from_slice(b"\"\\");
                assert_eq!(quote_or_backslash(&text, at), Some(at + length));
            }
            assert_eq!(quote_or_backslash(&vec![b'a'; length], 0), None);
        }
        assert_eq!(quote_or_backslash(b"ab", 3), None);
    }

    #[test]
    fn what_the_scan_cant_follow_has_no_input() {
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
            assert_eq!(input(body), None, "{body}");
        }
        // A small body isn't scanned: its input is read with the rest.
        assert_eq!(scan(br#"{"input":1}"#).input, None);
    }
}
