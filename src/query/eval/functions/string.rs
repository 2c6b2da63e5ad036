//! String functions: CONCAT, CONTAINS (and CONTAINS_ALL/ANY_CI/CS), ENDSWITH, INDEX_OF,
//! LASTINDEXOF, LEFT, LENGTH, LOWER, LTRIM, REGEXMATCH, REPLACE, REPLICATE, REVERSE, RIGHT,
//! RTRIM, STARTSWITH, STRINGEQUALS, STRINGJOIN, STRINGSPLIT, SUBSTRING, TOSTRING, TRIM, UPPER.
//!
//! Behaviour follows the per-function pages of the service's documentation
//! (articles/cosmos-db/nosql/query/*.md) and their published examples. The conversions
//! STRINGTOARRAY and STRINGTOBOOLEAN live with the other `StringTo*` functions in `types.rs`.
//!
//! Rules shared by the whole family:
//! - An undefined argument, or an argument of the wrong type, gives undefined (the LENGTH page
//!   shows `LENGTH(null)`, `LENGTH(0)` and `LENGTH([...])` dropping out of the result).
//! - Lengths and positions count UTF-16 code units. The pages are silent on this (every example
//!   is ASCII); the service's string semantics are .NET-flavoured elsewhere (invariant casing,
//!   `LastIndexOf`'s backwards window, `Trim(char[])`), so we follow .NET's `String`. A slice
//!   that splits a surrogate pair yields U+FFFD for the lone half, as Rust strings cannot hold it.
//! - Case-insensitive comparisons and LOWER/UPPER use per-character simple case mapping, the
//!   equivalent of .NET's invariant culture (no `ß` → `SS` expansion, no final-sigma rule).

use std::cell::RefCell;
use std::collections::HashMap;

use fancy_regex::Regex;

use super::{FnContext, FnSpec, scalar};
use crate::query::eval::value::{Val, number_json};

/// Largest result REPLICATE may build (replicate.md: `length(str) * n <= 10,000`).
const REPLICATE_MAX_LEN: f64 = 10_000.0;

// `uses_index` follows each page's remarks: StartsWith ("precise index scan"), StringEquals
// ("index seek"), Left/Right/Substring/RegexMatch ("benefits from a range index"), EndsWith
// ("full index scan"). CONTAINS's page says "full scan" while troubleshoot-query-performance.md
// lists Contains among the index-served functions; the CONTAINS_ALL/ANY pages use the same
// wording and are defined as ORs/ANDs of CONTAINS, so they are marked like it.
pub const FUNCTIONS: &[FnSpec] = &[
    scalar("CONCAT", 2, usize::MAX, false, concat),
    scalar("CONTAINS", 2, 3, true, contains),
    scalar("CONTAINS_ALL_CI", 2, usize::MAX, true, contains_all_ci),
    scalar("CONTAINS_ALL_CS", 2, usize::MAX, true, contains_all_cs),
    scalar("CONTAINS_ANY_CI", 2, usize::MAX, true, contains_any_ci),
    scalar("CONTAINS_ANY_CS", 2, usize::MAX, true, contains_any_cs),
    scalar("ENDSWITH", 2, 3, true, ends_with),
    scalar("INDEX_OF", 2, 3, false, index_of),
    scalar("LASTINDEXOF", 2, 3, false, last_index_of),
    scalar("LEFT", 2, 2, true, left),
    scalar("LENGTH", 1, 1, false, length),
    scalar("LOWER", 1, 1, false, lower),
    scalar("LTRIM", 1, 2, false, ltrim),
    scalar("REGEXMATCH", 2, 3, true, regex_match),
    scalar("REPLACE", 3, 3, false, replace),
    scalar("REPLICATE", 2, 2, false, replicate),
    scalar("REVERSE", 1, 1, false, reverse),
    scalar("RIGHT", 2, 2, true, right),
    scalar("RTRIM", 1, 2, false, rtrim),
    scalar("STARTSWITH", 2, 3, true, starts_with),
    scalar("STRINGEQUALS", 2, 3, true, string_equals),
    scalar("STRINGJOIN", 2, 2, false, string_join),
    scalar("STRINGSPLIT", 2, 2, false, string_split),
    scalar("SUBSTRING", 3, 3, true, substring),
    scalar("TOSTRING", 1, 1, false, to_string),
    scalar("TRIM", 1, 2, false, trim),
    scalar("UPPER", 1, 1, false, upper),
];

// ---------------------------------------------------------------------------------------------
// Argument helpers

/// Argument `i`, or undefined if the call has fewer arguments. The planner checks arity
/// against the spec, so this only keeps a direct misuse of `eval` from panicking.
fn arg(args: &[Val], i: usize) -> &Val {
    static UNDEFINED: Val = Val::Undefined;
    args.get(i).unwrap_or(&UNDEFINED)
}

fn str_arg(args: &[Val], i: usize) -> Option<&str> {
    arg(args, i).as_str()
}

/// The optional ignore-case flag: absent means false; present but not a boolean means the
/// call is mistyped (undefined).
fn ignore_case_arg(args: &[Val], i: usize) -> Option<bool> {
    match args.get(i) {
        None => Some(false),
        Some(v) => v.as_bool(),
    }
}

/// A count or position. Fractions are truncated toward zero (the pages are silent; this is
/// what a C-style conversion does); NaN and infinities are rejected.
fn int_arg(args: &[Val], i: usize) -> Option<i64> {
    let n = args.get(i)?.as_f64()?;
    n.is_finite().then_some(n.trunc() as i64)
}

fn bool_val(b: Option<bool>) -> Val {
    b.map_or(Val::Undefined, Val::Bool)
}

fn str_val(s: Option<String>) -> Val {
    s.map_or(Val::Undefined, Val::str)
}

// ---------------------------------------------------------------------------------------------
// UTF-16 helpers. ASCII strings (the common case) are handled on bytes, where byte offsets and
// UTF-16 offsets coincide.

/// Number of UTF-16 code units in `s`.
fn len16(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.encode_utf16().count()
    }
}

/// `s[start..end]` in UTF-16 code units (bounds already clamped by the caller).
fn slice16(s: &str, start: usize, end: usize) -> String {
    if end <= start {
        return String::new();
    }
    if s.is_ascii() {
        return s[start..end].to_string();
    }
    let units: Vec<u16> = s.encode_utf16().collect();
    String::from_utf16_lossy(&units[start..end.min(units.len())])
}

