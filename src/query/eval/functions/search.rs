//! Vector and full-text search functions: VECTORDISTANCE, FULLTEXTCONTAINS(_ALL|_ANY), and the
//! rank-only FULLTEXTSCORE and RRF, with the helpers the executor needs to order by them.
//!
//! Sources: vectordistance.md, fulltextcontains.md, fulltextcontainsall.md,
//! fulltextcontainsany.md, fulltextscore.md, rrf.md and order-by-rank.md under
//! articles/cosmos-db/nosql/query/, plus articles/cosmos-db/nosql/vector-search.md and
//! articles/cosmos-db/gen-ai/full-text-search.md, in MicrosoftDocs/azure-databases-docs.
//!
//! None of these functions uses the range index (`uses_index` is false): a vector index and a
//! full-text index are separate structures from the range index this engine's RU model
//! describes, so a filter on them costs a scan of the range here. The text analysis and BM25
//! live in `query::fulltext`.

use super::{FnContext, FnSpec, scalar};
use crate::query::eval::value::Val;
use crate::query::search::fulltext::{for_each_term_at, query_terms};
pub use crate::store::search_policy::{DistanceFunction as Distance, VectorDataType as DataType};

const VARIADIC: usize = usize::MAX;

pub const FUNCTIONS: &[FnSpec] = &[
    scalar("VECTORDISTANCE", 2, 4, false, vector_distance_fn),
    scalar("FULLTEXTCONTAINS", 2, 2, false, full_text_contains),
    scalar(
        "FULLTEXTCONTAINSALL",
        2,
        VARIADIC,
        false,
        full_text_contains_all,
    ),
    scalar(
        "FULLTEXTCONTAINSANY",
        2,
        VARIADIC,
        false,
        full_text_contains_any,
    ),
    // Rank-only: valid solely in ORDER BY RANK (and FULLTEXTSCORE inside RRF). They need the
    // whole result set — corpus statistics for BM25, every candidate's rank for RRF — so the
    // executor computes them, like aggregates; `eval` is never the real value.
    scalar("FULLTEXTSCORE", 2, VARIADIC, false, rank_placeholder),
    // `RRF(score1, score2, ... [, weights])`: "two or more" scores; the optional trailing
    // array of numbers weighs each (rrf.md, build-2025 revision).
    scalar("RRF", 2, VARIADIC, false, rank_placeholder),
];

fn rank_placeholder(_: &[Val], _: &FnContext) -> Val {
    Val::Undefined
}

// ---------------------------------------------------------------------------------------------
// VectorDistance

// The metrics and element types are the container vector policy's
// (`store::search_policy`): one definition for the policy and the function.

/// An element as the service would store it under `data_type`: float32 and float16 round to
/// the nearest value of that width (the score is that of the stored values); the integer
/// types take only integers in their range. `None` for anything else, including a number
/// beyond the type's range.
fn coerce(data_type: DataType, x: f64) -> Option<f64> {
    let v = match data_type {
        DataType::Float32 => f64::from(x as f32),
        DataType::Float16 => to_f16(x)?,
        DataType::Int8 => integer_in(x, -128.0, 127.0)?,
        DataType::Uint8 => integer_in(x, 0.0, 255.0)?,
    };
    v.is_finite().then_some(v)
}

