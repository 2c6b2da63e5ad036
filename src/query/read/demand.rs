//! Projection pushdown: which parts of an item a query reads, and extracting only those.
//!
//! Most queries touch a few properties of each item (`c.customerId`, `c.shipTo.city`), yet
//! building the whole item as a value costs several microseconds per kilobyte. The demand
//! of a query is the set of property paths it reads from the item's root (a trie); items
//! are then deserialized keeping only those paths and skipping the rest without allocating.
//! A query that uses the item as a whole (`SELECT *`, `SELECT VALUE c`, a function of `c`)
//! demands everything.
//!
//! A demand below an array applies to each of its elements: `JOIN d IN c.details` with
//! `d.quantity` demands `details.quantity`, so every element is kept with its `quantity`
//! only (the array keeps its length and order). Anything that reads the array itself
//! (`c.details`, `c.details[0]`, `ARRAY_LENGTH(c.details)`, `SELECT d`) demands all of it.
//!
//! Extracting what a demand names is [`super::extract`] (one serde pass) and
//! [`super::lazy`] (a scan of the stored text); [`super::extractor`] picks between them.

use std::collections::BTreeMap;

use crate::query::syntax::ast::{Expr, ExprKind, FromKind, JoinSource, Query, SelectKind};

/// A trie of demanded property paths. `All` means the whole subtree.
#[derive(Debug, Clone, PartialEq)]
pub enum Demand {
    All,
    Some(BTreeMap<String, Demand>),
}

impl Demand {
    fn none() -> Demand {
        Demand::Some(BTreeMap::new())
    }

    /// Adds property paths (e.g. the partition key's) to the demand.
    pub fn with_paths<'p>(mut self, paths: impl IntoIterator<Item = &'p [String]>) -> Demand {
        for p in paths {
            self.add(p);
        }
        self
    }

    #[cfg(test)]
    pub fn is_all(&self) -> bool {
        matches!(self, Demand::All)
    }

    fn add(&mut self, path: &[String]) {
        let Demand::Some(children) = self else { return };
        match path.split_first() {
            None => *self = Demand::All,
            Some((head, rest)) => children
                .entry(head.clone())
                .or_insert_with(Demand::none)
                .add(rest),
        }
    }

    /// Demands the value at `path` without demanding all of it: an array a JOIN iterates
    /// is kept with its length even when no property of its elements is read.
    fn touch(&mut self, path: &[String]) {
        let Demand::Some(children) = self else { return };
        if let Some((head, rest)) = path.split_first() {
            children
                .entry(head.clone())
                .or_insert_with(Demand::none)
                .touch(rest);
        }
    }
}

/// The names an expression can start from: the item's root, and the aliases of arrays the
/// query iterates (`JOIN d IN c.details`), each standing for the path of its array.
struct Scope<'r> {
    root: &'r str,
    /// Later bindings first when looked up (a JOIN may iterate an earlier alias's array).
    aliases: Vec<(String, Vec<String>)>,
}

impl Scope<'_> {
    /// The path an identifier stands for.
    fn ident(&self, name: &str) -> Option<Vec<String>> {
        if let Some((_, path)) = self.aliases.iter().rev().find(|(a, _)| a == name) {
            return Some(path.clone());
        }
        (name == self.root).then(Vec::new)
    }

    /// Binds `alias` to the elements of the array at `source` when that is a path; the
    /// array is touched, so it is kept even when no element property is read.
    fn iterate(&mut self, alias: &str, source: &Expr, d: &mut Demand) -> bool {
        match path_of(source, self) {
            Some(path) => {
                d.touch(&path);
                self.aliases.push((alias.to_string(), path));
                true
            }
            None => false,
        }
    }
}

/// Which clauses of a query count towards its demand (its subqueries count whole).
#[derive(Debug, Clone, Copy)]
pub struct Clauses {
    /// The SELECT list: not for a `SELECT *`, whose output is taken from the stored item.
    pub select: bool,
    /// The WHERE clause: not when an index lookup answers it exactly, so that the items it
    /// selects are not filtered again.
    pub filter: bool,
}

impl Clauses {
    pub const ALL: Clauses = Clauses {
        select: true,
        filter: true,
    };
}

/// The demand of `q` on the items of its container, whose root it sees as `root`.
pub fn of_query(q: &Query, root: &str) -> Demand {
    of_clauses(q, root, Clauses::ALL)
}

/// The demand of `q` apart from a `SELECT *`, whose output is taken from the stored item.
pub fn of_query_without_star(q: &Query, root: &str) -> Demand {
    of_clauses(
        q,
        root,
        Clauses {
            select: false,
            filter: true,
        },
    )
}

