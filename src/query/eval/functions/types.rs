//! Type checking and conversion functions: IS_ARRAY, IS_BOOL, IS_DATETIME, IS_DEFINED,
//! IS_FINITE_NUMBER, IS_INTEGER, IS_NULL, IS_NUMBER, IS_OBJECT, IS_PRIMITIVE, IS_STRING; the
//! JSON conversions STRINGTOARRAY, STRINGTOBOOLEAN, STRINGTONULL, STRINGTONUMBER,
//! STRINGTOOBJECT; the conditional IIF; and the item function DOCUMENTID.
//!
//! Behaviour follows the per-function pages of the service's documentation
//! (articles/cosmos-db/nosql/query/*.md) and their published examples.
//!
//! - The `IS_*` functions always return a boolean, even for undefined (`IS_NUMBER({}.category)`
//!   is false); they are the documented exception to "undefined in, undefined out".
//! - The `StringTo*` functions parse their argument as JSON text (surrounding JSON whitespace
//!   allowed, single quotes not) and return undefined for anything that is not a string, does
//!   not parse, or parses to another type.

use base64::Engine;
use serde_json::Value;

use super::{FnContext, FnSpec, scalar};
use crate::query::eval::value::Val;

// `uses_index`: every IS_* page says "benefits from a range index", except IS_DATETIME whose page
// says "performs a full scan" (the wording CONTAINS uses, which the string family also marks
// as index-served). The conversions, IIF and DOCUMENTID pages say the index is not used or
// say nothing.
pub const FUNCTIONS: &[FnSpec] = &[
    scalar("DOCUMENTID", 1, 1, false, document_id),
    scalar("IIF", 3, 3, false, iif),
    scalar("IS_ARRAY", 1, 1, true, is_array),
    scalar("IS_BOOL", 1, 1, true, is_bool),
    scalar("IS_DATETIME", 1, 1, true, is_datetime),
    scalar("IS_DEFINED", 1, 1, true, is_defined),
    scalar("IS_FINITE_NUMBER", 1, 1, true, is_finite_number),
    scalar("IS_INTEGER", 1, 1, true, is_integer),
    scalar("IS_NULL", 1, 1, true, is_null),
    scalar("IS_NUMBER", 1, 1, true, is_number),
    scalar("IS_OBJECT", 1, 1, true, is_object),
    scalar("IS_PRIMITIVE", 1, 1, true, is_primitive),
    scalar("IS_STRING", 1, 1, true, is_string),
    scalar("STRINGTOARRAY", 1, 1, false, string_to_array),
    scalar("STRINGTOBOOLEAN", 1, 1, false, string_to_boolean),
    scalar("STRINGTONULL", 1, 1, false, string_to_null),
    scalar("STRINGTONUMBER", 1, 1, false, string_to_number),
    scalar("STRINGTOOBJECT", 1, 1, false, string_to_object),
];

// ---------------------------------------------------------------------------------------------
// Type checks

/// Argument `i`, or undefined if the call has fewer arguments. The planner checks arity
/// against the spec, so this only keeps a direct misuse of `eval` from panicking.
fn arg(args: &[Val], i: usize) -> &Val {
    static UNDEFINED: Val = Val::Undefined;
    args.get(i).unwrap_or(&UNDEFINED)
}

fn is_array(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(arg(args, 0), Val::Arr(_)))
}

fn is_bool(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(arg(args, 0), Val::Bool(_)))
}

fn is_defined(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(!arg(args, 0).is_undefined())
}

fn is_null(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(arg(args, 0), Val::Null))
}

fn is_number(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(arg(args, 0), Val::Num(_)))
}

fn is_object(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(arg(args, 0), Val::Obj(_)))
}

fn is_string(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(arg(args, 0), Val::Str(_)))
}

/// String, boolean, number or null (is-primitive.md); not undefined, arrays or objects.
fn is_primitive(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(
        arg(args, 0),
        Val::Null | Val::Bool(_) | Val::Num(_) | Val::Str(_)
    ))
}

/// IS_FINITE_NUMBER(numeric_expr): false for infinities and NaN. The page only shows numbers;
/// like the other type checks, a non-number gives false rather than undefined.
fn is_finite_number(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(arg(args, 0), Val::Num(n) if n.is_finite()))
}

