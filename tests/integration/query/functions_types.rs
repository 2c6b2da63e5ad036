//! Type checking, conversion, IIF and DOCUMENTID in the public function registry: index use
//! as the documentation gives it. (The functions' examples are unit tests of the
//! family's module; `functions_engine` calls them through queries.)

use cosmoscope::query::functions::lookup;

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
