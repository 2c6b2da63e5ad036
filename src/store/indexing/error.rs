//! Why an indexing policy (or one of its paths) is refused, with messages modelled on the
//! service's 400 responses. A leaf: every other part of the policy reports through it.

use std::fmt;

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
        "The spatial index at position {index} could not be accepted: {reason}. A spatial \
         index is {{\"path\": \"/location/*\", \"types\": [\"Point\", \"Polygon\", \
         \"MultiPolygon\", \"LineString\"]}}."
    )]
    InvalidSpatialIndex { index: usize, reason: String },

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
