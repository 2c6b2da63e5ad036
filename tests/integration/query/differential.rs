//! Differential fuzzing of query execution: a generator writes random *valid* queries over a
//! set of documents chosen to be awkward (mixed types in one field, missing fields, ties,
//! arrays and objects, strings that look like LIKE patterns), and each query runs on three
//! containers holding the same items:
//!
//! - `one`: a single physical partition, default indexing policy;
//! - `split`: many physical partitions (small ranges split as the items load), default policy,
//!   so filters and ORDER BY are served by the index and results merge across ranges;
//! - `lean`: four ranges whose policy indexes only `/u` and `/pk`, so every other filter
//!   is evaluated by a scan;
//! - `tiers`: many physical partitions under a hierarchical key (`/pk`, then `/b`), so a
//!   filter on `c.pk` routes to a key prefix and one on both to whole keys.
//!
//! The queries cover projections (`*`, VALUE, lists, subqueries), JOIN, `FROM x IN`,
//! `FROM (subquery)`, filters an index serves and ones it cannot, partition key filters and
//! the partition key option (single-partition and targeted routing), DISTINCT, ORDER BY on
//! one and two properties (the latter through composite indexes), TOP and OFFSET/LIMIT
//! (literals and parameters), aggregates and GROUP BY.
//!
//! What must hold, for every query:
//! - no panic and no hang (a watchdog names the case), and every error is a 400;
//! - the containers agree: the same rows in the same order when the order is fully decided
//!   (ORDER BY the unique `c.u`), the same multiset when no TOP/OFFSET picks a subset, and
//!   the same number of rows otherwise; numbers may differ in the last bits where sums are
//!   combined per range (the service merges partial aggregates the same way);
//! - on every container, draining the query in small pages gives exactly the unpaged rows,
//!   in order, and the pages' charges add up to the unpaged charge;
//! - the same query on the same data costs the same, and `SELECT *` never returns an item
//!   twice;
//! - a whole result in one page reports ranges that agree with it: without TOP, OFFSET,
//!   DISTINCT, GROUP BY or aggregates the ranges' output counts add up to the page's rows,
//!   and a `SELECT *` lists as logical partitions exactly its documents' keys.
//!
//! Metamorphic checks need no second container, so they catch what every container would
//! get wrong the same way:
//! - a random filter, its negation and the items where it is not a boolean split the items
//!   (or the rows of a JOIN over `c.tags`) exactly, and `COUNT(1)` agrees;
//! - ORDER BY on every path, both ways, gives values in the type order;
//! - OFFSET/LIMIT and TOP cut the whole ordered result where they say;
//! - GROUP BY and DISTINCT account for every item;
//! - a partition key sent with the request reads what a filter on it matches;
//! - a streamed `SELECT *` paged while items are deleted, replaced and created between its
//!   pages returns every untouched match once and nothing twice.
//!
//! And continuation tokens are input too: real tokens with any field damaged give a 400 or
//! pages, never a panic or a hang.
//!
//! `QUERY_DIFF_CASES` sets the number of queries (default below) for longer runs, and
//! `QUERY_DIFF_FILTER_CASES` the number of filters, `QUERY_DIFF_WRITE_CASES` of paged
//! queries with writes, `QUERY_DIFF_TOKEN_CASES` of queries whose tokens are damaged, and
//! `QUERY_DIFF_SHOW` how many failing cases to print (8).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use cosmoscope::engine::IndexingPolicy;
use cosmoscope::engine::{Backend, Engine, QueryOptions};
use cosmoscope::engine::{ContainerSettings, Throughput};
use serde_json::{Map, Value, json};

use crate::support::fixture::Rng;

const DB: &str = "db";
const ITEMS: usize = 64;
const CASES: usize = 2_000;
const SPLIT_CASES: usize = 150;

// ---- data ----

/// Values of the mixed-type field `a`, lowest type first (plus undefined: the field is left
/// out).
fn mixed(rng: &mut Rng) -> Option<Value> {
    Some(match rng.index(16) {
        0 => return None,
        1 => Value::Null,
        2 => json!(false),
        3 => json!(true),
        4 => json!(rng.index(7) as i64 - 3),
        5 => json!(rng.index(9) as f64 / 4.0 - 1.0),
        6 => json!(1e300),
        7 => json!(-2.5),
        8 => json!(0),
        9 => json!(["x", "y", "z", "", "10", "é"][rng.index(6)]),
        10 => json!("10"),
        11 => json!([1, 2]),
        12 => json!([]),
        13 => json!({"x": 1}),
        14 => json!({}),
        _ => json!(rng.index(4)),
    })
}

fn document(rng: &mut Rng, i: usize) -> Value {
    let mut d = Map::new();
    d.insert("id".into(), json!(format!("d{i:02}")));
    // Unique, and not in id order, so ORDER BY c.u decides every position.
    d.insert("u".into(), json!((i * 37) % ITEMS));
    match rng.index(12) {
        0 => {}
        1 => {
            d.insert("pk".into(), json!(rng.index(3)));
        }
        _ => {
            d.insert("pk".into(), json!(format!("p{}", rng.index(6))));
        }
    }
    if let Some(a) = mixed(rng) {
        d.insert("a".into(), a);
    }
    match rng.index(10) {
        0 => {}
        1 => {
            d.insert("b".into(), json!("7"));
        }
        _ => {
            d.insert("b".into(), json!(rng.index(8)));
        }
    }
    let strings = [
        "apple",
        "Apple",
        "app",
        "banana",
        "",
        "é",
        "z",
        "a%b",
        "a_b",
        "[x]",
        "ab",
        "apple pie",
    ];
    match rng.index(10) {
        0 => {}
        1 => {
            d.insert("s".into(), json!(3));
        }
        _ => {
            d.insert("s".into(), json!(rng.pick(&strings)));
        }
    }
    d.insert(
        "f".into(),
        json!((rng.index(2000) as f64 - 1000.0) / 8.0 + 0.1),
    );
    match rng.index(8) {
        0 => {}
        1 => {
            d.insert("tags".into(), json!("x"));
        }
        _ => {
            let pool = [
                json!("x"),
                json!("y"),
                json!("z"),
                json!(1),
                json!(2),
                Value::Null,
            ];
            let tags: Vec<Value> = (0..rng.index(4)).map(|_| rng.pick(&pool)).collect();
            d.insert("tags".into(), Value::Array(tags));
        }
    }
    match rng.index(6) {
        0 => {}
        1 => {
            d.insert("o".into(), json!({}));
        }
        2 => {
            d.insert("o".into(), json!({"x": null, "y": "q"}));
        }
        _ => {
            d.insert(
                "o".into(),
                json!({"x": rng.index(5), "y": rng.pick(&["q", "r", "s"])}),
            );
        }
    }
    Value::Object(d)
}

/// The items every container holds.
fn documents() -> Vec<Value> {
    let mut rng = Rng(0xD1FF);
    (0..ITEMS).map(|i| document(&mut rng, i)).collect()
}

/// The default policy plus two composite indexes, for ORDER BY on two properties.
fn full_policy() -> IndexingPolicy {
    serde_json::from_value(json!({
        "indexingMode": "consistent",
        "automatic": true,
        "includedPaths": [{"path": "/*"}],
        "excludedPaths": [{"path": "/\"_etag\"/?"}],
        "compositeIndexes": [
            [{"path": "/b", "order": "ascending"}, {"path": "/u", "order": "ascending"}],
            [{"path": "/s", "order": "descending"}, {"path": "/u", "order": "ascending"}]
        ]
    }))
    .expect("policy")
}

/// The partition key properties of the test containers.
fn key_paths(container: &str) -> &'static [&'static str] {
    if container == "tiers" {
        &["pk", "b"]
    } else {
        &["pk"]
    }
}

