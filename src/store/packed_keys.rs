//! Byte keys back to back in one buffer, with where each ends: a batch of whole keys
//! handed from a thread that orders them to the one that writes them, without an
//! allocation per key.

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
        self.bytes.reserve(bytes);
        self.ends.reserve(keys);
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

    /// The keys, in the order they were pushed.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.bytes[start..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