fn find_from<T: PartialEq>(hay: &[T], needle: &[T], from: usize) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    if needle.is_empty() {
        return Some(from);
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Last match lying entirely within `hay[..end]`.
fn rfind_before<T: PartialEq>(hay: &[T], needle: &[T], end: usize) -> Option<usize> {
    let end = end.min(hay.len());
    if needle.len() > end {
        return None;
    }
    if needle.is_empty() {
        return Some(end);
    }
    hay[..end].windows(needle.len()).rposition(|w| w == needle)
}

/// Runs `f` on both strings as code units: bytes when both are ASCII, else UTF-16.
fn with_units<R>(a: &str, b: &str, f: impl Fn(&dyn UnitPair) -> R) -> R {
    if a.is_ascii() && b.is_ascii() {
        f(&(a.as_bytes(), b.as_bytes()))
    } else {
        let x: Vec<u16> = a.encode_utf16().collect();
        let y: Vec<u16> = b.encode_utf16().collect();
        f(&(x.as_slice(), y.as_slice()))
    }
}

/// A haystack/needle pair over one unit type, searched without caring which.
trait UnitPair {
    fn hay_len(&self) -> usize;
    fn find_from(&self, from: usize) -> Option<usize>;
    fn rfind_before(&self, end: usize) -> Option<usize>;
}

impl<T: PartialEq> UnitPair for (&[T], &[T]) {
    fn hay_len(&self) -> usize {
        self.0.len()
    }
    fn find_from(&self, from: usize) -> Option<usize> {
        find_from(self.0, self.1, from)
    }
    fn rfind_before(&self, end: usize) -> Option<usize> {
        rfind_before(self.0, self.1, end)
    }
}

// ---------------------------------------------------------------------------------------------
// Case mapping

/// Invariant-culture style simple case mapping: a character whose full mapping is more than
/// one character (`ß`, `İ`, ligatures) is left as it is, as .NET's invariant casing does.
fn map_case(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            let mut mapped: Box<dyn Iterator<Item = char>> = if upper {
                Box::new(c.to_uppercase())
            } else {
                Box::new(c.to_lowercase())
            };
            match (mapped.next(), mapped.next()) {
                (Some(m), None) => m,
                _ => c,
            }
        })
        .collect()
}

fn fold(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        map_case(s, false)
    }
}

/// Runs a comparison on the two strings, case-folded first when `ignore_case`.
fn compare(a: &str, b: &str, ignore_case: bool, f: impl Fn(&str, &str) -> bool) -> bool {
    if ignore_case {
        f(&fold(a), &fold(b))
    } else {
        f(a, b)
    }
}

// ---------------------------------------------------------------------------------------------
// CONCAT, CONTAINS*, STARTSWITH, ENDSWITH, STRINGEQUALS

/// CONCAT(str1, str2 [, strN...]): every argument must be a string.
fn concat(args: &[Val], _: &FnContext) -> Val {
    let mut out = String::new();
    for a in args {
        match a.as_str() {
            Some(s) => out.push_str(s),
            None => return Val::Undefined,
        }
    }
    Val::str(out)
}

/// The three-valued CONTAINS(haystack, needle, ignore_case) used by the CONTAINS_* family.
fn contains_opt(hay: &Val, needle: &Val, ignore_case: bool) -> Option<bool> {
    let (h, n) = (hay.as_str()?, needle.as_str()?);
    Some(compare(h, n, ignore_case, |h, n| h.contains(n)))
}

/// CONTAINS(str1, str2 [, ignore_case]).
fn contains(args: &[Val], _: &FnContext) -> Val {
    let ci = match ignore_case_arg(args, 2) {
        Some(ci) => ci,
        None => return Val::Undefined,
    };
    bool_val(contains_opt(arg(args, 0), arg(args, 1), ci))
}

/// CONTAINS_ALL_*: the pages define it as `CONTAINS(s, e1) AND ... AND CONTAINS(s, eN)`, so an
/// undefined term makes the result undefined unless another term is false (the AND truth
/// table: "case4" with an undefined term and only matches is undefined, "case5" with an
/// undefined term and a miss is false).
fn contains_all(args: &[Val], ignore_case: bool) -> Val {
    let mut unknown = false;
    for needle in args.get(1..).unwrap_or_default() {
        match contains_opt(arg(args, 0), needle, ignore_case) {
            Some(false) => return Val::Bool(false),
            Some(true) => {}
            None => unknown = true,
        }
    }
    if unknown {
        Val::Undefined
    } else {
        Val::Bool(true)
    }
}

