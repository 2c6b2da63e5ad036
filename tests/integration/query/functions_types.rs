//! Type checking, conversion, IIF and DOCUMENTID through the public function registry: the
//! documentation's examples as a table of (call, arguments, expected result). Later this table
//! will also run through the query engine as `SELECT VALUE <call>`.

use cosmoscope::query::functions::{FnContext, FnKind, lookup};
use cosmoscope::query::value::Val;
use serde_json::{Value, json};

const CTX: FnContext = FnContext {
    clock: None,
    now_ticks: 0,
    seed: 0,
};

/// (function, arguments, expected JSON result; `None` = undefined). Examples that pass a
/// missing property (`{}.category`) are in `undefined_arguments` below.
// The docs' example value 3.14 is not an approximation of π.
#[allow(clippy::approx_constant)]
fn docs_examples() -> Vec<(&'static str, Value, Option<Value>)> {
    let t = Some(json!(true));
    let f = Some(json!(false));
    vec![
        // is-array.md
        ("IS_ARRAY", json!([true]), f.clone()),
        ("IS_ARRAY", json!([65]), f.clone()),
        ("IS_ARRAY", json!(["AdventureWorks"]), f.clone()),
        ("IS_ARRAY", json!([null]), f.clone()),
        ("IS_ARRAY", json!([{"size": "small"}]), f.clone()),
        ("IS_ARRAY", json!([[25344, 82947]]), t.clone()),
        // is-bool.md
        ("IS_BOOL", json!([true]), t.clone()),
        ("IS_BOOL", json!([65]), f.clone()),
        ("IS_BOOL", json!(["AdventureWorks"]), f.clone()),
        ("IS_BOOL", json!([null]), f.clone()),
        ("IS_BOOL", json!([{"size": "small"}]), f.clone()),
        ("IS_BOOL", json!([[25344, 82947]]), f.clone()),
        // is-datetime.md
        ("IS_DATETIME", json!(["2024-12-12"]), t.clone()),
        ("IS_DATETIME", json!(["2024-12-12Z"]), t.clone()),
        ("IS_DATETIME", json!(["2024-12-12 20:21:25"]), t.clone()),
        ("IS_DATETIME", json!(["2024-12-12T20:21:25Z"]), t.clone()),
        ("IS_DATETIME", json!(["2024-12-12T20:21:25.123"]), t.clone()),
        (
            "IS_DATETIME",
            json!(["2024-12-12 20:21:25.123Z"]),
            t.clone(),
        ),
        ("IS_DATETIME", json!(["2024-12-12T20Z"]), f.clone()),
        ("IS_DATETIME", json!(["2024-12-12 20:21:25."]), f.clone()),
        (
            "IS_DATETIME",
            json!(["2023-03-06T15:29:59.1234567Z"]),
            t.clone(),
        ),
        // is-finite-number.md
        ("IS_FINITE_NUMBER", json!([1234.567]), t.clone()),
        // is-integer.md
        ("IS_INTEGER", json!([3454.123]), f.clone()),
        ("IS_INTEGER", json!([5523432]), t.clone()),
        ("IS_INTEGER", json!([-9223372036854775808i64]), t.clone()),
        ("IS_INTEGER", json!([9223372036854775807i64]), t.clone()),
        ("IS_INTEGER", json!([18446744073709551615u64]), f.clone()),
        // is-null.md
        ("IS_NULL", json!([true]), f.clone()),
        ("IS_NULL", json!([15]), f.clone()),
        ("IS_NULL", json!(["AdventureWorks"]), f.clone()),
        ("IS_NULL", json!([null]), t.clone()),
        ("IS_NULL", json!([{"price": 85.23}]), f.clone()),
        ("IS_NULL", json!([["red", "blue", "yellow"]]), f.clone()),
        ("IS_NULL", json!([25]), f.clone()),
        // is-number.md
        ("IS_NUMBER", json!([true]), f.clone()),
        ("IS_NUMBER", json!([1]), t.clone()),
        ("IS_NUMBER", json!(["value"]), f.clone()),
        ("IS_NUMBER", json!([null]), f.clone()),
        ("IS_NUMBER", json!([{"name": "Tecozow coat"}]), f.clone()),
        ("IS_NUMBER", json!(["Tecozow coat"]), f.clone()),
        ("IS_NUMBER", json!([0]), t.clone()),
        // is-object.md
        ("IS_OBJECT", json!([true]), f.clone()),
        ("IS_OBJECT", json!([1]), f.clone()),
        ("IS_OBJECT", json!(["value"]), f.clone()),
        ("IS_OBJECT", json!([["green", "red", "yellow"]]), f.clone()),
        ("IS_OBJECT", json!([null]), f.clone()),
        ("IS_OBJECT", json!([{"name": "Tecozow coat"}]), t.clone()),
        ("IS_OBJECT", json!([{"count": 0}]), t.clone()),
        // is-primitive.md
        ("IS_PRIMITIVE", json!([true]), t.clone()),
        ("IS_PRIMITIVE", json!([1]), t.clone()),
        ("IS_PRIMITIVE", json!(["value"]), t.clone()),
        (
            "IS_PRIMITIVE",
            json!([["green", "red", "yellow"]]),
            f.clone(),
        ),
        ("IS_PRIMITIVE", json!([null]), t.clone()),
        ("IS_PRIMITIVE", json!([{"name": "Tecozow coat"}]), f.clone()),
        ("IS_PRIMITIVE", json!([false]), t.clone()),
        // is-string.md
        ("IS_STRING", json!([true]), f.clone()),
        ("IS_STRING", json!([1]), f.clone()),
        ("IS_STRING", json!(["value"]), t.clone()),
        ("IS_STRING", json!([["green", "red", "yellow"]]), f.clone()),
        ("IS_STRING", json!([null]), f.clone()),
        ("IS_STRING", json!([{"name": "Tecozow coat"}]), f.clone()),
        ("IS_STRING", json!([false]), f),
        // stringtoarray.md
        ("STRINGTOARRAY", json!(["[]"]), Some(json!([]))),
        (
            "STRINGTOARRAY",
            json!([r#"[ "coats", "gloves", "hats" ]"#]),
            Some(json!(["coats", "gloves", "hats"])),
        ),
        (
            "STRINGTOARRAY",
            json!([r#"[ { "types": [ "coats", "gloves" ] }, [ "hats" ], 76, false, null ]"#]),
            Some(json!([{"types": ["coats", "gloves"]}, ["hats"], 76, false, null])),
        ),
        (
            "STRINGTOARRAY",
            json!([r#"[ [ "coats", "gloves" ], [ "hats" ] ]"#]),
            Some(json!([["coats", "gloves"], ["hats"]])),
        ),
        (
            "STRINGTOARRAY",
            json!(["[ 'coats', 'gloves', 'hats' ]"]),
            None,
        ),
        ("STRINGTOARRAY", json!([null]), None),
        // stringtoboolean.md
        ("STRINGTOBOOLEAN", json!(["true"]), t.clone()),
        ("STRINGTOBOOLEAN", json!(["true  "]), t),
        ("STRINGTOBOOLEAN", json!(["  false"]), Some(json!(false))),
        ("STRINGTOBOOLEAN", json!(["  false  "]), Some(json!(false))),
        ("STRINGTOBOOLEAN", json!([true]), None),
        ("STRINGTOBOOLEAN", json!(["100"]), None),
        ("STRINGTOBOOLEAN", json!(["3.14"]), None),
        ("STRINGTOBOOLEAN", json!(["-1.79769e+308"]), None),
        ("STRINGTOBOOLEAN", json!(["Hello"]), None),
        ("STRINGTOBOOLEAN", json!([null]), None),
        ("STRINGTOBOOLEAN", json!([[1, 2, 3]]), None),
        // stringtonull.md
        ("STRINGTONULL", json!(["null"]), Some(json!(null))),
        ("STRINGTONULL", json!(["null  "]), Some(json!(null))),
        ("STRINGTONULL", json!(["  null"]), Some(json!(null))),
        ("STRINGTONULL", json!(["  null  "]), Some(json!(null))),
        ("STRINGTONULL", json!(["NULL"]), None),
        ("STRINGTONULL", json!(["Null"]), None),
        ("STRINGTONULL", json!([null]), None),
        // stringtonumber.md
        ("STRINGTONUMBER", json!(["100"]), Some(json!(100))),
        ("STRINGTONUMBER", json!(["3.14"]), Some(json!(3.14))),
        ("STRINGTONUMBER", json!(["   60   "]), Some(json!(60))),
        (
            "STRINGTONUMBER",
            json!(["-1.79769e+308"]),
            Some(json!(-1.79769e308)),
        ),
        ("STRINGTONUMBER", json!(["Hello"]), None),
        ("STRINGTONUMBER", json!([null]), None),
        // stringtoobject.md
        ("STRINGTOOBJECT", json!(["{}"]), Some(json!({}))),
        (
            "STRINGTOOBJECT",
            json!([r#"{"isAvailable": true}"#]),
            Some(json!({"isAvailable": true})),
        ),
        (
            "STRINGTOOBJECT",
            json!([r#"{"division": {"name": "Sales"}}"#]),
            Some(json!({"division": {"name": "Sales"}})),
        ),
        ("STRINGTOOBJECT", json!(["{'price': 27.55}"]), None),
        // iif.md
        ("IIF", json!([true, 123, 456]), Some(json!(123))),
        ("IIF", json!([false, 123, 456]), Some(json!(456))),
        ("IIF", json!([123, 123, 456]), Some(json!(456))),
        ("IIF", json!(["ABC", 123, 456]), Some(json!(456))),
        ("IIF", json!([[1, 2, 3], 123, 456]), Some(json!(456))),
        (
            "IIF",
            json!([{"name": "Alice", "age": 20}, 123, 456]),
            Some(json!(456)),
        ),
        // iif-fields: IIF(p.onSale, p.pricing.sale, p.pricing.msrp)
        ("IIF", json!([true, 30.85, 55.95]), Some(json!(30.85))),
        ("IIF", json!([false, 12.55, 20.15]), Some(json!(20.15))),
        // documentid.md
        (
            "DOCUMENTID",
            json!([{"id": "5741047452", "_rid": "36ZyAPW+uN8NAAAAAAAAAA=="}]),
            Some(json!(13)),
        ),
    ]
}

fn call(name: &str, args: &[Val]) -> Val {
    let spec = lookup(name).unwrap_or_else(|| panic!("{name} is not registered"));
    assert_eq!(spec.kind, FnKind::Scalar, "{name}");
    assert!(
        (spec.min_args..=spec.max_args).contains(&args.len()),
        "{name} does not take {} arguments",
        args.len()
    );
    (spec.eval)(args, &CTX)
}

#[test]
fn documentation_examples() {
    let mut failures = Vec::new();
    for (name, args, expected) in docs_examples() {
        let vals: Vec<Val> = args
            .as_array()
            .map(|a| a.iter().map(Val::from_json).collect())
            .unwrap_or_default();
        let got = call(name, &vals).to_json();
        if got != expected {
            failures.push(format!("{name}{args}: got {got:?}, want {expected:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Examples whose argument is a missing property (undefined) or a non-finite number, which
/// JSON cannot carry.
#[test]
fn undefined_arguments() {
    let u = Val::Undefined;
    let f = Val::Bool(false);
    let cases: Vec<(&str, Vec<Val>, Val)> = vec![
        ("IS_ARRAY", vec![u.clone()], f.clone()),
        ("IS_BOOL", vec![u.clone()], f.clone()),
        ("IS_DEFINED", vec![u.clone()], f.clone()),
        ("IS_DEFINED", vec![Val::Num(5.0)], Val::Bool(true)),
        ("IS_NULL", vec![u.clone()], f.clone()),
        ("IS_NUMBER", vec![u.clone()], f.clone()),
        ("IS_OBJECT", vec![u.clone()], f.clone()),
        ("IS_PRIMITIVE", vec![u.clone()], f.clone()),
        ("IS_STRING", vec![u.clone()], f.clone()),
        ("IS_FINITE_NUMBER", vec![Val::Num(8.9 / 0.0)], f.clone()),
        ("IS_FINITE_NUMBER", vec![Val::Num(f64::NAN)], f),
        ("STRINGTOARRAY", vec![u.clone()], Val::Undefined),
        ("STRINGTOBOOLEAN", vec![u.clone()], Val::Undefined),
        ("STRINGTOBOOLEAN", vec![Val::Num(f64::NAN)], Val::Undefined),
        (
            "STRINGTOBOOLEAN",
            vec![Val::Num(f64::INFINITY)],
            Val::Undefined,
        ),
        ("STRINGTONULL", vec![u.clone()], Val::Undefined),
        ("STRINGTONUMBER", vec![u.clone()], Val::Undefined),
        ("STRINGTOOBJECT", vec![u.clone()], Val::Undefined),
        (
            "IIF",
            vec![u.clone(), Val::Num(1.0), Val::Num(2.0)],
            Val::Num(2.0),
        ),
        ("DOCUMENTID", vec![u], Val::Undefined),
    ];
    for (name, args, want) in cases {
        assert_eq!(call(name, &args), want, "{name}({args:?})");
    }
}

#[test]
fn index_use_follows_the_docs() {
    for name in [
        "IS_ARRAY",
        "IS_BOOL",
        "IS_DEFINED",
        "IS_FINITE_NUMBER",
        "IS_INTEGER",
        "IS_NULL",
        "IS_NUMBER",
        "IS_OBJECT",
        "IS_PRIMITIVE",
        "IS_STRING",
    ] {
        assert!(lookup(name).is_some_and(|s| s.uses_index), "{name}");
    }
    for name in [
        "IIF",
        "STRINGTOARRAY",
        "STRINGTOBOOLEAN",
        "STRINGTONULL",
        "STRINGTONUMBER",
        "STRINGTOOBJECT",
    ] {
        assert!(lookup(name).is_some_and(|s| !s.uses_index), "{name}");
    }
}