/// `x` rounded to the nearest IEEE half-precision value (ties to even); `None` where that
/// overflows (from 65520 up, which would round past the largest finite half, 65504).
fn to_f16(x: f64) -> Option<f64> {
    const MAX: f64 = 65504.0;
    const OVERFLOW: f64 = 65520.0;
    // Below 2^-14 halves are subnormal: a fixed step of 2^-24.
    const MIN_NORMAL: f64 = 6.103_515_625e-5;
    const SUBNORMAL_STEP: f64 = 5.960_464_477_539_063e-8;
    if !x.is_finite() || x.abs() >= OVERFLOW {
        return None;
    }
    if x.abs() < MIN_NORMAL {
        return Some((x / SUBNORMAL_STEP).round_ties_even() * SUBNORMAL_STEP);
    }
    // A normal half keeps 10 of an f64's 52 fraction bits: round away the other 42.
    let bits = x.to_bits();
    let drop = 42;
    let half = 1u64 << (drop - 1);
    let rest = bits & ((1u64 << drop) - 1);
    let mut kept = bits >> drop;
    if rest > half || (rest == half && kept & 1 == 1) {
        kept += 1;
    }
    let v = f64::from_bits(kept << drop);
    (v.abs() <= MAX).then_some(v)
}

fn integer_in(x: f64, lo: f64, hi: f64) -> Option<f64> {
    (x.fract() == 0.0 && (lo..=hi).contains(&x)).then_some(x)
}

/// Bounds of `searchListSizeMultiplier` and `quantizedVectorListMultiplier` (vectordistance.md:
/// Min=1, Max=100). They tune an approximate index search, never the score.
const MULTIPLIER_RANGE: std::ops::RangeInclusive<f64> = 1.0..=100.0;

/// The options of one VectorDistance call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VectorOptions {
    pub distance: Distance,
    pub data_type: DataType,
    /// `bool_expr`: true asks for a brute-force search instead of the vector index.
    pub brute_force: bool,
    pub search_list_size_multiplier: Option<u8>,
    pub quantized_vector_list_multiplier: Option<u8>,
}

impl VectorOptions {
    /// `base` (the defaults, or a container vector policy's metric and type) with the members
    /// of an `obj_expr` applied. `None` when `options` is not an object or has an unknown
    /// member, an unknown value or a multiplier that is not an integer in 1..=100. Member names
    /// are matched ignoring case (the docs write both `dataType` and `datatype`); an undefined
    /// member counts as absent, as it would be in JSON.
    pub fn with_object(base: VectorOptions, options: &Val) -> Option<VectorOptions> {
        let mut out = base;
        for (name, value) in options.as_object()? {
            if value.is_undefined() {
                continue;
            }
            let multiplier = || {
                let n = value.as_f64()?;
                (n.fract() == 0.0 && MULTIPLIER_RANGE.contains(&n)).then_some(n as u8)
            };
            match name.to_ascii_lowercase().as_str() {
                "distancefunction" => out.distance = Distance::parse(value.as_str()?).ok()?,
                "datatype" => out.data_type = DataType::parse(value.as_str()?).ok()?,
                "searchlistsizemultiplier" => out.search_list_size_multiplier = Some(multiplier()?),
                "quantizedvectorlistmultiplier" => {
                    out.quantized_vector_list_multiplier = Some(multiplier()?)
                }
                _ => return None,
            }
        }
        Some(out)
    }

    /// The options of a VECTORDISTANCE call from its evaluated arguments (the third, if any,
    /// must be a boolean and the fourth an options object), over `base`. The executor uses it
    /// to learn a call's metric, and so its ORDER BY direction.
    pub fn of_call(base: VectorOptions, args: &[Val]) -> Option<VectorOptions> {
        let mut out = base;
        if let Some(b) = args.get(2) {
            out.brute_force = b.as_bool()?;
        }
        match args.get(3) {
            Some(obj) => VectorOptions::with_object(out, obj),
            None => Some(out),
        }
    }
}

/// The score of two vectors under `distance`, computed in f64. `None` for empty vectors,
/// different lengths, a zero vector under cosine (the similarity is undefined), or a result
/// that is not finite.
pub fn distance(a: &[f64], b: &[f64], distance: Distance) -> Option<f64> {
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let mut sums = Sums::default();
    for (x, y) in a.iter().zip(b) {
        sums.add(*x, *y);
    }
    sums.score(distance)
}

