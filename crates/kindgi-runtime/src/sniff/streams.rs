//! What a PDF's streams decode to, measured before the PDF is read.
//!
//! The PDF reader decodes the cross-reference and object streams it needs
//! whole, with no bound of its own, and a few kilobytes of compressed data
//! can decode to gigabytes. So, before it runs, every stream in the file is
//! decoded here once through its own `/Filter` chain into a counter, with
//! the whole file's decoding bounded by [`MAX_DECODE_WORK`]: past it the
//! file is not read at all. Streams are found as the reader finds objects:
//! after every `obj` keyword in the bytes (not only where the
//! cross-reference data points), whatever a scan from the start would make
//! of the bytes around them.
//!
//! Encrypted PDFs are refused here too: their streams can't be measured
//! without their keys, and a model isn't shown them either.

/// Bytes all of a file's streams may decode to, and the bytes read to find
/// where their data ends, counted together.
pub(crate) const MAX_DECODE_WORK: u64 = 256 * 1024 * 1024;

/// The most one stage of a filter chain may hold for the next stage.
const MAX_STAGE_BYTES: usize = 32 * 1024 * 1024;

/// Deeper than the reader nests objects.
const MAX_NESTING: usize = 600;

/// More filters than any writer chains.
const MAX_FILTERS: usize = 8;

/// Why a PDF is not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Its streams decode to more than [`MAX_DECODE_WORK`].
    TooMuch,
    /// A stream whose filters can't be known before reading it (an indirect
    /// `/Filter`, too many filters).
    Unknown,
    /// It is encrypted.
    Encrypted,
}

/// Measures every stream of `pdf`: `Ok` when reading it decodes no more
/// than [`MAX_DECODE_WORK`] bytes.
pub(crate) fn check(pdf: &[u8]) -> Result<(), Unreadable> {
    if names_encrypt(pdf) {
        return Err(Unreadable::Encrypted);
    }
    let mut work = Work {
        left: MAX_DECODE_WORK,
    };
    let endstreams: Vec<usize> = find_all(pdf, b"endstream").collect();
    for at in find_all(pdf, b"obj") {
        let after = at + b"obj".len();
        if pdf.get(after).is_some_and(|&b| is_regular(b)) {
            continue;
        }
        let mut lex = Lexer { pdf, at: after };
        let found = stream_after(&mut lex);
        // Dictionaries overlap in hostile bytes: reading each is work too.
        work.spend((lex.at - after) as u64)?;
        let Some(stream) = found? else {
            continue;
        };
        // Where the reader would look for `endstream` when `/Length` is wrong.
        let next_end = endstreams.partition_point(|&e| e < stream.data);
        let scanned = endstreams.get(next_end).map_or(pdf.len(), |&e| e) - stream.data;
        work.spend(scanned as u64)?;
        let data = &pdf[stream.data..];
        for chain in &stream.chains {
            decode_chain(data, chain, &mut work)?;
        }
    }
    Ok(())
}

/// The decoding budget left.
struct Work {
    left: u64,
}