/// Creates container `name` partitioned on `keys` and loads `docs` into it.
fn container(
    engine: &Engine,
    (name, keys): (&str, &[&str]),
    (ru, max_bytes, policy): (u64, Option<u64>, IndexingPolicy),
    docs: &[Value],
) {
    let mut s = ContainerSettings::new(keys.iter().map(|k| k.to_string()).collect());
    s.throughput = Throughput::Manual(ru);
    s.max_partition_bytes = max_bytes;
    s.indexing_policy = Some(policy);
    engine
        .create_container(DB, name, s)
        .unwrap_or_else(|e| panic!("create {name}: {e}"));
    for d in docs {
        engine
            .upsert_item(DB, name, d.to_string().as_bytes(), None)
            .unwrap_or_else(|e| panic!("upsert {d}: {e}"));
    }
}

/// The three containers of the module comment, loaded with the same items.
fn store() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let engine = Engine::open(dir.path()).expect("open engine");
    engine.create_database(DB).expect("create database");
    let lean: IndexingPolicy = serde_json::from_value(json!({
        "indexingMode": "consistent",
        "automatic": true,
        "includedPaths": [{"path": "/u/?"}, {"path": "/pk/?"}],
        "excludedPaths": [{"path": "/*"}]
    }))
    .expect("policy");
    let docs = documents();
    let pk: &[&str] = &["/pk"];
    container(&engine, ("one", pk), (400, None, full_policy()), &docs);
    container(
        &engine,
        ("split", pk),
        (400, Some(1_500), full_policy()),
        &docs,
    );
    container(&engine, ("lean", pk), (40_000, None, lean), &docs);
    let tiers: &[&str] = &["/pk", "/b"]; // as `key_paths` says
    container(
        &engine,
        ("tiers", tiers),
        (400, Some(1_500), full_policy()),
        &docs,
    );
    (dir, engine)
}

// ---- queries ----

/// Properties of the items (and one no item has).
const PATHS: &[&str] = &[
    "c.a",
    "c.b",
    "c.s",
    "c.f",
    "c.u",
    "c.pk",
    "c.o.x",
    "c.o.y",
    "c.tags",
    "c.tags[0]",
    "c[\"s\"]",
    "c.o",
    "c.nope",
    "c.id",
];

const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2.5",
    "3",
    "7",
    "-0.75",
    "1e300",
    "'apple'",
    "'app'",
    "''",
    "'10'",
    "'x'",
    "'é'",
    "\"z\"",
    "true",
    "false",
    "null",
    "[1, 2]",
    "[]",
    "{\"x\": 1}",
    "{}",
    "undefined",
];

/// Functions with how many arguments they take (each argument a random expression).
const FUNCTIONS: &[(&str, usize)] = &[
    ("UPPER", 1),
    ("LOWER", 1),
    ("LENGTH", 1),
    ("CONCAT", 2),
    ("CONCAT", 3),
    ("STARTSWITH", 2),
    ("ENDSWITH", 2),
    ("CONTAINS", 2),
    ("SUBSTRING", 3),
    ("LEFT", 2),
    ("RIGHT", 2),
    ("INDEX_OF", 2),
    ("REPLACE", 3),
    ("REPLICATE", 2),
    ("REVERSE", 1),
    ("TRIM", 1),
    ("TOSTRING", 1),
    ("STRINGTONUMBER", 1),
    ("ABS", 1),
    ("FLOOR", 1),
    ("ROUND", 1),
    ("TRUNC", 1),
    ("SQRT", 1),
    ("POWER", 2),
    ("LOG", 1),
    ("SIGN", 1),
    ("NUMBERBIN", 2),
    ("INTADD", 2),
    ("INTDIV", 2),
    ("IS_DEFINED", 1),
    ("IS_NUMBER", 1),
    ("IS_STRING", 1),
    ("IS_NULL", 1),
    ("IS_ARRAY", 1),
    ("IS_OBJECT", 1),
    ("IS_BOOL", 1),
    ("IS_PRIMITIVE", 1),
    ("IS_INTEGER", 1),
    ("ARRAY_LENGTH", 1),
    ("ARRAY_CONTAINS", 2),
    ("ARRAY_CONCAT", 2),
    ("ARRAY_SLICE", 2),
    ("ARRAY_SLICE", 3),
    ("SETUNION", 2),
    ("SETINTERSECT", 2),
    ("CHOOSE", 3),
    ("OBJECTTOARRAY", 1),
    ("IIF", 3),
    ("STRINGEQUALS", 3),
    ("REGEXMATCH", 2),
];

const BINARY: &[&str] = &[
    "+", "-", "*", "/", "%", "||", "|", "&", "^", "<<", ">>", ">>>", "=", "!=", "<", "<=", ">",
    ">=", "AND", "OR", "??",
];

/// A scalar expression over `c` (and `t` when a JOIN binds it).
fn expr(rng: &mut Rng, depth: usize, join: bool) -> String {
    let leaf = depth == 0 || rng.chance(35);
    if leaf {
        return match rng.index(if join { 6 } else { 5 }) {
            0..=2 => rng.pick(PATHS).to_string(),
            3 | 4 => rng.pick(LITERALS).to_string(),
            _ => "t".to_string(),
        };
    }
    let d = depth - 1;
    match rng.index(10) {
        0..=3 => {
            let (name, n) = rng.pick(FUNCTIONS);
            let args: Vec<String> = (0..n).map(|_| expr(rng, d, join)).collect();
            format!("{name}({})", args.join(", "))
        }
        4..=6 => format!(
            "({} {} {})",
            expr(rng, d, join),
            rng.pick(BINARY),
            expr(rng, d, join)
        ),
        7 => format!(
            "({} ? {} : {})",
            expr(rng, d, join),
            expr(rng, d, join),
            expr(rng, d, join)
        ),
        8 => format!("{}({})", rng.pick(&["-", "NOT ", "~"]), expr(rng, d, join)),
        _ => format!("[{}, {}]", expr(rng, d, join), expr(rng, d, join)),
    }
}

/// A literal `path` often has (or one of any type), so filters select something.
fn literal_for(rng: &mut Rng, path: &str) -> String {
    if rng.chance(35) {
        return rng.pick(LITERALS).to_string();
    }
    let n = |rng: &mut Rng, below: usize| rng.index(below).to_string();
    match path {
        "c.b" => n(rng, 8),
        "c.u" => n(rng, ITEMS),
        "c.f" => rng.pick(&["-50.4", "0", "12.6", "100"]).to_string(),
        "c.s" | "c[\"s\"]" => rng
            .pick(&[
                "'apple'", "'app'", "'ab'", "''", "'banana'", "'z'", "'a_b'", "'Apple'",
            ])
            .to_string(),
        "c.pk" => rng.pick(&["'p0'", "'p3'", "1", "'p5'"]).to_string(),
        "c.o.x" => n(rng, 5),
        "c.o.y" => rng.pick(&["'q'", "'r'", "'s'"]).to_string(),
        "c.tags[0]" | "t" => rng.pick(&["'x'", "'y'", "1", "2", "null"]).to_string(),
        "c.tags" => rng
            .pick(&["['x']", "[]", "['x', 'y']", "[1, 2]"])
            .to_string(),
        _ => rng.pick(LITERALS).to_string(),
    }
}

