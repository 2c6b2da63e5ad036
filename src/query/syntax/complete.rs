//! Completion for a half-typed query: what may come at the cursor. After `alias.` it offers
//! the property names seen at that path in a sample of the container's documents
//! ([`Schema`]); after `@` the query's parameters; elsewhere the query's aliases, keywords
//! and built-in functions. Everything is narrowed by the word being typed.
//!
//! It works on text that does not parse yet: aliases come from the tokens around `FROM`,
//! `JOIN` and `IN`, and a path rooted in an unknown name is read from the document root
//! (people often write `SELECT c.` before the FROM clause).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::query::syntax::lexer::{self, Keyword, Token, TokenKind};

/// At most this many names are kept per object in a [`Schema`], so documents used as maps
/// (keys that are ids) cannot make it grow without bound.
const MAX_PROPERTIES: usize = 256;
/// Nesting deeper than this is not recorded.
const MAX_DEPTH: usize = 8;
/// At most this many candidates are returned.
const MAX_CANDIDATES: usize = 64;

/// The property paths seen in a sample of documents and how often each was present, and
/// the container's user-defined functions (offered after `udf.`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    root: Node,
    udfs: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Node {
    /// How many of the sampled values (documents, or array elements) held this one.
    seen: usize,
    /// The JSON types seen, as [`TYPE_NAMES`] bits.
    types: u8,
    properties: BTreeMap<String, Node>,
    /// What the elements hold, when this is an array.
    elements: Option<Box<Node>>,
}

const TYPE_NAMES: [&str; 6] = ["null", "boolean", "number", "string", "array", "object"];

