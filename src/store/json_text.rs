//! Skipping through JSON text without parsing it: member names, where values end, and
//! the top-level members of an object. Shared by the store (which records where each
//! top-level member of an item starts, see `item`) and the query layer's lazy reader.
//!
//! Nothing here validates: malformed text gives `None` wherever it is noticed, and text
//! that is not noticed to be malformed gives some answer, never a panic.

/// Past any whitespace at `i` (stored items have none; other JSON may).
#[inline]
pub(crate) fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// A member name (without escapes) at `i` (its opening quote), and where its value
/// starts.
#[inline]
pub(crate) fn key(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if *b.get(i)? != b'"' {
        return None;
    }
    let end = quote_or_backslash(b, i + 1)?;
    if b[end] != b'"' {
        return None;
    }
    let colon = ws(b, end + 1);
    if *b.get(colon)? != b':' {
        return None;
    }
    Some((&b[i + 1..end], ws(b, colon + 1)))
}

/// The top-level members of the object `json` as (offset of the name's opening quote,
/// name), in document order, when the text is compact (no whitespace between tokens, as
/// `serde_json::to_vec` writes it) and no name holds an escape; `None` otherwise.
pub(crate) fn compact_members(json: &[u8]) -> Option<Vec<(usize, &[u8])>> {
    let b = json;
    if b.first() != Some(&b'{') {
        return None;
    }
    let mut out = Vec::new();
    if b.get(1) == Some(&b'}') {
        return (b.len() == 2).then_some(out);
    }
    let mut i = 1;
    loop {
        let (name, at) = key(b, i)?;
        // Compact: `"name":` directly followed by the value.
        if at != i + name.len() + 3 {
            return None;
        }
        out.push((i, name));
        let end = value_end(b, at)?;
        match *b.get(end)? {
            b',' => i = end + 1,
            b'}' if end + 1 == b.len() => return Some(out),
            _ => return None,
        }
    }
}

/// Where the value starting at `i` ends.
pub(crate) fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => Some(closing_quote(b, i + 1)? + 1),
        b'{' | b'[' => container_end(b, i),
        _ => {
            let mut j = i;
            while let Some(c) = b.get(j) {
                if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                    break;
                }
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// Bit `k` set when byte `i + k` of `b` is `"` or `\`, over the 16 bytes from `i`
/// (`i + 16 <= b.len()`).
#[inline]
fn quotes16(b: &[u8], i: usize) -> u32 {
    let chunk: &[u8; 16] = b[i..i + 16].try_into().unwrap_or(&[0; 16]);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: `chunk` is 16 readable bytes (an unaligned load); SSE2 is part of the
        // x86_64 baseline.
        unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            let q = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let s = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            _mm_movemask_epi8(_mm_or_si128(q, s)) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        mask16(chunk, |c| c == b'"' || c == b'\\')
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn mask16(chunk: &[u8; 16], hit: impl Fn(u8) -> bool) -> u32 {
    chunk
        .iter()
        .enumerate()
        .fold(0, |m, (k, c)| if hit(*c) { m | 1 << k } else { m })
}

/// Where the object or array starting at `i` ends, 64 bytes at a time (the simdjson /
/// sonic-rs technique). Each block yields bit masks of its quotes, opening and closing
/// brackets ([`block64`]); the prefix XOR of the quote mask, carried from block to block,
/// marks the bytes inside strings, and the brackets outside them are counted. A block whose
/// closing brackets cannot bring the depth to 0 is taken whole (depth += opens - closes);
/// otherwise its brackets are walked in order to find where the depth returns to 0.
///
/// Escapes are rare in stored items: a block holding a backslash is walked byte by byte
/// with the same state, and the walk runs on past its end while an escape is pending, so
/// every block starts with no escape pending. Backslashes outside strings mean nothing, and
/// a closer at depth 0 makes the text malformed (`None`), as does running out of text.
fn container_end(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    // All ones when the previous block ended inside a string.
    let mut in_string = 0u64;
    let mut padded = [b' '; 64];
    while i < b.len() {
        let rest = &b[i..];
        let chunk = match rest.first_chunk::<64>() {
            Some(chunk) => chunk,
            None => {
                // The last, short block: padded with spaces, which are nothing to a string
                // or to the depth.
                padded[..rest.len()].copy_from_slice(rest);
                &padded
            }
        };
        let m = block64(chunk);
        if m.backslash {
            let end = (i + 64).min(b.len());
            let mut in_str = in_string != 0;
            let mut escaped = false;
            while i < end || escaped {
                let c = *b.get(i)?;
                i += 1;
                if escaped {
                    escaped = false;
                } else if in_str {
                    match c {
                        b'\\' => escaped = true,
                        b'"' => in_str = false,
                        _ => {}
                    }
                } else {
                    match c {
                        b'"' => in_str = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.checked_sub(1)?;
                            if depth == 0 {
                                return Some(i);
                            }
                        }
                        _ => {}
                    }
                }
            }
            in_string = if in_str { !0 } else { 0 };
            continue;
        }
        // Bit set from each opening quote up to (not including) its closing quote.
        let strings = prefix_xor(m.quote) ^ in_string;
        in_string = ((strings as i64) >> 63) as u64;
        let open = m.open & !strings;
        let close = m.close & !strings;
        let closes = close.count_ones() as usize;
        if depth > closes {
            depth = depth + open.count_ones() as usize - closes;
        } else {
            let mut brackets = open | close;
            while brackets != 0 {
                let k = brackets.trailing_zeros();
                if open >> k & 1 != 0 {
                    depth += 1;
                } else {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i + k as usize + 1);
                    }
                }
                brackets &= brackets - 1;
            }
        }
        i += 64;
    }
    None
}

