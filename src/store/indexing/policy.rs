//! The policy document: the JSON shape of `indexingPolicy` as the user writes it (values
//! normalised to the service's lowercase spelling, members this store does not know kept
//! verbatim) and [`IndexingPolicy::normalized`], the defaults the service fills in.
//! Checking a document is [`super::validate`]'s; matching documents against it is
//! [`super::compiled`]'s.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::error::PolicyError;
use super::path::parse_policy_path;

/// The root path, which must be either included or excluded.
pub const ROOT_PATH: &str = "/*";
/// The path the service excludes by default.
pub const ETAG_PATH: &str = "/\"_etag\"/?";

/// How the index is maintained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IndexingMode {
    /// Updated synchronously with every write.
    #[default]
    Consistent,
    /// Legacy low-priority indexing; new containers cannot select it.
    Lazy,
    /// No index: the container is a key-value store.
    None,
}

impl IndexingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            IndexingMode::Consistent => "consistent",
            IndexingMode::Lazy => "lazy",
            IndexingMode::None => "none",
        }
    }

    /// The service treats mode names case-insensitively (`"Consistent"` is common).
    pub fn parse(value: &str) -> Result<IndexingMode, PolicyError> {
        if value.eq_ignore_ascii_case("consistent") {
            Ok(IndexingMode::Consistent)
        } else if value.eq_ignore_ascii_case("lazy") {
            Ok(IndexingMode::Lazy)
        } else if value.eq_ignore_ascii_case("none") {
            Ok(IndexingMode::None)
        } else {
            Err(PolicyError::InvalidIndexingMode {
                value: value.to_string(),
            })
        }
    }
}

impl Serialize for IndexingMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for IndexingMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = String::deserialize(d)?;
        IndexingMode::parse(&value).map_err(D::Error::custom)
    }
}

/// Sort order of one composite path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompositeOrder {
    #[default]
    Ascending,
    Descending,
}

impl CompositeOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            CompositeOrder::Ascending => "ascending",
            CompositeOrder::Descending => "descending",
        }
    }

    pub fn parse(value: &str) -> Result<CompositeOrder, PolicyError> {
        if value.eq_ignore_ascii_case("ascending") {
            Ok(CompositeOrder::Ascending)
        } else if value.eq_ignore_ascii_case("descending") {
            Ok(CompositeOrder::Descending)
        } else {
            Err(PolicyError::InvalidCompositeOrder {
                value: value.to_string(),
            })
        }
    }
}

impl Serialize for CompositeOrder {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CompositeOrder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = String::deserialize(d)?;
        CompositeOrder::parse(&value).map_err(D::Error::custom)
    }
}

/// `order` may be missing or `null`; both mean ascending.
fn order_or_default<'de, D: Deserializer<'de>>(d: D) -> Result<CompositeOrder, D::Error> {
    Ok(Option::<CompositeOrder>::deserialize(d)?.unwrap_or_default())
}

/// One entry of `includedPaths` / `excludedPaths`. Other members (such as the legacy
/// `indexes` array) are kept so the policy reads back as it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathSpec {
    pub path: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl PathSpec {
    pub fn new(path: impl Into<String>) -> PathSpec {
        PathSpec {
            path: path.into(),
            extra: Map::new(),
        }
    }
}

/// An entry of `includedPaths`.
pub type IncludedPath = PathSpec;
/// An entry of `excludedPaths`.
pub type ExcludedPath = PathSpec;

/// One property of a composite index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompositePath {
    pub path: String,
    #[serde(default, deserialize_with = "order_or_default")]
    pub order: CompositeOrder,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CompositePath {
    pub fn new(path: impl Into<String>, order: CompositeOrder) -> CompositePath {
        CompositePath {
            path: path.into(),
            order,
            extra: Map::new(),
        }
    }
}

/// The kind of a vector index (`vectorIndexes[].type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorIndexType {
    /// Exact (brute-force) search over vectors kept in the regular index.
    Flat,
    /// Exact search over quantized (compressed) vectors.
    QuantizedFlat,
    /// Approximate nearest-neighbour search on a DiskANN graph.
    DiskAnn,
}

