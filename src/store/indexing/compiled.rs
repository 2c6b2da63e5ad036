//! The compiled policy and its matching: paths parsed once into rules grouped by depth,
//! and the precedence rule that decides whether one scalar of a document is indexed (see
//! the notes in [`super`]). Walking whole documents with these decisions is
//! [`super::walk`]'s.

use std::cmp::Ordering;

use super::path::{PathSegment, PathTerminal, PolicySegment, parse_policy_path, same_search_path};
use super::policy::IndexingPolicy;

/// Top-level system properties the service indexes whatever the paths say.
const ALWAYS_INDEXED: [&str; 2] = ["id", "_ts"];

/// A document step as matching sees it, so owned and borrowed paths share one matcher.
pub(super) trait Step {
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
    pub(super) enabled: bool,
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
    pub(super) fn subtree_decision<S: Step>(
        &self,
        path: &[S],
        inherited: Option<usize>,
    ) -> Option<usize> {
        self.best_at(&self.subtree, path).or(inherited)
    }

    /// Decides a scalar at `path` whose subtree decision is `node`.
    pub(super) fn scalar_indexed<S: Step>(&self, path: &[S], node: Option<usize>) -> bool {
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
            && self.full_text.iter().any(|p| same_search_path(p, path))
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
}

impl IndexingPolicy {
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
    /// `CompiledPolicy` when checking many values.
    pub fn is_indexed(&self, path: &[PathSegment]) -> bool {
        self.compile().is_indexed(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::indexing::test_support::{from_json, p, policy};
    use serde_json::json;

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
}
