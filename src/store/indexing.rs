//! A container's indexing policy, as Azure Cosmos DB for NoSQL defines it.
//!
//! This module owns the policy's JSON shape (stored as the user gave it, with values
//! normalised to the service's lowercase spelling), its validation with messages modelled
//! on the service's 400 responses, the path grammar (`/a/b/?`, `/a/*`, `/a/[]/b/?`,
//! `/"quoted-name"/?`, tuple paths `/a/[]/{b, c}/?`), and the include/exclude precedence
//! rule that decides whether one scalar of a document is indexed. The write-cost model
//! uses [`CompiledPolicy::count_indexed_terms`] ("writes grow with the number of indexed
//! terms").
//!
//! Precedence, as documented: when included and excluded paths both match a value, the
//! more precise path wins; a deeper path is more precise than a shallower one, and at
//! the same depth `/?` is more precise than `/*`. Where the documentation is silent this
//! module decides (and the tests pin it down):
//! - between two paths of the same depth and terminal, the one with a concrete segment
//!   (a name or an array position) where the other has `[]` wins, comparing from the root;
//! - on a complete tie the excluded path wins, so an ambiguous policy indexes less;
//! - a name made only of digits (`/a/0/?`) also addresses that array position, since the
//!   documented property-path form of an array element is `/locations/0/country`;
//!   quoting never changes meaning ("functionally it makes no difference");
//! - `/` is accepted as a spelling of the root path `/*` (the service names the root `/`).
//!
//! `vectorIndexes` and `fullTextIndexes` are parsed into [`VectorIndex`] and
//! [`FullTextIndex`]; their own shape is checked here, and whether their paths are in the
//! container's vector embedding and full-text policies is checked by
//! [`super::search_policy::validate_search_indexes`], which knows the container.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Service limit on explicitly included paths per container.
pub const MAX_INCLUDED_PATHS: usize = 1500;
/// Service limit on explicitly excluded paths per container.
pub const MAX_EXCLUDED_PATHS: usize = 1500;
/// Service limit on composite indexes per container.
pub const MAX_COMPOSITE_INDEXES: usize = 100;
/// Service limit on properties in one composite index.
pub const MAX_COMPOSITE_PATHS: usize = 8;
/// A composite index orders by two or more properties; one would be a range index.
pub const MIN_COMPOSITE_PATHS: usize = 2;
/// The root path, which must be either included or excluded.
pub const ROOT_PATH: &str = "/*";
/// The path the service excludes by default.
pub const ETAG_PATH: &str = "/\"_etag\"/?";

/// Top-level system properties the service indexes whatever the paths say.
const ALWAYS_INDEXED: [&str; 2] = ["id", "_ts"];

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Which list of the policy a path came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathList {
    Included,
    Excluded,
}

impl fmt::Display for PathList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathList::Included => "includedPaths",
            PathList::Excluded => "excludedPaths",
        })
    }
}

/// Why a policy (or one of its paths) is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "The indexing path '{path}' could not be accepted, failed near position '{position}': \
         expected {expected}. Please ensure that the path is a valid path. Common errors include \
         invalid characters or absence of quotes around labels."
    )]
    InvalidPath {
        path: String,
        position: usize,
        expected: &'static str,
    },

    #[error(
        "The composite index path '{path}' could not be accepted: a composite path names a \
         property and has no trailing '/?' or '/*' (for example '/name')."
    )]
    CompositePathTerminal { path: String },

    #[error(
        "The indexing path '{path}' could not be accepted in excludedPaths: tuple paths \
         ('/prefix/[]/{{a, b}}/?') are only allowed in includedPaths."
    )]
    TupleNotIncluded { path: String },

    #[error("The indexing mode '{value}' is invalid. Choose between 'consistent' and 'none'.")]
    InvalidIndexingMode { value: String },

    #[error(
        "The indexing mode 'lazy' cannot be selected for new containers. Use 'consistent', or \
         'none' for a container used only as a key-value store."
    )]
    LazyIndexing,

    #[error(
        "Indexing mode value cannot be 'none' when automatic indexing is specified as 'true'. \
         Set 'automatic' to false or leave it out."
    )]
    AutomaticWithNoneMode,

    #[error(
        "{list} must be empty when the indexing mode is 'none'. Remove the paths, or use \
         indexing mode 'consistent'."
    )]
    PathsWithNoneMode { list: PathList },

    #[error(
        "The special mandatory indexing path \"/\" is not provided in any of the path type sets. \
         Add '/*' to includedPaths (index everything, then exclude paths) or to excludedPaths \
         (index nothing, then include paths)."
    )]
    MissingRootPath,

    #[error(
        "The indexing path '{path}' is specified more than once (in {first} and in {second}). \
         List each path once, in either includedPaths or excludedPaths."
    )]
    DuplicatePath {
        path: String,
        first: PathList,
        second: PathList,
    },

    #[error("{list} has {count} paths; a container allows at most {max}.")]
    TooManyPaths {
        list: PathList,
        count: usize,
        max: usize,
    },

    #[error("compositeIndexes has {count} composite indexes; a container allows at most {max}.")]
    TooManyCompositeIndexes { count: usize, max: usize },

    #[error(
        "The composite index at 'indexingPolicy.compositeIndexes[{index}]' has {count} path(s); \
         it must have at least 2 paths."
    )]
    CompositeTooFewPaths { index: usize, count: usize },

    #[error(
        "The composite index at 'indexingPolicy.compositeIndexes[{index}]' has {count} paths; \
         it can have at most {max}."
    )]
    CompositeTooManyPaths {
        index: usize,
        count: usize,
        max: usize,
    },

    #[error(
        "The following path '{path}' was specified more than once in \
         'compositeIndexes[{index}][{position}]'. Remove the duplicated field."
    )]
    DuplicateCompositePath {
        path: String,
        index: usize,
        position: usize,
    },

    #[error(
        "The composite order '{value}' is invalid. Choose between 'ascending' and 'descending'."
    )]
    InvalidCompositeOrder { value: String },

    #[error(
        "{list} must be empty when the indexing mode is 'none': these indexes live in the \
         container's index. Remove them, or use indexing mode 'consistent'."
    )]
    SearchIndexesWithNoneMode { list: SearchIndexList },

    #[error("The {list} path '{path}' could not be accepted: {reason}")]
    InvalidSearchIndexPath {
        list: SearchIndexList,
        path: String,
        reason: String,
    },

    #[error(
        "The path '{path}' is specified more than once in {list}. A path can have only one \
         such index; remove the duplicate."
    )]
    DuplicateSearchIndexPath { list: SearchIndexList, path: String },

    #[error("The vector index on '{path}' has an invalid '{parameter}': {reason}")]
    InvalidVectorIndexParameter {
        path: String,
        parameter: &'static str,
        reason: String,
    },

    #[error(
        "The vector index type '{value}' is invalid. Choose between 'flat', 'quantizedFlat' \
         and 'diskANN'."
    )]
    InvalidVectorIndexType { value: String },
}

/// Which search index list of the policy a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchIndexList {
    Vector,
    FullText,
}

impl fmt::Display for SearchIndexList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SearchIndexList::Vector => "vectorIndexes",
            SearchIndexList::FullText => "fullTextIndexes",
        })
    }
}