/// Most dimensions a `flat` vector index takes (index-policy.md, "Vector indexes").
pub const FLAT_MAX_DIMENSIONS: u32 = 505;
/// Most dimensions a `quantizedFlat` or `diskANN` vector index takes.
pub const QUANTIZED_MAX_DIMENSIONS: u32 = 4096;

impl VectorIndexType {
    /// The service's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            VectorIndexType::Flat => "flat",
            VectorIndexType::QuantizedFlat => "quantizedFlat",
            VectorIndexType::DiskAnn => "diskANN",
        }
    }

    /// The documented examples spell the type both `diskANN` and `DiskANN`, so names
    /// compare without case.
    pub fn parse(value: &str) -> Result<VectorIndexType, PolicyError> {
        [
            VectorIndexType::Flat,
            VectorIndexType::QuantizedFlat,
            VectorIndexType::DiskAnn,
        ]
        .into_iter()
        .find(|t| t.as_str().eq_ignore_ascii_case(value))
        .ok_or_else(|| PolicyError::InvalidVectorIndexType {
            value: value.to_string(),
        })
    }

    /// The largest vector this index type accepts.
    pub fn max_dimensions(self) -> u32 {
        match self {
            VectorIndexType::Flat => FLAT_MAX_DIMENSIONS,
            VectorIndexType::QuantizedFlat | VectorIndexType::DiskAnn => QUANTIZED_MAX_DIMENSIONS,
        }
    }
}

impl fmt::Display for VectorIndexType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for VectorIndexType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for VectorIndexType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = String::deserialize(d)?;
        VectorIndexType::parse(&value).map_err(D::Error::custom)
    }
}

/// One entry of `vectorIndexes`: a vector path of the container's vector embedding policy
/// and how to index it. The documented tuning parameters are typed; other members are
/// kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorIndex {
    pub path: String,
    #[serde(rename = "type")]
    pub index_type: VectorIndexType,
    /// Bytes per quantized vector (quantizedFlat and diskANN); the service picks one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization_byte_size: Option<u32>,
    /// Candidates examined while building a DiskANN graph (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexing_search_list_size: Option<u32>,
    /// Sharded DiskANN: one DiskANN index per value of this property (one path, in an array).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_index_shard_key: Option<Vec<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl VectorIndex {
    pub fn new(path: impl Into<String>, index_type: VectorIndexType) -> VectorIndex {
        VectorIndex {
            path: path.into(),
            index_type,
            quantization_byte_size: None,
            indexing_search_list_size: None,
            vector_index_shard_key: None,
            extra: Map::new(),
        }
    }
}

/// One entry of `fullTextIndexes`: a path of the container's full-text policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FullTextIndex {
    pub path: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl FullTextIndex {
    pub fn new(path: impl Into<String>) -> FullTextIndex {
        FullTextIndex {
            path: path.into(),
            extra: Map::new(),
        }
    }
}

