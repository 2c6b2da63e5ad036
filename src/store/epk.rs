//! Effective partition keys (EPKs): the V2 hash of a partition key value, as Cosmos DB for NoSQL
//! computes it, and the arithmetic on the EPK space that ranges and splits need.
//!
//! An EPK is kept as raw bytes. The service compares EPKs as uppercase hex strings ordinally, which
//! orders exactly like comparing the byte arrays lexicographically, so `Epk` derives `Ord` on its
//! bytes. The space runs from `""` (inclusive) to `"FF"` (exclusive). Because V2 masks the top two
//! bits of every hash, real hashes stay below `0x40…`, and `"FF"` stands for 2^126 when doing
//! arithmetic on 16-byte values.

use std::fmt;

use super::murmur3;

/// One component of a partition key value.
#[derive(Debug, Clone, PartialEq)]
pub enum PkComponent {
    /// The property is absent from the document.
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
}

/// Effective partition key: raw bytes, ordered like the service orders hex strings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Epk(pub Vec<u8>);

impl Epk {
    /// Start of the EPK space (inclusive): the empty key.
    pub const MIN: Epk = Epk(Vec::new());

    /// Start of the EPK space (inclusive): `""`.
    pub fn min() -> Epk {
        Epk::MIN
    }

    /// End of the EPK space (exclusive): `"FF"`.
    pub fn max() -> Epk {
        Epk(vec![0xFF])
    }

    pub fn is_min(&self) -> bool {
        self.0.is_empty()
    }

    pub fn is_max(&self) -> bool {
        self.0 == [0xFF]
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Uppercase hex, the form the service uses in range bounds.
    pub fn to_hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
        let mut s = vec![0u8; self.0.len() * 2];
        for (pair, &b) in s.chunks_exact_mut(2).zip(&self.0) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 0x0F)];
        }
        String::from_utf8(s).unwrap_or_default()
    }

    /// Parses hex of either case; `None` for odd length or a non-hex character.
    pub fn from_hex(s: &str) -> Option<Epk> {
        let pairs = s.as_bytes().chunks_exact(2);
        if !pairs.remainder().is_empty() {
            return None;
        }
        pairs
            .map(|pair| Some((hex_value(pair[0])? << 4) | hex_value(pair[1])?))
            .collect::<Option<Vec<u8>>>()
            .map(Epk)
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

impl fmt::Display for Epk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Serialization used for hashing, exposed because other code reuses it as a compact key
/// encoding. The type marker comes first, so values of different types never collide, and the
/// string terminator (0xFF never occurs in UTF-8) keeps concatenated components unambiguous.
/// The first eight bytes of an EPK (or of any byte key) as a big-endian number,
/// zero-padded: numbers in the order of the bytes, equal for keys that share those bytes.
/// EPKs are hashes, so it nearly always tells two apart.
pub fn lead(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(b)
}

pub fn write_for_hashing_v2(component: &PkComponent, out: &mut Vec<u8>) {
    match component {
        PkComponent::Undefined => out.push(0x00),
        PkComponent::Null => out.push(0x01),
        PkComponent::Bool(false) => out.push(0x02),
        PkComponent::Bool(true) => out.push(0x03),
        PkComponent::Number(n) => {
            out.push(0x05);
            // Raw bits, so -0.0 and 0.0 hash differently, as they do in the service.
            out.extend_from_slice(&n.to_bits().to_le_bytes());
        }
        PkComponent::String(s) => {
            out.push(0x08);
            out.extend_from_slice(s.as_bytes());
            out.push(0xFF);
        }
    }
}

/// V2 hash of all components together (the single-path "Hash" kind). 16 bytes.
pub fn hash_v2(components: &[PkComponent]) -> [u8; 16] {
    let mut bytes = Vec::new();
    for component in components {
        write_for_hashing_v2(component, &mut bytes);
    }
    let (h1, h2) = murmur3::hash128(&bytes, 0);
    let mut hash = [0u8; 16];
    hash[..8].copy_from_slice(&h2.to_be_bytes());
    hash[8..].copy_from_slice(&h1.to_be_bytes());
    // The service reserves the top two bits, which keeps every hash below the "FF" sentinel.
    hash[0] &= 0x3F;
    hash
}

/// EPK of a full key. `multi_hash` selects the hierarchical ("MultiHash") kind, whose EPK is the
/// concatenation of each component's own V2 hash; otherwise ("Hash") all components are hashed
/// together. An empty component list maps to `Epk::min()`, as the service does for the empty key.
pub fn effective_partition_key(components: &[PkComponent], multi_hash: bool) -> Epk {
    if components.is_empty() {
        return Epk::min();
    }
    if multi_hash {
        Epk(components
            .iter()
            .flat_map(|c| hash_v2(std::slice::from_ref(c)))
            .collect())
    } else {
        Epk(hash_v2(components).to_vec())
    }
}

/// Why a hierarchical prefix cannot be turned into an EPK range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixError {
    /// A prefix needs at least one component.
    Empty,
    /// A prefix must have fewer components than the container has paths.
    TooLong { len: usize, path_count: usize },
}

