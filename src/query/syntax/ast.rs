//! The syntax tree of the NoSQL query dialect, as the parser produces it.
//!
//! Every node that can be the subject of an error carries its source position, so semantic
//! checks (unknown function, misplaced aggregate, GROUP BY rules) can point at it.

/// A 1-based line and column in the query text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub select: Select,
    pub from: Option<From>,
    pub joins: Vec<Join>,
    pub filter: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub order_by: Vec<OrderItem>,
    pub offset_limit: Option<OffsetLimit>,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub distinct: bool,
    /// `TOP n` or `TOP @p`.
    pub top: Option<Expr>,
    pub kind: SelectKind,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SelectKind {
    /// `SELECT *`
    Star,
    /// `SELECT VALUE expr`
    Value(Expr),
    /// `SELECT a, b AS x, ...`
    Items(Vec<SelectItem>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SelectItem {
    pub expr: Expr,
    pub alias: Option<String>,
    pub pos: Pos,
}

/// `FROM <source> [AS] alias` or `FROM alias IN <expr>`.
#[derive(Debug, Clone, PartialEq)]
pub struct From {
    pub kind: FromKind,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FromKind {
    /// `FROM c`, `FROM root r`, `FROM c.children[0] ch`: the container (its identifier is the
    /// first name, any name works) optionally narrowed by a path; binds `alias`, or the
    /// container identifier when no alias is given (only for a bare container reference).
    Container {
        name: String,
        path: Vec<PathStep>,
        alias: Option<String>,
    },
    /// `FROM x IN c.children`: iterates an array of each item.
    In { alias: String, expr: Expr },
    /// `FROM (SELECT ...) alias`
    Subquery { query: Box<Query>, alias: String },
}

/// One step of a path in a FROM source: `.name`, `["name"]` or `[3]`.
#[derive(Debug, Clone, PartialEq)]
pub enum PathStep {
    Property(String),
    Index(i64),
}

/// `JOIN x IN <expr>`, `JOIN c.path [AS x]` or `JOIN (SELECT ...) x`.
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    pub alias: String,
    pub source: JoinSource,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum JoinSource {
    /// `JOIN x IN c.tags`: one row per element of the array.
    In(Expr),
    /// `JOIN c.tags [AS x]` (from.md's `<container_expression>`): the one value at that path,
    /// not iterated, so each row is joined with it once; no row where it is undefined.
    Value(Expr),
    Subquery(Box<Query>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct OrderItem {
    pub expr: Expr,
    pub descending: bool,
    /// `ASC` or `DESC` was written (a score sorts most similar first without one).
    pub direction_given: bool,
    /// `ORDER BY RANK <scoring function>`: the expression is a score (FullTextScore,
    /// VectorDistance or RRF), results come most relevant first.
    pub rank: bool,
    pub pos: Pos,
}

/// `OFFSET n LIMIT m`: each an integer literal or a parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetLimit {
    pub offset: Expr,
    pub limit: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    /// Shared, so evaluating it per row does not copy it.
    String(std::sync::Arc<str>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// `@name` (the name without `@`).
    Param(String),
    /// A bound name: the FROM alias, a JOIN alias, or `root`-style container identifier.
    Ident(String),
    /// `a.b` or `a["b"]`.
    Property(Box<Expr>, String),
    /// `a[0]` or `a[expr]` with a non-string-literal index.
    Index(Box<Expr>, Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `expr [NOT] BETWEEN low AND high`
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    /// `expr [NOT] IN (a, b, ...)`
    In {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    /// `expr [NOT] LIKE pattern [ESCAPE 'c']`
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
    },
    /// `cond ? a : b`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A built-in call (`name` upper-cased) or `udf.name(...)` (`udf: true`, name as written).
    Call {
        name: String,
        args: Vec<Expr>,
        udf: bool,
    },
    /// `{ "a": expr, b: expr }`
    Object(Vec<(String, Expr)>),
    /// `[a, b]`
    Array(Vec<Expr>),
    /// `EXISTS (SELECT ...)`
    Exists(Box<Query>),
    /// `ARRAY (SELECT ...)`
    ArraySubquery(Box<Query>),
    /// `(SELECT ...)` used as a value.
    Subquery(Box<Query>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    BitNot,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    /// `||` string concatenation
    Concat,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    /// `>>` (sign-propagating)
    Shr,
    /// `>>>` (zero-fill)
    UShr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    /// `??`
    Coalesce,
}

impl Expr {
    /// Whether this is a path into a document (from.md's `<container_expression>`): a name
    /// followed by `.name`, `["name"]` or `[number]` steps. (The parser makes `["name"]` a
    /// `Property`, so an `Index` here always holds a number.)
    pub fn is_document_path(&self) -> bool {
        match &self.kind {
            ExprKind::Ident(_) => true,
            ExprKind::Property(base, _) => base.is_document_path(),
            ExprKind::Index(base, index) => {
                matches!(index.kind, ExprKind::Literal(Literal::Number(_)))
                    && base.is_document_path()
            }
            _ => false,
        }
    }
}

/// The walks over a query's expressions, written once for shared and for mutable access
/// (`$m` is `mut` for the second): `Query::for_each_expr` and `Expr::for_each` read,
/// `Query::for_each_expr_mut` and `Expr::for_each_mut` may change what they visit.
macro_rules! expression_walks {
    ($query_walk:ident, $expr_walk:ident, $iter:ident $(, $m:tt)?) => {
        impl Query {
            /// Calls `f` on every expression of the query and of its subqueries, children
            /// first.
            pub fn $query_walk(&$($m)? self, f: &mut dyn FnMut(&$($m)? Expr)) {
                if let Some(top) = &$($m)? self.select.top {
                    top.$expr_walk(f);
                }
                match &$($m)? self.select.kind {
                    SelectKind::Star => {}
                    SelectKind::Value(e) => e.$expr_walk(f),
                    SelectKind::Items(items) => items.$iter().for_each(|i| i.expr.$expr_walk(f)),
                }
                if let Some(from) = &$($m)? self.from {
                    match &$($m)? from.kind {
                        FromKind::Container { .. } => {}
                        FromKind::In { expr, .. } => expr.$expr_walk(f),
                        FromKind::Subquery { query, .. } => query.$query_walk(f),
                    }
                }
                for j in &$($m)? self.joins {
                    match &$($m)? j.source {
                        JoinSource::In(e) | JoinSource::Value(e) => e.$expr_walk(f),
                        JoinSource::Subquery(q) => q.$query_walk(f),
                    }
                }
                let rest = self
                    .filter
                    .$iter()
                    .chain(self.group_by.$iter())
                    .chain(self.order_by.$iter().map(|o| &$($m)? o.expr));
                for e in rest {
                    e.$expr_walk(f);
                }
                if let Some(ol) = &$($m)? self.offset_limit {
                    ol.offset.$expr_walk(f);
                    ol.limit.$expr_walk(f);
                }
            }
        }

        impl Expr {
            /// Calls `f` on this expression and everything inside it (subqueries included),
            /// children first.
            pub fn $expr_walk(&$($m)? self, f: &mut dyn FnMut(&$($m)? Expr)) {
                match &$($m)? self.kind {
                    ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Ident(_) => {}
                    ExprKind::Property(e, _) | ExprKind::Unary(_, e) => e.$expr_walk(f),
                    ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
                        a.$expr_walk(f);
                        b.$expr_walk(f);
                    }
                    ExprKind::Between {
                        expr, low, high, ..
                    } => {
                        expr.$expr_walk(f);
                        low.$expr_walk(f);
                        high.$expr_walk(f);
                    }
                    ExprKind::In { expr, list, .. } => {
                        expr.$expr_walk(f);
                        list.$iter().for_each(|e| e.$expr_walk(f));
                    }
                    ExprKind::Like {
                        expr,
                        pattern,
                        escape,
                        ..
                    } => {
                        expr.$expr_walk(f);
                        pattern.$expr_walk(f);
                        if let Some(e) = escape {
                            e.$expr_walk(f);
                        }
                    }
                    ExprKind::Ternary(a, b, c) => {
                        a.$expr_walk(f);
                        b.$expr_walk(f);
                        c.$expr_walk(f);
                    }
                    ExprKind::Call { args: items, .. } | ExprKind::Array(items) => {
                        items.$iter().for_each(|e| e.$expr_walk(f))
                    }
                    ExprKind::Object(members) => members.$iter().for_each(|(_, e)| e.$expr_walk(f)),
                    ExprKind::Exists(q) | ExprKind::ArraySubquery(q) | ExprKind::Subquery(q) => {
                        q.$query_walk(f)
                    }
                }
                f(self);
            }
        }
    };
}

expression_walks!(for_each_expr, for_each, iter);
expression_walks!(for_each_expr_mut, for_each_mut, iter_mut, mut);
