//! Key layouts of every LMDB database in the store, in one place.
//!
//! All integers are big-endian so byte order is numeric order. Every key starts with the
//! container's numeric id, so one container is one contiguous key range in each database and
//! deleting it is a range delete. Items are keyed by EPK before id: a logical partition is a
//! key prefix and a physical partition (an EPK range) is a contiguous key range, so a split
//! moves no data — only the range table changes.

use std::ops::Bound;

use super::epk::Epk;

/// Numeric container id: the key prefix of everything the container owns.
pub type ContainerRid = u32;
/// Numeric physical partition id, unique and never reused within a container.
pub type RangeId = u32;

pub fn container_prefix(cid: ContainerRid) -> [u8; 4] {
    cid.to_be_bytes()
}

/// `items`: cid ‖ EPK ‖ id. The EPK has a fixed length per container (16 bytes per key
/// level), so keys are prefix-free.
pub fn item(cid: ContainerRid, epk: &Epk, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + epk.as_bytes().len() + id.len());
    item_into(&mut k, cid, epk.as_bytes(), id);
    k
}

/// `items` key of an item, written into `key` (readers that look up many reuse one buffer).
pub fn item_into(key: &mut Vec<u8>, cid: ContainerRid, epk: &[u8], id: &str) {
    key.clear();
    key.extend_from_slice(&cid.to_be_bytes());
    key.extend_from_slice(epk);
    key.extend_from_slice(id.as_bytes());
}

/// Splits an item key back into its EPK and id.
pub fn split_item(key: &[u8], epk_len: usize) -> Option<(&[u8], &str)> {
    let rest = key.get(4..)?;
    if rest.len() < epk_len {
        return None;
    }
    let (epk, id) = rest.split_at(epk_len);
    Some((epk, std::str::from_utf8(id).ok()?))
}

/// Start of the key range holding EPKs ≥ `epk` (also the prefix of one logical partition).
pub fn epk_bound(cid: ContainerRid, epk: &Epk) -> Vec<u8> {
    epk_bound_bytes(cid, epk.as_bytes())
}

pub fn epk_bound_bytes(cid: ContainerRid, epk: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + epk.len());
    write_epk_bound(&mut k, cid, epk);
    k
}

/// [`epk_bound_bytes`] written over `k`, keeping its buffer.
pub fn write_epk_bound(k: &mut Vec<u8>, cid: ContainerRid, epk: &[u8]) {
    k.clear();
    k.extend_from_slice(&cid.to_be_bytes());
    k.extend_from_slice(epk);
}

/// `logical_stats`: cid ‖ EPK (same shape as an item-range bound).
pub fn logical(cid: ContainerRid, epk: &Epk) -> Vec<u8> {
    epk_bound(cid, epk)
}

/// `range_stats`: cid ‖ range id.
pub fn range(cid: ContainerRid, range: RangeId) -> [u8; 8] {
    let mut k = [0u8; 8];
    k[..4].copy_from_slice(&cid.to_be_bytes());
    k[4..].copy_from_slice(&range.to_be_bytes());
    k
}

/// `feed`: cid ‖ range id ‖ LSN.
pub fn feed(cid: ContainerRid, range: RangeId, lsn: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&cid.to_be_bytes());
    k[4..8].copy_from_slice(&range.to_be_bytes());
    k[8..].copy_from_slice(&lsn.to_be_bytes());
    k
}

pub fn feed_lsn(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.get(8..16)?.try_into().ok()?))
}

/// `meter`: cid ‖ range id ‖ unix second.
pub fn meter(cid: ContainerRid, range: RangeId, second: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&cid.to_be_bytes());
    k[4..8].copy_from_slice(&range.to_be_bytes());
    k[8..].copy_from_slice(&second.to_be_bytes());
    k
}

/// `ttl`: cid ‖ expiry second ‖ EPK ‖ id — ordered by expiry so the purger reads only
/// what has expired.
pub fn ttl(cid: ContainerRid, expires_at: u64, epk: &Epk, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(12 + epk.as_bytes().len() + id.len());
    k.extend_from_slice(&cid.to_be_bytes());
    k.extend_from_slice(&expires_at.to_be_bytes());
    k.extend_from_slice(epk.as_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

/// `unique`: cid ‖ EPK ‖ constraint index ‖ 16-byte hash of the constrained values.
pub fn unique(cid: ContainerRid, epk: &Epk, constraint: u8, hash: &[u8; 16]) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + epk.as_bytes().len() + 17);
    k.extend_from_slice(&cid.to_be_bytes());
    k.extend_from_slice(epk.as_bytes());
    k.push(constraint);
    k.extend_from_slice(hash);
    k
}

pub type KeyRange<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// `[start, end)` as heed takes it for byte keys.
pub fn half_open<'a>(start: &'a [u8], end: &'a [u8]) -> KeyRange<'a> {
    (Bound::Included(start), Bound::Excluded(end))
}

/// `[start, end]`.
pub fn closed<'a>(start: &'a [u8], end: &'a [u8]) -> KeyRange<'a> {
    (Bound::Included(start), Bound::Included(end))
}

/// The exclusive end of every key that starts with `prefix`.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_carries() {
        assert_eq!(prefix_end(&[1, 2]), Some(vec![1, 3]));
        assert_eq!(prefix_end(&[1, 0xFF]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xFF, 0xFF]), None);
    }

    #[test]
    fn item_keys_split_back() {
        let epk = Epk(vec![0x12; 16]);
        let k = item(7, &epk, "order-1");
        let (e, id) = split_item(&k, 16).unwrap();
        assert_eq!(e, epk.as_bytes());
        assert_eq!(id, "order-1");
    }
}