impl fmt::Display for PrefixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefixError::Empty => {
                f.write_str("a partition key prefix needs at least one component")
            }
            PrefixError::TooLong { len, path_count } => write!(
                f,
                "a partition key prefix must have fewer components than the {path_count} \
                 partition key paths, got {len}"
            ),
        }
    }
}

impl std::error::Error for PrefixError {}

/// EPK range `[min, max)` served by a hierarchical prefix (fewer components than paths). Every
/// full key extending the prefix starts with the prefix's EPK and continues with a masked hash
/// (first byte < 0x40), so appending 0xFF bounds them all.
pub fn prefix_range(prefix: &[PkComponent], path_count: usize) -> Result<(Epk, Epk), PrefixError> {
    if prefix.is_empty() {
        return Err(PrefixError::Empty);
    }
    if prefix.len() >= path_count {
        return Err(PrefixError::TooLong {
            len: prefix.len(),
            path_count,
        });
    }
    let min = effective_partition_key(prefix, true);
    let mut max = min.clone();
    max.0.push(0xFF);
    Ok((min, max))
}

/// Size of the V2 hash space: hashes are 16 bytes with the top two bits cleared.
const V2_SPACE: u128 = 1 << 126;

// `even_boundaries` relies on `n * n` fitting in a u128.
const _: () = assert!(usize::BITS <= 64);

/// Split the V2 hash space `[Epk::min(), Epk::max())` into `n` contiguous ranges of equal width
/// (`n == 0` is treated as 1). Interior boundaries are 16-byte values `floor(i * 2^126 / n)`; the
/// outer bounds are the space's own `""` and `"FF"`.
pub fn even_boundaries(n: usize) -> Vec<(Epk, Epk)> {
    let n = n.max(1);
    let parts = n as u128;
    let (width, rem) = (V2_SPACE / parts, V2_SPACE % parts);
    // floor(i * 2^126 / n) without overflowing: i * width + floor(i * rem / n), where
    // i * rem < n^2 <= 2^128.
    let boundary = |i: usize| {
        let i = i as u128;
        Epk((width * i + rem * i / parts).to_be_bytes().to_vec())
    };
    let mut ranges = Vec::new();
    let mut lower = Epk::min();
    for i in 1..n {
        let upper = boundary(i);
        ranges.push((lower, upper.clone()));
        lower = upper;
    }
    ranges.push((lower, Epk::max()));
    ranges
}

/// Midpoint of a range for a throughput split: an EPK strictly between `min` and `max`, or `None`
/// if there is none at the resolution used.
///
/// Bounds are read as big-endian numbers padded with zeros on the right, with a trailing lone
/// `FF` chunk read as 2^126 (so `""` = 0 and `"FF"` = 2^126). The first attempt uses the first 16
/// bytes of each bound and yields a 16-byte EPK. Only if that finds nothing and a bound is longer
/// than 16 bytes (hierarchical keys, where EPKs are made of 16-byte chunks) is the full length used,
/// so that e.g. the range of a prefix `[X, X‖FF)` splits at `X‖20…0`.
pub fn midpoint(min: &Epk, max: &Epk) -> Option<Epk> {
    midpoint_in_chunks(min, max, 1).or_else(|| {
        let chunks = min.0.len().max(max.0.len()).div_ceil(16);
        if chunks > 1 {
            midpoint_in_chunks(min, max, chunks)
        } else {
            None
        }
    })
}

