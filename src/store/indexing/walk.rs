//! Walking a document under a compiled policy: every node below the root with the step
//! path that reaches it and whether the policy indexes it, without recursion (deep
//! documents cannot overflow the stack) and without allocating a string per step. The
//! index maintenance (`store::index`) and the write-cost model (counting indexed terms,
//! "writes grow with the number of indexed terms") are built on it.
//!
//! A document is any [`Tree`]: a `serde_json::Value`, or an import's document read in
//! place (`store::doc_tree`), which is walked without first being built as a `Value`.

use serde_json::Value;

use super::compiled::{CompiledPolicy, Step};
use super::policy::IndexingPolicy;

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

/// A JSON document as the walk reads it: the members of an object in their order, the
/// elements of an array.
pub trait Tree: Sized {
    type Members<'a>: Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a;

    /// The members of an object; `None` for anything else.
    fn members(&self) -> Option<Self::Members<'_>>;

    /// The elements of an array; `None` for anything else.
    fn elements(&self) -> Option<&[Self]>;

    /// Whether this is an array or an object.
    fn is_container(&self) -> bool;

    /// The member `name` of an object.
    fn member(&self, name: &str) -> Option<&Self> {
        self.members()?.find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

type ValueMembers<'a> =
    std::iter::Map<serde_json::map::Iter<'a>, fn((&'a String, &'a Value)) -> (&'a str, &'a Value)>;

impl Tree for Value {
    type Members<'a> = ValueMembers<'a>;

    fn members(&self) -> Option<ValueMembers<'_>> {
        fn member<'a>((k, v): (&'a String, &'a Value)) -> (&'a str, &'a Value) {
            (k.as_str(), v)
        }
        self.as_object()
            .map(|map| map.iter().map(member as fn(_) -> _))
    }

    fn elements(&self) -> Option<&[Value]> {
        self.as_array().map(Vec::as_slice)
    }

    fn is_container(&self) -> bool {
        matches!(self, Value::Array(_) | Value::Object(_))
    }

    fn member(&self, name: &str) -> Option<&Value> {
        self.as_object()?.get(name)
    }
}

impl CompiledPolicy {
    /// Walks every node below the root of `doc` (objects and arrays as well as scalars),
    /// calling `f(path, value, indexed)`. A node is indexed when the policy indexes a scalar
    /// at its location, so `f` sees exactly the scalar terms
    /// [`CompiledPolicy::count_indexed_terms`] counts, plus the containers at indexed
    /// locations. Explicit stacks: deep documents cannot overflow the call stack.
    pub fn walk<'a, T: Tree>(&self, doc: &'a T, mut f: impl FnMut(&[DocStep<'a>], &'a T, bool)) {
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

    /// Counts the scalar leaves of `doc` (strings, numbers, booleans, nulls; each array
    /// element separately) that are indexed. Empty objects and arrays add nothing.
    pub fn count_indexed_terms(&self, doc: &impl Tree) -> usize {
        let mut count = 0;
        self.walk(doc, |_, v, indexed| {
            if indexed && !v.is_container() {
                count += 1;
            }
        });
        count
    }
}

/// The children of an object or array, each with the step that reaches it.
enum Children<'a, T: Tree + 'a> {
    Object(T::Members<'a>),
    Array(std::iter::Enumerate<std::slice::Iter<'a, T>>),
}

impl<'a, T: Tree> Children<'a, T> {
    fn of(value: &'a T) -> Option<Children<'a, T>> {
        if let Some(members) = value.members() {
            return Some(Children::Object(members));
        }
        value
            .elements()
            .map(|items| Children::Array(items.iter().enumerate()))
    }

    fn next(&mut self) -> Option<(DocStep<'a>, &'a T)> {
        match self {
            Children::Object(it) => it.next().map(|(k, v)| (DocStep::Property(k), v)),
            Children::Array(it) => it.next().map(|(i, v)| (DocStep::Index(i), v)),
        }
    }
}

struct Frame<'a, T: Tree + 'a> {
    children: Children<'a, T>,
    decision: Option<usize>,
}

impl IndexingPolicy {
    /// Number of scalar values of `doc` the policy indexes. Compiles the policy on every
    /// call; keep a `CompiledPolicy` when charging many writes.
    pub fn count_indexed_terms(&self, doc: &impl Tree) -> usize {
        self.compile().count_indexed_terms(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::indexing::path::PathSegment;
    use crate::store::indexing::test_support::policy;
    use serde_json::{Map, json};

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
