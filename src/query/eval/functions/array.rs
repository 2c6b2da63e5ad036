//! Array functions: ARRAY_CONCAT, ARRAY_CONTAINS(_ALL|_ANY), ARRAY_LENGTH, ARRAY_SLICE,
//! ARRAY_AVG/MAX/MEDIAN/MIN/SUM, CHOOSE, OBJECTTOARRAY and the set functions SETINTERSECT,
//! SETUNION, SETDIFFERENCE and SETEQUAL.
//!
//! Sources: one page per function under articles/cosmos-db/nosql/query/ in
//! MicrosoftDocs/azure-databases-docs, with the examples (and their outputs) from
//! Azure-Samples/cosmos-db-nosql-query-samples that the pages include.
//!
//! Element equality is the query language's (`value::sql_eq`: same type and deep equality,
//! so `1` never matches `"1"` and object member order does not matter), never Rust's.
//! An argument of the wrong type gives `undefined`.

use std::cmp::Ordering;

use super::{FnContext, FnSpec, scalar};
use crate::query::eval::value::{Val, sql_eq, total_cmp};

const VARIADIC: usize = usize::MAX;

// Only ARRAY_CONTAINS is documented as benefiting from a range index; the other pages say the
// function doesn't use the index or performs a full scan.
pub const FUNCTIONS: &[FnSpec] = &[
    scalar("ARRAY_CONCAT", 2, VARIADIC, false, array_concat),
    scalar("ARRAY_CONTAINS", 2, 3, true, array_contains),
    scalar("ARRAY_CONTAINS_ALL", 2, VARIADIC, false, array_contains_all),
    scalar("ARRAY_CONTAINS_ANY", 2, VARIADIC, false, array_contains_any),
    scalar("ARRAY_LENGTH", 1, 1, false, array_length),
    scalar("ARRAY_SLICE", 2, 3, false, array_slice),
    scalar("ARRAY_AVG", 1, 1, false, array_avg),
    scalar("ARRAY_MAX", 1, 1, false, array_max),
    scalar("ARRAY_MEDIAN", 1, 1, false, array_median),
    scalar("ARRAY_MIN", 1, 1, false, array_min),
    scalar("ARRAY_SUM", 1, 1, false, array_sum),
    scalar("CHOOSE", 2, VARIADIC, false, choose),
    scalar("OBJECTTOARRAY", 1, 3, false, object_to_array),
    // The set functions take exactly two arrays (setunion.md and the others show no third).
    scalar("SETDIFFERENCE", 2, 2, false, set_difference),
    scalar("SETEQUAL", 2, 2, false, set_equal),
    scalar("SETINTERSECT", 2, 2, false, set_intersect),
    scalar("SETUNION", 2, 2, false, set_union),
];

fn array_arg(args: &[Val], i: usize) -> Option<&[Val]> {
    args.get(i).and_then(Val::as_array)
}

fn same(a: &Val, b: &Val) -> bool {
    sql_eq(a, b) == Some(true)
}

fn contains(items: &[Val], x: &Val) -> bool {
    items.iter().any(|i| same(i, x))
}

/// Appends the defined values of `items` not already in `out` (the sets "have no duplicates").
fn extend_unique<'a>(out: &mut Vec<Val>, items: impl IntoIterator<Item = &'a Val>) {
    for item in items {
        if !item.is_undefined() && !contains(out, item) {
            out.push(item.clone());
        }
    }
}

fn array_concat(args: &[Val], _: &FnContext) -> Val {
    let mut out = Vec::new();
    for a in args {
        match a.as_array() {
            Some(items) => out.extend_from_slice(items),
            None => return Val::Undefined,
        }
    }
    Val::arr(out)
}

/// `ARRAY_CONTAINS(arr, x [, partial])`. With `partial = true` an object element matches when
/// it has every member of the searched object with an equal value; the page is silent on
/// nesting and on non-objects, so members are compared with full equality and a non-object
/// search value needs a full match either way.
fn array_contains(args: &[Val], _: &FnContext) -> Val {
    let (Some(items), Some(x)) = (array_arg(args, 0), args.get(1)) else {
        return Val::Undefined;
    };
    let partial = match args.get(2) {
        None => false,
        Some(Val::Bool(b)) => *b,
        Some(_) => return Val::Undefined,
    };
    if x.is_undefined() {
        return Val::Undefined;
    }
    Val::Bool(items.iter().any(|item| contains_matches(item, x, partial)))
}

