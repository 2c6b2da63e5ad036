//! Query text from a syntax tree: `Display` for every node of [`super::ast`], in the service's
//! dialect, such that the text parses back to the same tree (source positions aside).
//!
//! - Keywords are upper-case; the literals `true false null undefined` lower-case, the only
//!   way the lexer reads them.
//! - Strings, quoted property names and object keys are written in double quotes with JSON's
//!   escapes, all of which the lexer reads (it reads `\'` too, which double quotes never need).
//! - A property name that is not a plain identifier, or is a reserved word, is written
//!   `["name"]`; other names are written bare.
//! - A number is written in the shortest form that reads back to the same double: integers
//!   without `.0`, the exponent form outside JavaScript's plain range [1e-6, 1e21), `-0` with its
//!   sign, and `NaN`, `Infinity`, `-Infinity` by the names the parser reads as numbers.
//! - Parentheses are minimal, computed from the parser's precedence table ([`prec`]): an
//!   operand is parenthesised only where the parser would otherwise group it differently.
//!   Prefix `NOT` counts as binding at its own level, so it is parenthesised wherever a
//!   tighter operand is expected (`1 + (NOT x)`), which reads back the same.
//! - An AND or OR run is printed flat only up to [`BALANCE_ABOVE`] operands: a longer one would
//!   parse as a balanced tree, so its left part goes in parentheses.
//! - Names the parser makes up (`$0`, `$n` for unaliased FROM and JOIN subqueries) and the alias
//!   a JOIN path gets by default (`JOIN c.tags` binds `tags`) are left out.
//!
//! Two shapes the tree type allows have no spelling, because the parser never builds them:
//! `Index` with a string literal (`a["b"]` is a `Property`) and a sign applied to a number
//! literal (`-1` is folded into the literal). They print as the form the parser makes instead.

use std::fmt::{self, Display, Formatter, Write};

use crate::query::syntax::ast::{
    BinaryOp, Expr, ExprKind, From, FromKind, Join, JoinSource, Literal, OffsetLimit, OrderItem,
    PathStep, Query, Select, SelectItem, SelectKind, UnaryOp,
};
use crate::query::syntax::lexer::is_name;
use crate::query::syntax::parser::{BALANCE_ABOVE, binary_precedence, last_property, prec};

/// The level of a full expression (the conditional operator binds loosest).
const ANY: u8 = 0;
/// The level of a primary expression and its `.name` / `[i]` accessors.
const POSTFIX: u8 = prec::UNARY + 1;

/// A path expression as the user would write it (`c.name`, `c["a b"][0]`), for messages;
/// `None` for anything else.
pub(crate) fn path(e: &Expr) -> Option<String> {
    e.is_document_path().then(|| e.to_string())
}

/// The container and path of a FROM source as written: `c.children[0]`.
pub(crate) fn container_path<'a>(name: &'a str, path: &'a [PathStep]) -> impl Display + 'a {
    ContainerPath { name, path }
}

/// How tightly `kind` binds: where an operand needs at least this much, it goes bare.
fn precedence(kind: &ExprKind) -> u8 {
    match kind {
        ExprKind::Ternary(..) => ANY,
        ExprKind::Binary(op, ..) => binary_precedence(*op),
        ExprKind::Between { .. } | ExprKind::In { .. } | ExprKind::Like { .. } => prec::EQUALITY,
        ExprKind::Unary(UnaryOp::Not, _) => prec::NOT,
        ExprKind::Unary(..) => prec::UNARY,
        // Not POSTFIX: `1.x` doesn't lex, and `-1.x` would be `-(1.x)`.
        ExprKind::Literal(Literal::Number(_)) => prec::UNARY,
        _ => POSTFIX,
    }
}

/// An expression where the grammar expects one binding at least as tightly as `min`.
struct Operand<'a> {
    kind: &'a ExprKind,
    min: u8,
}

fn at(expr: &Expr, min: u8) -> Operand<'_> {
    Operand {
        kind: &expr.kind,
        min,
    }
}

impl Display for Operand<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if precedence(self.kind) < self.min {
            write!(f, "({})", self.kind)
        } else {
            self.kind.fmt(f)
        }
    }
}

/// Full expressions separated by `, `.
struct List<'a>(&'a [Expr]);

impl Display for List<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        separated(f, self.0, ", ")
    }
}

fn separated<T: Display>(f: &mut Formatter<'_>, items: &[T], separator: &str) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(separator)?;
        }
        item.fmt(f)?;
    }
    Ok(())
}

/// A string in double quotes, escaped as JSON does it (and so as the lexer reads it).
struct Quoted<'a>(&'a str);

impl Display for Quoted<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\u{8}' => f.write_str("\\b")?,
                '\u{c}' => f.write_str("\\f")?,
                // The lexer refuses raw control characters.
                c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}

/// `.name`, or `["name"]` where a bare name would not read back.
struct Member<'a>(&'a str);

