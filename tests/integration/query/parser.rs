//! The NoSQL query parser and semantic checks through the public API
//! (`cosmoscope::query::parse`, `cosmoscope::query::check`): every clause and
//! operator form of the docs' examples, precedence, literal and keyword case rules, string
//! escapes, and the exact position and wording of typical mistakes.

use cosmoscope::query::ast::{
    BinaryOp, Expr, ExprKind, FromKind, JoinSource, Literal, PathStep, Pos, Query, SelectKind,
    UnaryOp,
};
use cosmoscope::query::check;
use cosmoscope::query::parse;

// ---------------------------------------------------------------------------------------------
// Helpers

fn parsed(text: &str) -> Query {
    parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

/// Parses and checks.
fn ok(text: &str) -> Query {
    let q = parsed(text);
    if let Err(e) = check(&q) {
        panic!("{text:?} should pass the checks: {e}");
    }
    q
}

/// The expression of `SELECT VALUE <text>`, unchecked.
fn value(text: &str) -> Expr {
    match parsed(&format!("SELECT VALUE {text}")).select.kind {
        SelectKind::Value(e) => e,
        other => panic!("not a VALUE select: {other:?}"),
    }
}

/// The WHERE expression of `SELECT * FROM c WHERE <text>`, unchecked.
fn filter(text: &str) -> Expr {
    parsed(&format!("SELECT * FROM c WHERE {text}"))
        .filter
        .expect("a WHERE clause")
}

/// (line, column, message) of a syntax error.
fn syntax_error(text: &str) -> (u32, u32, String) {
    match parse(text) {
        Ok(q) => panic!("{text:?} should not parse, got {q:?}"),
        Err(e) => {
            assert_eq!(e.status.as_u16(), 400, "{text:?}: {e}");
            (
                e.line.expect("a line"),
                e.column.expect("a column"),
                e.message,
            )
        }
    }
}

/// (line, column, message) of a semantic error (the text must parse).
fn check_error(text: &str) -> (u32, u32, String) {
    let q = parsed(text);
    match check(&q) {
        Ok(()) => panic!("{text:?} should fail the checks"),
        Err(e) => {
            assert_eq!(e.status.as_u16(), 400, "{text:?}: {e}");
            (
                e.line.expect("a line"),
                e.column.expect("a column"),
                e.message,
            )
        }
    }
}

fn assert_error_at(err: (u32, u32, String), line: u32, column: u32, needle: &str) {
    assert_eq!(
        (err.0, err.1),
        (line, column),
        "wrong position for error {:?}",
        err.2
    );
    assert!(
        err.2.contains(needle),
        "message {:?} should contain {needle:?}",
        err.2
    );
}

/// A compact prefix rendering of an expression, for shape assertions.
fn sx(e: &Expr) -> String {
    use ExprKind as K;
    let list = |v: &[Expr]| v.iter().map(sx).collect::<Vec<_>>().join(" ");
    match &e.kind {
        K::Literal(Literal::Undefined) => "undefined".into(),
        K::Literal(Literal::Null) => "null".into(),
        K::Literal(Literal::Bool(b)) => b.to_string(),
        K::Literal(Literal::Number(n)) => n.to_string(),
        K::Literal(Literal::String(s)) => format!("{s:?}"),
        K::Param(p) => format!("@{p}"),
        K::Ident(n) => n.clone(),
        K::Property(b, p) => format!("{}.{p}", sx(b)),
        K::Index(b, i) => format!("{}[{}]", sx(b), sx(i)),
        K::Unary(op, x) => format!("({} {})", unary(*op), sx(x)),
        K::Binary(op, a, b) => format!("({} {} {})", binary(*op), sx(a), sx(b)),
        K::Between {
            expr,
            low,
            high,
            negated,
        } => format!(
            "({}between {} {} {})",
            if *negated { "not-" } else { "" },
            sx(expr),
            sx(low),
            sx(high)
        ),
        K::In {
            expr,
            list: l,
            negated,
        } => format!(
            "({}in {} [{}])",
            if *negated { "not-" } else { "" },
            sx(expr),
            list(l)
        ),
        K::Like {
            expr,
            pattern,
            escape,
            negated,
        } => format!(
            "({}like {} {}{})",
            if *negated { "not-" } else { "" },
            sx(expr),
            sx(pattern),
            escape
                .as_ref()
                .map(|x| format!(" escape {}", sx(x)))
                .unwrap_or_default()
        ),
        K::Ternary(a, b, c) => format!("(? {} {} {})", sx(a), sx(b), sx(c)),
        K::Call { name, args, udf } => {
            format!("{}{name}({})", if *udf { "udf." } else { "" }, list(args))
        }
        K::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}: {}", sx(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        K::Array(v) => format!("[{}]", list(v)),
        K::Exists(_) => "exists(...)".into(),
        K::ArraySubquery(_) => "array(...)".into(),
        K::Subquery(_) => "(subquery)".into(),
    }
}

fn unary(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "neg",
        UnaryOp::Plus => "plus",
        UnaryOp::BitNot => "~",
        UnaryOp::Not => "not",
    }
}

fn binary(op: BinaryOp) -> &'static str {
    use BinaryOp as B;
    match op {
        B::Add => "+",
        B::Sub => "-",
        B::Mul => "*",
        B::Div => "/",
        B::Mod => "%",
        B::Concat => "||",
        B::BitAnd => "&",
        B::BitOr => "|",
        B::BitXor => "^",
        B::Shl => "<<",
        B::Shr => ">>",
        B::UShr => ">>>",
        B::Eq => "=",
        B::Ne => "!=",
        B::Lt => "<",
        B::Le => "<=",
        B::Gt => ">",
        B::Ge => ">=",
        B::And => "and",
        B::Or => "or",
        B::Coalesce => "??",
    }
}

fn pos(line: u32, column: u32) -> Pos {
    Pos { line, column }
}

// ---------------------------------------------------------------------------------------------
// The docs' examples (articles/cosmos-db/nosql/query/*.md and the cosmos-db-nosql-query-samples
// scripts they include) parse and pass the checks.

