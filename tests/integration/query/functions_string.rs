//! The string family through the public function registry: the documentation's examples as a
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

const AW: &str = "AdventureWorks";
const DAY: &str = "Have a nice day!";

/// (function, arguments, expected JSON result; `None` = undefined).
fn docs_examples() -> Vec<(&'static str, Value, Option<Value>)> {
    vec![
        // concat.md
        (
            "CONCAT",
            json!(["adventure", "works"]),
            Some(json!("adventureworks")),
        ),
        (
            "CONCAT",
            json!(["duonovi-pro-coat", "-", "heavy-coats", "-", "8061"]),
            Some(json!("duonovi-pro-coat-heavy-coats-8061")),
        ),
        // contains.md
        ("CONTAINS", json!([AW, "Adventure"]), Some(json!(true))),
        ("CONTAINS", json!([AW, "Works"]), Some(json!(true))),
        ("CONTAINS", json!([AW, "adventure"]), Some(json!(false))),
        (
            "CONTAINS",
            json!([AW, "adventure", false]),
            Some(json!(false)),
        ),
        ("CONTAINS", json!([AW, "works", true]), Some(json!(true))),
        ("CONTAINS", json!([AW, "Contoso"]), Some(json!(false))),
        // contains-all-ci.md / contains-all-cs.md / contains-any-ci.md / contains-any-cs.md
        // (the cases with an `undefined` argument are in `undefined_arguments` below)
        (
            "CONTAINS_ALL_CI",
            json!([DAY, "have", "nice", "day!"]),
            Some(json!(true)),
        ),
        (
            "CONTAINS_ALL_CI",
            json!([DAY, "HAVE", "NICE", "DAY!"]),
            Some(json!(true)),
        ),
        (
            "CONTAINS_ALL_CI",
            json!([DAY, "had", "nice", "day!"]),
            Some(json!(false)),
        ),
        (
            "CONTAINS_ALL_CS",
            json!([DAY, "have", "nice", "day!"]),
            Some(json!(false)),
        ),
        (
            "CONTAINS_ALL_CS",
            json!([DAY, "HAVE", "NICE", "DAY!"]),
            Some(json!(false)),
        ),
        (
            "CONTAINS_ALL_CS",
            json!([DAY, "had", "nice", "day!"]),
            Some(json!(false)),
        ),
        (
            "CONTAINS_ANY_CI",
            json!([DAY, "have", "nice", "day!"]),
            Some(json!(true)),
        ),
        (
            "CONTAINS_ANY_CI",
            json!([DAY, "HAVE", "NICE", "DAY!"]),
            Some(json!(true)),
        ),
        (
            "CONTAINS_ANY_CI",
            json!([DAY, "had", "nice", "day!"]),
            Some(json!(true)),
        ),
        (
            "CONTAINS_ANY_CS",
            json!([DAY, "have", "nice", "day!"]),
            Some(json!(true)),
        ),
        (
            "CONTAINS_ANY_CS",
            json!([DAY, "HAVE", "NICE", "DAY!"]),
            Some(json!(false)),
        ),
        (
            "CONTAINS_ANY_CS",
            json!([DAY, "had", "nice", "day!"]),
            Some(json!(true)),
        ),
        // endswith.md
        ("ENDSWITH", json!([AW, "Adventure"]), Some(json!(false))),
        ("ENDSWITH", json!([AW, "Works"]), Some(json!(true))),
        ("ENDSWITH", json!([AW, "works"]), Some(json!(false))),
        ("ENDSWITH", json!([AW, "works", true]), Some(json!(true))),
        // index-of.md
        ("INDEX_OF", json!([AW, "A"]), Some(json!(0))),
        ("INDEX_OF", json!([AW, "s"]), Some(json!(13))),
        ("INDEX_OF", json!([AW, "Adventure"]), Some(json!(0))),
        ("INDEX_OF", json!([AW, "Works"]), Some(json!(9))),
        ("INDEX_OF", json!([AW, "tureW"]), Some(json!(5))),
        ("INDEX_OF", json!([AW, "Cosmos"]), Some(json!(-1))),
        ("INDEX_OF", json!([AW, "Works", 5]), Some(json!(9))),
        ("INDEX_OF", json!([AW, "Adventure", 5]), Some(json!(-1))),
        ("INDEX_OF", json!([AW, "aD"]), Some(json!(-1))),
        // lastindexof.md
        ("LASTINDEXOF", json!(["abcdeabc", "abc"]), Some(json!(5))),
        ("LASTINDEXOF", json!(["abcdeabc", "abc", 6]), Some(json!(0))),
        ("LASTINDEXOF", json!(["abcdeabc", "abc", 7]), Some(json!(5))),
        ("LASTINDEXOF", json!(["abcdeabc", "fg"]), Some(json!(-1))),
        // left.md
        ("LEFT", json!([AW, 0]), Some(json!(""))),
        ("LEFT", json!([AW, 1]), Some(json!("A"))),
        ("LEFT", json!([AW, 5]), Some(json!("Adven"))),
        ("LEFT", json!([AW, 14]), Some(json!(AW))),
        ("LEFT", json!([AW, 100]), Some(json!(AW))),
        // length.md
        ("LENGTH", json!([AW]), Some(json!(14))),
        ("LENGTH", json!([""]), Some(json!(0))),
        ("LENGTH", json!([null]), None),
        ("LENGTH", json!([0]), None),
        ("LENGTH", json!([["Adventure", "Works"]]), None),
        // lower.md / upper.md
        (
            "LOWER",
            json!(["adventureworks"]),
            Some(json!("adventureworks")),
        ),
        (
            "LOWER",
            json!(["ADVENTUREWORKS"]),
            Some(json!("adventureworks")),
        ),
        (
            "LOWER",
            json!(["adventureWorks"]),
            Some(json!("adventureworks")),
        ),
        (
            "LOWER",
            json!(["AdventureWorks"]),
            Some(json!("adventureworks")),
        ),
        (
            "LOWER",
            json!(["ADVENTURE_WORKS"]),
            Some(json!("adventure_works")),
        ),
        (
            "UPPER",
            json!(["adventureworks"]),
            Some(json!("ADVENTUREWORKS")),
        ),
        (
            "UPPER",
            json!(["ADVENTUREWORKS"]),
            Some(json!("ADVENTUREWORKS")),
        ),
        (
            "UPPER",
            json!(["adventureWorks"]),
            Some(json!("ADVENTUREWORKS")),
        ),
        (
            "UPPER",
            json!(["AdventureWorks"]),
            Some(json!("ADVENTUREWORKS")),
        ),
        (
            "UPPER",
            json!(["ADVENTURE_WORKS"]),
            Some(json!("ADVENTURE_WORKS")),
        ),
        // ltrim.md
        ("LTRIM", json!(["  AdventureWorks"]), Some(json!(AW))),
        (
            "LTRIM",
            json!(["  AdventureWorks  "]),
            Some(json!("AdventureWorks  ")),
        ),
        (
            "LTRIM",
            json!(["AdventureWorks  "]),
            Some(json!("AdventureWorks  ")),
        ),
        ("LTRIM", json!([AW]), Some(json!(AW))),
        ("LTRIM", json!([AW, "Works"]), Some(json!(AW))),
        ("LTRIM", json!([AW, "Adventure"]), Some(json!("Works"))),
        ("LTRIM", json!([AW, AW]), Some(json!(""))),
        ("LTRIM", json!([AW, ""]), Some(json!(AW))),
        // rtrim.md
        (
            "RTRIM",
            json!(["  AdventureWorks"]),
            Some(json!("  AdventureWorks")),
        ),
        (
            "RTRIM",
            json!(["  AdventureWorks  "]),
            Some(json!("  AdventureWorks")),
        ),
        ("RTRIM", json!(["AdventureWorks  "]), Some(json!(AW))),
        ("RTRIM", json!([AW]), Some(json!(AW))),
        ("RTRIM", json!([AW, "Works"]), Some(json!("Adventure"))),
        ("RTRIM", json!([AW, "Adventure"]), Some(json!(AW))),
        ("RTRIM", json!([AW, AW]), Some(json!(""))),
        ("RTRIM", json!([AW, ""]), Some(json!(AW))),
        // trim.md
        ("TRIM", json!(["   AdventureWorks"]), Some(json!(AW))),
        ("TRIM", json!(["AdventureWorks   "]), Some(json!(AW))),
        ("TRIM", json!(["   AdventureWorks   "]), Some(json!(AW))),
        (
            "TRIM",
            json!(["---AdventureWorks---"]),
            Some(json!("---AdventureWorks---")),
        ),
        (
            "TRIM",
            json!(["___AdventureWorks___", "_"]),
            Some(json!(AW)),
        ),
        (
            "TRIM",
            json!(["---AdventureWorks---", "-"]),
            Some(json!(AW)),
        ),
        (
            "TRIM",
            json!(["-- AdventureWorks --", "-"]),
            Some(json!(" AdventureWorks ")),
        ),
        (
            "TRIM",
            json!(["-_-AdventureWorks-_-", "-_"]),
            Some(json!(AW)),
        ),
        // regexmatch.md
        ("REGEXMATCH", json!(["abcd", "ABC"]), Some(json!(false))),
        ("REGEXMATCH", json!(["abcd", "ABC", "i"]), Some(json!(true))),
        ("REGEXMATCH", json!(["abcd", "ab.", ""]), Some(json!(true))),
        (
            "REGEXMATCH",
            json!(["abcd", "ab c", "x"]),
            Some(json!(true)),
        ),
        (
            "REGEXMATCH",
            json!(["abcd", "aB c", "ix"]),
            Some(json!(true)),
        ),
        ("REGEXMATCH", json!(["03a", "[0-9]"]), Some(json!(true))),
        (
            "REGEXMATCH",
            json!(["salt3824908", "salt{1}"]),
            Some(json!(true)),
        ),
        (
            "REGEXMATCH",
            json!(["shame", "s....", "i"]),
            Some(json!(true)),
        ),
        (
            "REGEXMATCH",
            json!(["Tecozow coat", " coat{1}"]),
            Some(json!(true)),
        ),
        (
            "REGEXMATCH",
            json!(["Bladnick coat", " coat{1}"]),
            Some(json!(true)),
        ),
        (
            "REGEXMATCH",
            json!(["Anidin heavy jacket", " coat{1}"]),
            Some(json!(false)),
        ),
        // replace.md / replicate.md / reverse.md
        (
            "REPLACE",
            json!(["AdventureWorksLT", "LT", "LT2"]),
            Some(json!("AdventureWorksLT2")),
        ),
        (
            "REPLICATE",
            json!(["Cosmic", 3]),
            Some(json!("CosmicCosmicCosmic")),
        ),
        ("REPLICATE", json!(["Cosmic", -1]), None),
        ("REVERSE", json!([AW]), Some(json!("skroWerutnevdA"))),
        ("REVERSE", json!(["skroWerutnevdA"]), Some(json!(AW))),
        // right.md
        ("RIGHT", json!([AW, 0]), Some(json!(""))),
        ("RIGHT", json!([AW, 1]), Some(json!("s"))),
        ("RIGHT", json!([AW, 5]), Some(json!("Works"))),
        ("RIGHT", json!([AW, 14]), Some(json!(AW))),
        ("RIGHT", json!([AW, 100]), Some(json!(AW))),
        // startswith.md
        ("STARTSWITH", json!([AW, "Works"]), Some(json!(false))),
        ("STARTSWITH", json!([AW, "Adventure"]), Some(json!(true))),
        ("STARTSWITH", json!([AW, "adventure"]), Some(json!(false))),
        (
            "STARTSWITH",
            json!([AW, "adventure", true]),
            Some(json!(true)),
        ),
        // stringequals.md
        ("STRINGEQUALS", json!([AW, AW]), Some(json!(true))),
        (
            "STRINGEQUALS",
            json!([AW, "adventureworks"]),
            Some(json!(false)),
        ),
        (
            "STRINGEQUALS",
            json!([AW, "adventureworks", true]),
            Some(json!(true)),
        ),
        // stringjoin.md
        (
            "STRINGJOIN",
            json!([["Iropa", "Mountain", "Bike"], " "]),
            Some(json!("Iropa Mountain Bike")),
        ),
        (
            "STRINGJOIN",
            json!([["Iropa", "Mountain", "Bike"], ""]),
            Some(json!("IropaMountainBike")),
        ),
        (
            "STRINGJOIN",
            json!([["6", "7", "4", "3"], "A"]),
            Some(json!("6A7A4A3")),
        ),
        (
            "STRINGJOIN",
            json!([["Adventure", "LT"], "Works"]),
            Some(json!("AdventureWorksLT")),
        ),
        // stringsplit.md
        (
            "STRINGSPLIT",
            json!(["Handlebar", "e"]),
            Some(json!(["Handl", "bar"])),
        ),
        (
            "STRINGSPLIT",
            json!(["CARBON_STEEL_BIKE_WHEEL", "_"]),
            Some(json!(["CARBON", "STEEL", "BIKE", "WHEEL"])),
        ),
        (
            "STRINGSPLIT",
            json!(["Road Bike", " "]),
            Some(json!(["Road", "Bike"])),
        ),
        (
            "STRINGSPLIT",
            json!(["xenmoun mountain bike", "moun"]),
            Some(json!(["xen", " ", "tain bike"])),
        ),
        (
            "STRINGSPLIT",
            json!(["Helmet", ""]),
            Some(json!(["Helmet"])),
        ),
        ("STRINGSPLIT", json!(["", ""]), Some(json!([""]))),
        // substring.md
        ("SUBSTRING", json!([AW, 0, 9]), Some(json!("Adventure"))),
        ("SUBSTRING", json!([AW, 9, 5]), Some(json!("Works"))),
        ("SUBSTRING", json!([AW, 0, 14]), Some(json!(AW))),
        ("SUBSTRING", json!([AW, 0, -1]), Some(json!(""))),
        // tostring.md
        ("TOSTRING", json!([125]), Some(json!("125"))),
        ("TOSTRING", json!([0.1234]), Some(json!("0.1234"))),
        ("TOSTRING", json!([false]), Some(json!("false"))),
        ("TOSTRING", json!([[1, 2, 3]]), Some(json!("[1,2,3]"))),
        (
            "TOSTRING",
            json!([{"department": "Bicycles"}]),
            Some(json!("{\"department\":\"Bicycles\"}")),
        ),
        (
            "TOSTRING",
            json!(["Hello World"]),
            Some(json!("Hello World")),
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

/// Examples whose arguments include `undefined`, NaN or infinities, which JSON cannot carry.
#[test]
fn undefined_arguments() {
    let s = Val::str;
    let u = Val::Undefined;
    let cases: Vec<(&str, Vec<Val>, Val)> = vec![
        (
            "CONTAINS_ALL_CI",
            vec![s(DAY), u.clone(), s("nice"), s("day!")],
            Val::Undefined,
        ),
        (
            "CONTAINS_ALL_CI",
            vec![s(DAY), u.clone(), s("had")],
            Val::Bool(false),
        ),
        (
            "CONTAINS_ALL_CS",
            vec![s(DAY), u.clone(), s("nice"), s("day!")],
            Val::Undefined,
        ),
        (
            "CONTAINS_ALL_CS",
            vec![s(DAY), u.clone(), s("had")],
            Val::Bool(false),
        ),
        (
            "CONTAINS_ANY_CI",
            vec![s(DAY), u.clone(), s("nice"), s("day!")],
            Val::Bool(true),
        ),
        (
            "CONTAINS_ANY_CI",
            vec![s(DAY), u.clone(), s("had")],
            Val::Undefined,
        ),
        (
            "CONTAINS_ANY_CS",
            vec![s(DAY), u.clone(), s("nice"), s("day!")],
            Val::Bool(true),
        ),
        (
            "CONTAINS_ANY_CS",
            vec![s(DAY), u.clone(), s("had")],
            Val::Undefined,
        ),
        (
            "STRINGJOIN",
            vec![
                Val::arr(vec![s("Iropa"), s("Mountain"), s("Bike")]),
                u.clone(),
            ],
            Val::Undefined,
        ),
        (
            "STRINGSPLIT",
            vec![s("AluminumBikeFrame"), u.clone()],
            Val::Undefined,
        ),
        ("TOSTRING", vec![u.clone()], Val::Undefined),
        ("TOSTRING", vec![Val::Num(f64::NAN)], s("NaN")),
        ("TOSTRING", vec![Val::Num(f64::INFINITY)], s("Infinity")),
        (
            "REPLICATE",
            vec![s("a"), Val::Num(f64::INFINITY)],
            Val::Undefined,
        ),
        ("LENGTH", vec![u.clone()], Val::Undefined),
        ("CONCAT", vec![s("a"), u.clone()], Val::Undefined),
        ("UPPER", vec![u], Val::Undefined),
    ];
    for (name, args, want) in cases {
        assert_eq!(call(name, &args), want, "{name}({args:?})");
    }
}

#[test]
fn index_use_follows_the_docs() {
    let served = [
        "STARTSWITH",
        "ENDSWITH",
        "CONTAINS",
        "STRINGEQUALS",
        "LEFT",
        "RIGHT",
        "SUBSTRING",
        "REGEXMATCH",
    ];
    let not_served = [
        "CONCAT",
        "LENGTH",
        "LOWER",
        "UPPER",
        "LTRIM",
        "RTRIM",
        "TRIM",
        "REPLACE",
        "REPLICATE",
        "REVERSE",
        "TOSTRING",
        "INDEX_OF",
        "LASTINDEXOF",
        "STRINGJOIN",
        "STRINGSPLIT",
    ];
    for name in served {
        assert!(lookup(name).is_some_and(|s| s.uses_index), "{name}");
    }
    for name in not_served {
        assert!(lookup(name).is_some_and(|s| !s.uses_index), "{name}");
    }
}

#[test]
fn arities_match_the_syntax_sections() {
    let expected: [(&str, usize, usize); 10] = [
        ("CONCAT", 2, usize::MAX),
        ("CONTAINS", 2, 3),
        ("CONTAINS_ANY_CI", 2, usize::MAX),
        ("INDEX_OF", 2, 3),
        ("LTRIM", 1, 2),
        ("REGEXMATCH", 2, 3),
        ("REPLACE", 3, 3),
        ("SUBSTRING", 3, 3),
        ("STRINGEQUALS", 2, 3),
        ("TOSTRING", 1, 1),
    ];
    for (name, min, max) in expected {
        let spec = lookup(name).unwrap_or_else(|| panic!("{name} is not registered"));
        assert_eq!((spec.min_args, spec.max_args), (min, max), "{name}");
    }
}