impl Work {
    fn spend(&mut self, bytes: u64) -> Result<(), Unreadable> {
        self.left = self.left.checked_sub(bytes).ok_or(Unreadable::TooMuch)?;
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    Flate,
    Lzw,
    RunLength,
    AsciiHex,
    Ascii85,
    /// Data the reader passes on as it is (`Crypt` without keys).
    Identity,
    /// A filter the reader doesn't decode a stream through (images, unknown
    /// names): the chain ends there.
    Stop,
}

impl Filter {
    fn from_name(name: &[u8]) -> Self {
        match name {
            b"FlateDecode" | b"Fl" => Self::Flate,
            b"LZWDecode" | b"LZW" => Self::Lzw,
            b"RunLengthDecode" | b"RL" => Self::RunLength,
            b"ASCIIHexDecode" | b"AHx" => Self::AsciiHex,
            b"ASCII85Decode" | b"A85" => Self::Ascii85,
            b"Crypt" => Self::Identity,
            _ => Self::Stop,
        }
    }
}

/// A stream: where its data starts, and each `/Filter` its dictionary gives
/// (a dictionary may repeat a key).
struct Found {
    data: usize,
    chains: Vec<Vec<Filter>>,
}

/// The stream whose dictionary starts where `lex` is, if one does.
fn stream_after(lex: &mut Lexer<'_>) -> Result<Option<Found>, Unreadable> {
    lex.skip_space();
    if !lex.rest().starts_with(b"<<") {
        return Ok(None);
    }
    lex.at += 2;
    let mut chains = Vec::new();
    loop {
        lex.skip_space();
        if lex.rest().starts_with(b">>") {
            lex.at += 2;
            break;
        }
        let Some(Token::Name(key)) = lex.token() else {
            return Ok(None);
        };
        if key == b"Filter" {
            chains.push(lex.filters()?);
        } else if !lex.skip_value()? {
            return Ok(None);
        }
    }
    lex.skip_space();
    if !lex.rest().starts_with(b"stream") {
        return Ok(None);
    }
    lex.at += b"stream".len();
    let rest = lex.rest();
    let eol = if rest.starts_with(b"\r\n") {
        2
    } else if rest.starts_with(b"\n") || rest.starts_with(b"\r") {
        1
    } else {
        return Ok(None);
    };
    Ok(Some(Found {
        data: lex.at + eol,
        chains,
    }))
}

enum Token {
    Name(Vec<u8>),
    /// `[` or `<<`.
    Open,
    /// `]` or `>>`.
    Close,
    /// A number, keyword, string or anything else that is one token: where
    /// it is.
    Other(usize, usize),
}

struct Lexer<'a> {
    pdf: &'a [u8],
    at: usize,
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a [u8] {
        self.pdf.get(self.at..).unwrap_or_default()
    }

    /// White space and comments.
    fn skip_space(&mut self) {
        while let Some(&b) = self.pdf.get(self.at) {
            if is_space(b) {
                self.at += 1;
            } else if b == b'%' {
                while self
                    .pdf
                    .get(self.at)
                    .is_some_and(|&b| b != b'\n' && b != b'\r')
                {
                    self.at += 1;
                }
            } else {
                break;
            }
        }
    }

    /// The next token; `None` at the end of the bytes.
    fn token(&mut self) -> Option<Token> {
        let token = self.token_to_the_end();
        // A string or hex string cut off by the end of the bytes.
        self.at = self.at.min(self.pdf.len());
        match token {
            Some(Token::Other(start, end)) => Some(Token::Other(start, end.min(self.pdf.len()))),
            token => token,
        }
    }

    fn token_to_the_end(&mut self) -> Option<Token> {
        self.skip_space();
        let rest = self.rest();
        let first = *rest.first()?;
        let start = self.at;
        if rest.starts_with(b"<<") {
            self.at += 2;
            return Some(Token::Open);
        }
        if rest.starts_with(b">>") {
            self.at += 2;
            return Some(Token::Close);
        }
        self.at += 1;
        match first {
            b'[' => Some(Token::Open),
            b']' => Some(Token::Close),
            b'/' => {
                let start = self.at;
                while self.pdf.get(self.at).is_some_and(|&b| is_regular(b)) {
                    self.at += 1;
                }
                Some(Token::Name(unescape_name(&self.pdf[start..self.at])))
            }
            b'(' => {
                self.skip_literal_string();
                Some(Token::Other(start, self.at))
            }
            b'<' => {
                while self.pdf.get(self.at).is_some_and(|&b| b != b'>') {
                    self.at += 1;
                }
                self.at += 1;
                Some(Token::Other(start, self.at))
            }
            _ => {
                while self.pdf.get(self.at).is_some_and(|&b| is_regular(b)) {
                    self.at += 1;
                }
                Some(Token::Other(start, self.at))
            }
        }
    }

    /// After `(`: to its balanced `)`, escapes included.
    fn skip_literal_string(&mut self) {
        let mut depth = 1usize;
        while let Some(&b) = self.pdf.get(self.at) {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// After an opening `[` or `<<`: to its close. `false` when the bytes
    /// end first; an error when it nests deeper than the reader reads.
    fn skip_nested(&mut self) -> Result<bool, Unreadable> {
        let mut depth = 1usize;
        while depth > 0 {
            match self.token() {
                None => return Ok(false),
                Some(Token::Open) => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(Unreadable::Unknown);
                    }
                }
                Some(Token::Close) => depth -= 1,
                Some(_) => {}
            }
        }
        Ok(true)
    }