/// Whether `item`, an element of ARRAY_CONTAINS's array, matches the searched `x`: equal, or
/// with `partial` and an object `x`, an object holding each of `x`'s defined members. The
/// evaluator applies it element by element to an `ARRAY(subquery)` argument, so the subquery
/// stops at the first match.
pub fn contains_matches(item: &Val, x: &Val, partial: bool) -> bool {
    match (partial, x.as_object()) {
        (true, Some(wanted)) => {
            item.as_object().is_some()
                && wanted
                    .iter()
                    .filter(|(_, v)| !v.is_undefined())
                    .all(|(k, v)| same(&item.get(k), v))
        }
        _ => same(item, x),
    }
}

/// `ARRAY_CONTAINS_ALL(arr, x1, …)`: AND over the searched values, so a missing value gives
/// `false` even when another is undefined, and an undefined one otherwise gives undefined
/// (array-contains-all.md: `…, 5, undefined` is false, `…, 1, undefined` is left out).
fn array_contains_all(args: &[Val], _: &FnContext) -> Val {
    let Some(items) = array_arg(args, 0) else {
        return Val::Undefined;
    };
    let mut unknown = false;
    for x in &args[1..] {
        if x.is_undefined() {
            unknown = true;
        } else if !contains(items, x) {
            return Val::Bool(false);
        }
    }
    if unknown {
        Val::Undefined
    } else {
        Val::Bool(true)
    }
}

/// `ARRAY_CONTAINS_ANY(arr, x1, …)`: OR over the searched values, so a found value gives
/// `true` even when another is undefined, and an undefined one otherwise gives undefined
/// (array-contains-any.md: `…, 1, undefined` is true, `…, 5, undefined` is left out).
fn array_contains_any(args: &[Val], _: &FnContext) -> Val {
    let Some(items) = array_arg(args, 0) else {
        return Val::Undefined;
    };
    let mut unknown = false;
    for x in &args[1..] {
        if x.is_undefined() {
            unknown = true;
        } else if contains(items, x) {
            return Val::Bool(true);
        }
    }
    if unknown {
        Val::Undefined
    } else {
        Val::Bool(false)
    }
}

fn array_length(args: &[Val], _: &FnContext) -> Val {
    array_arg(args, 0).map_or(Val::Undefined, |items| {
        Val::Num(items.iter().filter(|v| !v.is_undefined()).count() as f64)
    })
}

/// `ARRAY_SLICE(arr, start [, length])`. A negative start counts from the end and is clamped
/// to the first element; a length past the end stops there; a length of zero or less gives an
/// empty array. The page does not say what a fractional start or length means: they are
/// truncated toward zero, the C++ conversion to an integer.
fn array_slice(args: &[Val], _: &FnContext) -> Val {
    let Some(items) = array_arg(args, 0) else {
        return Val::Undefined;
    };
    let Some(start) = args.get(1).and_then(Val::as_f64) else {
        return Val::Undefined;
    };
    let length = match args.get(2) {
        None => None,
        Some(Val::Num(l)) => Some(l.trunc()),
        Some(_) => return Val::Undefined,
    };
    let n = items.len() as f64;
    let start = start.trunc();
    // Clamped in floating point so huge or infinite arguments cannot overflow.
    let from = if start < 0.0 {
        (n + start).max(0.0)
    } else {
        start.min(n)
    };
    let to = match length {
        None => n,
        Some(l) => (from + l.max(0.0)).min(n),
    };
    if from.is_nan() || to.is_nan() || to <= from {
        return Val::arr(Vec::new());
    }
    Val::arr(items[from as usize..to as usize].to_vec())
}

/// The numbers of an array for ARRAY_AVG/MEDIAN/SUM: undefined elements are ignored, any other
/// non-number makes the whole result undefined ("the elements in array can only be number").
fn numbers(args: &[Val]) -> Option<Vec<f64>> {
    array_arg(args, 0)?
        .iter()
        .filter(|v| !v.is_undefined())
        .map(Val::as_f64)
        .collect()
}

/// `ARRAY_SUM`; the sum of an empty array is 0 (the page is silent; 0 is the empty sum).
fn array_sum(args: &[Val], _: &FnContext) -> Val {
    // Folded from +0 (a float `sum()` starts at -0, which would make the empty sum -0).
    numbers(args).map_or(Val::Undefined, |ns| {
        Val::Num(ns.iter().fold(0.0, |a, b| a + b))
    })
}

/// `ARRAY_AVG`; an empty array has no average, so it gives undefined (the page is silent).
fn array_avg(args: &[Val], _: &FnContext) -> Val {
    match numbers(args) {
        Some(ns) if !ns.is_empty() => Val::Num(ns.iter().sum::<f64>() / ns.len() as f64),
        _ => Val::Undefined,
    }
}

