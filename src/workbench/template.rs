//! Templates: the JSON values of a suite (ids, partition keys, bodies, patch and batch
//! operations, query parameters) with `{expression}`s in their strings, filled in from the
//! iteration's parameters and the results of earlier steps.
//!
//! An expression names a variable and a path into it: `{postId}`, `{post.userId}`,
//! `{item.postId}`, `{products.*.id}` (`*` maps the rest of the path over an array). A
//! string that is exactly one expression becomes the expression's JSON value (a number
//! stays a number, an array an array); elsewhere the value is written into the string
//! (strings as they are, anything else as JSON). `{{` and `}}` stand for literal braces.
//! A filter after `|` transforms the value: `{content|summary}` is the short form of a
//! text that the blog's copies of posts carry (what an application would cut itself).

use std::fmt;

use serde_json::{Map, Value};

use crate::error::json_type_name;

/// A parsed expression: a variable and a path into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub root: String,
    pub path: Vec<Seg>,
    pub filter: Option<Filter>,
}

/// A transformation of an expression's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// A text cut at a word boundary to the samples' summary length, as the blog v3 copies
    /// of posts hold their content ([`crate::samples::blog::summary`]).
    Summary,
}

impl Filter {
    const NAMES: &'static [(&'static str, Filter)] = &[("summary", Filter::Summary)];

    fn apply(self, v: Value) -> Result<Value, String> {
        match (self, v) {
            (Filter::Summary, Value::String(s)) => {
                Ok(Value::String(crate::samples::blog::summary(&s)))
            }
            (Filter::Summary, other) => Err(format!(
                "summary needs a string, found {}",
                json_type_name(&other)
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    Field(String),
    Index(usize),
    /// Every element of an array.
    All,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.root)?;
        for s in &self.path {
            match s {
                Seg::Field(n) => write!(f, ".{n}")?,
                Seg::Index(i) => write!(f, ".{i}")?,
                Seg::All => f.write_str(".*")?,
            }
        }
        if let Some(filter) = self.filter {
            let name = Filter::NAMES
                .iter()
                .find(|(_, f)| *f == filter)
                .map_or("?", |(n, _)| n);
            write!(f, "|{name}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Lit(String),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// Anything without expressions, kept as is.
    Lit(Value),
    /// A string that is exactly one expression: its JSON value.
    Whole(Expr),
    /// A string with expressions inside: interpolated.
    Str(Vec<Part>),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

/// A compiled template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template(Node);

/// Where variables come from.
pub trait Scope {
    fn var(&self, name: &str) -> Option<&Value>;
}

impl Template {
    /// Compiles a JSON value; errors name the bad string.
    pub fn parse(v: &Value) -> Result<Template, String> {
        node(v).map(Template)
    }

    /// Every variable the template reads.
    pub fn vars(&self) -> Vec<&str> {
        fn walk<'a>(n: &'a Node, out: &mut Vec<&'a str>) {
            match n {
                Node::Lit(_) => {}
                Node::Whole(e) => out.push(&e.root),
                Node::Str(parts) => out.extend(parts.iter().filter_map(|p| match p {
                    Part::Expr(e) => Some(e.root.as_str()),
                    Part::Lit(_) => None,
                })),
                Node::Array(items) => items.iter().for_each(|i| walk(i, out)),
                Node::Object(members) => members.iter().for_each(|(_, m)| walk(m, out)),
            }
        }
        let mut out = Vec::new();
        walk(&self.0, &mut out);
        out
    }

    /// The template filled in from `scope`.
    pub fn eval(&self, scope: &dyn Scope) -> Result<Value, String> {
        eval_node(&self.0, scope)
    }

    /// The template filled in, as a string (an id): strings as they are, other JSON
    /// scalars written out.
    pub fn eval_string(&self, scope: &dyn Scope) -> Result<String, String> {
        match self.eval(scope)? {
            Value::String(s) => Ok(s),
            v @ (Value::Number(_) | Value::Bool(_)) => Ok(v.to_string()),
            other => Err(format!("expected a string, got {other}")),
        }
    }
}

fn node(v: &Value) -> Result<Node, String> {
    Ok(match v {
        Value::String(s) => {
            let parts = parse_string(s)?;
            match parts.as_slice() {
                [] => Node::Lit(Value::String(String::new())),
                [Part::Expr(e)] => Node::Whole(e.clone()),
                [Part::Lit(l)] => Node::Lit(Value::String(l.clone())),
                _ => Node::Str(parts),
            }
        }
        Value::Array(items) => {
            let nodes = items.iter().map(node).collect::<Result<Vec<_>, _>>()?;
            if nodes.iter().all(|n| matches!(n, Node::Lit(_))) {
                Node::Lit(v.clone())
            } else {
                Node::Array(nodes)
            }
        }
        Value::Object(members) => {
            let nodes = members
                .iter()
                .map(|(k, m)| Ok((k.clone(), node(m)?)))
                .collect::<Result<Vec<_>, String>>()?;
            if nodes.iter().all(|(_, n)| matches!(n, Node::Lit(_))) {
                Node::Lit(v.clone())
            } else {
                Node::Object(nodes)
            }
        }
        other => Node::Lit(other.clone()),
    })
}

fn parse_string(s: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut lit = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(['{', '}']) {
        lit.push_str(&rest[..i]);
        let brace = if rest[i..].starts_with('{') { '{' } else { '}' };
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix(brace) {
            lit.push(brace);
            rest = tail;
            continue;
        }
        if brace == '}' {
            return Err(format!(
                "{s:?}: unmatched }} (write }}}} for a literal brace)"
            ));
        }
        let end = after
            .find('}')
            .ok_or_else(|| format!("{s:?}: unclosed {{ (write {{{{ for a literal brace)"))?;
        let text = &after[..end];
        let expr = parse_expr(text.trim()).map_err(|why| format!("{s:?}: {{{text}}} {why}"))?;
        if !lit.is_empty() {
            parts.push(Part::Lit(std::mem::take(&mut lit)));
        }
        parts.push(Part::Expr(expr));
        rest = &after[end + 1..];
    }
    lit.push_str(rest);
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    Ok(parts)
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// `name(.field|.index|.*)*(|filter)?`.
pub fn parse_expr(text: &str) -> Result<Expr, String> {
    let (text, filter) = match text.split_once('|') {
        None => (text, None),
        Some((text, name)) => {
            let name = name.trim();
            let filter = Filter::NAMES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, f)| *f)
                .ok_or_else(|| {
                    let known: Vec<&str> = Filter::NAMES.iter().map(|(n, _)| *n).collect();
                    format!(
                        "has an unknown filter {name:?} (filters: {})",
                        known.join(", ")
                    )
                })?;
            (text.trim(), Some(filter))
        }
    };
    let mut segs = text.split('.');
    let root = segs.next().unwrap_or_default();
    if !is_name(root) {
        return Err(
            "is not a variable: expressions look like {name}, {name.field}, {list.*.field}".into(),
        );
    }
    let path = segs
        .map(|s| {
            if s == "*" {
                Ok(Seg::All)
            } else if let Ok(i) = s.parse::<usize>() {
                Ok(Seg::Index(i))
            } else if !s.is_empty() && !s.contains(char::is_whitespace) {
                Ok(Seg::Field(s.to_string()))
            } else {
                Err(format!("has an empty or invalid path segment {s:?}"))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Expr {
        root: root.to_string(),
        path,
        filter,
    })
}

fn eval_node(n: &Node, scope: &dyn Scope) -> Result<Value, String> {
    Ok(match n {
        Node::Lit(v) => v.clone(),
        Node::Whole(e) => eval_expr(e, scope)?,
        Node::Str(parts) => {
            let mut s = String::new();
            for p in parts {
                match p {
                    Part::Lit(l) => s.push_str(l),
                    Part::Expr(e) => match eval_expr(e, scope)? {
                        Value::String(v) => s.push_str(&v),
                        other => s.push_str(&other.to_string()),
                    },
                }
            }
            Value::String(s)
        }
        Node::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| eval_node(i, scope))
                .collect::<Result<_, _>>()?,
        ),
        Node::Object(members) => {
            let mut out = Map::with_capacity(members.len());
            for (k, m) in members {
                out.insert(k.clone(), eval_node(m, scope)?);
            }
            Value::Object(out)
        }
    })
}

pub fn eval_expr(e: &Expr, scope: &dyn Scope) -> Result<Value, String> {
    let root = scope
        .var(&e.root)
        .ok_or_else(|| format!("{{{e}}}: there is no variable {:?} here", e.root))?;
    let v = walk(root, &e.path).map_err(|why| format!("{{{e}}}: {why}"))?;
    match e.filter {
        Some(f) => f.apply(v).map_err(|why| format!("{{{e}}}: {why}")),
        None => Ok(v),
    }
}

fn walk(v: &Value, path: &[Seg]) -> Result<Value, String> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(v.clone());
    };
    match (first, v) {
        (Seg::All, Value::Array(items)) => Ok(Value::Array(
            items
                .iter()
                .map(|i| walk(i, rest))
                .collect::<Result<_, _>>()?,
        )),
        (Seg::All, other) => Err(format!("* needs an array, found {}", json_type_name(other))),
        (Seg::Index(i), Value::Array(items)) => match items.get(*i) {
            Some(item) => walk(item, rest),
            None => Err(format!(
                "index {i} is past the end ({} elements)",
                items.len()
            )),
        },
        (Seg::Field(name), Value::Object(o)) => match o.get(name) {
            Some(m) => walk(m, rest),
            None => Err(format!("the object has no field {name:?}")),
        },
        (seg, other) => Err(format!(
            "cannot take {} of {}",
            match seg {
                Seg::Field(n) => format!("field {n:?}"),
                Seg::Index(i) => format!("index {i}"),
                Seg::All => "*".into(),
            },
            json_type_name(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;

    struct Vars(HashMap<String, Value>);
    impl Scope for Vars {
        fn var(&self, name: &str) -> Option<&Value> {
            self.0.get(name)
        }
    }

    fn vars() -> Vars {
        Vars(HashMap::from([
            ("postId".to_string(), json!("p-1")),
            ("n".to_string(), json!(3)),
            (
                "posts".to_string(),
                json!([{"id": "a", "userId": "u1"}, {"id": "b", "userId": "u2"}]),
            ),
        ]))
    }

    fn eval(v: Value) -> Result<Value, String> {
        Template::parse(&v)?.eval(&vars())
    }

    #[test]
    fn fills_in_values_and_strings() {
        assert_eq!(eval(json!("{postId}")).unwrap(), json!("p-1"));
        assert_eq!(eval(json!("{n}")).unwrap(), json!(3));
        assert_eq!(
            eval(json!("post {postId}: {n}")).unwrap(),
            json!("post p-1: 3")
        );
        assert_eq!(eval(json!("{posts.*.id}")).unwrap(), json!(["a", "b"]));
        assert_eq!(eval(json!("{posts.1.userId}")).unwrap(), json!("u2"));
        assert_eq!(
            eval(json!({"id": "{postId}", "tags": ["x", "{n}"], "k": 1})).unwrap(),
            json!({"id": "p-1", "tags": ["x", 3], "k": 1})
        );
        assert_eq!(eval(json!("{{literal}}")).unwrap(), json!("{literal}"));
        assert_eq!(eval(json!("{postId | summary}")).unwrap(), json!("p-1"));
        let long = Vars(HashMap::from([(
            "t".to_string(),
            json!("word ".repeat(100)),
        )]));
        let cut = Template::parse(&json!("{t|summary}"))
            .unwrap()
            .eval(&long)
            .unwrap();
        assert_eq!(
            cut,
            json!(crate::samples::blog::summary(&"word ".repeat(100)))
        );
        assert!(cut.as_str().unwrap().ends_with('…'));
    }

    #[test]
    fn lists_variables_and_reports_mistakes() {
        let t = Template::parse(&json!({"a": "{x.y}", "b": ["{z}"]})).unwrap();
        assert_eq!(t.vars(), ["x", "z"]);
        assert!(
            Template::parse(&json!("{post"))
                .unwrap_err()
                .contains("unclosed")
        );
        assert!(
            Template::parse(&json!("{1abc}"))
                .unwrap_err()
                .contains("not a variable")
        );
        assert!(
            eval(json!("{missing}"))
                .unwrap_err()
                .contains("no variable")
        );
        assert!(
            eval(json!("{posts.0.nope}"))
                .unwrap_err()
                .contains("no field")
        );
        assert!(
            eval(json!("{postId.*}"))
                .unwrap_err()
                .contains("needs an array")
        );
        assert!(
            Template::parse(&json!("{postId|upper}"))
                .unwrap_err()
                .contains("unknown filter \"upper\"")
        );
        assert!(
            eval(json!("{n|summary}"))
                .unwrap_err()
                .contains("needs a string")
        );
    }
}