    /// One value of a dictionary, an indirect reference (`7 0 R`) included.
    /// `false` when there is none.
    fn skip_value(&mut self) -> Result<bool, Unreadable> {
        match self.token() {
            None | Some(Token::Close) => Ok(false),
            Some(Token::Open) => self.skip_nested(),
            Some(Token::Name(_)) => Ok(true),
            Some(Token::Other(start, end)) => {
                if self.pdf[start..end].iter().all(u8::is_ascii_digit) {
                    let back = self.at;
                    let generation = matches!(self.token(), Some(Token::Other(s, e))
                        if self.pdf[s..e].iter().all(u8::is_ascii_digit));
                    let r =
                        matches!(self.token(), Some(Token::Other(s, e)) if &self.pdf[s..e] == b"R");
                    if !(generation && r) {
                        self.at = back;
                    }
                }
                Ok(true)
            }
        }
    }

    /// A `/Filter` value: a name or an array of names.
    fn filters(&mut self) -> Result<Vec<Filter>, Unreadable> {
        match self.token() {
            Some(Token::Name(name)) => Ok(vec![Filter::from_name(&name)]),
            Some(Token::Open) if self.pdf.get(self.at - 1) == Some(&b'[') => {
                let mut chain = Vec::new();
                loop {
                    match self.token() {
                        Some(Token::Close) => return Ok(chain),
                        Some(Token::Name(name)) if chain.len() < MAX_FILTERS => {
                            chain.push(Filter::from_name(&name));
                        }
                        _ => return Err(Unreadable::Unknown),
                    }
                }
            }
            // `/Filter 7 0 R`, a dictionary: nothing known to decode with.
            Some(Token::Other(..) | Token::Open) => Err(Unreadable::Unknown),
            None | Some(Token::Close) => Ok(Vec::new()),
        }
    }
}

/// Decodes `data` through `chain`, counting what each stage reads and
/// writes against `work`.
fn decode_chain(data: &[u8], chain: &[Filter], work: &mut Work) -> Result<(), Unreadable> {
    let mut held: Option<Vec<u8>> = None;
    for (n, &filter) in chain.iter().enumerate() {
        if filter == Filter::Stop {
            break;
        }
        if filter == Filter::Identity {
            continue;
        }
        let last = n + 1 == chain.len();
        let input = held.as_deref().unwrap_or(data);
        let mut out = Stage {
            keep: (!last).then(Vec::new),
            work,
        };
        match filter {
            Filter::Flate => inflate(input, &mut out)?,
            Filter::Lzw => {
                // `/EarlyChange` isn't read here: measure both ways.
                let early = {
                    let mut once = Stage {
                        keep: out.keep.as_ref().map(|_| Vec::new()),
                        work: &mut *out.work,
                    };
                    unlzw(input, true, &mut once)?;
                    once.keep
                };
                unlzw(input, false, &mut out)?;
                if let (Some(early), Some(kept)) = (early, out.keep.as_mut())
                    && early.len() > kept.len()
                {
                    *kept = early;
                }
            }
            Filter::RunLength => run_length(input, &mut out)?,
            Filter::AsciiHex => ascii_hex(input, &mut out)?,
            Filter::Ascii85 => ascii85(input, &mut out)?,
            Filter::Identity | Filter::Stop => {}
        }
        held = out.keep;
    }
    Ok(())
}

/// Where a stage's output goes: counted, and kept for the next stage.
struct Stage<'w> {
    keep: Option<Vec<u8>>,
    work: &'w mut Work,
}

impl Stage<'_> {
    fn read(&mut self, bytes: usize) -> Result<(), Unreadable> {
        self.work.spend(bytes as u64)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Unreadable> {
        self.work.spend(bytes.len() as u64)?;
        if let Some(keep) = self.keep.as_mut() {
            if keep.len() + bytes.len() > MAX_STAGE_BYTES {
                return Err(Unreadable::TooMuch);
            }
            keep.extend_from_slice(bytes);
        }
        Ok(())
    }
}

