//! A container's vector embedding policy and full-text policy, as Azure Cosmos DB for NoSQL
//! defines them, and the check that the indexing policy's `vectorIndexes` and
//! `fullTextIndexes` name paths those policies declare.
//!
//! Both policies are set when the container is created. The documentation says vector
//! policies and vector indexes are immutable after creation ("to make changes, create a new
//! collection"), so [`check_vector_indexes_unchanged`] refuses an indexing policy
//! replacement that touches `vectorIndexes`. It says nothing of the kind about full-text
//! indexes, so those may change with the indexing policy, always within the full-text
//! policy. It does not document changing the full-text policy itself either, so this store
//! offers no way to: it is a creation setting like the partition key.
//!
//! Where the documentation is silent this module decides, and the tests pin it down:
//! - vector `dimensions` must be 1 to 4096, the largest any documented vector index
//!   accepts (the policy's own bound is not published);
//! - a missing `dataType`, `dimensions` or `distanceFunction` takes the documented default
//!   (`float32`, 1536, `cosine`); a missing `defaultLanguage` is `en-US`, the one language
//!   with every text-processing step; a full-text path must name its `language` ("you must
//!   declare both the path and the language");
//! - names of data types, distance functions and languages compare without case (the
//!   documentation writes `Float32` and `en-us` as well as `float32` and `en-US`); policies
//!   are written back with the service's spelling of types and functions, and languages as
//!   given;
//! - members a policy does not define are rejected, so a typo such as `dimension` is
//!   reported instead of silently taking the default; `datatype` is accepted for
//!   `dataType`, since the documentation's parameter tables spell it that way;
//! - paths use the property-path grammar of composite indexes (`/a/b`, `/"my-prop"`) and
//!   compare by meaning, so `/a` and `/"a"` are one path. Wildcards (`*`, `[]`) and array
//!   positions are refused: vectors nested inside arrays are not supported.
//!
//! Leaving vector paths in the regular index is allowed: the documentation recommends
//! excluding them (inserts cost less) but does not require it.
//!
//! This module sits above [`super::indexing`]: it uses the indexing policy's types and its
//! path grammar (where the search path parser lives, since the indexing policy's own vector
//! and full-text indexes are written in it); the indexing policy never depends on this
//! module.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::indexing::{IndexingPolicy, PolicySegment, QUANTIZED_MAX_DIMENSIONS, same_path};
/// The search path parser lives with the indexing policy's path grammar (see the module
/// notes); it is named here too, where its callers look for it.
pub use super::indexing::{parse_search_path, same_search_path};
use crate::error::{Error, Result};

/// Smallest number of dimensions a vector path may declare.
pub const MIN_DIMENSIONS: u32 = 1;
/// Largest number of dimensions a vector path may declare (see the module notes).
pub const MAX_DIMENSIONS: u32 = QUANTIZED_MAX_DIMENSIONS;
/// Documented default of `dimensions`.
pub const DEFAULT_DIMENSIONS: u32 = 1536;
/// Language of a full-text policy that names none.
pub const DEFAULT_LANGUAGE: &str = "en-US";
/// Languages the full-text documentation lists (English is generally available, the others
/// are in preview).
pub const FULL_TEXT_LANGUAGES: [&str; 7] = [
    "en-US", "de-DE", "es-ES", "fr-FR", "it-IT", "pt-PT", "pt-BR",
];

// ---------------------------------------------------------------------------------------
// Vector embedding policy
// ---------------------------------------------------------------------------------------

/// Element type of the vectors at one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum VectorDataType {
    #[default]
    Float32,
    Float16,
    Int8,
    Uint8,
}

impl VectorDataType {
    pub const ALL: [VectorDataType; 4] = [
        VectorDataType::Float32,
        VectorDataType::Float16,
        VectorDataType::Int8,
        VectorDataType::Uint8,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            VectorDataType::Float32 => "float32",
            VectorDataType::Float16 => "float16",
            VectorDataType::Int8 => "int8",
            VectorDataType::Uint8 => "uint8",
        }
    }

    pub fn parse(value: &str) -> Result<VectorDataType> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(value))
            .ok_or_else(|| {
                Error::bad_request(format!(
                    "The vector data type '{value}' is invalid. Choose between 'float32', \
                     'float16', 'int8' and 'uint8'."
                ))
            })
    }
}