/// The demand of the `clauses` of `q`.
pub fn of_clauses(q: &Query, root: &str, clauses: Clauses) -> Demand {
    let mut d = Demand::none();
    let mut scope = Scope {
        root,
        aliases: Vec::new(),
    };
    walk_top(q, &mut scope, &mut d, clauses);
    d
}

/// The query over the container: its `x IN path` bindings (FROM and JOIN) become aliases of
/// array elements first, then everything is walked with them in scope.
fn walk_top(q: &Query, scope: &mut Scope, d: &mut Demand, clauses: Clauses) {
    let mut bound = Vec::new();
    if let Some(FromKind::In { alias, expr }) = q.from.as_ref().map(|f| &f.kind) {
        bound.push(scope.iterate(alias, expr, d));
    }
    for j in &q.joins {
        if let JoinSource::In(e) = &j.source {
            bound.push(scope.iterate(&j.alias, e, d));
        }
    }
    walk_query(q, scope, d, clauses, &bound);
}

/// Adds what the `clauses` of `q` read. `bound`: whether each of `q`'s `x IN path` sources
/// (FROM first, then JOINs) is an alias in `scope` already.
fn walk_query(q: &Query, scope: &Scope, d: &mut Demand, clauses: Clauses, bound: &[bool]) {
    let mut bound = bound.iter().copied();
    match &q.select.kind {
        _ if !clauses.select => {}
        // `*` returns the FROM binding, built from the whole item.
        SelectKind::Star => d.add(&[]),
        SelectKind::Value(e) => walk(e, scope, d),
        SelectKind::Items(items) => items.iter().for_each(|i| walk(&i.expr, scope, d)),
    }
    if let Some(from) = &q.from {
        match &from.kind {
            FromKind::Container { path, .. } if !path.is_empty() => {
                // `FROM c.a.b x` reads that subtree.
                let mut names = Vec::new();
                for step in path {
                    match step {
                        crate::query::syntax::ast::PathStep::Property(p) => names.push(p.clone()),
                        crate::query::syntax::ast::PathStep::Index(_) => break,
                    }
                }
                d.add(&names);
            }
            FromKind::In { expr, .. } => {
                let aliased = bound.next().unwrap_or(false);
                if !aliased {
                    walk(expr, scope, d)
                }
            }
            FromKind::Subquery { .. } => d.add(&[]),
            _ => {}
        }
    }
    for j in &q.joins {
        match &j.source {
            JoinSource::In(e) => {
                let aliased = bound.next().unwrap_or(false);
                if !aliased {
                    walk(e, scope, d)
                }
            }
            JoinSource::Value(e) => walk(e, scope, d),
            JoinSource::Subquery(sq) => walk_query(sq, scope, d, Clauses::ALL, &[]),
        }
    }
    let filter = q.filter.iter().filter(|_| clauses.filter);
    for e in filter.chain(q.group_by.iter()) {
        walk(e, scope, d);
    }
    for o in &q.order_by {
        walk(&o.expr, scope, d);
    }
}

/// `root.a.b` → Some(["a", "b"]); `root` alone → Some([]); `d.x` for `JOIN d IN c.details`
/// → Some(["details", "x"]).
fn path_of(e: &Expr, scope: &Scope) -> Option<Vec<String>> {
    match &e.kind {
        ExprKind::Ident(n) => scope.ident(n),
        ExprKind::Property(base, name) => {
            let mut p = path_of(base, scope)?;
            p.push(name.clone());
            Some(p)
        }
        _ => None,
    }
}