const DOC_QUERIES: &[&str] = &[
    "SELECT VALUE p.price FROM products p WHERE p.price BETWEEN 17.25 AND 25.50",
    "SELECT (p.price BETWEEN 0 AND 10) AS booleanLessThanTen, p.price FROM products p",
    "SELECT DISTINCT VALUE p.category FROM products p",
    "SELECT DISTINCT p.category FROM products p",
    "SELECT VALUE p.name FROM products p WHERE p.name LIKE \"%driver%\"",
    "SELECT VALUE p.name FROM products p WHERE p.name NOT LIKE \"%winter%\"",
    "SELECT VALUE p.name FROM products p WHERE p.description LIKE \"%20^%%\" ESCAPE \"^\"",
    "SELECT * FROM products p WHERE p.category IN (\"Accessories\", \"Clothing\")",
    "SELECT TOP 10 * FROM products p ORDER BY p.price ASC",
    "SELECT VALUE ((2 + 11 % 7) - 2) / 2",
    "SELECT (\"Redmond\" = \"WA\") AS isCitySameAsState, (\"WA\" = \"WA\") AS isStateSameAsState",
    "SELECT (100 >> 2) AS rightShift, (100 << 2) AS leftShift, (100 >>> 0) AS zeroFillRightShift, \
     (100 & 1000) AS logicalAnd, (100 | 1000) AS logicalOr, (100 ^ 1000) AS logicalExclusiveOr",
    "SELECT p.name, p.price AS subtotal, p.onSale ? (p.price * 0.85) : p.price AS total FROM products p",
    "SELECT p.name, p.price AS subtotal, \
     p.onCloseout ? (p.price * 0.55) : p.onSale ? (p.price * 0.85) : p.price AS total FROM products p",
    "SELECT p.name, p.collapsible ?? false AS isCollapsible FROM products p",
    "SELECT * FROM employees.employment e WHERE e.team = \"Retail support\"",
    "SELECT COUNT(1) AS trainedEmployees, e.capabilities.softwareDevelopment AS developmentLang \
     FROM employees e WHERE e.team = \"Cloud software engineering\" \
     GROUP BY e.capabilities.softwareDevelopment",
    "SELECT COUNT(1) AS employeesWithThisTraining, \
     e.capabilities.softwareDevelopment AS developmentLang, \
     e.capabilities.mediaTrained AS mediaReady FROM employees e \
     WHERE e.team = \"Cloud software engineering\" \
     GROUP BY e.capabilities.softwareDevelopment, e.capabilities.mediaTrained",
    "SELECT VALUE {\n    name: e.name\n}\nFROM\n    employees e\nWHERE\n    e.team = \"Leadership team\"\n\
     ORDER BY\n    e.name\nOFFSET 2 LIMIT 2",
    "SELECT * FROM products p WHERE STARTSWITH(p.tags[0].slug, \"color-group-\") OR \
     STARTSWITH(p.tags[1].slug, \"color-group-\") OR STARTSWITH(p.tags[2].slug, \"color-group-\")",
    "SELECT p.id, p.sku, t.slug FROM products p JOIN t IN p.tags",
    "SELECT p.sku, t.name AS tag FROM products p JOIN t IN p.tags WHERE STARTSWITH(t.slug, \"color-group-\")",
    "SELECT p.sku, t.name AS tag FROM products p JOIN t IN p.tags \
     WHERE p.categoryName = \"Sleeping Bags\" AND t.slug = \"bag-shape-mummy\"",
    "SELECT VALUE COUNT(1) FROM products p JOIN t in p.tags JOIN q in p.onHandQuantities \
     JOIN s in p.warehouseStock WHERE t.name IN (\"winter\", \"fall\") AND \
     (q.quantity BETWEEN 0 AND 10) AND NOT s.backstock",
    "SELECT VALUE COUNT(1) FROM products p \
     JOIN (SELECT VALUE t FROM t IN p.tags WHERE t.name IN (\"winter\", \"fall\")) \
     JOIN (SELECT VALUE q FROM q IN p.onHandQuantities WHERE q.quantity BETWEEN 0 AND 10) \
     JOIN (SELECT VALUE s FROM s IN p.warehouseStock WHERE NOT s.backstock)",
    "SELECT VALUE { subtotal: p.price, total: udf.getTotalWithTax(p.price) } FROM products p \
     WHERE udf.getTotalWithTax(p.price) < 22.25",
    "SELECT VALUE { subtotal: p.price, total: totalPrice } FROM products p \
     JOIN (SELECT VALUE udf.getTotalWithTax(p.price)) totalPrice WHERE totalPrice < 22.25",
    "SELECT s.id, (s.weight.quantity * m.multiplier) AS calculatedWeight, m.unit AS unitOfWeight \
     FROM shipments s JOIN m IN (SELECT VALUE [ \
     {unit: 'ng', name: 'nanogram', multiplier: 0.000000001, baseUnit: 'gram'}, \
     {unit: 'µg', name: 'microgram', multiplier: 0.000001, baseUnit: 'gram'}, \
     {unit: 'Gg', name: 'gigagram', multiplier: 1000000000, baseUnit: 'gram'} ]) \
     WHERE s.weight.units = m.unit",
    "SELECT 1 AS a, 2 AS b",
    "SELECT (SELECT VALUE 1) AS a, (SELECT VALUE 2) AS b",
    "SELECT (SELECT VALUE Concat('ID-', p.id)) AS internalId FROM products p",
    "SELECT p.id, (SELECT p.name WHERE CONTAINS(p.name, \"glove\")).name FROM products p",
    "SELECT p.name, (SELECT VALUE COUNT(1) FROM i IN p.inventory) AS locationCount FROM products p",
    "SELECT p.name, (SELECT VALUE COUNT(1) FROM i IN p.inventory WHERE ENDSWITH(i.location, \"WA\")) \
     AS washingtonLocationCount FROM products p",
    "SELECT p.name, (SELECT COUNT(1) AS locationCount, SUM(i.quantity) AS totalQuantity \
     FROM i IN p.inventory) AS inventoryData FROM products p",
    "SELECT p.name, (SELECT VALUE AVG(q.quantity) FROM q IN p.inventory WHERE q.quantity > 10) \
     AS averageInventory FROM products p \
     WHERE (SELECT VALUE COUNT(1) FROM i IN p.inventory WHERE i.quantity > 10) >= 1",
    "SELECT p.name, inventoryData.inventoryAverage FROM products p \
     JOIN (SELECT COUNT(1) AS inventoryCount, AVG(i.quantity) as inventoryAverage \
     FROM i IN p.inventory WHERE i.quantity > 10) AS inventoryData \
     WHERE inventoryData.inventoryCount >= 1",
    "SELECT EXISTS (SELECT VALUE undefined)",
    "SELECT undefined",
    "SELECT EXISTS (SELECT undefined)",
    "SELECT p.name, p.tags FROM products p WHERE ARRAY_CONTAINS(p.tags, \"outerwear\")",
    "SELECT p.name, p.tags FROM products p WHERE EXISTS (SELECT VALUE t FROM t IN p.tags WHERE t = \"outerwear\")",
    "SELECT VALUE p.name FROM products p WHERE EXISTS (SELECT VALUE a FROM a IN p.accessories \
     WHERE a.type = \"chains\" AND a.quantityOnHand >= 10)",
    "SELECT p.name, ARRAY (SELECT VALUE t.name FROM t in p.tags) AS tagNames, \
     ARRAY (SELECT VALUE t.name FROM t in p.tags WHERE CONTAINS(t.name, \"bike\")) AS bikeTagNames \
     FROM products p",
    "SELECT p.name, n.t.name AS nonBikeTagName FROM products p \
     JOIN n IN (SELECT VALUE ARRAY(SELECT t FROM t in p.tags WHERE t.name NOT LIKE \"%bike%\"))",
    "SELECT VALUE { finiteValue: IS_FINITE_NUMBER(1234.567), infiniteValue: IS_FINITE_NUMBER(8.9 / 0.0), \
     nanValue: IS_FINITE_NUMBER(SQRT(-1.0)) }",
    "SELECT * FROM c WHERE c.description LIKE \"%SO[^abc]PS%\"",
    "SELECT p.id FROM products AS p",
    "SELECT * FROM ROOT",
    "SELECT location FROM location IN company.locations WHERE location.country = 'France'",
];

#[test]
fn doc_examples_parse_and_check() {
    for text in DOC_QUERIES {
        // UDF calls check too: whether the container has them is decided when it runs.
        ok(text);
    }
}

// ---------------------------------------------------------------------------------------------
// SELECT

