//! Names and paths a query's tree binds and reads: the alias its FROM clause binds, the
//! name under which it sees the whole item, and the text of a document path (`/a/b`), as
//! the indexing policy spells paths.

use crate::query::syntax::ast::{Expr, ExprKind, FromKind, PathStep, Query};

/// The name the FROM clause binds: the alias; without one, the last property of a path
/// (`FROM c.children` binds `children`, as from.md says) or the container identifier.
pub fn from_alias(q: &Query) -> Option<&str> {
    q.from.as_ref().map(|f| match &f.kind {
        FromKind::Container { name, alias, path } => match (alias, path.last()) {
            (Some(a), _) => a.as_str(),
            (None, Some(PathStep::Property(p))) => p.as_str(),
            _ => name.as_str(),
        },
        FromKind::In { alias, .. } | FromKind::Subquery { alias, .. } => alias.as_str(),
    })
}

/// The name under which the query's expressions see the whole item: the FROM alias of a
/// bare container reference (`FROM c`, `FROM root r`), or the root of a `FROM x IN c.arr`.
pub fn doc_alias(q: &Query) -> Option<String> {
    match &q.from.as_ref()?.kind {
        FromKind::Container { path, .. } if path.is_empty() => from_alias(q).map(str::to_string),
        FromKind::In { expr, .. } => leftmost_ident(expr).map(str::to_string),
        _ => None,
    }
}

/// The name the query uses for the container's root document.
pub fn root_name(q: &Query) -> Option<String> {
    match &q.from.as_ref()?.kind {
        FromKind::Container { name, .. } => Some(name.clone()),
        FromKind::In { expr, .. } => leftmost_ident(expr).map(str::to_string),
        FromKind::Subquery { .. } => None,
    }
}

pub fn leftmost_ident(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        ExprKind::Property(b, _) | ExprKind::Index(b, _) => leftmost_ident(b),
        _ => None,
    }
}

/// `/a/b` for `root.a.b`.
pub fn path_text(e: &Expr, root: &str) -> Option<String> {
    match &e.kind {
        ExprKind::Property(base, name) => Some(format!("{}/{name}", path_text(base, root)?)),
        ExprKind::Ident(n) if n == root => Some(String::new()),
        _ => None,
    }
}