// ---------------------------------------------------------------------------------------
// The policy document
// ---------------------------------------------------------------------------------------

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
/// Documented range of `quantizationByteSize` (quantizedFlat and diskANN).
pub const QUANTIZATION_BYTE_SIZE: std::ops::RangeInclusive<u32> = 1..=512;
/// Documented range of `indexingSearchListSize` (diskANN only).
pub const INDEXING_SEARCH_LIST_SIZE: std::ops::RangeInclusive<u32> = 10..=500;

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

    /// The tuning parameters' documented ranges, and the index types they apply to.
    fn validate_parameters(&self) -> Result<(), PolicyError> {
        let fail = |parameter: &'static str, reason: String| {
            Err(PolicyError::InvalidVectorIndexParameter {
                path: self.path.clone(),
                parameter,
                reason,
            })
        };
        if let Some(n) = self.quantization_byte_size {
            if self.index_type == VectorIndexType::Flat {
                return fail(
                    "quantizationByteSize",
                    "it applies to 'quantizedFlat' and 'diskANN' indexes only".into(),
                );
            }
            if !QUANTIZATION_BYTE_SIZE.contains(&n) {
                return fail(
                    "quantizationByteSize",
                    format!(
                        "{n} is outside {}..={}",
                        QUANTIZATION_BYTE_SIZE.start(),
                        QUANTIZATION_BYTE_SIZE.end()
                    ),
                );
            }
        }
        if let Some(n) = self.indexing_search_list_size {
            if self.index_type != VectorIndexType::DiskAnn {
                return fail(
                    "indexingSearchListSize",
                    "it applies to 'diskANN' indexes only".into(),
                );
            }
            if !INDEXING_SEARCH_LIST_SIZE.contains(&n) {
                return fail(
                    "indexingSearchListSize",
                    format!(
                        "{n} is outside {}..={}",
                        INDEXING_SEARCH_LIST_SIZE.start(),
                        INDEXING_SEARCH_LIST_SIZE.end()
                    ),
                );
            }
        }
        if let Some(keys) = &self.vector_index_shard_key {
            if self.index_type != VectorIndexType::DiskAnn {
                return fail(
                    "vectorIndexShardKey",
                    "sharding applies to 'diskANN' indexes only".into(),
                );
            }
            // Documented as "the single string needs to be enclosed in an array".
            match keys.as_slice() {
                [key] if key.starts_with('/') && key.len() > 1 => {}
                _ => {
                    return fail(
                        "vectorIndexShardKey",
                        "give one property path in an array, for example [\"/tenantId\"]".into(),
                    );
                }
            }
        }
        Ok(())
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

    /// Checks the policy the way the service does on container create/replace and
    /// reports the first problem.
    pub fn validate(&self) -> Result<(), PolicyError> {
        match self.indexing_mode {
            IndexingMode::Lazy => return Err(PolicyError::LazyIndexing),
            IndexingMode::None => {
                if self.automatic {
                    return Err(PolicyError::AutomaticWithNoneMode);
                }
                if !self.included_paths.is_empty() {
                    return Err(PolicyError::PathsWithNoneMode {
                        list: PathList::Included,
                    });
                }
                if !self.excluded_paths.is_empty() {
                    return Err(PolicyError::PathsWithNoneMode {
                        list: PathList::Excluded,
                    });
                }
            }
            IndexingMode::Consistent => {}
        }

        for (list, paths, max) in [
            (PathList::Included, &self.included_paths, MAX_INCLUDED_PATHS),
            (PathList::Excluded, &self.excluded_paths, MAX_EXCLUDED_PATHS),
        ] {
            if paths.len() > max {
                return Err(PolicyError::TooManyPaths {
                    list,
                    count: paths.len(),
                    max,
                });
            }
        }

        // Parse every path, then compare parsed forms so `/a/?` and `/"a"/?` collide.
        let mut seen: HashMap<PolicyPath, PathList> = HashMap::new();
        let mut root_seen = false;
        for (list, paths) in [
            (PathList::Included, &self.included_paths),
            (PathList::Excluded, &self.excluded_paths),
        ] {
            for spec in paths {
                let parsed = parse_policy_path(&spec.path)?;
                if list == PathList::Excluded && parsed.is_tuple() {
                    return Err(PolicyError::TupleNotIncluded {
                        path: spec.path.clone(),
                    });
                }
                root_seen |= parsed.is_root();
                if let Some(first) = seen.insert(parsed, list) {
                    return Err(PolicyError::DuplicatePath {
                        path: spec.path.clone(),
                        first,
                        second: list,
                    });
                }
            }
        }
        // With both lists empty the service fills in the default paths, so only a policy
        // that lists paths has to place the root itself.
        if !seen.is_empty() && !root_seen {
            return Err(PolicyError::MissingRootPath);
        }

        if self.composite_indexes.len() > MAX_COMPOSITE_INDEXES {
            return Err(PolicyError::TooManyCompositeIndexes {
                count: self.composite_indexes.len(),
                max: MAX_COMPOSITE_INDEXES,
            });
        }
        for (index, composite) in self.composite_indexes.iter().enumerate() {
            let count = composite.len();
            if count < MIN_COMPOSITE_PATHS {
                return Err(PolicyError::CompositeTooFewPaths { index, count });
            }
            if count > MAX_COMPOSITE_PATHS {
                return Err(PolicyError::CompositeTooManyPaths {
                    index,
                    count,
                    max: MAX_COMPOSITE_PATHS,
                });
            }
            let mut parsed_paths: Vec<Vec<PolicySegment>> = Vec::with_capacity(count);
            for (position, entry) in composite.iter().enumerate() {
                let parsed = parse_composite_path(&entry.path)?;
                if parsed_paths.contains(&parsed) {
                    return Err(PolicyError::DuplicateCompositePath {
                        path: entry.path.clone(),
                        index,
                        position,
                    });
                }
                parsed_paths.push(parsed);
            }
        }
        self.validate_search_indexes()
    }

    /// The shape of `vectorIndexes` and `fullTextIndexes` on their own: path syntax, one
    /// index per path, tuning parameters. Whether the paths are in the container's vector
    /// embedding and full-text policies is checked by
    /// [`super::search_policy::validate_search_indexes`].
    fn validate_search_indexes(&self) -> Result<(), PolicyError> {
        // Mode 'none' keeps no index at all, so an index definition there cannot be
        // honoured; the documentation is silent, and rejecting is the safer reading.
        if self.indexing_mode == IndexingMode::None {
            if !self.vector_indexes.is_empty() {
                return Err(PolicyError::SearchIndexesWithNoneMode {
                    list: SearchIndexList::Vector,
                });
            }
            if !self.full_text_indexes.is_empty() {
                return Err(PolicyError::SearchIndexesWithNoneMode {
                    list: SearchIndexList::FullText,
                });
            }
        }
        let paths = self
            .vector_indexes
            .iter()
            .map(|v| (SearchIndexList::Vector, &v.path))
            .chain(
                self.full_text_indexes
                    .iter()
                    .map(|f| (SearchIndexList::FullText, &f.path)),
            );
        let mut seen: Vec<(SearchIndexList, Vec<PolicySegment>)> = Vec::new();
        for (list, path) in paths {
            let parsed = super::search_policy::parse_search_path(path).map_err(|reason| {
                PolicyError::InvalidSearchIndexPath {
                    list,
                    path: path.clone(),
                    reason,
                }
            })?;
            let key = (list, parsed);
            if seen.contains(&key) {
                return Err(PolicyError::DuplicateSearchIndexPath {
                    list,
                    path: path.clone(),
                });
            }
            seen.push(key);
        }
        for index in &self.vector_indexes {
            index.validate_parameters()?;
        }
        Ok(())
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

    /// Prepares the policy for matching. Paths that do not parse are skipped: call
    /// [`IndexingPolicy::validate`] first to reject them.
    pub fn compile(&self) -> CompiledPolicy {
        CompiledPolicy::new(self)
    }

    /// The compiled policy, shared: compiled once per distinct policy (queries compile the
    /// container's policy on every request otherwise).
    pub fn compiled(&self) -> std::sync::Arc<CompiledPolicy> {
        use std::sync::{Arc, Mutex};
        static CACHE: Mutex<Vec<(IndexingPolicy, Arc<CompiledPolicy>)>> = Mutex::new(Vec::new());
        const KEPT: usize = 16;
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = cache.iter().find(|(p, _)| p == self) {
            return c.clone();
        }
        let compiled = Arc::new(self.compile());
        if cache.len() >= KEPT {
            cache.remove(0);
        }
        cache.push((self.clone(), compiled.clone()));
        compiled
    }

    /// Whether the scalar at `path` is indexed. Compiles the policy on every call; keep a
    /// [`CompiledPolicy`] when checking many values.
    pub fn is_indexed(&self, path: &[PathSegment]) -> bool {
        self.compile().is_indexed(path)
    }

    /// Number of scalar values of `doc` the policy indexes. Compiles the policy on every
    /// call; keep a [`CompiledPolicy`] when charging many writes.
    pub fn count_indexed_terms(&self, doc: &Value) -> usize {
        self.compile().count_indexed_terms(doc)
    }
}