#[test]
fn select_star_value_and_items() {
    let q = ok("SELECT * FROM c");
    assert_eq!(q.select.kind, SelectKind::Star);
    assert!(!q.select.distinct);
    assert_eq!(q.select.top, None);
    assert_eq!(q.pos, pos(1, 1));
    assert_eq!(q.select.pos, pos(1, 8));

    let q = ok("SELECT DISTINCT TOP 10 VALUE p.name FROM products p");
    assert!(q.select.distinct);
    assert_eq!(
        q.select.top.as_ref().map(|e| e.kind.clone()),
        Some(ExprKind::Literal(Literal::Number(10.0)))
    );
    let SelectKind::Value(v) = &q.select.kind else {
        panic!("VALUE")
    };
    assert_eq!(sx(v), "p.name");

    let q = ok("SELECT TOP @n c.id, c.name AS n, c.price p2, 1 FROM c");
    assert_eq!(
        q.select.top.as_ref().map(|e| e.kind.clone()),
        Some(ExprKind::Param("n".into()))
    );
    let SelectKind::Items(items) = &q.select.kind else {
        panic!("items")
    };
    let shapes: Vec<(String, Option<&str>)> = items
        .iter()
        .map(|i| (sx(&i.expr), i.alias.as_deref()))
        .collect();
    assert_eq!(
        shapes,
        vec![
            ("c.id".into(), None),
            ("c.name".into(), Some("n")),
            ("c.price".into(), Some("p2")),
            ("1".into(), None),
        ]
    );
    assert_eq!(items[1].pos, pos(1, 21));
}

#[test]
fn select_value_accepts_a_meaningless_alias() {
    // select.md: `VALUE <scalar_expression> [[AS] value_alias]`.
    let q = ok("SELECT VALUE c.name AS n FROM c");
    assert!(matches!(q.select.kind, SelectKind::Value(_)));
}

#[test]
fn select_without_from() {
    let q = ok("SELECT 1");
    assert!(q.from.is_none());
    let q = ok("SELECT VALUE [1, 'a', {x: null}]");
    let SelectKind::Value(v) = &q.select.kind else {
        panic!("VALUE")
    };
    assert_eq!(sx(v), "[1 \"a\" {x: null}]");
}

// ---------------------------------------------------------------------------------------------
// FROM and JOIN

#[test]
fn from_container_forms() {
    let cases: &[(&str, &str, &[PathStep], Option<&str>)] = &[
        ("SELECT * FROM c", "c", &[], None),
        ("SELECT * FROM root r", "root", &[], Some("r")),
        ("SELECT * FROM products AS p", "products", &[], Some("p")),
        (
            "SELECT * FROM c.children[0] ch",
            "c",
            &[PathStep::Property("children".into()), PathStep::Index(0)],
            Some("ch"),
        ),
    ];
    for (text, name, path, alias) in cases {
        let q = ok(text);
        let Some(FromKind::Container {
            name: n,
            path: p,
            alias: a,
        }) = q.from.as_ref().map(|f| &f.kind)
        else {
            panic!("container source in {text}")
        };
        assert_eq!(n, name);
        assert_eq!(a.as_deref(), *alias);
        assert_eq!(p.as_slice(), *path, "{text}");
    }
    let q = ok("SELECT * FROM c[\"a b\"][1].d AS x");
    let Some(FromKind::Container { path, .. }) = q.from.as_ref().map(|f| &f.kind) else {
        panic!("container")
    };
    assert_eq!(
        path,
        &vec![
            PathStep::Property("a b".into()),
            PathStep::Index(1),
            PathStep::Property("d".into())
        ]
    );
    assert_eq!(q.from.as_ref().map(|f| f.pos), Some(pos(1, 15)));
}

#[test]
fn from_in_and_subquery() {
    let q = ok("SELECT VALUE ch FROM ch IN c.children");
    let Some(FromKind::In { alias, expr }) = q.from.as_ref().map(|f| &f.kind) else {
        panic!("IN source")
    };
    assert_eq!(alias, "ch");
    assert_eq!(sx(expr), "c.children");

    let q = ok("SELECT s.n FROM (SELECT VALUE {n: c.name} FROM c) s");
    let Some(FromKind::Subquery { alias, query }) = q.from.as_ref().map(|f| &f.kind) else {
        panic!("subquery source")
    };
    assert_eq!(alias, "s");
    assert!(query.from.is_some());

    // No alias: a name nothing can spell.
    let q = ok("SELECT * FROM (SELECT VALUE c.name FROM c)");
    let Some(FromKind::Subquery { alias, .. }) = q.from.as_ref().map(|f| &f.kind) else {
        panic!("subquery source")
    };
    assert_eq!(alias, "$0");
}

#[test]
fn joins() {
    let q = ok(
        "SELECT p.id, t, x FROM products p\nJOIN t IN p.tags\nJOIN (SELECT VALUE 1) AS x \
                JOIN (SELECT VALUE 2)",
    );
    assert_eq!(q.joins.len(), 3);
    assert_eq!(q.joins[0].alias, "t");
    assert_eq!(q.joins[0].pos, pos(2, 6));
    let JoinSource::In(e) = &q.joins[0].source else {
        panic!("IN join")
    };
    assert_eq!(sx(e), "p.tags");
    assert_eq!(q.joins[1].alias, "x");
    assert!(matches!(q.joins[1].source, JoinSource::Subquery(_)));
    assert_eq!(q.joins[2].alias, "$3");
}

// ---------------------------------------------------------------------------------------------
// WHERE, GROUP BY, ORDER BY, OFFSET LIMIT

#[test]
fn remaining_clauses() {
    let q = ok("SELECT c.a, COUNT(1) AS n FROM c WHERE c.b > 1 GROUP BY c.a, c.d");
    assert_eq!(q.filter.as_ref().map(sx).as_deref(), Some("(> c.b 1)"));
    assert_eq!(
        q.group_by.iter().map(sx).collect::<Vec<_>>(),
        vec!["c.a", "c.d"]
    );

    let q = ok("SELECT * FROM c ORDER BY c.a, c.b DESC, c.c ASC OFFSET 5 LIMIT @take");
    let order: Vec<(String, bool)> = q
        .order_by
        .iter()
        .map(|o| (sx(&o.expr), o.descending))
        .collect();
    assert_eq!(
        order,
        vec![
            ("c.a".into(), false),
            ("c.b".into(), true),
            ("c.c".into(), false)
        ]
    );
    assert_eq!(q.order_by[1].pos, pos(1, 31));
    let ol = q.offset_limit.expect("OFFSET LIMIT");
    assert_eq!(ol.offset.kind, ExprKind::Literal(Literal::Number(5.0)));
    assert_eq!(ol.limit.kind, ExprKind::Param("take".into()));
}

// ---------------------------------------------------------------------------------------------
// Expressions

#[test]
fn accessors() {
    assert_eq!(sx(&value("c.a.b")), "c.a.b");
    // ["name"] is a property, anything else an index.
    assert!(matches!(value("c[\"a b\"]").kind, ExprKind::Property(_, ref p) if p == "a b"));
    assert!(matches!(value("c[0]").kind, ExprKind::Index(..)));
    assert!(matches!(value("c[@p]").kind, ExprKind::Index(..)));
    assert_eq!(sx(&value("c.tags[c.i].name")), "c.tags[c.i].name");
    assert_eq!(sx(&value("c['x'][1]")), "c.x[1]");
}