/// What every metric is computed from, accumulated in one pass over the element pairs.
#[derive(Default)]
struct Sums {
    dot: f64,
    norm_a: f64,
    norm_b: f64,
    squared_difference: f64,
}

impl Sums {
    fn add(&mut self, x: f64, y: f64) {
        self.dot += x * y;
        self.norm_a += x * x;
        self.norm_b += y * y;
        self.squared_difference += (x - y) * (x - y);
    }

    fn score(&self, distance: Distance) -> Option<f64> {
        let score = match distance {
            Distance::DotProduct => self.dot,
            Distance::Euclidean => self.squared_difference.sqrt(),
            Distance::Cosine => {
                if self.norm_a == 0.0 || self.norm_b == 0.0 {
                    return None;
                }
                // One square root of the product keeps exact cases exact ([1,2,3]·[2,4,6] = 1);
                // the clamp absorbs rounding just past ±1.
                (self.dot / (self.norm_a * self.norm_b).sqrt()).clamp(-1.0, 1.0)
            }
        };
        score.is_finite().then_some(score)
    }
}

/// VectorDistance of two evaluated vector arguments under `options`: each element as the
/// data type stores it (`None` unless every one is a number the type can hold), in one pass
/// without copying the vectors (a scan scores every document).
pub fn vector_distance(a: &Val, b: &Val, options: &VectorOptions) -> Option<f64> {
    let (a, b) = (a.as_array()?, b.as_array()?);
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let mut sums = Sums::default();
    for (x, y) in a.iter().zip(b.iter()) {
        sums.add(
            coerce(options.data_type, x.as_f64()?)?,
            coerce(options.data_type, y.as_f64()?)?,
        );
    }
    sums.score(options.distance)
}

/// `VECTORDISTANCE(v1, v2 [, brute_force [, options]])`. Every invalid input — a non-array,
/// a non-number element, different lengths, empty vectors, a zero vector under cosine, an
/// element the data type cannot hold, a bad flag or option — gives undefined: functions never
/// fail at run time in this engine, whereas the service rejects some of these with a 400.
fn vector_distance_fn(args: &[Val], _: &FnContext) -> Val {
    let (Some(a), Some(b)) = (args.first(), args.get(1)) else {
        return Val::Undefined;
    };
    VectorOptions::of_call(VectorOptions::default(), args)
        .and_then(|o| vector_distance(a, b, &o))
        .map_or(Val::Undefined, Val::Num)
}

// ---------------------------------------------------------------------------------------------
// FullTextContains family

/// Per search string, whether the text contains it; `None` when the text or a search argument
/// is not a string. The result is then undefined rather than false: this engine's functions
/// give undefined for a wrong-typed argument, and in a WHERE clause the item is dropped either
/// way, as on the service for a missing property.
///
/// Each string is analyzed like the text. A one-word string matches when its term occurs
/// anywhere in the text; a multi-word string is a phrase: its terms must occur in the text at
/// the same distances from each other (full-text-search.md: FullTextContains finds "the phrase
/// *red bicycle*", FullTextContainsAll the keywords "not necessarily together"). A stop word
/// in the phrase holds its place without being matched. A string with no terms left after
/// analysis ("the", "!") matches nothing: there is nothing to look up in a full-text index.
fn searches_found(args: &[Val]) -> Option<Vec<bool>> {
    let text = args.first()?.as_str()?;
    let searches: Vec<Phrase> = args[1..]
        .iter()
        .map(|s| s.as_str().map(Phrase::of))
        .collect::<Option<_>>()?;
    // Every wanted term once, with the positions the text holds it at. Single-word searches
    // need only one position each, so the pass stops once each such term has one.
    let mut wanted: Vec<(&str, Vec<usize>)> = Vec::new();
    for (_, t) in searches.iter().flat_map(|p| &p.terms) {
        if !wanted.iter().any(|(w, _)| w == t) {
            wanted.push((t, Vec::new()));
        }
    }
    let phrases = searches.iter().any(|p| p.terms.len() > 1);
    let mut missing = wanted.len();
    for_each_term_at(text, |at, t| {
        if (phrases || missing > 0)
            && let Some((_, positions)) = wanted.iter_mut().find(|(w, _)| *w == t)
        {
            if positions.is_empty() {
                missing -= 1;
            }
            if phrases || positions.is_empty() {
                positions.push(at);
            }
        }
    });
    let positions = |t: &str| {
        wanted
            .iter()
            .find(|(w, _)| *w == t)
            .map_or(&[][..], |(_, p)| p.as_slice())
    };
    Some(searches.iter().map(|p| p.found(positions)).collect())
}

