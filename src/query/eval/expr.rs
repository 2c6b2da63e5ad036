//! Expression evaluation: operators, property access, constructors, function calls.
//!
//! Semantics follow reference/cosmos.md §6.2: arithmetic and comparisons on mismatched types
//! give `undefined`; AND/OR are three-valued (false wins AND, true wins OR); only exactly
//! `true` passes a filter; bitwise operators convert to 32-bit integers like JavaScript.
//! Subqueries and aggregates are resolved through the [`Scope`] the executor provides.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::query::eval::functions::array::contains_matches;
use crate::query::eval::functions::{self, FnContext, FnKind};
use crate::query::eval::value::{Val, sql_cmp, sql_eq, sql_ne};
use crate::query::syntax::ast::{BinaryOp, Expr, ExprKind, Literal, Query, UnaryOp};

/// Runs a correlated subquery against the current bindings, handing each result to the
/// sink until the sink breaks: EXISTS, a scalar subquery and ARRAY_CONTAINS over
/// `ARRAY(subquery)` stop it as soon as their answer is known.
pub type SubqueryFn<'a> = dyn Fn(&Query, &[(String, Val)], &mut Sink) + 'a;

/// Takes a subquery's results one at a time; `Break` once it needs no more.
pub type Sink<'s> = dyn FnMut(Val) -> ControlFlow<()> + 's;

/// Query parameters by name, as evaluation looks them up (per row: a cheap hash).
pub type Params =
    HashMap<String, Val, std::hash::BuildHasherDefault<crate::store::index::FoldHasher>>;

/// What an expression can see while it is evaluated.
pub struct Scope<'a> {
    /// Bound names (FROM and JOIN aliases, outer aliases for correlated subqueries), innermost last.
    pub bindings: &'a [(String, Val)],
    pub params: &'a Params,
    pub ctx: &'a FnContext,
    /// Values of aggregate calls for the current group, keyed by the call's address in the plan.
    pub aggregates: Option<&'a HashMap<usize, Val>>,
    pub subquery: &'a SubqueryFn<'a>,
}

impl Scope<'_> {
    fn lookup(&self, name: &str) -> Val {
        self.bindings
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
}

/// The key an aggregate call's value is stored under.
pub fn aggregate_key(e: &Expr) -> usize {
    e as *const Expr as usize
}