/// A container's indexing policy, in the service's JSON shape.
///
/// Deserialisation keeps what the user gave; [`IndexingPolicy::normalized`] applies the
/// defaults the service fills in. Spatial indexes are carried as raw JSON and not
/// interpreted; vector and full-text indexes are typed (empty lists are not written, like
/// `compositeIndexes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "RawIndexingPolicy")]
pub struct IndexingPolicy {
    pub indexing_mode: IndexingMode,
    pub automatic: bool,
    pub included_paths: Vec<IncludedPath>,
    pub excluded_paths: Vec<ExcludedPath>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub composite_indexes: Vec<Vec<CompositePath>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spatial_indexes: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vector_indexes: Vec<VectorIndex>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub full_text_indexes: Vec<FullTextIndex>,
    /// Members this module does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The wire form, where everything may be missing or `null`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawIndexingPolicy {
    #[serde(default)]
    indexing_mode: Option<IndexingMode>,
    #[serde(default)]
    automatic: Option<bool>,
    #[serde(default)]
    included_paths: Option<Vec<IncludedPath>>,
    #[serde(default)]
    excluded_paths: Option<Vec<ExcludedPath>>,
    #[serde(default)]
    composite_indexes: Option<Vec<Vec<CompositePath>>>,
    #[serde(default)]
    spatial_indexes: Option<Value>,
    #[serde(default)]
    vector_indexes: Option<Vec<VectorIndex>>,
    #[serde(default)]
    full_text_indexes: Option<Vec<FullTextIndex>>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl From<RawIndexingPolicy> for IndexingPolicy {
    fn from(raw: RawIndexingPolicy) -> IndexingPolicy {
        let indexing_mode = raw.indexing_mode.unwrap_or_default();
        IndexingPolicy {
            indexing_mode,
            // `{"indexingMode": "none"}` alone is the documented way to turn indexing off,
            // so a missing `automatic` follows the mode instead of always being true.
            automatic: raw.automatic.unwrap_or(indexing_mode != IndexingMode::None),
            included_paths: raw.included_paths.unwrap_or_default(),
            excluded_paths: raw.excluded_paths.unwrap_or_default(),
            composite_indexes: raw.composite_indexes.unwrap_or_default(),
            spatial_indexes: raw.spatial_indexes,
            vector_indexes: raw.vector_indexes.unwrap_or_default(),
            full_text_indexes: raw.full_text_indexes.unwrap_or_default(),
            extra: raw.extra,
        }
    }
}

impl Default for IndexingPolicy {
    /// The service default: consistent, automatic, everything but `_etag` indexed.
    fn default() -> IndexingPolicy {
        IndexingPolicy {
            indexing_mode: IndexingMode::Consistent,
            automatic: true,
            included_paths: vec![PathSpec::new(ROOT_PATH)],
            excluded_paths: vec![PathSpec::new(ETAG_PATH)],
            composite_indexes: Vec::new(),
            spatial_indexes: None,
            vector_indexes: Vec::new(),
            full_text_indexes: Vec::new(),
            extra: Map::new(),
        }
    }
}

impl IndexingPolicy {
    /// Indexing turned off: `{"indexingMode": "none", "automatic": false}`.
    pub fn none() -> IndexingPolicy {
        IndexingPolicy {
            indexing_mode: IndexingMode::None,
            automatic: false,
            included_paths: Vec::new(),
            excluded_paths: Vec::new(),
            ..IndexingPolicy::default()
        }
    }

    /// Whether the container keeps an index at all (TTL requires one).
    pub fn is_indexing_enabled(&self) -> bool {
        self.indexing_mode != IndexingMode::None
    }

    /// The policy as the service stores it: a consistent policy without paths gets the
    /// default ones, and `/"_etag"/?` is excluded unless the policy mentions `_etag`.
    pub fn normalized(&self) -> IndexingPolicy {
        let mut policy = self.clone();
        if policy.indexing_mode == IndexingMode::None {
            return policy;
        }
        if policy.included_paths.is_empty() && policy.excluded_paths.is_empty() {
            policy.included_paths.push(PathSpec::new(ROOT_PATH));
        }
        let mentions_etag = policy
            .included_paths
            .iter()
            .chain(&policy.excluded_paths)
            .any(|spec| parse_policy_path(&spec.path).is_ok_and(|p| p.is_etag()));
        if !mentions_etag {
            policy.excluded_paths.push(PathSpec::new(ETAG_PATH));
        }
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::indexing::test_support::{err, from_json, policy};
    use serde_json::json;

    #[test]
    fn default_serializes_to_the_service_default() {
        let value = serde_json::to_value(IndexingPolicy::default()).unwrap();
        let expected = json!({
            "indexingMode": "consistent",
            "automatic": true,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/\"_etag\"/?"}]
        });
        assert_eq!(value, expected);
        assert_eq!(
            serde_json::to_string(&IndexingPolicy::default()).unwrap(),
            r#"{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}"#
        );
        let back: IndexingPolicy = serde_json::from_value(expected).unwrap();
        assert_eq!(back, IndexingPolicy::default());
        assert!(back.validate().is_ok());
    }