/// How `VectorDistance` compares two vectors of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DistanceFunction {
    /// Cosine similarity, -1 (least similar) to +1 (most similar).
    #[default]
    Cosine,
    /// Dot product, -inf (least similar) to +inf (most similar).
    DotProduct,
    /// Euclidean distance, 0 (most similar) to +inf (least similar).
    Euclidean,
}

impl DistanceFunction {
    pub const ALL: [DistanceFunction; 3] = [
        DistanceFunction::Cosine,
        DistanceFunction::DotProduct,
        DistanceFunction::Euclidean,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DistanceFunction::Cosine => "cosine",
            DistanceFunction::DotProduct => "dotproduct",
            DistanceFunction::Euclidean => "euclidean",
        }
    }

    pub fn parse(value: &str) -> Result<DistanceFunction> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(value))
            .ok_or_else(|| {
                Error::bad_request(format!(
                    "The distance function '{value}' is invalid. Choose between 'cosine', \
                     'dotproduct' and 'euclidean'."
                ))
            })
    }

    /// Whether a larger score means more similar (cosine, dot product) or less (euclidean):
    /// what `ORDER BY VectorDistance(...)` sorts by.
    pub fn higher_is_closer(self) -> bool {
        !matches!(self, DistanceFunction::Euclidean)
    }
}

macro_rules! string_enum_serde {
    ($ty:ty) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let value = String::deserialize(d)?;
                <$ty>::parse(&value).map_err(|e| D::Error::custom(e.message))
            }
        }
    };
}

string_enum_serde!(VectorDataType);
string_enum_serde!(DistanceFunction);

fn default_dimensions() -> u32 {
    DEFAULT_DIMENSIONS
}

/// One vector path: where vectors live and how they are compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VectorEmbedding {
    pub path: String,
    #[serde(default, alias = "datatype")]
    pub data_type: VectorDataType,
    #[serde(default = "default_dimensions")]
    pub dimensions: u32,
    #[serde(default)]
    pub distance_function: DistanceFunction,
}

impl VectorEmbedding {
    pub fn new(
        path: impl Into<String>,
        data_type: VectorDataType,
        dimensions: u32,
        distance_function: DistanceFunction,
    ) -> VectorEmbedding {
        VectorEmbedding {
            path: path.into(),
            data_type,
            dimensions,
            distance_function,
        }
    }
}

/// The container's `vectorEmbeddingPolicy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VectorEmbeddingPolicy {
    #[serde(default)]
    pub vector_embeddings: Vec<VectorEmbedding>,
}

impl VectorEmbeddingPolicy {
    /// Parses the policy object (the value of `vectorEmbeddingPolicy`); 400 on a malformed
    /// or invalid one. Does not validate: call [`VectorEmbeddingPolicy::validate`].
    pub fn from_json(value: Value) -> Result<VectorEmbeddingPolicy> {
        serde_json::from_value(value)
            .map_err(|e| Error::bad_request(format!("invalid vector embedding policy: {e}")))
    }

    /// Checks the policy as the service does on container creation; 400 names the first
    /// problem.
    pub fn validate(&self) -> Result<()> {
        let fail = |m: String| {
            Err(Error::bad_request(format!(
                "invalid vector embedding policy: {m}"
            )))
        };
        let mut seen: Vec<Vec<PolicySegment>> = Vec::new();
        for e in &self.vector_embeddings {
            let parsed = match parse_search_path(&e.path) {
                Ok(p) => p,
                Err(reason) => {
                    return fail(format!(
                        "the vector path '{}' could not be accepted: {reason}",
                        e.path
                    ));
                }
            };
            if seen.contains(&parsed) {
                return fail(format!(
                    "the path '{}' is listed more than once; each path can have only one \
                     vector embedding",
                    e.path
                ));
            }
            seen.push(parsed);
            if !(MIN_DIMENSIONS..=MAX_DIMENSIONS).contains(&e.dimensions) {
                return fail(format!(
                    "the vector path '{}' has {} dimensions; give {MIN_DIMENSIONS} to \
                     {MAX_DIMENSIONS}, the length of every vector stored at that path",
                    e.path, e.dimensions
                ));
            }
        }
        Ok(())
    }