/// `ARRAY_MEDIAN`: the middle value, or the mean of the two middle values
/// (`ARRAY_MEDIAN([1, -2.7, 3, -4])` = -0.8500000000000001 = (-2.7 + 1) / 2). Undefined for an
/// empty array (the page is silent).
fn array_median(args: &[Val], _: &FnContext) -> Val {
    let Some(mut ns) = numbers(args) else {
        return Val::Undefined;
    };
    if ns.is_empty() {
        return Val::Undefined;
    }
    ns.sort_by(f64::total_cmp);
    let mid = ns.len() / 2;
    Val::Num(if ns.len() % 2 == 1 {
        ns[mid]
    } else {
        (ns[mid - 1] + ns[mid]) / 2.0
    })
}

/// The extreme element for ARRAY_MAX/MIN. Elements may be null, booleans, numbers or strings,
/// ranked null < boolean < number < string (the pages' priority order, which is also the
/// service's sort order, strings compared ordinally); undefined elements are ignored; an array
/// or object element, or an array with no defined element, gives undefined.
fn extreme(args: &[Val], keep: Ordering) -> Val {
    let Some(items) = array_arg(args, 0) else {
        return Val::Undefined;
    };
    let mut best: Option<&Val> = None;
    for item in items {
        match item {
            Val::Undefined => continue,
            Val::Arr(_) | Val::Obj(_) => return Val::Undefined,
            _ => {}
        }
        if best.is_none_or(|b| total_cmp(item, b) == keep) {
            best = Some(item);
        }
    }
    best.cloned().unwrap_or_default()
}

fn array_max(args: &[Val], _: &FnContext) -> Val {
    extreme(args, Ordering::Greater)
}

fn array_min(args: &[Val], _: &FnContext) -> Val {
    extreme(args, Ordering::Less)
}

/// `CHOOSE(index, expr_1, …)`: one-based; undefined outside the list. A fractional index is
/// truncated toward zero like ARRAY_SLICE's arguments (the page is silent).
fn choose(args: &[Val], _: &FnContext) -> Val {
    let Some(index) = args.first().and_then(Val::as_f64) else {
        return Val::Undefined;
    };
    let index = index.trunc();
    let list = &args[1..];
    if index >= 1.0 && index <= list.len() as f64 {
        list[index as usize - 1].clone()
    } else {
        Val::Undefined
    }
}

/// `OBJECTTOARRAY(obj [, key_name [, value_name]])`: one `{k, v}` object per member, in member
/// order, with `k`/`v` renamed by the optional string arguments. A non-object, or a name that
/// is not a string, gives undefined.
fn object_to_array(args: &[Val], _: &FnContext) -> Val {
    let Some(members) = args.first().and_then(Val::as_object) else {
        return Val::Undefined;
    };
    let name = |i: usize, default: &str| match args.get(i) {
        None => Some(default.into()),
        Some(Val::Str(s)) => Some(s.clone()),
        Some(_) => None,
    };
    let (Some(k), Some(v)) = (name(1, "k"), name(2, "v")) else {
        return Val::Undefined;
    };
    Val::arr(
        members
            .iter()
            .filter(|(_, value)| !value.is_undefined())
            .map(|(key, value)| {
                Val::obj(vec![
                    (k.clone(), Val::Str(key.clone())),
                    (v.clone(), value.clone()),
                ])
            })
            .collect(),
    )
}

fn two_arrays(args: &[Val]) -> Option<(&[Val], &[Val])> {
    Some((array_arg(args, 0)?, array_arg(args, 1)?))
}

/// `SETINTERSECT(a, b)`: the elements of `b` that are in `a`, without duplicates, in `b`'s
/// order (setintersect.md: `SetIntersect([1, 2, "A", "B"], ["A", 1])` is `["A", 1]`, and the
/// field example returns the second array's order too).
fn set_intersect(args: &[Val], _: &FnContext) -> Val {
    let Some((a, b)) = two_arrays(args) else {
        return Val::Undefined;
    };
    let mut out = Vec::new();
    extend_unique(&mut out, b.iter().filter(|x| contains(a, x)));
    Val::arr(out)
}

/// `SETUNION(a, b)`: `a`'s elements then `b`'s, without duplicates, in first-seen order.
fn set_union(args: &[Val], _: &FnContext) -> Val {
    let Some((a, b)) = two_arrays(args) else {
        return Val::Undefined;
    };
    let mut out = Vec::new();
    extend_unique(&mut out, a.iter().chain(b));
    Val::arr(out)
}