/// The value of `e` in scope `s`. One match over the expression kinds, as the tree's shape
/// is: each arm is a line or two, and splitting the match would only scatter them.
pub fn eval(e: &Expr, s: &Scope) -> Val {
    match &e.kind {
        ExprKind::Literal(l) => literal(l),
        ExprKind::Param(name) => s.params.get(name).cloned().unwrap_or_default(),
        ExprKind::Ident(name) => s.lookup(name),
        ExprKind::Property(base, name) => eval(base, s).get(name),
        ExprKind::Index(base, index) => {
            let b = eval(base, s);
            match eval(index, s) {
                Val::Num(n) => b.index(n),
                Val::Str(k) => b.get(&k),
                _ => Val::Undefined,
            }
        }
        ExprKind::Unary(op, x) => unary(*op, eval(x, s)),
        ExprKind::Binary(BinaryOp::And, a, b) => and(eval(a, s), || eval(b, s)),
        ExprKind::Binary(BinaryOp::Or, a, b) => or(eval(a, s), || eval(b, s)),
        ExprKind::Binary(BinaryOp::Coalesce, a, b) => match eval(a, s) {
            Val::Undefined => eval(b, s),
            v => v,
        },
        ExprKind::Binary(op, a, b) => binary(*op, &eval(a, s), &eval(b, s)),
        ExprKind::Between {
            expr,
            low,
            high,
            negated,
        } => {
            let x = eval(expr, s);
            let ge = sql_cmp(&x, &eval(low, s)).map(|o| o != Ordering::Less);
            let le = sql_cmp(&x, &eval(high, s)).map(|o| o != Ordering::Greater);
            let r = match (ge, le) {
                (Some(a), Some(b)) => Val::Bool(a && b),
                _ => Val::Undefined,
            };
            if *negated { not(r) } else { r }
        }
        ExprKind::In {
            expr,
            list,
            negated,
        } => {
            let x = eval(expr, s);
            let mut result = Val::Bool(false);
            for item in list {
                match sql_eq(&x, &eval(item, s)) {
                    Some(true) => {
                        result = Val::Bool(true);
                        break;
                    }
                    Some(false) => {}
                    None => {}
                }
            }
            if x.is_undefined() {
                result = Val::Undefined;
            }
            if *negated { not(result) } else { result }
        }
        ExprKind::Like {
            expr,
            pattern,
            escape,
            negated,
        } => {
            let r = match (eval(expr, s), eval(pattern, s)) {
                (Val::Str(text), Val::Str(pat)) => {
                    let esc = match escape.as_ref().map(|e| eval(e, s)) {
                        None => None,
                        Some(Val::Str(e)) if e.chars().count() == 1 => e.chars().next(),
                        Some(_) => return Val::Undefined,
                    };
                    Val::Bool(like(&text, &pat, esc))
                }
                _ => Val::Undefined,
            };
            if *negated { not(r) } else { r }
        }
        ExprKind::Ternary(c, a, b) => match eval(c, s) {
            Val::Bool(true) => eval(a, s),
            Val::Bool(false) => eval(b, s),
            _ => Val::Undefined,
        },
        ExprKind::Call { name, args, udf } => {
            if *udf {
                let values: Vec<Val> = args.iter().map(|a| eval(a, s)).collect();
                return super::udf::call(name, &values);
            }
            let Some(spec) = functions::lookup(name) else {
                return Val::Undefined;
            };
            if let ("ARRAY_CONTAINS", [array, rest @ ..]) = (name.as_str(), args.as_slice())
                && let ExprKind::ArraySubquery(q) = &array.kind
            {
                return array_contains_subquery(q, rest, s);
            }
            if spec.kind == FnKind::Aggregate {
                return s
                    .aggregates
                    .and_then(|a| a.get(&aggregate_key(e)).cloned())
                    .unwrap_or_default();
            }
            // Most calls take a few arguments: evaluate them into a stack array.
            if args.len() <= 3 {
                let mut values: [Val; 3] = Default::default();
                for (slot, a) in values.iter_mut().zip(args) {
                    *slot = eval(a, s);
                }
                return (spec.eval)(&values[..args.len()], s.ctx);
            }
            let values: Vec<Val> = args.iter().map(|a| eval(a, s)).collect();
            (spec.eval)(&values, s.ctx)
        }
        // A member assigned undefined is not part of the object (scalar-expressions.md), so
        // it takes no part in equality, IN, ARRAY_CONTAINS or the set functions either.
        ExprKind::Object(members) => Val::obj(
            members
                .iter()
                .map(|(k, v)| (k.as_str().into(), eval(v, s)))
                .filter(|(_, v)| !v.is_undefined())
                .collect(),
        ),
        ExprKind::Array(items) => Val::arr(
            items
                .iter()
                .map(|v| eval(v, s))
                .filter(|v| !v.is_undefined())
                .collect(),
        ),
        ExprKind::Exists(q) => {
            let mut found = false;
            (s.subquery)(q, s.bindings, &mut |_| {
                found = true;
                ControlFlow::Break(())
            });
            Val::Bool(found)
        }
        ExprKind::ArraySubquery(q) => Val::arr(subquery_values(q, s)),
        ExprKind::Subquery(q) => {
            let mut first = Val::Undefined;
            (s.subquery)(q, s.bindings, &mut |v| {
                first = v;
                ControlFlow::Break(())
            });
            first
        }
    }
}

/// Every result of a correlated subquery.
pub fn subquery_values(q: &Query, s: &Scope) -> Vec<Val> {
    let mut out = Vec::new();
    (s.subquery)(q, s.bindings, &mut |v| {
        out.push(v);
        ControlFlow::Continue(())
    });
    out
}

