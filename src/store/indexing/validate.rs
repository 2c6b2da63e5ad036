//! Checking a policy document the way the service does on container create and replace:
//! the mode and its paths, the service's limits, duplicate paths (compared by meaning, so
//! `/a/?` and `/"a"/?` collide), composite indexes, and the shape of the vector and
//! full-text indexes. The first problem is reported.

use std::collections::HashMap;

use super::error::{PathList, PolicyError, SearchIndexList};
use super::path::{
    PolicyPath, PolicySegment, parse_composite_path, parse_policy_path, parse_search_path,
};
use super::policy::{IndexingMode, IndexingPolicy, VectorIndex, VectorIndexType};

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
/// The GeoJSON types a spatial index serves (index-policy.md).
pub const SPATIAL_TYPES: [&str; 4] = ["Point", "Polygon", "MultiPolygon", "LineString"];
/// Documented range of `quantizationByteSize` (quantizedFlat and diskANN).
pub const QUANTIZATION_BYTE_SIZE: std::ops::RangeInclusive<u32> = 1..=512;
/// Documented range of `indexingSearchListSize` (diskANN only).
pub const INDEXING_SEARCH_LIST_SIZE: std::ops::RangeInclusive<u32> = 10..=500;

impl IndexingPolicy {
    /// Checks the policy the way the service does on container create/replace and
    /// reports the first problem.
    pub fn validate(&self) -> Result<(), PolicyError> {
        self.validate_mode()?;
        self.validate_paths()?;
        self.validate_composite_indexes()?;
        self.validate_spatial_indexes()?;
        self.validate_search_indexes()
    }

    /// `spatialIndexes`: a list of `{path, types}` whose path is a valid index path and
    /// whose types are the four GeoJSON types a spatial index serves (index-policy.md:
    /// "Point, Polygon, MultiPolygon, and LineString"). They are kept, not interpreted:
    /// the spatial functions evaluate on the loaded items.
    fn validate_spatial_indexes(&self) -> Result<(), PolicyError> {
        let Some(spatial) = &self.spatial_indexes else {
            return Ok(());
        };
        let bad = |index, reason: String| PolicyError::InvalidSpatialIndex { index, reason };
        let serde_json::Value::Array(entries) = spatial else {
            return Err(bad(0, "spatialIndexes must be a list".into()));
        };
        for (index, entry) in entries.iter().enumerate() {
            let Some(path) = entry.get("path").and_then(serde_json::Value::as_str) else {
                return Err(bad(index, "it needs a string \"path\"".into()));
            };
            parse_policy_path(path)?;
            let types = match entry.get("types") {
                None => continue,
                Some(serde_json::Value::Array(types)) => types,
                Some(other) => {
                    return Err(bad(index, format!("\"types\" must be a list, got {other}")));
                }
            };
            for t in types {
                if !t.as_str().is_some_and(|t| {
                    SPATIAL_TYPES
                        .iter()
                        .any(|known| known.eq_ignore_ascii_case(t))
                }) {
                    return Err(bad(index, format!("{t} is not a spatial type")));
                }
            }
        }
        Ok(())
    }

    /// `lazy` is refused for new containers; `none` takes no paths and no automatic indexing.
    fn validate_mode(&self) -> Result<(), PolicyError> {
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
        Ok(())
    }

    /// The included and excluded paths: how many, their syntax, each path once (by meaning),
    /// tuples only where they are allowed, and the root placed somewhere.
    fn validate_paths(&self) -> Result<(), PolicyError> {
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
        Ok(())
    }

    /// How many composite indexes, how many paths each, their syntax, no path twice in one.
    fn validate_composite_indexes(&self) -> Result<(), PolicyError> {
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
        Ok(())
    }

    /// The shape of `vectorIndexes` and `fullTextIndexes` on their own: path syntax, one
    /// index per path, tuning parameters. Whether the paths are in the container's vector
    /// embedding and full-text policies is checked by
    /// [`crate::store::search_policy::validate_search_indexes`].
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
            let parsed =
                parse_search_path(path).map_err(|reason| PolicyError::InvalidSearchIndexPath {
                    list,
                    path: path.clone(),
                    reason,
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
}

impl VectorIndex {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::indexing::policy::{CompositeOrder, CompositePath, PathSpec};
    use crate::store::indexing::test_support::{err, from_json, policy};
    use serde_json::json;

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
}