/// A filter: mostly shapes an index can serve (a path against a literal), combined.
fn filter(rng: &mut Rng, depth: usize, join: bool) -> String {
    let path = |rng: &mut Rng| {
        if join && rng.chance(25) {
            "t".to_string()
        } else {
            rng.pick(PATHS).to_string()
        }
    };
    if depth > 0 && rng.chance(35) {
        let op = rng.pick(&["AND", "OR"]);
        return format!(
            "({} {op} {})",
            filter(rng, depth - 1, join),
            filter(rng, depth - 1, join)
        );
    }
    match rng.index(14) {
        0..=4 => {
            let p = path(rng);
            let op = rng.pick(&["=", "!=", "<", "<=", ">", ">="]);
            format!("{p} {op} {}", literal_for(rng, &p))
        }
        5 => {
            let p = path(rng);
            let list: Vec<String> = (0..1 + rng.index(4))
                .map(|_| literal_for(rng, &p))
                .collect();
            let not = if rng.chance(30) { "NOT " } else { "" };
            format!("{p} {not}IN ({})", list.join(", "))
        }
        6 => {
            let p = path(rng);
            let not = if rng.chance(20) { "NOT " } else { "" };
            let (lo, hi) = (literal_for(rng, &p), literal_for(rng, &p));
            format!("{p} {not}BETWEEN {lo} AND {hi}")
        }
        7 => format!(
            "{} {}LIKE {}",
            path(rng),
            if rng.chance(20) { "NOT " } else { "" },
            rng.pick(&[
                "'app%'",
                "'%e'",
                "'a_b'",
                "'a[%]b'",
                "'[a-b]%'",
                "'[^a]%'",
                "'%'",
                "''",
                "'a!%b' ESCAPE '!'"
            ])
        ),
        8 => format!(
            "{}({}, {})",
            rng.pick(&["STARTSWITH", "CONTAINS", "ENDSWITH", "ARRAY_CONTAINS"]),
            path(rng),
            rng.pick(LITERALS)
        ),
        9 => format!(
            "{}({})",
            rng.pick(&[
                "IS_DEFINED",
                "IS_NUMBER",
                "IS_STRING",
                "IS_NULL",
                "IS_ARRAY",
                "NOT IS_DEFINED"
            ]),
            path(rng)
        ),
        10 => format!(
            "EXISTS(SELECT VALUE x FROM x IN c.tags WHERE x {} {})",
            rng.pick(&["=", "<", ">="]),
            rng.pick(LITERALS)
        ),
        11 => format!("NOT ({})", filter(rng, depth.saturating_sub(1), join)),
        _ => expr(rng, 2, join),
    }
}

/// How the containers' answers to a query must compare.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Compare {
    /// The same rows in the same order.
    Sequence,
    /// The same rows in any order.
    Multiset,
    /// As many rows (TOP or OFFSET picks among ties or in storage order).
    Count,
}