/// `ARRAY_CONTAINS(ARRAY(q), x [, partial])`, reading the subquery's results only up to
/// the first match (the same answer as building the array first).
fn array_contains_subquery(q: &Query, rest: &[Expr], s: &Scope) -> Val {
    let Some(x) = rest.first().map(|e| eval(e, s)) else {
        return Val::Undefined;
    };
    let partial = match rest.get(1).map(|e| eval(e, s)) {
        None => false,
        Some(Val::Bool(b)) => b,
        Some(_) => return Val::Undefined,
    };
    if x.is_undefined() {
        return Val::Undefined;
    }
    let mut found = false;
    (s.subquery)(q, s.bindings, &mut |item| {
        if contains_matches(&item, &x, partial) {
            found = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    Val::Bool(found)
}

pub fn literal(l: &Literal) -> Val {
    match l {
        Literal::Undefined => Val::Undefined,
        Literal::Null => Val::Null,
        Literal::Bool(b) => Val::Bool(*b),
        Literal::Number(n) => Val::Num(*n),
        Literal::String(s) => Val::Str(s.clone()),
    }
}

fn not(v: Val) -> Val {
    match v {
        Val::Bool(b) => Val::Bool(!b),
        _ => Val::Undefined,
    }
}

/// false wins over undefined; non-booleans are undefined.
fn and(a: Val, b: impl FnOnce() -> Val) -> Val {
    if let Val::Bool(false) = a {
        return Val::Bool(false);
    }
    match (a, b()) {
        (_, Val::Bool(false)) => Val::Bool(false),
        (Val::Bool(true), Val::Bool(true)) => Val::Bool(true),
        _ => Val::Undefined,
    }
}

/// true wins over undefined; non-booleans are undefined.
fn or(a: Val, b: impl FnOnce() -> Val) -> Val {
    if let Val::Bool(true) = a {
        return Val::Bool(true);
    }
    match (a, b()) {
        (_, Val::Bool(true)) => Val::Bool(true),
        (Val::Bool(false), Val::Bool(false)) => Val::Bool(false),
        _ => Val::Undefined,
    }
}

fn unary(op: UnaryOp, v: Val) -> Val {
    match (op, v) {
        (UnaryOp::Not, v) => not(v),
        (UnaryOp::Neg, Val::Num(n)) => Val::Num(-n),
        (UnaryOp::Plus, Val::Num(n)) => Val::Num(n),
        (UnaryOp::BitNot, Val::Num(n)) => Val::Num(!to_int32(n) as f64),
        _ => Val::Undefined,
    }
}

/// JavaScript ToInt32: truncate, wrap modulo 2^32, reinterpret as signed.
pub fn to_int32(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    let m = n.trunc().rem_euclid(4_294_967_296.0);
    m as u32 as i32
}

fn binary(op: BinaryOp, a: &Val, b: &Val) -> Val {
    use BinaryOp::*;
    match op {
        Eq => sql_eq(a, b).map_or(Val::Undefined, Val::Bool),
        Ne => sql_ne(a, b).map_or(Val::Undefined, Val::Bool),
        Lt | Le | Gt | Ge => match sql_cmp(a, b) {
            Some(o) => Val::Bool(match op {
                Lt => o == Ordering::Less,
                Le => o != Ordering::Greater,
                Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }),
            None => Val::Undefined,
        },
        Concat => match (a, b) {
            (Val::Str(x), Val::Str(y)) => Val::str(format!("{x}{y}")),
            _ => Val::Undefined,
        },
        _ => {
            let (Val::Num(x), Val::Num(y)) = (a, b) else {
                return Val::Undefined;
            };
            let (x, y) = (*x, *y);
            match op {
                Add => Val::Num(x + y),
                Sub => Val::Num(x - y),
                Mul => Val::Num(x * y),
                Div => Val::Num(x / y),
                Mod => Val::Num(x % y),
                BitAnd => Val::Num((to_int32(x) & to_int32(y)) as f64),
                BitOr => Val::Num((to_int32(x) | to_int32(y)) as f64),
                BitXor => Val::Num((to_int32(x) ^ to_int32(y)) as f64),
                Shl => Val::Num(to_int32(x).wrapping_shl(to_int32(y) as u32 & 31) as f64),
                Shr => Val::Num(to_int32(x).wrapping_shr(to_int32(y) as u32 & 31) as f64),
                UShr => Val::Num(((to_int32(x) as u32) >> (to_int32(y) as u32 & 31)) as f64),
                _ => Val::Undefined,
            }
        }
    }
}

/// LIKE: `%` any run, `_` one character, `[a-f]` / `[^a-f]` sets, an optional escape
/// character that makes the next one literal. Case-sensitive, whole-string match.
pub fn like(text: &str, pattern: &str, escape: Option<char>) -> bool {
    let t: Vec<char> = text.chars().collect();
    let p = compile_like(pattern, escape);
    // Iterative matcher with backtracking to the last `%` (linear for typical patterns).
    let (mut ti, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && !matches!(p[pi], LikeTok::Any) && p[pi].matches(t[ti]) {
            ti += 1;
            pi += 1;
        } else if pi < p.len() && matches!(p[pi], LikeTok::Any) {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|x| matches!(x, LikeTok::Any))
}

enum LikeTok {
    Any,
    One,
    Char(char),
    Set {
        negated: bool,
        items: Vec<(char, char)>,
    },
}

impl LikeTok {
    fn matches(&self, c: char) -> bool {
        match self {
            LikeTok::Any | LikeTok::One => true,
            LikeTok::Char(x) => *x == c,
            LikeTok::Set { negated, items } => {
                items.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != *negated
            }
        }
    }
}

fn compile_like(pattern: &str, escape: Option<char>) -> Vec<LikeTok> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if Some(c) == escape && i + 1 < chars.len() {
            out.push(LikeTok::Char(chars[i + 1]));
            i += 2;
            continue;
        }
        match c {
            '%' => out.push(LikeTok::Any),
            '_' => out.push(LikeTok::One),
            '[' => {
                if let Some(close) = chars[i + 1..]
                    .iter()
                    .position(|&x| x == ']')
                    .map(|p| p + i + 1)
                {
                    let mut body = &chars[i + 1..close];
                    let negated = body.first() == Some(&'^');
                    if negated {
                        body = &body[1..];
                    }
                    let mut items = Vec::new();
                    let mut j = 0;
                    while j < body.len() {
                        if j + 2 < body.len() && body[j + 1] == '-' {
                            items.push((body[j], body[j + 2]));
                            j += 3;
                        } else {
                            items.push((body[j], body[j]));
                            j += 1;
                        }
                    }
                    out.push(LikeTok::Set { negated, items });
                    i = close + 1;
                    continue;
                }
                out.push(LikeTok::Char('['));
            }
            other => out.push(LikeTok::Char(other)),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like("Contoso", "Con%", None));
        assert!(like("Contoso", "%tos_", None));
        assert!(!like("Contoso", "con%", None));
        assert!(like("b", "[a-c]", None));
        assert!(!like("d", "[a-c]", None));
        assert!(like("d", "[^a-c]", None));
        assert!(like("50%", "50!%", Some('!')));
        assert!(!like("500", "50!%", Some('!')));
        assert!(like("", "%", None));
        assert!(like("abc", "a%c", None));
        assert!(!like("abcd", "a%c", None));
    }

    #[test]
    fn int32_conversion_is_javascript_like() {
        assert_eq!(to_int32(4294967296.0 + 5.0), 5);
        assert_eq!(to_int32(-1.5), -1);
        assert_eq!(to_int32(2147483648.0), -2147483648);
        assert_eq!(to_int32(f64::NAN), 0);
    }

    #[test]
    fn three_valued_logic() {
        let u = || Val::Undefined;
        assert_eq!(and(Val::Bool(false), u), Val::Bool(false));
        assert_eq!(and(Val::Undefined, || Val::Bool(false)), Val::Bool(false));
        assert_eq!(and(Val::Bool(true), u), Val::Undefined);
        assert_eq!(or(Val::Bool(true), u), Val::Bool(true));
        assert_eq!(or(Val::Undefined, || Val::Bool(true)), Val::Bool(true));
        assert_eq!(or(Val::Bool(false), u), Val::Undefined);
        assert_eq!(not(Val::Undefined), Val::Undefined);
        assert_eq!(and(Val::Num(1.0), || Val::Bool(true)), Val::Undefined);
    }
}
