//! The bytes of a 64-byte block that the scan ([`super`]) follows, as one
//! bit a byte: quotes, backslashes, brackets, commas and colons (with SSE2
//! compares on x86-64, AVX2 ones where the processor has it, byte by byte
//! elsewhere), the bytes backslashes escape, and the strings its quotes
//! open and close.

/// The bytes [`super::Scan::block`] counts at once.
pub(super) const BLOCK: usize = 64;

/// One bit a byte of a block, lowest first: where its quotes, backslashes,
/// opening and closing brackets, commas and colons are.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Masks {
    pub(super) quotes: u64,
    pub(super) backslashes: u64,
    /// `{` and `[`.
    pub(super) opens: u64,
    /// `}` and `]`.
    pub(super) closes: u64,
    pub(super) commas: u64,
    pub(super) colons: u64,
}

impl Masks {
    /// The masks of `block`.
    pub(super) fn of(block: &[u8; BLOCK]) -> Masks {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            sse2::masks(block)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            Masks::bytewise(block)
        }
    }

    /// The masks of `block`, a byte at a time.
    #[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
    fn bytewise(block: &[u8; BLOCK]) -> Masks {
        let mut masks = Masks::default();
        for (index, &byte) in block.iter().enumerate() {
            let bit = 1 << index;
            match byte {
                b'"' => masks.quotes |= bit,
                b'\\' => masks.backslashes |= bit,
                b'{' | b'[' => masks.opens |= bit,
                b'}' | b']' => masks.closes |= bit,
                b',' => masks.commas |= bit,
                b':' => masks.colons |= bit,
                _ => {}
            }
        }
        masks
    }
}

/// The body of a block's masks compared `$lanes` bytes at a time, with
/// one width's instructions: its load, byte compare, or, broadcast and
/// byte mask (`$mask` bits wide). Expanded inside a function compiled with
/// that width's target feature.
#[cfg(target_arch = "x86_64")]
macro_rules! masks_by_lanes {
    ($block:expr, $lanes:literal, $load:ident, $cmpeq:ident, $or:ident, $set1:ident, $movemask:ident, $mask:ty) => {{
        let mut masks = Masks::default();
        for (index, chunk) in $block.as_chunks::<$lanes>().0.iter().enumerate() {
            let shift = index * $lanes;
            let bytes = $load(chunk);
            let is = |byte: u8| $cmpeq(bytes, $set1(byte as i8));
            // `[` and `{`, `]` and `}` differ in one bit (0x20) only.
            let lowered = $or(bytes, $set1(0x20));
            let is_lowered = |byte: u8| $cmpeq(lowered, $set1(byte as i8));
            let bits = |found| u64::from($movemask(found) as $mask) << shift;
            masks.quotes |= bits(is(b'"'));
            masks.backslashes |= bits(is(b'\\'));
            masks.opens |= bits(is_lowered(b'{'));
            masks.closes |= bits(is_lowered(b'}'));
            masks.commas |= bits(is(b','));
            masks.colons |= bits(is(b':'));
        }
        masks
    }};
}

/// The masks with SSE2, which every x86-64 processor has: sixteen bytes
/// compared at once.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8,
    };

    use super::{BLOCK, Masks};

    /// The masks of `block`.
    pub(super) fn masks(block: &[u8; BLOCK]) -> Masks {
        // SAFETY: `chunk_masks` needs SSE2, which this module is compiled
        // only with (`cfg(target_feature = "sse2")`, part of every x86-64
        // target).
        #[allow(unsafe_code)]
        unsafe {
            chunk_masks(block)
        }
    }

    #[target_feature(enable = "sse2")]
    fn chunk_masks(block: &[u8; BLOCK]) -> Masks {
        masks_by_lanes!(
            block,
            16,
            load,
            _mm_cmpeq_epi8,
            _mm_or_si128,
            _mm_set1_epi8,
            _mm_movemask_epi8,
            u16
        )
    }

    /// The sixteen bytes of `chunk` in a register (one unaligned load).
    #[target_feature(enable = "sse2")]
    fn load(chunk: &[u8; 16]) -> __m128i {
        let (low, high) = chunk.split_at(8);
        let word = |half: &[u8]| {
            half.first_chunk::<8>()
                .map_or(0, |bytes| i64::from_le_bytes(*bytes))
        };
        _mm_set_epi64x(word(high), word(low))
    }
}

/// The masks with AVX2, where the processor has it: thirty-two bytes
/// compared at once, half the compares of SSE2's.
#[cfg(target_arch = "x86_64")]
pub(super) mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };

    use super::{BLOCK, Masks};

    /// The masks of `block`, as [`Masks::of`] gives them.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(in super::super) fn masks(block: &[u8; BLOCK]) -> Masks {
        masks_by_lanes!(
            block,
            32,
            load,
            _mm256_cmpeq_epi8,
            _mm256_or_si256,
            _mm256_set1_epi8,
            _mm256_movemask_epi8,
            u32
        )
    }

    /// The thirty-two bytes of `chunk` in a register.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn load(chunk: &[u8; 32]) -> __m256i {
        // SAFETY: `chunk` is 32 bytes to read, and an unaligned load reads
        // 32 bytes from any address.
        #[allow(unsafe_code)]
        unsafe {
            _mm256_loadu_si256(chunk.as_ptr().cast())
        }
    }
}