/// A search string's terms with their word offsets within the string.
struct Phrase {
    terms: Vec<(usize, String)>,
}

impl Phrase {
    fn of(s: &str) -> Phrase {
        let mut terms = Vec::new();
        for_each_term_at(s, |at, t| terms.push((at, t.to_string())));
        Phrase { terms }
    }

    /// Whether a text whose terms are at `positions(term)` (ascending) contains the phrase.
    fn found<'p>(&self, positions: impl Fn(&str) -> &'p [usize]) -> bool {
        let Some(((first_at, first), rest)) = self.terms.split_first() else {
            return false;
        };
        positions(first).iter().any(|&start| {
            rest.iter().all(|(at, t)| {
                positions(t)
                    .binary_search(&(start + (at - first_at)))
                    .is_ok()
            })
        })
    }
}

/// `FULLTEXTCONTAINS(text, s)`: FULLTEXTCONTAINSALL with one search string.
fn full_text_contains(args: &[Val], ctx: &FnContext) -> Val {
    full_text_contains_all(args, ctx)
}

fn full_text_contains_all(args: &[Val], _: &FnContext) -> Val {
    searches_found(args).map_or(Val::Undefined, |f| Val::Bool(f.iter().all(|x| *x)))
}

fn full_text_contains_any(args: &[Val], _: &FnContext) -> Val {
    searches_found(args).map_or(Val::Undefined, |f| Val::Bool(f.iter().any(|x| *x)))
}

// ---------------------------------------------------------------------------------------------
// Helpers for the rank-only functions

/// The distinct analyzed query terms of a FULLTEXTSCORE call's evaluated arguments after the
/// text: either strings (`FullTextScore(c.text, "a", "b")`) or one non-empty array of strings
/// (`FullTextScore(c.text, ["a", "b"])`); the docs show both. `None` for any other shape.
pub fn full_text_score_terms(args: &[Val]) -> Option<Vec<String>> {
    let rest = args.get(1..)?;
    let strings: Vec<&str> = match rest {
        [Val::Arr(items)] if !items.is_empty() => {
            items.iter().map(Val::as_str).collect::<Option<_>>()?
        }
        [] => return None,
        _ => rest.iter().map(Val::as_str).collect::<Option<_>>()?,
    };
    Some(query_terms(strings))
}