    /// The embedding declared for `path` (a property path such as `/vector1` or `/a/b`;
    /// quoting does not matter).
    pub fn embedding_for(&self, path: &str) -> Option<&VectorEmbedding> {
        let wanted = parse_search_path(path).ok();
        self.vector_embeddings
            .iter()
            .find(|e| same_path(&e.path, path, wanted.as_deref()))
    }
}

// ---------------------------------------------------------------------------------------
// Full-text policy
// ---------------------------------------------------------------------------------------

fn default_language() -> String {
    DEFAULT_LANGUAGE.to_string()
}

/// One text path and the language its text is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FullTextPath {
    pub path: String,
    pub language: String,
}

/// The container's `fullTextPolicy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FullTextPolicy {
    #[serde(default = "default_language")]
    pub default_language: String,
    #[serde(default)]
    pub full_text_paths: Vec<FullTextPath>,
}

impl Default for FullTextPolicy {
    fn default() -> FullTextPolicy {
        FullTextPolicy {
            default_language: default_language(),
            full_text_paths: Vec::new(),
        }
    }
}

impl FullTextPolicy {
    /// Parses the policy object (the value of `fullTextPolicy`); 400 on a malformed one.
    /// Does not validate: call [`FullTextPolicy::validate`].
    pub fn from_json(value: Value) -> Result<FullTextPolicy> {
        serde_json::from_value(value)
            .map_err(|e| Error::bad_request(format!("invalid full-text policy: {e}")))
    }

    /// Checks the policy as the service does on container creation; 400 names the first
    /// problem.
    pub fn validate(&self) -> Result<()> {
        let fail = |m: String| Err(Error::bad_request(format!("invalid full-text policy: {m}")));
        if let Err(m) = check_language(&self.default_language) {
            return fail(format!("defaultLanguage: {m}"));
        }
        let mut seen: Vec<Vec<PolicySegment>> = Vec::new();
        for p in &self.full_text_paths {
            let parsed = match parse_search_path(&p.path) {
                Ok(parsed) => parsed,
                Err(reason) => {
                    return fail(format!(
                        "the full-text path '{}' could not be accepted: {reason}",
                        p.path
                    ));
                }
            };
            if seen.contains(&parsed) {
                return fail(format!(
                    "the path '{}' is listed more than once in fullTextPaths; list each text \
                     path once",
                    p.path
                ));
            }
            seen.push(parsed);
            if let Err(m) = check_language(&p.language) {
                return fail(format!("the language of '{}': {m}", p.path));
            }
        }
        Ok(())
    }

    /// The language declared for `path` (as in the policy, e.g. `/text`); `None` when the
    /// path is not a full-text path.
    pub fn language_for(&self, path: &str) -> Option<&str> {
        let wanted = parse_search_path(path).ok();
        self.full_text_paths
            .iter()
            .find(|p| same_path(&p.path, path, wanted.as_deref()))
            .map(|p| p.language.as_str())
    }
}

fn check_language(language: &str) -> std::result::Result<(), String> {
    if FULL_TEXT_LANGUAGES
        .iter()
        .any(|l| l.eq_ignore_ascii_case(language))
    {
        Ok(())
    } else {
        Err(format!(
            "the language '{language}' is not supported; choose one of {}",
            FULL_TEXT_LANGUAGES.join(", ")
        ))
    }
}

// ---------------------------------------------------------------------------------------
// Cross-checks with the indexing policy
// ---------------------------------------------------------------------------------------