#[test]
fn calls() {
    assert_eq!(
        sx(&value("array_contains(c.tags, 'a', true)")),
        "ARRAY_CONTAINS(c.tags \"a\" true)"
    );
    assert_eq!(sx(&value("Pi()")), "PI()");
    assert_eq!(sx(&value("left(c.s, 2)")), "LEFT(c.s 2)");
    assert_eq!(sx(&value("Right(c.s, 2)")), "RIGHT(c.s 2)");
    let e = value("udf.getTotal(c.price, 1)");
    assert_eq!(sx(&e), "udf.getTotal(c.price 1)");
    assert!(matches!(e.kind, ExprKind::Call { udf: true, ref name, .. } if name == "getTotal"));
}

#[test]
fn constructors_and_subqueries() {
    assert_eq!(
        sx(&value("{a: 1, \"b c\": c.x, 'd': [], e: {}}")),
        "{a: 1, b c: c.x, d: [], e: {}}"
    );
    assert!(matches!(
        value("EXISTS(SELECT VALUE t FROM t IN c.tags)").kind,
        ExprKind::Exists(_)
    ));
    assert!(matches!(
        value("ARRAY (SELECT VALUE t FROM t IN c.tags)").kind,
        ExprKind::ArraySubquery(_)
    ));
    let e = value("(SELECT VALUE 1)");
    assert!(matches!(e.kind, ExprKind::Subquery(_)));
    assert_eq!(sx(&value("(SELECT c.name).name")), "(subquery).name");
}

#[test]
fn in_between_like() {
    assert_eq!(sx(&filter("c.a IN (1, 'b')")), "(in c.a [1 \"b\"])");
    assert_eq!(sx(&filter("c.a NOT IN (1)")), "(not-in c.a [1])");
    assert_eq!(
        sx(&filter("c.a BETWEEN 1 AND 2 AND c.b")),
        "(and (between c.a 1 2) c.b)"
    );
    assert_eq!(
        sx(&filter("c.a NOT BETWEEN c.lo + 1 AND 2")),
        "(not-between c.a (+ c.lo 1) 2)"
    );
    assert_eq!(
        sx(&filter("c.a LIKE '%x!_%' ESCAPE '!'")),
        "(like c.a \"%x!_%\" escape \"!\")"
    );
    assert_eq!(sx(&filter("c.a not like 'x%'")), "(not-like c.a \"x%\")");
}

#[test]
fn unary_operators_and_sign_folding() {
    assert_eq!(sx(&value("-1.5e3")), "-1500");
    assert_eq!(sx(&value("+2")), "2");
    assert_eq!(sx(&value("-c.a")), "(neg c.a)");
    assert_eq!(sx(&value("- -1")), "1");
    assert_eq!(sx(&value("~c.a")), "(~ c.a)");
    assert_eq!(sx(&value("+c.a")), "(plus c.a)");
    assert_eq!(sx(&value("NOT c.a")), "(not c.a)");
    assert_eq!(sx(&value("2 - -1")), "(- 2 -1)");
    assert_eq!(value("-1").pos, pos(1, 14));
}

#[test]
fn precedence() {
    let cases = [
        ("1 + 2 * 3", "(+ 1 (* 2 3))"),
        ("(1 + 2) * 3", "(* (+ 1 2) 3)"),
        ("1 - 2 - 3", "(- (- 1 2) 3)"),
        ("8 / 4 % 3", "(% (/ 8 4) 3)"),
        ("-c.a * 2", "(* (neg c.a) 2)"),
        ("-c.a.b", "(neg c.a.b)"),
        ("'a' || 'b' + 'c'", "(|| \"a\" (+ \"b\" \"c\"))"),
        ("1 << 2 + 3", "(<< 1 (+ 2 3))"),
        ("1 << 2 || 3", "(<< 1 (|| 2 3))"),
        ("c.f & 4 = 4", "(= (& c.f 4) 4)"),
        ("1 | 2 ^ 3 & 4", "(| 1 (^ 2 (& 3 4)))"),
        ("1 >> 2 >>> 3", "(>>> (>> 1 2) 3)"),
        ("a < b = c > d", "(= (< a b) (> c d))"),
        (
            "a = 1 AND b = 2 OR c = 3",
            "(or (and (= a 1) (= b 2)) (= c 3))",
        ),
        ("a OR b AND c", "(or a (and b c))"),
        ("NOT a = b", "(not (= a b))"),
        ("NOT a AND b", "(and (not a) b)"),
        ("NOT a OR NOT b", "(or (not a) (not b))"),
        ("NOT NOT a", "(not (not a))"),
        ("1 + NOT a", "(+ 1 (not a))"),
        ("a ?? b OR c", "(?? a (or b c))"),
        ("a ?? b ?? c", "(?? (?? a b) c)"),
        ("a ?? b ? c : d", "(? (?? a b) c d)"),
        ("a ? b : c ? d : e", "(? a b (? c d e))"),
        ("a ? b ? c : d : e", "(? a (? b c d) e)"),
        ("a OR b ? 1 : 2", "(? (or a b) 1 2)"),
        ("a IN (1) = true", "(= (in a [1]) true)"),
        ("a + 1 IN (2)", "(in (+ a 1) [2])"),
        ("a != b", "(!= a b)"),
        ("a <> b", "(!= a b)"),
        ("a <= b AND a >= c", "(and (<= a b) (>= a c))"),
        ("a LIKE 'x' OR b", "(or (like a \"x\") b)"),
        ("NOT a LIKE 'x'", "(not (like a \"x\"))"),
    ];
    for (text, expected) in cases {
        assert_eq!(sx(&value(text)), expected, "{text}");
    }
}

#[test]
fn binary_nodes_sit_at_their_left_operand() {
    let e = filter("(c.a + 1) * 2 = 6");
    assert_eq!(e.pos, pos(1, 24));
    let ExprKind::Binary(BinaryOp::Eq, left, right) = &e.kind else {
        panic!("=")
    };
    assert_eq!(left.pos, pos(1, 24));
    assert_eq!(right.pos, pos(1, 39));
}

#[test]
fn long_and_or_chains_stay_shallow() {
    let terms: Vec<String> = (0..5000).map(|i| format!("c.id = '{i}'")).collect();
    let q = ok(&format!("SELECT * FROM c WHERE {}", terms.join(" OR ")));
    fn or_leaves(e: &Expr) -> usize {
        match &e.kind {
            ExprKind::Binary(BinaryOp::Or, a, b) => or_leaves(a) + or_leaves(b),
            _ => 1,
        }
    }
    assert_eq!(or_leaves(q.filter.as_ref().expect("WHERE")), 5000);
    // Short chains keep the usual left-deep shape.
    assert_eq!(sx(&value("a AND b AND c")), "(and (and a b) c)");
}

// ---------------------------------------------------------------------------------------------
// Lexical rules

#[test]
fn keywords_are_case_insensitive() {
    let upper = parsed(
        "SELECT DISTINCT TOP 1 VALUE c FROM c JOIN t IN c.x WHERE NOT c.a AND c.b OR c.c \
         BETWEEN 1 AND 2 GROUP BY c.d ORDER BY c.e DESC OFFSET 1 LIMIT 2",
    );
    let lower = parsed(
        "select distinct top 1 value c from c join t in c.x where not c.a and c.b or c.c \
         between 1 and 2 group by c.d order by c.e desc offset 1 limit 2",
    );
    let mixed = parsed(
        "SeLeCt DiStInCt ToP 1 vAlUe c FrOm c JoIn t In c.x WhErE nOt c.a AnD c.b Or c.c \
         BeTwEeN 1 aNd 2 GrOuP bY c.d OrDeR bY c.e DeSc OfFsEt 1 LiMiT 2",
    );
    assert_eq!(upper, lower);
    assert_eq!(upper, mixed);
    assert_eq!(
        sx(&filter(
            "c.a in (1) and exists (select value 1) and c.b like 'x' escape '!'"
        )),
        "(and (and (in c.a [1]) exists(...)) (like c.b \"x\" escape \"!\"))"
    );
}