// ---------------------------------------------------------------------------------------
// Path grammar
// ---------------------------------------------------------------------------------------

/// One step of a document location: a property name or an array position.
/// `/tags/0/name` is `[Property("tags"), Index(0), Property("name")]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    Property(String),
    Index(usize),
}

/// One segment of a policy path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PolicySegment {
    /// A property name, unquoted (`name`) or quoted (`"my-prop"`), stored unquoted.
    Name(String),
    /// `[]`: any element of an array.
    AnyIndex,
    /// `[n]`: one element of an array.
    Index(usize),
}

/// How a policy path ends.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathTerminal {
    /// `/?`: the scalar at exactly this location.
    Scalar,
    /// `/*`: this location and everything under it.
    Subtree,
    /// `/{a, b/c}/?`: a tuple of values inside each array element (included paths only).
    Tuple(Vec<Vec<PolicySegment>>),
}

/// A parsed included or excluded path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PolicyPath {
    pub segments: Vec<PolicySegment>,
    pub terminal: PathTerminal,
}

impl PolicyPath {
    /// `/*` (or its spelling `/`).
    pub fn is_root(&self) -> bool {
        self.segments.is_empty() && self.terminal == PathTerminal::Subtree
    }

    pub fn is_tuple(&self) -> bool {
        matches!(self.terminal, PathTerminal::Tuple(_))
    }

    fn is_etag(&self) -> bool {
        matches!(self.segments.as_slice(), [PolicySegment::Name(n)] if n == "_etag")
    }
}

fn is_plain_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn write_segments(f: &mut fmt::Formatter<'_>, segments: &[PolicySegment]) -> fmt::Result {
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            f.write_str("/")?;
        }
        match segment {
            PolicySegment::Name(name) if !name.is_empty() && name.chars().all(is_plain_char) => {
                f.write_str(name)?
            }
            PolicySegment::Name(name) => {
                f.write_str("\"")?;
                for c in name.chars() {
                    if c == '"' || c == '\\' {
                        f.write_str("\\")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("\"")?;
            }
            PolicySegment::AnyIndex => f.write_str("[]")?,
            PolicySegment::Index(n) => write!(f, "[{n}]")?,
        }
    }
    Ok(())
}

impl fmt::Display for PolicyPath {
    /// The canonical spelling: names quoted only when they need it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("/")?;
        write_segments(f, &self.segments)?;
        if !self.segments.is_empty() {
            f.write_str("/")?;
        }
        match &self.terminal {
            PathTerminal::Scalar => f.write_str("?"),
            PathTerminal::Subtree => f.write_str("*"),
            PathTerminal::Tuple(elements) => {
                f.write_str("{")?;
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_segments(f, element)?;
                }
                f.write_str("}/?")
            }
        }
    }
}

