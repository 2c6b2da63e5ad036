//! The built-in function library: one registry, one file per family.
//!
//! Each family exports `FUNCTIONS`, a table of [`FnSpec`]s. The parser upper-cases names,
//! the planner checks arity against the spec (a 400 with the call's position), and the
//! evaluator calls `eval` with already-evaluated arguments. Functions never fail at run time:
//! a wrong-typed or undefined argument gives `undefined`, as on the service, unless the
//! function's documentation says otherwise (`IS_DEFINED`, `IIF`, ...). Aggregates (COUNT, SUM,
//! AVG, MIN, MAX) are listed for name and arity checks but evaluated by the executor.

pub mod array;
pub mod datetime;
pub mod math;
pub mod search;
pub mod spatial;
pub mod string;
pub mod types;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::OnceLock;

use crate::query::eval::value::Val;

/// What a function call may depend on besides its arguments.
#[derive(Debug, Clone, Copy)]
pub struct FnContext {
    /// The query's start time in 100-nanosecond ticks since the Unix epoch (the service's
    /// clock resolution): what the `GetCurrent*Static` twins, `AGO` and `NOW` return for
    /// every item. The service binds the static twins "once per partition"; here one page
    /// of a query is one binding, so every range of the page shares it.
    pub now_ticks: i64,
    /// The clock the plain `GetCurrent*` functions read at every call: the service "gets a
    /// new date and time value for each item matched by the query"
    /// (getcurrentdatetimestatic.md). `None` keeps them at `now_ticks` (fixed contexts).
    pub clock: Option<fn() -> i64>,
    /// Seed for `RAND()`: random per execution, mixed with a call counter per draw.
    pub seed: u64,
}

/// Now, as [`FnContext::now_ticks`] counts it.
pub fn now_ticks() -> i64 {
    let now = chrono::Utc::now();
    now.timestamp()
        .saturating_mul(10_000_000)
        .saturating_add(i64::from(now.timestamp_subsec_nanos() / 100))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FnKind {
    Scalar,
    Aggregate,
}

pub type FnImpl = fn(&[Val], &FnContext) -> Val;

#[derive(Clone, Copy)]
pub struct FnSpec {
    /// Upper-case name as the parser normalizes it (e.g. `ARRAY_CONTAINS`, `STRINGTONUMBER`).
    pub name: &'static str,
    pub min_args: usize,
    /// `usize::MAX` for variadic functions (CONCAT, SETUNION, ...).
    pub max_args: usize,
    pub kind: FnKind,
    /// Whether the service can serve a filter on this function from the index
    /// (StartsWith, Contains, RegexMatch, Left, Substring(…, 0, …), IS_DEFINED, ...); when
    /// false, a WHERE using it on a path forces a scan of the range (RU model).
    pub uses_index: bool,
    pub eval: FnImpl,
}

impl std::fmt::Debug for FnSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FnSpec({}, {}..={})",
            self.name, self.min_args, self.max_args
        )
    }
}

/// A scalar function's table entry.
pub(crate) const fn scalar(
    name: &'static str,
    min_args: usize,
    max_args: usize,
    uses_index: bool,
    eval: FnImpl,
) -> FnSpec {
    FnSpec {
        name,
        min_args,
        max_args,
        kind: FnKind::Scalar,
        uses_index,
        eval,
    }
}

fn aggregate_placeholder(_: &[Val], _: &FnContext) -> Val {
    // Aggregates are evaluated by the executor over groups, never through this pointer.
    Val::Undefined
}

const AGGREGATES: &[FnSpec] = &[
    FnSpec {
        name: "COUNT",
        min_args: 1,
        max_args: 1,
        kind: FnKind::Aggregate,
        uses_index: true,
        eval: aggregate_placeholder,
    },
    FnSpec {
        name: "SUM",
        min_args: 1,
        max_args: 1,
        kind: FnKind::Aggregate,
        uses_index: true,
        eval: aggregate_placeholder,
    },
    FnSpec {
        name: "AVG",
        min_args: 1,
        max_args: 1,
        kind: FnKind::Aggregate,
        uses_index: true,
        eval: aggregate_placeholder,
    },
    FnSpec {
        name: "MIN",
        min_args: 1,
        max_args: 1,
        kind: FnKind::Aggregate,
        uses_index: true,
        eval: aggregate_placeholder,
    },
    FnSpec {
        name: "MAX",
        min_args: 1,
        max_args: 1,
        kind: FnKind::Aggregate,
        uses_index: true,
        eval: aggregate_placeholder,
    },
];

/// Names are looked up on every call a row evaluates: a cheap hash of a few bytes.
type Registry = HashMap<&'static str, FnSpec, BuildHasherDefault<crate::store::index::FoldHasher>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let families: [&[FnSpec]; 8] = [
            AGGREGATES,
            string::FUNCTIONS,
            math::FUNCTIONS,
            array::FUNCTIONS,
            types::FUNCTIONS,
            datetime::FUNCTIONS,
            spatial::FUNCTIONS,
            search::FUNCTIONS,
        ];
        families
            .iter()
            .flat_map(|f| f.iter())
            .map(|s| (s.name, *s))
            .collect()
    })
}

/// The function named `name` (upper case), if it exists.
pub fn lookup(name: &str) -> Option<&'static FnSpec> {
    registry().get(name)
}

/// Every function name, sorted (for "did you mean" suggestions and help).
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<_> = registry().keys().copied().collect();
    v.sort_unstable();
    v
}

/// Calls `name` from `family` with arguments, checking the arity as the planner would (the
/// family tests' entry point).
#[cfg(test)]
pub(crate) fn call_in(family: &[FnSpec], name: &str, args: &[Val]) -> Val {
    let spec = family
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} is not registered"));
    assert!(
        args.len() >= spec.min_args && args.len() <= spec.max_args,
        "{name} called with {} arguments",
        args.len()
    );
    (spec.eval)(
        args,
        &FnContext {
            clock: None,
            now_ticks: 0,
            seed: 0,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_registers_distinct_upper_case_names() {
        let families: [&[FnSpec]; 8] = [
            AGGREGATES,
            string::FUNCTIONS,
            math::FUNCTIONS,
            array::FUNCTIONS,
            types::FUNCTIONS,
            datetime::FUNCTIONS,
            spatial::FUNCTIONS,
            search::FUNCTIONS,
        ];
        let total: usize = families.iter().map(|f| f.len()).sum();
        assert_eq!(registry().len(), total, "a name is registered twice");
        for name in names() {
            assert_eq!(name, name.to_uppercase());
        }
    }
}