/// Flate as the reader takes it: zlib, else raw deflate; what decodes before
/// an error counts.
fn inflate(input: &[u8], out: &mut Stage<'_>) -> Result<(), Unreadable> {
    let zlib = input.len() >= 2
        && input[0] & 0x0f == 8
        && (u16::from(input[0]) << 8 | u16::from(input[1])).is_multiple_of(31);
    let mut state = flate2::Decompress::new(zlib);
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let (before_in, before_out) = (state.total_in(), state.total_out());
        let at = usize::try_from(before_in)
            .unwrap_or(usize::MAX)
            .min(input.len());
        let status = state.decompress(&input[at..], &mut buffer, flate2::FlushDecompress::None);
        let read = usize::try_from(state.total_in() - before_in).unwrap_or(usize::MAX);
        let wrote = usize::try_from(state.total_out() - before_out).unwrap_or(usize::MAX);
        out.read(read)?;
        out.write(&buffer[..wrote])?;
        match status {
            Ok(flate2::Status::Ok) if read > 0 || wrote > 0 => {}
            _ => return Ok(()),
        }
    }
}

fn unlzw(input: &[u8], early_change: bool, out: &mut Stage<'_>) -> Result<(), Unreadable> {
    let order = weezl::BitOrder::Msb;
    let mut decoder = if early_change {
        weezl::decode::Decoder::with_tiff_size_switch(order, 8)
    } else {
        weezl::decode::Decoder::new(order, 8)
    };
    let mut buffer = vec![0u8; 64 * 1024];
    let mut at = 0;
    loop {
        let result = decoder.decode_bytes(&input[at..], &mut buffer);
        at += result.consumed_in;
        out.read(result.consumed_in)?;
        out.write(&buffer[..result.consumed_out])?;
        match result.status {
            Ok(weezl::LzwStatus::Ok) if result.consumed_in > 0 || result.consumed_out > 0 => {}
            _ => return Ok(()),
        }
    }
}

fn run_length(input: &[u8], out: &mut Stage<'_>) -> Result<(), Unreadable> {
    let mut at = 0;
    while let Some(&length) = input.get(at) {
        match length {
            128 => break,
            0..=127 => {
                let literal = usize::from(length) + 1;
                let end = (at + 1 + literal).min(input.len());
                out.write(&input[at + 1..end])?;
                at = end;
            }
            _ => {
                let Some(&byte) = input.get(at + 1) else {
                    break;
                };
                out.write(&vec![byte; 257 - usize::from(length)])?;
                at += 2;
            }
        }
    }
    out.read(at)
}

fn ascii_hex(input: &[u8], out: &mut Stage<'_>) -> Result<(), Unreadable> {
    let end = input.iter().position(|&b| b == b'>').unwrap_or(input.len());
    out.read(end)?;
    let digits: Vec<u8> = input[..end]
        .iter()
        .filter_map(|&b| char::from(b).to_digit(16))
        .map(|d| d as u8)
        .collect();
    let bytes: Vec<u8> = digits
        .chunks(2)
        .map(|pair| pair[0] << 4 | pair.get(1).copied().unwrap_or(0))
        .collect();
    out.write(&bytes)
}

fn ascii85(input: &[u8], out: &mut Stage<'_>) -> Result<(), Unreadable> {
    let end = find_all(input, b"~>").next().unwrap_or(input.len());
    out.read(end)?;
    let mut bytes = Vec::with_capacity(end / 5 * 4 + 4);
    let mut group = [0u8; 5];
    let mut filled = 0;
    for &b in &input[..end] {
        match b {
            b'z' if filled == 0 => bytes.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group[filled] = b - b'!';
                filled += 1;
                if filled == 5 {
                    let value = group.iter().fold(0u64, |v, &d| v * 85 + u64::from(d));
                    bytes.extend_from_slice(&(value as u32).to_be_bytes());
                    filled = 0;
                }
            }
            _ => {}
        }
    }
    if filled > 1 {
        group[filled..].fill(84);
        let value = group.iter().fold(0u64, |v, &d| v * 85 + u64::from(d));
        bytes.extend_from_slice(&(value as u32).to_be_bytes()[..filled - 1]);
    }
    out.write(&bytes)
}

/// Whether the bytes hold the name `/Encrypt` (escapes decoded), anywhere.
fn names_encrypt(pdf: &[u8]) -> bool {
    // `Encrypt` with every letter escaped.
    const LONGEST: usize = 3 * b"Encrypt".len();
    pdf.iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .any(|(at, _)| {
            let raw = &pdf[at + 1..];
            let len = raw
                .iter()
                .position(|&b| !is_regular(b))
                .unwrap_or(raw.len());
            len <= LONGEST && unescape_name(&raw[..len]) == b"Encrypt"
        })
}

