//! The math family through the public function registry: the documentation's examples as a
//! table of (call, arguments, expected result). Later this table will also run through the
//! query engine as `SELECT VALUE <call>`.

// The docs print constants such as π as literals; the table keeps their exact text.
#![allow(clippy::approx_constant)]

use cosmoscope::query::functions::{FnContext, FnKind, lookup};
use cosmoscope::query::value::Val;
use serde_json::{Value, json};

use crate::support::cli;
use crate::support::query_db::Db;

const CTX: FnContext = FnContext {
    clock: None,
    now_ticks: 0,
    seed: 7,
};

/// (function, arguments, expected JSON result; `None` = undefined).
fn docs_examples() -> Vec<(&'static str, Value, Option<Value>)> {
    vec![
        ("ABS", json!([-1]), Some(json!(1))),
        ("ABS", json!([0]), Some(json!(0))),
        ("ACOS", json!([-1]), Some(json!(3.141592653589793))),
        ("ATAN", json!([-45.01]), Some(json!(-1.5485826962062663))),
        (
            "ATN2",
            json!([35.175643, 129.44]),
            Some(json!(0.265344532064832)),
        ),
        ("CEILING", json!([123.45]), Some(json!(124))),
        ("CEILING", json!([-45.72]), Some(json!(-45))),
        ("COS", json!([14.78]), Some(json!(-0.5994654261946543))),
        ("COT", json!([124.1332]), Some(json!(-0.040311998371148884))),
        ("DEGREES", json!([3.141592653589793]), Some(json!(180))),
        ("EXP", json!([10]), Some(json!(22026.465794806718))),
        ("FLOOR", json!([-145.12]), Some(json!(-146))),
        ("FLOOR", json!([null]), None),
        ("LOG", json!([5]), Some(json!(1.6094379124341003))),
        ("LOG", json!([2, 10]), Some(json!(0.3010299956639812))),
        ("LOG10", json!([100]), Some(json!(2))),
        ("NUMBERBIN", json!([37.752, -100]), Some(json!(100))),
        ("NUMBERBIN", json!([37.752, 0]), None),
        ("NUMBERBIN", json!([37.752, 0.01]), Some(json!(37.75))),
        ("NUMBERBIN", json!([155.23478, 0.01]), Some(json!(155.23))),
        ("PI", json!([]), Some(json!(3.141592653589793))),
        ("POWER", json!([5, 5]), Some(json!(3125))),
        ("POWER", json!([null, 3]), None),
        ("RADIANS", json!([270]), Some(json!(4.71238898038469))),
        ("ROUND", json!([2.5]), Some(json!(3))),
        ("ROUND", json!([-6.5]), Some(json!(-7))),
        ("ROUND", json!([-2.4]), Some(json!(-2))),
        ("SIGN", json!([-2]), Some(json!(-1))),
        ("SIN", json!([45.175643]), Some(json!(0.929607286611012))),
        ("SQRT", json!([17]), Some(json!(4.123105625617661))),
        ("SQUARE", json!([3]), Some(json!(9))),
        ("SQUARE", json!([null]), None),
        ("TAN", json!([124.1332]), Some(json!(-24.80651023035602))),
        ("TRUNC", json!([-2.78]), Some(json!(-2))),
        ("INTADD", json!([20, 10]), Some(json!(30))),
        ("INTADD", json!([20, 0.10]), None),
        ("INTSUB", json!([25, 50]), Some(json!(-25))),
        ("INTMUL", json!([-5, -2]), Some(json!(10))),
        ("INTDIV", json!([10, -2]), Some(json!(-5))),
        ("INTDIV", json!([10, 0]), None),
        ("INTMOD", json!([12, -5]), Some(json!(2))),
        ("INTMOD", json!([-12, -5]), Some(json!(-2))),
        ("INTMOD", json!([12, 0]), None),
        ("INTBITAND", json!([15, 25]), Some(json!(9))),
        ("INTBITOR", json!([56, 100]), Some(json!(124))),
        ("INTBITXOR", json!([56, 100]), Some(json!(92))),
        ("INTBITNOT", json!([65]), Some(json!(-66))),
        ("INTBITLEFTSHIFT", json!([16, 4]), Some(json!(256))),
        ("INTBITRIGHTSHIFT", json!([16, 4]), Some(json!(1))),
        ("INTBITRIGHTSHIFT", json!([16, 0.4]), None),
    ]
}

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
fn documentation_examples_through_the_registry() {
    for (name, args, expected) in docs_examples() {
        let args: Vec<Val> = args
            .as_array()
            .map(|a| a.iter().map(Val::from_json).collect())
            .unwrap_or_default();
        let got = eval(name, &args);
        assert_eq!(got.to_json(), expected, "{name}({args:?})");
    }
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