struct Case {
    sql: String,
    compare: Compare,
    /// ORDER BY paths only `split` and `one` index (`lean` must refuse the query).
    needs_index: bool,
    params: Vec<(&'static str, Value)>,
    /// The partition key given with the request.
    pk: Option<Value>,
    /// For the filter cases: the filter names `t`, an element of `c.tags` (JOIN rows).
    over_tags: bool,
}

impl Case {
    fn new(sql: String, compare: Compare) -> Case {
        Case {
            sql,
            compare,
            needs_index: false,
            params: Vec::new(),
            pk: None,
            over_tags: false,
        }
    }
}

fn query(rng: &mut Rng) -> Case {
    let mut case = match rng.index(20) {
        0 | 1 => aggregate(rng),
        2 | 3 => group_by(rng),
        4 => from_array(rng),
        5 => from_subquery(rng),
        _ => select(rng),
    };
    // Parameters the generated text may name.
    case.params = vec![
        ("@n", json!(rng.index(8))),
        // A key value, or a value no key can have.
        (
            "@k",
            rng.pick(&[
                json!("p1"),
                json!("p4"),
                json!(2),
                json!(null),
                json!([1]),
                json!("nope"),
            ]),
        ),
        (
            "@v",
            serde_json::from_str(rng.pick(LITERALS).replace('\'', "\"").as_str())
                .unwrap_or(json!(3)),
        ),
    ];
    if rng.chance(8) {
        case.pk = Some(rng.pick(&[json!("p1"), json!("p3"), json!(2), json!("nope")]));
    }
    case
}

/// A filter that (also) names partition key values: routes to one or some ranges.
/// On `tiers` (keyed on `/pk` then `/b`) a `c.pk` filter binds a prefix, and one on both
/// binds whole keys.
fn key_filter(rng: &mut Rng) -> String {
    match rng.index(9) {
        0 => format!("c.pk = '{}'", rng.pick(&["p0", "p2", "p5"])),
        // Parameters: `@k` is a key value or not (an array pins nothing).
        7 => "c.pk = @k".to_string(),
        8 => "(c.pk IN (@k, 'p1') AND c.b != @v)".to_string(),
        1 => "c.pk IN ('p1', 'p4', 2)".to_string(),
        2 => "(c.pk = 'p3' OR c.pk = 1)".to_string(),
        3 => format!(
            "c.pk = '{}' AND c.b = {}",
            rng.pick(&["p0", "p2", "p5"]),
            rng.pick(&["1", "4", "'7'"])
        ),
        4 => "((c.pk = 'p1' AND c.b = 2) OR (c.pk = 'p4' AND c.b IN (1, 7)))".to_string(),
        // The same key twice, and alternatives that bind it beside other conditions.
        5 => "(c.pk IN ('p1', 'p1') OR c.pk = 'p1')".to_string(),
        _ => format!(
            "((c.pk = 'p2' AND c.u > {}) OR (c.pk = 'p0' AND c.b = 4) OR c.pk = 2)",
            rng.index(64)
        ),
    }
}

/// `FROM t IN c.tags`: the query sees the elements only.
fn from_array(rng: &mut Rng) -> Case {
    let projection = rng.pick(&[
        "VALUE t",
        "t AS v",
        "VALUE [t, t]",
        "*",
        "VALUE IS_STRING(t)",
    ]);
    let mut sql = format!("SELECT {projection} FROM t IN c.tags");
    if rng.chance(60) {
        sql.push_str(&format!(
            " WHERE t {} {}",
            rng.pick(&["=", "!=", "<", ">="]),
            rng.pick(LITERALS)
        ));
    }
    Case::new(sql, Compare::Multiset)
}

/// `FROM (SELECT ...) s`: the outer query reads the inner one's results.
fn from_subquery(rng: &mut Rng) -> Case {
    let inner = rng.pick(&[
        "SELECT VALUE {v: c.b, u: c.u, s: c.s} FROM c",
        "SELECT c.b AS v, c.u AS u, c.s AS s FROM c WHERE c.b > 2",
        "SELECT VALUE {v: t, u: c.u, s: c.s} FROM c JOIN t IN c.tags",
        // Known only once every range is read.
        "SELECT TOP 20 c.b AS v, c.u AS u, c.s AS s FROM c ORDER BY c.u DESC",
    ]);
    let distinct = if rng.chance(20) { "DISTINCT " } else { "" };
    // TOP over the outer query: which rows it keeps is not decided, how many is.
    let top = if rng.chance(25) {
        format!("TOP {} ", 1 + rng.index(6))
    } else {
        String::new()
    };
    let projection = rng.pick(&["VALUE s.v", "s.u, s.s", "VALUE COUNT(1)"]);
    let mut sql = format!("SELECT {distinct}{top}{projection} FROM ({inner}) s");
    if rng.chance(50) {
        sql.push_str(&format!(
            " WHERE s.v {} {}",
            rng.pick(&["=", ">", "<="]),
            rng.pick(LITERALS)
        ));
    }
    let compare = if top.is_empty() {
        Compare::Multiset
    } else {
        Compare::Count
    };
    Case::new(sql, compare)
}

/// Subqueries a projection can hold.
const SUBQUERIES: &[&str] = &[
    "ARRAY(SELECT VALUE x FROM x IN c.tags WHERE x != 'y')",
    "(SELECT VALUE COUNT(1) FROM x IN c.tags)",
    "EXISTS(SELECT VALUE x FROM x IN c.tags WHERE x = 1)",
    "(SELECT VALUE MAX(x) FROM x IN c.tags)",
    "ARRAY(SELECT x, c.b FROM x IN c.tags)",
];

fn select(rng: &mut Rng) -> Case {
    let join = rng.chance(20);
    let distinct = rng.chance(15);
    let top = rng.chance(20).then(|| {
        if rng.chance(20) {
            "@n".to_string()
        } else {
            rng.index(12).to_string()
        }
    });
    let item = |rng: &mut Rng| {
        if rng.chance(15) {
            rng.pick(SUBQUERIES).to_string()
        } else {
            expr(rng, 2, join)
        }
    };
    let projection = match rng.index(4) {
        // `SELECT *` needs a single input set: not with a JOIN.
        0 if !distinct && !join => "*".to_string(),
        0 | 1 => format!("VALUE {}", item(rng)),
        _ => {
            let n = 1 + rng.index(3);
            (0..n)
                .map(|i| format!("{} AS p{i}", item(rng)))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut sql = format!(
        "SELECT {}{}{projection} FROM c",
        if distinct { "DISTINCT " } else { "" },
        top.as_ref()
            .map(|n| format!("TOP {n} "))
            .unwrap_or_default()
    );
    if join {
        sql.push_str(" JOIN t IN c.tags");
    }
    let mut conditions = Vec::new();
    if rng.chance(25) {
        conditions.push(key_filter(rng));
    }
    if rng.chance(70) {
        conditions.push(filter(rng, 2, join));
    }
    if rng.chance(5) {
        conditions.push("c.b = @v".to_string());
    }
    if !conditions.is_empty() {
        sql.push_str(&format!(" WHERE {}", conditions.join(" AND ")));
    }
    // With DISTINCT, the ORDER BY must order what is projected: only `VALUE c.b`.
    let order: Option<(&str, &str)> = if distinct {
        None
    } else if rng.chance(45) {
        Some(rng.pick(&[
            ("c.u", ""),
            ("c.u", " DESC"),
            ("c.b", ""),
            ("c.a", " DESC"),
            ("c.s", " ASC"),
            ("c.f", ""),
            ("c.o.x", " DESC"),
            // Two properties: a composite index serves both directions reversed.
            ("c.b ASC, c.u", " ASC"),
            ("c.b DESC, c.u", " DESC"),
            ("c.s DESC, c.u", " ASC"),
        ]))
    } else {
        None
    };
    let mut ordered_distinct = false;
    if let Some((key, dir)) = order {
        sql.push_str(&format!(" ORDER BY {key}{dir}"));
    } else if distinct && rng.chance(20) && !join {
        // DISTINCT values in order: each value once, so the order decides everything.
        sql = format!(
            "SELECT DISTINCT {}VALUE c.b FROM c ORDER BY c.b{}",
            top.as_ref()
                .map(|n| format!("TOP {n} "))
                .unwrap_or_default(),
            rng.pick(&["", " DESC"])
        );
        ordered_distinct = true;
    }
    let offset = top.is_none() && rng.chance(15);
    if offset {
        if rng.chance(20) {
            sql.push_str(" OFFSET @n LIMIT @n");
        } else {
            sql.push_str(&format!(
                " OFFSET {} LIMIT {}",
                rng.index(10),
                rng.index(15)
            ));
        }
    }
    // `c.u` is unique, so ordering by it (last) decides every position of a JOIN-less query.
    let unique_order = order.is_some_and(|(k, _)| k.ends_with("c.u")) && !join;
    let picks = top.is_some() || offset;
    let compare = if unique_order || ordered_distinct {
        Compare::Sequence
    } else if picks {
        Compare::Count
    } else {
        Compare::Multiset
    };
    let mut case = Case::new(sql, compare);
    case.needs_index = ordered_distinct || order.is_some_and(|(k, _)| k != "c.u");
    case
}

const AGGREGATES: &[&str] = &["COUNT", "SUM", "AVG", "MIN", "MAX"];

fn aggregate(rng: &mut Rng) -> Case {
    let arg = |rng: &mut Rng| {
        if rng.chance(20) {
            "1".to_string()
        } else {
            rng.pick(&["c.a", "c.b", "c.f", "c.s", "c.u", "c.o.x", "c.tags"])
                .to_string()
        }
    };
    let mut sql = if rng.chance(50) {
        format!("SELECT VALUE {}({}) FROM c", rng.pick(AGGREGATES), arg(rng))
    } else {
        let n = 1 + rng.index(4);
        let items: Vec<String> = (0..n)
            .map(|i| format!("{}({}) AS g{i}", rng.pick(AGGREGATES), arg(rng)))
            .collect();
        format!("SELECT {} FROM c", items.join(", "))
    };
    if rng.chance(15) {
        sql.push_str(" JOIN t IN c.tags");
    }
    if rng.chance(60) {
        sql.push_str(&format!(" WHERE {}", filter(rng, 1, false)));
    }
    Case::new(sql, Compare::Multiset)
}

fn group_by(rng: &mut Rng) -> Case {
    let join = rng.chance(15);
    let key = if join {
        "t"
    } else {
        rng.pick(&[
            "c.b",
            "c.a",
            "c.s",
            "c.pk",
            "c.o.y",
            "c.tags",
            "LOWER(c.s)",
            "c.b, c.o.y",
        ])
    };
    let n = 1 + rng.index(3);
    let items: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "{}({}) AS g{i}",
                rng.pick(AGGREGATES),
                rng.pick(&["1", "c.f", "c.b", "c.a", "c.u"])
            )
        })
        .collect();
    let keys = key
        .split(", ")
        .enumerate()
        .map(|(i, k)| format!("{k} AS k{i}"));
    let mut sql = format!(
        "SELECT {}, {} FROM c",
        keys.collect::<Vec<_>>().join(", "),
        items.join(", ")
    );
    if join {
        sql.push_str(" JOIN t IN c.tags");
    }
    if rng.chance(40) {
        sql.push_str(&format!(" WHERE {}", filter(rng, 1, false)));
    }
    sql.push_str(&format!(" GROUP BY {key}"));
    let offset = rng.chance(15);
    if offset {
        sql.push_str(&format!(" OFFSET {} LIMIT {}", rng.index(4), rng.index(6)));
    }
    Case::new(
        sql,
        if offset {
            Compare::Count
        } else {
            Compare::Multiset
        },
    )
}

// ---- running and comparing ----

/// The system properties differ between containers (`_rid`, `_ts`, `_etag`); drop them.
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !k.starts_with('_'))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// Equal, with numbers compared to about 12 significant digits (partial sums combine in a
/// different order across ranges).
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && close(vx, vy))
        }
        _ => a == b,
    }
}

/// A sort key for multiset comparison, with numbers rounded so that `close` values meet.
fn sort_key(v: &Value) -> String {
    fn round(v: &Value) -> Value {
        match v {
            Value::Number(n) => {
                let f = n.as_f64().unwrap_or(0.0);
                json!(format!("{f:.9e}"))
            }
            Value::Array(a) => Value::Array(a.iter().map(round).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), round(v))).collect())
            }
            other => other.clone(),
        }
    }
    round(v).to_string()
}

struct Outcome {
    rows: Vec<Value>,
    charge: f64,
}

/// The request options of `case` in pages of `page` items.
fn options(case: &Case, page: usize) -> QueryOptions {
    QueryOptions {
        params: case
            .params
            .iter()
            .map(|(k, v)| (k.trim_start_matches('@').to_string(), v.clone()))
            .collect(),
        partition_key: case.pk.clone(),
        max_items: Some(page),
        ..Default::default()
    }
}