/// CONTAINS_ANY_*: `CONTAINS(s, e1) OR ... OR CONTAINS(s, eN)` with the OR truth table: a match
/// wins over undefined terms; with no match, any undefined term makes the result undefined.
/// (The newest CONTAINS_ANY_CI page adds that "undefined values are skipped" and that no match
/// gives undefined; its example, and the stated OR equivalence, only require the former when
/// an undefined term is present, so a plain miss stays `false`.)
fn contains_any(args: &[Val], ignore_case: bool) -> Val {
    let mut unknown = false;
    for needle in args.get(1..).unwrap_or_default() {
        match contains_opt(arg(args, 0), needle, ignore_case) {
            Some(true) => return Val::Bool(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    if unknown {
        Val::Undefined
    } else {
        Val::Bool(false)
    }
}

fn contains_all_ci(args: &[Val], _: &FnContext) -> Val {
    contains_all(args, true)
}

fn contains_all_cs(args: &[Val], _: &FnContext) -> Val {
    contains_all(args, false)
}

fn contains_any_ci(args: &[Val], _: &FnContext) -> Val {
    contains_any(args, true)
}

fn contains_any_cs(args: &[Val], _: &FnContext) -> Val {
    contains_any(args, false)
}

/// Shared shape of STARTSWITH, ENDSWITH and STRINGEQUALS: two strings and an optional
/// ignore-case flag.
fn string_predicate(args: &[Val], f: fn(&str, &str) -> bool) -> Val {
    let (Some(a), Some(b), Some(ci)) =
        (str_arg(args, 0), str_arg(args, 1), ignore_case_arg(args, 2))
    else {
        return Val::Undefined;
    };
    Val::Bool(compare(a, b, ci, f))
}

/// STARTSWITH(str1, str2 [, ignore_case]).
fn starts_with(args: &[Val], _: &FnContext) -> Val {
    string_predicate(args, |a, b| a.starts_with(b))
}

/// ENDSWITH(str1, str2 [, ignore_case]).
fn ends_with(args: &[Val], _: &FnContext) -> Val {
    string_predicate(args, |a, b| a.ends_with(b))
}

/// STRINGEQUALS(str1, str2 [, ignore_case]).
fn string_equals(args: &[Val], _: &FnContext) -> Val {
    string_predicate(args, |a, b| a == b)
}

// ---------------------------------------------------------------------------------------------
// INDEX_OF, LASTINDEXOF

/// INDEX_OF(str, substr [, start]): first UTF-16 position at or after `start`, or -1.
/// The page is silent on out-of-range starts: a negative start searches from 0 and a start
/// past the end finds nothing (-1); an empty substring is found at the start position.
fn index_of(args: &[Val], _: &FnContext) -> Val {
    let (Some(hay), Some(needle)) = (str_arg(args, 0), str_arg(args, 1)) else {
        return Val::Undefined;
    };
    let start = match args.get(2) {
        None => 0,
        Some(_) => match int_arg(args, 2) {
            Some(n) => n.max(0),
            None => return Val::Undefined,
        },
    };
    let found = with_units(hay, needle, |p| {
        usize::try_from(start)
            .ok()
            .and_then(|from| p.find_from(from))
    });
    Val::Num(found.map_or(-1.0, |i| i as f64))
}

/// LASTINDEXOF(str, substr [, start]): last UTF-16 position of `substr`, or -1. With `start`
/// the search runs from that position toward the beginning, and (as the page's examples show:
/// `LASTINDEXOF("abcdeabc", "abc", 6)` is 0, with 7 it is 5) the match must end at or before
/// `start`. Silent cases: a start past the end searches the whole string; a negative start
/// finds nothing.
fn last_index_of(args: &[Val], _: &FnContext) -> Val {
    let (Some(hay), Some(needle)) = (str_arg(args, 0), str_arg(args, 1)) else {
        return Val::Undefined;
    };
    let start = match args.get(2) {
        None => None,
        Some(_) => match int_arg(args, 2) {
            Some(n) => Some(n),
            None => return Val::Undefined,
        },
    };
    let found = with_units(hay, needle, |p| {
        let end = match start {
            None => p.hay_len(),
            Some(s) if s < 0 => return None,
            Some(s) => usize::try_from(s).map_or(p.hay_len(), |s| s.saturating_add(1)),
        };
        p.rfind_before(end)
    });
    Val::Num(found.map_or(-1.0, |i| i as f64))
}

// ---------------------------------------------------------------------------------------------
// LEFT, RIGHT, SUBSTRING, LENGTH, REVERSE, REPLICATE, REPLACE

/// LEFT(str, n): the first `n` UTF-16 units; `n <= 0` gives "" and `n` past the end the whole
/// string (left.md examples).
fn left(args: &[Val], _: &FnContext) -> Val {
    let (Some(s), Some(n)) = (str_arg(args, 0), int_arg(args, 1)) else {
        return Val::Undefined;
    };
    let len = len16(s);
    let n = usize::try_from(n.max(0)).unwrap_or(usize::MAX).min(len);
    Val::str(slice16(s, 0, n))
}

/// RIGHT(str, n): the last `n` UTF-16 units, clamped like LEFT.
fn right(args: &[Val], _: &FnContext) -> Val {
    let (Some(s), Some(n)) = (str_arg(args, 0), int_arg(args, 1)) else {
        return Val::Undefined;
    };
    let len = len16(s);
    let n = usize::try_from(n.max(0)).unwrap_or(usize::MAX).min(len);
    Val::str(slice16(s, len - n, len))
}

/// SUBSTRING(str, start, length): zero-based start; a length of 0 or less gives "" (page
/// remarks). Silent cases: a negative start is clamped to 0 and a start past the end gives "".
fn substring(args: &[Val], _: &FnContext) -> Val {
    let (Some(s), Some(start), Some(count)) =
        (str_arg(args, 0), int_arg(args, 1), int_arg(args, 2))
    else {
        return Val::Undefined;
    };
    if count <= 0 {
        return Val::str("");
    }
    let len = len16(s);
    let start = usize::try_from(start.max(0)).unwrap_or(usize::MAX).min(len);
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    Val::str(slice16(s, start, start.saturating_add(count).min(len)))
}

/// LENGTH(str): the number of UTF-16 code units.
fn length(args: &[Val], _: &FnContext) -> Val {
    match str_arg(args, 0) {
        Some(s) => Val::Num(len16(s) as f64),
        None => Val::Undefined,
    }
}

/// REVERSE(str). Reverses by code point, not by UTF-16 unit, so a surrogate pair stays
/// intact: reversing the units would produce an invalid string (the page has only ASCII).
fn reverse(args: &[Val], _: &FnContext) -> Val {
    str_val(str_arg(args, 0).map(|s| s.chars().rev().collect()))
}

/// REPLICATE(str, n): `n` copies. Negative or non-finite `n` gives undefined, as does a result
/// longer than 10,000 characters (replicate.md); a fractional `n` is truncated.
fn replicate(args: &[Val], _: &FnContext) -> Val {
    let (Some(s), Some(n)) = (str_arg(args, 0), args.get(1).and_then(Val::as_f64)) else {
        return Val::Undefined;
    };
    if !n.is_finite() || n < 0.0 {
        return Val::Undefined;
    }
    let n = n.trunc();
    if len16(s) as f64 * n > REPLICATE_MAX_LEN {
        return Val::Undefined;
    }
    // The product check bounds `n` whenever `s` is non-empty; an empty `s` repeats to "".
    if s.is_empty() {
        return Val::str("");
    }
    Val::str(s.repeat(n as usize))
}

/// REPLACE(str, find, replacement): every non-overlapping occurrence, left to right. An empty
/// `find` has nothing to replace and returns `str` unchanged (the page is silent; .NET throws).
fn replace(args: &[Val], _: &FnContext) -> Val {
    let (Some(s), Some(find), Some(with)) = (str_arg(args, 0), str_arg(args, 1), str_arg(args, 2))
    else {
        return Val::Undefined;
    };
    if find.is_empty() {
        return Val::str(s);
    }
    Val::str(s.replace(find, with))
}

// ---------------------------------------------------------------------------------------------
// LOWER, UPPER, trimming

fn lower(args: &[Val], _: &FnContext) -> Val {
    str_val(str_arg(args, 0).map(fold))
}

fn upper(args: &[Val], _: &FnContext) -> Val {
    str_val(str_arg(args, 0).map(|s| {
        if s.is_ascii() {
            s.to_ascii_uppercase()
        } else {
            map_case(s, true)
        }
    }))
}

#[derive(Clone, Copy)]
enum Ends {
    Start,
    End,
    Both,
}

/// Trims whitespace, or with a second argument every character of that string. The examples
/// show the second argument is a set of characters, not a substring:
/// `TRIM("-_-AdventureWorks-_-", "-_")` is "AdventureWorks" and
/// `LTRIM("AdventureWorks", "Adventure")` is "Works". An empty set trims nothing (the page's
/// `trimEmptyString` example returns the input).
fn trim_with(args: &[Val], ends: Ends) -> Val {
    let Some(s) = str_arg(args, 0) else {
        return Val::Undefined;
    };
    let out = match args.get(1) {
        None => match ends {
            Ends::Start => s.trim_start(),
            Ends::End => s.trim_end(),
            Ends::Both => s.trim(),
        },
        Some(Val::Str(set)) => {
            let strip = |c: char| set.contains(c);
            match ends {
                Ends::Start => s.trim_start_matches(strip),
                Ends::End => s.trim_end_matches(strip),
                Ends::Both => s.trim_matches(strip),
            }
        }
        Some(_) => return Val::Undefined,
    };
    Val::str(out)
}

fn ltrim(args: &[Val], _: &FnContext) -> Val {
    trim_with(args, Ends::Start)
}

fn rtrim(args: &[Val], _: &FnContext) -> Val {
    trim_with(args, Ends::End)
}

fn trim(args: &[Val], _: &FnContext) -> Val {
    trim_with(args, Ends::Both)
}

// ---------------------------------------------------------------------------------------------
// STRINGJOIN, STRINGSPLIT

/// STRINGJOIN(array, separator): every element must be a string.
fn string_join(args: &[Val], _: &FnContext) -> Val {
    let (Some(items), Some(sep)) = (arg(args, 0).as_array(), str_arg(args, 1)) else {
        return Val::Undefined;
    };
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        match item.as_str() {
            Some(s) => parts.push(s),
            None => return Val::Undefined,
        }
    }
    Val::str(parts.join(sep))
}

/// STRINGSPLIT(str, delimiter): empty pieces are kept; an empty delimiter gives the whole
/// string as the only element (`StringSplit("Helmet", "")` is `["Helmet"]`,
/// `StringSplit("", "")` is `[""]`).
fn string_split(args: &[Val], _: &FnContext) -> Val {
    let (Some(s), Some(delim)) = (str_arg(args, 0), str_arg(args, 1)) else {
        return Val::Undefined;
    };
    if delim.is_empty() {
        return Val::arr(vec![Val::str(s)]);
    }
    Val::arr(s.split(delim).map(Val::str).collect())
}

// ---------------------------------------------------------------------------------------------
// TOSTRING

/// TOSTRING(expr): strings as they are, everything else as compact JSON text. Numbers print in
/// the shortest form that reads back to the same double, integral values without a fraction
/// (`125` → "125", `0.1234` → "0.1234"); NaN and the infinities, which JSON cannot hold, print
/// as "NaN", "Infinity" and "-Infinity" (tostring.md examples).
fn to_string(args: &[Val], _: &FnContext) -> Val {
    match arg(args, 0) {
        Val::Undefined => Val::Undefined,
        Val::Str(s) => Val::Str(s.clone()),
        v => {
            let mut out = String::new();
            write_json(v, &mut out);
            Val::str(out)
        }
    }
}

/// The text TOSTRING gives a number. The docs only show small values; beyond them we use
/// JavaScript's `Number.prototype.toString` layout (plain digits for exponents -7 < e < 21,
/// else `1.5e+300`), which agrees with the service's JSON output on every documented value.
pub fn format_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if n == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.234e-1", "1e21".
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    // JavaScript's `n`: the decimal point sits after the first `point` digits.
    let point = exp + 1;
    let mut out = String::new();
    if n < 0.0 {
        out.push('-');
    }
    if k <= point && point <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (point - k) as usize));
    } else if 0 < point && point <= 21 {
        let (int, frac) = digits.split_at(point as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if exp >= 0 { '+' } else { '-' });
        out.push_str(&exp.abs().to_string());
    }
    out
}

