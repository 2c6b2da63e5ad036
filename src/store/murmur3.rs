//! MurmurHash3 x64 128-bit, the hash behind Cosmos DB's V2 effective partition keys.
//!
//! Written out here (rather than pulled from a crate) because the EPK must be bit-exact with the
//! service and the algorithm is small. The seed is widened to `u64`; for seeds below 2^32 the
//! result equals the reference `MurmurHash3_x64_128`, which seeds both lanes with a `u32`.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

/// Hashes `data` and returns the two 64-bit halves `(h1, h2)` of the 128-bit result.
pub fn hash128(data: &[u8], seed: u64) -> (u64, u64) {
    let mut h1 = seed;
    let mut h2 = seed;

    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let (k1, k2) = block.split_at(8);
        h1 ^= mix_k1(read_u64_le(k1));
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(read_u64_le(k2));
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }

    // The 0..=15 trailing bytes are read little-endian into k1 (bytes 0..8) and k2 (bytes 8..16);
    // a lane that receives no bytes is left untouched, as in the reference implementation.
    let tail = blocks.remainder();
    if tail.len() > 8 {
        h2 ^= mix_k2(read_u64_le(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(read_u64_le(&tail[..tail.len().min(8)]));
    }

    // `usize` -> `u64` is lossless on every supported target.
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// Little-endian read of up to 8 bytes, zero-filling the high end (used for blocks and the tail).
fn read_u64_le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .enumerate()
        .fold(0, |acc, (i, &b)| acc | (u64::from(b) << (8 * i)))
}

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

#[cfg(test)]
mod tests {
    use super::hash128;

    /// Deterministic, non-trivial input of length `n` (matches the generator used for the
    /// reference values, computed with Python's `mmh3.hash64(data, seed, signed=False)`).
    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| ((i * 37 + 11) & 0xff) as u8).collect()
    }

    #[test]
    fn empty_input() {
        assert_eq!(hash128(b"", 0), (0, 0));
        assert_eq!(
            hash128(b"", 1),
            (0x4610_abe5_6eff_5cb5, 0x5162_2daa_78f8_3583)
        );
    }

    #[test]
    fn published_vectors() {
        assert_eq!(
            hash128(b"hello", 0),
            (0xcbd8_a7b3_41bd_9b02, 0x5b1e_906a_48ae_1d19)
        );
        assert_eq!(
            hash128(b"hello", 42),
            (0xc4b8_b3c9_60af_6f08, 0x2334_b875_b0ef_bc7a)
        );
        assert_eq!(
            hash128(b"The quick brown fox jumps over the lazy dog", 0),
            (0xe34b_bc7b_bc07_1b6c, 0x7a43_3ca9_c49a_9347)
        );
    }

    #[test]
    fn every_tail_shape() {
        let cases: [(usize, u64, u64, u64); 12] = [
            (1, 0, 0x932f_c7cc_e617_f1e7, 0x7a43_4b81_6c45_08dc),
            (2, 0, 0xcff7_e5ae_5471_b39d, 0x8549_c3b2_77c4_7536),
            (3, 1, 0x359d_66a7_d253_df41, 0xa222_40d9_690f_2763),
            (7, 0, 0x8340_cc68_6662_983b, 0xa08f_38df_aa7f_f6f9),
            (8, 0, 0xf0b1_4400_7f89_ced7, 0xd022_2183_2d7a_f9a1),
            (9, 0, 0xdbb3_088e_aec8_a0b1, 0xcbde_2418_2efe_09a9),
            (15, 0, 0x2906_f047_b67f_83ff, 0x49ca_338f_e770_1fac),
            (16, 0, 0xda9c_6658_0c5e_f0fb, 0x885a_ae87_bb6c_5ff7),
            (17, 0, 0x78b8_ee9a_775e_07d1, 0xe367_9030_1698_fce0),
            (31, 7, 0x7f38_da80_7efb_9b3c, 0x3aac_460b_36ee_9d7f),
            (32, 0, 0xaf73_74eb_8efe_799b, 0x3a52_0092_4dcd_d6ff),
            (33, 0, 0x08b8_8a88_c309_9ba9, 0x15c0_6fbd_b5df_8af9),
        ];
        for (len, seed, h1, h2) in cases {
            assert_eq!(
                hash128(&pattern(len), seed),
                (h1, h2),
                "len {len} seed {seed}"
            );
        }
    }
}