/// Bit `k` of each mask stands for byte `k` of a 64-byte block.
#[cfg_attr(test, derive(Debug, PartialEq))]
struct Block {
    quote: u64,
    /// `{` or `[`.
    open: u64,
    /// `}` or `]`.
    close: u64,
    /// Whether the block holds any `\`.
    backslash: bool,
}

#[inline]
fn block64(chunk: &[u8; 64]) -> Block {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: the four unaligned loads read the 64 bytes of `chunk`; SSE2 is part of
        // the x86_64 baseline.
        unsafe {
            let (mut quote, mut open, mut close) = (0u64, 0u64, 0u64);
            let mut backslash = _mm_setzero_si128();
            for k in 0..4 {
                let v = _mm_loadu_si128(chunk.as_ptr().add(16 * k).cast());
                // `[`/`]` become `{`/`}` with the 0x20 bit set, and no other byte does.
                let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
                let mask = |m: __m128i| u64::from(_mm_movemask_epi8(m) as u16) << (16 * k);
                quote |= mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
                open |= mask(_mm_cmpeq_epi8(lower, _mm_set1_epi8(b'{' as i8)));
                close |= mask(_mm_cmpeq_epi8(lower, _mm_set1_epi8(b'}' as i8)));
                backslash = _mm_or_si128(backslash, _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
            }
            Block {
                quote,
                open,
                close,
                backslash: _mm_movemask_epi8(backslash) != 0,
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        block64_portable(chunk)
    }
}

/// [`block64`] a byte at a time, for targets without SSE2 (and tested against it).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn block64_portable(chunk: &[u8; 64]) -> Block {
    let mut m = Block {
        quote: 0,
        open: 0,
        close: 0,
        backslash: false,
    };
    for (k, c) in chunk.iter().enumerate() {
        match c {
            b'"' => m.quote |= 1 << k,
            b'{' | b'[' => m.open |= 1 << k,
            b'}' | b']' => m.close |= 1 << k,
            b'\\' => m.backslash = true,
            _ => {}
        }
    }
    m
}

/// Bit `k` of the result is the XOR of bits `0..=k` of `x`.
#[inline]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The index of the quote that closes the string whose text starts at `i`.
fn closing_quote(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let at = quote_or_backslash(b, i)?;
        if b[at] == b'"' {
            return Some(at);
        }
        i = at + 2;
    }
}

