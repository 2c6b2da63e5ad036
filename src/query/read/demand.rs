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

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::query::eval::value::{Members, Val};
use crate::query::syntax::ast::{Expr, ExprKind, FromKind, JoinSource, Query, SelectKind};
use crate::store::item::MemberDirectory;

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

/// The demand of `q` on the items of its container, whose root it sees as `root`.
pub fn of_query(q: &Query, root: &str) -> Demand {
    let mut d = Demand::none();
    let mut scope = Scope {
        root,
        aliases: Vec::new(),
    };
    walk_top(q, &mut scope, &mut d, true);
    d
}

/// The demand of `q` apart from a `SELECT *`, whose output is taken from the stored item.
pub fn of_query_without_star(q: &Query, root: &str) -> Demand {
    let mut d = Demand::none();
    let mut scope = Scope {
        root,
        aliases: Vec::new(),
    };
    walk_top(q, &mut scope, &mut d, false);
    d
}

/// The query over the container: its `x IN path` bindings (FROM and JOIN) become aliases of
/// array elements first, then everything is walked with them in scope.
fn walk_top(q: &Query, scope: &mut Scope, d: &mut Demand, select: bool) {
    let mut bound = Vec::new();
    if let Some(FromKind::In { alias, expr }) = q.from.as_ref().map(|f| &f.kind) {
        bound.push(scope.iterate(alias, expr, d));
    }
    for j in &q.joins {
        if let JoinSource::In(e) = &j.source {
            bound.push(scope.iterate(&j.alias, e, d));
        }
    }
    walk_query(q, scope, d, select, &bound);
}

/// Adds what `q` reads; `select`: whether its SELECT list counts. `bound`: whether each of
/// `q`'s `x IN path` sources (FROM first, then JOINs) is an alias in `scope` already.
fn walk_query(q: &Query, scope: &Scope, d: &mut Demand, select: bool, bound: &[bool]) {
    let mut bound = bound.iter().copied();
    match &q.select.kind {
        _ if !select => {}
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
            JoinSource::Subquery(sq) => walk_query(sq, scope, d, true, &[]),
        }
    }
    for e in q.filter.iter().chain(q.group_by.iter()) {
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
            walk_query(q, scope, d, true, &[])
        }
        ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Ident(_) => {}
    }
}

/// Builds partial items for one query. Whole-item demands use one serde pass; partial
/// demands scan the item's text for just the demanded members ([`super::lazy`]), skipping
/// the rest without parsing it and stopping once every demanded member is found (perf.md:
/// a lazy field read is ~0.5 µs per 1 KB item, a full parse several µs).
pub struct Extractor {
    demand: Demand,
    plan: Option<crate::query::read::lazy::Plan>,
}

impl Extractor {
    pub fn new(demand: Demand) -> Extractor {
        let plan = match &demand {
            Demand::Some(children) => Some(crate::query::read::lazy::Plan::new(children)),
            Demand::All => None,
        };
        Extractor { demand, plan }
    }

    pub fn demand(&self) -> &Demand {
        &self.demand
    }

    /// The item as the query sees it.
    pub fn extract(&self, json: &[u8]) -> Result<Val, String> {
        self.extract_stored(json, None)
    }

    /// Starts loading what [`Self::extract_stored`] will read of this stored item into the
    /// CPU's cache.
    pub fn prefetch(&self, directory: &MemberDirectory) {
        if let Some(plan) = &self.plan {
            crate::query::read::lazy::prefetch(directory, plan);
        }
    }

    /// [`Self::extract`] of a stored item, read through its member directory when it has
    /// one.
    pub fn extract_stored(
        &self,
        json: &[u8],
        directory: Option<&MemberDirectory>,
    ) -> Result<Val, String> {
        if let Some(plan) = &self.plan
            && let Some(v) = crate::query::read::lazy::stored_object(json, directory, plan)
        {
            return Ok(v);
        }
        extract(json, &self.demand).map_err(|e| e.to_string())
    }
}

/// Deserializes JSON into a [`Val`], keeping only what `demand` asks for.
pub fn extract(json: &[u8], demand: &Demand) -> Result<Val, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let v = Seed(demand).deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

struct Seed<'d>(&'d Demand);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Val;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        d.deserialize_any(ValVisitor(self.0))
    }
}

