//! The path grammar: included and excluded paths (`/a/b/?`, `/a/*`, `/a/[]/b/?`,
//! `/"quoted-name"/?`, tuple paths `/a/[]/{b, c}/?`), composite index paths (`/a/b`), and
//! the vector and full-text paths built on them, which the container's search policies use
//! too. Errors report the character position where parsing stopped, as the service does.
//!
//! The search paths' grammar lives here rather than with the search policies
//! (`store::search_policy`) because the indexing policy's own `vectorIndexes` and
//! `fullTextIndexes` are written in it: the search policies depend on this module, never
//! the other way round.

use std::fmt;

use super::error::PolicyError;

/// One step of a document location: a property name or an array position.
/// `/tags/0/name` is `[Property("tags"), Index(0), Property("name")]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    Property(String),
    Index(usize),
}

/// One segment of a policy path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PolicySegment {
    /// A property name, unquoted (`name`) or quoted (`"my-prop"`), stored unquoted.
    Name(String),
    /// `[]`: any element of an array.
    AnyIndex,
    /// `[n]`: one element of an array.
    Index(usize),
}

/// How a policy path ends.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathTerminal {
    /// `/?`: the scalar at exactly this location.
    Scalar,
    /// `/*`: this location and everything under it.
    Subtree,
    /// `/{a, b/c}/?`: a tuple of values inside each array element (included paths only).
    Tuple(Vec<Vec<PolicySegment>>),
}

/// A parsed included or excluded path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PolicyPath {
    pub segments: Vec<PolicySegment>,
    pub terminal: PathTerminal,
}

impl PolicyPath {
    /// `/*` (or its spelling `/`).
    pub fn is_root(&self) -> bool {
        self.segments.is_empty() && self.terminal == PathTerminal::Subtree
    }

    pub fn is_tuple(&self) -> bool {
        matches!(self.terminal, PathTerminal::Tuple(_))
    }

    pub(super) fn is_etag(&self) -> bool {
        matches!(self.segments.as_slice(), [PolicySegment::Name(n)] if n == "_etag")
    }
}

fn is_plain_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn write_segments(f: &mut fmt::Formatter<'_>, segments: &[PolicySegment]) -> fmt::Result {
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            f.write_str("/")?;
        }
        match segment {
            PolicySegment::Name(name) if !name.is_empty() && name.chars().all(is_plain_char) => {
                f.write_str(name)?
            }
            PolicySegment::Name(name) => {
                f.write_str("\"")?;
                for c in name.chars() {
                    if c == '"' || c == '\\' {
                        f.write_str("\\")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("\"")?;
            }
            PolicySegment::AnyIndex => f.write_str("[]")?,
            PolicySegment::Index(n) => write!(f, "[{n}]")?,
        }
    }
    Ok(())
}

impl fmt::Display for PolicyPath {
    /// The canonical spelling: names quoted only when they need it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("/")?;
        write_segments(f, &self.segments)?;
        if !self.segments.is_empty() {
            f.write_str("/")?;
        }
        match &self.terminal {
            PathTerminal::Scalar => f.write_str("?"),
            PathTerminal::Subtree => f.write_str("*"),
            PathTerminal::Tuple(elements) => {
                f.write_str("{")?;
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_segments(f, element)?;
                }
                f.write_str("}/?")
            }
        }
    }
}