impl Display for Member<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if is_name(self.0) {
            write!(f, ".{}", self.0)
        } else {
            write!(f, "[{}]", Quoted(self.0))
        }
    }
}

/// A number literal that reads back to the same double.
struct Number(f64);

impl Display for Number {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n.is_nan() {
            f.write_str("NaN")
        } else if n.is_infinite() {
            f.write_str(if n > 0.0 { "Infinity" } else { "-Infinity" })
        } else if n != 0.0 && !(1e-6..1e21).contains(&n.abs()) {
            // Rust's `{:e}` and `{}` both give the shortest digits that read back exactly.
            write!(f, "{n:e}")
        } else {
            write!(f, "{n}")
        }
    }
}

/// The number literal formatting of [`Literal::Number`], for messages that quote a count.
pub(crate) fn number(n: f64) -> impl Display {
    Number(n)
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Undefined => f.write_str("undefined"),
            Literal::Null => f.write_str("null"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Number(n) => Number(*n).fmt(f),
            Literal::String(s) => Quoted(s).fmt(f),
        }
    }
}

impl Display for UnaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnaryOp::Neg => "-",
            UnaryOp::Plus => "+",
            UnaryOp::BitNot => "~",
            UnaryOp::Not => "NOT",
        })
    }
}

impl Display for BinaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Concat => "||",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::UShr => ">>>",
            BinaryOp::Eq => "=",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
            BinaryOp::Coalesce => "??",
        })
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}

impl Display for ExprKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ExprKind::Literal(l) => l.fmt(f),
            ExprKind::Param(name) => write!(f, "@{name}"),
            ExprKind::Ident(name) => f.write_str(name),
            ExprKind::Property(base, name) => write!(f, "{}{}", at(base, POSTFIX), Member(name)),
            ExprKind::Index(base, index) => write!(f, "{}[{index}]", at(base, POSTFIX)),
            ExprKind::Unary(op, operand) => unary(f, *op, operand),
            ExprKind::Binary(op @ (BinaryOp::And | BinaryOp::Or), ..) => chain(f, *op, self),
            ExprKind::Binary(op, left, right) => {
                let p = binary_precedence(*op);
                write!(f, "{} {op} {}", at(left, p), at(right, p + 1))
            }
            ExprKind::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let bound = prec::EQUALITY + 1;
                write!(
                    f,
                    "{} {}BETWEEN {} AND {}",
                    at(expr, prec::EQUALITY),
                    not(*negated),
                    at(low, bound),
                    at(high, bound)
                )
            }
            ExprKind::In {
                expr,
                list,
                negated,
            } => write!(
                f,
                "{} {}IN ({})",
                at(expr, prec::EQUALITY),
                not(*negated),
                List(list)
            ),
            ExprKind::Like {
                expr,
                pattern,
                escape,
                negated,
            } => {
                write!(
                    f,
                    "{} {}LIKE {}",
                    at(expr, prec::EQUALITY),
                    not(*negated),
                    at(pattern, prec::EQUALITY + 1)
                )?;
                match escape {
                    Some(e) => write!(f, " ESCAPE {e}"),
                    None => Ok(()),
                }
            }
            ExprKind::Ternary(cond, then, otherwise) => {
                write!(f, "{} ? {then} : {otherwise}", at(cond, prec::COALESCE))
            }
            ExprKind::Call { name, args, udf } => {
                let prefix = if *udf { "udf." } else { "" };
                write!(f, "{prefix}{name}({})", List(args))
            }
            ExprKind::Object(members) => {
                f.write_char('{')?;
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if is_name(key) {
                        f.write_str(key)?;
                    } else {
                        Quoted(key).fmt(f)?;
                    }
                    write!(f, ": {value}")?;
                }
                f.write_char('}')
            }
            ExprKind::Array(items) => write!(f, "[{}]", List(items)),
            ExprKind::Exists(q) => write!(f, "EXISTS({q})"),
            ExprKind::ArraySubquery(q) => write!(f, "ARRAY({q})"),
            ExprKind::Subquery(q) => write!(f, "({q})"),
        }
    }
}

fn not(negated: bool) -> &'static str {
    if negated { "NOT " } else { "" }
}

/// A prefix operator and its operand. `NOT` takes anything down to its own level (`NOT a = b`
/// is `NOT (a = b)`), the others a postfix expression or another prefix operator.
fn unary(f: &mut Formatter<'_>, op: UnaryOp, operand: &Expr) -> fmt::Result {
    match op {
        UnaryOp::Not => write!(f, "NOT {}", at(operand, prec::NOT)),
        _ => {
            // `--` would start a comment.
            let minus_minus = op == UnaryOp::Neg
                && match operand.kind {
                    ExprKind::Unary(UnaryOp::Neg, _) => true,
                    ExprKind::Literal(Literal::Number(n)) => n.is_sign_negative() && !n.is_nan(),
                    _ => false,
                };
            let space = if minus_minus { " " } else { "" };
            write!(f, "{op}{space}{}", at(operand, prec::UNARY))
        }
    }
}