/// Drains `sql` on `container` in pages of `page` items.
fn drain(engine: &Engine, container: &str, case: &Case, page: usize) -> Result<Outcome, String> {
    let mut opts = options(case, page);
    let sql = &case.sql;
    let mut out = Outcome {
        rows: Vec::new(),
        charge: 0.0,
    };
    for _ in 0..10_000 {
        let r = engine
            .query(DB, container, sql, &opts)
            .map_err(|e| format!("{} {}", e.status, e.message))?;
        if r.documents.len() > page {
            return Err(format!(
                "a page of {} items, above {page}",
                r.documents.len()
            ));
        }
        // Streamed pages (no ORDER BY or FROM subquery) each report their own reading.
        let upper = case.sql.to_uppercase();
        let streamed = !upper.contains("ORDER BY") && !upper.contains("FROM (");
        if streamed || (opts.continuation.is_none() && r.continuation.is_none()) {
            report_consistent(case, &r, key_paths(container))?;
        }
        page_totals_consistent(&r)?;
        out.rows
            .extend(r.documents.into_iter().map(|d| strip(&Value::from(d))));
        out.charge += r.request_charge;
        match r.continuation {
            Some(t) => opts.continuation = Some(t),
            None => {
                no_item_twice(&case.sql, &out.rows)?;
                return Ok(out);
            }
        }
    }
    Err("more than 10,000 pages".to_string())
}

/// What a page of a streamed result, or a whole result in one page, reports about each
/// range must agree with the page: a plain query's ranges output exactly the page's rows,
/// and a plain `SELECT *` lists as logical partitions exactly its documents' keys. (Plain:
/// nothing that merges, picks or counts rows across ranges. Later pages of a result
/// computed whole report the ranges' work on the whole, as the first page did it.)
fn report_consistent(
    case: &Case,
    r: &cosmoscope::engine::QueryResult,
    key_paths: &[&str],
) -> Result<(), String> {
    let upper = case.sql.to_uppercase();
    let plain = ![
        "TOP ", "OFFSET ", "DISTINCT", "GROUP BY", "COUNT(", "SUM(", "AVG(", "MIN(", "MAX(",
    ]
    .iter()
    .any(|w| upper.contains(w));
    let output: u64 = r
        .partitions
        .iter()
        .map(|p| p.metrics.output_document_count)
        .sum();
    if plain && output != r.documents.len() as u64 {
        return Err(format!(
            "the ranges output {output} rows, the page holds {}",
            r.documents.len()
        ));
    }
    if plain && upper.starts_with("SELECT * FROM C") && !upper.contains("JOIN") {
        let mut listed: Vec<String> = r
            .partitions
            .iter()
            .flat_map(|p| p.logical_partitions.iter().map(Value::to_string))
            .collect();
        listed.sort();
        let mut keys: Vec<String> = r
            .documents
            .iter()
            .map(|d| {
                // A missing value shows as `{}`, as the report writes undefined.
                let doc = Value::from(d.clone());
                let parts: Vec<Value> = key_paths
                    .iter()
                    .map(|p| doc.get(p).cloned().unwrap_or(json!({})))
                    .collect();
                match parts.as_slice() {
                    [one] => one.to_string(),
                    _ => Value::Array(parts).to_string(),
                }
            })
            .collect();
        keys.sort();
        keys.dedup();
        if listed != keys {
            return Err(format!(
                "logical partitions {listed:?}, the documents' keys {keys:?}"
            ));
        }
    }
    Ok(())
}

/// `SELECT * FROM c` without JOIN returns each item at most once, whatever routes it.
fn no_item_twice(sql: &str, rows: &[Value]) -> Result<(), String> {
    let upper = sql.to_uppercase();
    if !upper.starts_with("SELECT * FROM C") || upper.contains("JOIN") {
        return Ok(());
    }
    let mut ids: Vec<&Value> = rows.iter().filter_map(|r| r.get("id")).collect();
    ids.sort_by_key(|id| id.to_string());
    match ids.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(format!("item {} came twice", w[0])),
        None => Ok(()),
    }
}

/// A page's totals are its ranges' sums: the documents retrieved and their size, the index
/// hits, and the request charge (to rounding).
fn page_totals_consistent(r: &cosmoscope::engine::QueryResult) -> Result<(), String> {
    let sum = |f: fn(&cosmoscope::engine::QueryMetrics) -> u64| -> u64 {
        r.partitions.iter().map(|p| f(&p.metrics)).sum()
    };
    let checks = [
        (
            "retrievedDocumentCount",
            sum(|m| m.retrieved_document_count),
            r.metrics.retrieved_document_count,
        ),
        (
            "retrievedDocumentSize",
            sum(|m| m.retrieved_document_size),
            r.metrics.retrieved_document_size,
        ),
        (
            "indexHitDocumentCount",
            sum(|m| m.index_hit_document_count),
            r.metrics.index_hit_document_count,
        ),
    ];
    for (name, ranges, total) in checks {
        if ranges != total {
            return Err(format!(
                "{name}: the ranges sum to {ranges}, the total says {total}"
            ));
        }
    }
    let charges: f64 = r.partitions.iter().map(|p| p.request_charge).sum();
    // Each figure is rounded on its own, and a page's charge is the rounded running total
    // less the previous pages' (so pages add up): a cent apart per figure at most.
    if (charges - r.request_charge).abs() > 0.01 * (r.partitions.len() + 1) as f64 + 1e-9 {
        return Err(format!(
            "the ranges charge {charges}, the page {}",
            r.request_charge
        ));
    }
    Ok(())
}

fn show(rows: &[Value]) -> String {
    let text = Value::Array(rows.to_vec()).to_string();
    if text.len() > 600 {
        format!(
            "{}… ({} rows)",
            text.chars().take(600).collect::<String>(),
            rows.len()
        )
    } else {
        text
    }
}

fn same_rows(compare: Compare, a: &[Value], b: &[Value]) -> bool {
    match compare {
        Compare::Count => a.len() == b.len(),
        Compare::Sequence => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| close(x, y)),
        Compare::Multiset => {
            let sorted = |rows: &[Value]| {
                let mut keyed: Vec<(String, &Value)> =
                    rows.iter().map(|r| (sort_key(r), r)).collect();
                keyed.sort_by(|x, y| x.0.cmp(&y.0));
                keyed
                    .into_iter()
                    .map(|(_, r)| r.clone())
                    .collect::<Vec<_>>()
            };
            let (a, b) = (sorted(a), sorted(b));
            a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| close(x, y))
        }
    }
}

