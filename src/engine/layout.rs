//! Partition layouts of keys a container does not have: what the partition-key advisor and
//! the workbench's projection ask of the store's rules without a container to apply them to.
//!
//! Each function is the store's own rule applied to figures the caller gives: the V2 EPK of
//! an item's key under any key definition ([`item_key`]), the ranges a new container gets
//! for a throughput and the storage splits its data then causes ([`Layout`], the same
//! initial layout and byte-median split point as `store::write`), the ranges a container
//! would have with more data and throughput ([`projected_range_count`]), and which key
//! values a query's filter binds under a hypothetical key ([`bound_keys`], the query
//! planner's routing on a container with that key).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::views::PartitionKeyRange;
use crate::error::{Error, Result};
use crate::query::eval::value::Val;
use crate::query::run::routing::{self, Targets};
use crate::store::catalog::{ContainerDef, Throughput};
use crate::store::epk::Epk;
use crate::store::keys::RangeId;
use crate::store::partition_key::PartitionKeyDefinition;
use crate::store::ranges::{self, PkRange};

/// An item's partition key under some key definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemKey {
    /// The effective partition key (V2 hash, one 16-byte hash per level).
    pub epk: Vec<u8>,
    /// The value in wire form: one element per level, `{}` for an undefined level.
    pub value: Value,
}

/// The key of `doc` under `def`, hashed as a container with that key hashes it (400 when a
/// level holds an object or array, or the value is over 2 KB, as the service refuses it).
pub fn item_key(def: &PartitionKeyDefinition, doc: &Map<String, Value>) -> Result<ItemKey> {
    let v = def.extract(doc)?;
    Ok(ItemKey {
        epk: v.epk(def).0,
        value: v.to_json(),
    })
}

/// The value at a `/a/b` path of a document, as the store reads a partition key path.
pub use crate::store::partition_key::lookup as value_at;

/// The top-level property a path starts in, as [`value_at`] reads it.
pub use crate::store::partition_key::first_member;

/// Some top-level members of an item's JSON, parsed; the rest skipped unbuilt.
pub use crate::store::item::parse_members;

/// A number every client computes from a string alike: the first 8 bytes of its V2 hash
/// (the hash of a one-path key with that value). Synthetic keys bucket items by it.
pub fn id_hash(s: &str) -> u64 {
    let e = crate::store::epk::effective_partition_key(
        &[crate::store::epk::PkComponent::String(s.to_string())],
        false,
    );
    crate::store::epk::lead(e.as_bytes())
}

/// The EPK of a key value in request form (a bare value for a one-path key, an array per
/// level otherwise).
pub fn value_epk(def: &PartitionKeyDefinition, value: &Value) -> Result<Vec<u8>> {
    Ok(def.parse_request_value(value)?.epk(def).0)
}

/// A container's physical partitions as a table of EPK ranges, built by the store's rules.
#[derive(Debug, Clone)]
pub struct Layout {
    ranges: Vec<PkRange>,
    next_id: RangeId,
}

impl Layout {
    /// The ranges a new container with `throughput` starts with (the service's starting
    /// RU/s per range, evenly dividing the hash space).
    pub fn for_throughput(throughput: Throughput) -> Layout {
        let ranges = ranges::initial_layout(throughput.initial_range_count());
        Layout {
            next_id: ranges.len() as RangeId,
            ranges,
        }
    }