/// `SETDIFFERENCE(a, b)`: the elements of `a` not in `b`, without duplicates, in `a`'s order.
fn set_difference(args: &[Val], _: &FnContext) -> Val {
    let Some((a, b)) = two_arrays(args) else {
        return Val::Undefined;
    };
    let mut out = Vec::new();
    extend_unique(&mut out, a.iter().filter(|x| !contains(b, x)));
    Val::arr(out)
}

/// `SETEQUAL(a, b)`: whether both arrays hold the same elements once duplicates are removed.
fn set_equal(args: &[Val], _: &FnContext) -> Val {
    let Some((a, b)) = two_arrays(args) else {
        return Val::Undefined;
    };
    let covers = |x: &[Val], y: &[Val]| {
        x.iter()
            .filter(|v| !v.is_undefined())
            .all(|v| contains(y, v))
    };
    Val::Bool(covers(a, b) && covers(b, a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn v(j: Value) -> Val {
        Val::from_json(&j)
    }

    fn call(name: &str, args: &[Val]) -> Val {
        super::super::call_in(FUNCTIONS, name, args)
    }

    /// Calls `name` with JSON arguments and checks the exact result (`None` = undefined).
    fn check(name: &str, args: Value, expected: Option<Value>) {
        let Value::Array(items) = args else {
            panic!("arguments must be a JSON array")
        };
        let args: Vec<Val> = items.iter().map(Val::from_json).collect();
        check_vals(name, &args, expected);
    }

    fn check_vals(name: &str, args: &[Val], expected: Option<Value>) {
        let got = call(name, args);
        let want = expected.map_or(Val::Undefined, v);
        assert_eq!(got, want, "{name}({args:?})");
    }

    /// Arguments from JSON, with `Val::Undefined` appended (the docs pass `undefined` literals).
    fn with_undefined(args: Value) -> Vec<Val> {
        let Value::Array(items) = args else {
            panic!("arguments must be a JSON array")
        };
        let mut out: Vec<Val> = items.iter().map(Val::from_json).collect();
        out.push(Val::Undefined);
        out
    }

    #[test]
    fn array_concat_docs_example() {
        check(
            "ARRAY_CONCAT",
            json!([["apples", "strawberries"], ["bananas"]]),
            Some(json!(["apples", "strawberries", "bananas"])),
        );
        check(
            "ARRAY_CONCAT",
            json!([[1], [], [2, [3]]]),
            Some(json!([1, 2, [3]])),
        );
        check("ARRAY_CONCAT", json!([[1], "2"]), None);
        check("ARRAY_CONCAT", json!([null, [1]]), None);
    }

    #[test]
    fn array_contains_docs_example() {
        let clothes = json!(["coats", "jackets", "sweatshirts"]);
        let shirts = json!([{ "category": "shirts", "color": "blue" }]);
        check(
            "ARRAY_CONTAINS",
            json!([clothes, "coats"]),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([clothes, "hoodies"]),
            Some(json!(false)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([shirts, { "category": "shirts", "color": "blue" }]),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([shirts, { "category": "shirts" }]),
            Some(json!(false)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([shirts, { "category": "shirts" }, true]),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([shirts, { "category": "shorts", "color": "blue" }, true]),
            Some(json!(false)),
        );
    }

    #[test]
    fn array_contains_edge_cases() {
        // Equality is the language's: no cross-type matches, member order is irrelevant.
        check("ARRAY_CONTAINS", json!([[1, 2], "1"]), Some(json!(false)));
        check("ARRAY_CONTAINS", json!([[1, 2], 1.0]), Some(json!(true)));
        check("ARRAY_CONTAINS", json!([[null], null]), Some(json!(true)));
        check(
            "ARRAY_CONTAINS",
            json!([[{ "a": 1, "b": 2 }], { "b": 2, "a": 1 }]),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([[[1, 2]], [1, 2]]),
            Some(json!(true)),
        );
        check("ARRAY_CONTAINS", json!([[[1, 2]], [1]]), Some(json!(false)));
        // An explicit false is the default full match; partial matching needs objects.
        check(
            "ARRAY_CONTAINS",
            json!([[{ "a": 1, "b": 2 }], { "a": 1 }, false]),
            Some(json!(false)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([[1, 2], 1, true]),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([[[1, 2]], [1], true]),
            Some(json!(false)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([[1, { "a": 1 }], {}, true]),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS",
            json!([[1, 2], {}, true]),
            Some(json!(false)),
        );
        // Mistyped or undefined arguments.
        check("ARRAY_CONTAINS", json!([[], 1]), Some(json!(false)));
        check("ARRAY_CONTAINS", json!(["abc", "a"]), None);
        check("ARRAY_CONTAINS", json!([null, 1]), None);
        check("ARRAY_CONTAINS", json!([[1], 1, "true"]), None);
        check_vals("ARRAY_CONTAINS", &with_undefined(json!([[1]])), None);
        check_vals("ARRAY_CONTAINS", &[Val::Undefined, Val::Num(1.0)], None);
        check_vals(
            "ARRAY_CONTAINS",
            &[v(json!([1])), Val::Num(1.0), Val::Undefined],
            None,
        );
    }

    #[test]
    fn array_contains_all_docs_example() {
        check(
            "ARRAY_CONTAINS_ALL",
            json!([[1, true, "3", [1, 2, 3]], 1, true, "3", [1, 2, 3]]),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS_ALL",
            json!([[1, 2, 3, 4], 2, 3, 4, 5]),
            Some(json!(false)),
        );
        check_vals(
            "ARRAY_CONTAINS_ALL",
            &with_undefined(json!([[1, 2, 3, 4], 1])),
            None,
        );
        check(
            "ARRAY_CONTAINS_ALL",
            json!([[1, 2, 3, 4], 5, 6, 7, 8]),
            Some(json!(false)),
        );
        check(
            "ARRAY_CONTAINS_ALL",
            json!([[], 1, 2, 3]),
            Some(json!(false)),
        );
        check_vals(
            "ARRAY_CONTAINS_ALL",
            &with_undefined(json!([[1, 2, 3, 4], 5])),
            Some(json!(false)),
        );
        check("ARRAY_CONTAINS_ALL", json!(["1234", 1]), None);
    }

    #[test]
    fn array_contains_any_docs_example() {
        check(
            "ARRAY_CONTAINS_ANY",
            json!([[1, true, "3", [1, 2, 3]], 1, true, "3", [1, 2, 3]]),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS_ANY",
            json!([[1, 2, 3, 4], 2, 3, 4, 5]),
            Some(json!(true)),
        );
        check_vals(
            "ARRAY_CONTAINS_ANY",
            &with_undefined(json!([[1, 2, 3, 4], 1])),
            Some(json!(true)),
        );
        check(
            "ARRAY_CONTAINS_ANY",
            json!([[1, 2, 3, 4], 5, 6, 7, 8]),
            Some(json!(false)),
        );
        check(
            "ARRAY_CONTAINS_ANY",
            json!([[], 1, 2, 3]),
            Some(json!(false)),
        );
        check_vals(
            "ARRAY_CONTAINS_ANY",
            &with_undefined(json!([[1, 2, 3, 4], 5])),
            None,
        );
        check("ARRAY_CONTAINS_ANY", json!([{ "a": 1 }, 1]), None);
    }

    #[test]
    fn array_length_docs_example() {
        check(
            "ARRAY_LENGTH",
            json!([[70, 86, 92, 99, 85, 90, 82]]),
            Some(json!(7)),
        );
        check("ARRAY_LENGTH", json!([[]]), Some(json!(0)));
        check("ARRAY_LENGTH", json!([null]), None);
        check("ARRAY_LENGTH", json!(["abc"]), None);
        check_vals("ARRAY_LENGTH", &[Val::Undefined], None);
    }

    #[test]
    fn array_slice_docs_example() {
        let a = json!([70, 86, 92, 99, 85, 90, 82]);
        check("ARRAY_SLICE", json!([a, 0]), Some(a.clone()));
        check(
            "ARRAY_SLICE",
            json!([a, 1]),
            Some(json!([86, 92, 99, 85, 90, 82])),
        );
        check("ARRAY_SLICE", json!([a, -1]), Some(json!([82])));
        check("ARRAY_SLICE", json!([a, -2]), Some(json!([90, 82])));
        check("ARRAY_SLICE", json!([a, 0, 3]), Some(json!([70, 86, 92])));
        check("ARRAY_SLICE", json!([a, 0, 12]), Some(a.clone()));
        check(
            "ARRAY_SLICE",
            json!([a, 3, 5]),
            Some(json!([99, 85, 90, 82])),
        );
        check("ARRAY_SLICE", json!([a, -2, 1]), Some(json!([90])));
    }

    #[test]
    fn array_slice_edge_cases() {
        let a = json!(["apples", "strawberries", "bananas"]);
        check("ARRAY_SLICE", json!([a, 1, 0]), Some(json!([])));
        check("ARRAY_SLICE", json!([a, 1, -100]), Some(json!([])));
        check("ARRAY_SLICE", json!([a, 3]), Some(json!([])));
        check("ARRAY_SLICE", json!([a, 100, 2]), Some(json!([])));
        check("ARRAY_SLICE", json!([a, -100]), Some(a.clone()));
        check("ARRAY_SLICE", json!([a, -100, 1]), Some(json!(["apples"])));
        check(
            "ARRAY_SLICE",
            json!([a, 1.9, 1.9]),
            Some(json!(["strawberries"])),
        );
        check("ARRAY_SLICE", json!([a, 0, 1e300]), Some(a.clone()));
        check("ARRAY_SLICE", json!([a, "1"]), None);
        check("ARRAY_SLICE", json!([a, 1, null]), None);
        check("ARRAY_SLICE", json!(["abc", 1]), None);
        check_vals("ARRAY_SLICE", &[v(a), Val::Undefined], None);
    }

    #[test]
    fn array_aggregates_docs_examples() {
        let strings = json!(["abc", "ABC", "aBc", "AbC"]);
        let mixed = with_undefined(json!([12, "abc", true, false, null]));
        let mixed = Val::arr(mixed);

        check("ARRAY_AVG", json!([[1, 2, 3, 4]]), Some(json!(2.5)));
        check(
            "ARRAY_AVG",
            json!([[1.0, 2.0, 3.3, 4.7]]),
            Some(json!(2.75)),
        );
        let case3 = Val::arr(with_undefined(json!([1, -2.7, 3, -4])));
        check_vals(
            "ARRAY_AVG",
            std::slice::from_ref(&case3),
            Some(json!(-0.675)),
        );
        check("ARRAY_AVG", json!([strings]), None);
        check_vals("ARRAY_AVG", std::slice::from_ref(&mixed), None);

        check("ARRAY_MEDIAN", json!([[1, 2, 3, 4]]), Some(json!(2.5)));
        check(
            "ARRAY_MEDIAN",
            json!([[1.0, 2.0, 3.3, 4.7, 7.8]]),
            Some(json!(3.3)),
        );
        check_vals("ARRAY_MEDIAN", &[case3], Some(json!(-0.8500000000000001)));
        check("ARRAY_MEDIAN", json!([strings]), None);
        check_vals("ARRAY_MEDIAN", std::slice::from_ref(&mixed), None);

        check("ARRAY_SUM", json!([[1, 2, 3, 4]]), Some(json!(10)));
        let with_gap = Val::arr(with_undefined(json!([1, 2, 3, 4])));
        check_vals("ARRAY_SUM", &[with_gap], Some(json!(10)));
        check("ARRAY_SUM", json!([strings]), None);
        check_vals("ARRAY_SUM", std::slice::from_ref(&mixed), None);
        // An empty array sums to 0, not -0 (which would print as `-0.0`).
        assert_eq!(
            call("ARRAY_SUM", &[Val::arr(Vec::new())]).to_json(),
            Some(json!(0))
        );

        check("ARRAY_MAX", json!([[1, 2, 3, 4]]), Some(json!(4)));
        check("ARRAY_MAX", json!([strings]), Some(json!("abc")));
        check("ARRAY_MAX", json!([[true, false]]), Some(json!(true)));
        check("ARRAY_MAX", json!([[null, null]]), Some(json!(null)));
        check_vals(
            "ARRAY_MAX",
            std::slice::from_ref(&mixed),
            Some(json!("abc")),
        );
        check(
            "ARRAY_MAX",
            json!([[12, "abc", true, false, null]]),
            Some(json!("abc")),
        );

        check("ARRAY_MIN", json!([[1, 2, 3, 4]]), Some(json!(1)));
        check("ARRAY_MIN", json!([strings]), Some(json!("ABC")));
        check("ARRAY_MIN", json!([[true, false]]), Some(json!(false)));
        check("ARRAY_MIN", json!([[null, null]]), Some(json!(null)));
        check_vals("ARRAY_MIN", &[mixed], Some(json!(null)));
        check(
            "ARRAY_MIN",
            json!([[12, "abc", true, false, null]]),
            Some(json!(null)),
        );
    }

    #[test]
    fn array_aggregates_edge_cases() {
        check("ARRAY_SUM", json!([[]]), Some(json!(0)));
        for f in ["ARRAY_AVG", "ARRAY_MEDIAN", "ARRAY_MAX", "ARRAY_MIN"] {
            check(f, json!([[]]), None);
            check_vals(f, &[Val::arr(vec![Val::Undefined])], None);
        }
        check("ARRAY_MEDIAN", json!([[5, 1, 3]]), Some(json!(3)));
        check("ARRAY_MAX", json!([[1, [2]]]), None);
        check("ARRAY_MIN", json!([[1, { "a": 0 }]]), None);
        check("ARRAY_MAX", json!([[2, 10, 1.5]]), Some(json!(10)));
        check("ARRAY_MIN", json!([[false, 0, ""]]), Some(json!(false)));
        for f in [
            "ARRAY_AVG",
            "ARRAY_MEDIAN",
            "ARRAY_SUM",
            "ARRAY_MAX",
            "ARRAY_MIN",
        ] {
            check(f, json!([null]), None);
            check(f, json!([{ "a": 1 }]), None);
            check_vals(f, &[Val::Undefined], None);
        }
    }

    #[test]
    fn choose_docs_examples() {
        check(
            "CHOOSE",
            json!([1, "adventure", "works", true, [1]]),
            Some(json!("adventure")),
        );
        let list = json!(["abc", 1, true, [1]]);
        let expected = [None, Some(json!("abc")), Some(json!(1)), Some(json!(true))];
        for (i, want) in expected.into_iter().enumerate() {
            let mut args = vec![json!(i)];
            args.extend(list.as_array().cloned().unwrap_or_default());
            check("CHOOSE", Value::Array(args), want);
        }
        check("CHOOSE", json!([4, "abc", 1, true, [1]]), Some(json!([1])));
        check("CHOOSE", json!([5, "abc", 1, true, [1]]), None);
        // choose-fields: CHOOSE(3, p.category, p.name, p.sku).
        let item = v(json!({
            "id": "68719519522",
            "name": "Gremon Fins",
            "sku": "73311",
            "tags": ["Science Blue", "Turbo"],
            "category": "short-fins"
        }));
        let args = [
            Val::Num(3.0),
            item.get("category"),
            item.get("name"),
            item.get("sku"),
        ];
        check_vals("CHOOSE", &args, Some(json!("73311")));
    }

    #[test]
    fn choose_edge_cases() {
        check("CHOOSE", json!([-1, "a"]), None);
        check("CHOOSE", json!([1.7, "a", "b"]), Some(json!("a")));
        check("CHOOSE", json!(["1", "a"]), None);
        check("CHOOSE", json!([null, "a"]), None);
        check_vals(
            "CHOOSE",
            &[Val::Num(2.0), Val::str("a"), Val::Undefined],
            None,
        );
        check_vals("CHOOSE", &[Val::Undefined, Val::str("a")], None);
    }

    #[test]
    fn object_to_array_docs_examples() {
        let o = json!({ "a": "12345", "b": "67890" });
        check(
            "OBJECTTOARRAY",
            json!([o]),
            Some(json!([{ "k": "a", "v": "12345" }, { "k": "b", "v": "67890" }])),
        );
        check(
            "OBJECTTOARRAY",
            json!([o, "name"]),
            Some(json!([{ "name": "a", "v": "12345" }, { "name": "b", "v": "67890" }])),
        );
        check(
            "OBJECTTOARRAY",
            json!([o, "key", "value"]),
            Some(json!([
                { "key": "a", "value": "12345" },
                { "key": "b", "value": "67890" }
            ])),
        );
    }

    #[test]
    fn object_to_array_edge_cases() {
        // Member order is kept and values of any type pass through.
        check(
            "OBJECTTOARRAY",
            json!([{ "z": [1], "a": { "b": null } }, "size", "quantity"]),
            Some(json!([
                { "size": "z", "quantity": [1] },
                { "size": "a", "quantity": { "b": null } }
            ])),
        );
        check("OBJECTTOARRAY", json!([{}]), Some(json!([])));
        check("OBJECTTOARRAY", json!([[1, 2]]), None);
        check("OBJECTTOARRAY", json!(["abc"]), None);
        check("OBJECTTOARRAY", json!([null]), None);
        check("OBJECTTOARRAY", json!([{ "a": 1 }, 1]), None);
        check("OBJECTTOARRAY", json!([{ "a": 1 }, "k", null]), None);
        check_vals("OBJECTTOARRAY", &[Val::Undefined], None);
    }

    #[test]
    fn set_intersect_docs_examples() {
        check(
            "SETINTERSECT",
            json!([[1, 2, 3, 4], [3, 4, 5, 6]]),
            Some(json!([3, 4])),
        );
        check("SETINTERSECT", json!([[1, 2, 3, 4], []]), Some(json!([])));
        check(
            "SETINTERSECT",
            json!([[1, 2, 3, 4], [1, 1, 1, 1]]),
            Some(json!([1])),
        );
        check(
            "SETINTERSECT",
            json!([[1, 2, 3, 4], ["A", "B"]]),
            Some(json!([])),
        );
        check(
            "SETINTERSECT",
            json!([[1, 2, "A", "B"], ["A", 1]]),
            Some(json!(["A", 1])),
        );
        check(
            "SETINTERSECT",
            json!([["Finch", "Mine Shaft", "Rhino"], ["Rhino", "Finch"]]),
            Some(json!(["Rhino", "Finch"])),
        );
    }

    #[test]
    fn set_union_docs_examples() {
        check(
            "SETUNION",
            json!([[1, 2, 3, 4], [3, 4, 5, 6]]),
            Some(json!([1, 2, 3, 4, 5, 6])),
        );
        check(
            "SETUNION",
            json!([[1, 2, 3, 4], []]),
            Some(json!([1, 2, 3, 4])),
        );
        check(
            "SETUNION",
            json!([[1, 2, 3, 4], [1, 1, 1, 1]]),
            Some(json!([1, 2, 3, 4])),
        );
        check(
            "SETUNION",
            json!([[1, 2, "A", "B"], ["A", 1]]),
            Some(json!([1, 2, "A", "B"])),
        );
        check(
            "SETUNION",
            json!([
                ["Cutty Sark", "Horizon", "Russet", "Fuscous"],
                ["Fuscous", "Horizon", "Tacha"]
            ]),
            Some(json!([
                "Cutty Sark",
                "Horizon",
                "Russet",
                "Fuscous",
                "Tacha"
            ])),
        );
    }

    #[test]
    fn set_difference_and_equal_docs_examples() {
        check(
            "SETDIFFERENCE",
            json!([[1, 2, 3], [1, 2, 6, 7]]),
            Some(json!([3])),
        );
        check(
            "SETDIFFERENCE",
            json!([[1, 2, 6, 7], [1, 2, 3]]),
            Some(json!([6, 7])),
        );
        check(
            "SETDIFFERENCE",
            json!([[1, 2, 3, 4], [1, 2, 3, 4, 5, 6]]),
            Some(json!([])),
        );
        check("SETDIFFERENCE", json!([[], [1, 2, 3]]), Some(json!([])));
        check(
            "SETDIFFERENCE",
            json!([[1, 2, 3], []]),
            Some(json!([1, 2, 3])),
        );
        check(
            "SETDIFFERENCE",
            json!([[1, 1, 1, 1], [2, 3, 4]]),
            Some(json!([1])),
        );

        check("SETEQUAL", json!([[1, 2, 3], [1, 2, 3]]), Some(json!(true)));
        check("SETEQUAL", json!([[1, 2, 3], [3, 2, 1]]), Some(json!(true)));
        check(
            "SETEQUAL",
            json!([[1, 2, 3, 3], [1, 2, 2, 3, 1, 2]]),
            Some(json!(true)),
        );
        check("SETEQUAL", json!([[], [1, 2, 3]]), Some(json!(false)));
        check(
            "SETEQUAL",
            json!([[1, true, "abc"], [true, 1, "abc"]]),
            Some(json!(true)),
        );
        check(
            "SETEQUAL",
            json!([[1, 1, 1, 1], [2, 3, 4]]),
            Some(json!(false)),
        );
    }

    #[test]
    fn set_functions_use_language_equality_and_reject_non_arrays() {
        check(
            "SETUNION",
            json!([[{ "a": 1, "b": [1] }], [{ "b": [1], "a": 1 }, 1.0, 1]]),
            Some(json!([{ "a": 1, "b": [1] }, 1])),
        );
        check("SETINTERSECT", json!([[1, "1"], ["1"]]), Some(json!(["1"])));
        check("SETEQUAL", json!([[null], [null, null]]), Some(json!(true)));
        for f in ["SETINTERSECT", "SETUNION", "SETDIFFERENCE", "SETEQUAL"] {
            check(f, json!([[1], "1"]), None);
            check(f, json!([null, [1]]), None);
            check_vals(f, &[v(json!([1])), Val::Undefined], None);
        }
    }

    #[test]
    fn index_use_follows_the_docs() {
        let indexed: Vec<_> = FUNCTIONS
            .iter()
            .filter(|s| s.uses_index)
            .map(|s| s.name)
            .collect();
        assert_eq!(indexed, ["ARRAY_CONTAINS"]);
    }
}