/// A character cursor that reports positions the way the service does: the 0-based
/// character offset where parsing stopped (the end of input for a missing terminal).
struct Cursor<'a> {
    source: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(source: &'a str) -> Cursor<'a> {
        Cursor {
            source,
            chars: source.chars().collect(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn fail_at(&self, position: usize, expected: &'static str) -> PolicyError {
        PolicyError::InvalidPath {
            path: self.source.to_string(),
            position,
            expected,
        }
    }

    fn fail(&self, expected: &'static str) -> PolicyError {
        self.fail_at(self.pos, expected)
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// A name (plain or quoted) or an array step, `[]` or `[n]`.
    fn segment(&mut self) -> Result<PolicySegment, PolicyError> {
        match self.peek() {
            Some('"') => {
                let start = self.pos;
                self.pos += 1;
                let mut name = String::new();
                loop {
                    match self.peek() {
                        None => return Err(self.fail_at(start, "a closing '\"' for this name")),
                        Some('"') => {
                            self.pos += 1;
                            return Ok(PolicySegment::Name(name));
                        }
                        Some('\\') => {
                            self.pos += 1;
                            match self.peek() {
                                Some(c) => {
                                    name.push(c);
                                    self.pos += 1;
                                }
                                None => return Err(self.fail("a character after '\\'")),
                            }
                        }
                        Some(c) => {
                            name.push(c);
                            self.pos += 1;
                        }
                    }
                }
            }
            Some('[') => {
                self.pos += 1;
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                let digits: String = self.chars[start..self.pos].iter().collect();
                if self.peek() != Some(']') {
                    return Err(self.fail("']' closing an array step ('[]' or '[n]')"));
                }
                self.pos += 1;
                if digits.is_empty() {
                    return Ok(PolicySegment::AnyIndex);
                }
                digits
                    .parse::<usize>()
                    .map(PolicySegment::Index)
                    .map_err(|_| self.fail_at(start, "an array position that fits in 64 bits"))
            }
            Some(c) if is_plain_char(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_plain_char) {
                    self.pos += 1;
                }
                Ok(PolicySegment::Name(
                    self.chars[start..self.pos].iter().collect(),
                ))
            }
            _ => Err(self.fail(
                "a property name; quote names with characters other than letters, digits and '_' \
                 (for example /\"my-prop\"/?)",
            )),
        }
    }

    /// `{a, b/c}/?` after a `[]` step; the cursor is on `{`.
    fn tuple(&mut self) -> Result<PathTerminal, PolicyError> {
        self.pos += 1;
        let mut elements = Vec::new();
        loop {
            self.skip_spaces();
            let mut element = Vec::new();
            loop {
                match self.peek() {
                    Some('/') if element.is_empty() => {
                        return Err(self.fail("a tuple element without a leading '/'"));
                    }
                    Some('{') => return Err(self.fail("no nested tuple '{'")),
                    Some('?') | Some('*') => {
                        return Err(self.fail("a tuple element without a trailing '?' or '*'"));
                    }
                    _ => {}
                }
                let start = self.pos;
                let segment = self.segment()?;
                if segment == PolicySegment::AnyIndex {
                    return Err(self.fail_at(start, "no '[]' inside a tuple element"));
                }
                element.push(segment);
                self.skip_spaces();
                if self.peek() == Some('/') {
                    self.pos += 1;
                } else {
                    break;
                }
            }
            elements.push(element);
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.fail("',' or '}' in the tuple")),
            }
        }
        if self.peek() != Some('/') {
            return Err(self.fail("'/?' after the tuple"));
        }
        self.pos += 1;
        if self.peek() != Some('?') {
            return Err(self.fail("'?' after the tuple"));
        }
        self.pos += 1;
        if !self.at_end() {
            return Err(self.fail("the end of the path after '?'"));
        }
        Ok(PathTerminal::Tuple(elements))
    }
}

/// Parses an included or excluded path: segments separated by `/`, ending in `/?`, `/*`
/// or (for tuple indexes) `/[]/{...}/?`.
pub fn parse_policy_path(s: &str) -> Result<PolicyPath, PolicyError> {
    if s == "/" {
        return Ok(PolicyPath {
            segments: Vec::new(),
            terminal: PathTerminal::Subtree,
        });
    }
    let mut cur = Cursor::new(s);
    if cur.peek() != Some('/') {
        return Err(cur.fail("a path starting with '/'"));
    }
    cur.pos += 1;
    let mut segments = Vec::new();
    let terminal = loop {
        match cur.peek() {
            None => return Err(cur.fail("a segment, '?' or '*' after '/'")),
            Some('?') => {
                if segments.is_empty() {
                    return Err(cur.fail("a property name before '/?' (the root is an object)"));
                }
                cur.pos += 1;
                if !cur.at_end() {
                    return Err(cur.fail("the end of the path after '?'"));
                }
                break PathTerminal::Scalar;
            }
            Some('*') => {
                cur.pos += 1;
                if !cur.at_end() {
                    return Err(cur.fail("the end of the path after '*' (use '[]' for arrays)"));
                }
                break PathTerminal::Subtree;
            }
            Some('{') => {
                if segments.last() != Some(&PolicySegment::AnyIndex) {
                    return Err(cur.fail("'[]' before a tuple '{...}'"));
                }
                let prefix = &segments[..segments.len() - 1];
                if prefix.contains(&PolicySegment::AnyIndex) {
                    return Err(cur.fail("a tuple path prefix with only one '[]'"));
                }
                break cur.tuple()?;
            }
            Some(_) => segments.push(cur.segment()?),
        }
        match cur.peek() {
            Some('/') => cur.pos += 1,
            None => return Err(cur.fail("'/?' or '/*' at the end of the path")),
            Some(_) => return Err(cur.fail("'/' between segments")),
        }
    };
    Ok(PolicyPath { segments, terminal })
}

/// Parses a composite index path: a property path such as `/name` or `/children/[]/age`,
/// with an implicit `/?` that must not be written.
pub fn parse_composite_path(s: &str) -> Result<Vec<PolicySegment>, PolicyError> {
    let mut cur = Cursor::new(s);
    if cur.peek() != Some('/') {
        return Err(cur.fail("a path starting with '/'"));
    }
    cur.pos += 1;
    let mut segments = Vec::new();
    loop {
        match cur.peek() {
            None => return Err(cur.fail("a property name after '/'")),
            Some('?') | Some('*') => {
                return Err(PolicyError::CompositePathTerminal {
                    path: s.to_string(),
                });
            }
            Some(_) => segments.push(cur.segment()?),
        }
        match cur.peek() {
            Some('/') => cur.pos += 1,
            None => return Ok(segments),
            Some(_) => return Err(cur.fail("'/' between segments")),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------

/// A document step as matching sees it, so owned and borrowed paths share one matcher.
trait Step {
    fn property(&self) -> Option<&str>;
    fn index(&self) -> Option<usize>;
}

impl Step for PathSegment {
    fn property(&self) -> Option<&str> {
        match self {
            PathSegment::Property(p) => Some(p),
            PathSegment::Index(_) => None,
        }
    }
    fn index(&self) -> Option<usize> {
        match self {
            PathSegment::Property(_) => None,
            PathSegment::Index(i) => Some(*i),
        }
    }
}

/// Borrowed step used while walking a document, so a walk allocates no strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocStep<'a> {
    Property(&'a str),
    Index(usize),
}

impl Step for DocStep<'_> {
    fn property(&self) -> Option<&str> {
        match self {
            DocStep::Property(p) => Some(p),
            DocStep::Index(_) => None,
        }
    }
    fn index(&self) -> Option<usize> {
        match self {
            DocStep::Property(_) => None,
            DocStep::Index(i) => Some(*i),
        }
    }
}

#[derive(Debug, Clone)]
enum Pattern {
    /// A name; digit-only names also match that array position.
    Name {
        name: Box<str>,
        position: Option<usize>,
    },
    AnyIndex,
    Index(usize),
}

impl Pattern {
    fn from_segment(segment: &PolicySegment) -> Pattern {
        match segment {
            PolicySegment::Name(name) => {
                let canonical_number = !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_digit())
                    && (name.len() == 1 || !name.starts_with('0'));
                let position = if canonical_number {
                    name.parse().ok()
                } else {
                    None
                };
                Pattern::Name {
                    name: name.as_str().into(),
                    position,
                }
            }
            PolicySegment::AnyIndex => Pattern::AnyIndex,
            PolicySegment::Index(i) => Pattern::Index(*i),
        }
    }

    fn matches<S: Step>(&self, step: &S) -> bool {
        match self {
            Pattern::Name { name, position } => match step.property() {
                Some(p) => p == &**name,
                None => position.is_some() && step.index() == *position,
            },
            Pattern::AnyIndex => step.index().is_some(),
            Pattern::Index(i) => step.index() == Some(*i),
        }
    }

    fn is_concrete(&self) -> bool {
        !matches!(self, Pattern::AnyIndex)
    }
}

#[derive(Debug, Clone)]
struct Rule {
    patterns: Box<[Pattern]>,
    included: bool,
}

impl Rule {
    fn matches<S: Step>(&self, path: &[S]) -> bool {
        path.len() >= self.patterns.len()
            && self
                .patterns
                .iter()
                .zip(path)
                .all(|(pattern, step)| pattern.matches(step))
    }

    /// For two rules of the same depth and terminal: the first concrete-versus-`[]`
    /// difference from the root decides; on a full tie exclusion wins.
    fn beats(&self, other: &Rule) -> bool {
        for (a, b) in self.patterns.iter().zip(other.patterns.iter()) {
            match a.is_concrete().cmp(&b.is_concrete()) {
                Ordering::Greater => return true,
                Ordering::Less => return false,
                Ordering::Equal => {}
            }
        }
        !self.included && other.included
    }
}

/// An indexing policy prepared for matching many values: paths parsed once and grouped
/// by depth, so deciding one value costs a few comparisons and no allocation.
#[derive(Debug, Clone)]
pub struct CompiledPolicy {
    enabled: bool,
    rules: Vec<Rule>,
    /// `subtree[d]`: rules ending in `/*` with `d` segments.
    subtree: Vec<Vec<usize>>,
    /// `scalar[d]`: rules ending in `/?` with `d` segments.
    scalar: Vec<Vec<usize>>,
    /// No rule has more segments than this, so deeper decisions are inherited.
    max_depth: usize,
    /// Another policy a path must also be indexed by (see [`CompiledPolicy::restricted_to`]).
    also: Option<Box<CompiledPolicy>>,
    /// Paths with a full-text index (a structure apart from the range rules above).
    full_text: Vec<String>,
}

impl CompiledPolicy {
    fn new(policy: &IndexingPolicy) -> CompiledPolicy {
        let mut compiled = CompiledPolicy {
            enabled: policy.is_indexing_enabled(),
            rules: Vec::new(),
            subtree: Vec::new(),
            scalar: Vec::new(),
            max_depth: 0,
            also: None,
            full_text: policy
                .full_text_indexes
                .iter()
                .map(|i| i.path.clone())
                .collect(),
        };
        if !compiled.enabled {
            return compiled;
        }
        // Match what the service stores, not only what was written: defaults fill in an
        // empty policy and `_etag` is excluded unless mentioned.
        let normalized = policy.normalized();
        let lists = [
            (true, &normalized.included_paths),
            (false, &normalized.excluded_paths),
        ];
        for (included, specs) in lists {
            for spec in specs {
                let Ok(parsed) = parse_policy_path(&spec.path) else {
                    continue;
                };
                let scalar = match parsed.terminal {
                    PathTerminal::Scalar => true,
                    PathTerminal::Subtree => false,
                    // A tuple index is a separate structure; it does not decide whether
                    // the individual values are indexed.
                    PathTerminal::Tuple(_) => continue,
                };
                compiled.add(
                    parsed.segments.iter().map(Pattern::from_segment).collect(),
                    scalar,
                    included,
                );
            }
        }
        compiled
    }

    fn add(&mut self, patterns: Box<[Pattern]>, scalar: bool, included: bool) {
        let depth = patterns.len();
        let groups = if scalar {
            &mut self.scalar
        } else {
            &mut self.subtree
        };
        if groups.len() <= depth {
            groups.resize_with(depth + 1, Vec::new);
        }
        groups[depth].push(self.rules.len());
        self.max_depth = self.max_depth.max(depth);
        self.rules.push(Rule { patterns, included });
    }

    /// Whether the policy indexes anything (mode is not `none`).
    pub fn is_indexing_enabled(&self) -> bool {
        self.enabled
    }

    /// The best rule of `groups[path.len()]` that matches `path`.
    fn best_at<S: Step>(&self, groups: &[Vec<usize>], path: &[S]) -> Option<usize> {
        let mut best: Option<usize> = None;
        for &candidate in groups.get(path.len())? {
            let rule = &self.rules[candidate];
            if rule.matches(path) && best.is_none_or(|b| rule.beats(&self.rules[b])) {
                best = Some(candidate);
            }
        }
        best
    }

    /// The deciding rule for the node at `path`, given the one its parent inherited:
    /// a `/*` rule ending exactly here is deeper than anything inherited.
    fn subtree_decision<S: Step>(&self, path: &[S], inherited: Option<usize>) -> Option<usize> {
        self.best_at(&self.subtree, path).or(inherited)
    }

    /// Decides a scalar at `path` whose subtree decision is `node`.
    fn scalar_indexed<S: Step>(&self, path: &[S], node: Option<usize>) -> bool {
        let system =
            matches!(path, [only] if only.property().is_some_and(|p| ALWAYS_INDEXED.contains(&p)));
        if system {
            return true;
        }
        self.best_at(&self.scalar, path)
            .or(node)
            .is_some_and(|rule| self.rules[rule].included)
    }

    /// The paths both policies index: what queries can rely on while an index
    /// transformation replaces one policy by another (removed paths stop serving at once,
    /// added ones serve when built). Only [`CompiledPolicy::is_indexed`] and
    /// [`CompiledPolicy::has_positional_rules`] consult the second policy.
    pub fn restricted_to(mut self, other: CompiledPolicy) -> CompiledPolicy {
        self.also = Some(Box::new(other));
        self
    }

    /// Whether a full-text index covers `path` (`/text`), in this policy and in the one it
    /// is restricted to.
    pub fn has_full_text_index(&self, path: &str) -> bool {
        self.enabled
            && self
                .full_text
                .iter()
                .any(|p| super::search_policy::same_search_path(p, path))
            && self
                .also
                .as_ref()
                .is_none_or(|o| o.has_full_text_index(path))
    }

    /// Whether the scalar value at `path` is indexed. The empty path (the document
    /// itself) is never a scalar.
    pub fn is_indexed(&self, path: &[PathSegment]) -> bool {
        if !self.enabled || path.is_empty() {
            return false;
        }
        if self.also.as_ref().is_some_and(|o| !o.is_indexed(path)) {
            return false;
        }
        let mut node = None;
        for depth in 0..=path.len() {
            node = self.subtree_decision(&path[..depth], node);
        }
        self.scalar_indexed(path, node)
    }

    /// Counts the scalar leaves of `doc` (strings, numbers, booleans, nulls; each array
    /// element separately) that are indexed. Empty objects and arrays add nothing.
    pub fn count_indexed_terms(&self, doc: &Value) -> usize {
        let mut count = 0;
        self.walk(doc, |_, v, indexed| {
            if indexed && !matches!(v, Value::Array(_) | Value::Object(_)) {
                count += 1;
            }
        });
        count
    }
}

impl CompiledPolicy {
    /// Whether any rule names an array position (`/a/0/?`, `/a/[1]/?`), so the decision for
    /// one element can differ from its siblings'. Index entries store array steps as `[]`;
    /// a lookup over every element is complete only when no rule tells positions apart.
    pub fn has_positional_rules(&self) -> bool {
        if self.also.as_ref().is_some_and(|o| o.has_positional_rules()) {
            return true;
        }
        self.rules.iter().any(|rule| {
            rule.patterns.iter().any(|p| match p {
                Pattern::Index(_) => true,
                Pattern::Name { position, .. } => position.is_some(),
                Pattern::AnyIndex => false,
            })
        })
    }

    /// Walks every node below the root of `doc` (objects and arrays as well as scalars),
    /// calling `f(path, value, indexed)`. A node is indexed when the policy indexes a scalar
    /// at its location, so `f` sees exactly the scalar terms
    /// [`CompiledPolicy::count_indexed_terms`] counts, plus the containers at indexed
    /// locations. Explicit stacks: deep documents cannot overflow the call stack.
    pub fn walk<'a>(&self, doc: &'a Value, mut f: impl FnMut(&[DocStep<'a>], &'a Value, bool)) {
        let mut path: Vec<DocStep<'a>> = Vec::with_capacity(16);
        let root = self.subtree_decision(&path, None);
        let Some(children) = Children::of(doc) else {
            return;
        };
        let mut frames = vec![Frame {
            children,
            decision: root,
        }];
        while let Some(frame) = frames.last_mut() {
            let parent = frame.decision;
            let Some((step, child)) = frame.children.next() else {
                frames.pop();
                path.pop();
                continue;
            };
            path.push(step);
            let decision = self.subtree_decision(&path, parent);
            let indexed = self.enabled && self.scalar_indexed(&path, decision);
            f(&path, child, indexed);
            match Children::of(child) {
                Some(children) => frames.push(Frame { children, decision }),
                None => {
                    path.pop();
                }
            }
        }
    }
}

/// The children of an object or array, each with the step that reaches it.
enum Children<'a> {
    Object(serde_json::map::Iter<'a>),
    Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
}

impl<'a> Children<'a> {
    fn of(value: &'a Value) -> Option<Children<'a>> {
        match value {
            Value::Object(map) => Some(Children::Object(map.iter())),
            Value::Array(items) => Some(Children::Array(items.iter().enumerate())),
            _ => None,
        }
    }

    fn next(&mut self) -> Option<(DocStep<'a>, &'a Value)> {
        match self {
            Children::Object(it) => it.next().map(|(k, v)| (DocStep::Property(k.as_str()), v)),
            Children::Array(it) => it.next().map(|(i, v)| (DocStep::Index(i), v)),
        }
    }
}

struct Frame<'a> {
    children: Children<'a>,
    decision: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &str) -> Vec<PathSegment> {
        s.split('/')
            .filter(|part| !part.is_empty())
            .map(|part| match part.parse::<usize>() {
                Ok(i) => PathSegment::Index(i),
                Err(_) => PathSegment::Property(part.to_string()),
            })
            .collect()
    }

    fn policy(included: &[&str], excluded: &[&str]) -> IndexingPolicy {
        IndexingPolicy {
            included_paths: included.iter().map(|s| PathSpec::new(*s)).collect(),
            excluded_paths: excluded.iter().map(|s| PathSpec::new(*s)).collect(),
            ..IndexingPolicy::default()
        }
    }

    fn from_json(v: Value) -> IndexingPolicy {
        serde_json::from_value(v).expect("policy json")
    }

    fn err(policy: &IndexingPolicy) -> PolicyError {
        policy.validate().expect_err("policy should be rejected")
    }

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

    // --- path grammar -------------------------------------------------------------------

    #[test]
    fn parses_the_documented_path_forms() {
        let path = parse_policy_path("/headquarters/employees/?").unwrap();
        assert_eq!(
            path.segments,
            [
                PolicySegment::Name("headquarters".into()),
                PolicySegment::Name("employees".into())
            ]
        );
        assert_eq!(path.terminal, PathTerminal::Scalar);

        let path = parse_policy_path("/locations/[]/country/?").unwrap();
        assert_eq!(path.segments[1], PolicySegment::AnyIndex);

        let path = parse_policy_path("/headquarters/*").unwrap();
        assert_eq!(path.terminal, PathTerminal::Subtree);

        assert!(parse_policy_path("/*").unwrap().is_root());
        assert!(parse_policy_path("/").unwrap().is_root());

        let path = parse_policy_path(r#"/"path-abc"/?"#).unwrap();
        assert_eq!(path.segments, [PolicySegment::Name("path-abc".into())]);
        assert_eq!(
            parse_policy_path(r#"/"_etag"/?"#).unwrap(),
            parse_policy_path("/_etag/?").unwrap()
        );
        let path = parse_policy_path(r#"/"say \"hi\""/?"#).unwrap();
        assert_eq!(path.segments, [PolicySegment::Name("say \"hi\"".into())]);
        assert_eq!(path.to_string(), r#"/"say \"hi\""/?"#);
        assert_eq!(
            parse_policy_path(r#"/"a"/[]/"b-c"/*"#).unwrap().to_string(),
            r#"/a/[]/"b-c"/*"#
        );
    }

    #[test]
    fn parses_tuple_paths() {
        for ok in [
            "/events/[]/{name/first, name/last}/?",
            "/events/[]/{name/first, category}/?",
            "/events/[]/{name/[1]/first, category}/?",
            "/events/[]/{[1], [3]}/?",
            "/city/[1]/events/[]/{name, category}/?",
        ] {
            let path = parse_policy_path(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert!(path.is_tuple(), "{ok}");
        }
        let path = parse_policy_path("/events/[]/{name, category}/?").unwrap();
        assert_eq!(path.to_string(), "/events/[]/{name, category}/?");
        for bad in [
            "/events/[]/{name/[]/first, category}/?",
            "/events/[]/{name, category}/*",
            "/events/[]/{{name, first},category}/?",
            "/events/{name, category}/?",
            "/events/[]/{/name,/category}/?",
            "/events/[]/{name/?,category/?}/?",
            "/city/[]/events/[]/{name, category}/?",
        ] {
            assert!(parse_policy_path(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn rejects_malformed_paths_with_a_position() {
        let e = parse_policy_path("/expiration").unwrap_err();
        assert_eq!(
            e,
            PolicyError::InvalidPath {
                path: "/expiration".into(),
                position: 11,
                expected: "'/?' or '/*' at the end of the path"
            }
        );
        assert!(e.to_string().starts_with(
            "The indexing path '/expiration' could not be accepted, failed near position '11'"
        ));
        let position = |s: &str| match parse_policy_path(s) {
            Err(PolicyError::InvalidPath { position, .. }) => position,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(position("name/?"), 0);
        assert_eq!(position("/my-prop/?"), 3);
        assert_eq!(position("/a/*/b/?"), 4);
        assert_eq!(position("/a//?"), 3);
        assert_eq!(position("/a/?/"), 4);
        assert_eq!(position("/?"), 1);
        assert_eq!(position("/a/[x]/?"), 4);
        assert_eq!(position("/\"open/?"), 1);
        assert_eq!(position(""), 0);
        assert_eq!(position("/a/"), 3);
    }

    #[test]
    fn composite_paths_are_plain_property_paths() {
        assert_eq!(
            parse_composite_path("/children/[]/age").unwrap(),
            [
                PolicySegment::Name("children".into()),
                PolicySegment::AnyIndex,
                PolicySegment::Name("age".into())
            ]
        );
        assert_eq!(
            parse_composite_path(r#"/"my-prop""#).unwrap(),
            [PolicySegment::Name("my-prop".into())]
        );
        assert!(matches!(
            parse_composite_path("/name/?"),
            Err(PolicyError::CompositePathTerminal { .. })
        ));
        assert!(matches!(
            parse_composite_path("/name/*"),
            Err(PolicyError::CompositePathTerminal { .. })
        ));
        assert!(matches!(
            parse_composite_path("/"),
            Err(PolicyError::InvalidPath { position: 1, .. })
        ));
        assert!(matches!(
            parse_composite_path("name"),
            Err(PolicyError::InvalidPath { position: 0, .. })
        ));
    }

    // --- validation ---------------------------------------------------------------------

    #[test]
    fn accepts_documented_policies() {
        for value in [
            json!({"indexingMode": "consistent", "includedPaths": [], "excludedPaths": [{"path": "/*"}]}),
            json!({"indexingMode": "consistent", "includedPaths": [{"path": "/name/?"}], "excludedPaths": [{"path": "/*"}]}),
            json!({"includedPaths": [{"path": "/food/ingredients/nutrition/*"}, {"path": "/*"}],
                   "excludedPaths": [{"path": "/food/ingredients/*"}]}),
            json!({"includedPaths": [{"path": "/*"}, {"path": "/events/[]/{name, category}/?"}]}),
            json!({"indexingMode": "none", "automatic": false, "includedPaths": [], "excludedPaths": []}),
        ] {
            let policy = from_json(value.clone());
            assert!(
                policy.validate().is_ok(),
                "{value}: {:?}",
                policy.validate()
            );
        }
    }

    #[test]
    fn rejects_invalid_paths() {
        assert!(matches!(
            err(&policy(&["/*", "/expiration"], &[])),
            PolicyError::InvalidPath { position: 11, .. }
        ));
        assert!(matches!(
            err(&policy(&["/*"], &["/a-b/?"])),
            PolicyError::InvalidPath { position: 2, .. }
        ));
        assert_eq!(
            err(&policy(&["/*"], &["/e/[]/{a, b}/?"])),
            PolicyError::TupleNotIncluded {
                path: "/e/[]/{a, b}/?".into()
            }
        );
    }

    #[test]
    fn rejects_a_policy_without_the_root_path() {
        let e = err(&policy(&["/name/?"], &["/age/?"]));
        assert_eq!(e, PolicyError::MissingRootPath);
        assert!(e.to_string().contains("Add '/*' to includedPaths"));
    }

    #[test]
    fn rejects_duplicate_paths() {
        assert_eq!(
            err(&policy(&["/*"], &["/*"])),
            PolicyError::DuplicatePath {
                path: "/*".into(),
                first: PathList::Included,
                second: PathList::Excluded
            }
        );
        assert_eq!(
            err(&policy(&["/*", "/a/?"], &[r#"/"a"/?"#])),
            PolicyError::DuplicatePath {
                path: r#"/"a"/?"#.into(),
                first: PathList::Included,
                second: PathList::Excluded
            }
        );
        assert!(matches!(
            err(&policy(&["/*", "/a/?", "/a/?"], &[])),
            PolicyError::DuplicatePath {
                first: PathList::Included,
                second: PathList::Included,
                ..
            }
        ));
        assert!(matches!(
            err(&policy(&["/", "/*"], &[])),
            PolicyError::DuplicatePath { .. }
        ));
    }

    #[test]
    fn rejects_paths_or_automatic_with_mode_none() {
        let e = err(&from_json(
            json!({"indexingMode": "none", "automatic": true}),
        ));
        assert_eq!(e, PolicyError::AutomaticWithNoneMode);
        assert!(
            e.to_string()
                .starts_with("Indexing mode value cannot be 'none' when automatic indexing")
        );
        assert_eq!(
            err(&from_json(
                json!({"indexingMode": "none", "includedPaths": [{"path": "/*"}]})
            )),
            PolicyError::PathsWithNoneMode {
                list: PathList::Included
            }
        );
        assert_eq!(
            err(&from_json(
                json!({"indexingMode": "none", "excludedPaths": [{"path": "/*"}]})
            )),
            PolicyError::PathsWithNoneMode {
                list: PathList::Excluded
            }
        );
    }

    #[test]
    fn rejects_too_many_paths() {
        let many: Vec<String> = (0..=MAX_INCLUDED_PATHS)
            .map(|i| format!("/p{i}/?"))
            .collect();
        let mut p = policy(&["/*"], &[]);
        p.included_paths.extend(many.iter().map(PathSpec::new));
        assert_eq!(
            err(&p),
            PolicyError::TooManyPaths {
                list: PathList::Included,
                count: MAX_INCLUDED_PATHS + 2,
                max: 1500
            }
        );
        let mut p = policy(&["/*"], &[]);
        p.excluded_paths.extend(many.iter().map(PathSpec::new));
        assert!(matches!(
            err(&p),
            PolicyError::TooManyPaths {
                list: PathList::Excluded,
                ..
            }
        ));
        // Exactly at the limit is fine.
        let mut p = policy(&[], &[]);
        p.included_paths.push(PathSpec::new("/*"));
        p.included_paths
            .extend(many.iter().take(MAX_INCLUDED_PATHS - 1).map(PathSpec::new));
        assert!(p.validate().is_ok());
    }

    fn with_composites(composites: Vec<Vec<CompositePath>>) -> IndexingPolicy {
        IndexingPolicy {
            composite_indexes: composites,
            ..IndexingPolicy::default()
        }
    }

    fn composite(paths: &[&str]) -> Vec<CompositePath> {
        paths
            .iter()
            .map(|p| CompositePath::new(*p, CompositeOrder::Ascending))
            .collect()
    }

    #[test]
    fn rejects_composite_indexes_of_the_wrong_size() {
        let e = err(&with_composites(vec![
            composite(&["/a", "/b"]),
            composite(&["/a"]),
        ]));
        assert_eq!(e, PolicyError::CompositeTooFewPaths { index: 1, count: 1 });
        assert!(
            e.to_string()
                .contains("'indexingPolicy.compositeIndexes[1]'")
        );
        let nine = ["/a", "/b", "/c", "/d", "/e", "/f", "/g", "/h", "/i"];
        assert_eq!(
            err(&with_composites(vec![composite(&nine)])),
            PolicyError::CompositeTooManyPaths {
                index: 0,
                count: 9,
                max: 8
            }
        );
        assert!(
            with_composites(vec![composite(&nine[..8])])
                .validate()
                .is_ok()
        );
        let many = vec![composite(&["/a", "/b"]); MAX_COMPOSITE_INDEXES + 1];
        assert_eq!(
            err(&with_composites(many)),
            PolicyError::TooManyCompositeIndexes {
                count: 101,
                max: 100
            }
        );
    }

    #[test]
    fn rejects_bad_composite_paths() {
        assert_eq!(
            err(&with_composites(vec![composite(&["/name/?", "/age"])])),
            PolicyError::CompositePathTerminal {
                path: "/name/?".into()
            }
        );
        assert!(matches!(
            err(&with_composites(vec![composite(&["/name", "/age/*"])])),
            PolicyError::CompositePathTerminal { .. }
        ));
        assert_eq!(
            err(&with_composites(vec![composite(&[
                "/name",
                "/age",
                r#"/"name""#
            ])])),
            PolicyError::DuplicateCompositePath {
                path: r#"/"name""#.into(),
                index: 0,
                position: 2
            }
        );
        assert!(matches!(
            err(&with_composites(vec![composite(&["name", "/age"])])),
            PolicyError::InvalidPath { .. }
        ));
    }

    // --- precedence ---------------------------------------------------------------------

    #[test]
    fn more_precise_paths_win() {
        let policy = policy(&["/*", "/a/b/?"], &["/a/*"]);
        assert!(policy.validate().is_ok());
        let c = policy.compile();
        assert!(c.is_indexed(&p("/a/b")));
        assert!(!c.is_indexed(&p("/a/c")));
        assert!(
            !c.is_indexed(&p("/a/b/deeper")),
            "/a/b/? covers only the scalar at a.b"
        );
        assert!(
            !c.is_indexed(&p("/a")),
            "/a/* covers a itself when it is a scalar"
        );
        assert!(c.is_indexed(&p("/other")));
        assert!(c.is_indexed(&p("/x/y/z")));
    }

    #[test]
    fn documented_nutrition_example() {
        let c = policy(
            &["/*", "/food/ingredients/nutrition/*"],
            &["/food/ingredients/*"],
        )
        .compile();
        assert!(c.is_indexed(&p("/food/name")));
        assert!(!c.is_indexed(&p("/food/ingredients/sugar")));
        assert!(!c.is_indexed(&p("/food/ingredients/0/name")));
        assert!(c.is_indexed(&p("/food/ingredients/nutrition/kcal")));
        assert!(c.is_indexed(&p("/food/ingredients/nutrition/vitamins/0")));
    }

    #[test]
    fn exclude_root_include_one_property() {
        let policy = policy(&["/name/?"], &["/*"]);
        assert!(policy.validate().is_ok());
        let c = policy.compile();
        assert!(c.is_indexed(&p("/name")));
        assert!(!c.is_indexed(&p("/age")));
        assert!(!c.is_indexed(&p("/name/first")));
        assert!(!c.is_indexed(&p("/address/city")));
        assert!(!c.is_indexed(&p("/pk")), "the partition key is not special");
    }

    #[test]
    fn id_and_ts_are_always_indexed_unless_mode_is_none() {
        let c = policy(&["/name/?"], &["/*"]).compile();
        assert!(c.is_indexed(&p("/id")));
        assert!(c.is_indexed(&p("/_ts")));
        assert!(!c.is_indexed(&p("/nested/id")));
        let c = policy(&["/*"], &["/id/?"]).compile();
        assert!(c.is_indexed(&p("/id")));
        assert!(!IndexingPolicy::none().is_indexed(&p("/id")));
    }

    #[test]
    fn scalar_beats_subtree_at_the_same_depth() {
        let c = policy(&["/*", "/a/?"], &["/a/*"]).compile();
        assert!(c.is_indexed(&p("/a")));
        assert!(!c.is_indexed(&p("/a/b")));
        let c = policy(&["/*", "/a/*"], &["/a/?"]).compile();
        assert!(!c.is_indexed(&p("/a")));
        assert!(c.is_indexed(&p("/a/b")));
        // Depth first: a deeper `/*` beats shallower rules of either kind.
        let c = policy(&["/a/b/*"], &["/*", "/a/?"]).compile();
        assert!(c.is_indexed(&p("/a/b")));
        assert!(!c.is_indexed(&p("/a")));
    }

    #[test]
    fn array_paths() {
        let c = policy(&["/tags/[]/name/?"], &["/*"]).compile();
        assert!(c.is_indexed(&p("/tags/0/name")));
        assert!(c.is_indexed(&p("/tags/7/name")));
        assert!(!c.is_indexed(&p("/tags/0/id")));
        assert!(
            !c.is_indexed(&p("/tags/name")),
            "[] matches array positions, not properties"
        );

        let c = policy(&["/*"], &["/tags/[]/*"]).compile();
        assert!(!c.is_indexed(&p("/tags/0")));
        assert!(!c.is_indexed(&p("/tags/3/x/y")));
        assert!(c.is_indexed(&p("/tags2/0")));

        // A concrete position beats [] at the same depth; digit names address positions.
        let c = policy(&["/*", "/tags/0/?"], &["/tags/[]/?"]).compile();
        assert!(c.is_indexed(&p("/tags/0")));
        assert!(!c.is_indexed(&p("/tags/1")));
        let c = policy(&["/*", "/tags/[1]/?"], &["/tags/[]/?"]).compile();
        assert!(c.is_indexed(&p("/tags/1")));
        assert!(!c.is_indexed(&p("/tags/0")));
        let c = policy(&["/*", "/m/[]/?"], &["/m/0/?"]).compile();
        assert!(!c.is_indexed(&p("/m/0")));
        assert!(c.is_indexed(&p("/m/2")));
        // `/tags/?` is the scalar at tags, not the elements of an array there.
        let c = policy(&["/tags/?"], &["/*"]).compile();
        assert!(!c.is_indexed(&p("/tags/0")));
        assert!(c.is_indexed(&p("/tags")));
    }

    #[test]
    fn quoted_segments_match_the_bare_name() {
        let c = policy(&[r#"/"my-prop"/?"#, r#"/"a b"/*"#], &["/*"]).compile();
        assert!(c.is_indexed(&[PathSegment::Property("my-prop".into())]));
        assert!(c.is_indexed(&[
            PathSegment::Property("a b".into()),
            PathSegment::Property("c".into())
        ]));
        assert!(!c.is_indexed(&[PathSegment::Property("\"my-prop\"".into())]));

        let d = IndexingPolicy::default().compile();
        assert!(!d.is_indexed(&p("/_etag")));
        assert!(d.is_indexed(&p("/_etag2")));
        assert!(
            d.is_indexed(&p("/_etag/x")),
            "/\"_etag\"/? covers only the scalar"
        );
    }

    #[test]
    fn ties_go_to_exclusion() {
        // Invalid as written (a duplicate) but still decided deterministically.
        let c = policy(&["/*", "/a/?"], &[r#"/"a"/?"#]).compile();
        assert!(!c.is_indexed(&p("/a")));
    }

    #[test]
    fn mode_none_indexes_nothing() {
        let none = IndexingPolicy::none();
        let c = none.compile();
        assert!(!c.is_indexing_enabled());
        assert!(!c.is_indexed(&p("/name")));
        assert_eq!(
            c.count_indexed_terms(&json!({"id": "1", "a": [1, 2, 3]})),
            0
        );
    }

    #[test]
    fn empty_consistent_policy_behaves_like_the_default() {
        let c = from_json(json!({"indexingMode": "consistent"})).compile();
        assert!(c.is_indexed(&p("/anything/0/deep")));
        assert!(!c.is_indexed(&p("/_etag")));
        assert!(!c.is_indexed(&[]));
    }

    // --- counting -----------------------------------------------------------------------

    fn sample() -> Value {
        json!({
            "id": "1",
            "_ts": 1700000000,
            "_etag": "\"0000\"",
            "name": "widget",
            "price": 9.5,
            "active": true,
            "note": null,
            "tags": [
                {"name": "a", "weight": 1},
                {"name": "b", "weight": 2},
                "loose"
            ],
            "dims": {"w": 1, "h": 2, "inner": {"deep": [1, 2, [3, 4]]}},
            "emptyObj": {},
            "emptyArr": []
        })
    }

    #[test]
    fn counts_terms_under_the_default_policy() {
        // Leaves: id, _ts, _etag, name, price, active, note (7), tags: 2*2 + 1 (5),
        // dims: w, h, 1, 2, 3, 4 (6) = 18; _etag is excluded.
        let policy = IndexingPolicy::default();
        assert_eq!(policy.count_indexed_terms(&sample()), 17);
        assert_eq!(policy.compile().count_indexed_terms(&json!({})), 0);
        assert_eq!(
            policy.compile().count_indexed_terms(&json!("scalar root")),
            0
        );
    }

    #[test]
    fn counts_terms_under_a_restrictive_policy() {
        let c = policy(&["/tags/[]/name/?", "/dims/inner/*", "/name/?"], &["/*"]).compile();
        // id, _ts (always) + name + tags[0].name, tags[1].name + 1, 2, 3, 4 = 9
        assert_eq!(c.count_indexed_terms(&sample()), 9);

        let c = policy(&["/*"], &["/tags/*", "/dims/inner/deep/[]/?"]).compile();
        // 17 default terms minus 5 under tags minus deep's 1 and 2 (3 and 4 are one level deeper).
        assert_eq!(c.count_indexed_terms(&sample()), 10);
    }

    #[test]
    fn count_agrees_with_is_indexed_leaf_by_leaf() {
        fn leaves(v: &Value, path: &mut Vec<PathSegment>, out: &mut Vec<Vec<PathSegment>>) {
            match v {
                Value::Object(m) => {
                    for (k, child) in m {
                        path.push(PathSegment::Property(k.clone()));
                        leaves(child, path, out);
                        path.pop();
                    }
                }
                Value::Array(a) => {
                    for (i, child) in a.iter().enumerate() {
                        path.push(PathSegment::Index(i));
                        leaves(child, path, out);
                        path.pop();
                    }
                }
                _ => out.push(path.clone()),
            }
        }
        let mut all = Vec::new();
        leaves(&sample(), &mut Vec::new(), &mut all);
        for policy in [
            IndexingPolicy::default(),
            policy(&["/tags/[]/name/?", "/dims/inner/*"], &["/*"]),
            policy(
                &["/*", "/dims/inner/deep/[]/[]/?"],
                &["/dims/*", "/tags/0/*"],
            ),
            policy(&["/*", "/tags/[]/?"], &["/tags/*"]),
        ] {
            let c = policy.compile();
            let expected = all.iter().filter(|path| c.is_indexed(path)).count();
            assert_eq!(c.count_indexed_terms(&sample()), expected, "{policy:?}");
        }
    }

    #[test]
    fn deep_documents_do_not_overflow() {
        let mut doc = json!(1);
        for _ in 0..100_000 {
            doc = Value::Array(vec![doc]);
        }
        // Built by hand: `json!` would serialise the nested value recursively.
        let mut root = Map::new();
        root.insert("deep".to_string(), doc);
        let doc = Value::Object(root);
        assert_eq!(IndexingPolicy::default().count_indexed_terms(&doc), 1);
        assert_eq!(
            policy(&["/*"], &["/deep/[]/[]/[]/?"]).count_indexed_terms(&doc),
            1
        );
        // serde_json drops nested values recursively; leak to keep the test about the walk.
        std::mem::forget(doc);
    }
}
