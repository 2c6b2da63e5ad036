//! The lexer of the NoSQL query dialect: turns query text into tokens with 1-based line and
//! column positions, and reports malformed text (unterminated strings, bad escapes, stray
//! characters) as 400 errors at the offending character.
//!
//! Lexical rules follow the .NET SDK grammar (Azure/azure-cosmos-dotnet-v3,
//! `Microsoft.Azure.Cosmos/src/Query/Core/Parser/sql.g4`) and the query docs
//! (articles/cosmos-db/nosql/query/constants.md, where.md):
//! - keywords are ASCII case-insensitive, but the literals `true false null undefined` are
//!   lower-case only (`TRUE` is an ordinary identifier, as in sql.g4);
//! - identifiers are `[A-Za-z_][A-Za-z0-9_]*`, parameters `@` + identifier;
//! - numbers are `1`, `1.`, `1.5`, `.5`, `1e3`, `1.5E-3` and hexadecimal `0x1F` (constants.md);
//!   a sign is never part of the token, the parser folds `-1` into a literal;
//! - strings use single or double quotes with the JSON escapes plus `\'` (constants.md), and
//!   may not hold raw control characters (sql.g4's SAFECODEPOINT);
//! - `--` starts a comment that runs to the end of the line;
//! - `<>` is a synonym of `!=` (where.md lists it; sql.g4 lacks it).

use crate::error::Error;
use crate::query::syntax::ast::Pos;

/// Reserved words: never identifiers, property names after `.`, or aliases (the service
/// rejects `c.value` and `AS Group` with a syntax error). `LEFT`, `RIGHT`, `RANK`, `ALL`,
/// `FIRST`, `LAST` and `udf` are only special in context, so they stay identifiers here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    And,
    Array,
    As,
    Asc,
    Between,
    By,
    Desc,
    Distinct,
    Escape,
    Exists,
    From,
    Group,
    In,
    Join,
    Like,
    Limit,
    Not,
    Offset,
    Or,
    Order,
    Select,
    Top,
    Value,
    Where,
}

const KEYWORDS: &[(&str, Keyword)] = &[
    ("AND", Keyword::And),
    ("ARRAY", Keyword::Array),
    ("AS", Keyword::As),
    ("ASC", Keyword::Asc),
    ("BETWEEN", Keyword::Between),
    ("BY", Keyword::By),
    ("DESC", Keyword::Desc),
    ("DISTINCT", Keyword::Distinct),
    ("ESCAPE", Keyword::Escape),
    ("EXISTS", Keyword::Exists),
    ("FROM", Keyword::From),
    ("GROUP", Keyword::Group),
    ("IN", Keyword::In),
    ("JOIN", Keyword::Join),
    ("LIKE", Keyword::Like),
    ("LIMIT", Keyword::Limit),
    ("NOT", Keyword::Not),
    ("OFFSET", Keyword::Offset),
    ("OR", Keyword::Or),
    ("ORDER", Keyword::Order),
    ("SELECT", Keyword::Select),
    ("TOP", Keyword::Top),
    ("VALUE", Keyword::Value),
    ("WHERE", Keyword::Where),
];

impl Keyword {
    /// The keyword spelled in upper case, as messages show it.
    pub fn as_str(self) -> &'static str {
        KEYWORDS
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(s, _)| s)
    }

    /// The keyword `word` spells, ignoring ASCII case.
    pub fn lookup(word: &str) -> Option<Keyword> {
        KEYWORDS
            .iter()
            .find(|(s, _)| s.eq_ignore_ascii_case(word))
            .map(|(_, k)| *k)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// A name as written (case preserved).
    Ident(String),
    Keyword(Keyword),
    Number(f64),
    /// A string literal with escapes resolved.
    Str(String),
    /// `@name`, without the `@`.
    Param(String),
    True,
    False,
    Null,
    Undefined,
    Star,
    Comma,
    Dot,
    Colon,
    Semicolon,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Question,
    /// `??`
    Coalesce,
    Plus,
    Minus,
    Slash,
    Percent,
    /// `||`
    Concat,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Shl,
    Shr,
    UShr,
    Eq,
    /// `!=` or `<>`
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Eof,
}