fn midpoint_in_chunks(min: &Epk, max: &Epk, chunks: usize) -> Option<Epk> {
    let lo = to_fixed_width(min, chunks * 16);
    let hi = to_fixed_width(max, chunks * 16);
    if lo >= hi {
        return None;
    }
    // (lo + hi) / 2 on big-endian byte strings: add from the right, then shift the sum (with its
    // carry as the top bit) right by one bit from the left.
    let mut sum = vec![0u8; lo.len()];
    let mut carry = 0u16;
    for ((s, &a), &b) in sum.iter_mut().zip(&lo).zip(&hi).rev() {
        let total = u16::from(a) + u16::from(b) + carry;
        *s = total.to_le_bytes()[0];
        carry = total >> 8;
    }
    let mut high_bit = u8::from(carry != 0);
    let mid: Vec<u8> = sum
        .into_iter()
        .map(|b| {
            let shifted = (high_bit << 7) | (b >> 1);
            high_bit = b & 1;
            shifted
        })
        .collect();
    let mid = Epk(mid);
    // The numeric reading can disagree with byte order near the sentinel (e.g. a bound of "FF"
    // used as a minimum), so check the result in the order that actually matters.
    (*min < mid && mid < *max).then_some(mid)
}

/// The bound as a `width`-byte big-endian number (truncated or zero-padded on the right), with a
/// trailing lone 0xFF chunk replaced by 2^126 within that chunk, i.e. 0x40 followed by zeros.
fn to_fixed_width(epk: &Epk, width: usize) -> Vec<u8> {
    let bytes = epk.as_bytes();
    let mut out = vec![0u8; width];
    if bytes.len() % 16 == 1 && bytes.len() <= width && bytes.last() == Some(&0xFF) {
        let body = bytes.len() - 1;
        out[..body].copy_from_slice(&bytes[..body]);
        out[body] = 0x40;
    } else {
        let n = bytes.len().min(width);
        out[..n].copy_from_slice(&bytes[..n]);
    }
    out
}

/// Why a JSON value cannot be a partition key component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentError {
    /// Objects are not valid partition key values.
    Object,
    /// Arrays are not valid partition key values.
    Array,
    /// A number that has no `f64` reading (only possible with arbitrary-precision JSON numbers).
    UnrepresentableNumber,
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ComponentError::Object => "an object cannot be a partition key value",
            ComponentError::Array => "an array cannot be a partition key value",
            ComponentError::UnrepresentableNumber => {
                "the partition key number cannot be represented as a double"
            }
        })
    }
}

impl std::error::Error for ComponentError {}

/// Reads a partition key component from a JSON value; `None` (a missing property) is undefined.
pub fn component_from_json(v: Option<&serde_json::Value>) -> Result<PkComponent, ComponentError> {
    use serde_json::Value;
    match v {
        None => Ok(PkComponent::Undefined),
        Some(Value::Null) => Ok(PkComponent::Null),
        Some(Value::Bool(b)) => Ok(PkComponent::Bool(*b)),
        Some(Value::Number(n)) => n
            .as_f64()
            .map(PkComponent::Number)
            .ok_or(ComponentError::UnrepresentableNumber),
        Some(Value::String(s)) => Ok(PkComponent::String(s.clone())),
        Some(Value::Array(_)) => Err(ComponentError::Array),
        Some(Value::Object(_)) => Err(ComponentError::Object),
    }
}

