//! The digests the advisor's scan keys its sets by, and the hasher for those sets: the keys
//! are already hashes (EPKs, 128-bit digests), so a multiply-and-rotate fold spreads them
//! as well as SipHash would, at a fraction of the cost over a million items per candidate
//! (HashDoS is no concern for a container's own data, read locally).

use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A 128-bit digest of `text`: two SipHash-1-3 digests with different leading bytes. A
/// collision among a container's values has odds below 2^-100, so counts of distinct
/// digests are the exact distinct counts for any data a store holds.
pub fn hash128(text: &str) -> u128 {
    let one = |salt: u8| {
        let mut h = std::hash::DefaultHasher::new();
        salt.hash(&mut h);
        text.hash(&mut h);
        h.finish()
    };
    ((one(0) as u128) << 64) | one(1) as u128
}

/// The digest of the leading `levels` 16-byte level hashes of a hierarchical EPK: the first
/// level's hash itself, then each next one folded in.
pub fn epk_prefix(epk: &[u8], levels: usize) -> u128 {
    let mut acc = 0u128;
    for chunk in epk.chunks(16).take(levels) {
        let mut b = [0u8; 16];
        b[..chunk.len()].copy_from_slice(chunk);
        acc = acc.rotate_left(41) ^ u128::from_be_bytes(b);
    }
    acc
}

/// A map keyed by hashes.
pub type FastMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<Fold>>;
pub type FastSet<K> = std::collections::HashSet<K, BuildHasherDefault<Fold>>;

/// FxHash's fold: rotate, xor a word, multiply.
#[derive(Default, Clone, Copy)]
pub struct Fold(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl Hasher for Fold {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(26) ^ v).wrapping_mul(K);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_of_one_level_are_its_hash() {
        let epk: Vec<u8> = (0u8..32).collect();
        assert_eq!(
            epk_prefix(&epk, 1),
            u128::from_be_bytes(epk[..16].try_into().unwrap())
        );
        assert_ne!(epk_prefix(&epk, 2), epk_prefix(&epk, 1));
        let mut set: FastSet<u128> = FastSet::default();
        assert!(set.insert(hash128("a")) && !set.insert(hash128("a")) && set.insert(hash128("b")));
    }
}
