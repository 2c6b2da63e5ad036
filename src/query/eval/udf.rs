//! User-defined function calls (`udf.name(...)`) in queries.
//!
//! The query engine does not run JavaScript: the engine installs the container's UDFs for
//! the duration of one query execution on its thread ([`with_udfs`]), and the evaluator
//! calls them through [`call`]. A query runs on one thread from start to end, so a
//! thread-local scope is enough, and the evaluator's signature stays as it is. Evaluation
//! never fails, so a UDF's error is kept (the first one) and returned by [`with_udfs`],
//! which fails the query with it, as the service fails a query whose UDF throws.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use crate::error::Error;
use crate::query::eval::value::Val;
use crate::query::syntax::ast::{ExprKind, Query};

/// The service's limit on distinct UDFs one query calls (concepts-limits.md).
pub const MAX_UDFS_PER_QUERY: usize = 10;

/// What calls a container's UDFs.
pub trait UdfCall {
    fn call(&self, name: &str, args: &[Val]) -> Result<Val, Error>;
}

struct Active {
    udfs: Rc<dyn UdfCall>,
    error: Option<Error>,
}

thread_local! {
    static ACTIVE: RefCell<Option<Active>> = const { RefCell::new(None) };
}

/// Runs `f` with `udfs` callable from the queries it evaluates on this thread; returns its
/// result, or the first error a UDF raised.
pub fn with_udfs<R>(
    udfs: Rc<dyn UdfCall>,
    f: impl FnOnce() -> Result<R, Error>,
) -> Result<R, Error> {
    let previous = ACTIVE.with(|a| a.borrow_mut().replace(Active { udfs, error: None }));
    let result = f();
    let active = ACTIVE.with(|a| std::mem::replace(&mut *a.borrow_mut(), previous));
    match active.and_then(|a| a.error) {
        Some(e) => Err(e),
        None => result,
    }
}

/// Calls UDF `name`: undefined when none is installed (the engine checks the names before
/// running a query) or when it fails (its error is kept for [`with_udfs`]).
pub fn call(name: &str, args: &[Val]) -> Val {
    let udfs = ACTIVE.with(|a| {
        a.borrow()
            .as_ref()
            .filter(|a| a.error.is_none())
            .map(|a| a.udfs.clone())
    });
    let Some(udfs) = udfs else {
        return Val::Undefined;
    };
    match udfs.call(name, args) {
        Ok(v) => v,
        Err(e) => {
            ACTIVE.with(|a| {
                if let Some(a) = a.borrow_mut().as_mut() {
                    a.error.get_or_insert(e);
                }
            });
            Val::Undefined
        }
    }
}

/// The names of the UDFs `q` calls, subqueries included.
pub fn names(q: &Query) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut copy = q.clone();
    copy.for_each_expr_mut(&mut |e| {
        if let ExprKind::Call {
            name, udf: true, ..
        } = &e.kind
        {
            names.insert(name.clone());
        }
    });
    names
}