/// Every property of the module comment for one case; `Err` describes the first violation.
fn verify(engine: &Engine, case: &Case, page: usize) -> Result<(), String> {
    let mut answers: Vec<(&str, Result<Outcome, String>)> = Vec::new();
    for container in ["one", "split", "lean", "tiers"] {
        let answer = drain(engine, container, case, 1_000);
        if let Err(e) = &answer
            && !e.starts_with("400 ")
        {
            return Err(format!("{container}: not a 400: {e}"));
        }
        answers.push((container, answer));
    }
    // `lean` has no index for the ORDER BY: it must refuse what the others run.
    if case.needs_index {
        match &answers[2].1 {
            Err(e) if e.contains("index") => {}
            other => {
                if answers[0].1.is_ok() {
                    return Err(format!(
                        "lean: expected the range-index 400, got {:?}",
                        other.as_ref().map(|o| show(&o.rows))
                    ));
                }
            }
        }
        let _lean = answers.remove(2);
    }
    let (first, reference) = &answers[0];
    for (container, answer) in &answers[1..] {
        match (reference, answer) {
            (Ok(a), Ok(b)) => {
                if !same_rows(case.compare, &a.rows, &b.rows) {
                    return Err(format!(
                        "{first} and {container} differ ({:?}):\n  {first}: {}\n  {container}: {}",
                        case.compare,
                        show(&a.rows),
                        show(&b.rows)
                    ));
                }
            }
            // Both refuse it (the messages may differ, as a filter an index serves may fail
            // on other rows than a scan).
            (Err(_), Err(_)) => {}
            // Which rows TOP or OFFSET picks may decide whether a row fails (NaN output).
            (Err(e), Ok(_)) | (Ok(_), Err(e))
                if case.compare == Compare::Count && e.contains("JSON can't represent") => {}
            (a, b) => {
                return Err(format!(
                    "{first} and {container} disagree on failing:\n  {first}: {:?}\n  {container}: {:?}",
                    a.as_ref().map(|o| show(&o.rows)),
                    b.as_ref().map(|o| show(&o.rows))
                ));
            }
        }
    }
    // Paging and determinism on every container that ran the query.
    for (container, answer) in &answers {
        let Ok(whole) = answer else { continue };
        let paged = drain(engine, container, case, page)
            .map_err(|e| format!("{container}: pages of {page} failed: {e}"))?;
        if paged.rows != whole.rows {
            return Err(format!(
                "{container}: pages of {page} differ from the whole result:\n  whole: {}\n  paged: {}",
                show(&whole.rows),
                show(&paged.rows)
            ));
        }
        if (paged.charge - whole.charge).abs() > 0.011 {
            return Err(format!(
                "{container}: pages of {page} cost {} against {} unpaged",
                paged.charge, whole.charge
            ));
        }
        let again = drain(engine, container, case, 1_000)
            .map_err(|e| format!("{container}: the second run failed: {e}"))?;
        if again.charge != whole.charge || again.rows != whole.rows {
            return Err(format!(
                "{container}: a second run differs: charge {} vs {}",
                again.charge, whole.charge
            ));
        }
    }
    Ok(())
}

/// Cases per run; the environment variable `var` overrides `default` for longer runs.
fn case_count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn case(i: usize) -> (Case, usize) {
    let mut rng = case_rng(0xCA5E, i);
    let case = query(&mut rng);
    let page = rng.pick(&[1, 2, 3, 5, 8]);
    (case, page)
}

/// The random stream of case `i` of the stream named `stream` (each test has its own).
fn case_rng(stream: u64, i: usize) -> Rng {
    Rng(stream ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D))
}

/// Case `i` of a run, and the page size to drain it in.
type MakeCase = fn(usize) -> (Case, usize);

/// Runs `check` on cases `0..cases` on a worker thread with a watchdog; fails with the
/// first failing cases.
fn run_cases(
    engine: Engine,
    (cases, case): (usize, MakeCase),
    check: fn(&Engine, usize, &Case, usize) -> Result<(), String>,
) {
    let engine = Arc::new(engine);
    let progress = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = mpsc::channel();
    let worker = {
        let engine = Arc::clone(&engine);
        let progress = Arc::clone(&progress);
        std::thread::spawn(move || {
            let mut failures = Vec::new();
            for i in 0..cases {
                progress.store(i, Ordering::Relaxed);
                let (case, page) = case(i);
                match catch_unwind(AssertUnwindSafe(|| check(&engine, i, &case, page))) {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => failures.push(format!("case {i}: {}\n  {e}", case.sql)),
                    Err(_) => failures.push(format!("case {i}: {}\n  panicked", case.sql)),
                }
            }
            let _ = done_tx.send(());
            failures
        })
    };
    if done_rx.recv_timeout(Duration::from_secs(600)).is_err() {
        let i = progress.load(Ordering::Relaxed);
        panic!("the engine hung or crashed on case {i}: {}", case(i).0.sql);
    }
    let failures = worker.join().expect("the worker panicked");
    let show = case_count("QUERY_DIFF_SHOW", 8);
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed, the first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(show)].join("\n\n")
    );
}

#[test]
fn containers_agree_pages_add_up_and_nothing_panics() {
    let (_dir, engine) = store();
    run_cases(
        engine,
        (case_count("QUERY_DIFF_CASES", CASES), case),
        |engine, _, case, page| verify(engine, case, page),
    );
}

/// Pages resume where they ended when the container splits between them: each case pages
/// through a fresh copy of `one`, whose throughput rises after the first page (one range
/// becomes four) and again after the second (ten). Together the pages hold the unpaged rows.
fn survives_splits(engine: &Engine, i: usize, case: &Case, page: usize) -> Result<(), String> {
    let Ok(whole) = drain(engine, "one", case, 1_000) else {
        return Ok(());
    };
    let name = format!("grow{i}");
    container(
        engine,
        (&name, &["/pk"]),
        (400, None, full_policy()),
        &documents(),
    );
    let mut opts = options(case, page);
    let mut rows = Vec::new();
    for step in 0.. {
        let r = engine
            .query(DB, &name, &case.sql, &opts)
            .map_err(|e| format!("page {}: {} {}", step + 1, e.status, e.message))?;
        rows.extend(r.documents.into_iter().map(|d| strip(&Value::from(d))));
        let Some(token) = r.continuation else { break };
        opts.continuation = Some(token);
        if let Some(ru) = [40_000, 100_000].get(step) {
            engine
                .set_throughput(DB, &name, Throughput::Manual(*ru))
                .map_err(|e| format!("split: {e}"))?;
        }
        if step > 10_000 {
            return Err("more than 10,000 pages".into());
        }
    }
    // A streamed scan reads a split range's children one after the other, so the order of
    // its later rows may change (and with it what TOP picks); a computed result's may not.
    let compare = case.compare;
    if !same_rows(compare, &whole.rows, &rows) {
        return Err(format!(
            "pages of {page} across splits differ ({compare:?}):\n  whole: {}\n  paged: {}",
            show(&whole.rows),
            show(&rows)
        ));
    }
    Ok(())
}

#[test]
fn pages_survive_splits() {
    let (dir, engine) = store();
    let _dir = dir;
    run_cases(
        engine,
        (case_count("QUERY_DIFF_SPLIT_CASES", SPLIT_CASES), case),
        survives_splits,
    );
}

