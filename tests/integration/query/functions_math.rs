//! The math family in the public function registry (every documented function registered)
//! and where a single call cannot show it: non-finite results inside a query and RAND across
//! calls, items and processes. (The functions' examples are unit tests of the family's
//! module.)

use cosmoscope::query::Val;
use cosmoscope::query::functions::{FnContext, FnKind, lookup};
use serde_json::{Value, json};

use crate::support::cli;
use crate::support::query_db::Db;

const CTX: FnContext = FnContext {
    clock: None,
    now_ticks: 0,
    seed: 7,
};

fn eval(name: &str, args: &[Val]) -> Val {
    let spec = lookup(name).unwrap_or_else(|| panic!("{name} is not registered"));
    assert_eq!(spec.kind, FnKind::Scalar);
    assert!(
        (spec.min_args..=spec.max_args).contains(&args.len()),
        "{name}: {} arguments outside {}..={}",
        args.len(),
        spec.min_args,
        spec.max_args
    );
    (spec.eval)(args, &CTX)
}

#[test]
fn every_documented_math_function_is_registered() {
    let names = [
        "ABS",
        "ACOS",
        "ASIN",
        "ATAN",
        "ATN2",
        "CEILING",
        "COS",
        "COT",
        "DEGREES",
        "EXP",
        "FLOOR",
        "INTADD",
        "INTBITAND",
        "INTBITLEFTSHIFT",
        "INTBITNOT",
        "INTBITOR",
        "INTBITRIGHTSHIFT",
        "INTBITXOR",
        "INTDIV",
        "INTMOD",
        "INTMUL",
        "INTSUB",
        "LOG",
        "LOG10",
        "NUMBERBIN",
        "PI",
        "POWER",
        "RADIANS",
        "RAND",
        "ROUND",
        "SIGN",
        "SIN",
        "SQRT",
        "SQUARE",
        "TAN",
        "TRUNC",
    ];
    for name in names {
        assert!(lookup(name).is_some(), "{name} missing");
    }
    let arity = |n: &str| lookup(n).map(|s| (s.min_args, s.max_args));
    assert_eq!(arity("LOG"), Some((1, 2)));
    assert_eq!(arity("NUMBERBIN"), Some((1, 2)));
    assert_eq!(arity("PI"), Some((0, 0)));
    assert_eq!(arity("RAND"), Some((0, 0)));
    assert_eq!(arity("INTBITNOT"), Some((1, 1)));
    assert_eq!(arity("ATN2"), Some((2, 2)));
}

/// sqrt.md: "If you attempt to find the square root value that results in an imaginary
/// number, you get an error that the value can't be represented in JSON. For example,
/// SQRT(-25) gives this error." Inside the query NaN and the infinities are numbers
/// (is-finite-number.md); only a result holding one fails, wherever it sits in the result.
#[test]
fn non_finite_results_are_numbers_that_fail_the_query() {
    let nan = eval("SQRT", &[Val::Num(-1.0)]);
    assert!(matches!(nan, Val::Num(n) if n.is_nan()));
    assert_eq!(nan.to_json(), None);
    let db = Db::new(&[json!({"id": "1", "n": 0}), json!({"id": "2", "n": 4})]);
    for sql in [
        "SELECT VALUE SQRT(-25)",
        "SELECT SQRT(-25) AS s",
        "SELECT VALUE {a: 1, b: [LOG(0)]}",
        "SELECT VALUE 1 / c.n FROM c",
        "SELECT VALUE SUM(1 / c.n) FROM c",
        "SELECT VALUE COUNT(1) / 0 FROM c",
    ] {
        let e = db.bad_request(sql);
        assert!(
            e.message.contains("can't represent"),
            "{sql}: {}",
            e.message
        );
    }
    assert_eq!(
        db.rows("SELECT VALUE IS_FINITE_NUMBER(SQRT(c.n - 1)) FROM c"),
        vec![json!(false), json!(true)]
    );
    assert_eq!(
        db.rows("SELECT VALUE 1 / c.n FROM c WHERE c.n > 0"),
        vec![json!(0.25)]
    );
}

/// rand.md again, across executions: the same query run twice, each time by a new
/// process, draws different numbers.
#[test]
fn rand_differs_between_executions_of_the_same_query() {
    let dir = tempfile::tempdir().unwrap();
    let cli = |args: &[&str]| {
        let out = cli::run(dir.path(), args);
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)
    };
    cli(&["db", "create", "t"]);
    cli(&["container", "create", "t/c", "--partition-key", "/id"]);
    let draw = || cli(&["query", "t/c", "SELECT VALUE RAND()"])["documents"][0].as_f64();
    let (a, b) = (draw(), draw());
    assert!(a.is_some() && b.is_some(), "{a:?} {b:?}");
    assert_ne!(a, b);
}

/// rand.md: "nondeterministic: repetitive calls of this function don't return the same
/// results" — also two calls in one query, and one call over several items.
#[test]
fn rand_draws_a_new_number_on_every_call() {
    let a = eval("RAND", &[]);
    assert!(matches!(a, Val::Num(x) if (0.0..1.0).contains(&x)));
    assert_ne!(eval("RAND", &[]), a);
    let db = Db::new(&[json!({"id": "1"}), json!({"id": "2"}), json!({"id": "3"})]);
    let rows = db.rows("SELECT VALUE [RAND(), RAND()] FROM c");
    let mut values: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.as_array().cloned().unwrap_or_default())
        .filter_map(|v| v.as_f64())
        .collect();
    assert_eq!(values.len(), 6, "{rows:?}");
    values.sort_by(f64::total_cmp);
    values.dedup();
    assert_eq!(values.len(), 6, "{rows:?}");
}