/// 2^63 as a double.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// IS_INTEGER(numeric_expr): whether the number is a 64-bit signed integer. Values are doubles
/// here, and the page's `IS_INTEGER(9223372036854775807)` is true although that literal rounds
/// to 2^63 as a double, so the upper bound is inclusive; `18446744073709551615` is false.
/// A non-number gives false.
fn is_integer(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(matches!(
        arg(args, 0),
        Val::Num(n) if n.fract() == 0.0 && (-TWO_POW_63..=TWO_POW_63).contains(n)
    ))
}

/// IS_DATETIME(expr): whether `expr` is a string in the service's ISO 8601 subset, the one
/// every date function reads (see `datetime::parse_date_time`).
fn is_datetime(args: &[Val], _: &FnContext) -> Val {
    Val::Bool(
        arg(args, 0)
            .as_str()
            .is_some_and(|s| super::datetime::parse_date_time(s).is_some()),
    )
}

// ---------------------------------------------------------------------------------------------
// IIF

/// IIF(bool_expr, true_expr, not_true_expr): the second argument when the first is exactly
/// `true`, else the third, whatever its type (iif.md: `IIF(123, 123, 456)` is 456) and also
/// when it is undefined.
fn iif(args: &[Val], _: &FnContext) -> Val {
    let chosen = if arg(args, 0).is_true() { 1 } else { 2 };
    arg(args, chosen).clone()
}

// ---------------------------------------------------------------------------------------------
// StringTo* conversions

/// The JSON value `v`'s text denotes, if `v` is a string holding exactly one JSON value.
/// serde_json accepts surrounding JSON whitespace (`"  false  "`, `"   60   "` parse, as the
/// pages show) and rejects single-quoted strings (`"[ 'coats' ]"` is undefined).
fn parse_json(v: &Val) -> Option<Value> {
    serde_json::from_str(v.as_str()?).ok()
}

/// STRINGTOARRAY(str): a JSON array, nested values included.
fn string_to_array(args: &[Val], _: &FnContext) -> Val {
    match parse_json(arg(args, 0)) {
        Some(j @ Value::Array(_)) => Val::from_json(&j),
        _ => Val::Undefined,
    }
}

/// STRINGTOBOOLEAN(str): "true" or "false" (lower case, as JSON spells them).
fn string_to_boolean(args: &[Val], _: &FnContext) -> Val {
    match parse_json(arg(args, 0)) {
        Some(Value::Bool(b)) => Val::Bool(b),
        _ => Val::Undefined,
    }
}

/// STRINGTONULL(str): "null" (lower case only: "NULL" and "Null" are undefined).
fn string_to_null(args: &[Val], _: &FnContext) -> Val {
    match parse_json(arg(args, 0)) {
        Some(Value::Null) => Val::Null,
        _ => Val::Undefined,
    }
}

/// STRINGTONUMBER(str): a JSON number (integer or floating point). JSON has no NaN, Infinity,
/// hex, leading `+` or bare `.5`, so those are undefined, as is a value beyond the double range.
fn string_to_number(args: &[Val], _: &FnContext) -> Val {
    match parse_json(arg(args, 0)) {
        Some(Value::Number(n)) => n.as_f64().map_or(Val::Undefined, Val::Num),
        _ => Val::Undefined,
    }
}

/// STRINGTOOBJECT(str): a JSON object, nested values included.
fn string_to_object(args: &[Val], _: &FnContext) -> Val {
    match parse_json(arg(args, 0)) {
        Some(j @ Value::Object(_)) => Val::from_json(&j),
        _ => Val::Undefined,
    }
}

// ---------------------------------------------------------------------------------------------
// DOCUMENTID