/// The weights of RRF's optional trailing argument: an array of finite numbers. `None` when
/// `v` is not one (then it is not a weights argument).
pub fn rrf_weights(v: &Val) -> Option<Vec<f64>> {
    v.as_array()?
        .iter()
        .map(|w| w.as_f64().filter(|w| w.is_finite()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn call(name: &str, args: &[Val]) -> Val {
        super::super::call_in(FUNCTIONS, name, args)
    }

    fn vals(args: Value) -> Vec<Val> {
        let Value::Array(items) = args else {
            panic!("arguments must be a JSON array")
        };
        items.iter().map(Val::from_json).collect()
    }

    /// Calls `name` with JSON arguments and checks the exact result (`None` = undefined).
    fn check(name: &str, args: Value, expected: Option<Value>) {
        let args = vals(args);
        let got = call(name, &args);
        let want = expected.map_or(Val::Undefined, |j| Val::from_json(&j));
        assert_eq!(got, want, "{name}({args:?})");
    }

    fn vd(args: Value) -> Option<f64> {
        call("VECTORDISTANCE", &vals(args)).as_f64()
    }

    #[test]
    fn vector_distance_cosine() {
        assert_eq!(vd(json!([[1, 2, 3], [2, 4, 6]])), Some(1.0));
        assert_eq!(vd(json!([[1, 0], [0, 1]])), Some(0.0));
        assert_eq!(vd(json!([[1, 2], [-1, -2]])), Some(-1.0));
        assert_eq!(vd(json!([[3, 4], [4, 3]])), Some(24.0 / 25.0));
        let opts = json!({"distanceFunction": "cosine", "dataType": "float32"});
        assert_eq!(vd(json!([[1, 2, 3], [2, 4, 6], true, opts])), Some(1.0));
    }

    #[test]
    fn vector_distance_dot_product() {
        let o = json!({"distanceFunction": "dotproduct"});
        assert_eq!(vd(json!([[1, 2, 3], [4, 5, 6], false, o])), Some(32.0));
        assert_eq!(vd(json!([[1, -1], [1, 1], false, o])), Some(0.0));
        assert_eq!(vd(json!([[-2], [3], false, o])), Some(-6.0));
    }

    #[test]
    fn vector_distance_euclidean() {
        let o = json!({"distanceFunction": "euclidean"});
        assert_eq!(vd(json!([[0, 0], [3, 4], false, o])), Some(5.0));
        assert_eq!(vd(json!([[1, 2, 3], [1, 2, 3], false, o])), Some(0.0));
        assert_eq!(vd(json!([[-1], [2], false, o])), Some(3.0));
    }

    #[test]
    fn vector_distance_rounds_to_float32() {
        // 0.1 is stored as the f32 nearest to it, so the dot product is that value squared.
        let o = json!({"distanceFunction": "dotproduct"});
        let f = f64::from(0.1f32);
        assert_eq!(vd(json!([[0.1], [0.1], false, o])), Some(f * f));
        assert_ne!(f * f, 0.1 * 0.1);
        // Beyond the f32 range there is no stored value.
        assert_eq!(vd(json!([[1e39], [1], false, o])), None);
    }

    #[test]
    fn vector_distance_integer_types() {
        let i8o = json!({"dataType": "int8", "distanceFunction": "dotproduct"});
        assert_eq!(vd(json!([[-128, 127], [1, 1], false, i8o])), Some(-1.0));
        assert_eq!(vd(json!([[128], [1], false, i8o])), None);
        assert_eq!(vd(json!([[-129], [1], false, i8o])), None);
        assert_eq!(vd(json!([[1.5], [1], false, i8o])), None);
        let u8o = json!({"dataType": "uint8", "distanceFunction": "euclidean"});
        assert_eq!(vd(json!([[255, 0], [252, 4], false, u8o])), Some(5.0));
        assert_eq!(vd(json!([[256], [1], false, u8o])), None);
        assert_eq!(vd(json!([[-1], [1], false, u8o])), None);
        assert_eq!(vd(json!([[0.5], [1], false, u8o])), None);
        assert_eq!(vd(json!([[2.0], [1], false, u8o])), Some(1.0));
    }

    #[test]
    fn vector_distance_undefined_cases() {
        for args in [
            json!([[1, 2], "12"]),
            json!([null, [1]]),
            json!([{"a": 1}, [1]]),
            json!([[1, "2"], [1, 2]]),
            json!([[1, null], [1, 2]]),
            json!([[1, [2]], [1, 2]]),
            json!([[1, 2], [1, 2, 3]]),
            json!([[], []]),
            json!([[0, 0], [1, 1]]),
            json!([[1, 1], [0, 0]]),
            json!([[1], [1], "true"]),
            json!([[1], [1], null]),
            json!([[1], [1], 1]),
            json!([[1], [1], true, "cosine"]),
            json!([[1], [1], true, null]),
            json!([[1], [1], true, {"distanceFunction": "manhattan"}]),
            json!([[1], [1], true, {"distanceFunction": 1}]),
            json!([[1], [1], true, {"dataType": "float64"}]),
            json!([[1], [1], true, {"unknownOption": 1}]),
        ] {
            assert_eq!(vd(args.clone()), None, "{args}");
        }
        // Undefined arguments and elements.
        let undef = [Val::Undefined, Val::arr(vec![Val::Num(1.0)])];
        assert_eq!(call("VECTORDISTANCE", &undef), Val::Undefined);
        let hole = Val::arr(vec![Val::Num(1.0), Val::Undefined]);
        let two = Val::arr(vec![Val::Num(1.0), Val::Num(2.0)]);
        assert_eq!(call("VECTORDISTANCE", &[hole, two]), Val::Undefined);
        // A zero vector is fine for the other metrics.
        let o = json!({"distanceFunction": "euclidean"});
        assert_eq!(vd(json!([[0, 0], [0, 0], false, o])), Some(0.0));
    }

    #[test]
    fn float16_vectors_round_to_half_precision() {
        assert_eq!(to_f16(0.1), Some(0.099_975_585_937_5));
        assert_eq!(to_f16(1.0), Some(1.0));
        assert_eq!(to_f16(-2.5), Some(-2.5));
        assert_eq!(to_f16(65519.0), Some(65504.0));
        assert_eq!(to_f16(70000.0), None);
        // A subnormal half: steps of 2^-24.
        assert_eq!(to_f16(1e-7), Some(5.960_464_477_539_063e-8 * 2.0));
        let opts = json!({"distanceFunction": "dotproduct", "dataType": "float16"});
        let args = vals(json!([[0.1], [1], false, opts]));
        assert_eq!(call("VECTORDISTANCE", &args), Val::Num(0.099_975_585_937_5));
    }

    #[test]
    fn vector_options_parse() {
        let parse =
            |j: Value| VectorOptions::with_object(VectorOptions::default(), &Val::from_json(&j));
        assert_eq!(parse(json!({})), Some(VectorOptions::default()));
        let o = parse(json!({
            "DistanceFunction": "DotProduct",
            "datatype": "INT8",
            "searchListSizeMultiplier": 100,
            "quantizedVectorListMultiplier": 1
        }))
        .unwrap();
        assert_eq!(o.distance, Distance::DotProduct);
        assert_eq!(o.data_type, DataType::Int8);
        assert_eq!(o.search_list_size_multiplier, Some(100));
        assert_eq!(o.quantized_vector_list_multiplier, Some(1));
        for bad in [0.0, 101.0, 2.5, -1.0] {
            assert_eq!(parse(json!({"searchListSizeMultiplier": bad})), None);
        }
        assert_eq!(parse(json!({"searchListSizeMultiplier": "5"})), None);
        assert_eq!(parse(json!([])), None);
        // The multiplier does not change the score.
        assert_eq!(
            vd(json!([[1, 2], [2, 1], true, {"searchListSizeMultiplier": 7}])),
            vd(json!([[1, 2], [2, 1]]))
        );
        // The call's options override a base such as a container policy.
        let base = VectorOptions {
            distance: Distance::Euclidean,
            ..VectorOptions::default()
        };
        let args = vals(json!([[1], [2], true, {"distanceFunction": "cosine"}]));
        let o = VectorOptions::of_call(base, &args).unwrap();
        assert_eq!(o.distance, Distance::Cosine);
        assert!(o.brute_force);
        let o = VectorOptions::of_call(base, &vals(json!([[1], [2]]))).unwrap();
        assert_eq!(o.distance, Distance::Euclidean);
        assert!(!o.brute_force);
    }

    #[test]
    fn distance_names_and_directions() {
        assert_eq!(Distance::parse("COSINE").ok(), Some(Distance::Cosine));
        assert_eq!(
            Distance::parse("dotProduct").ok(),
            Some(Distance::DotProduct)
        );
        assert_eq!(Distance::parse("Euclidean").ok(), Some(Distance::Euclidean));
        assert!(Distance::parse("dot product").is_err());
        assert!(Distance::parse("").is_err());
        assert!(Distance::Cosine.higher_is_closer());
        assert!(Distance::DotProduct.higher_is_closer());
        assert!(!Distance::Euclidean.higher_is_closer());
        assert_eq!(DataType::parse("Uint8").ok(), Some(DataType::Uint8));
        assert_eq!(DataType::default(), DataType::Float32);
        assert_eq!(Distance::default(), Distance::Cosine);
    }

    #[test]
    fn pure_distance() {
        assert_eq!(distance(&[1.0], &[1.0, 2.0], Distance::DotProduct), None);
        assert_eq!(distance(&[], &[], Distance::Euclidean), None);
        assert_eq!(distance(&[0.0], &[0.0], Distance::Cosine), None);
        assert_eq!(
            distance(&[f64::MAX], &[f64::MAX], Distance::DotProduct),
            None
        );
        assert_eq!(distance(&[2.0], &[3.0], Distance::DotProduct), Some(6.0));
    }

    const TEXT: &str = "The red bicycles are parked next to a blue skateboard.";

    #[test]
    fn full_text_contains_truth_table() {
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "bicycle"]),
            Some(json!(true)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "Bicycles"]),
            Some(json!(true)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "skateboards"]),
            Some(json!(true)),
        );
        check("FULLTEXTCONTAINS", json!([TEXT, "park"]), Some(json!(true)));
        check("FULLTEXTCONTAINS", json!([TEXT, "car"]), Some(json!(false)));
        // A multi-word string is a phrase: its words next to each other, in order (the
        // analyzer's forms: "red bicycles" finds "red bicycle").
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "Red Bicycle"]),
            Some(json!(true)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "blue skateboards"]),
            Some(json!(true)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "blue bicycle"]),
            Some(json!(false)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "bicycle red"]),
            Some(json!(false)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "blue car"]),
            Some(json!(false)),
        );
        // A stop word keeps its place on both sides: "next to a blue" holds "to a" there.
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "next to a blue"]),
            Some(json!(true)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "next blue"]),
            Some(json!(false)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!([TEXT, "next of the blue"]),
            Some(json!(true)),
        );
        // Only the distances between a phrase's terms count: a leading stop word needs no
        // word before the match.
        check(
            "FULLTEXTCONTAINS",
            json!(["red bicycle", "the red bicycle"]),
            Some(json!(true)),
        );
        check(
            "FULLTEXTCONTAINS",
            json!(["a red bicycle", "the red bicycle"]),
            Some(json!(true)),
        );
        // Stop words are not indexed, so a stop-word-only string finds nothing.
        check("FULLTEXTCONTAINS", json!([TEXT, "the"]), Some(json!(false)));
        check("FULLTEXTCONTAINS", json!([TEXT, ""]), Some(json!(false)));
        check(
            "FULLTEXTCONTAINS",
            json!(["", "bicycle"]),
            Some(json!(false)),
        );
        // Substrings are not words.
        check("FULLTEXTCONTAINS", json!([TEXT, "bi"]), Some(json!(false)));
    }

    #[test]
    fn full_text_contains_all_truth_table() {
        let f = "FULLTEXTCONTAINSALL";
        check(f, json!([TEXT, "red", "bicycle"]), Some(json!(true)));
        check(
            f,
            json!([TEXT, "reds", "bicycles", "skateboard"]),
            Some(json!(true)),
        );
        check(f, json!([TEXT, "red", "car"]), Some(json!(false)));
        check(f, json!([TEXT, "car", "truck"]), Some(json!(false)));
        check(f, json!([TEXT, "red"]), Some(json!(true)));
        check(f, json!([TEXT, "red", "the"]), Some(json!(false)));
        // Each string is a phrase of its own.
        check(
            f,
            json!([TEXT, "red bicycles", "skateboard"]),
            Some(json!(true)),
        );
        check(
            f,
            json!([TEXT, "red skateboard", "bicycle"]),
            Some(json!(false)),
        );
    }

    #[test]
    fn full_text_contains_any_truth_table() {
        let f = "FULLTEXTCONTAINSANY";
        check(f, json!([TEXT, "bicycle", "skateboard"]), Some(json!(true)));
        check(f, json!([TEXT, "car", "skateboards"]), Some(json!(true)));
        check(f, json!([TEXT, "car", "truck"]), Some(json!(false)));
        check(f, json!([TEXT, "the", "red"]), Some(json!(true)));
        check(f, json!([TEXT, "the"]), Some(json!(false)));
        check(
            f,
            json!([TEXT, "blue bicycle", "parked next"]),
            Some(json!(true)),
        );
        check(
            f,
            json!([TEXT, "blue bicycle", "next parked"]),
            Some(json!(false)),
        );
    }

    #[test]
    fn full_text_contains_undefined_cases() {
        for f in [
            "FULLTEXTCONTAINS",
            "FULLTEXTCONTAINSALL",
            "FULLTEXTCONTAINSANY",
        ] {
            check(f, json!([null, "red"]), None);
            check(f, json!([1, "red"]), None);
            check(f, json!([["red"], "red"]), None);
            check(f, json!([TEXT, 1]), None);
            check(f, json!([TEXT, null]), None);
            assert_eq!(call(f, &[Val::Undefined, Val::str("red")]), Val::Undefined);
            assert_eq!(call(f, &[Val::str(TEXT), Val::Undefined]), Val::Undefined);
        }
        check("FULLTEXTCONTAINSALL", json!([TEXT, "red", 1]), None);
        check("FULLTEXTCONTAINSANY", json!([TEXT, "red", null]), None);
    }

    #[test]
    fn rank_functions_are_placeholders() {
        check("FULLTEXTSCORE", json!([TEXT, "red"]), None);
        check("FULLTEXTSCORE", json!([TEXT, ["red", "bicycle"]]), None);
        check("RRF", json!([1, 2]), None);
        check("RRF", json!([1, 2, [2, 1]]), None);
    }

    #[test]
    fn full_text_score_term_forms() {
        let terms = |j: Value| full_text_score_terms(&vals(j));
        let want = Some(vec!["bicycl".to_string(), "mountain".to_string()]);
        assert_eq!(terms(json!([TEXT, "bicycles", "mountain"])), want);
        assert_eq!(
            terms(json!([TEXT, ["bicycle", "mountains", "bicycle"]])),
            want
        );
        assert_eq!(terms(json!([TEXT, "the"])), Some(vec![]));
        assert_eq!(terms(json!([TEXT, []])), None);
        assert_eq!(terms(json!([TEXT, ["a"], "b"])), None);
        assert_eq!(terms(json!([TEXT, [1]])), None);
        assert_eq!(terms(json!([TEXT, 1])), None);
        assert_eq!(terms(json!([TEXT])), None);
        assert_eq!(terms(json!([])), None);
    }

    #[test]
    fn rrf_weight_argument() {
        assert_eq!(
            rrf_weights(&Val::from_json(&json!([2, 1.5]))),
            Some(vec![2.0, 1.5])
        );
        assert_eq!(rrf_weights(&Val::from_json(&json!([]))), Some(vec![]));
        assert_eq!(rrf_weights(&Val::from_json(&json!([2, "1"]))), None);
        assert_eq!(rrf_weights(&Val::Num(2.0)), None);
    }
}