fn walk(e: &Expr, scope: &Scope, d: &mut Demand) {
    if let Some(path) = path_of(e, scope) {
        d.add(&path);
        return;
    }
    match &e.kind {
        ExprKind::Property(b, _) | ExprKind::Unary(_, b) => walk(b, scope, d),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            walk(a, scope, d);
            walk(b, scope, d);
        }
        ExprKind::Between {
            expr, low, high, ..
        } => {
            for x in [expr, low, high] {
                walk(x, scope, d);
            }
        }
        ExprKind::In { expr, list, .. } => {
            walk(expr, scope, d);
            list.iter().for_each(|x| walk(x, scope, d));
        }
        ExprKind::Like {
            expr,
            pattern,
            escape,
            ..
        } => {
            walk(expr, scope, d);
            walk(pattern, scope, d);
            if let Some(x) = escape {
                walk(x, scope, d);
            }
        }
        ExprKind::Ternary(a, b, c) => {
            for x in [a, b, c] {
                walk(x, scope, d);
            }
        }
        ExprKind::Call { args, .. } | ExprKind::Array(args) => {
            args.iter().for_each(|a| walk(a, scope, d))
        }
        ExprKind::Object(m) => m.iter().for_each(|(_, v)| walk(v, scope, d)),
        ExprKind::Exists(q) | ExprKind::ArraySubquery(q) | ExprKind::Subquery(q) => {
            walk_query(q, scope, d, Clauses::ALL, &[])
        }
        ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Ident(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(sql: &str) -> Query {
        crate::query::syntax::parser::parse(sql).unwrap()
    }

    #[test]
    fn demand_follows_the_paths_a_query_reads() {
        let d = of_query(
            &parse("SELECT c.id FROM c WHERE c.shipTo.city = 'Oslo' ORDER BY c.total"),
            "c",
        );
        let Demand::Some(top) = &d else {
            panic!("{d:?}")
        };
        assert_eq!(top.keys().collect::<Vec<_>>(), ["id", "shipTo", "total"]);
        assert!(!d.is_all());
        assert!(of_query(&parse("SELECT * FROM c"), "c").is_all());
        assert!(of_query(&parse("SELECT VALUE c FROM c"), "c").is_all());
        assert!(of_query(&parse("SELECT VALUE UPPER(c) FROM c"), "c").is_all());
        let j = of_query(
            &parse("SELECT t FROM c JOIN t IN c.tags WHERE c.x = 1"),
            "c",
        );
        assert!(!j.is_all());
    }

    #[test]
    fn clauses_left_out_demand_nothing_of_their_own() {
        let q = parse("SELECT * FROM c WHERE c.a > 1 AND c.b.x = 2 ORDER BY c.t");
        let keys = |d: Demand| match d {
            Demand::Some(top) => top.into_keys().collect::<Vec<_>>(),
            Demand::All => vec!["*".to_string()],
        };
        let unfiltered = |select| Clauses {
            select,
            filter: false,
        };
        assert_eq!(keys(of_query_without_star(&q, "c")), ["a", "b", "t"]);
        assert_eq!(keys(of_clauses(&q, "c", unfiltered(false))), ["t"]);
        assert_eq!(keys(of_clauses(&q, "c", unfiltered(true))), ["*"]);
        // A subquery's filter is its own, and still counts.
        let q = parse(
            "SELECT c.id, ARRAY(SELECT VALUE d FROM d IN c.d WHERE d.k = 1) AS m FROM c WHERE c.a = 1",
        );
        assert_eq!(keys(of_clauses(&q, "c", unfiltered(true))), ["d", "id"]);
    }

    /// The demand of `sql` as JSON: `true` for everything below a name.
    fn shape(sql: &str) -> serde_json::Value {
        fn json(d: &Demand) -> serde_json::Value {
            match d {
                Demand::All => json!(true),
                Demand::Some(c) => c.iter().map(|(k, v)| (k.clone(), json(v))).collect(),
            }
        }
        json(&of_query(&parse(sql), "c"))
    }

    #[test]
    fn aliases_of_iterated_arrays_demand_their_elements_properties() {
        assert_eq!(
            shape("SELECT VALUE COUNT(1) FROM c JOIN d IN c.details WHERE d.qty > 4"),
            json!({"details": {"qty": true}})
        );
        // The array is kept even when no element property is read.
        assert_eq!(
            shape("SELECT VALUE COUNT(1) FROM c JOIN d IN c.details"),
            json!({"details": {}})
        );
        assert_eq!(
            shape("SELECT d.sku, t FROM c JOIN d IN c.details JOIN t IN d.tags"),
            json!({"details": {"sku": true, "tags": true}})
        );
        assert_eq!(
            shape("SELECT x.a FROM x IN c.items WHERE x.b.c = 1"),
            json!({"items": {"a": true, "b": {"c": true}}})
        );
        // Reading the array itself, or an element whole, demands all of it.
        for sql in [
            "SELECT d FROM c JOIN d IN c.details",
            "SELECT d.qty FROM c JOIN d IN c.details WHERE ARRAY_LENGTH(c.details) > 1",
            "SELECT d.qty FROM c JOIN d IN c.details WHERE c.details[0].qty = 1",
            "SELECT d.qty FROM c JOIN d IN c.details WHERE EXISTS(SELECT VALUE 1 FROM e IN c.details)",
        ] {
            assert_eq!(shape(sql), json!({"details": true}), "{sql}");
        }
        // A correlated subquery reads through the outer alias.
        assert_eq!(
            shape(
                "SELECT VALUE d.sku FROM c JOIN d IN c.details WHERE EXISTS(SELECT VALUE t FROM t IN d.tags WHERE t = 'x')"
            ),
            json!({"details": {"sku": true, "tags": true}})
        );
    }
}