impl TokenKind {
    /// A keyword or one of the literal words `true false null undefined`: a word that can't
    /// name an alias or follow a `.`.
    pub fn is_reserved_word(&self) -> bool {
        matches!(
            self,
            TokenKind::Keyword(_)
                | TokenKind::True
                | TokenKind::False
                | TokenKind::Null
                | TokenKind::Undefined
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub pos: Pos,
    /// Byte range of the token in the query text (empty at the end of the text).
    pub start: usize,
    pub end: usize,
}

/// Splits `text` into tokens, ending with one [`TokenKind::Eof`] whose position is just past
/// the last character.
pub fn tokenize(text: &str) -> Result<Vec<Token>, Error> {
    let mut lx = Lexer {
        text,
        bytes: text.as_bytes(),
        i: 0,
        line: 1,
        column: 1,
        tokens: Vec::new(),
    };
    lx.run()?;
    Ok(lx.tokens)
}

/// A 400 error at `pos`.
pub(crate) fn error_at(pos: Pos, message: impl Into<String>) -> Error {
    Error::bad_request(message).at(pos.line, pos.column)
}

/// The 1-based position of byte offset `offset` (clamped to the text, and to a character
/// boundary) in `text`.
pub fn position_of(text: &str, offset: usize) -> Pos {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    Pos {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

/// Levenshtein distance over ASCII-case-folded characters, for "did you mean" hints.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_uppercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_uppercase()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The token of a literal word: `true false null undefined`, lower-case only.
fn literal_word(word: &str) -> Option<TokenKind> {
    Some(match word {
        "true" => TokenKind::True,
        "false" => TokenKind::False,
        "null" => TokenKind::Null,
        "undefined" => TokenKind::Undefined,
        _ => return None,
    })
}

/// Whether `text` reads as one identifier: a name that is neither a keyword nor a literal word.
pub(crate) fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(is_ident_start)
        && chars.all(is_ident_char)
        && literal_word(text).is_none()
        && Keyword::lookup(text).is_none()
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    /// Byte offset of the next character.
    i: usize,
    line: u32,
    column: u32,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn peek_char(&self) -> Option<char> {
        self.text[self.i..].chars().next()
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.i + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.i += c.len_utf8();
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.column = 1;
        } else {
            self.column = self.column.saturating_add(1);
        }
        Some(c)
    }

    fn push(&mut self, kind: TokenKind, pos: Pos, start: usize) {
        self.tokens.push(Token {
            kind,
            pos,
            start,
            end: self.i,
        });
    }

    /// Whether a `.` here follows something that can take a property access, so that `c.5`
    /// lexes as `c` `.` `5` rather than `c` `.5`.
    fn after_operand(&self) -> bool {
        matches!(
            self.tokens.last().map(|t| &t.kind),
            Some(
                TokenKind::Ident(_)
                    | TokenKind::RParen
                    | TokenKind::RBracket
                    | TokenKind::RBrace
                    | TokenKind::Param(_)
                    | TokenKind::Str(_)
            )
        )
    }

    fn run(&mut self) -> Result<(), Error> {
        while let Some(c) = self.peek_char() {
            let pos = self.pos();
            let start = self.i;
            if c.is_whitespace() {
                self.bump();
                continue;
            }
            if c == '-' && self.peek_byte(1) == Some(b'-') {
                while let Some(c) = self.peek_char() {
                    if c == '\n' {
                        break;
                    }
                    self.bump();
                }
                continue;
            }
            if is_ident_start(c) {
                self.word(pos, start);
                continue;
            }
            if c.is_ascii_digit()
                || (c == '.'
                    && self.peek_byte(1).is_some_and(|b| b.is_ascii_digit())
                    && !self.after_operand())
            {
                self.number(pos, start)?;
                continue;
            }
            if c == '"' || c == '\'' {
                self.string(c, pos, start)?;
                continue;
            }
            if c == '@' {
                self.bump();
                if !self.peek_char().is_some_and(is_ident_start) {
                    return Err(error_at(
                        pos,
                        "expected a parameter name after '@', such as @id \
                         (letters, digits and '_', not starting with a digit)",
                    ));
                }
                let name_start = self.i;
                while self.peek_char().is_some_and(is_ident_char) {
                    self.bump();
                }
                let name = self.text[name_start..self.i].to_string();
                self.push(TokenKind::Param(name), pos, start);
                continue;
            }
            let kind = self.punct(c, pos)?;
            self.push(kind, pos, start);
        }
        let pos = self.pos();
        self.push(TokenKind::Eof, pos, self.i);
        Ok(())
    }

    fn word(&mut self, pos: Pos, start: usize) {
        while self.peek_char().is_some_and(is_ident_char) {
            self.bump();
        }
        let word = &self.text[start..self.i];
        let kind = literal_word(word)
            .or_else(|| Keyword::lookup(word).map(TokenKind::Keyword))
            .unwrap_or_else(|| TokenKind::Ident(word.to_string()));
        self.push(kind, pos, start);
    }

    fn number(&mut self, pos: Pos, start: usize) -> Result<(), Error> {
        let value = if self.peek_byte(0) == Some(b'0')
            && matches!(self.peek_byte(1), Some(b'x' | b'X'))
        {
            self.bump();
            self.bump();
            let digits_start = self.i;
            while self.peek_char().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.bump();
            }
            let digits = &self.text[digits_start..self.i];
            if digits.is_empty() {
                return Err(error_at(
                    pos,
                    "expected hexadecimal digits after '0x', as in 0x1F",
                ));
            }
            digits.chars().fold(0.0_f64, |acc, d| {
                acc * 16.0 + f64::from(d.to_digit(16).unwrap_or(0))
            })
        } else {
            while self.peek_char().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
            if self.peek_char() == Some('.') {
                self.bump();
                while self.peek_char().is_some_and(|c| c.is_ascii_digit()) {
                    self.bump();
                }
            }
            if matches!(self.peek_char(), Some('e' | 'E')) {
                let sign = usize::from(matches!(self.peek_byte(1), Some(b'+' | b'-')));
                if self.peek_byte(1 + sign).is_some_and(|b| b.is_ascii_digit()) {
                    for _ in 0..=sign {
                        self.bump();
                    }
                    while self.peek_char().is_some_and(|c| c.is_ascii_digit()) {
                        self.bump();
                    }
                } else {
                    self.bump();
                    return Err(error_at(
                        pos,
                        format!(
                            "malformed number '{}': expected digits after the exponent, as in 1.5e3",
                            &self.text[start..self.i]
                        ),
                    ));
                }
            }
            let literal = &self.text[start..self.i];
            literal
                .parse::<f64>()
                .map_err(|_| error_at(pos, format!("malformed number '{literal}'")))?
        };
        if self.peek_char().is_some_and(is_ident_char) {
            while self.peek_char().is_some_and(is_ident_char) {
                self.bump();
            }
            let word = &self.text[start..self.i];
            return Err(error_at(
                pos,
                format!(
                    "'{word}' is neither a number nor a name: names can't start with a digit; \
                     for a property named like that write c[\"{word}\"]"
                ),
            ));
        }
        if !value.is_finite() {
            return Err(error_at(
                pos,
                format!(
                    "the number {} is too large for a double-precision value",
                    &self.text[start..self.i]
                ),
            ));
        }
        self.push(TokenKind::Number(value), pos, start);
        Ok(())
    }

    fn string(&mut self, quote: char, pos: Pos, start: usize) -> Result<(), Error> {
        self.bump();
        let mut out = String::new();
        loop {
            let here = self.pos();
            let Some(c) = self.bump() else {
                return Err(error_at(
                    pos,
                    format!(
                        "unterminated string: add the closing {quote} to end the string that starts here"
                    ),
                ));
            };
            match c {
                c if c == quote => break,
                '\\' => out.push(self.escape(here)?),
                c if (c as u32) < 0x20 => {
                    return Err(error_at(
                        here,
                        format!(
                            "a string can't hold the raw control character U+{:04X}; write it as an \
                             escape such as \\n or \\t, or close the string with {quote}",
                            c as u32
                        ),
                    ));
                }
                c => out.push(c),
            }
        }
        self.push(TokenKind::Str(out), pos, start);
        Ok(())
    }

    /// One escape sequence after a backslash at `at`.
    fn escape(&mut self, at: Pos) -> Result<char, Error> {
        let bad = |shown: &str| {
            error_at(
                at,
                format!(
                    "invalid escape sequence '\\{shown}' in a string; the valid escapes are \
                     \\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX"
                ),
            )
        };
        let Some(c) = self.bump() else {
            return Err(bad(""));
        };
        Ok(match c {
            '"' => '"',
            '\'' => '\'',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let high = self.hex4(at)?;
                if (0xD800..0xDC00).contains(&high) {
                    // A high surrogate must pair with a following `\uDC00`..`\uDFFF`.
                    if self.peek_byte(0) == Some(b'\\') && self.peek_byte(1) == Some(b'u') {
                        let low_at = self.pos();
                        self.bump();
                        self.bump();
                        let low = self.hex4(low_at)?;
                        if (0xDC00..0xE000).contains(&low) {
                            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                            return char::from_u32(code).ok_or_else(|| bad("u"));
                        }
                    }
                    return Err(error_at(
                        at,
                        format!(
                            "\\u{high:04X} is half of a surrogate pair; follow it with the low \
                             half (\\uDC00 to \\uDFFF), as in \\uD83D\\uDE00"
                        ),
                    ));
                }
                if (0xDC00..0xE000).contains(&high) {
                    return Err(error_at(
                        at,
                        format!(
                            "\\u{high:04X} is the second half of a surrogate pair and can't \
                             stand alone; write the pair, as in \\uD83D\\uDE00"
                        ),
                    ));
                }
                char::from_u32(high).ok_or_else(|| bad("u"))?
            }
            other => return Err(bad(&other.to_string())),
        })
    }