#[test]
fn literals_and_udf_are_lower_case_only() {
    assert_eq!(
        sx(&value("[true, false, null, undefined]")),
        "[true false null undefined]"
    );
    // Other spellings are identifiers (sql.g4), so they fail as unbound names.
    for word in ["TRUE", "False", "NULL", "Undefined"] {
        let text = format!("SELECT * FROM c WHERE c.a = {word}");
        assert!(matches!(
            filter(&format!("c.a = {word}")).kind,
            ExprKind::Binary(_, _, ref r) if r.kind == ExprKind::Ident(word.into())
        ));
        assert_error_at(
            check_error(&text),
            1,
            29,
            &format!("Literals are lower-case: write {}", word.to_lowercase()),
        );
    }
    assert_error_at(
        syntax_error("SELECT VALUE UDF.tax(1)"),
        1,
        14,
        "the udf prefix is lower-case: write udf.tax(...)",
    );
    // NaN and Infinity are number literals (case-sensitive, as in JavaScript); other
    // spellings are plain identifiers.
    let q = cosmoscope::query::parse("SELECT VALUE [NaN, Infinity, -Infinity]").unwrap();
    let cosmoscope::query::ast::SelectKind::Value(e) = &q.select.kind else {
        panic!()
    };
    let cosmoscope::query::ast::ExprKind::Array(items) = &e.kind else {
        panic!("{e:?}")
    };
    assert!(
        matches!(&items[0].kind, cosmoscope::query::ast::ExprKind::Literal(cosmoscope::query::ast::Literal::Number(n)) if n.is_nan())
    );
    assert!(
        matches!(&items[1].kind, cosmoscope::query::ast::ExprKind::Literal(cosmoscope::query::ast::Literal::Number(n)) if *n == f64::INFINITY)
    );
    assert!(
        check_error("SELECT VALUE infinity")
            .2
            .contains("could not be resolved")
    );
}

#[test]
fn numbers() {
    let cases = [
        ("1", 1.0),
        ("1.", 1.0),
        ("1.5", 1.5),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("1.5E-3", 0.0015),
        ("2e+2", 200.0),
        ("0x1F", 31.0),
        ("0XfF", 255.0),
        ("-1.5e3", -1500.0),
        ("007", 7.0),
        ("1.e5", 100_000.0),
        (".5e1", 5.0),
    ];
    for (text, n) in cases {
        assert_eq!(
            value(text).kind,
            ExprKind::Literal(Literal::Number(n)),
            "{text}"
        );
    }
    assert_error_at(
        syntax_error("SELECT VALUE 1e"),
        1,
        14,
        "expected digits after the exponent",
    );
    assert_error_at(syntax_error("SELECT VALUE 0x"), 1, 14, "hexadecimal digits");
    assert_error_at(
        syntax_error("SELECT VALUE 12abc"),
        1,
        14,
        "'12abc' is neither a number nor a name",
    );
    assert_error_at(syntax_error("SELECT VALUE 1e999"), 1, 14, "too large");
}

