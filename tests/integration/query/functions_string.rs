//! The string family in the public function registry: index use and arities as the
//! documentation gives them. (The functions' examples are unit tests of the
//! family's module; `functions_engine` calls them through queries.)

use cosmoscope::query::functions::lookup;

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
