//! The array family in the public function registry: every documented function is
//! registered with its arity and index use. (The functions' examples are unit tests of the
//! family's module; `functions_engine` calls them through queries.)

use cosmoscope::query::functions::lookup;

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