/// [`prefix_xor`] in one instruction.
#[cfg(target_arch = "x86_64")]
pub(super) mod clmul {
    use std::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x, _mm_set1_epi8,
    };

    /// [`prefix_xor`](super::prefix_xor) of `quotes`: its carry-less
    /// product with all ones, whose bit `i` is the xor of bits `0..=i`.
    #[target_feature(enable = "pclmulqdq")]
    #[inline]
    pub(in super::super) fn prefix_xor(quotes: u64) -> u64 {
        let ones = _mm_set1_epi8(-1);
        let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, quotes.cast_signed()), ones, 0);
        _mm_cvtsi128_si64(product).cast_unsigned()
    }
}

/// The bytes of a block escaped by a backslash: each one just after a run
/// of an odd number of `backslashes`. Right for backslashes inside strings
/// (where a run starts, none is escaped before it); a run that reaches the
/// block's end escapes nothing here.
pub(super) fn escaped(backslashes: u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let starts = backslashes & !(backslashes << 1);
    // Adding a run's first bit carries through the run to the byte after
    // it: odd-length runs end on a bit of the other parity.
    let after = |starts: u64| backslashes.wrapping_add(starts) & !backslashes;
    (after(starts & EVEN) & !EVEN) | (after(starts & !EVEN) & EVEN)
}

/// Each bit of `quotes` and every bit above it up to the next one set:
/// from each opening quote of a block that starts outside any string up
/// to, not with, its closing quote.
pub(super) fn prefix_xor(quotes: u64) -> u64 {
    let mut bits = quotes;
    for shift in [1, 2, 4, 8, 16, 32] {
        bits ^= bits << shift;
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_s_masks_are_its_bytes() {
        let mut state = 0x1234_5678_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let sample = br#"{"a":[1,"\"x"],"b":{}} 'ab' "c:d" [], \\ {[}]},:"e" ""  ok"#;
        let mut padded = [b'.'; BLOCK];
        padded[..sample.len()].copy_from_slice(sample);
        let text = &padded;
        let masks = Masks::of(text);
        assert_eq!(masks, Masks::bytewise(text));
        let at = |bytes: &[u8]| {
            text.iter()
                .enumerate()
                .filter(|(_, b)| bytes.contains(b))
                .fold(0u64, |mask, (i, _)| mask | 1 << i)
        };
        assert_eq!(masks.quotes, at(b"\""));
        assert_eq!(masks.backslashes, at(b"\\"));
        assert_eq!(masks.opens, at(b"{["));
        assert_eq!(masks.closes, at(b"}]"));
        assert_eq!(masks.commas, at(b","));
        assert_eq!(masks.colons, at(b":"));
        // Every byte value, and the ones a bit away from `{`, `[`, `}`, `]`.
        for _ in 0..2000 {
            let mut block = [0u8; BLOCK];
            for byte in &mut block {
                *byte = match next() % 3 {
                    0 => next() as u8,
                    1 => b"\"\\{[}],:;[]{}"[next() as usize % 13],
                    _ => {
                        [0x7b, 0x5b, 0x7d, 0x5d, 0x3b, 0x1b, 0xfb, 0xdb][next() as usize % 8] ^ 0x20
                    }
                };
            }
            assert_eq!(Masks::of(&block), Masks::bytewise(&block), "{block:?}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor was just found to have AVX2.
                #[allow(unsafe_code)]
                let with_avx2 = unsafe { avx2::masks(&block) };
                assert_eq!(with_avx2, Masks::bytewise(&block), "{block:?}");
            }
        }
    }

    #[test]
    fn a_byte_after_an_odd_run_of_backslashes_is_escaped() {
        let by_bytes = |backslashes: u64| {
            let (mut escaped, mut run) = (0u64, 0);
            for index in 0..64 {
                if backslashes >> index & 1 == 1 {
                    run += 1;
                } else {
                    if run % 2 == 1 {
                        escaped |= 1 << index;
                    }
                    run = 0;
                }
            }
            escaped
        };
        assert_eq!(escaped(0b1), 0b10);
        assert_eq!(escaped(0b11), 0);
        assert_eq!(escaped(0b0111_0110), 0b1000_0000);
        assert_eq!(escaped(1 << 63), 0);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..10_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Runs long and short: and-ing makes ones rarer.
            let backslashes = state & (state >> 3 | state << 5);
            assert_eq!(
                escaped(backslashes),
                by_bytes(backslashes),
                "{backslashes:064b}"
            );
            assert_eq!(escaped(state), by_bytes(state), "{state:064b}");
        }
    }

    #[test]
    fn prefix_xor_marks_each_string_from_its_opening_quote() {
        assert_eq!(prefix_xor(0), 0);
        assert_eq!(prefix_xor(0b1), u64::MAX);
        assert_eq!(
            prefix_xor(0b1001_0010),
            0b0000_1110 | 0b1000_0000u64.wrapping_neg()
        );
        assert_eq!(prefix_xor(1 << 63), 1 << 63);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_carry_less_prefix_xor_is_the_shifted_one() {
        if !std::arch::is_x86_feature_detected!("pclmulqdq") {
            return;
        }
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let words = (0..4000).map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        });
        for quotes in [0, 1, 1 << 63, u64::MAX].into_iter().chain(words) {
            // SAFETY: the processor was found to have PCLMULQDQ above.
            #[allow(unsafe_code)]
            let by_product = unsafe { clmul::prefix_xor(quotes) };
            assert_eq!(by_product, prefix_xor(quotes), "{quotes:064b}");
        }
    }
}
