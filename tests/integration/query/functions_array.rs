//! The array family through the public function registry: the documentation's examples as a
//! table of (call, arguments, expected result). Later this table will also run through the
//! query engine as `SELECT VALUE <call>`.

use cosmoscope::query::functions::{FnContext, FnKind, lookup};
use cosmoscope::query::value::Val;
use serde_json::{Value, json};

const CTX: FnContext = FnContext {
    clock: None,
    now_ticks: 0,
    seed: 0,
};

/// (function, arguments, expected JSON result; `None` = undefined).
fn docs_examples() -> Vec<(&'static str, Value, Option<Value>)> {
    let scores = json!([70, 86, 92, 99, 85, 90, 82]);
    let shirts = json!([{ "category": "shirts", "color": "blue" }]);
    let abc = json!(["abc", "ABC", "aBc", "AbC"]);
    vec![
        (
            "ARRAY_CONCAT",
            json!([["apples", "strawberries"], ["bananas"]]),
            Some(json!(["apples", "strawberries", "bananas"])),
        ),
        (
            "ARRAY_CONTAINS",
            json!([["coats", "jackets", "sweatshirts"], "hoodies"]),
            Some(json!(false)),
        ),
        (
            "ARRAY_CONTAINS",
            json!([shirts, { "category": "shirts" }]),
            Some(json!(false)),
        ),
        (
            "ARRAY_CONTAINS",
            json!([shirts, { "category": "shirts" }, true]),
            Some(json!(true)),
        ),
        (
            "ARRAY_CONTAINS_ALL",
            json!([[1, true, "3", [1, 2, 3]], 1, true, "3", [1, 2, 3]]),
            Some(json!(true)),
        ),
        (
            "ARRAY_CONTAINS_ALL",
            json!([[], 1, 2, 3]),
            Some(json!(false)),
        ),
        (
            "ARRAY_CONTAINS_ANY",
            json!([[1, 2, 3, 4], 2, 3, 4, 5]),
            Some(json!(true)),
        ),
        (
            "ARRAY_CONTAINS_ANY",
            json!([[1, 2, 3, 4], 5, 6, 7, 8]),
            Some(json!(false)),
        ),
        ("ARRAY_LENGTH", json!([scores]), Some(json!(7))),
        ("ARRAY_LENGTH", json!([null]), None),
        ("ARRAY_SLICE", json!([scores, -2]), Some(json!([90, 82]))),
        (
            "ARRAY_SLICE",
            json!([scores, 3, 5]),
            Some(json!([99, 85, 90, 82])),
        ),
        ("ARRAY_SLICE", json!([scores, -2, 1]), Some(json!([90]))),
        (
            "ARRAY_AVG",
            json!([[1.0, 2.0, 3.3, 4.7]]),
            Some(json!(2.75)),
        ),
        ("ARRAY_AVG", json!([abc]), None),
        (
            "ARRAY_MEDIAN",
            json!([[1.0, 2.0, 3.3, 4.7, 7.8]]),
            Some(json!(3.3)),
        ),
        ("ARRAY_SUM", json!([[1, 2, 3, 4]]), Some(json!(10))),
        ("ARRAY_MAX", json!([abc]), Some(json!("abc"))),
        (
            "ARRAY_MAX",
            json!([[12, "abc", true, false, null]]),
            Some(json!("abc")),
        ),
        ("ARRAY_MIN", json!([abc]), Some(json!("ABC"))),
        (
            "ARRAY_MIN",
            json!([[12, "abc", true, false, null]]),
            Some(json!(null)),
        ),
        (
            "CHOOSE",
            json!([1, "adventure", "works", true, [1]]),
            Some(json!("adventure")),
        ),
        ("CHOOSE", json!([0, "abc", 1, true, [1]]), None),
        ("CHOOSE", json!([4, "abc", 1, true, [1]]), Some(json!([1]))),
        ("CHOOSE", json!([5, "abc", 1, true, [1]]), None),
        (
            "OBJECTTOARRAY",
            json!([{ "a": "12345", "b": "67890" }]),
            Some(json!([{ "k": "a", "v": "12345" }, { "k": "b", "v": "67890" }])),
        ),
        (
            "OBJECTTOARRAY",
            json!([{ "a": "12345", "b": "67890" }, "key", "value"]),
            Some(json!([
                { "key": "a", "value": "12345" },
                { "key": "b", "value": "67890" }
            ])),
        ),
        (
            "SETINTERSECT",
            json!([[1, 2, 3, 4], [1, 1, 1, 1]]),
            Some(json!([1])),
        ),
        (
            "SETINTERSECT",
            json!([[1, 2, "A", "B"], ["A", 1]]),
            Some(json!(["A", 1])),
        ),
        (
            "SETUNION",
            json!([[1, 2, 3, 4], [3, 4, 5, 6]]),
            Some(json!([1, 2, 3, 4, 5, 6])),
        ),
        (
            "SETUNION",
            json!([[1, 2, "A", "B"], ["A", 1]]),
            Some(json!([1, 2, "A", "B"])),
        ),
        (
            "SETDIFFERENCE",
            json!([[1, 2, 6, 7], [1, 2, 3]]),
            Some(json!([6, 7])),
        ),
        (
            "SETDIFFERENCE",
            json!([[1, 1, 1, 1], [2, 3, 4]]),
            Some(json!([1])),
        ),
        (
            "SETEQUAL",
            json!([[1, true, "abc"], [true, 1, "abc"]]),
            Some(json!(true)),
        ),
        ("SETEQUAL", json!([[], [1, 2, 3]]), Some(json!(false))),
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

fn vals(args: &Value) -> Vec<Val> {
    args.as_array()
        .map(|a| a.iter().map(Val::from_json).collect())
        .unwrap_or_default()
}

#[test]
fn documentation_examples_through_the_registry() {
    for (name, args, expected) in docs_examples() {
        let args = vals(&args);
        let got = eval(name, &args);
        assert_eq!(got.to_json(), expected, "{name}({args:?})");
    }
}

#[test]
fn undefined_search_values_follow_and_or_semantics() {
    // array-contains-all.md / array-contains-any.md: `…, 1, undefined` and `…, 5, undefined`.
    let with = |x: f64| {
        vec![
            vals(&json!([[1, 2, 3, 4]])).remove(0),
            Val::Num(x),
            Val::Undefined,
        ]
    };
    assert_eq!(eval("ARRAY_CONTAINS_ALL", &with(1.0)), Val::Undefined);
    assert_eq!(eval("ARRAY_CONTAINS_ALL", &with(5.0)), Val::Bool(false));
    assert_eq!(eval("ARRAY_CONTAINS_ANY", &with(1.0)), Val::Bool(true));
    assert_eq!(eval("ARRAY_CONTAINS_ANY", &with(5.0)), Val::Undefined);
}

#[test]
fn every_documented_array_function_is_registered() {
    let arity = |n: &str| lookup(n).map(|s| (s.min_args, s.max_args, s.uses_index));
    assert_eq!(arity("ARRAY_CONCAT"), Some((2, usize::MAX, false)));
    assert_eq!(arity("ARRAY_CONTAINS"), Some((2, 3, true)));
    assert_eq!(arity("ARRAY_CONTAINS_ALL"), Some((2, usize::MAX, false)));
    assert_eq!(arity("ARRAY_CONTAINS_ANY"), Some((2, usize::MAX, false)));
    assert_eq!(arity("ARRAY_LENGTH"), Some((1, 1, false)));
    assert_eq!(arity("ARRAY_SLICE"), Some((2, 3, false)));
    assert_eq!(arity("CHOOSE"), Some((2, usize::MAX, false)));
    assert_eq!(arity("OBJECTTOARRAY"), Some((1, 3, false)));
    for name in ["SETINTERSECT", "SETUNION", "SETDIFFERENCE", "SETEQUAL"] {
        assert_eq!(arity(name), Some((2, 2, false)), "{name}");
    }
    for name in [
        "ARRAY_AVG",
        "ARRAY_MAX",
        "ARRAY_MEDIAN",
        "ARRAY_MIN",
        "ARRAY_SUM",
    ] {
        assert_eq!(arity(name), Some((1, 1, false)), "{name}");
    }
}