fn unescape_name(raw: &[u8]) -> Vec<u8> {
    let mut name = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let hex = raw.get(i + 1..i + 3).and_then(|h| {
            let h = std::str::from_utf8(h).ok()?;
            u8::from_str_radix(h, 16).ok()
        });
        match (raw[i], hex) {
            (b'#', Some(byte)) => {
                name.push(byte);
                i += 3;
            }
            (b, _) => {
                name.push(b);
                i += 1;
            }
        }
    }
    name
}

/// Every offset at which `needle` starts.
fn find_all<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    haystack
        .windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| *w == needle)
        .map(|(at, _)| at)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'\0')
}

/// Not white space and not a delimiter.
fn is_regular(b: u8) -> bool {
    !is_space(b) && !b"()<>[]{}/%".contains(&b)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(data).expect("deflate");
        z.finish().expect("deflate")
    }

    fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut out = format!(
            "%PDF-1.7\n4 0 obj\n<< {dict} /Length {} >>\nstream\n",
            data.len()
        )
        .into_bytes();
        out.extend_from_slice(data);
        out.extend_from_slice(b"\nendstream\nendobj\n%%EOF\n");
        out
    }

    #[test]
    fn small_streams_pass() {
        let z = deflate(b"1 0 << /Type /Catalog >>");
        assert_eq!(check(&stream("/Filter /FlateDecode", &z)), Ok(()));
        assert_eq!(check(&stream("/Filter [/AHx /Fl]", b"78 9c>")), Ok(()));
    }

    #[test]
    fn a_stream_that_decodes_past_the_budget_is_refused() {
        let zeros = vec![0u8; 300 * 1024 * 1024];
        let bomb = deflate(&zeros);
        drop(zeros);
        assert!(bomb.len() < 1024 * 1024, "{}", bomb.len());
        for dict in [
            "/Filter /FlateDecode",
            "/Filter/Fl#61teDecode",
            "/Type /ObjStm /Filter [/Fl]",
        ] {
            assert_eq!(
                check(&stream(dict, &bomb)),
                Err(Unreadable::TooMuch),
                "{dict}"
            );
        }
        // Hex-encoded, the same bomb still counts.
        let hex: String = bomb.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            check(&stream(
                "/Filter [/ASCIIHexDecode /FlateDecode]",
                hex.as_bytes()
            )),
            Err(Unreadable::TooMuch)
        );
        // A stream compressed twice decodes through both.
        let twice = deflate(&bomb);
        assert_eq!(
            check(&stream("/Filter [/Fl /Fl]", &twice)),
            Err(Unreadable::TooMuch)
        );
    }

    #[test]
    fn bytes_that_end_inside_a_dictionary_are_no_stream() {
        for cut in [
            &b"1 0 obj << /A <4142"[..],
            b"1 0 obj << /A (ab\\",
            b"1 0 obj << /A 1 0",
            b"obj<<",
        ] {
            assert_eq!(check(cut), Ok(()), "{cut:?}");
        }
    }

    #[test]
    fn unknowable_filters_and_encryption_are_refused() {
        assert_eq!(
            check(&stream("/Filter 9 0 R", b"x")),
            Err(Unreadable::Unknown)
        );
        let encrypted = b"%PDF-1.7\ntrailer << /Root 1 0 R /Encr#79pt 5 0 R >>\n%%EOF";
        assert_eq!(check(encrypted), Err(Unreadable::Encrypted));
    }

    #[test]
    fn filters_decode_as_written() {
        let mut work = Work { left: u64::MAX };
        let mut out = Stage {
            keep: Some(Vec::new()),
            work: &mut work,
        };
        ascii85(b"87cURD]i,\"Ebo80~>", &mut out).expect("a85");
        assert_eq!(out.keep.as_deref(), Some(&b"Hello World!"[..]));
        let mut out = Stage {
            keep: Some(Vec::new()),
            work: &mut work,
        };
        run_length(&[2, b'a', b'b', b'c', 254, b'z', 128], &mut out).expect("rl");
        assert_eq!(out.keep.as_deref(), Some(&b"abczzz"[..]));
        let mut out = Stage {
            keep: Some(Vec::new()),
            work: &mut work,
        };
        inflate(&deflate(b"hello"), &mut out).expect("inflate");
        assert_eq!(out.keep.as_deref(), Some(&b"hello"[..]));
    }
}