struct ValVisitor<'d>(&'d Demand);

impl<'de> Visitor<'de> for ValVisitor<'_> {
    type Value = Val;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Val, E> {
        Ok(Val::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Val, E> {
        Ok(Val::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Val, E> {
        Ok(Val::Num(n as f64))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Val, E> {
        Ok(Val::Num(n as f64))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Val, E> {
        Ok(Val::Num(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Val, E> {
        Ok(Val::Str(Arc::from(s)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Val, A::Error> {
        // What is demanded below an array is demanded of each element.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4));
        while let Some(v) = seq.next_element_seed(Seed(self.0))? {
            items.push(v);
        }
        Ok(Val::arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val, A::Error> {
        let mut members: Members = Vec::new();
        match self.0 {
            Demand::All => {
                while let Some(k) = map.next_key::<KeyStr>()? {
                    let v = map.next_value_seed(Seed(&Demand::All))?;
                    members.push((k.0, v));
                }
            }
            Demand::Some(children) => {
                // Keys are compared borrowed; only kept members allocate.
                while let Some(k) = map.next_key::<KeyRef<'de>>()? {
                    match children.get(k.as_str()) {
                        Some(child) => {
                            let v = map.next_value_seed(Seed(child))?;
                            members.push((Arc::from(k.as_str()), v));
                        }
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
            }
        }
        Ok(Val::obj(members))
    }
}

/// An object key: borrowed from the input when it has no escapes.
enum KeyRef<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl KeyRef<'_> {
    fn as_str(&self) -> &str {
        match self {
            KeyRef::Borrowed(s) => s,
            KeyRef::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for KeyRef<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyRef<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyRef<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<KeyRef<'de>, E> {
                Ok(KeyRef::Borrowed(s))
            }
            fn visit_str<E>(self, s: &str) -> Result<KeyRef<'de>, E> {
                Ok(KeyRef::Owned(s.to_string()))
            }
        }
        d.deserialize_str(V)
    }
}

/// An object key of a member kept whole.
struct KeyStr(Arc<str>);

impl<'de> Deserialize<'de> for KeyStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyStr, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = KeyStr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E>(self, s: &str) -> Result<KeyStr, E> {
                Ok(KeyStr(Arc::from(s)))
            }
        }
        d.deserialize_str(V)
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
        // Extraction projects each element and keeps the others as they are.
        let doc = br#"{"id":"a","details":[{"qty":5,"sku":"x","big":[1,2]},7,{"sku":"y"}],"z":1}"#;
        let d = of_query(
            &parse("SELECT VALUE COUNT(1) FROM c JOIN d IN c.details WHERE d.qty > 4"),
            "c",
        );
        let expected = json!({"details": [{"qty": 5}, 7, {}]});
        assert_eq!(extract(doc, &d).unwrap().to_json().unwrap(), expected);
        assert_eq!(
            Extractor::new(d).extract(doc).unwrap().to_json().unwrap(),
            expected
        );
    }

    #[test]
    fn extraction_keeps_only_the_demand() {
        let doc = json!({"id": "a", "big": {"x": [1, 2, 3]}, "shipTo": {"city": "Oslo", "zip": "0150"}, "tags": ["t"]});
        let bytes = serde_json::to_vec(&doc).unwrap();
        let d = of_query(
            &parse("SELECT c.id FROM c WHERE c.shipTo.city = 'Oslo' AND ARRAY_LENGTH(c.tags) > 0"),
            "c",
        );
        let v = extract(&bytes, &d).unwrap();
        assert_eq!(
            v.to_json().unwrap(),
            json!({"id": "a", "shipTo": {"city": "Oslo"}, "tags": ["t"]})
        );
        let fast = Extractor::new(d.clone()).extract(&bytes).unwrap();
        assert_eq!(
            fast.to_json().unwrap(),
            json!({"id": "a", "shipTo": {"city": "Oslo"}, "tags": ["t"]})
        );
        let missing = Extractor::new(d).extract(br#"{"id": "b"}"#).unwrap();
        assert_eq!(missing.get("shipTo").get("city"), Val::Undefined);
        let all = extract(&bytes, &Demand::All).unwrap();
        assert_eq!(all.to_json().unwrap(), doc);
        assert!(extract(b"{\"a\": ", &Demand::All).is_err());
    }
}
