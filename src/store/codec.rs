//! A minimal binary encoder/decoder for the store's hot records.
//!
//! Statistics, item headers and change feed events are written on every item write, so they
//! use a fixed little-endian layout instead of JSON. Decoding never panics: a short or
//! malformed record yields `None`, which callers turn into a "corrupt record" error.

#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn with_capacity(n: usize) -> Writer {
        Writer {
            buf: Vec::with_capacity(n),
        }
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Length-prefixed (u32) bytes.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.buf.extend_from_slice(v);
        self
    }
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
}

pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Some(head)
    }
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// Whatever is left.
    pub fn rest(self) -> &'a [u8] {
        self.buf
    }
}

/// The first `16 × N` bytes of `bytes`, zero-padded, as big-endian integers: comparing
/// them compares those bytes, so a sort of byte keys can compare integers first and read
/// the keys' bytes only on ties (a key shorter than the words ties with its zero padding).
#[inline]
pub fn be_words<const N: usize>(bytes: &[u8]) -> [u128; N] {
    let mut words = [0u128; N];
    let (whole, _) = bytes.as_chunks::<16>();
    for (word, chunk) in words.iter_mut().zip(whole) {
        *word = u128::from_be_bytes(*chunk);
    }
    // The word the bytes end in, if they end before the last: padded.
    if let Some(word) = words.get_mut(whole.len()) {
        let rest = &bytes[whole.len() * 16..];
        let mut b = [0u8; 16];
        b[..rest.len()].copy_from_slice(rest);
        *word = u128::from_be_bytes(b);
    }
    words
}

#[cfg(test)]
mod tests {
    #[test]
    fn words_order_as_their_bytes() {
        let keys: [&[u8]; 5] = [b"", b"\0", b"a", &[b'a'; 40], b"a\xff"];
        for pair in keys.windows(2) {
            assert!(be_words::<2>(pair[0]) <= be_words::<2>(pair[1]));
        }
        assert_eq!(be_words::<1>(b"\x01"), [1u128 << 120]);
        assert_eq!(be_words::<3>(&[7; 40])[2] & 0xFF, 0, "padded with zeros");
    }

    use super::*;

    #[test]
    fn round_trip_and_short_input() {
        let mut w = Writer::default();
        w.u8(3).u32(7).u64(9).f64(1.5).bytes(b"abc");
        let buf = w.into_inner();
        let mut r = Reader::new(&buf);
        assert_eq!(r.u8(), Some(3));
        assert_eq!(r.u32(), Some(7));
        assert_eq!(r.u64(), Some(9));
        assert_eq!(r.f64(), Some(1.5));
        assert_eq!(r.bytes(), Some(&b"abc"[..]));
        assert!(r.rest().is_empty());
        assert_eq!(Reader::new(&buf[..3]).u32(), None);
    }
}