    #[test]
    fn parses_user_json_with_composite_indexes_and_keeps_the_rest() {
        let input = json!({
            "automatic": true,
            "indexingMode": "Consistent",
            "includedPaths": [{"path": "/*", "indexes": [{"kind": "Range", "dataType": "Number"}]}],
            "excludedPaths": [],
            "compositeIndexes": [
                [{"path": "/familyname", "order": "ascending"}, {"path": "/children/[]/age", "order": "Descending"}],
                [{"path": "/name"}, {"path": "/age", "order": null}]
            ],
            "spatialIndexes": [{"path": "/location/*", "types": ["Point"]}],
            "vectorIndexes": [{"path": "/vector", "type": "diskANN"}],
            "fullTextIndexes": [{"path": "/text"}],
            "somethingNew": {"x": 1}
        });
        let policy = from_json(input);
        assert_eq!(policy.indexing_mode, IndexingMode::Consistent);
        assert_eq!(policy.composite_indexes.len(), 2);
        assert_eq!(
            policy.composite_indexes[0][1].order,
            CompositeOrder::Descending
        );
        assert_eq!(
            policy.composite_indexes[1][0].order,
            CompositeOrder::Ascending
        );
        assert_eq!(
            policy.composite_indexes[1][1].order,
            CompositeOrder::Ascending
        );
        assert!(policy.validate().is_ok());

        let out = serde_json::to_value(&policy).unwrap();
        assert_eq!(out["indexingMode"], "consistent");
        assert_eq!(out["compositeIndexes"][0][1]["order"], "descending");
        assert_eq!(
            out["compositeIndexes"][1][0],
            json!({"path": "/name", "order": "ascending"})
        );
        assert_eq!(out["includedPaths"][0]["indexes"][0]["kind"], "Range");
        assert_eq!(out["spatialIndexes"][0]["types"][0], "Point");
        assert_eq!(out["vectorIndexes"][0]["type"], "diskANN");
        assert_eq!(out["fullTextIndexes"][0]["path"], "/text");
        assert_eq!(out["somethingNew"], json!({"x": 1}));
        let keys: Vec<&str> = out
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            &keys[..4],
            [
                "indexingMode",
                "automatic",
                "includedPaths",
                "excludedPaths"
            ]
        );
    }

    #[test]
    fn mode_none_alone_means_not_automatic() {
        let policy = from_json(json!({"indexingMode": "none"}));
        assert_eq!(policy, IndexingPolicy::none());
        assert!(!policy.automatic);
        assert!(policy.validate().is_ok());
        assert_eq!(
            serde_json::to_value(&policy).unwrap(),
            json!({"indexingMode": "none", "automatic": false, "includedPaths": [], "excludedPaths": []})
        );
    }

    #[test]
    fn empty_object_and_nulls_take_defaults() {
        let policy = from_json(json!({"includedPaths": null, "automatic": null}));
        assert_eq!(policy.indexing_mode, IndexingMode::Consistent);
        assert!(policy.automatic);
        assert!(policy.included_paths.is_empty());
        assert!(
            policy.validate().is_ok(),
            "the service fills in default paths"
        );
        assert_eq!(policy.normalized(), IndexingPolicy::default());
    }

    #[test]
    fn rejects_unknown_mode_and_order_while_parsing() {
        let e =
            serde_json::from_value::<IndexingPolicy>(json!({"indexingMode": "fast"})).unwrap_err();
        assert!(
            e.to_string()
                .contains("The indexing mode 'fast' is invalid"),
            "{e}"
        );
        let e = serde_json::from_value::<IndexingPolicy>(json!({
            "compositeIndexes": [[{"path": "/a", "order": "up"}, {"path": "/b"}]]
        }))
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("The composite order 'up' is invalid"),
            "{e}"
        );
    }

    #[test]
    fn lazy_is_read_but_not_accepted_for_new_containers() {
        let policy = from_json(json!({"indexingMode": "LAZY"}));
        assert_eq!(policy.indexing_mode, IndexingMode::Lazy);
        assert_eq!(
            serde_json::to_value(policy.indexing_mode).unwrap(),
            json!("lazy")
        );
        assert_eq!(err(&policy), PolicyError::LazyIndexing);
    }

    #[test]
    fn normalized_adds_the_etag_exclusion_unless_mentioned() {
        let p1 = policy(&["/*"], &["/big/*"]).normalized();
        assert_eq!(
            p1.excluded_paths
                .iter()
                .map(|s| s.path.as_str())
                .collect::<Vec<_>>(),
            ["/big/*", ETAG_PATH]
        );
        let p2 = policy(&["/*", "/_etag/?"], &[]).normalized();
        assert!(p2.excluded_paths.is_empty());
        assert_eq!(IndexingPolicy::none().normalized(), IndexingPolicy::none());
    }
}