impl Node {
    fn add(&mut self, value: &Value, depth: usize) {
        self.seen += 1;
        let bit = match value {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
        };
        self.types |= 1 << bit;
        if depth >= MAX_DEPTH {
            return;
        }
        match value {
            Value::Object(map) => {
                for (name, v) in map {
                    if self.properties.len() >= MAX_PROPERTIES
                        && !self.properties.contains_key(name)
                    {
                        continue;
                    }
                    self.properties
                        .entry(name.clone())
                        .or_default()
                        .add(v, depth + 1);
                }
            }
            Value::Array(items) => {
                let elements = self.elements.get_or_insert_with(Default::default);
                for v in items {
                    elements.add(v, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn type_names(&self) -> String {
        TYPE_NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.types & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join("|")
    }

    fn at(&self, steps: &[Step]) -> Option<&Node> {
        steps.iter().try_fold(self, |node, step| match step {
            Step::Property(name) => node.properties.get(name),
            Step::Element => node.elements.as_deref(),
        })
    }
}

impl Schema {
    /// The schema of `documents` (stored JSON); text that is not a JSON object is skipped.
    pub fn from_documents<'a>(documents: impl IntoIterator<Item = &'a [u8]>) -> Schema {
        let mut root = Node::default();
        for doc in documents {
            if let Ok(v @ Value::Object(_)) = serde_json::from_slice::<Value>(doc) {
                root.add(&v, 0);
            }
        }
        Schema {
            root,
            udfs: Vec::new(),
        }
    }

    /// The schema with the container's UDF names, which complete `udf.` as calls.
    pub fn with_udfs(mut self, names: Vec<String>) -> Schema {
        self.udfs = names;
        self
    }

    /// How many documents the schema was built from.
    pub fn documents(&self) -> usize {
        self.root.seen
    }
}

/// One step of a path below an alias.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Property(String),
    /// Any element of an array (`[0]`, or what `x IN path` iterates).
    Element,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateKind {
    Property,
    Alias,
    Parameter,
    Keyword,
    Function,
}

impl CandidateKind {
    /// A short tag for lists.
    pub fn tag(self) -> &'static str {
        match self {
            CandidateKind::Property => "prop",
            CandidateKind::Alias => "alias",
            CandidateKind::Parameter => "param",
            CandidateKind::Keyword => "kw",
            CandidateKind::Function => "fn",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What the list shows.
    pub label: String,
    /// What replaces the text from `start` to the cursor.
    pub insert: String,
    /// Where the replaced text begins (a character offset): the typed word's start, or the
    /// dot before it for a property completed as `["odd name"]`.
    pub start: usize,
    pub kind: CandidateKind,
    /// Types and presence of a property, arity of a function, what an alias stands for.
    pub detail: String,
}

/// What may replace the word before the cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Where the typed word begins (a character offset).
    pub start: usize,
    /// The word typed so far (what the candidates were narrowed by).
    pub typed: String,
    pub candidates: Vec<Candidate>,
}

/// Where the cursor stands.
#[derive(Debug, Clone, PartialEq)]
enum Context {
    /// After `root.steps.` (or `root["…"].`): a property of that path.
    Path { root: String, steps: Vec<Step> },
    /// After `@`.
    Parameter,
    /// Anywhere else in code.
    Word,
}

/// The completions at `cursor` (a character offset into `text`), or `None` inside a string,
/// a comment or a number, where nothing completes.
pub fn complete(text: &str, cursor: usize, schema: &Schema) -> Option<Completion> {
    let chars: Vec<char> = text.chars().collect();
    let cursor = cursor.min(chars.len());
    if !in_code(&chars[..cursor]) {
        return None;
    }
    let start = (0..cursor)
        .rev()
        .take_while(|&i| is_word_char(chars[i]))
        .last()
        .unwrap_or(cursor);
    let typed: String = chars[start..cursor].iter().collect();
    if typed.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let context = match start.checked_sub(1).map(|i| chars[i]) {
        Some('@') => Context::Parameter,
        Some('.') => {
            let (root, steps) = path_before(&chars[..start - 1])?;
            Context::Path { root, steps }
        }
        _ => Context::Word,
    };
    // The word being typed is left out: in `FROM c ord|` it is no alias yet.
    let rest: String = chars[..start].iter().chain(&chars[cursor..]).collect();
    let bindings = bindings(&rest, &chars[..start]);
    let mut candidates = match context {
        // `udf.` names a user-defined function, unless the query binds an alias `udf`.
        Context::Path { root, steps }
            if root == "udf" && steps.is_empty() && !bindings.iter().any(|b| b.alias == root) =>
        {
            udfs(&schema.udfs, &typed, start)
        }
        // A path the sample never saw has nothing to offer (it may still be right).
        Context::Path { root, steps } => resolve(&bindings, &root, &steps, schema)
            .map_or_else(Vec::new, |node| properties(node, &typed, start)),
        Context::Parameter => parameters(text, &typed, start),
        Context::Word => words(&bindings, &typed, start),
    };
    candidates.truncate(MAX_CANDIDATES);
    Some(Completion {
        start,
        typed,
        candidates,
    })
}

/// Whether `c` can be part of a name (an identifier, a property, a parameter): what
/// completion narrows by, and what the editor moves over by word.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(is_word_char)
        && Keyword::lookup(name).is_none()
        && !["true", "false", "null", "undefined"]
            .iter()
            .any(|w| w.eq_ignore_ascii_case(name))
}

/// Where the string literal or `--` comment starting at `i` ends (just past it), or `None`
/// when none starts there. A literal without its closing quote ends past the text.
fn literal_end(chars: &[char], i: usize) -> Option<usize> {
    match chars[i] {
        q @ ('\'' | '"') => {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != q {
                if chars[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            Some(j + 1)
        }
        '-' if chars.get(i + 1) == Some(&'-') => {
            let end = (i..chars.len()).find(|&j| chars[j] == '\n');
            // A comment running to the end of the text is still open there.
            Some(end.map_or(chars.len() + 1, |e| e + 1))
        }
        _ => None,
    }
}

/// Whether the end of `before` is code: not inside a string literal or a `--` comment.
fn in_code(before: &[char]) -> bool {
    let mut i = 0;
    while i < before.len() {
        match literal_end(before, i) {
            Some(end) if end > before.len() => return false,
            Some(end) => i = end,
            None => i += 1,
        }
    }
    true
}

/// The path ending at the end of `before` (just before a `.`): its root name and steps, as
/// in `c.shipTo`, `c["ship to"]` or `c.details[0]`.
fn path_before(before: &[char]) -> Option<(String, Vec<Step>)> {
    let mut steps = Vec::new();
    let mut end = before.len();
    loop {
        if end > 0 && before[end - 1] == ']' {
            let open = (0..end - 1).rev().find(|&i| before[i] == '[')?;
            let inside: String = before[open + 1..end - 1].iter().collect();
            let inside = inside.trim();
            if let Some(name) = quoted(inside) {
                steps.push(Step::Property(name));
            } else if inside.parse::<u64>().is_ok() {
                steps.push(Step::Element);
            } else {
                return None;
            }
            end = open;
            continue;
        }
        let start = (0..end)
            .rev()
            .take_while(|&i| is_word_char(before[i]))
            .last()?;
        let word: String = before[start..end].iter().collect();
        if word.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        if start > 0 && before[start - 1] == '.' {
            steps.push(Step::Property(word));
            end = start - 1;
        } else {
            steps.reverse();
            return Some((word, steps));
        }
    }
}

/// The text of a quoted property name (`"a b"` or `'a b'`), unescaped.
fn quoted(text: &str) -> Option<String> {
    let q = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = text.strip_prefix(q)?.strip_suffix(q)?;
    // Escapes as in a JSON string; anything else (a bare `"` inside '…') as written.
    Some(serde_json::from_str(&format!("\"{body}\"")).unwrap_or_else(|_| body.to_string()))
}

/// An alias and the path it stands for: its root (another alias, or the container when
/// `None`) and the steps below it.
#[derive(Debug, Clone, PartialEq)]
struct Binding {
    alias: String,
    base: Option<String>,
    steps: Vec<Step>,
}

/// The aliases the query binds with `FROM`, `JOIN` and `IN`, read from its tokens: the
/// whole text when it lexes, else the text before the cursor.
fn bindings(text: &str, before: &[char]) -> Vec<Binding> {
    let tokens = lexer::tokenize(text)
        .or_else(|_| lexer::tokenize(&before.iter().collect::<String>()))
        .unwrap_or_default();
    let mut out: Vec<Binding> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let kind = &tokens[i].kind;
        let from = *kind == TokenKind::Keyword(Keyword::From);
        if (from || *kind == TokenKind::Keyword(Keyword::Join))
            && let Some((binding, next)) = binding_at(&tokens, i + 1, from)
        {
            out.retain(|b| b.alias != binding.alias);
            out.push(binding);
            i = next;
            continue;
        }
        i += 1;
    }
    out
}

/// The binding after a FROM or JOIN at `i`: `x IN path`, `path [AS] x`, or (FROM only) a
/// bare name for the container.
fn binding_at(tokens: &[Token], i: usize, from: bool) -> Option<(Binding, usize)> {
    let ident = |j: usize| match tokens.get(j).map(|t| &t.kind) {
        Some(TokenKind::Ident(name)) => Some(name.clone()),
        _ => None,
    };
    let is = |j: usize, k: Keyword| tokens.get(j).map(|t| &t.kind) == Some(&TokenKind::Keyword(k));
    let alias = ident(i)?;
    if is(i + 1, Keyword::In) {
        let (root, mut steps, next) = path_tokens(tokens, i + 2)?;
        steps.push(Step::Element);
        return Some((
            Binding {
                alias,
                base: Some(root),
                steps,
            },
            next,
        ));
    }
    if !from {
        return None; // JOIN binds only `x IN path` (or a subquery, which is not followed)
    }
    let (root, steps, next) = path_tokens(tokens, i)?;
    let named = if is(next, Keyword::As) {
        ident(next + 1).map(|a| (a, next + 2))
    } else {
        ident(next).map(|a| (a, next + 1))
    };
    match named {
        // `FROM c.children ch`: the alias stands for that path of the container.
        Some((alias, after)) => Some((
            Binding {
                alias,
                base: None,
                steps,
            },
            after,
        )),
        None if steps.is_empty() => Some((
            Binding {
                alias: root,
                base: None,
                steps,
            },
            next,
        )),
        None => None,
    }
}

/// `name (. name | [ "name" ] | [ n ])*` from token `i`: its root, steps and the next token.
fn path_tokens(tokens: &[Token], i: usize) -> Option<(String, Vec<Step>, usize)> {
    let TokenKind::Ident(root) = &tokens.get(i)?.kind else {
        return None;
    };
    let mut steps = Vec::new();
    let mut j = i + 1;
    loop {
        match tokens.get(j).map(|t| &t.kind) {
            Some(TokenKind::Dot) => match tokens.get(j + 1).map(|t| &t.kind) {
                Some(TokenKind::Ident(name)) => {
                    steps.push(Step::Property(name.clone()));
                    j += 2;
                }
                _ => break,
            },
            Some(TokenKind::LBracket) => {
                let step = match tokens.get(j + 1).map(|t| &t.kind) {
                    Some(TokenKind::Str(name)) => Step::Property(name.clone()),
                    Some(TokenKind::Number(_)) => Step::Element,
                    _ => break,
                };
                if tokens.get(j + 2).map(|t| &t.kind) != Some(&TokenKind::RBracket) {
                    break;
                }
                steps.push(step);
                j += 3;
            }
            _ => break,
        }
    }
    Some((root.clone(), steps, j))
}

/// The schema node `root.steps` stands for. A root that is no alias is the container (the
/// FROM clause may not be written yet).
fn resolve<'s>(
    bindings: &[Binding],
    root: &str,
    steps: &[Step],
    schema: &'s Schema,
) -> Option<&'s Node> {
    let mut path = steps.to_vec();
    let mut name = root.to_string();
    // Follow aliases down to the container; each is bound before its use, so this ends.
    for _ in 0..=bindings.len() {
        let Some(b) = bindings.iter().find(|b| b.alias == name) else {
            break;
        };
        let mut full = b.steps.clone();
        full.extend(path);
        path = full;
        match &b.base {
            Some(base) if *base != name => name = base.clone(),
            _ => break,
        }
    }
    schema.root.at(&path)
}

/// How well `label` matches what was typed, ignoring case: a prefix (0), or elsewhere (1)
/// once three characters are typed (fewer match too much).
fn rank(label: &str, typed: &str) -> Option<u8> {
    if typed.is_empty() {
        return Some(0);
    }
    let (l, t) = (label.to_lowercase(), typed.to_lowercase());
    if l.starts_with(&t) {
        Some(0)
    } else if t.chars().count() >= 3 && l.contains(&t) {
        Some(1)
    } else {
        None
    }
}

/// The container's UDFs matching what was typed, each inserted as the start of its call.
fn udfs(names: &[String], typed: &str, start: usize) -> Vec<Candidate> {
    let mut found: Vec<(u8, Candidate)> = names
        .iter()
        .filter_map(|name| {
            let r = rank(name, typed)?;
            Some((
                r,
                Candidate {
                    label: format!("{name}("),
                    insert: format!("{name}("),
                    start,
                    kind: CandidateKind::Function,
                    detail: "user-defined function".into(),
                },
            ))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.label.cmp(&b.1.label)));
    found.into_iter().map(|(_, c)| c).collect()
}

fn properties(node: &Node, typed: &str, start: usize) -> Vec<Candidate> {
    // Each property is counted at most once per value seen here.
    let parent = node.seen.max(1);
    let mut found: Vec<(u8, bool, usize, Candidate)> = node
        .properties
        .iter()
        .filter_map(|(name, child)| {
            let r = rank(name, typed)?;
            // `c.odd name` is no path: such names complete `c.` into `c["odd name"]`.
            let (insert, start) = if is_identifier(name) {
                (name.clone(), start)
            } else {
                (
                    format!("[{}]", serde_json::to_string(name).ok()?),
                    start - 1,
                )
            };
            let share = 100 * child.seen / parent;
            Some((
                r,
                name.starts_with('_'),
                child.seen,
                Candidate {
                    label: name.clone(),
                    insert,
                    start,
                    kind: CandidateKind::Property,
                    detail: format!("{} · {share}%", child.type_names()),
                },
            ))
        })
        .collect();
    // Prefix matches, then the rest; system properties last; the most common first.
    found.sort_by(|a, b| {
        (a.0, a.1, std::cmp::Reverse(a.2), &a.3.label).cmp(&(
            b.0,
            b.1,
            std::cmp::Reverse(b.2),
            &b.3.label,
        ))
    });
    found.into_iter().map(|(.., c)| c).collect()
}

fn parameters(text: &str, typed: &str, start: usize) -> Vec<Candidate> {
    let mut names = parameter_names(text);
    names.retain(|n| n != typed);
    let mut found: Vec<(u8, String)> = names
        .into_iter()
        .filter_map(|n| Some((rank(&n, typed)?, n)))
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|(_, n)| Candidate {
            insert: n.clone(),
            start,
            label: format!("@{n}"),
            kind: CandidateKind::Parameter,
            detail: "parameter".to_string(),
        })
        .collect()
}

/// Keywords as they are completed: the two-word clauses whole.
const KEYWORDS: &[&str] = &[
    "SELECT",
    "DISTINCT",
    "TOP",
    "VALUE",
    "FROM",
    "IN",
    "AS",
    "JOIN",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "BETWEEN",
    "LIKE",
    "ESCAPE",
    "EXISTS",
    "ARRAY",
    "GROUP BY",
    "ORDER BY",
    "ASC",
    "DESC",
    "OFFSET",
    "LIMIT",
    "true",
    "false",
    "null",
    "undefined",
];

fn words(bindings: &[Binding], typed: &str, start: usize) -> Vec<Candidate> {
    // Keywords and functions follow the case the user types in.
    let lower = !typed.is_empty() && typed.chars().all(|c| !c.is_uppercase());
    let cased = |w: &str| {
        if lower {
            w.to_lowercase()
        } else {
            w.to_string()
        }
    };
    let mut found: Vec<(u8, u8, Candidate)> = Vec::new();
    let mut seen_alias: Vec<&str> = Vec::new();
    for b in bindings.iter().rev() {
        if seen_alias.contains(&b.alias.as_str()) {
            continue;
        }
        seen_alias.push(&b.alias);
        if let Some(r) = rank(&b.alias, typed) {
            found.push((
                r,
                0,
                Candidate {
                    label: b.alias.clone(),
                    insert: b.alias.clone(),
                    start,
                    kind: CandidateKind::Alias,
                    detail: describe(b),
                },
            ));
        }
    }
    for k in KEYWORDS {
        // A keyword is offered by its prefix only: "or" inside "ORDER" is no match.
        if rank(k, typed) == Some(0) && !k.eq_ignore_ascii_case(typed) {
            found.push((
                0,
                1,
                Candidate {
                    label: k.to_string(),
                    insert: cased(k),
                    start,
                    kind: CandidateKind::Keyword,
                    detail: "keyword".to_string(),
                },
            ));
        }
    }
    for name in crate::query::eval::functions::names() {
        let Some(r) = rank(name, typed) else { continue };
        let Some(spec) = crate::query::eval::functions::lookup(name) else {
            continue;
        };
        let insert = if spec.max_args == 0 {
            format!("{}()", cased(name))
        } else {
            format!("{}(", cased(name))
        };
        let detail = match (spec.min_args, spec.max_args) {
            (0, 0) => "no arguments".to_string(),
            (a, b) if a == b => format!("{a} argument{}", if a == 1 { "" } else { "s" }),
            (a, usize::MAX) => format!("{a} or more arguments"),
            (a, b) => format!("{a}–{b} arguments"),
        };
        found.push((
            r,
            2,
            Candidate {
                label: format!("{name}()"),
                insert,
                start,
                kind: CandidateKind::Function,
                detail,
            },
        ));
    }
    found.sort_by_key(|f| (f.0, f.1));
    found.into_iter().map(|(.., c)| c).collect()
}

/// The `@name` parameters of `sql` outside string literals and comments, in order of first
/// appearance.
pub fn parameter_names(sql: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if let Some(end) = literal_end(&chars, i) {
            i = end;
        } else if chars[i] == '@' {
            let start = i + 1;
            let end = (start..chars.len())
                .find(|&j| !(chars[j].is_alphanumeric() || chars[j] == '_'))
                .unwrap_or(chars.len());
            if end > start {
                let name: String = chars[start..end].iter().collect();
                if !out.contains(&name) {
                    out.push(name);
                }
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// What an alias stands for, as the list shows it: `c.tags[]`, `the container`.
fn describe(b: &Binding) -> String {
    let mut text = match &b.base {
        None if b.steps.is_empty() => return "the container".to_string(),
        None => "root".to_string(),
        Some(base) => base.clone(),
    };
    for step in &b.steps {
        match step {
            Step::Property(name) if is_identifier(name) => {
                text.push('.');
                text.push_str(name);
            }
            Step::Property(name) => text.push_str(&format!(
                "[{}]",
                serde_json::to_string(name).unwrap_or_default()
            )),
            Step::Element => text.push_str("[]"),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        let docs = [
            r#"{"id":"1","customerId":"c1","shipTo":{"city":"Oslo","zip":"0150"},"items":[{"sku":"a","qty":1}],"tags":["x"],"ship date":"2024","_ts":1}"#,
            r#"{"id":"2","customerId":"c2","shipTo":{"city":"Rome"},"items":[{"sku":"b","price":2.5}],"status":"open","_ts":2}"#,
        ];
        Schema::from_documents(docs.iter().map(|d| d.as_bytes()))
    }

    /// Completes at the `|` in `text`.
    fn at(text: &str) -> Option<Completion> {
        let cursor = text
            .chars()
            .position(|c| c == '|')
            .expect("a | marks the cursor");
        complete(&text.replacen('|', "", 1), cursor, &schema())
    }

    fn labels(text: &str) -> Vec<String> {
        at(text)
            .map(|c| c.candidates.into_iter().map(|c| c.label).collect())
            .unwrap_or_default()
    }

    #[test]
    fn udf_dot_offers_the_containers_functions_as_calls() {
        let with = schema().with_udfs(vec!["tax".into(), "discount".into(), "taxRate".into()]);
        let at = |text: &str, schema: &Schema| {
            let cursor = text.chars().position(|c| c == '|').expect("a cursor");
            complete(&text.replacen('|', "", 1), cursor, schema)
                .map(|c| {
                    c.candidates
                        .into_iter()
                        .map(|c| c.insert)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        assert_eq!(
            at("SELECT udf.| FROM c", &with),
            ["discount(", "tax(", "taxRate("]
        );
        assert_eq!(at("SELECT udf.ta| FROM c", &with), ["tax(", "taxRate("]);
        // An alias named udf is a path like any other.
        assert_eq!(at("SELECT udf.cust| FROM c AS udf", &with), ["customerId"]);
    }

    #[test]
    fn properties_after_a_dot_come_most_common_first_system_last() {
        assert_eq!(
            labels("SELECT * FROM c WHERE c.|"),
            [
                "customerId",
                "id",
                "items",
                "shipTo",
                "ship date",
                "status",
                "tags",
                "_ts"
            ]
        );
        let c = at("SELECT * FROM c WHERE c.sh|").unwrap();
        assert_eq!(c.typed, "sh");
        assert_eq!(c.start, 24);
        let l: Vec<_> = c.candidates.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(l, ["shipTo", "ship date"]);
        assert_eq!(c.candidates[0].detail, "object · 100%");
        assert_eq!(c.candidates[1].insert, r#"["ship date"]"#);
        assert_eq!((c.candidates[0].start, c.candidates[1].start), (24, 23));
    }

    #[test]
    fn nested_paths_and_array_elements() {
        assert_eq!(labels("SELECT c.shipTo.| FROM c"), ["city", "zip"]);
        assert_eq!(
            labels("SELECT c.items[0].| FROM c"),
            ["sku", "price", "qty"]
        );
        assert_eq!(labels(r#"SELECT c["shipTo"].c| FROM c"#), ["city"]);
        assert_eq!(
            at("SELECT c.shipTo.| FROM c").unwrap().candidates[1].detail,
            "string · 50%"
        );
    }

    #[test]
    fn aliases_from_in_and_join_stand_for_array_elements() {
        assert_eq!(
            labels("SELECT i.| FROM c JOIN i IN c.items"),
            ["sku", "price", "qty"]
        );
        assert_eq!(labels("SELECT * FROM i IN c.items WHERE i.p|"), ["price"]);
        // An alias of an alias.
        assert_eq!(
            labels("SELECT * FROM o JOIN s IN o.shipTo.x JOIN i IN o.items WHERE i.s|"),
            ["sku"]
        );
        // FROM with a path and an alias.
        assert_eq!(labels("SELECT s.| FROM c.shipTo s"), ["city", "zip"]);
        // No FROM yet: the root is the container.
        assert_eq!(labels("SELECT x.shipTo.z|"), ["zip"]);
    }

    #[test]
    fn words_offer_aliases_keywords_and_functions_in_the_typed_case() {
        let c = at("SELECT * FROM c JOIN tag IN c.tags WHERE ta|").unwrap();
        assert_eq!(c.candidates[0].label, "tag");
        assert_eq!(c.candidates[0].detail, "c.tags[]");
        assert!(c.candidates.iter().any(|c| c.label == "TAN()"));
        let c = at("SELECT * FROM c ord|").unwrap();
        assert_eq!(c.candidates[0].label, "ORDER BY");
        assert_eq!(c.candidates[0].insert, "order by");
        let c = at("SELECT * FROM c WHERE ARRAY_CONTAINS_A|").unwrap();
        let l: Vec<_> = c.candidates.iter().map(|c| c.insert.as_str()).collect();
        assert_eq!(l, ["ARRAY_CONTAINS_ALL(", "ARRAY_CONTAINS_ANY("]);
        assert_eq!(c.candidates[0].detail, "2 or more arguments");
        // Elsewhere in a name: CONTAINS finds ARRAY_CONTAINS after the prefix matches.
        let l = labels("SELECT * FROM c WHERE CONTAINS|");
        assert_eq!(l[0], "CONTAINS()");
        assert!(l.contains(&"ARRAY_CONTAINS()".to_string()));
        assert!(labels("SELECT GetCurrentDateTime|").contains(&"GETCURRENTDATETIME()".into()));
        assert_eq!(
            at("SELECT GetCurrentDateTime|").unwrap().candidates[0].insert,
            "GETCURRENTDATETIME()"
        );
    }

    #[test]
    fn parameter_names_skip_strings_and_comments() {
        let names = parameter_names(
            "SELECT * FROM c WHERE c.a = @a AND c.b = '@notme' -- @nor\n AND c.c IN (@a, @b_2)",
        );
        assert_eq!(names, ["a", "b_2"]);
    }

    #[test]
    fn parameters_after_an_at_sign() {
        assert_eq!(
            labels("SELECT * FROM c WHERE c.a = @first AND c.b = @|"),
            ["@first"]
        );
        assert_eq!(
            labels("SELECT * FROM c WHERE c.a = @first AND c.b = @f| AND @second"),
            ["@first"]
        );
    }

    #[test]
    fn nothing_completes_in_strings_comments_and_numbers() {
        assert_eq!(at("SELECT * FROM c WHERE c.a = 'c.|"), None);
        assert_eq!(at("SELECT * FROM c -- c.|"), None);
        assert_eq!(at("SELECT 1.|"), None);
        // After a closed string, code again.
        assert!(at("SELECT * FROM c WHERE c.a = 'x' AND c.|").is_some());
        // An unknown path has no properties, but it is code.
        assert_eq!(at("SELECT c.nope.|").map(|c| c.candidates.len()), Some(0));
    }

    #[test]
    fn schemas_stay_bounded() {
        let wide: String = format!(
            "{{{}}}",
            (0..1000)
                .map(|i| format!("\"k{i}\":1"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let s = Schema::from_documents([wide.as_bytes(), b"not json".as_slice()]);
        assert_eq!(s.documents(), 1);
        assert_eq!(s.root.properties.len(), MAX_PROPERTIES);
        let deep = format!("{}1{}", "{\"a\":".repeat(50), "}".repeat(50));
        let s = Schema::from_documents([deep.as_bytes()]);
        let mut depth = 0;
        let mut n = &s.root;
        while let Some(child) = n.properties.get("a") {
            n = child;
            depth += 1;
        }
        assert_eq!(depth, MAX_DEPTH);
    }
}