/// Compact JSON text of a value; undefined members and elements are dropped as in results.
/// Non-finite numbers inside arrays/objects have no JSON form and are dropped the same way
/// (`Val::to_json` does likewise).
fn write_json(v: &Val, out: &mut String) {
    match v {
        Val::Undefined => {}
        Val::Null => out.push_str("null"),
        Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Val::Num(n) => out.push_str(&format_number(*n)),
        Val::Str(s) => push_json_string(s, out),
        Val::Arr(items) => {
            out.push('[');
            let mut first = true;
            for item in items.iter().filter(|i| has_json_form(i)) {
                if !first {
                    out.push(',');
                }
                first = false;
                write_json(item, out);
            }
            out.push(']');
        }
        Val::Obj(members) => {
            out.push('{');
            let mut first = true;
            for (k, item) in members.iter().filter(|(_, i)| has_json_form(i)) {
                if !first {
                    out.push(',');
                }
                first = false;
                push_json_string(k, out);
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
    }
}

fn has_json_form(v: &Val) -> bool {
    match v {
        Val::Undefined => false,
        Val::Num(n) => number_json(*n).is_some(),
        _ => true,
    }
}

fn push_json_string(s: &str, out: &mut String) {
    // Serializing a &str cannot fail; the fallback only keeps this panic-free.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
    }
}

// ---------------------------------------------------------------------------------------------
// REGEXMATCH

/// Flags parsed from REGEXMATCH's modifier string.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Modifiers {
    multi_line: bool,
    dot_all: bool,
    ignore_case: bool,
    extended: bool,
}

impl Modifiers {
    /// The four documented modifiers `m`, `s`, `i`, `x`; any other character makes the call
    /// invalid (undefined). An empty string is the same as none.
    fn parse(s: &str) -> Option<Modifiers> {
        let mut m = Modifiers::default();
        for c in s.chars() {
            match c {
                'm' => m.multi_line = true,
                's' => m.dot_all = true,
                'i' => m.ignore_case = true,
                'x' => m.extended = true,
                _ => return None,
            }
        }
        Some(m)
    }
}

/// Compiled patterns per thread: a WHERE clause calls REGEXMATCH with the same pattern for
/// every item, and compiling is far costlier than matching.
const REGEX_CACHE_CAP: usize = 256;

thread_local! {
    static REGEX_CACHE: RefCell<HashMap<(String, Modifiers), Option<Regex>>> =
        RefCell::new(HashMap::new());
}

/// The service uses PCRE. `fancy_regex` covers what PCRE adds to the `regex` crate's syntax
/// (backreferences, lookaround, atomic groups, possessive quantifiers, `\K`) and hands
/// patterns without them to `regex`, so plain patterns match at its speed. Differences left:
/// `\d`/`\w` are Unicode-aware and `$` without `m` matches only at the very end.
fn compile(pattern: &str, m: Modifiers) -> Option<Regex> {
    REGEX_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let key = (pattern.to_string(), m);
        if let Some(re) = cache.get(&key) {
            return re.clone();
        }
        let flags: String = [
            (m.multi_line, 'm'),
            (m.dot_all, 's'),
            (m.ignore_case, 'i'),
            (m.extended, 'x'),
        ]
        .iter()
        .filter_map(|&(on, c)| on.then_some(c))
        .collect();
        let full = if flags.is_empty() {
            pattern.to_string()
        } else {
            format!("(?{flags}){pattern}")
        };
        let re = Regex::new(&full).ok();
        if cache.len() >= REGEX_CACHE_CAP {
            cache.clear();
        }
        cache.insert(key, re.clone());
        re
    })
}