    /// Four hex digits of a `\u` escape that starts at `at`.
    fn hex4(&mut self, at: Pos) -> Result<u32, Error> {
        let mut v = 0;
        for _ in 0..4 {
            match self.peek_char().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    self.bump();
                    v = v * 16 + d;
                }
                None => {
                    return Err(error_at(
                        at,
                        "a \\u escape needs exactly four hexadecimal digits, as in \\u00e9",
                    ));
                }
            }
        }
        Ok(v)
    }

    fn punct(&mut self, c: char, pos: Pos) -> Result<TokenKind, Error> {
        let next = self.peek_byte(1);
        let next2 = self.peek_byte(2);
        let (kind, len) = match c {
            '*' => (TokenKind::Star, 1),
            ',' => (TokenKind::Comma, 1),
            '.' => (TokenKind::Dot, 1),
            ':' => (TokenKind::Colon, 1),
            ';' => (TokenKind::Semicolon, 1),
            '(' => (TokenKind::LParen, 1),
            ')' => (TokenKind::RParen, 1),
            '[' => (TokenKind::LBracket, 1),
            ']' => (TokenKind::RBracket, 1),
            '{' => (TokenKind::LBrace, 1),
            '}' => (TokenKind::RBrace, 1),
            '?' if next == Some(b'?') => (TokenKind::Coalesce, 2),
            '?' => (TokenKind::Question, 1),
            '+' => (TokenKind::Plus, 1),
            '-' => (TokenKind::Minus, 1),
            '/' => (TokenKind::Slash, 1),
            '%' => (TokenKind::Percent, 1),
            '|' if next == Some(b'|') => (TokenKind::Concat, 2),
            '|' => (TokenKind::Pipe, 1),
            '&' if next == Some(b'&') => {
                return Err(error_at(
                    pos,
                    "'&&' is not an operator: write AND for a logical and ('&' is bitwise and)",
                ));
            }
            '&' => (TokenKind::Amp, 1),
            '^' => (TokenKind::Caret, 1),
            '~' => (TokenKind::Tilde, 1),
            '=' if next == Some(b'=') => {
                return Err(error_at(
                    pos,
                    "'==' is not an operator: compare with a single '='",
                ));
            }
            '=' => (TokenKind::Eq, 1),
            '!' if next == Some(b'=') => (TokenKind::Ne, 2),
            '!' => {
                return Err(error_at(
                    pos,
                    "'!' is not an operator: write NOT to negate, or '!=' to compare",
                ));
            }
            '<' if next == Some(b'<') => (TokenKind::Shl, 2),
            '<' if next == Some(b'=') => (TokenKind::Le, 2),
            '<' if next == Some(b'>') => (TokenKind::Ne, 2),
            '<' => (TokenKind::Lt, 1),
            '>' if next == Some(b'>') && next2 == Some(b'>') => (TokenKind::UShr, 3),
            '>' if next == Some(b'>') => (TokenKind::Shr, 2),
            '>' if next == Some(b'=') => (TokenKind::Ge, 2),
            '>' => (TokenKind::Gt, 1),
            '`' => {
                return Err(error_at(
                    pos,
                    "backquotes don't quote names here: write a property with an unusual \
                     name as c[\"name\"], and strings in '…' or \"…\"",
                ));
            }
            '$' => {
                return Err(error_at(
                    pos,
                    "unexpected character '$': names may use only letters, digits and '_'; \
                     write a property like this as c[\"$name\"]",
                ));
            }
            other if other.is_alphabetic() => {
                return Err(error_at(
                    pos,
                    format!(
                        "unexpected character '{other}': names may use only ASCII letters, \
                         digits and '_'; write a property with other characters as c[\"…\"]"
                    ),
                ));
            }
            other => {
                let shown = if other.is_control() {
                    format!("U+{:04X}", other as u32)
                } else {
                    format!("'{other}'")
                };
                return Err(error_at(pos, format!("unexpected character {shown}")));
            }
        };
        for _ in 0..len {
            self.bump();
        }
        Ok(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        tokenize(text)
            .expect("lexes")
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn numbers_follow_sql_g4_and_hex() {
        assert_eq!(
            kinds("1 1. 1.5 .5 1e3 1.5E-3 0x1F"),
            vec![
                TokenKind::Number(1.0),
                TokenKind::Number(1.0),
                TokenKind::Number(1.5),
                TokenKind::Number(0.5),
                TokenKind::Number(1000.0),
                TokenKind::Number(0.0015),
                TokenKind::Number(31.0),
                TokenKind::Eof,
            ]
        );
    }

    #[test]
    fn dot_after_a_name_is_property_access() {
        assert_eq!(
            kinds("c.5"),
            vec![
                TokenKind::Ident("c".into()),
                TokenKind::Dot,
                TokenKind::Number(5.0),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn positions_count_characters_per_line() {
        let toks = tokenize("SELECT\n  'é' x").expect("lexes");
        assert_eq!(toks[1].pos, Pos { line: 2, column: 3 });
        assert_eq!(toks[2].pos, Pos { line: 2, column: 7 });
        assert_eq!(toks[3].pos, Pos { line: 2, column: 8 });
        assert_eq!(position_of("ab\ncé", 6), Pos { line: 2, column: 3 });
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        assert_eq!(edit_distance("FORM", "FROM"), 2);
        assert_eq!(edit_distance("whre", "WHERE"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