#[test]
fn strings_and_escapes() {
    let cases = [
        (r#""plain""#, "plain"),
        (r#"'single'"#, "single"),
        (r#""it's""#, "it's"),
        (r#"'say "hi"'"#, "say \"hi\""),
        (r#"'it\'s'"#, "it's"),
        (r#""q\"q""#, "q\"q"),
        (r#""a\\b\/c""#, "a\\b/c"),
        (r#""\b\f\n\r\t""#, "\u{8}\u{c}\n\r\t"),
        (r#""\u00e9\u00C9""#, "éÉ"),
        (r#""\uD83D\uDE00""#, "😀"),
        ("'µg 😀'", "µg 😀"),
        ("''", ""),
    ];
    for (text, s) in cases {
        assert_eq!(
            value(text).kind,
            ExprKind::Literal(Literal::String(s.into())),
            "{text}"
        );
    }
    assert_error_at(
        syntax_error(r#"SELECT VALUE "a\qb""#),
        1,
        16,
        "invalid escape sequence '\\q'",
    );
    assert_error_at(
        syntax_error(r#"SELECT VALUE "\u12""#),
        1,
        15,
        "four hexadecimal digits",
    );
    assert_error_at(
        syntax_error(r#"SELECT VALUE "\uD83D""#),
        1,
        15,
        "half of a surrogate pair",
    );
    assert_error_at(
        syntax_error(r#"SELECT VALUE "\uDE00x""#),
        1,
        15,
        "second half of a surrogate pair",
    );
    assert_error_at(
        syntax_error("SELECT VALUE 'a\nb'"),
        1,
        16,
        "raw control character U+000A",
    );
}

#[test]
fn comments_and_whitespace() {
    let q = ok("-- leading comment\nSELECT c.id -- the id\r\n\tFROM c -- trailing");
    assert_eq!(q.pos, pos(2, 1));
    assert_eq!(q.from.as_ref().map(|f| f.pos), Some(pos(3, 7)));
}

#[test]
fn reserved_words_need_brackets() {
    assert_eq!(sx(&value("c[\"value\"]")), "c.value");
    assert_eq!(sx(&value("c.left")), "c.left");
    assert_eq!(sx(&value("c.rank")), "c.rank");
    for (text, column, word) in [
        ("SELECT c.value FROM c", 10, "value"),
        ("SELECT c.Group FROM c", 10, "Group"),
        ("SELECT c.null FROM c", 10, "null"),
    ] {
        assert_error_at(
            syntax_error(text),
            1,
            column,
            &format!(
                "'{word}' is a reserved word and can't follow '.'; write the property as [\"{word}\"]"
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Syntax errors: position and wording of typical mistakes

#[test]
fn typical_syntax_errors() {
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "SELECT c.id FORM c",
            1,
            13,
            "expected FROM, WHERE, GROUP BY, ORDER BY or OFFSET after the SELECT list, found 'FORM' (did you mean FROM?)",
        ),
        (
            "SELECT * FORM c",
            1,
            10,
            "found 'FORM' (did you mean FROM?)",
        ),
        (
            "SELECT *\nFROM c\nWHRE c.id = 1",
            3,
            1,
            "expected JOIN, WHERE, GROUP BY, ORDER BY or OFFSET after the FROM clause, found 'WHRE' (did you mean WHERE?)",
        ),
        (
            "SELECT * FROM c WHERE c.a = 1 c.b = 2",
            1,
            31,
            "expected AND, OR, GROUP BY, ORDER BY or OFFSET after the WHERE condition, found 'c'",
        ),
        (
            "SELECT * FROM c ORDER BY c.a WHERE c.b = 1",
            1,
            30,
            "WHERE must come before ORDER BY",
        ),
        (
            "SELECT * FROM c WHERE c.a = 1 WHERE c.b = 2",
            1,
            31,
            "only one WHERE clause; combine conditions with AND",
        ),
        (
            "SELECT * FROM c LIMIT 10",
            1,
            17,
            "LIMIT needs an OFFSET before it",
        ),
        (
            "SELECT * FROM c OFFSET 10",
            1,
            26,
            "expected LIMIT after the OFFSET count",
        ),
        (
            "SELECT VALUE * FROM c",
            1,
            14,
            "SELECT VALUE * is not valid",
        ),
        (
            "SELECT *, c.id FROM c",
            1,
            8,
            "'*' must be the only item in the SELECT list",
        ),
        (
            "SELECT c.id, * FROM c",
            1,
            14,
            "'*' must be the only item in the SELECT list",
        ),
        ("SELECT c.id, FROM c", 1, 14, "remove the trailing ','"),
        ("SELECT FROM c", 1, 8, "expected what to select"),
        ("SELECT", 1, 7, "found the end of the query"),
        ("", 1, 1, "the query is empty"),
        ("   \n  ", 2, 3, "the query is empty"),
        (
            "SELECT * FROM c WHERE (c.a = 1",
            1,
            31,
            "expected ')' to close the '(' at line 1, column 23, found the end of the query",
        ),
        (
            "SELECT * FROM c WHERE c.a = 'abc",
            1,
            29,
            "unterminated string",
        ),
        (
            "SELECT * FROM c WHERE c.a == 1",
            1,
            27,
            "'==' is not an operator",
        ),
        ("SELECT * FROM c WHERE c.a = 1 && c.b", 1, 31, "write AND"),
        ("SELECT * FROM c WHERE !c.a", 1, 23, "write NOT"),
        (
            "SELECT * FROM c WHERE c.a NOT 5",
            1,
            31,
            "expected IN, LIKE or BETWEEN after NOT",
        ),
        (
            "SELECT * FROM c WHERE c.a IN [1, 2]",
            1,
            30,
            "a list of values after IN",
        ),
        (
            "SELECT * FROM c WHERE c.a IN (SELECT VALUE 1)",
            1,
            31,
            "not a subquery",
        ),
        (
            "SELECT * FROM c WHERE c.a IN ()",
            1,
            31,
            "at least one value",
        ),
        (
            "SELECT * FROM c WHERE c.a BETWEEN 1, 2",
            1,
            36,
            "AND between the bounds",
        ),
        (
            "SELECT * FROM c WHERE c.a LIKE 'x' ESCAPE '^^'",
            1,
            43,
            "exactly one character",
        ),
        (
            "SELECT * FROM c WHERE c.a ? 1",
            1,
            30,
            "':' to complete the conditional",
        ),
        (
            "SELECT * FROM c;",
            1,
            16,
            "';' is not part of the query language",
        ),
        ("SELECT * FROM c)", 1, 16, "unmatched ')'"),
        (
            "SELECT * FROM c WHERE c.5 = 1",
            1,
            25,
            "write [5] for an array element",
        ),
        ("SELECT * FROM c WHERE c.2f = 1", 1, 25, "c[\"2f\"]"),
        (
            "SELECT c.id AS value FROM c",
            1,
            16,
            "reserved word and can't be used as an alias",
        ),
        (
            "SELECT c.id AS 'x' FROM c",
            1,
            16,
            "an alias must be a plain name",
        ),
        (
            "SELECT c.id FROM c JOIN UPPER(c.name) n",
            1,
            30,
            "expected IN after the JOIN alias",
        ),
        (
            "SELECT c.id FROM c JOIN c.tags[c.n] t",
            1,
            25,
            "a path such as c.address",
        ),
        (
            "SELECT * FROM c JOIN t c.tags",
            1,
            24,
            "expected IN after the JOIN alias",
        ),
        (
            "SELECT * JOIN t IN c.tags",
            1,
            10,
            "JOIN needs a FROM clause before it",
        ),
        (
            "SELECT * FROM c GROUP c.a",
            1,
            23,
            "expected BY after GROUP",
        ),
        (
            "SELECT * FROM c ORDER c.a",
            1,
            23,
            "expected BY after ORDER",
        ),
        (
            "SELECT * FROM c GROUP BY c.a AS x",
            1,
            30,
            "GROUP BY items can't have aliases",
        ),
        (
            "SELECT * FROM c TOP 10",
            1,
            17,
            "TOP goes right after SELECT",
        ),
        (
            "SELECT TOP 5 DISTINCT * FROM c",
            1,
            14,
            "DISTINCT must come before TOP",
        ),
        (
            "SELECT TOP c.n * FROM c",
            1,
            12,
            "a non-negative integer or a parameter",
        ),
        (
            "SELECT VALUE a, b",
            1,
            15,
            "SELECT VALUE takes a single expression",
        ),
        (
            "SELECT VALUE c.name(1) FROM c",
            1,
            20,
            "only built-in functions and user-defined functions",
        ),
        ("SELECT VALUE COUNT(*) FROM c", 1, 20, "write COUNT(1)"),
        (
            "SELECT VALUE SELECT",
            1,
            14,
            "a subquery must be in parentheses",
        ),
        (
            "SELECT * FROM c WHERE EXISTS c.tags",
            1,
            30,
            "a subquery in parentheses after EXISTS",
        ),
        (
            "SELECT * FROM c UNION SELECT * FROM d",
            1,
            17,
            "UNION is not supported",
        ),
        (
            "SELECT * FROM c LEFT JOIN t IN c.x",
            1,
            17,
            "LEFT JOIN is not supported",
        ),
        (
            "SELECT * FROM c x INNER JOIN t IN c.x",
            1,
            19,
            "INNER JOIN is not supported",
        ),
        (
            "SELECT * FROM c WHERE c.a = 1 SELECT",
            1,
            31,
            "a request holds a single query",
        ),
        (
            "SELECT * FROM c WHERE c.a = @",
            1,
            29,
            "expected a parameter name after '@'",
        ),
        (
            "SELECT * FROM c WHERE c.$a = 1",
            1,
            25,
            "unexpected character '$'",
        ),
        (
            "SELECT * FROM c WHERE c.é = 1",
            1,
            25,
            "unexpected character 'é'",
        ),
        ("SELECT * FROM c WHERE c.a = `x`", 1, 29, "backquotes"),
        (
            "SELECT [1, 2 FROM c",
            1,
            14,
            "',' or ']' to close the array",
        ),
        ("SELECT {a 1} FROM c", 1, 11, "':' after the property name"),
        (
            "SELECT *\n  FROM c\n  WHERE c.a = 1\n    AND (c.b = 2\n    ORDER BY c.a",
            5,
            5,
            "expected ')' to close the '(' at line 4, column 9, found 'ORDER'",
        ),
    ];
    for (text, line, column, needle) in cases {
        assert_error_at(syntax_error(text), *line, *column, needle);
    }
}

#[test]
fn query_text_limit() {
    let big = format!("SELECT * FROM c WHERE c.s = '{}'", "x".repeat(512 * 1024));
    assert_error_at(syntax_error(&big), 1, 524_289, "the limit is 524288 bytes");
    let fits = format!("SELECT * FROM c WHERE c.s = '{}'", "x".repeat(500 * 1024));
    ok(&fits);
}

#[test]
fn nesting_limit() {
    let nested = |n: usize| format!("SELECT VALUE {}1{}", "(".repeat(n), ")".repeat(n));
    ok(&nested(200));
    let (line, column, message) = syntax_error(&nested(10_000));
    assert_eq!(line, 1);
    assert!(column > 200 && column < 300, "column {column}");
    assert!(message.contains("the query nests expressions too deeply"));

    let arrays = |n: usize| format!("SELECT VALUE {}1{}", "[".repeat(n), "]".repeat(n));
    ok(&arrays(200));
    assert!(syntax_error(&arrays(100_000)).2.contains("too deeply"));

    let subqueries = |n: usize| {
        format!(
            "SELECT VALUE {}1{}",
            "(SELECT VALUE ".repeat(n),
            ")".repeat(n)
        )
    };
    ok(&subqueries(120));
    assert!(syntax_error(&subqueries(5_000)).2.contains("too deeply"));

    assert!(
        // "- " rather than "-": "--" starts a comment.
        syntax_error(&format!("SELECT VALUE {}1", "- ".repeat(50_000)))
            .2
            .contains("too deeply")
    );
    assert!(
        syntax_error(&format!("SELECT VALUE {}1", "NOT ".repeat(50_000)))
            .2
            .contains("too deeply")
    );
    let path = format!("SELECT VALUE c{} FROM c", ".a".repeat(50_000));
    assert!(syntax_error(&path).2.contains("too deeply"));
    let sum = format!("SELECT VALUE 1{}", " + 1".repeat(50_000));
    assert!(syntax_error(&sum).2.contains("too deeply"));
    ok(&format!("SELECT VALUE 1{}", " + 1".repeat(200)));
}

// ---------------------------------------------------------------------------------------------
// Semantic checks

#[test]
fn names_must_be_bound() {
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "SELECT id FROM c",
            1,
            8,
            "Identifier 'id' could not be resolved. Properties must be qualified with an alias bound in FROM or JOIN: write c.id",
        ),
        (
            "SELECT products.id FROM products p",
            1,
            8,
            "once aliased its original name can't be used: write p instead",
        ),
        (
            "SELECT 1 WHERE c.x = 1",
            1,
            16,
            "This query has no FROM clause",
        ),
        ("SELECT VALUE c", 1, 14, "This query has no FROM clause"),
        (
            "SELECT * FROM c WHERE C.id = 1",
            1,
            23,
            "Names are case-sensitive: did you mean 'c'?",
        ),
        (
            "SELECT * FROM x IN c.children WHERE c.id = 1",
            1,
            37,
            "FROM x IN c.children binds only x; to use the whole item too, write FROM c JOIN x IN c.children",
        ),
        (
            "SELECT c.id FROM c.children",
            1,
            8,
            "give the source an alias",
        ),
        (
            "SELECT c.a AS n FROM c ORDER BY n",
            1,
            33,
            "ORDER BY can't refer to SELECT aliases",
        ),
        (
            "SELECT t FROM c JOIN x IN c.tags",
            1,
            8,
            "Identifier 't' could not be resolved",
        ),
        (
            "SELECT c.id FROM c JOIN x IN t.tags JOIN t IN c.t",
            1,
            30,
            "Identifier 't'",
        ),
        (
            "SELECT (SELECT VALUE COUNT(1) FROM root r) FROM c",
            1,
            36,
            "only correlated subqueries are supported",
        ),
        (
            "SELECT VALUE (SELECT VALUE t FROM t IN c.tags WHERE t = x) FROM c",
            1,
            57,
            "Identifier 'x'",
        ),
        ("SELECT VALUE c[d] FROM c", 1, 16, "Identifier 'd'"),
    ];
    for (text, line, column, needle) in cases {
        assert_error_at(check_error(text), *line, *column, needle);
    }
    // Correlated subqueries see the outer aliases; FROM c.children binds "children" (from.md).
    ok("SELECT VALUE (SELECT VALUE t FROM t IN c.tags WHERE t = c.main) FROM c");
    ok("SELECT VALUE (SELECT VALUE x FROM x IN t.items) FROM c JOIN t IN c.tags");
    ok("SELECT children FROM c.children");
    ok("SELECT VALUE r.id FROM root r");
    ok("SELECT VALUE @p");
}

#[test]
fn select_star_rules() {
    assert_error_at(
        check_error("SELECT *"),
        1,
        8,
        "'SELECT *' is not valid if FROM clause is omitted",
    );
    assert_error_at(
        check_error("SELECT * FROM c JOIN t IN c.tags"),
        1,
        8,
        "'SELECT *' is only valid with a single input set",
    );
    assert_error_at(
        check_error("SELECT * FROM c GROUP BY c.a"),
        1,
        8,
        "'SELECT *' can't be used with GROUP BY",
    );
    ok("SELECT * FROM t IN c.tags");
}

#[test]
fn duplicate_aliases() {
    assert_error_at(
        check_error("SELECT t.a FROM c JOIN t IN c.x JOIN t IN c.y"),
        1,
        38,
        "the alias 't' is already used",
    );
    assert_error_at(
        check_error("SELECT c.a FROM c JOIN c IN c.x"),
        1,
        24,
        "the alias 'c' is already used",
    );
}

// The function table is filled by other modules: these rely on CONTAINS (2..3 arguments),
// ABS (1), CONCAT (2..), PI (0) and the aggregates being registered.
#[test]
fn function_names_and_arity() {
    ok("SELECT VALUE CONTAINS('abc', 'b')");
    ok("SELECT VALUE contains('abc', 'B', true)");
    ok("SELECT VALUE CONCAT('a', 'b', 'c', 'd', 'e')");
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "SELECT VALUE FOO(1)",
            1,
            14,
            "'FOO' is not a recognized built-in function name.",
        ),
        (
            "SELECT VALUE CONTAIN('a', 'b')",
            1,
            14,
            "Did you mean CONTAINS?",
        ),
        ("SELECT VALUE len('a')", 1, 14, "Did you mean LENGTH?"),
        ("SELECT VALUE COALESCE(1, 2)", 1, 14, "Use the ?? operator"),
        (
            "SELECT VALUE CONTAINS('a')",
            1,
            14,
            "CONTAINS takes 2 to 3 arguments, but 1 was given",
        ),
        (
            "SELECT VALUE ABS(1, 2)",
            1,
            14,
            "ABS takes 1 argument, but 2 were given",
        ),
        (
            "SELECT VALUE CONCAT('a')",
            1,
            14,
            "CONCAT takes at least 2 arguments, but 1 was given",
        ),
        (
            "SELECT VALUE PI(1)",
            1,
            14,
            "PI takes no arguments, but 1 was given",
        ),
        (
            "SELECT VALUE COUNT()",
            1,
            14,
            "COUNT takes 1 argument, but 0 were given",
        ),
        ("SELECT VALUE {a: [ABS()]}", 1, 19, "ABS takes 1 argument"),
    ];
    for (text, line, column, needle) in cases {
        assert_error_at(check_error(text), *line, *column, needle);
    }
}

#[test]
fn aggregate_placement() {
    ok("SELECT VALUE COUNT(1) FROM c");
    ok("SELECT COUNT(1) AS n, SUM(c.x) AS total, 'const' AS k FROM c");
    ok("SELECT VALUE {n: COUNT(1), m: MAX(c.a) + 1} FROM c");
    ok("SELECT * FROM c WHERE (SELECT VALUE COUNT(1) FROM t IN c.tags) > 2");
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "SELECT * FROM c WHERE COUNT(1) > 1",
            1,
            23,
            "the aggregate COUNT can't be used in WHERE",
        ),
        (
            "SELECT * FROM c ORDER BY MAX(c.a)",
            1,
            26,
            "can't be used in ORDER BY",
        ),
        (
            "SELECT COUNT(1) FROM c GROUP BY SUM(c.a)",
            1,
            33,
            "can't be used in GROUP BY",
        ),
        (
            "SELECT c.a FROM c JOIN t IN AVG(c.a)",
            1,
            29,
            "can't be used in a JOIN",
        ),
        (
            "SELECT VALUE COUNT(MAX(c.a)) FROM c",
            1,
            20,
            "aggregate functions can't be nested",
        ),
        (
            "SELECT c.a, COUNT(1) FROM c",
            1,
            8,
            "'c.a' is selected next to an aggregate but is not aggregated",
        ),
    ];
    for (text, line, column, needle) in cases {
        assert_error_at(check_error(text), *line, *column, needle);
    }
}

#[test]
fn group_by_rules() {
    ok("SELECT c.a, COUNT(1) AS n FROM c GROUP BY c.a");
    ok("SELECT VALUE {k: c.a, v: c.b, n: COUNT(1)} FROM c GROUP BY c.a, c.b");
    ok("SELECT c.a.b, LOWER(c.a.x), 1 FROM c GROUP BY c.a");
    ok("SELECT LOWER(c.name) AS n FROM c GROUP BY LOWER(c.name)");
    ok("SELECT c[\"a\"] FROM c GROUP BY c.a");
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "SELECT c.name, COUNT(1) FROM c GROUP BY c.category",
            1,
            8,
            "'c.name' is not in the GROUP BY clause",
        ),
        (
            "SELECT UPPER(c.x) FROM c GROUP BY c.a",
            1,
            14,
            "'c.x' is not in the GROUP BY clause",
        ),
        (
            "SELECT c FROM c GROUP BY c.a",
            1,
            8,
            "'c' is not in the GROUP BY clause",
        ),
        (
            "SELECT c.a FROM c GROUP BY c.a ORDER BY c.a",
            1,
            41,
            "ORDER BY can't be combined with GROUP BY",
        ),
        (
            "SELECT 1 FROM c GROUP BY 1",
            1,
            26,
            "must reference a property",
        ),
        (
            "SELECT COUNT(1) FROM c GROUP BY c.a, (SELECT VALUE 1)",
            1,
            38,
            "GROUP BY can't contain a subquery",
        ),
        (
            "SELECT COUNT(1) AS x FROM c GROUP BY x",
            1,
            38,
            "GROUP BY can't refer to SELECT aliases",
        ),
        (
            "SELECT (SELECT VALUE 1) AS s, c.a FROM c GROUP BY c.a",
            1,
            8,
            "a subquery can't be used in the SELECT list",
        ),
    ];
    for (text, line, column, needle) in cases {
        assert_error_at(check_error(text), *line, *column, needle);
    }
}

#[test]
fn counts_of_top_offset_limit() {
    ok("SELECT TOP 0 * FROM c");
    ok("SELECT * FROM c OFFSET 0 LIMIT 0");
    ok("SELECT TOP @t * FROM c OFFSET @o LIMIT @l");
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "SELECT TOP -1 * FROM c",
            1,
            12,
            "the TOP count must be a non-negative integer, not -1",
        ),
        ("SELECT TOP 1.5 * FROM c", 1, 12, "not 1.5"),
        (
            "SELECT * FROM c OFFSET -5 LIMIT 1",
            1,
            24,
            "the OFFSET count must be a non-negative integer",
        ),
        (
            "SELECT * FROM c OFFSET 1 LIMIT 0.5",
            1,
            32,
            "the LIMIT count",
        ),
    ];
    for (text, line, column, needle) in cases {
        assert_error_at(check_error(text), *line, *column, needle);
    }
}

#[test]
fn per_query_limits() {
    let joins = |n: usize| {
        let mut text = String::from("SELECT VALUE c.id FROM c");
        for i in 0..n {
            text.push_str(&format!(" JOIN t{i} IN c.a{i}"));
        }
        text
    };
    ok(&joins(10));
    let text = joins(11);
    let column = u32::try_from(text.rfind("t10").expect("11th join") + 1).expect("short");
    assert_error_at(check_error(&text), 1, column, "the limit is 10 per query");
}

/// A container here has no user-defined functions (cosmoscope runs no JavaScript), so a
/// call to one is an error at the call, as a call to an unregistered one is on the service.
#[test]
fn user_defined_function_calls_check_and_more_than_ten_are_refused() {
    // Whether the container has them is the engine's check when the query runs.
    ok("SELECT VALUE udf.anything(1, 2, 3)");
    ok("SELECT c.id FROM c\nWHERE udf.tax(c.price) < 22.25 AND udf.tax(c.cost) > 1");
    let calls: Vec<String> = (0..11).map(|i| format!("udf.f{i}(c.a)")).collect();
    let text = format!("SELECT VALUE [{}] FROM c", calls.join(", "));
    let column = text.find("udf.f10").unwrap() as u32 + 1;
    assert_error_at(
        check_error(&text),
        1,
        column,
        "more than 10 user-defined functions",
    );
}

#[test]
fn earliest_error_wins() {
    // Both FOO and x are wrong; x comes first in the text.
    assert_error_at(
        check_error("SELECT x, FOO(1) FROM c"),
        1,
        8,
        "Identifier 'x'",
    );
    assert_error_at(
        check_error("SELECT c.a FROM c\nWHERE COUNT(1) > 0 AND y = 1"),
        2,
        7,
        "the aggregate COUNT",
    );
}

#[test]
fn errors_carry_the_bad_request_code() {
    let e = parse("SELECT * FORM c").expect_err("syntax error");
    assert_eq!(e.status.as_u16(), 400);
    assert_eq!(e.code(), "BadRequest");
    assert_eq!(e.to_json()["line"], 1);
    assert_eq!(e.to_json()["column"], 10);
}

#[test]
fn order_by_sorts_on_document_paths_only() {
    ok("SELECT * FROM c ORDER BY c.name.last, c[\"a b\"] DESC, c.tags[0]");
    ok("SELECT t.n FROM c JOIN t IN c.tags ORDER BY c.id");
    // order-by.md: a property name or a computed property, not an arbitrary expression.
    for (text, column) in [
        ("SELECT * FROM c ORDER BY LOWER(c.name)", 26),
        ("SELECT * FROM c ORDER BY c.a || 'x'", 26),
        ("SELECT * FROM c ORDER BY c.a, 1", 31),
        ("SELECT * FROM c ORDER BY c.tags[c.i]", 26),
        ("SELECT * FROM c ORDER BY @p", 26),
    ] {
        assert_error_at(
            check_error(text),
            1,
            column,
            "ORDER BY item expression could not be mapped to a document path",
        );
    }
}

#[test]
fn aggregates_over_grouped_subqueries_are_rejected() {
    // group-by.md: "Queries with an aggregate system function and a subquery with GROUP BY
    // aren't supported."
    assert_error_at(
        check_error("SELECT COUNT(1) AS n FROM (SELECT c.team FROM c GROUP BY c.team) g"),
        1,
        8,
        "COUNT can't aggregate over a subquery with GROUP BY",
    );
    assert_error_at(
        check_error(
            "SELECT VALUE MAX(g.n) FROM c JOIN (SELECT COUNT(1) AS n FROM t IN c.tags GROUP BY t) g",
        ),
        1,
        14,
        "MAX can't aggregate over a subquery with GROUP BY",
    );
    ok("SELECT g.team FROM (SELECT c.team FROM c GROUP BY c.team) g");
}