/// DOCUMENTID(root): the item's integer id within its physical partition. The page's example
/// pairs `_rid` "36ZyAPW+uN8NAAAAAAAAAA==" with 13: the document part of the resource id (its
/// last 8 bytes, little-endian), which the store stamps on every item. The top nibble of that
/// part is the resource type (0 for documents) and is not part of the number. Undefined when
/// the argument is not an item carrying a well-formed `_rid` (e.g. a projection without it).
/// That the argument must be the FROM alias itself is for the planner to enforce.
fn document_id(args: &[Val], _: &FnContext) -> Val {
    let Some(rid) = arg(args, 0)
        .get("_rid")
        .as_str()
        .map(|r| r.replace('-', "/"))
    else {
        return Val::Undefined;
    };
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(rid) else {
        return Val::Undefined;
    };
    // A document rid is exactly 16 bytes: database (4), container (4), document (8).
    let Some(doc) = <[u8; 16]>::try_from(bytes.as_slice())
        .ok()
        .and_then(|b| <[u8; 8]>::try_from(&b[8..]).ok())
    else {
        return Val::Undefined;
    };
    Val::Num((u64::from_le_bytes(doc) & 0x0FFF_FFFF_FFFF_FFFF) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CTX: FnContext = FnContext {
        clock: None,
        now_ticks: 0,
        seed: 0,
    };

    fn v(j: Value) -> Val {
        Val::from_json(&j)
    }

    fn call(name: &str, args: &[Val]) -> Val {
        let spec = FUNCTIONS
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} is not registered"));
        assert!(args.len() >= spec.min_args && args.len() <= spec.max_args);
        (spec.eval)(args, &CTX)
    }

    fn call1(name: &str, arg: Val) -> Val {
        call(name, &[arg])
    }

    /// `{...}.prop` as the examples write it: a member of an object literal, undefined if absent.
    fn member(obj: Value, prop: &str) -> Val {
        v(obj).get(prop)
    }

    /// Checks a type-checking function over the shared example table of is-array.md,
    /// is-bool.md and is-null.md: true, 65, "AdventureWorks", null, {size: "small"},
    /// [25344, 82947], then `.skus`, `.size` and `.vendor` of `{skus: [...], vendors: null}`
    /// (the last two are undefined: the pages read `.vendor` of an object that has `vendors`).
    fn check_table(name: &str, expected: [bool; 9]) {
        let obj = json!({"skus": [25344, 82947], "vendors": null});
        let inputs = [
            v(json!(true)),
            v(json!(65)),
            v(json!("AdventureWorks")),
            Val::Null,
            v(json!({"size": "small"})),
            v(json!([25344, 82947])),
            member(obj.clone(), "skus"),
            member(obj.clone(), "size"),
            member(obj, "vendor"),
        ];
        for (i, (input, want)) in inputs.into_iter().zip(expected).enumerate() {
            assert_eq!(call1(name, input), Val::Bool(want), "{name} row {i}");
        }
    }

    #[test]
    fn is_array_docs_examples() {
        check_table(
            "IS_ARRAY",
            [false, false, false, false, false, true, true, false, false],
        );
    }

    #[test]
    fn is_bool_docs_examples() {
        check_table(
            "IS_BOOL",
            [true, false, false, false, false, false, false, false, false],
        );
    }

    #[test]
    fn is_null_docs_examples() {
        let obj = json!({"quantity": 25, "vendor": null});
        let cases = [
            (v(json!(true)), false),
            (v(json!(15)), false),
            (v(json!("AdventureWorks")), false),
            (Val::Null, true),
            (v(json!({"price": 85.23})), false),
            (v(json!(["red", "blue", "yellow"])), false),
            (member(obj.clone(), "quantity"), false),
            (member(obj.clone(), "size"), false),
            (member(obj, "vendor"), true),
        ];
        for (input, want) in cases {
            assert_eq!(
                call1("IS_NULL", input.clone()),
                Val::Bool(want),
                "{input:?}"
            );
        }
    }

    #[test]
    fn is_defined_docs_examples() {
        let obj = json!({"quantity": 5});
        assert_eq!(
            call1("IS_DEFINED", member(obj.clone(), "quantity")),
            Val::Bool(true)
        );
        assert_eq!(call1("IS_DEFINED", member(obj, "name")), Val::Bool(false));
        assert_eq!(call1("IS_DEFINED", Val::Null), Val::Bool(true));
    }

    #[test]
    fn is_finite_number_docs_examples() {
        assert_eq!(
            call1("IS_FINITE_NUMBER", Val::Num(1234.567)),
            Val::Bool(true)
        );
        assert_eq!(
            call1("IS_FINITE_NUMBER", Val::Num(8.9 / 0.0)),
            Val::Bool(false)
        );
        assert_eq!(
            call1("IS_FINITE_NUMBER", Val::Num((-1.0f64).sqrt())),
            Val::Bool(false)
        );
        assert_eq!(call1("IS_FINITE_NUMBER", v(json!("1"))), Val::Bool(false));
        assert_eq!(call1("IS_FINITE_NUMBER", Val::Undefined), Val::Bool(false));
    }

    #[test]
    fn is_integer_docs_examples() {
        assert_eq!(call1("IS_INTEGER", v(json!(3454.123))), Val::Bool(false));
        assert_eq!(call1("IS_INTEGER", v(json!(5523432))), Val::Bool(true));
        assert_eq!(
            call1("IS_INTEGER", v(json!(-9223372036854775808i64))),
            Val::Bool(true)
        );
        assert_eq!(
            call1("IS_INTEGER", v(json!(9223372036854775807i64))),
            Val::Bool(true)
        );
        assert_eq!(
            call1("IS_INTEGER", v(json!(18446744073709551615u64))),
            Val::Bool(false)
        );
    }

    #[test]
    fn is_integer_edge_cases() {
        assert_eq!(call1("IS_INTEGER", Val::Num(-0.0)), Val::Bool(true));
        assert_eq!(call1("IS_INTEGER", Val::Num(1e19)), Val::Bool(false));
        assert_eq!(call1("IS_INTEGER", Val::Num(-1e19)), Val::Bool(false));
        assert_eq!(
            call1("IS_INTEGER", Val::Num(f64::INFINITY)),
            Val::Bool(false)
        );
        assert_eq!(call1("IS_INTEGER", Val::Num(f64::NAN)), Val::Bool(false));
        assert_eq!(call1("IS_INTEGER", v(json!("1"))), Val::Bool(false));
    }

    #[test]
    fn is_number_docs_examples() {
        let cases = [
            (v(json!(true)), false),
            (v(json!(1)), true),
            (v(json!("value")), false),
            (Val::Null, false),
            (v(json!({"name": "Tecozow coat"})), false),
            (member(json!({"name": "Tecozow coat"}), "name"), false),
            (member(json!({"quantity": 0}), "quantity"), true),
            (member(json!({}), "category"), false),
        ];
        for (input, want) in cases {
            assert_eq!(
                call1("IS_NUMBER", input.clone()),
                Val::Bool(want),
                "{input:?}"
            );
        }
    }

    /// Rows of is-object.md, is-primitive.md and is-string.md: true, 1, "value",
    /// ["green", "red", "yellow"], null, {"name": "Tecozow coat"}, then the `name` member, a
    /// third member (object, boolean or boolean), and `{}.category`.
    fn check_value_table(name: &str, third: Val, expected: [bool; 9]) {
        let obj = json!({"name": "Tecozow coat"});
        let inputs = [
            v(json!(true)),
            v(json!(1)),
            v(json!("value")),
            v(json!(["green", "red", "yellow"])),
            Val::Null,
            v(obj.clone()),
            member(obj, "name"),
            third,
            member(json!({}), "category"),
        ];
        for (i, (input, want)) in inputs.into_iter().zip(expected).enumerate() {
            assert_eq!(call1(name, input), Val::Bool(want), "{name} row {i}");
        }
    }

    #[test]
    fn is_object_docs_examples() {
        check_value_table(
            "IS_OBJECT",
            member(json!({"quantity": {"count": 0}}), "quantity"),
            [false, false, false, false, false, true, false, true, false],
        );
    }

    #[test]
    fn is_primitive_docs_examples() {
        check_value_table(
            "IS_PRIMITIVE",
            member(json!({"onSale": false}), "onSale"),
            [true, true, true, false, true, false, true, true, false],
        );
    }

    #[test]
    fn is_string_docs_examples() {
        check_value_table(
            "IS_STRING",
            member(json!({"onSale": false}), "onSale"),
            [false, false, true, false, false, false, true, false, false],
        );
    }

    #[test]
    fn is_datetime_docs_examples() {
        let cases = [
            ("2024-12-12", true),
            ("2024-12-12Z", true),
            ("2024-12-12 20:21:25", true),
            ("2024-12-12T20:21:25Z", true),
            ("2024-12-12T20:21:25.123", true),
            ("2024-12-12 20:21:25.123Z", true),
            ("2024-12-12T20Z", false),
            ("2024-12-12 20:21:25.", false),
        ];
        for (input, want) in cases {
            assert_eq!(
                call1("IS_DATETIME", Val::str(input)),
                Val::Bool(want),
                "{input}"
            );
        }
    }

    #[test]
    fn is_datetime_remarks() {
        let cases = [
            ("2023-03-06T15:29:59", true),
            ("2023-03-06T15:29:59Z", true),
            ("2023-03-06T15:29:59.9", true),
            ("2023-03-06T15:29:59.9Z", true),
            ("2023-03-06T15:29:59.1234567", true),
            ("2023-03-06T15:29:59.1234567Z", true),
            ("2023-03-06 15:29:00Z", true),
            ("2023-03-06T15:29:59.12345678", false),
            ("2023-03-06X15:29:59", false),
            ("2023-03-06T15:29", false),
            ("2023-03-06T15:29:59+01:00", false),
            ("2023-3-06", false),
            ("23-03-06", false),
            ("2023-03-06ZZ", false),
            ("2023-13-01", false),
            ("2023-02-29", false),
            ("2024-02-29", true),
            ("2023-03-06T24:00:00", false),
            ("", false),
        ];
        for (input, want) in cases {
            assert_eq!(
                call1("IS_DATETIME", Val::str(input)),
                Val::Bool(want),
                "{input}"
            );
        }
        assert_eq!(call1("IS_DATETIME", Val::Num(20240101.0)), Val::Bool(false));
        assert_eq!(call1("IS_DATETIME", Val::Undefined), Val::Bool(false));
    }

    #[test]
    fn iif_docs_examples() {
        let (a, b) = (Val::Num(123.0), Val::Num(456.0));
        let conds = [
            (v(json!(true)), 123.0),
            (v(json!(false)), 456.0),
            (v(json!(123)), 456.0),
            (v(json!("ABC")), 456.0),
            (v(json!([1, 2, 3])), 456.0),
            (v(json!({"name": "Alice", "age": 20})), 456.0),
        ];
        for (cond, want) in conds {
            assert_eq!(
                call("IIF", &[cond.clone(), a.clone(), b.clone()]),
                Val::Num(want),
                "{cond:?}"
            );
        }
    }

    #[test]
    fn iif_fields_example() {
        let items = [
            json!({"onSale": true, "pricing": {"msrp": 55.95, "sale": 30.85}}),
            json!({"onSale": false, "pricing": {"msrp": 20.15, "sale": 12.55}}),
        ];
        let prices: Vec<Val> = items
            .into_iter()
            .map(|item| {
                let p = v(item);
                let pricing = p.get("pricing");
                call(
                    "IIF",
                    &[p.get("onSale"), pricing.get("sale"), pricing.get("msrp")],
                )
            })
            .collect();
        assert_eq!(prices, [Val::Num(30.85), Val::Num(20.15)]);
    }

    #[test]
    fn iif_with_undefined_branches() {
        assert_eq!(
            call("IIF", &[Val::Undefined, Val::Num(1.0), Val::Num(2.0)]),
            Val::Num(2.0)
        );
        assert_eq!(
            call("IIF", &[Val::Bool(true), Val::Undefined, Val::Num(2.0)]),
            Val::Undefined
        );
    }

    #[test]
    fn string_to_array_docs_examples() {
        let conv = |s: &str| call1("STRINGTOARRAY", Val::str(s)).to_json();
        assert_eq!(conv("[]"), Some(json!([])));
        assert_eq!(
            conv(r#"[ "coats", "gloves", "hats" ]"#),
            Some(json!(["coats", "gloves", "hats"]))
        );
        assert_eq!(
            conv(r#"[ { "types": [ "coats", "gloves" ] }, [ "hats" ], 76, false, null ]"#),
            Some(json!([{"types": ["coats", "gloves"]}, ["hats"], 76, false, null]))
        );
        assert_eq!(
            conv(r#"[ [ "coats", "gloves" ], [ "hats" ] ]"#),
            Some(json!([["coats", "gloves"], ["hats"]]))
        );
        assert_eq!(conv("[ 'coats', 'gloves', 'hats' ]"), None);
        assert_eq!(call1("STRINGTOARRAY", Val::Undefined), Val::Undefined);
        assert_eq!(call1("STRINGTOARRAY", Val::Null), Val::Undefined);
        assert_eq!(conv("{}"), None);
        assert_eq!(conv("[1,"), None);
    }

    #[test]
    fn string_to_boolean_docs_examples() {
        let conv = |x: Val| call1("STRINGTOBOOLEAN", x);
        assert_eq!(conv(Val::str("true")), Val::Bool(true));
        assert_eq!(conv(Val::str("true  ")), Val::Bool(true));
        assert_eq!(conv(Val::str("  false")), Val::Bool(false));
        assert_eq!(conv(Val::str("  false  ")), Val::Bool(false));
        for undefined in [
            Val::Bool(true),
            Val::str("100"),
            Val::str("3.14"),
            Val::str("-1.79769e+308"),
            Val::str("Hello"),
            Val::Undefined,
            Val::Null,
            Val::Num(f64::NAN),
            v(json!([1, 2, 3])),
            Val::Num(f64::INFINITY),
            Val::str("True"),
        ] {
            assert_eq!(conv(undefined.clone()), Val::Undefined, "{undefined:?}");
        }
    }

    #[test]
    fn string_to_null_docs_examples() {
        let conv = |x: Val| call1("STRINGTONULL", x);
        for ok in ["null", "null  ", "  null", "  null  "] {
            assert_eq!(conv(Val::str(ok)), Val::Null, "{ok:?}");
        }
        for undefined in [
            Val::str("NULL"),
            Val::str("Null"),
            Val::Null,
            Val::Undefined,
        ] {
            assert_eq!(conv(undefined.clone()), Val::Undefined, "{undefined:?}");
        }
    }

    // The docs' example value is 3.14, not an approximation of π.
    #[allow(clippy::approx_constant)]
    #[test]
    fn string_to_number_docs_examples() {
        let conv = |x: Val| call1("STRINGTONUMBER", x);
        assert_eq!(conv(Val::str("100")), Val::Num(100.0));
        assert_eq!(conv(Val::str("3.14")), Val::Num(3.14));
        assert_eq!(conv(Val::str("   60   ")), Val::Num(60.0));
        assert_eq!(conv(Val::str("-1.79769e+308")), Val::Num(-1.79769e308));
        assert_eq!(conv(Val::str("Hello")), Val::Undefined);
        // From the StringToObject page's example table.
        assert_eq!(conv(Val::Undefined), Val::Undefined);
        assert_eq!(conv(Val::Null), Val::Undefined);
    }

    #[test]
    fn string_to_number_rejects_non_json_numbers() {
        let conv = |s: &str| call1("STRINGTONUMBER", Val::str(s));
        for bad in [
            "NaN", "Infinity", "0x10", "+1", ".5", "1.", "1e400", "1 2", "'1'", "\"1\"",
        ] {
            assert_eq!(conv(bad), Val::Undefined, "{bad}");
        }
        assert_eq!(conv("-0.5e1"), Val::Num(-5.0));
        assert_eq!(call1("STRINGTONUMBER", Val::Num(1.0)), Val::Undefined);
    }

    #[test]
    fn string_to_object_docs_examples() {
        let conv = |s: &str| call1("STRINGTOOBJECT", Val::str(s)).to_json();
        assert_eq!(conv("{}"), Some(json!({})));
        assert_eq!(
            conv(r#"{"isAvailable": true}"#),
            Some(json!({"isAvailable": true}))
        );
        assert_eq!(
            conv(r#"{"division": {"name": "Sales"}}"#),
            Some(json!({"division": {"name": "Sales"}}))
        );
        assert_eq!(conv("{'price': 27.55}"), None);
        assert_eq!(conv("[]"), None);
        assert_eq!(call1("STRINGTOOBJECT", v(json!({}))), Val::Undefined);
        assert_eq!(call1("STRINGTOOBJECT", Val::Undefined), Val::Undefined);
    }

    #[test]
    fn document_id_docs_example() {
        let item = v(json!({"id": "5741047452", "_rid": "36ZyAPW+uN8NAAAAAAAAAA=="}));
        assert_eq!(call1("DOCUMENTID", item), Val::Num(13.0));
        // The store writes `/` in base64 as `-`.
        let dashed = v(json!({"_rid": "36ZyAPW-uN8NAAAAAAAAAA=="}));
        assert_eq!(call1("DOCUMENTID", dashed), Val::Num(13.0));
    }

    #[test]
    fn document_id_needs_an_item_rid() {
        for bad in [
            json!({"id": "1"}),
            json!({"_rid": 5}),
            json!({"_rid": "not base64!"}),
            json!({"_rid": "36ZyAA=="}),
            json!("36ZyAPW+uN8NAAAAAAAAAA=="),
        ] {
            assert_eq!(call1("DOCUMENTID", v(bad.clone())), Val::Undefined, "{bad}");
        }
        assert_eq!(call1("DOCUMENTID", Val::Undefined), Val::Undefined);
    }

    #[test]
    fn missing_arguments_never_panic() {
        for spec in FUNCTIONS {
            for n in 0..spec.min_args {
                let args = vec![Val::str("a"); n];
                let _ = (spec.eval)(&args, &CTX);
            }
        }
    }

    #[test]
    fn every_name_is_unique_and_upper_case() {
        let mut names: Vec<_> = FUNCTIONS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FUNCTIONS.len());
        assert!(names.iter().all(|n| *n == n.to_uppercase()));
    }
}