/// Checks the indexing policy's vector and full-text indexes against the container's
/// policies: every vector index path is in the vector embedding policy with no more
/// dimensions than its index type takes, and every full-text index path is in the
/// full-text policy. Run at container creation and on every indexing policy replacement,
/// after [`IndexingPolicy::validate`]. 400 names the first problem.
pub fn validate_search_indexes(
    policy: &IndexingPolicy,
    vector: Option<&VectorEmbeddingPolicy>,
    full_text: Option<&FullTextPolicy>,
) -> Result<()> {
    for index in &policy.vector_indexes {
        let Some(embedding) = vector.and_then(|v| v.embedding_for(&index.path)) else {
            let declared = match vector {
                Some(v) if !v.vector_embeddings.is_empty() => format!(
                    "its vector paths are {}",
                    v.vector_embeddings
                        .iter()
                        .map(|e| e.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                _ => "the container has no vector embedding policy".to_string(),
            };
            return Err(Error::bad_request(format!(
                "invalid indexing policy: the vector index path '{}' is not in the container's \
                 vector embedding policy ({declared}). A vector index must be on a path of \
                 the vector embedding policy, which is set when the container is created.",
                index.path
            )));
        };
        let max = index.index_type.max_dimensions();
        if embedding.dimensions > max {
            return Err(Error::bad_request(format!(
                "invalid indexing policy: a '{}' vector index takes vectors of at most {max} \
                 dimensions, but '{}' has {} in the vector embedding policy. Use 'quantizedFlat' \
                 or 'diskANN' (up to {QUANTIZED_MAX_DIMENSIONS} dimensions).",
                index.index_type, index.path, embedding.dimensions
            )));
        }
    }
    for index in &policy.full_text_indexes {
        if full_text
            .and_then(|f| f.language_for(&index.path))
            .is_none()
        {
            let declared = match full_text {
                Some(f) if !f.full_text_paths.is_empty() => format!(
                    "its text paths are {}",
                    f.full_text_paths
                        .iter()
                        .map(|p| p.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                _ => "the container has no full-text policy".to_string(),
            };
            return Err(Error::bad_request(format!(
                "invalid indexing policy: the full-text index path '{}' is not in the \
                 container's full-text policy ({declared}). A full-text index must be on a \
                 path of the full-text policy, which is set when the container is created.",
                index.path
            )));
        }
    }
    Ok(())
}

/// Refuses an indexing policy replacement that adds, removes or changes a vector index:
/// the documentation says vector indexes are immutable after creation. Order does not
/// matter, nor does how a path is quoted.
pub fn check_vector_indexes_unchanged(
    current: &IndexingPolicy,
    replacement: &IndexingPolicy,
) -> Result<()> {
    let canonical = |p: &IndexingPolicy| {
        let mut v: Vec<_> = p
            .vector_indexes
            .iter()
            .map(|i| {
                let mut i = i.clone();
                if let Ok(segments) = parse_search_path(&i.path) {
                    i.path = format!("{segments:?}");
                }
                i
            })
            .collect();
        v.sort_by(|a, b| a.path.cmp(&b.path));
        v
    };
    if canonical(current) == canonical(replacement) {
        return Ok(());
    }
    Err(Error::bad_request(
        "invalid indexing policy: vector indexes cannot be added, removed or changed after \
         the container is created. Keep vectorIndexes as they are, or create a new container \
         with the vector indexes you want.",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::indexing::{FullTextIndex, VectorIndex, VectorIndexType};
    use serde_json::json;

    fn vector_policy(v: Value) -> VectorEmbeddingPolicy {
        VectorEmbeddingPolicy::from_json(v).expect("vector policy json")
    }

    fn text_policy(v: Value) -> FullTextPolicy {
        FullTextPolicy::from_json(v).expect("full-text policy json")
    }

    fn message(r: Result<()>) -> String {
        let e = r.expect_err("should be rejected");
        assert_eq!(e.status, 400, "{}", e.message);
        e.message
    }

    fn indexing(v: Value) -> IndexingPolicy {
        serde_json::from_value(v).expect("indexing policy json")
    }

    #[test]
    fn parses_the_documented_vector_policy_and_round_trips() {
        let input = json!({"vectorEmbeddings": [
            {"path": "/vector1", "dataType": "float32", "distanceFunction": "cosine", "dimensions": 1536},
            {"path": "/vector2", "dataType": "float16", "distanceFunction": "dotproduct", "dimensions": 100},
            {"path": "/v/three", "dataType": "int8", "distanceFunction": "euclidean", "dimensions": 8},
            {"path": "/v/four", "dataType": "uint8", "distanceFunction": "cosine", "dimensions": 4}
        ]});
        let policy = vector_policy(input.clone());
        assert!(policy.validate().is_ok());
        assert_eq!(
            policy.vector_embeddings[1].data_type,
            VectorDataType::Float16
        );
        assert_eq!(
            policy.vector_embeddings[1].distance_function,
            DistanceFunction::DotProduct
        );
        assert_eq!(policy.vector_embeddings[2].data_type, VectorDataType::Int8);
        assert_eq!(policy.vector_embeddings[3].data_type, VectorDataType::Uint8);
        assert_eq!(serde_json::to_value(&policy).unwrap(), input);
    }

    #[test]
    fn vector_fields_take_the_documented_defaults_and_any_case() {
        let policy = vector_policy(json!({"vectorEmbeddings": [
            {"path": "/v"},
            {"path": "/w", "datatype": "Float32", "distanceFunction": "DotProduct", "dimensions": 3}
        ]}));
        assert_eq!(
            policy.vector_embeddings[0],
            VectorEmbedding::new(
                "/v",
                VectorDataType::Float32,
                1536,
                DistanceFunction::Cosine
            )
        );
        assert_eq!(
            serde_json::to_value(&policy.vector_embeddings[1]).unwrap(),
            json!({"path": "/w", "dataType": "float32", "dimensions": 3, "distanceFunction": "dotproduct"})
        );
        assert_eq!(vector_policy(json!({})), VectorEmbeddingPolicy::default());
        assert!(DistanceFunction::Cosine.higher_is_closer());
        assert!(!DistanceFunction::Euclidean.higher_is_closer());
    }

    #[test]
    fn rejects_unknown_data_types_functions_and_members() {
        let e = VectorEmbeddingPolicy::from_json(json!({"vectorEmbeddings": [
            {"path": "/v", "dataType": "float64"}
        ]}))
        .unwrap_err();
        assert_eq!(e.status, 400);
        assert!(
            e.message
                .contains("The vector data type 'float64' is invalid"),
            "{}",
            e.message
        );
        let e = VectorEmbeddingPolicy::from_json(json!({"vectorEmbeddings": [
            {"path": "/v", "distanceFunction": "manhattan"}
        ]}))
        .unwrap_err();
        assert!(
            e.message
                .contains("The distance function 'manhattan' is invalid"),
            "{}",
            e.message
        );
        let e = VectorEmbeddingPolicy::from_json(json!({"vectorEmbeddings": [
            {"path": "/v", "dimension": 3}
        ]}))
        .unwrap_err();
        assert!(
            e.message.contains("unknown field `dimension`"),
            "{}",
            e.message
        );
        let e = VectorEmbeddingPolicy::from_json(json!({"vectorEmbeddings": [
            {"path": "/v", "dimensions": -1}
        ]}))
        .unwrap_err();
        assert_eq!(e.status, 400);
        let e = VectorEmbeddingPolicy::from_json(json!({"vectorEmbeddings": [{"dimensions": 3}]}))
            .unwrap_err();
        assert!(e.message.contains("missing field `path`"), "{}", e.message);
        let e = VectorEmbeddingPolicy::from_json(json!([1, 2])).unwrap_err();
        assert_eq!(e.status, 400);
    }

    #[test]
    fn rejects_bad_vector_paths_duplicates_and_dimensions() {
        let check = |v: Value| message(vector_policy(json!({"vectorEmbeddings": [v]})).validate());
        for (path, why) in [
            ("vector", "expected a path starting with '/'"),
            ("/", "expected a property name after '/'"),
            ("/v/*", "wildcards"),
            ("/v/?", "wildcards"),
            ("/v/[]", "array steps"),
            ("/v/[0]/x", "array steps"),
            ("/a b", "failed near position 2"),
        ] {
            let m = check(json!({"path": path, "dimensions": 3}));
            assert!(m.contains(&format!("the vector path '{path}'")), "{m}");
            assert!(m.contains(why), "{path}: {m}");
        }
        let m = check(json!({"path": "/v", "dimensions": 0}));
        assert!(m.contains("has 0 dimensions; give 1 to 4096"), "{m}");
        let m = check(json!({"path": "/v", "dimensions": 4097}));
        assert!(m.contains("has 4097 dimensions"), "{m}");
        assert!(
            vector_policy(json!({"vectorEmbeddings": [{"path": "/v", "dimensions": 4096}]}))
                .validate()
                .is_ok()
        );
        let m = message(
            vector_policy(json!({"vectorEmbeddings": [
                {"path": "/v", "dimensions": 3}, {"path": "/\"v\"", "dimensions": 4}
            ]}))
            .validate(),
        );
        assert!(
            m.contains("the path '/\"v\"' is listed more than once"),
            "{m}"
        );
    }

    #[test]
    fn embedding_for_matches_paths_by_meaning() {
        let policy = vector_policy(json!({"vectorEmbeddings": [
            {"path": "/vector1", "dimensions": 3},
            {"path": "/a/b", "dimensions": 4},
            {"path": "/\"my-vec\"", "dimensions": 5}
        ]}));
        assert_eq!(policy.embedding_for("/vector1").unwrap().dimensions, 3);
        assert_eq!(policy.embedding_for("/\"vector1\"").unwrap().dimensions, 3);
        assert_eq!(policy.embedding_for("/a/b").unwrap().dimensions, 4);
        assert_eq!(policy.embedding_for("/\"my-vec\"").unwrap().dimensions, 5);
        assert!(policy.embedding_for("/a").is_none());
        assert!(policy.embedding_for("/vector2").is_none());
        assert!(policy.embedding_for("not a path").is_none());
    }

    #[test]
    fn parses_the_documented_full_text_policy_and_round_trips() {
        let input = json!({
            "defaultLanguage": "en-US",
            "fullTextPaths": [
                {"path": "/text1", "language": "en-US"},
                {"path": "/text2", "language": "de-DE"}
            ]
        });
        let policy = text_policy(input.clone());
        assert!(policy.validate().is_ok());
        assert_eq!(serde_json::to_value(&policy).unwrap(), input);
        assert_eq!(policy.language_for("/text2"), Some("de-DE"));
        assert_eq!(policy.language_for("/\"text1\""), Some("en-US"));
        assert_eq!(policy.language_for("/text3"), None);
        // Defaults, and languages in any case as the documentation writes them.
        let policy = text_policy(json!({"fullTextPaths": [{"path": "/t", "language": "en-us"}]}));
        assert_eq!(policy.default_language, "en-US");
        assert!(policy.validate().is_ok());
        assert_eq!(text_policy(json!({})), FullTextPolicy::default());
    }

    #[test]
    fn rejects_bad_full_text_policies() {
        let check = |v: Value| message(text_policy(v).validate());
        let m = check(json!({"defaultLanguage": "xx-XX"}));
        assert!(
            m.contains("defaultLanguage: the language 'xx-XX' is not supported"),
            "{m}"
        );
        let m = check(json!({"fullTextPaths": [{"path": "/t", "language": "klingon"}]}));
        assert!(m.contains("the language of '/t'"), "{m}");
        assert!(m.contains("en-US, de-DE"), "{m}");
        let m = check(json!({"fullTextPaths": [{"path": "/tags/[]", "language": "en-US"}]}));
        assert!(
            m.contains("the full-text path '/tags/[]'") && m.contains("array steps"),
            "{m}"
        );
        let m = check(json!({"fullTextPaths": [{"path": "/t/*", "language": "en-US"}]}));
        assert!(m.contains("wildcards"), "{m}");
        let m = check(json!({"fullTextPaths": [{"path": "t", "language": "en-US"}]}));
        assert!(m.contains("starting with '/'"), "{m}");
        let m = check(json!({"fullTextPaths": [
            {"path": "/t", "language": "en-US"}, {"path": "/t", "language": "fr-FR"}
        ]}));
        assert!(m.contains("listed more than once"), "{m}");
        let e = FullTextPolicy::from_json(json!({"fullTextPaths": [{"path": "/t"}]})).unwrap_err();
        assert!(
            e.message.contains("missing field `language`"),
            "{}",
            e.message
        );
        let e = FullTextPolicy::from_json(json!({"fullTextPolicy": []})).unwrap_err();
        assert!(
            e.message.contains("unknown field `fullTextPolicy`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn vector_indexes_parse_typed_and_round_trip() {
        let input = json!({
            "indexingMode": "consistent",
            "automatic": true,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/\"_etag\"/?"}, {"path": "/v1/*"}],
            "vectorIndexes": [
                {"path": "/v1", "type": "diskANN", "quantizationByteSize": 96,
                 "indexingSearchListSize": 100, "vectorIndexShardKey": ["/tenant"]},
                {"path": "/v2", "type": "quantizedFlat", "futureKnob": true},
                {"path": "/v3", "type": "flat"}
            ],
            "fullTextIndexes": [{"path": "/text"}]
        });
        let policy = indexing(input.clone());
        assert!(policy.validate().is_ok());
        assert_eq!(
            policy.vector_indexes[0].index_type,
            VectorIndexType::DiskAnn
        );
        assert_eq!(policy.vector_indexes[0].quantization_byte_size, Some(96));
        assert_eq!(policy.vector_indexes[1].extra["futureKnob"], json!(true));
        assert_eq!(policy.full_text_indexes, vec![FullTextIndex::new("/text")]);
        assert_eq!(serde_json::to_value(&policy).unwrap(), input);
        // The documentation also writes `DiskANN`; the service's spelling is written back.
        let policy = indexing(json!({"vectorIndexes": [{"path": "/v", "type": "DiskANN"}]}));
        assert_eq!(
            policy.vector_indexes,
            vec![VectorIndex::new("/v", VectorIndexType::DiskAnn)]
        );
        let e = serde_json::from_value::<IndexingPolicy>(
            json!({"vectorIndexes": [{"path": "/v", "type": "hnsw"}]}),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("The vector index type 'hnsw' is invalid"),
            "{e}"
        );
        let e =
            serde_json::from_value::<IndexingPolicy>(json!({"vectorIndexes": [{"path": "/v"}]}))
                .unwrap_err();
        assert!(e.to_string().contains("missing field `type`"), "{e}");
    }

    #[test]
    fn indexing_policy_rejects_malformed_search_indexes() {
        let check = |v: Value| indexing(v).validate().expect_err("rejected").to_string();
        let m = check(json!({"vectorIndexes": [{"path": "/v/*", "type": "flat"}]}));
        assert!(
            m.contains("The vectorIndexes path '/v/*' could not be accepted"),
            "{m}"
        );
        let m = check(json!({"fullTextIndexes": [{"path": "/tags/[]/name"}]}));
        assert!(
            m.contains("The fullTextIndexes path '/tags/[]/name'"),
            "{m}"
        );
        let m = check(json!({"vectorIndexes": [
            {"path": "/v", "type": "flat"}, {"path": "/\"v\"", "type": "diskANN"}
        ]}));
        assert!(
            m.contains("specified more than once in vectorIndexes"),
            "{m}"
        );
        let m = check(json!({"fullTextIndexes": [{"path": "/t"}, {"path": "/t"}]}));
        assert!(m.contains("more than once in fullTextIndexes"), "{m}");
        let m = check(
            json!({"indexingMode": "none", "vectorIndexes": [{"path": "/v", "type": "flat"}]}),
        );
        assert!(
            m.contains("vectorIndexes must be empty when the indexing mode is 'none'"),
            "{m}"
        );
        let m = check(json!({"indexingMode": "none", "fullTextIndexes": [{"path": "/t"}]}));
        assert!(m.contains("fullTextIndexes must be empty"), "{m}");
        for (index, why) in [
            (
                json!({"path": "/v", "type": "flat", "quantizationByteSize": 8}),
                "'quantizationByteSize': it applies to",
            ),
            (
                json!({"path": "/v", "type": "diskANN", "quantizationByteSize": 0}),
                "0 is outside 1..=512",
            ),
            (
                json!({"path": "/v", "type": "quantizedFlat", "quantizationByteSize": 513}),
                "513 is outside",
            ),
            (
                json!({"path": "/v", "type": "quantizedFlat", "indexingSearchListSize": 50}),
                "'diskANN' indexes only",
            ),
            (
                json!({"path": "/v", "type": "diskANN", "indexingSearchListSize": 9}),
                "9 is outside 10..=500",
            ),
            (
                json!({"path": "/v", "type": "diskANN", "indexingSearchListSize": 501}),
                "501 is outside",
            ),
            (
                json!({"path": "/v", "type": "flat", "vectorIndexShardKey": ["/t"]}),
                "sharding applies",
            ),
            (
                json!({"path": "/v", "type": "diskANN", "vectorIndexShardKey": ["/t", "/u"]}),
                "one property path",
            ),
            (
                json!({"path": "/v", "type": "diskANN", "vectorIndexShardKey": ["t"]}),
                "one property path",
            ),
        ] {
            let m = check(json!({"vectorIndexes": [index]}));
            assert!(m.contains("The vector index on '/v' has an invalid"), "{m}");
            assert!(m.contains(why), "{why}: {m}");
        }
    }

    fn both_policies() -> (VectorEmbeddingPolicy, FullTextPolicy) {
        (
            vector_policy(json!({"vectorEmbeddings": [
                {"path": "/small", "dimensions": 505},
                {"path": "/large", "dimensions": 1536}
            ]})),
            text_policy(json!({"fullTextPaths": [{"path": "/text", "language": "en-US"}]})),
        )
    }

    #[test]
    fn search_indexes_must_be_on_policy_paths() {
        let (vector, text) = both_policies();
        let ok = indexing(json!({
            "vectorIndexes": [
                {"path": "/small", "type": "flat"},
                {"path": "/large", "type": "diskANN"}
            ],
            "fullTextIndexes": [{"path": "/text"}]
        }));
        assert!(validate_search_indexes(&ok, Some(&vector), Some(&text)).is_ok());
        assert!(validate_search_indexes(&IndexingPolicy::default(), None, None).is_ok());

        let v_elsewhere = indexing(json!({"vectorIndexes": [{"path": "/other", "type": "flat"}]}));
        let m = message(validate_search_indexes(
            &v_elsewhere,
            Some(&vector),
            Some(&text),
        ));
        assert!(
            m.contains("the vector index path '/other' is not in the container's vector embedding policy (its vector paths are /small, /large)"),
            "{m}"
        );
        let m = message(validate_search_indexes(&v_elsewhere, None, None));
        assert!(
            m.contains("the container has no vector embedding policy"),
            "{m}"
        );

        let t_elsewhere = indexing(json!({"fullTextIndexes": [{"path": "/body"}]}));
        let m = message(validate_search_indexes(
            &t_elsewhere,
            Some(&vector),
            Some(&text),
        ));
        assert!(
            m.contains("the full-text index path '/body' is not in the container's full-text policy (its text paths are /text)"),
            "{m}"
        );
        let m = message(validate_search_indexes(&t_elsewhere, Some(&vector), None));
        assert!(m.contains("the container has no full-text policy"), "{m}");
    }

    #[test]
    fn vector_index_types_limit_dimensions() {
        let (vector, _) = both_policies();
        let flat_large = indexing(json!({"vectorIndexes": [{"path": "/large", "type": "flat"}]}));
        let m = message(validate_search_indexes(&flat_large, Some(&vector), None));
        assert!(
            m.contains("a 'flat' vector index takes vectors of at most 505 dimensions, but '/large' has 1536"),
            "{m}"
        );
        for t in ["quantizedFlat", "diskANN"] {
            let p = indexing(json!({"vectorIndexes": [{"path": "/large", "type": t}]}));
            assert!(
                validate_search_indexes(&p, Some(&vector), None).is_ok(),
                "{t}"
            );
        }
        assert_eq!(VectorIndexType::Flat.max_dimensions(), 505);
        assert_eq!(VectorIndexType::DiskAnn.max_dimensions(), 4096);
    }

    #[test]
    fn vector_indexes_cannot_change_after_creation() {
        let current = indexing(json!({"vectorIndexes": [
            {"path": "/a", "type": "flat"}, {"path": "/b", "type": "diskANN"}
        ]}));
        let reordered = indexing(json!({
            "excludedPaths": [{"path": "/x/?"}, {"path": "/*"}],
            "vectorIndexes": [{"path": "/b", "type": "DiskANN"}, {"path": "/\"a\"", "type": "flat"}]
        }));
        assert!(check_vector_indexes_unchanged(&current, &reordered).is_ok());
        for changed in [
            json!({"vectorIndexes": [{"path": "/a", "type": "flat"}]}),
            json!({"vectorIndexes": [{"path": "/a", "type": "quantizedFlat"}, {"path": "/b", "type": "diskANN"}]}),
            json!({"vectorIndexes": [
                {"path": "/a", "type": "flat"},
                {"path": "/b", "type": "diskANN", "indexingSearchListSize": 200}
            ]}),
        ] {
            let m = message(check_vector_indexes_unchanged(&current, &indexing(changed)));
            assert!(
                m.contains("vector indexes cannot be added, removed or changed"),
                "{m}"
            );
        }
        let m = message(check_vector_indexes_unchanged(
            &IndexingPolicy::default(),
            &current,
        ));
        assert!(m.contains("cannot be added"), "{m}");
    }
}