/// A streamed `SELECT * FROM c WHERE <filter>` paged while items are written between its
/// pages, on one range (read in document order) and on many: every item that matches and
/// was not touched comes exactly once, and nothing comes twice. Between the first pages one
/// item is deleted, one replaced with other values, and one created.
fn survives_writes(engine: &Engine, i: usize, case: &Case, page: usize) -> Result<(), String> {
    let sql = format!("SELECT * FROM c WHERE {}", case.sql);
    let docs = documents();
    for (k, max_bytes) in [(0, None), (1, Some(1_500))] {
        let name = format!("w{i}x{k}");
        container(
            engine,
            (&name, &["/pk"]),
            (400, max_bytes, full_policy()),
            &docs,
        );
        let mut rng = case_rng(0x3217E5, i);
        let mut touched: Vec<String> = Vec::new();
        let mut opts = options(case, page);
        let mut seen: Vec<String> = Vec::new();
        for step in 0.. {
            let r = match engine.query(DB, &name, &sql, &opts) {
                Ok(r) => r,
                Err(_) if step == 0 => return Ok(()), // a 400 the other tests compare
                Err(e) => return Err(format!("{name}: page {}: {}", step + 1, e.message)),
            };
            seen.extend(
                r.documents
                    .into_iter()
                    .map(|d| Value::from(d)["id"].to_string()),
            );
            let Some(token) = r.continuation else { break };
            opts.continuation = Some(token);
            if step > 10_000 {
                return Err(format!("{name}: more than 10,000 pages"));
            }
            if step >= 12 {
                continue; // a dozen rounds of writes leave most items untouched
            }
            let pick = |rng: &mut Rng, touched: &[String]| -> Value {
                let candidates: Vec<&Value> = docs
                    .iter()
                    .filter(|d| d.get("pk").is_some())
                    .filter(|d| !touched.contains(&d["id"].to_string()))
                    .collect();
                candidates[rng.index(candidates.len())].clone()
            };
            let gone = pick(&mut rng, &touched);
            touched.push(gone["id"].to_string());
            engine
                .delete_item(
                    DB,
                    &name,
                    gone["id"].as_str().unwrap_or(""),
                    &gone["pk"],
                    None,
                )
                .map_err(|e| format!("{name}: delete: {e}"))?;
            let mut changed = pick(&mut rng, &touched);
            touched.push(changed["id"].to_string());
            changed["b"] = json!(rng.index(8));
            changed["s"] = json!(rng.pick(&["app", "banana", "zz"]));
            engine
                .replace_item(DB, &name, changed.to_string().as_bytes(), None)
                .map_err(|e| format!("{name}: replace: {e}"))?;
            let mut born = document(&mut rng, 100 + step);
            born["id"] = json!(format!("n{step}"));
            touched.push(born["id"].to_string());
            engine
                .upsert_item(DB, &name, born.to_string().as_bytes(), None)
                .map_err(|e| format!("{name}: create: {e}"))?;
        }
        let mut sorted = seen.clone();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("{name}: item {} came twice", w[0]));
        }
        // What matches now, less what changed, is what must have come.
        let expected: Vec<String> = rows(
            engine,
            &name,
            &format!("SELECT VALUE c.id {}", &sql["SELECT *".len()..]),
            1_000,
        )
        .iter()
        .map(Value::to_string)
        .filter(|id| !touched.contains(id))
        .collect();
        let untouched: Vec<&String> = seen.iter().filter(|id| !touched.contains(id)).collect();
        let missing: Vec<&String> = expected.iter().filter(|id| !seen.contains(id)).collect();
        if !missing.is_empty() || untouched.len() != expected.len() {
            return Err(format!(
                "{name}: pages of {page} gave {} untouched items, {} match now; missing {missing:?}",
                untouched.len(),
                expected.len()
            ));
        }
    }
    Ok(())
}

#[test]
fn pages_survive_writes_between_them() {
    let (_dir, engine) = store();
    run_cases(
        engine,
        (case_count("QUERY_DIFF_WRITE_CASES", 40), |i| {
            let mut rng = case_rng(0x3217, i);
            let f = if rng.chance(20) {
                "true".to_string()
            } else {
                filter(&mut rng, 1, false)
            };
            (Case::new(f, Compare::Multiset), rng.pick(&[1, 2, 3, 5, 8]))
        }),
        survives_writes,
    );
}

/// The generator must mostly write queries the engine accepts, or the comparisons above
/// compare errors.
#[test]
fn most_generated_queries_are_valid() {
    let (_dir, engine) = store();
    let n = 300;
    let mut valid = 0;
    let mut errors: HashMap<String, usize> = HashMap::new();
    for i in 0..n {
        let (case, _) = case(i);
        match drain(&engine, "one", &case, 1_000) {
            Ok(_) => valid += 1,
            Err(e) => *errors.entry(e.chars().take(80).collect()).or_default() += 1,
        }
    }
    assert!(
        valid * 10 >= n * 8,
        "only {valid} of {n} generated queries ran; errors: {errors:#?}"
    );
}

// ---- metamorphic checks ----

/// The number of rows `sql` gives on `container`, or the error.
fn count_rows(engine: &Engine, container: &str, sql: &str) -> Result<usize, String> {
    drain(
        engine,
        container,
        &Case::new(sql.to_string(), Compare::Count),
        1_000,
    )
    .map(|o| o.rows.len())
}

/// Three-valued logic, whichever way the filter is served: the items where a filter is
/// `true`, those where its negation is, and those where it is not a boolean are all the
/// items, each once; and `COUNT(1)` counts the first.
fn filter_partitions(engine: &Engine, f: &str) -> Result<(), String> {
    for container in ["split", "lean", "tiers"] {
        let count = |sql: String| count_rows(engine, container, &sql);
        let ids = |sql: String| -> Result<Vec<Value>, String> {
            drain(engine, container, &Case::new(sql, Compare::Multiset), 1_000).map(|o| o.rows)
        };
        let Ok(yes) = ids(format!("SELECT VALUE c.id FROM c WHERE {f}")) else {
            continue; // a 400 (a NaN result): the differential test compares errors
        };
        let no = ids(format!("SELECT VALUE c.id FROM c WHERE NOT ({f})"))?;
        let neither = count(format!("SELECT VALUE c.id FROM c WHERE NOT IS_BOOL({f})"))?;
        let mut all: Vec<String> = yes.iter().chain(&no).map(Value::to_string).collect();
        all.sort();
        all.dedup();
        if all.len() != yes.len() + no.len() || all.len() + neither != ITEMS {
            return Err(format!(
                "{container}: WHERE {f} gives {}, its negation {}, neither {neither}, \
                 overlapping in {}, of {ITEMS} items",
                yes.len(),
                no.len(),
                yes.len() + no.len() - all.len()
            ));
        }
        let counted = drain(
            engine,
            container,
            &Case::new(
                format!("SELECT VALUE COUNT(1) FROM c WHERE {f}"),
                Compare::Count,
            ),
            1_000,
        )?;
        if counted.rows != vec![json!(yes.len())] {
            return Err(format!(
                "{container}: COUNT(1) WHERE {f} is {:?}, the rows {}",
                counted.rows,
                yes.len()
            ));
        }
    }
    Ok(())
}

/// [`filter_partitions`] over the rows of `FROM c JOIN t IN c.tags`: all of them, each
/// counted once, whichever way the filter is served.
fn join_filter_partitions(engine: &Engine, f: &str) -> Result<(), String> {
    let from = "FROM c JOIN t IN c.tags";
    for container in ["split", "lean", "tiers"] {
        let count = |sql: String| count_rows(engine, container, &sql);
        let all = count(format!("SELECT VALUE t {from}"))?;
        let Ok(yes) = count(format!("SELECT VALUE c.id {from} WHERE {f}")) else {
            continue;
        };
        let no = count(format!("SELECT VALUE c.id {from} WHERE NOT ({f})"))?;
        let neither = count(format!("SELECT VALUE c.id {from} WHERE NOT IS_BOOL({f})"))?;
        if yes + no + neither != all {
            return Err(format!(
                "{container}: over {all} JOIN rows, WHERE {f} gives {yes}, its negation {no}, \
                 neither {neither}"
            ));
        }
    }
    Ok(())
}

/// The rank of a value's type in the order ORDER BY sorts by (undefined first).
fn type_rank(v: Option<&Value>) -> u8 {
    match v {
        None => 0,
        Some(Value::Null) => 1,
        Some(Value::Bool(_)) => 2,
        Some(Value::Number(_)) => 3,
        Some(Value::String(_)) => 4,
        Some(Value::Array(_)) => 5,
        Some(Value::Object(_)) => 6,
    }
}

/// Whether `a` comes after `b` in ORDER BY's order of primitives: type order, then value
/// (numbers as doubles, strings by code point); arrays and objects only by type.
fn sorts_after(a: Option<&Value>, b: Option<&Value>) -> bool {
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra > rb;
    }
    match (a, b) {
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x > y,
        (Some(Value::Number(x)), Some(Value::Number(y))) => {
            x.as_f64().unwrap_or_default() > y.as_f64().unwrap_or_default()
        }
        (Some(Value::String(x)), Some(Value::String(y))) => x > y,
        _ => false,
    }
}

