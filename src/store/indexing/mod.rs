//! A container's indexing policy, as Azure Cosmos DB for NoSQL defines it.
//!
//! The parts, each depending only on those listed before it:
//!
//! - `error`: why a policy is refused, with messages modelled on the service's 400
//!   responses;
//! - `path`: the path grammar (`/a/b/?`, `/a/*`, `/a/[]/b/?`, `/"quoted-name"/?`, tuple
//!   paths `/a/[]/{b, c}/?`, composite and search paths);
//! - `policy`: the policy's JSON shape, stored as the user gave it with values normalised
//!   to the service's lowercase spelling, and the defaults the service fills in;
//! - `validate`: the checks the service makes on container create and replace;
//! - `compiled`: the policy prepared for matching, and the include/exclude precedence
//!   rule that decides whether one scalar of a document is indexed;
//! - `walk`: walking a document with those decisions; the write-cost model uses
//!   [`CompiledPolicy::count_indexed_terms`] ("writes grow with the number of indexed
//!   terms").
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
//! [`super::search_policy::validate_search_indexes`], which knows the container. The
//! search policies build on this module (its types and path grammar), never the reverse.
//!
//! The parts are private; every name is re-exported here, so callers say
//! `store::indexing::IndexingPolicy`.

mod compiled;
mod error;
mod path;
mod policy;
#[cfg(test)]
mod test_support;
mod validate;
mod walk;

pub use compiled::CompiledPolicy;
pub(crate) use path::same_path;
pub use path::{
    PathSegment, PolicySegment, parse_composite_path, parse_search_path, same_search_path,
};
pub use policy::{
    CompositeOrder, CompositePath, FullTextIndex, IndexingMode, IndexingPolicy, PathSpec,
    QUANTIZED_MAX_DIMENSIONS, VectorIndex, VectorIndexType,
};
pub use walk::{DocStep, Tree};