/// `e`, a run of one AND or OR, written flat: `a AND b AND (c AND d)`. The parser turns a run
/// of more than [`BALANCE_ABOVE`] operands into a balanced tree, so at most that many are
/// written in one run and whatever is left of them goes in parentheses.
fn chain(f: &mut Formatter<'_>, op: BinaryOp, e: &ExprKind) -> fmt::Result {
    let p = binary_precedence(op);
    let mut rights = Vec::new();
    let mut first = e;
    while let ExprKind::Binary(o, left, right) = first
        && *o == op
        && rights.len() + 1 < BALANCE_ABOVE
    {
        rights.push(right);
        first = &left.kind;
    }
    // Still a node of the run: the run was cut, so its rest must stay one operand.
    let min = match first {
        ExprKind::Binary(o, ..) if *o == op => p + 1,
        _ => p,
    };
    Operand { kind: first, min }.fmt(f)?;
    for right in rights.iter().rev() {
        write!(f, " {op} {}", at(right, p + 1))?;
    }
    Ok(())
}

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.select.fmt(f)?;
        if let Some(from) = &self.from {
            write!(f, " {from}")?;
        }
        for join in &self.joins {
            write!(f, " {join}")?;
        }
        if let Some(filter) = &self.filter {
            write!(f, " WHERE {filter}")?;
        }
        if !self.group_by.is_empty() {
            write!(f, " GROUP BY {}", List(&self.group_by))?;
        }
        if !self.order_by.is_empty() {
            f.write_str(" ORDER BY ")?;
            separated(f, &self.order_by, ", ")?;
        }
        if let Some(ol) = &self.offset_limit {
            write!(f, " {ol}")?;
        }
        Ok(())
    }
}

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT ")?;
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        if let Some(top) = &self.top {
            write!(f, "TOP {top} ")?;
        }
        self.kind.fmt(f)
    }
}

impl Display for SelectKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SelectKind::Star => f.write_char('*'),
            SelectKind::Value(e) => write!(f, "VALUE {e}"),
            SelectKind::Items(items) => separated(f, items, ", "),
        }
    }
}

impl Display for SelectItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.expr.fmt(f)?;
        alias(f, self.alias.as_deref())
    }
}

/// ` AS name`, if there is a name.
fn alias(f: &mut Formatter<'_>, name: Option<&str>) -> fmt::Result {
    match name {
        Some(name) => write!(f, " AS {name}"),
        None => Ok(()),
    }
}

/// An alias worth writing: not one the parser makes up for an unaliased subquery (`$0`,
/// `$n`; no query can spell `$`).
fn written(alias: &str) -> Option<&str> {
    (!alias.starts_with('$')).then_some(alias)
}

impl Display for From {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "FROM {}", self.kind)
    }
}

impl Display for FromKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            FromKind::Container {
                name,
                path,
                alias: name_as,
            } => {
                container_path(name, path).fmt(f)?;
                alias(f, name_as.as_deref())
            }
            FromKind::In { alias, expr } => write!(f, "{alias} IN {}", at(expr, POSTFIX)),
            FromKind::Subquery { query, alias: name } => {
                write!(f, "({query})")?;
                alias(f, written(name))
            }
        }
    }
}

struct ContainerPath<'a> {
    name: &'a str,
    path: &'a [PathStep],
}

impl Display for ContainerPath<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        self.path.iter().try_for_each(|step| step.fmt(f))
    }
}

impl Display for PathStep {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            PathStep::Property(name) => Member(name).fmt(f),
            PathStep::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl Display for Join {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.source {
            JoinSource::In(_) => write!(f, "JOIN {} IN {}", self.alias, self.source),
            JoinSource::Value(path) => {
                write!(f, "JOIN {}", self.source)?;
                let given = written(&self.alias).filter(|a| last_property(path) != Some(*a));
                alias(f, given)
            }
            JoinSource::Subquery(_) => {
                write!(f, "JOIN {}", self.source)?;
                alias(f, written(&self.alias))
            }
        }
    }
}

/// The source of a JOIN as it follows `JOIN alias IN` or `JOIN`.
impl Display for JoinSource {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            JoinSource::In(e) | JoinSource::Value(e) => at(e, POSTFIX).fmt(f),
            JoinSource::Subquery(q) => write!(f, "({q})"),
        }
    }
}

impl Display for OrderItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.rank {
            return write!(f, "RANK {}", self.expr);
        }
        self.expr.fmt(f)?;
        if self.descending {
            f.write_str(" DESC")
        } else if self.direction_given {
            f.write_str(" ASC")
        } else {
            Ok(())
        }
    }
}

impl Display for OffsetLimit {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "OFFSET {} LIMIT {}", self.offset, self.limit)
    }
}

#[cfg(test)]
mod corpus;
#[cfg(test)]
mod tests;