#[test]
fn filters_partition_the_items_three_ways() {
    let (_dir, engine) = store();
    run_cases(
        engine,
        (case_count("QUERY_DIFF_FILTER_CASES", 1_000), |i| {
            let mut rng = case_rng(0xF117, i);
            let over_tags = rng.chance(30);
            let mut case = Case::new(filter(&mut rng, 2, over_tags), Compare::Count);
            case.over_tags = over_tags;
            (case, 0)
        }),
        |engine, _, case, _| {
            if case.over_tags {
                join_filter_partitions(engine, &case.sql)
            } else {
                filter_partitions(engine, &case.sql)
            }
        },
    );
}

#[test]
fn order_by_sorts_in_the_type_order() {
    // Every path ORDER BY can take, both ways, on every container that indexes it: the
    // values come out in the type order, whatever the ranges.
    let (_dir, engine) = store();
    let mut failures = Vec::new();
    for path in PATHS.iter().filter(|p| !p.contains('[')) {
        for dir in ["ASC", "DESC"] {
            let sql = format!("SELECT VALUE {{v: {path}}} FROM c ORDER BY {path} {dir}");
            for container in ["one", "split", "tiers"] {
                let case = Case::new(sql.clone(), Compare::Sequence);
                let rows = match drain(&engine, container, &case, 7) {
                    Ok(o) => o.rows,
                    Err(e) => {
                        failures.push(format!("{container}: {sql}: {e}"));
                        continue;
                    }
                };
                let values: Vec<Option<&Value>> = rows.iter().map(|r| r.get("v")).collect();
                let misplaced = values.windows(2).position(|w| {
                    if dir == "ASC" {
                        sorts_after(w[0], w[1])
                    } else {
                        sorts_after(w[1], w[0])
                    }
                });
                if let Some(at) = misplaced {
                    failures.push(format!(
                        "{container}: {sql}: {:?} before {:?} at {at}",
                        values[at],
                        values[at + 1]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The rows of `sql` on `container`, drained in pages of `page`; panics on an error.
fn rows(engine: &Engine, container: &str, sql: &str, page: usize) -> Vec<Value> {
    drain(
        engine,
        container,
        &Case::new(sql.to_string(), Compare::Sequence),
        page,
    )
    .unwrap_or_else(|e| panic!("{container}: {sql}: {e}"))
    .rows
}

#[test]
fn windows_and_groups_agree_with_the_whole() {
    // OFFSET/LIMIT and TOP cut the whole ordered result where they say, and GROUP BY and
    // DISTINCT account for every item: properties no comparison between containers sees
    // if every container is off the same way.
    let (_dir, engine) = store();
    let mut rng = Rng(0x0FF5E7);
    for container in ["one", "split", "lean", "tiers"] {
        for dir in ["ASC", "DESC"] {
            let order = format!("ORDER BY c.u {dir}");
            let whole = rows(
                &engine,
                container,
                &format!("SELECT VALUE c.id FROM c {order}"),
                1_000,
            );
            assert_eq!(whole.len(), ITEMS);
            for _ in 0..12 {
                let (offset, limit) = (rng.index(ITEMS + 4), rng.index(20));
                let page = 1 + rng.index(6);
                let sql = format!("SELECT VALUE c.id FROM c {order} OFFSET {offset} LIMIT {limit}");
                let cut: Vec<Value> = whole.iter().skip(offset).take(limit).cloned().collect();
                assert_eq!(
                    rows(&engine, container, &sql, page),
                    cut,
                    "{container}: {sql}"
                );
                let sql = format!("SELECT TOP {limit} VALUE c.id FROM c {order}");
                let top: Vec<Value> = whole.iter().take(limit).cloned().collect();
                assert_eq!(
                    rows(&engine, container, &sql, page),
                    top,
                    "{container}: {sql}"
                );
            }
        }
        // A partition key with the request reads what a filter on the key matches (on
        // `tiers`, one value is a prefix of the hierarchical key).
        for key in [json!("p1"), json!(2), json!("nope")] {
            let filtered = rows(
                &engine,
                container,
                &format!("SELECT VALUE c.id FROM c WHERE c.pk = {key} ORDER BY c.u"),
                1_000,
            );
            let mut case = Case::new(
                "SELECT VALUE c.id FROM c ORDER BY c.u".into(),
                Compare::Sequence,
            );
            case.pk = Some(key.clone());
            let named = drain(&engine, container, &case, 5)
                .unwrap_or_else(|e| panic!("{container}: key {key}: {e}"))
                .rows;
            assert_eq!(named, filtered, "{container}: key {key}");
        }
        for path in PATHS.iter().filter(|p| !p.contains('[') && **p != "c.id") {
            let counts = rows(
                &engine,
                container,
                &format!("SELECT VALUE COUNT(1) FROM c GROUP BY {path}"),
                3,
            );
            let total: u64 = counts.iter().map(|n| n.as_u64().unwrap_or(0)).sum();
            assert_eq!(
                total, ITEMS as u64,
                "{container}: GROUP BY {path}: {counts:?}"
            );
            let undefined = count_rows(
                &engine,
                container,
                &format!("SELECT VALUE c.id FROM c WHERE NOT IS_DEFINED({path})"),
            )
            .expect("IS_DEFINED");
            let distinct = rows(
                &engine,
                container,
                &format!("SELECT DISTINCT VALUE {path} FROM c"),
                4,
            );
            assert_eq!(
                distinct.len() + usize::from(undefined > 0),
                counts.len(),
                "{container}: DISTINCT {path} against its groups"
            );
        }
    }
}

#[test]
fn damaged_tokens_are_refused_or_continue_never_panic() {
    // A token is JSON the client hands back: a user (or a bug) can change any field. Each
    // field of real tokens set to extreme, wrong or foreign values must give a 400 or some
    // page, never a panic or a hang (the watchdog of `run_cases`).
    let (_dir, engine) = store();
    run_cases(
        engine,
        (case_count("QUERY_DIFF_TOKEN_CASES", 300), case),
        |engine, i, case, page| {
            let mut rng = case_rng(0x70CE, i);
            let container = rng.pick(&["one", "split", "tiers"]);
            let opts = options(case, page);
            let Ok(first) = engine.query(DB, container, &case.sql, &opts) else {
                return Ok(());
            };
            let Some(token) = first.continuation else {
                return Ok(());
            };
            let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(&token) else {
                return Err(format!("a token that is not a JSON object: {token}"));
            };
            let damaged_values = [
                json!(u64::MAX),
                json!(i64::MIN),
                json!(-1),
                json!(1e308),
                json!(0),
                json!(""),
                json!("zz"),
                json!("00"),
                json!("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"),
                json!(null),
                json!([]),
                json!([["", "FF", u64::MAX, u64::MAX]]),
                json!([["FF", "", 0, 0]]),
                json!([["zz", "FF", 0, 0]]),
                json!([u32::MAX, 0, 7]),
                json!({}),
            ];
            for key in fields.keys() {
                for _ in 0..4 {
                    let mut damaged = fields.clone();
                    damaged.insert(key.clone(), rng.pick(&damaged_values));
                    let mut opts = options(case, page);
                    opts.continuation = Some(Value::Object(damaged).to_string());
                    // Follow a few pages: a damaged position must not loop forever.
                    for _ in 0..200 {
                        match engine.query(DB, container, &case.sql, &opts) {
                            Ok(r) => match r.continuation {
                                Some(next) => opts.continuation = Some(next),
                                None => break,
                            },
                            Err(e) if e.status == 400 => break,
                            Err(e) => {
                                return Err(format!(
                                    "{container}: {key} damaged: {} {}",
                                    e.status, e.message
                                ));
                            }
                        }
                    }
                }
            }
            Ok(())
        },
    );
}