    /// Splits every range holding more than `max_bytes` at the byte median of its logical
    /// partitions, until each fits or holds a single logical partition: what the store does
    /// when one commit writes `partitions` ((EPK, bytes) per logical partition, in EPK
    /// order) into this layout, as a bulk import of that data in one batch does. Range ids
    /// follow the store's numbering (two new ids per split, children pushed and split
    /// depth-first, right child first).
    pub fn split_for_storage(&mut self, partitions: &[(Vec<u8>, u64)], max_bytes: u64) {
        let mut queue: Vec<RangeId> = self.ranges.iter().map(|r| r.id).collect();
        while let Some(id) = queue.pop() {
            let Some(range) = self.ranges.iter().find(|r| r.id == id).cloned() else {
                continue;
            };
            let inside = partitions_in(partitions, &range);
            let bytes: u64 = inside.iter().map(|(_, b)| b).sum();
            if bytes <= max_bytes {
                continue;
            }
            let Some(at) = ranges::storage_split_point(&inside) else {
                continue;
            };
            let (left, right) = ranges::split(&range, at, self.next_id, self.next_id + 1);
            self.next_id += 2;
            queue.push(left.id);
            queue.push(right.id);
            if let Some(pos) = self.ranges.iter().position(|r| r.id == id) {
                self.ranges.splice(pos..=pos, [left, right]);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The index (in EPK order) of the range that owns `epk`.
    pub fn owner(&self, epk: &[u8]) -> Option<usize> {
        let i = self
            .ranges
            .partition_point(|r| r.min_inclusive.as_bytes() <= epk);
        let i = i.checked_sub(1)?;
        self.ranges[i].contains(epk).then_some(i)
    }

    /// The ranges as the service lists them.
    pub fn ranges(&self) -> Vec<PartitionKeyRange> {
        self.ranges.iter().map(PartitionKeyRange::new).collect()
    }

    /// Each range's share of the hash space, in EPK order.
    pub fn widths(&self) -> Vec<f64> {
        self.ranges.iter().map(PkRange::width).collect()
    }
}

/// The (EPK, bytes) entries of `partitions` (sorted by EPK) that `range` owns.
fn partitions_in(partitions: &[(Vec<u8>, u64)], range: &PkRange) -> Vec<(Epk, u64)> {
    let start = partitions.partition_point(|(e, _)| e.as_slice() < range.min_inclusive.as_bytes());
    partitions[start..]
        .iter()
        .take_while(|(e, _)| range.contains(e))
        .map(|(e, b)| (Epk(e.clone()), *b))
        .collect()
}

/// Ranges past which a projection stops splitting (a container of a million ranges is far
/// past anything the service provisions; the figure only bounds the loop).
const MAX_PROJECTED_RANGES: usize = 1 << 20;

/// RU/s `n` times `throughput`, at most the service's 1,000,000 RU/s per container (its
/// default maximum; more takes a support request, which a projection does not assume).
pub fn projected_throughput(throughput: Throughput, n: f64) -> u64 {
    ((throughput.max_ru() as f64 * n).ceil() as u64).min(crate::store::catalog::MAX_THROUGHPUT)
}

/// The physical partitions a container whose ranges are `ranges` ((share of the hash space,
/// bytes) each) would have with `n` times its data and its throughput raised to
/// [`projected_throughput`]: first the throughput splits (the widest range at its midpoint until
/// there are `ceil(RU/s / 10,000)`, as raising throughput does), then the storage splits (a
/// range over `max_partition_bytes` in two, until each fits). Data is assumed to grow evenly
/// within each range (more logical partitions of today's shape, hashed uniformly), so a
/// split halves its range's bytes; a single logical partition too large for a range is the
/// caller's to report, as no split can help it.
pub fn projected_range_count(
    ranges: &[(f64, u64)],
    throughput: Throughput,
    n: f64,
    max_partition_bytes: u64,
) -> usize {
    let mut table: Vec<(f64, f64)> = ranges.iter().map(|(w, b)| (*w, *b as f64 * n)).collect();
    if table.is_empty() {
        table.push((1.0, 0.0));
    }
    let ru = projected_throughput(throughput, n);
    let target = ranges::required_for_throughput(ru).min(MAX_PROJECTED_RANGES);
    while table.len() < target {
        // The widest range; the first of equals, as the store picks the lowest id.
        let Some(i) =
            (0..table.len()).max_by(|&a, &b| table[a].0.total_cmp(&table[b].0).then(b.cmp(&a)))
        else {
            break;
        };
        let (w, b) = table[i];
        table.splice(i..=i, [(w / 2.0, b / 2.0), (w / 2.0, b / 2.0)]);
    }
    let max = max_partition_bytes.max(1) as f64;
    let mut count = 0usize;
    for (_, bytes) in table {
        // A range of b bytes ends as 2^k ranges with b / 2^k <= max.
        let mut pieces = 1usize;
        let mut b = bytes;
        while b > max && count + pieces < MAX_PROJECTED_RANGES {
            pieces *= 2;
            b /= 2.0;
        }
        count += pieces;
    }
    count.min(MAX_PROJECTED_RANGES)
}

/// The key values the filter of `sql` binds for a key of `paths` (in wire form: an array
/// per value), as the query planner routes it on a container with that key: `Some` when
/// every alternative of the filter pins every level by equality or IN (a single-partition
/// or targeted query), `None` when some level is left free (a fan-out, or a hierarchical
/// prefix). A syntax error is a 400 with line and column; a parameter the query names but
/// `params` lacks is a 400.
pub fn bound_keys(
    sql: &str,
    params: &HashMap<String, Value>,
    paths: &[String],
) -> Result<Option<Vec<Value>>> {
    let q = crate::query::syntax::parser::parse(sql)?;
    crate::query::syntax::check::check(&q)?;
    let def = hypothetical_container(PartitionKeyDefinition::new(paths.to_vec())?);
    let params: HashMap<String, Val> = params
        .iter()
        .map(|(k, v)| (k.clone(), Val::from_json(v)))
        .collect();
    let routing = routing::route(&q, &def, &params, None)?;
    Ok(match routing.targets {
        Targets::Keys(keys) => Some(keys.iter().map(|k| k.to_json()).collect()),
        Targets::Ranges(_) | Targets::All => None,
    })
}

/// A container definition with key `partition_key` and one range, for the planner to route
/// on: routing reads only the key definition and the range table.
fn hypothetical_container(partition_key: PartitionKeyDefinition) -> ContainerDef {
    ContainerDef {
        id: "hypothetical".into(),
        database: "advisor".into(),
        rid: 0,
        db_rid: 0,
        ts: 0,
        partition_key,
        throughput: Throughput::Manual(400),
        max_partition_bytes: crate::store::catalog::DEFAULT_MAX_PARTITION_BYTES,
        max_logical_partition_bytes: crate::store::catalog::DEFAULT_MAX_LOGICAL_PARTITION_BYTES,
        default_ttl: None,
        unique_key_policy: Default::default(),
        indexing_policy: Default::default(),
        enforce_throughput: false,
        feed_previous_images: false,
        next_range_id: 1,
        ranges: ranges::initial_layout(1),
        retired_ranges: Vec::new(),
        index_generation: 0,
        index_string_bytes: crate::store::index::STRING_BYTES,
        index_build: None,
        retired_index_generations: Vec::new(),
        vector_embedding_policy: None,
        full_text_policy: None,
        range_name_cache: Default::default(),
    }
}

/// 400 for a key path list the service would refuse (for messages that name the candidate).
pub fn key_definition(paths: Vec<String>) -> Result<PartitionKeyDefinition> {
    PartitionKeyDefinition::new(paths).map_err(|e| Error::bad_request(e.message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(paths: &[&str]) -> PartitionKeyDefinition {
        PartitionKeyDefinition::new(paths.iter().map(|p| p.to_string()).collect()).unwrap()
    }

    #[test]
    fn item_keys_hash_like_the_published_vectors() {
        let doc = json!({"id": "1", "pk": "redmond", "zip": "98052"});
        let k = item_key(&def(&["/pk"]), doc.as_object().unwrap()).unwrap();
        assert_eq!(Epk(k.epk).to_hex(), "22E342F38A486A088463DFF7838A5963");
        assert_eq!(k.value, json!(["redmond"]));
        let h = item_key(&def(&["/pk", "/zip"]), doc.as_object().unwrap()).unwrap();
        assert_eq!(
            Epk(h.epk).to_hex(),
            "22E342F38A486A088463DFF7838A596336C8BBEC5EEB4676558994E4D8DF79A7"
        );
    }

    #[test]
    fn storage_splits_halve_by_bytes() {
        let mut layout = Layout::for_throughput(Throughput::Manual(400));
        let parts: Vec<(Vec<u8>, u64)> = (0u8..8).map(|i| (vec![i * 8, 1], 100)).collect();
        layout.split_for_storage(&parts, 250);
        // 800 bytes over 250 per range: 400 | 400, then 200 each.
        assert_eq!(layout.len(), 4);
        assert_eq!(layout.owner(&[0, 1]), Some(0));
        assert_eq!(layout.owner(&[56, 1]), Some(3));
    }

    #[test]
    fn projections_follow_throughput_then_storage() {
        let one = [(1.0, 10u64)];
        assert_eq!(
            projected_range_count(&one, Throughput::Manual(400), 1.0, 100),
            1
        );
        // 400 RU/s × 100 = 40,000: four ranges.
        assert_eq!(
            projected_range_count(&one, Throughput::Manual(400), 100.0, 1 << 40),
            4
        );
        // 10 bytes × 100 over 300 per range: 1000 → 4 pieces of 250.
        assert_eq!(
            projected_range_count(&one, Throughput::Manual(400), 100.0, 300),
            4
        );
        // 3 → 5 ranges for 45,000 RU/s: two parents split.
        let three = [(1.0 / 3.0, 0u64), (1.0 / 3.0, 0), (1.0 / 3.0, 0)];
        assert_eq!(
            projected_range_count(&three, Throughput::Manual(15_000), 3.0, 1 << 40),
            5
        );
    }

    #[test]
    fn bound_keys_follow_the_planner() {
        let p = HashMap::from([("u".to_string(), json!("a"))]);
        let paths = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let sql = "SELECT * FROM c WHERE c.userId = @u AND c.type = 'post'";
        assert_eq!(
            bound_keys(sql, &p, &paths(&["/userId"])).unwrap(),
            Some(vec![json!(["a"])])
        );
        assert_eq!(bound_keys(sql, &p, &paths(&["/postId"])).unwrap(), None);
        assert_eq!(
            bound_keys(sql, &p, &paths(&["/userId", "/type"])).unwrap(),
            Some(vec![json!(["a", "post"])])
        );
        assert_eq!(
            bound_keys(sql, &p, &paths(&["/type", "/userId", "/id"])).unwrap(),
            None
        );
    }
}