/// The first `"` or `\` at or after `i`, sixteen bytes at a time.
#[inline]
fn quote_or_backslash(b: &[u8], mut i: usize) -> Option<usize> {
    while i + 16 <= b.len() {
        let m = quotes16(b, i);
        if m != 0 {
            return Some(i + m.trailing_zeros() as usize);
        }
        i += 16;
    }
    let n = b.get(i..)?.iter().position(|c| matches!(c, b'"' | b'\\'))?;
    Some(i + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sixteen-bytes-at-a-time `container_end` that the block one replaced, kept as the
    /// reference it must agree with.
    mod reference {
        use super::super::closing_quote;

        /// Bit `k` set when byte `i + k` of `b` is a quote or a bracket (`[`/`]` become
        /// `{`/`}` with the 0x20 bit set; so does the control character 0x02, which valid
        /// JSON never holds unescaped), over the 16 bytes from `i` (`i + 16 <= b.len()`).
        fn structure16(b: &[u8], i: usize) -> u32 {
            let chunk: &[u8; 16] = b[i..i + 16].try_into().unwrap_or(&[0; 16]);
            #[cfg(target_arch = "x86_64")]
            {
                use std::arch::x86_64::*;
                // SAFETY: `chunk` is 16 readable bytes (an unaligned load); SSE2 is part of
                // the x86_64 baseline.
                unsafe {
                    let v =
                        _mm_or_si128(_mm_loadu_si128(chunk.as_ptr().cast()), _mm_set1_epi8(0x20));
                    let open = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'{' as i8));
                    let close = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'}' as i8));
                    let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
                    _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(open, close), quote)) as u32
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                chunk.iter().enumerate().fold(0, |m, (k, c)| {
                    if matches!(c, b'"' | b'{' | b'}' | b'[' | b']') {
                        m | 1 << k
                    } else {
                        m
                    }
                })
            }
        }

        pub fn container_end(b: &[u8], mut i: usize) -> Option<usize> {
            let mut depth = 0usize;
            loop {
                let at = loop {
                    if i + 16 <= b.len() {
                        let m = structure16(b, i);
                        if m != 0 {
                            break i + m.trailing_zeros() as usize;
                        }
                        i += 16;
                    } else {
                        let n = b
                            .get(i..)?
                            .iter()
                            .position(|c| matches!(c, b'"' | b'{' | b'}' | b'[' | b']'))?;
                        break i + n;
                    }
                };
                match b[at] {
                    b'"' => i = closing_quote(b, at + 1)? + 1,
                    b'{' | b'[' => {
                        depth += 1;
                        i = at + 1;
                    }
                    _ => {
                        depth = depth.checked_sub(1)?;
                        i = at + 1;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                }
            }
        }
    }

    /// SplitMix64: a small deterministic generator for the property tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<T: Copy>(&mut self, from: &[T]) -> T {
            from[self.below(from.len())]
        }
    }

    /// Random JSON text: `escapes` is the chance in 100 that a string character is an
    /// escape, so that some values have none (the block path) and some many (the byte
    /// walk); containers take no more members once the text is `limit` bytes long.
    struct Gen {
        rng: Rng,
        escapes: usize,
        limit: usize,
    }

    impl Gen {
        fn ws(&mut self, out: &mut String) {
            if self.rng.below(4) == 0 {
                for _ in 0..self.rng.below(3) {
                    out.push(self.rng.pick(&[' ', '\n', '\t', '\r']));
                }
            }
        }

        fn string(&mut self, out: &mut String, len: usize) {
            out.push('"');
            for _ in 0..len {
                if self.rng.below(100) < self.escapes {
                    let escape = self.rng.pick(&[
                        "\\\"",
                        "\\\\",
                        "\\\\\\\"",
                        "\\n",
                        "\\/",
                        "\\u00e9",
                        "\\ud83d\\ude00",
                        "\\\"]}",
                    ]);
                    out.push_str(escape);
                } else {
                    let c = match self.rng.below(10) {
                        0 => self.rng.pick(&['{', '}', '[', ']', ',', ':']),
                        1 => self.rng.pick(&['é', '日', '😀', 'ß']),
                        2 => ' ',
                        _ => self.rng.pick(&['a', 'b', 'z', '0', '9', '-', '.']),
                    };
                    out.push(c);
                }
            }
            out.push('"');
        }

        fn scalar(&mut self, out: &mut String) {
            match self.rng.below(8) {
                0..=3 => {
                    let len = match self.rng.below(10) {
                        0 => self.rng.below(self.limit.min(1500)),
                        1..=3 => self.rng.below(150),
                        _ => self.rng.below(12),
                    };
                    self.string(out, len)
                }
                4 => out.push_str(self.rng.pick(&["true", "false", "null"])),
                _ => out.push_str(
                    self.rng
                        .pick(&["0", "-1", "12.5", "3e10", "-0.25E-3", "42"]),
                ),
            }
        }

        fn value(&mut self, out: &mut String, depth: usize) {
            if depth == 0 || self.rng.below(3) == 0 || out.len() > self.limit {
                return self.scalar(out);
            }
            let n = match self.rng.below(6) {
                0 => 0,
                1 => self.rng.below(30),
                _ => 1 + self.rng.below(5),
            };
            let object = self.rng.below(2) == 0;
            out.push(if object { '{' } else { '[' });
            for k in 0..n {
                if out.len() > self.limit {
                    break;
                }
                if k > 0 {
                    out.push(',');
                }
                self.ws(out);
                if object {
                    let len = self.rng.below(10);
                    self.string(out, len);
                    self.ws(out);
                    out.push(':');
                    self.ws(out);
                }
                self.value(out, depth - 1);
                self.ws(out);
            }
            out.push(if object { '}' } else { ']' });
        }

        /// A container (never a scalar) of at most `depth` levels, up to some `limit` and
        /// a little more.
        fn container(&mut self, depth: usize) -> String {
            loop {
                let mut out = String::new();
                self.value(&mut out, depth);
                if out.starts_with(['{', '[']) {
                    return out;
                }
            }
        }
    }

    /// Where `serde_json` finds the value starting at `start` to end.
    fn serde_end(b: &[u8], start: usize) -> usize {
        let mut values =
            serde_json::Deserializer::from_slice(&b[start..]).into_iter::<serde_json::Value>();
        values.next().expect("a value").expect("valid JSON");
        start + values.byte_offset()
    }

    /// The block `container_end` agrees with the reference on `b` from `start`.
    fn same_as_reference(b: &[u8], start: usize) -> Option<usize> {
        let got = container_end(b, start);
        let text = String::from_utf8_lossy(b);
        assert_eq!(got, reference::container_end(b, start), "{start} {text}");
        got
    }

    /// Checks the valid container `value` at every shift in `shifts` (spaces before it, so
    /// that it meets the block boundaries differently), with and without text after it,
    /// and cut short at `cuts` (fractions of its length in 1/16ths).
    fn check_container(value: &str, shifts: impl IntoIterator<Item = usize>, cuts: &[usize]) {
        for shift in shifts {
            for after in ["", ",1]", " {\"x\": \"]\"}", "]]]]"] {
                let text = format!("{}{value}{after}", " ".repeat(shift));
                let b = text.as_bytes();
                let end = serde_end(b, shift);
                assert_eq!(end, shift + value.len());
                assert_eq!(same_as_reference(b, shift), Some(end), "{text}");
                for cut in cuts {
                    let cut = shift + value.len() * cut / 16;
                    if cut < end {
                        assert_eq!(same_as_reference(&b[..cut], shift), None, "{cut} {text}");
                    }
                }
            }
        }
    }

    #[test]
    fn container_end_agrees_with_serde_and_the_reference() {
        let mut g = Gen {
            rng: Rng(0x5CA7_5C1B),
            escapes: 0,
            limit: 0,
        };
        let (mut small, mut large) = (0, 0);
        for round in 0..3000 {
            g.escapes = [0, 0, 1, 5, 30][round % 5];
            g.limit = [40, 200, 1000, 5000][round % 4];
            let value = g.container(1 + round % 6);
            if value.len() < 64 {
                small += 1;
            } else if value.len() > 2048 {
                large += 1;
            }
            let shifts = [0, g.rng.below(64), g.rng.below(200)];
            let cuts = [g.rng.below(16), g.rng.below(16), 15];
            check_container(&value, shifts, &cuts);
        }
        // The sizes run from under a block to several KB.
        assert!(small > 300 && large > 100, "{small} {large}");
    }

    #[test]
    fn container_end_at_block_boundaries() {
        // A string that ends at every offset around the first two block boundaries, and a
        // bracket right after it (n = 61: the closing quote is the block's last byte, 63;
        // n = 62: the first of the next block).
        for n in 0..140 {
            let a = "a".repeat(n);
            check_container(&format!("[\"{a}\"]"), [0, 1], &[8, 15]);
            check_container(&format!("[\"{a}\",[]]"), [0], &[8, 15]);
            check_container(&format!("{{\"k\":\"{a}\",\"l\":{{}}}}"), [0], &[15]);
            // A backslash at every offset, among them the last byte of a block (n = 61 and
            // n = 125): an escaped quote or backslash split across the boundary, then
            // brackets in the string.
            for escape in ["\\\"", "\\\\", "\\n", "\\\\\\\"", "\\u005d"] {
                check_container(&format!("[\"{a}{escape}]}}\",\"]\"]"), [0, 64], &[15]);
            }
            // Strings closing and opening across block boundaries with no escapes.
            check_container(&format!("[\"{a}\",\"{a}]\",\"[{a}\"]"), [0], &[]);
        }
        // Every shift of a value holding escapes, brackets in strings and nesting.
        let value = r#"{"a":[1,{"b":"}]\"[{"},"\\",[[],{}]],"c":"\\\"","d":{"e":["]"]},"f":"x"}"#;
        check_container(value, 0..130, &[1, 5, 9, 13, 15]);
    }

    #[test]
    fn block_masks_match_the_portable_ones() {
        let mut rng = Rng(0xB10C);
        for round in 0..5000 {
            let mut chunk = [0u8; 64];
            for c in &mut chunk {
                *c = match round % 3 {
                    0 => rng.next() as u8,
                    _ => rng.pick(b"\"\\{}[] a;{[\x02\x5b\x7b\xfb\xdb\x80"),
                };
            }
            assert_eq!(block64(&chunk), block64_portable(&chunk), "{chunk:?}");
        }
        assert_eq!(prefix_xor(0b1001_0100), !0 << 7 | 0b1100);
        assert_eq!(prefix_xor(1), !0);
        assert_eq!(prefix_xor(1 << 63 | 1), !0 >> 1);
    }

    #[test]
    fn malformed_containers_are_none() {
        let cases: &[&[u8]] = &[
            b"",
            b"{",
            b"[",
            b"]",
            b"}",
            b"[[]",
            b"[\"]",
            b"[\"\\\"]",
            b"[\"\\",
            b"{\"a\":\"b}",
            b"\"]",
        ];
        for &case in cases {
            assert_eq!(
                same_as_reference(case, 0),
                None,
                "{}",
                String::from_utf8_lossy(case)
            );
            // The same, longer than a block.
            let mut long = case.to_vec();
            long.splice(0..0, std::iter::repeat_n(b' ', 100));
            assert_eq!(same_as_reference(&long, 0), None);
            let mut long = b"[".repeat(3);
            long.extend(b" ".repeat(70));
            long.extend(case);
            assert_eq!(same_as_reference(&long, 0), None);
        }
        // A stray closer ends the container (which does not check bracket kinds); what
        // follows is the caller's to reject.
        assert_eq!(same_as_reference(b"[1]]", 0), Some(3));
        assert_eq!(same_as_reference(b"{]", 0), Some(2));
        // Valid text with a byte changed to a quote, backslash or bracket: the two agree,
        // whatever the answer, and nothing panics.
        let mut g = Gen {
            rng: Rng(0xBAD_5EED),
            escapes: 3,
            limit: 600,
        };
        for round in 0..2000 {
            let mut b = g.container(1 + round % 5).into_bytes();
            for _ in 0..1 + g.rng.below(3) {
                let at = g.rng.below(b.len());
                b[at] = g.rng.pick(b"\"\\{}[]");
            }
            let cut = b.len() - g.rng.below(b.len().min(100));
            same_as_reference(&b[..cut], 0);
            same_as_reference(&b[..cut], g.rng.below(cut));
        }
    }

    #[test]
    fn compact_members_of_serde_output() {
        let doc = serde_json::json!({"id": "a", "n": {"x": [1, "}"]}, "s": "q\"\\", "e": {}});
        let text = serde_json::to_vec(&doc).unwrap();
        let members = compact_members(&text).expect("compact");
        let names: Vec<&[u8]> = members.iter().map(|(_, n)| *n).collect();
        assert_eq!(names, [&b"id"[..], b"n", b"s", b"e"]);
        for (at, name) in &members {
            assert_eq!(text[*at], b'"');
            assert_eq!(&text[at + 1..at + 1 + name.len()], *name);
        }
        assert_eq!(compact_members(b"{}"), Some(vec![]));
        for not_compact in [
            &b"{ \"a\":1}"[..],
            b"{\"a\" :1}",
            b"{\"a\": 1}",
            b"{\"a\":1 }",
            b"{\"a\":1} ",
            b"{\"a\\u0041\":1}",
            b"{\"a\":1,}",
            b"{\"a\":1",
            b"[1]",
            b"{} ",
            b"",
        ] {
            assert_eq!(
                compact_members(not_compact),
                None,
                "{}",
                String::from_utf8_lossy(not_compact)
            );
        }
    }
}
