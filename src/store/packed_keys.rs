//! Byte keys back to back in one buffer, without an allocation per key:
//!
//! - [`PackedKeys`], with where each ends: a batch of whole keys handed from a thread that
//!   orders them to the one that writes them, or the keys helper threads read ahead;
//! - [`KeySet`], with where each lies, in key order and distinct: one document's index
//!   entries. A document has dozens; made on the thread that prepares it and dropped on the
//!   one that writes it, a `Vec` per key cost the import two allocator calls per entry, the
//!   free crossing threads (about a twentieth of an import's time, in a profile);
//!
//! and [`reserve`], room in such a buffer reused empty without copying what it held.

use heed::Comparator;

use super::key_order::KeyOrder;

#[derive(Default)]
pub(crate) struct PackedKeys {
    bytes: Vec<u8>,
    /// Where each key ends in `bytes`.
    ends: Vec<usize>,
}

impl PackedKeys {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Room for `keys` more keys of `bytes` bytes in all, made at once: growing by
    /// doubling would copy the keys and touch fresh pages again and again.
    pub fn reserve(&mut self, keys: usize, bytes: usize) {
        reserve(&mut self.bytes, bytes);
        reserve(&mut self.ends, keys);
    }

    /// Appends one key, made of `parts` end to end.
    pub fn push(&mut self, parts: &[&[u8]]) {
        for part in parts {
            self.bytes.extend_from_slice(part);
        }
        self.ends.push(self.bytes.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `i`th key pushed.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = i.checked_sub(1).map_or(0, |before| self.ends[before]);
        Some(&self.bytes[start..end])
    }

    /// The keys, in the order they were pushed.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.bytes[start..end])
    }
}

/// Room for `more` elements in `buf`. A buffer reused empty is replaced rather than grown:
/// growing reallocates, which copies the whole old allocation although none of it is in
/// use (some 3 % of an import's time went to such copies of the index buffers).
pub(crate) fn reserve<T>(buf: &mut Vec<T>, more: usize) {
    if buf.is_empty() && buf.capacity() < more {
        *buf = Vec::with_capacity(more.max(buf.capacity() * 2));
    } else {
        buf.reserve(more);
    }
}

/// Distinct byte keys in ascending order, back to back in one buffer. Built by pushing
/// keys in any order and then [`KeySet::sort`]ing them.
#[derive(Debug, Default)]
pub struct KeySet {
    bytes: Vec<u8>,
    /// Where each key lies in `bytes`: in key order once sorted.
    spans: Vec<(u32, u32)>,
}

impl KeySet {
    /// Room for `keys` keys of `bytes` bytes in all.
    pub fn with_capacity(keys: usize, bytes: usize) -> KeySet {
        KeySet {
            bytes: Vec::with_capacity(bytes),
            spans: Vec::with_capacity(keys),
        }
    }

    /// Adds one key, made of `parts` end to end; the set is unsorted until [`KeySet::sort`].
    pub fn push(&mut self, parts: &[&[u8]]) {
        let start = self.bytes.len();
        for part in parts {
            self.bytes.extend_from_slice(part);
        }
        // A document's entries are a few KB: offsets fit in u32 by far.
        self.spans.push((start as u32, self.bytes.len() as u32));
    }

    /// Puts the keys in ascending order and drops repeated ones. Compared as the store
    /// compares keys, eight bytes at a time ([`KeyOrder`]): a document's index keys share
    /// their first eight bytes and nearly always differ in the next eight (the path).
    pub fn sort(&mut self) {
        let bytes = &self.bytes;
        self.spans
            .sort_unstable_by(|a, b| KeyOrder::compare(spanned(bytes, *a), spanned(bytes, *b)));
        self.spans
            .dedup_by(|a, b| spanned(bytes, *a) == spanned(bytes, *b));
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn get(&self, i: usize) -> Option<&[u8]> {
        Some(spanned(&self.bytes, *self.spans.get(i)?))
    }

    /// The keys, in order (pushing order until sorted).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> {
        self.spans.iter().map(|&span| spanned(&self.bytes, span))
    }
}

/// The key at `(start, end)` of a [`KeySet`]'s bytes.
fn spanned(bytes: &[u8], (start, end): (u32, u32)) -> &[u8] {
    &bytes[start as usize..end as usize]
}

impl<K: AsRef<[u8]>> FromIterator<K> for KeySet {
    /// The distinct keys of `keys`, sorted.
    fn from_iter<I: IntoIterator<Item = K>>(keys: I) -> KeySet {
        let mut set = KeySet::default();
        for key in keys {
            set.push(&[key.as_ref()]);
        }
        set.sort();
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_set_holds_each_key_once_in_order() {
        let mut set = KeySet::with_capacity(4, 16);
        set.push(&[b"b", b"c"]);
        set.push(&[b"a"]);
        set.push(&[b"bc"]);
        set.push(&[]);
        set.push(&[b"b"]);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [&b"bc"[..], b"a", b"bc", b"", b"b"]
        );
        set.sort();
        let sorted: Vec<&[u8]> = set.iter().collect();
        assert_eq!(sorted, [&b""[..], b"a", b"b", b"bc"]);
        assert_eq!(
            (set.len(), set.get(3), set.get(4)),
            (4, Some(&b"bc"[..]), None)
        );
        assert_eq!(
            KeySet::from_iter([b"x", b"w", b"x"])
                .iter()
                .collect::<Vec<_>>(),
            [b"w", b"x"]
        );
    }

    #[test]
    fn packed_keys_give_back_each_key() {
        let keys: [&[u8]; 3] = [b"a", b"", b"longer key"];
        let mut list = PackedKeys::default();
        for key in keys {
            list.push(&[key]);
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(list.get(i), Some(*key));
        }
        assert_eq!(list.get(keys.len()), None);
    }

    #[test]
    fn keys_come_back_whole_and_in_order() {
        let mut keys = PackedKeys::default();
        keys.push(&[b"ab", b"c"]);
        keys.push(&[]);
        keys.push(&[b"xyz"]);
        let got: Vec<&[u8]> = keys.iter().collect();
        assert_eq!(got, [&b"abc"[..], b"", b"xyz"]);
        keys.clear();
        assert_eq!((keys.len(), keys.iter().count()), (0, 0));
    }
}