/// The JSON form of a component; `None` for undefined. Integral numbers within ±2^53 (where every
/// integer is exact) become JSON integers; others stay doubles. -0.0 stays a double so that it
/// keeps its own hash, and non-finite numbers (not expressible in JSON) become null, as
/// `serde_json` does.
pub fn component_to_json(c: &PkComponent) -> Option<serde_json::Value> {
    use serde_json::Value;
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0; // 2^53
    Some(match c {
        PkComponent::Undefined => return None,
        PkComponent::Null => Value::Null,
        PkComponent::Bool(b) => Value::Bool(*b),
        PkComponent::Number(n) => {
            let n = *n;
            let negative_zero = n == 0.0 && n.is_sign_negative();
            if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER && !negative_zero {
                // Exact: integral and within ±2^53.
                Value::from(n as i64)
            } else {
                serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
            }
        }
        PkComponent::String(s) => Value::String(s.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::PkComponent::{Bool, Null, Number, Undefined};
    use super::*;

    fn s(v: &str) -> PkComponent {
        PkComponent::String(v.to_owned())
    }

    fn hash_hex(components: &[PkComponent]) -> String {
        effective_partition_key(components, false).to_hex()
    }

    fn multi_hex(components: &[PkComponent]) -> String {
        effective_partition_key(components, true).to_hex()
    }

    fn hex(s: &str) -> Epk {
        Epk::from_hex(s).expect("valid hex in test")
    }

    #[test]
    fn v2_single_path_vectors() {
        let cases: Vec<(PkComponent, &str)> = vec![
            (s(""), "32E9366E637A71B4E710384B2F4970A0"),
            (s("partitionKey"), "013AEFCF77FA271571CF665A58C933F1"),
            (s("redmond"), "22E342F38A486A088463DFF7838A5963"),
            (s("customer42"), "19819C94CE42A1654CCC8110539D9589"),
            (s(&"a".repeat(1024)), "332BDF5512AE49615F32C7D98C2DB86C"),
            (Null, "378867E4430E67857ACE5C908374FE16"),
            (Undefined, "11622DAA78F835834610ABE56EFF5CB5"),
            (Bool(true), "0E711127C5B5A8E4726AC6DD306A3E59"),
            (Bool(false), "2FE1BE91E90A3439635E0E9E37361EF2"),
            (Number(-128.0), "01DAEDABF913540367FE219B2AD06148"),
            (Number(127.0), "0C507ACAC853ECA7977BF4CEFB562A25"),
            (Number(5.0), "19C08621B135968252FB34B4CF66F811"),
            (
                Number(5.123_124_190_509_124),
                "0EF2E2D82460884AF0F6440BE4F726A8",
            ),
            (
                Number(f64::from(i32::MIN)),
                "0B1660D5233C3171725B30D4A5F4CC1F",
            ),
            (
                Number(f64::from(i32::MAX)),
                "2D9349D64712AEB5EB1406E2F0BE2725",
            ),
            (Number(i64::MIN as f64), "23D5C6395512BDFEAFADAD15328AD2BB"),
            (Number(i64::MAX as f64), "2EDB959178DFCCA18983F89384D1629B"),
            (
                Number(f64::from_bits(1)),
                "0E6CBA63A280927DE485DEF865800139",
            ),
            (Number(f64::MAX), "31424D996457102634591FF245DBCC4D"),
            // Derived vectors.
            (Number(0.0), "155B95BEDAC4B1E9EC1CDC9BB0DDDE58"),
            (Number(-0.0), "3D018BB1DF3DB27235766E81FD10406E"),
            (Number(1.0), "20CD98B339BA78A5D0CF6953B87070B0"),
            (s("asdf"), "208BF1D598F5B63AD5520F04FE58C5E8"),
        ];
        for (component, expected) in cases {
            let single = std::slice::from_ref(&component);
            assert_eq!(hash_hex(single), expected, "{component:?}");
            // A one-component hierarchical key hashes the same way.
            assert_eq!(multi_hex(single), expected, "{component:?}");
        }
    }

    #[test]
    fn v2_hash_kind_hashes_components_together() {
        let key = [Number(5.0), s("redmond"), Bool(true), Null];
        assert_eq!(hash_hex(&key), "3032DECBE2AB1768D8E0AEDEA35881DF");
        assert_eq!(
            hex(&hash_hex(&key)).as_bytes(),
            hash_v2(&key).as_slice(),
            "hash_v2 and the Hash-kind EPK agree"
        );
    }

    #[test]
    fn multi_hash_vectors() {
        assert_eq!(
            multi_hex(&[s("title_player_account!9E711EFBD3BBB492"), s("Title-B60C1")]),
            "2306FDF78C35ED4FD1C5835B075FC0B0248E1F58635558D12708326234F93A21"
        );
        assert_eq!(
            multi_hex(&[Bool(false), Null]),
            "2FE1BE91E90A3439635E0E9E37361EF2378867E4430E67857ACE5C908374FE16"
        );
        assert_eq!(
            multi_hex(&[s("redmond"), s("98052")]),
            "22E342F38A486A088463DFF7838A596336C8BBEC5EEB4676558994E4D8DF79A7"
        );
        let three = effective_partition_key(&[s("a"), s("b"), s("c")], true);
        assert_eq!(three.as_bytes().len(), 48);
    }

    #[test]
    fn empty_key_is_min() {
        assert_eq!(effective_partition_key(&[], false), Epk::min());
        assert_eq!(effective_partition_key(&[], true), Epk::min());
    }

    #[test]
    fn serialization_bytes() {
        let mut out = Vec::new();
        for c in [Undefined, Null, Bool(false), Bool(true), s("hé")] {
            write_for_hashing_v2(&c, &mut out);
        }
        assert_eq!(out, [0, 1, 2, 3, 0x08, b'h', 0xC3, 0xA9, 0xFF]);
        out.clear();
        write_for_hashing_v2(&Number(1.0), &mut out);
        assert_eq!(out, [0x05, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F]);
    }

    #[test]
    fn prefix_ranges() {
        let (min, max) =
            prefix_range(&[s("title_player_account!9E711EFBD3BBB499")], 2).expect("valid prefix");
        assert_eq!(min.to_hex(), "378CCD42FC556DDDE688B05DC178BB92");
        assert_eq!(max.to_hex(), "378CCD42FC556DDDE688B05DC178BB92FF");

        // Full keys extending the prefix fall inside; the prefix's own EPK is the inclusive min.
        let (min, max) = prefix_range(&[s("redmond")], 3).expect("valid prefix");
        for key in [
            vec![s("redmond"), s("98052")],
            vec![s("redmond"), s("98052"), Number(7.0)],
            vec![s("redmond"), Undefined, Undefined],
        ] {
            let epk = effective_partition_key(&key, true);
            assert!(min <= epk && epk < max, "{key:?}");
        }
        let other = effective_partition_key(&[s("seattle"), s("98052")], true);
        assert!(!(min <= other && other < max));

        let (min2, max2) = prefix_range(&[s("redmond"), s("98052")], 3).expect("valid prefix");
        assert!(min <= min2 && max2 < max);
        assert_eq!(min2.as_bytes().len(), 32);
        assert_eq!(max2.as_bytes().len(), 33);
    }

    #[test]
    fn prefix_errors() {
        assert_eq!(prefix_range(&[], 2), Err(PrefixError::Empty));
        assert_eq!(
            prefix_range(&[s("a"), s("b")], 2),
            Err(PrefixError::TooLong {
                len: 2,
                path_count: 2
            })
        );
        assert!(prefix_range(&[s("a"), s("b"), s("c")], 2).is_err());
        assert!(prefix_range(&[s("a")], 1).is_err());
        assert!(prefix_range(&[s("a")], 0).is_err());
        assert!(!PrefixError::Empty.to_string().is_empty());
        assert!(
            PrefixError::TooLong {
                len: 2,
                path_count: 2
            }
            .to_string()
            .contains('2')
        );
    }

    #[test]
    fn min_max_and_ordering() {
        assert_eq!(Epk::MIN, Epk::min());
        assert!(Epk::min().is_min() && Epk::max().is_max());
        assert_eq!(Epk::min().to_hex(), "");
        assert_eq!(Epk::max().to_hex(), "FF");
        // Byte order matches ordinal order of the uppercase hex strings.
        let mut keys = vec![
            Epk::max(),
            hex("3F"),
            hex("3FFF"),
            Epk::min(),
            hex("00"),
            hex("0A"),
            hex("A0"),
            hex("378CCD42FC556DDDE688B05DC178BB92FF"),
            hex("378CCD42FC556DDDE688B05DC178BB92"),
        ];
        let mut by_hex = keys.clone();
        keys.sort();
        by_hex.sort_by_key(Epk::to_hex);
        assert_eq!(keys, by_hex);
        assert_eq!(keys.first(), Some(&Epk::min()));
        assert_eq!(keys.last(), Some(&Epk::max()));
    }

    #[test]
    fn hex_round_trips() {
        for text in [
            "",
            "FF",
            "00",
            "32E9366E637A71B4E710384B2F4970A0",
            "2306FDF78C35ED4FD1C5835B075FC0B0248E1F58635558D12708326234F93A21",
        ] {
            let epk = hex(text);
            assert_eq!(epk.to_hex(), text);
            assert_eq!(epk.to_string(), text);
        }
        assert_eq!(hex("abCDef09"), Epk(vec![0xAB, 0xCD, 0xEF, 0x09]));
        assert_eq!(hex("abcdef").to_hex(), "ABCDEF");
        for bad in ["F", "FFF", "GG", "0x", " 0", "é0", "+1", "-1", "0é"] {
            assert_eq!(Epk::from_hex(bad), None, "{bad:?}");
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(Epk::from_hex(&Epk(all.clone()).to_hex()), Some(Epk(all)));
    }

    #[test]
    fn even_boundaries_split_the_space() {
        assert_eq!(even_boundaries(1), vec![(Epk::min(), Epk::max())]);
        assert_eq!(even_boundaries(0), vec![(Epk::min(), Epk::max())]);

        let four = even_boundaries(4);
        let hexes: Vec<(String, String)> =
            four.iter().map(|(a, b)| (a.to_hex(), b.to_hex())).collect();
        let b = |lead: &str| format!("{lead}{}", "0".repeat(30));
        assert_eq!(
            hexes,
            vec![
                (String::new(), b("10")),
                (b("10"), b("20")),
                (b("20"), b("30")),
                (b("30"), "FF".to_owned()),
            ]
        );

        for n in [2, 3, 7, 16, 100, 1000] {
            let ranges = even_boundaries(n);
            assert_eq!(ranges.len(), n);
            assert_eq!(ranges[0].0, Epk::min());
            assert_eq!(ranges[n - 1].1, Epk::max());
            for (i, (lo, hi)) in ranges.iter().enumerate() {
                assert!(lo < hi, "n={n} i={i}");
                if i > 0 {
                    assert_eq!(&ranges[i - 1].1, lo, "contiguous");
                    assert_eq!(lo.as_bytes().len(), 16);
                }
            }
        }
        // Every hash lands in exactly one range.
        let ranges = even_boundaries(7);
        for i in 0..200 {
            let epk = effective_partition_key(&[Number(f64::from(i))], false);
            let hits = ranges
                .iter()
                .filter(|(lo, hi)| *lo <= epk && epk < *hi)
                .count();
            assert_eq!(hits, 1);
        }
    }

    #[test]
    fn midpoints() {
        let zeros = |lead: &str| hex(&format!("{lead}{}", "0".repeat(32 - lead.len())));

        assert_eq!(midpoint(&Epk::min(), &Epk::max()), Some(zeros("20")));
        assert_eq!(midpoint(&Epk::min(), &zeros("20")), Some(zeros("10")));
        assert_eq!(midpoint(&zeros("20"), &Epk::max()), Some(zeros("30")));
        assert_eq!(midpoint(&zeros("10"), &zeros("30")), Some(zeros("20")));
        // Odd sums round down; carries propagate across bytes.
        assert_eq!(
            midpoint(
                &hex("000000000000000000000000000000FF"),
                &hex("00000000000000000000000000000200")
            ),
            Some(hex("0000000000000000000000000000017F"))
        );
        assert_eq!(
            midpoint(&hex("3FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFE"), &Epk::max()),
            Some(hex("3FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"))
        );

        // Nothing strictly between.
        let x = hex("22E342F38A486A088463DFF7838A5963");
        let x_next = hex("22E342F38A486A088463DFF7838A5964");
        assert_eq!(midpoint(&x, &x_next), None);
        assert_eq!(midpoint(&x, &x), None);
        assert_eq!(midpoint(&x_next, &x), None);
        assert_eq!(midpoint(&Epk::max(), &Epk::max()), None);
        assert_eq!(midpoint(&Epk::max(), &Epk::min()), None);
        assert_eq!(
            midpoint(&hex("3FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"), &Epk::max()),
            None
        );

        // Always strictly inside when found.
        let ranges = even_boundaries(13);
        for (lo, hi) in &ranges {
            let mid = midpoint(lo, hi).expect("wide range has a midpoint");
            assert!(*lo < mid && mid < *hi);
            assert_eq!(mid.as_bytes().len(), 16);
        }
    }

    #[test]
    fn midpoints_of_hierarchical_bounds() {
        // A prefix range differs only after the first 16 bytes: split inside the next chunk.
        let (min, max) = prefix_range(&[s("redmond")], 2).expect("valid prefix");
        let mid = midpoint(&min, &max).expect("prefix range can split");
        assert_eq!(
            mid.to_hex(),
            format!("{}20{}", min.to_hex(), "0".repeat(30))
        );
        assert!(min < mid && mid < max);

        // Bounds that already differ in the first 16 bytes split at 16-byte resolution.
        let a = effective_partition_key(&[s("a"), s("b")], true);
        let z = Epk::max();
        let mid = midpoint(&a, &z).expect("splits");
        assert_eq!(mid.as_bytes().len(), 16);
        assert!(a < mid && mid < z);

        // Full keys under one prefix.
        let k1 = effective_partition_key(&[s("redmond"), s("1")], true);
        let k2 = effective_partition_key(&[s("redmond"), s("2")], true);
        let (lo, hi) = if k1 < k2 { (k1, k2) } else { (k2, k1) };
        let mid = midpoint(&lo, &hi).expect("splits");
        assert!(lo < mid && mid < hi);
        assert_eq!(mid.as_bytes().len(), 32);
    }

    #[test]
    fn components_from_json() {
        use serde_json::json;
        assert_eq!(component_from_json(None), Ok(Undefined));
        assert_eq!(component_from_json(Some(&json!(null))), Ok(Null));
        assert_eq!(component_from_json(Some(&json!(true))), Ok(Bool(true)));
        assert_eq!(component_from_json(Some(&json!(5))), Ok(Number(5.0)));
        assert_eq!(component_from_json(Some(&json!(-2.5))), Ok(Number(-2.5)));
        assert_eq!(component_from_json(Some(&json!("x"))), Ok(s("x")));
        assert_eq!(
            component_from_json(Some(&json!({"a": 1}))),
            Err(ComponentError::Object)
        );
        assert_eq!(
            component_from_json(Some(&json!({}))),
            Err(ComponentError::Object)
        );
        assert_eq!(
            component_from_json(Some(&json!([1, 2]))),
            Err(ComponentError::Array)
        );
        assert_eq!(
            component_from_json(Some(&json!([]))),
            Err(ComponentError::Array)
        );
        assert!(!ComponentError::Object.to_string().is_empty());
        assert!(!ComponentError::Array.to_string().is_empty());

        // Large integers go through f64, matching the service's hash of the same document.
        let doc: serde_json::Value =
            serde_json::from_str(r#"{"pk": 9223372036854775807, "neg": -9223372036854775808}"#)
                .expect("valid json");
        let pk = component_from_json(doc.get("pk")).expect("number");
        assert_eq!(hash_hex(&[pk]), "2EDB959178DFCCA18983F89384D1629B");
        let neg = component_from_json(doc.get("neg")).expect("number");
        assert_eq!(hash_hex(&[neg]), "23D5C6395512BDFEAFADAD15328AD2BB");
        assert_eq!(component_from_json(doc.get("missing")), Ok(Undefined));
    }

    #[test]
    fn components_to_json() {
        use serde_json::json;
        assert_eq!(component_to_json(&Undefined), None);
        assert_eq!(component_to_json(&Null), Some(json!(null)));
        assert_eq!(component_to_json(&Bool(false)), Some(json!(false)));
        assert_eq!(component_to_json(&s("hi")), Some(json!("hi")));

        let int = |v: f64| component_to_json(&Number(v)).map(|j| j.is_i64());
        assert_eq!(component_to_json(&Number(5.0)), Some(json!(5)));
        assert_eq!(int(5.0), Some(true));
        assert_eq!(int(9_007_199_254_740_992.0), Some(true));
        assert_eq!(int(-9_007_199_254_740_992.0), Some(true));
        assert_eq!(int(18_014_398_509_481_984.0), Some(false));
        assert_eq!(int(0.5), Some(false));
        assert_eq!(int(-0.0), Some(false));
        assert_eq!(component_to_json(&Number(f64::NAN)), Some(json!(null)));
        assert_eq!(component_to_json(&Number(f64::INFINITY)), Some(json!(null)));

        // Round trips preserve the component and therefore the EPK (including -0.0).
        for c in [
            Undefined,
            Null,
            Bool(true),
            s(""),
            Number(0.0),
            Number(-0.0),
            Number(1e300),
            Number(f64::from_bits(1)),
            Number(5.123_124_190_509_124),
            Number(i64::MAX as f64),
        ] {
            let json = component_to_json(&c);
            let back = component_from_json(json.as_ref()).expect("round trip");
            assert_eq!(
                hash_v2(std::slice::from_ref(&back)),
                hash_v2(std::slice::from_ref(&c)),
                "{c:?}"
            );
            // And through text.
            if let Some(j) = json {
                let text = serde_json::to_string(&j).expect("serializes");
                let parsed: serde_json::Value = serde_json::from_str(&text).expect("parses");
                let back = component_from_json(Some(&parsed)).expect("round trip");
                assert_eq!(
                    hash_v2(&[back]),
                    hash_v2(std::slice::from_ref(&c)),
                    "{c:?} via {text}"
                );
            }
        }
    }
}