/// REGEXMATCH(str, pattern [, modifiers]): whether the pattern matches anywhere in `str`.
/// Undefined when any argument is not a string, the pattern is invalid or a modifier unknown.
fn regex_match(args: &[Val], _: &FnContext) -> Val {
    let (Some(s), Some(pattern)) = (str_arg(args, 0), str_arg(args, 1)) else {
        return Val::Undefined;
    };
    let modifiers = match args.get(2) {
        None => Some(Modifiers::default()),
        Some(v) => v.as_str().and_then(Modifiers::parse),
    };
    let Some(m) = modifiers else {
        return Val::Undefined;
    };
    // A match that backtracks past fancy_regex's limit (a pathological pattern) is
    // undefined, like an invalid pattern, rather than a guess.
    match compile(pattern, m).map(|re| re.is_match(s)) {
        Some(Ok(found)) => Val::Bool(found),
        _ => Val::Undefined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const CTX: FnContext = FnContext {
        clock: None,
        now_ticks: 0,
        seed: 0,
    };

    fn v(j: Value) -> Val {
        Val::from_json(&j)
    }

    fn call(name: &str, args: &[Val]) -> Val {
        super::super::call_in(FUNCTIONS, name, args)
    }

    /// Calls `name` with JSON arguments and compares the JSON result (`None` = undefined).
    fn check(name: &str, args: Value, expected: Option<Value>) {
        let args: Vec<Val> = match args {
            Value::Array(a) => a.iter().map(Val::from_json).collect(),
            other => panic!("arguments must be an array, got {other}"),
        };
        let got = call(name, &args);
        assert_eq!(got.to_json(), expected, "{name}({args:?})");
    }

    fn s(x: &str) -> Val {
        Val::str(x)
    }

    #[test]
    fn concat_docs_examples() {
        check(
            "CONCAT",
            json!(["adventure", "works"]),
            Some(json!("adventureworks")),
        );
        // concat-fields: CONCAT(p.slug, "-", p.category, "-", p.model)
        check(
            "CONCAT",
            json!(["duonovi-pro-coat", "-", "heavy-coats", "-", "8061"]),
            Some(json!("duonovi-pro-coat-heavy-coats-8061")),
        );
    }

    #[test]
    fn concat_rejects_non_strings() {
        check("CONCAT", json!(["a", 1]), None);
        check("CONCAT", json!(["a", null]), None);
        assert_eq!(call("CONCAT", &[s("a"), Val::Undefined]), Val::Undefined);
    }

    #[test]
    fn contains_docs_examples() {
        let a = "AdventureWorks";
        check("CONTAINS", json!([a, "Adventure"]), Some(json!(true)));
        check("CONTAINS", json!([a, "Works"]), Some(json!(true)));
        check("CONTAINS", json!([a, "adventure"]), Some(json!(false)));
        check(
            "CONTAINS",
            json!([a, "adventure", false]),
            Some(json!(false)),
        );
        check("CONTAINS", json!([a, "works", true]), Some(json!(true)));
        check("CONTAINS", json!([a, "Contoso"]), Some(json!(false)));
    }

    #[test]
    fn contains_mistyped_arguments_are_undefined() {
        check("CONTAINS", json!([1, "1"]), None);
        check("CONTAINS", json!(["abc", "a", "yes"]), None);
        assert_eq!(call("CONTAINS", &[Val::Undefined, s("a")]), Val::Undefined);
    }

    const DAY: &str = "Have a nice day!";

    fn contains_family(name: &str, expected: [Option<bool>; 5]) {
        let cases: [Vec<Val>; 5] = [
            vec![s(DAY), s("have"), s("nice"), s("day!")],
            vec![s(DAY), s("HAVE"), s("NICE"), s("DAY!")],
            vec![s(DAY), s("had"), s("nice"), s("day!")],
            vec![s(DAY), Val::Undefined, s("nice"), s("day!")],
            vec![s(DAY), Val::Undefined, s("had")],
        ];
        for (i, (args, want)) in cases.iter().zip(expected).enumerate() {
            let want = want.map_or(Val::Undefined, Val::Bool);
            assert_eq!(call(name, args), want, "{name} case{}", i + 1);
        }
    }

    #[test]
    fn contains_all_any_docs_examples() {
        let (t, f, u) = (Some(true), Some(false), None);
        contains_family("CONTAINS_ALL_CI", [t, t, f, u, f]);
        contains_family("CONTAINS_ALL_CS", [f, f, f, u, f]);
        contains_family("CONTAINS_ANY_CI", [t, t, t, t, u]);
        contains_family("CONTAINS_ANY_CS", [t, f, t, t, u]);
    }

    #[test]
    fn contains_all_any_edge_cases() {
        assert_eq!(
            call("CONTAINS_ANY_CS", &[s("abc"), s("x"), s("y")]),
            Val::Bool(false)
        );
        assert_eq!(
            call("CONTAINS_ALL_CS", &[s("abc"), s("a"), s("c")]),
            Val::Bool(true)
        );
        assert_eq!(
            call("CONTAINS_ALL_CS", &[Val::Num(1.0), s("a")]),
            Val::Undefined
        );
        assert_eq!(
            call("CONTAINS_ANY_CI", &[Val::Null, s("a")]),
            Val::Undefined
        );
    }

    #[test]
    fn endswith_docs_examples() {
        let a = "AdventureWorks";
        check("ENDSWITH", json!([a, "Adventure"]), Some(json!(false)));
        check("ENDSWITH", json!([a, "Works"]), Some(json!(true)));
        check("ENDSWITH", json!([a, "works"]), Some(json!(false)));
        check("ENDSWITH", json!([a, "works", true]), Some(json!(true)));
    }

    #[test]
    fn startswith_docs_examples() {
        let a = "AdventureWorks";
        check("STARTSWITH", json!([a, "Works"]), Some(json!(false)));
        check("STARTSWITH", json!([a, "Adventure"]), Some(json!(true)));
        check("STARTSWITH", json!([a, "adventure"]), Some(json!(false)));
        check(
            "STARTSWITH",
            json!([a, "adventure", true]),
            Some(json!(true)),
        );
        check("STARTSWITH", json!([a, 1]), None);
        check("STARTSWITH", json!([a, "A", null]), None);
    }

    #[test]
    fn stringequals_docs_examples() {
        let a = "AdventureWorks";
        check("STRINGEQUALS", json!([a, a]), Some(json!(true)));
        check(
            "STRINGEQUALS",
            json!([a, "adventureworks"]),
            Some(json!(false)),
        );
        check(
            "STRINGEQUALS",
            json!([a, "adventureworks", true]),
            Some(json!(true)),
        );
        check("STRINGEQUALS", json!([1, 1]), None);
    }

    #[test]
    fn index_of_docs_examples() {
        let a = "AdventureWorks";
        check("INDEX_OF", json!([a, "A"]), Some(json!(0)));
        check("INDEX_OF", json!([a, "s"]), Some(json!(13)));
        check("INDEX_OF", json!([a, "Adventure"]), Some(json!(0)));
        check("INDEX_OF", json!([a, "Works"]), Some(json!(9)));
        check("INDEX_OF", json!([a, "tureW"]), Some(json!(5)));
        check("INDEX_OF", json!([a, "Cosmos"]), Some(json!(-1)));
        check("INDEX_OF", json!([a, "Works", 5]), Some(json!(9)));
        check("INDEX_OF", json!([a, "Adventure", 5]), Some(json!(-1)));
        check("INDEX_OF", json!([a, "aD"]), Some(json!(-1)));
    }

    #[test]
    fn index_of_edge_cases() {
        check("INDEX_OF", json!(["abc", "c", 99]), Some(json!(-1)));
        check("INDEX_OF", json!(["abc", "a", -5]), Some(json!(0)));
        check("INDEX_OF", json!(["abc", "", 1]), Some(json!(1)));
        check("INDEX_OF", json!(["abc", "a", "0"]), None);
        // UTF-16 positions: the emoji is two code units.
        check("INDEX_OF", json!(["😀é-x", "x"]), Some(json!(4)));
        check("INDEX_OF", json!(["😀é-x", "é"]), Some(json!(2)));
    }

    #[test]
    fn lastindexof_docs_examples() {
        check("LASTINDEXOF", json!(["abcdeabc", "abc"]), Some(json!(5)));
        check("LASTINDEXOF", json!(["abcdeabc", "abc", 6]), Some(json!(0)));
        check("LASTINDEXOF", json!(["abcdeabc", "abc", 7]), Some(json!(5)));
        check("LASTINDEXOF", json!(["abcdeabc", "fg"]), Some(json!(-1)));
    }

    #[test]
    fn lastindexof_edge_cases() {
        check("LASTINDEXOF", json!(["abcabc", "abc", 100]), Some(json!(3)));
        check("LASTINDEXOF", json!(["abcabc", "abc", -1]), Some(json!(-1)));
        check("LASTINDEXOF", json!(["abcabc", "abc", 2]), Some(json!(0)));
        check("LASTINDEXOF", json!(["ab😀ab", "ab"]), Some(json!(4)));
        check("LASTINDEXOF", json!([null, "ab"]), None);
    }

    #[test]
    fn left_docs_examples() {
        let a = "AdventureWorks";
        check("LEFT", json!([a, 0]), Some(json!("")));
        check("LEFT", json!([a, 1]), Some(json!("A")));
        check("LEFT", json!([a, 5]), Some(json!("Adven")));
        check("LEFT", json!([a, 14]), Some(json!(a)));
        check("LEFT", json!([a, 100]), Some(json!(a)));
        check("LEFT", json!([a, -3]), Some(json!("")));
        check("LEFT", json!([a, "1"]), None);
    }

    #[test]
    fn right_docs_examples() {
        let a = "AdventureWorks";
        check("RIGHT", json!([a, 0]), Some(json!("")));
        check("RIGHT", json!([a, 1]), Some(json!("s")));
        check("RIGHT", json!([a, 5]), Some(json!("Works")));
        check("RIGHT", json!([a, 14]), Some(json!(a)));
        check("RIGHT", json!([a, 100]), Some(json!(a)));
        check("RIGHT", json!([1, 1]), None);
    }

    #[test]
    fn length_docs_examples() {
        check("LENGTH", json!(["AdventureWorks"]), Some(json!(14)));
        check("LENGTH", json!([""]), Some(json!(0)));
        check("LENGTH", json!([null]), None);
        check("LENGTH", json!([0]), None);
        check("LENGTH", json!([["Adventure", "Works"]]), None);
        assert_eq!(call("LENGTH", &[Val::Undefined]), Val::Undefined);
    }

    #[test]
    fn length_counts_utf16_code_units() {
        check("LENGTH", json!(["é"]), Some(json!(1)));
        check("LENGTH", json!(["😀"]), Some(json!(2)));
        check("LEFT", json!(["😀ab", 2]), Some(json!("😀")));
        check("SUBSTRING", json!(["a😀b", 3, 1]), Some(json!("b")));
    }

    #[test]
    fn lower_upper_docs_examples() {
        let cases = [
            ("adventureworks", "adventureworks", "ADVENTUREWORKS"),
            ("ADVENTUREWORKS", "adventureworks", "ADVENTUREWORKS"),
            ("adventureWorks", "adventureworks", "ADVENTUREWORKS"),
            ("AdventureWorks", "adventureworks", "ADVENTUREWORKS"),
            ("ADVENTURE_WORKS", "adventure_works", "ADVENTURE_WORKS"),
        ];
        for (input, low, up) in cases {
            check("LOWER", json!([input]), Some(json!(low)));
            check("UPPER", json!([input]), Some(json!(up)));
        }
        check("LOWER", json!([1]), None);
        check("UPPER", json!([null]), None);
        assert_eq!(call("UPPER", &[Val::Undefined]), Val::Undefined);
    }

    #[test]
    fn casing_is_invariant_simple_mapping() {
        check("UPPER", json!(["straße"]), Some(json!("STRAßE")));
        check("LOWER", json!(["ÀÉÎ ΣΑΣ"]), Some(json!("àéî σασ")));
        check(
            "STRINGEQUALS",
            json!(["Éclair", "éCLAIR", true]),
            Some(json!(true)),
        );
    }

    #[test]
    fn ltrim_docs_examples() {
        let a = "AdventureWorks";
        check("LTRIM", json!(["  AdventureWorks"]), Some(json!(a)));
        check(
            "LTRIM",
            json!(["  AdventureWorks  "]),
            Some(json!("AdventureWorks  ")),
        );
        check(
            "LTRIM",
            json!(["AdventureWorks  "]),
            Some(json!("AdventureWorks  ")),
        );
        check("LTRIM", json!([a]), Some(json!(a)));
        check("LTRIM", json!([a, "Works"]), Some(json!(a)));
        check("LTRIM", json!([a, "Adventure"]), Some(json!("Works")));
        check("LTRIM", json!([a, a]), Some(json!("")));
        check("LTRIM", json!([a, ""]), Some(json!(a)));
    }

    #[test]
    fn rtrim_docs_examples() {
        let a = "AdventureWorks";
        check(
            "RTRIM",
            json!(["  AdventureWorks"]),
            Some(json!("  AdventureWorks")),
        );
        check(
            "RTRIM",
            json!(["  AdventureWorks  "]),
            Some(json!("  AdventureWorks")),
        );
        check("RTRIM", json!(["AdventureWorks  "]), Some(json!(a)));
        check("RTRIM", json!([a]), Some(json!(a)));
        check("RTRIM", json!([a, "Works"]), Some(json!("Adventure")));
        check("RTRIM", json!([a, "Adventure"]), Some(json!(a)));
        check("RTRIM", json!([a, a]), Some(json!("")));
        check("RTRIM", json!([a, ""]), Some(json!(a)));
    }

    #[test]
    fn trim_docs_examples() {
        let a = "AdventureWorks";
        check("TRIM", json!(["   AdventureWorks"]), Some(json!(a)));
        check("TRIM", json!(["AdventureWorks   "]), Some(json!(a)));
        check("TRIM", json!(["   AdventureWorks   "]), Some(json!(a)));
        check(
            "TRIM",
            json!(["---AdventureWorks---"]),
            Some(json!("---AdventureWorks---")),
        );
        check("TRIM", json!(["___AdventureWorks___", "_"]), Some(json!(a)));
        check("TRIM", json!(["---AdventureWorks---", "-"]), Some(json!(a)));
        check(
            "TRIM",
            json!(["-- AdventureWorks --", "-"]),
            Some(json!(" AdventureWorks ")),
        );
        check(
            "TRIM",
            json!(["-_-AdventureWorks-_-", "-_"]),
            Some(json!(a)),
        );
    }

    #[test]
    fn trim_mistyped_arguments_are_undefined() {
        check("TRIM", json!([1]), None);
        check("LTRIM", json!(["a", 1]), None);
        check("RTRIM", json!(["a", null]), None);
    }

    #[test]
    fn replace_docs_example() {
        check(
            "REPLACE",
            json!(["AdventureWorksLT", "LT", "LT2"]),
            Some(json!("AdventureWorksLT2")),
        );
        check("REPLACE", json!(["aaa", "a", "b"]), Some(json!("bbb")));
        check("REPLACE", json!(["abc", "", "x"]), Some(json!("abc")));
        check("REPLACE", json!(["abc", "a", 1]), None);
    }

    #[test]
    fn replicate_docs_example_and_limits() {
        check(
            "REPLICATE",
            json!(["Cosmic", 3]),
            Some(json!("CosmicCosmicCosmic")),
        );
        check("REPLICATE", json!(["a", 0]), Some(json!("")));
        check("REPLICATE", json!(["a", -1]), None);
        assert_eq!(
            call("REPLICATE", &[s("a"), Val::Num(f64::INFINITY)]),
            Val::Undefined
        );
        assert_eq!(
            call("REPLICATE", &[s("a"), Val::Num(f64::NAN)]),
            Val::Undefined
        );
        let max = call("REPLICATE", &[s("ab"), Val::Num(5000.0)]);
        assert_eq!(max.as_str().map(str::len), Some(10_000));
        check("REPLICATE", json!(["ab", 5001]), None);
        check("REPLICATE", json!(["", 1e12]), Some(json!("")));
        check("REPLICATE", json!(["ab", 2.9]), Some(json!("abab")));
    }

    #[test]
    fn reverse_docs_examples() {
        check(
            "REVERSE",
            json!(["AdventureWorks"]),
            Some(json!("skroWerutnevdA")),
        );
        check(
            "REVERSE",
            json!(["skroWerutnevdA"]),
            Some(json!("AdventureWorks")),
        );
        let once = call("REVERSE", &[s("AdventureWorks")]);
        assert_eq!(call("REVERSE", &[once]), s("AdventureWorks"));
        check("REVERSE", json!(["a😀b"]), Some(json!("b😀a")));
        check("REVERSE", json!([12]), None);
    }

    #[test]
    fn stringjoin_docs_examples() {
        let parts = json!(["Iropa", "Mountain", "Bike"]);
        check(
            "STRINGJOIN",
            json!([parts, " "]),
            Some(json!("Iropa Mountain Bike")),
        );
        check(
            "STRINGJOIN",
            json!([parts, ""]),
            Some(json!("IropaMountainBike")),
        );
        assert_eq!(
            call("STRINGJOIN", &[v(parts), Val::Undefined]),
            Val::Undefined
        );
        check(
            "STRINGJOIN",
            json!([["6", "7", "4", "3"], "A"]),
            Some(json!("6A7A4A3")),
        );
        check(
            "STRINGJOIN",
            json!([["Adventure", "LT"], "Works"]),
            Some(json!("AdventureWorksLT")),
        );
        check("STRINGJOIN", json!([["a", 1], ","]), None);
        check("STRINGJOIN", json!(["a", ","]), None);
        check("STRINGJOIN", json!([[], ","]), Some(json!("")));
    }

    #[test]
    fn stringsplit_docs_examples() {
        check(
            "STRINGSPLIT",
            json!(["Handlebar", "e"]),
            Some(json!(["Handl", "bar"])),
        );
        check(
            "STRINGSPLIT",
            json!(["CARBON_STEEL_BIKE_WHEEL", "_"]),
            Some(json!(["CARBON", "STEEL", "BIKE", "WHEEL"])),
        );
        check(
            "STRINGSPLIT",
            json!(["Road Bike", " "]),
            Some(json!(["Road", "Bike"])),
        );
        check(
            "STRINGSPLIT",
            json!(["xenmoun mountain bike", "moun"]),
            Some(json!(["xen", " ", "tain bike"])),
        );
        assert_eq!(
            call("STRINGSPLIT", &[s("AluminumBikeFrame"), Val::Undefined]),
            Val::Undefined
        );
        check(
            "STRINGSPLIT",
            json!(["Helmet", ""]),
            Some(json!(["Helmet"])),
        );
        check("STRINGSPLIT", json!(["", ""]), Some(json!([""])));
        check(
            "STRINGSPLIT",
            json!(["a,,b", ","]),
            Some(json!(["a", "", "b"])),
        );
    }

    #[test]
    fn substring_docs_examples() {
        let a = "AdventureWorks";
        check("SUBSTRING", json!([a, 0, 9]), Some(json!("Adventure")));
        check("SUBSTRING", json!([a, 9, 5]), Some(json!("Works")));
        check("SUBSTRING", json!([a, 0, 14]), Some(json!(a)));
        check("SUBSTRING", json!([a, 0, -1]), Some(json!("")));
    }

    #[test]
    fn substring_edge_cases() {
        check("SUBSTRING", json!(["abc", 1, 100]), Some(json!("bc")));
        check("SUBSTRING", json!(["abc", 5, 1]), Some(json!("")));
        check("SUBSTRING", json!(["abc", -1, 2]), Some(json!("ab")));
        check("SUBSTRING", json!(["abc", 1.7, 1]), Some(json!("b")));
        check("SUBSTRING", json!(["abc", "1", 1]), None);
        check("SUBSTRING", json!([null, 0, 1]), None);
    }

    #[test]
    fn tostring_docs_examples() {
        check("TOSTRING", json!([125]), Some(json!("125")));
        check("TOSTRING", json!([0.1234]), Some(json!("0.1234")));
        check("TOSTRING", json!([false]), Some(json!("false")));
        check("TOSTRING", json!([[1, 2, 3]]), Some(json!("[1,2,3]")));
        check(
            "TOSTRING",
            json!([{"department": "Bicycles"}]),
            Some(json!("{\"department\":\"Bicycles\"}")),
        );
        check(
            "TOSTRING",
            json!(["Hello World"]),
            Some(json!("Hello World")),
        );
        assert_eq!(call("TOSTRING", &[Val::Undefined]), Val::Undefined);
        assert_eq!(call("TOSTRING", &[Val::Num(f64::NAN)]), s("NaN"));
        assert_eq!(call("TOSTRING", &[Val::Num(f64::INFINITY)]), s("Infinity"));
    }

    #[test]
    fn tostring_formats_numbers_and_nested_values() {
        assert_eq!(
            call("TOSTRING", &[Val::Num(f64::NEG_INFINITY)]),
            s("-Infinity")
        );
        check("TOSTRING", json!([null]), Some(json!("null")));
        check("TOSTRING", json!([-2.5]), Some(json!("-2.5")));
        check("TOSTRING", json!([1e21]), Some(json!("1e+21")));
        check(
            "TOSTRING",
            json!([1e20]),
            Some(json!("100000000000000000000")),
        );
        check("TOSTRING", json!([1.5e-7]), Some(json!("1.5e-7")));
        check("TOSTRING", json!([0.000001]), Some(json!("0.000001")));
        check("TOSTRING", json!([123.456]), Some(json!("123.456")));
        check(
            "TOSTRING",
            json!([{"a": [1.5, "x\"y"], "b": {}}]),
            Some(json!("{\"a\":[1.5,\"x\\\"y\"],\"b\":{}}")),
        );
        let with_undefined = Val::obj(vec![
            ("a".into(), Val::Undefined),
            ("b".into(), Val::arr(vec![Val::Undefined, Val::Num(2.0)])),
        ]);
        assert_eq!(call("TOSTRING", &[with_undefined]), s("{\"b\":[2]}"));
    }

    #[test]
    fn format_number_layouts() {
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(-125.0), "-125");
        assert_eq!(format_number(1.79769e308), "1.79769e+308");
        assert_eq!(format_number(5e-324), "5e-324");
        assert_eq!(format_number(9007199254740993.0), "9007199254740992");
    }

    #[test]
    fn regexmatch_docs_examples() {
        check("REGEXMATCH", json!(["abcd", "ABC"]), Some(json!(false)));
        check("REGEXMATCH", json!(["abcd", "ABC", "i"]), Some(json!(true)));
        check("REGEXMATCH", json!(["abcd", "ab.", ""]), Some(json!(true)));
        check(
            "REGEXMATCH",
            json!(["abcd", "ab c", "x"]),
            Some(json!(true)),
        );
        check(
            "REGEXMATCH",
            json!(["abcd", "aB c", "ix"]),
            Some(json!(true)),
        );
        check("REGEXMATCH", json!(["03a", "[0-9]"]), Some(json!(true)));
        check(
            "REGEXMATCH",
            json!(["salt3824908", "salt{1}"]),
            Some(json!(true)),
        );
        check(
            "REGEXMATCH",
            json!(["shame", "s....", "i"]),
            Some(json!(true)),
        );
        // regexmatch-field: WHERE RegexMatch(p.name, " coat{1}")
        for (name, matches) in [
            ("Tecozow coat", true),
            ("Bladnick coat", true),
            ("Anidin heavy jacket", false),
        ] {
            check(
                "REGEXMATCH",
                json!([name, " coat{1}"]),
                Some(json!(matches)),
            );
        }
    }

    #[test]
    fn regexmatch_modifiers_and_invalid_input() {
        check("REGEXMATCH", json!(["a\nb", "^b$"]), Some(json!(false)));
        check("REGEXMATCH", json!(["a\nb", "^b$", "m"]), Some(json!(true)));
        check("REGEXMATCH", json!(["a\nb", "a.b"]), Some(json!(false)));
        check("REGEXMATCH", json!(["a\nb", "a.b", "s"]), Some(json!(true)));
        check("REGEXMATCH", json!(["abc", "a", "g"]), None);
        check("REGEXMATCH", json!(["abc", "a", "I"]), None);
        check("REGEXMATCH", json!(["abc", "(a"]), None);
        check("REGEXMATCH", json!(["abc", "a", 1]), None);
        check("REGEXMATCH", json!([1, "1"]), None);
        check("REGEXMATCH", json!(["a.c", "a\\.c"]), Some(json!(true)));
        check("REGEXMATCH", json!(["abc", "a\\.c"]), Some(json!(false)));
        // Served from the cache the second time.
        check("REGEXMATCH", json!(["abcd", "ABC", "i"]), Some(json!(true)));
    }

    #[test]
    fn regexmatch_takes_pcre_syntax() {
        // regexmatch.md: the service uses Perl compatible regular expressions (PCRE).
        for (s, pattern, found) in [
            ("foobar", "foo(?=bar)", true),
            ("foobaz", "foo(?=bar)", false),
            ("Hello", "^(?!He)", false),
            ("price: 10", "(?<=price: )\\d+", true),
            ("abab", "(ab)\\1", true),
            ("abac", "(ab)\\1", false),
            ("aab", "a*+ab", false),
            ("abc", "(?>a|ab)c", false),
            ("ff", "^\\h+$", true),
        ] {
            check("REGEXMATCH", json!([s, pattern]), Some(json!(found)));
        }
        check(
            "REGEXMATCH",
            json!(["FOOBAR", "foo(?=bar)", "i"]),
            Some(json!(true)),
        );
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