/// A character cursor that reports positions the way the service does: the 0-based
/// character offset where parsing stopped (the end of input for a missing terminal).
struct Cursor<'a> {
    source: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(source: &'a str) -> Cursor<'a> {
        Cursor {
            source,
            chars: source.chars().collect(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn fail_at(&self, position: usize, expected: &'static str) -> PolicyError {
        PolicyError::InvalidPath {
            path: self.source.to_string(),
            position,
            expected,
        }
    }

    fn fail(&self, expected: &'static str) -> PolicyError {
        self.fail_at(self.pos, expected)
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// A name (plain or quoted) or an array step, `[]` or `[n]`.
    fn segment(&mut self) -> Result<PolicySegment, PolicyError> {
        match self.peek() {
            Some('"') => {
                let start = self.pos;
                self.pos += 1;
                let mut name = String::new();
                loop {
                    match self.peek() {
                        None => return Err(self.fail_at(start, "a closing '\"' for this name")),
                        Some('"') => {
                            self.pos += 1;
                            return Ok(PolicySegment::Name(name));
                        }
                        Some('\\') => {
                            self.pos += 1;
                            match self.peek() {
                                Some(c) => {
                                    name.push(c);
                                    self.pos += 1;
                                }
                                None => return Err(self.fail("a character after '\\'")),
                            }
                        }
                        Some(c) => {
                            name.push(c);
                            self.pos += 1;
                        }
                    }
                }
            }
            Some('[') => {
                self.pos += 1;
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                let digits: String = self.chars[start..self.pos].iter().collect();
                if self.peek() != Some(']') {
                    return Err(self.fail("']' closing an array step ('[]' or '[n]')"));
                }
                self.pos += 1;
                if digits.is_empty() {
                    return Ok(PolicySegment::AnyIndex);
                }
                digits
                    .parse::<usize>()
                    .map(PolicySegment::Index)
                    .map_err(|_| self.fail_at(start, "an array position that fits in 64 bits"))
            }
            Some(c) if is_plain_char(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_plain_char) {
                    self.pos += 1;
                }
                Ok(PolicySegment::Name(
                    self.chars[start..self.pos].iter().collect(),
                ))
            }
            _ => Err(self.fail(
                "a property name; quote names with characters other than letters, digits and '_' \
                 (for example /\"my-prop\"/?)",
            )),
        }
    }

    /// `{a, b/c}/?` after a `[]` step; the cursor is on `{`.
    fn tuple(&mut self) -> Result<PathTerminal, PolicyError> {
        self.pos += 1;
        let mut elements = Vec::new();
        loop {
            self.skip_spaces();
            let mut element = Vec::new();
            loop {
                match self.peek() {
                    Some('/') if element.is_empty() => {
                        return Err(self.fail("a tuple element without a leading '/'"));
                    }
                    Some('{') => return Err(self.fail("no nested tuple '{'")),
                    Some('?') | Some('*') => {
                        return Err(self.fail("a tuple element without a trailing '?' or '*'"));
                    }
                    _ => {}
                }
                let start = self.pos;
                let segment = self.segment()?;
                if segment == PolicySegment::AnyIndex {
                    return Err(self.fail_at(start, "no '[]' inside a tuple element"));
                }
                element.push(segment);
                self.skip_spaces();
                if self.peek() == Some('/') {
                    self.pos += 1;
                } else {
                    break;
                }
            }
            elements.push(element);
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.fail("',' or '}' in the tuple")),
            }
        }
        if self.peek() != Some('/') {
            return Err(self.fail("'/?' after the tuple"));
        }
        self.pos += 1;
        if self.peek() != Some('?') {
            return Err(self.fail("'?' after the tuple"));
        }
        self.pos += 1;
        if !self.at_end() {
            return Err(self.fail("the end of the path after '?'"));
        }
        Ok(PathTerminal::Tuple(elements))
    }
}

/// Parses an included or excluded path: segments separated by `/`, ending in `/?`, `/*`
/// or (for tuple indexes) `/[]/{...}/?`.
pub fn parse_policy_path(s: &str) -> Result<PolicyPath, PolicyError> {
    if s == "/" {
        return Ok(PolicyPath {
            segments: Vec::new(),
            terminal: PathTerminal::Subtree,
        });
    }
    let mut cur = Cursor::new(s);
    if cur.peek() != Some('/') {
        return Err(cur.fail("a path starting with '/'"));
    }
    cur.pos += 1;
    let mut segments = Vec::new();
    let terminal = loop {
        match cur.peek() {
            None => return Err(cur.fail("a segment, '?' or '*' after '/'")),
            Some('?') => {
                if segments.is_empty() {
                    return Err(cur.fail("a property name before '/?' (the root is an object)"));
                }
                cur.pos += 1;
                if !cur.at_end() {
                    return Err(cur.fail("the end of the path after '?'"));
                }
                break PathTerminal::Scalar;
            }
            Some('*') => {
                cur.pos += 1;
                if !cur.at_end() {
                    return Err(cur.fail("the end of the path after '*' (use '[]' for arrays)"));
                }
                break PathTerminal::Subtree;
            }
            Some('{') => {
                if segments.last() != Some(&PolicySegment::AnyIndex) {
                    return Err(cur.fail("'[]' before a tuple '{...}'"));
                }
                let prefix = &segments[..segments.len() - 1];
                if prefix.contains(&PolicySegment::AnyIndex) {
                    return Err(cur.fail("a tuple path prefix with only one '[]'"));
                }
                break cur.tuple()?;
            }
            Some(_) => segments.push(cur.segment()?),
        }
        match cur.peek() {
            Some('/') => cur.pos += 1,
            None => return Err(cur.fail("'/?' or '/*' at the end of the path")),
            Some(_) => return Err(cur.fail("'/' between segments")),
        }
    };
    Ok(PolicyPath { segments, terminal })
}

/// Parses a composite index path: a property path such as `/name` or `/children/[]/age`,
/// with an implicit `/?` that must not be written.
pub fn parse_composite_path(s: &str) -> Result<Vec<PolicySegment>, PolicyError> {
    let mut cur = Cursor::new(s);
    if cur.peek() != Some('/') {
        return Err(cur.fail("a path starting with '/'"));
    }
    cur.pos += 1;
    let mut segments = Vec::new();
    loop {
        match cur.peek() {
            None => return Err(cur.fail("a property name after '/'")),
            Some('?') | Some('*') => {
                return Err(PolicyError::CompositePathTerminal {
                    path: s.to_string(),
                });
            }
            Some(_) => segments.push(cur.segment()?),
        }
        match cur.peek() {
            Some('/') => cur.pos += 1,
            None => return Ok(segments),
            Some(_) => return Err(cur.fail("'/' between segments")),
        }
    }
}

/// Parses a vector or full-text path: a property path such as `/embedding` or
/// `/content/"body-text"`, without wildcards or array steps. The error says why, for a
/// message that names the path and the policy it is in.
pub fn parse_search_path(path: &str) -> std::result::Result<Vec<PolicySegment>, String> {
    let segments = parse_composite_path(path).map_err(|e| match e {
        PolicyError::CompositePathTerminal { .. } => {
            "wildcards and terminals ('*', '?') are not supported; name the property itself, \
             for example '/embedding'"
                .to_string()
        }
        PolicyError::InvalidPath {
            position, expected, ..
        } => format!("failed near position {position}: expected {expected}"),
        other => other.to_string(),
    })?;
    if segments
        .iter()
        .any(|s| matches!(s, PolicySegment::AnyIndex | PolicySegment::Index(_)))
    {
        return Err(
            "array steps ('[]', '[n]') are not supported: the path must lead to the property \
             itself, not into an array"
                .to_string(),
        );
    }
    Ok(segments)
}

/// Whether two search paths name the same property (`/a` and `/"a"` do).
pub fn same_search_path(a: &str, b: &str) -> bool {
    same_path(a, b, parse_search_path(b).ok().as_deref())
}

/// Whether the policy path `declared` names the same property as `asked` (parsed when it
/// parses; compared as text when it does not).
pub fn same_path(declared: &str, asked: &str, asked_parsed: Option<&[PolicySegment]>) -> bool {
    match (asked_parsed, parse_search_path(declared)) {
        (Some(a), Ok(d)) => a == d.as_slice(),
        _ => declared == asked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_path_forms() {
        let path = parse_policy_path("/headquarters/employees/?").unwrap();
        assert_eq!(
            path.segments,
            [
                PolicySegment::Name("headquarters".into()),
                PolicySegment::Name("employees".into())
            ]
        );
        assert_eq!(path.terminal, PathTerminal::Scalar);

        let path = parse_policy_path("/locations/[]/country/?").unwrap();
        assert_eq!(path.segments[1], PolicySegment::AnyIndex);

        let path = parse_policy_path("/headquarters/*").unwrap();
        assert_eq!(path.terminal, PathTerminal::Subtree);

        assert!(parse_policy_path("/*").unwrap().is_root());
        assert!(parse_policy_path("/").unwrap().is_root());

        let path = parse_policy_path(r#"/"path-abc"/?"#).unwrap();
        assert_eq!(path.segments, [PolicySegment::Name("path-abc".into())]);
        assert_eq!(
            parse_policy_path(r#"/"_etag"/?"#).unwrap(),
            parse_policy_path("/_etag/?").unwrap()
        );
        let path = parse_policy_path(r#"/"say \"hi\""/?"#).unwrap();
        assert_eq!(path.segments, [PolicySegment::Name("say \"hi\"".into())]);
        assert_eq!(path.to_string(), r#"/"say \"hi\""/?"#);
        assert_eq!(
            parse_policy_path(r#"/"a"/[]/"b-c"/*"#).unwrap().to_string(),
            r#"/a/[]/"b-c"/*"#
        );
    }

    #[test]
    fn parses_tuple_paths() {
        for ok in [
            "/events/[]/{name/first, name/last}/?",
            "/events/[]/{name/first, category}/?",
            "/events/[]/{name/[1]/first, category}/?",
            "/events/[]/{[1], [3]}/?",
            "/city/[1]/events/[]/{name, category}/?",
        ] {
            let path = parse_policy_path(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert!(path.is_tuple(), "{ok}");
        }
        let path = parse_policy_path("/events/[]/{name, category}/?").unwrap();
        assert_eq!(path.to_string(), "/events/[]/{name, category}/?");
        for bad in [
            "/events/[]/{name/[]/first, category}/?",
            "/events/[]/{name, category}/*",
            "/events/[]/{{name, first},category}/?",
            "/events/{name, category}/?",
            "/events/[]/{/name,/category}/?",
            "/events/[]/{name/?,category/?}/?",
            "/city/[]/events/[]/{name, category}/?",
        ] {
            assert!(parse_policy_path(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn rejects_malformed_paths_with_a_position() {
        let e = parse_policy_path("/expiration").unwrap_err();
        assert_eq!(
            e,
            PolicyError::InvalidPath {
                path: "/expiration".into(),
                position: 11,
                expected: "'/?' or '/*' at the end of the path"
            }
        );
        assert!(e.to_string().starts_with(
            "The indexing path '/expiration' could not be accepted, failed near position '11'"
        ));
        let position = |s: &str| match parse_policy_path(s) {
            Err(PolicyError::InvalidPath { position, .. }) => position,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(position("name/?"), 0);
        assert_eq!(position("/my-prop/?"), 3);
        assert_eq!(position("/a/*/b/?"), 4);
        assert_eq!(position("/a//?"), 3);
        assert_eq!(position("/a/?/"), 4);
        assert_eq!(position("/?"), 1);
        assert_eq!(position("/a/[x]/?"), 4);
        assert_eq!(position("/\"open/?"), 1);
        assert_eq!(position(""), 0);
        assert_eq!(position("/a/"), 3);
    }

    #[test]
    fn composite_paths_are_plain_property_paths() {
        assert_eq!(
            parse_composite_path("/children/[]/age").unwrap(),
            [
                PolicySegment::Name("children".into()),
                PolicySegment::AnyIndex,
                PolicySegment::Name("age".into())
            ]
        );
        assert_eq!(
            parse_composite_path(r#"/"my-prop""#).unwrap(),
            [PolicySegment::Name("my-prop".into())]
        );
        assert!(matches!(
            parse_composite_path("/name/?"),
            Err(PolicyError::CompositePathTerminal { .. })
        ));
        assert!(matches!(
            parse_composite_path("/name/*"),
            Err(PolicyError::CompositePathTerminal { .. })
        ));
        assert!(matches!(
            parse_composite_path("/"),
            Err(PolicyError::InvalidPath { position: 1, .. })
        ));
        assert!(matches!(
            parse_composite_path("name"),
            Err(PolicyError::InvalidPath { position: 0, .. })
        ));
    }
}
