//! The parser of the NoSQL query dialect: a hand-written recursive-descent parser with
//! precedence climbing for expressions, producing the tree of [`super::ast`]. Syntax errors
//! are 400s positioned at the offending token, with a message saying what was expected.
//!
//! Grammar (clause order as in sql.g4; keywords case-insensitive):
//!
//! ```text
//! query   := SELECT [DISTINCT] [TOP n|@p] ( * | VALUE expr [[AS] name] | item {, item} )
//!            [FROM source {JOIN join}] [WHERE expr] [GROUP BY expr {, expr}]
//!            [ORDER BY expr [ASC|DESC] {, ...}] [OFFSET n|@p LIMIT n|@p]
//! item    := expr [[AS] name]
//! source  := name IN postfix | (query) [[AS] name] | name {.name | ["name"] | [int]} [[AS] name]
//! join    := name IN postfix | (query) [[AS] name]
//! ```
//!
//! Expression precedence, loosest first: `?:` (right-associative), `??`, `OR`, `AND`,
//! prefix `NOT`, `= != <>` with `[NOT] IN / LIKE / BETWEEN`, `< <= > >=`, `|`, `^`, `&`,
//! `<< >> >>>`, `||`, `+ -`, `* / %`, prefix `- + ~`, then postfix `.name`, `[expr]`.
//! The docs only fix NOT > AND > OR; sql.g4 gives comparisons C-style precedence over the
//! bitwise operators and puts `||` lowest, which makes `c.flags & 4 = 4` mean
//! `c.flags & (4 = 4)`. We bind bitwise operators and `||` tighter than comparisons instead,
//! as the vercel/cosmosdb-query emulator's grammar and PostgreSQL do, and let `NOT` bind
//! looser than comparisons (`NOT a = b` is `NOT (a = b)`), as in SQL.
//!
//! Shapes worth knowing:
//! - every node's `pos` is its first token (a binary node sits where its left operand starts);
//! - `-1` is folded into a negative number literal; `a["b"]` is `Property`, `a[0]` `Index`;
//! - a chain of more than [`BALANCE_ABOVE`] operands of one `AND` or `OR` becomes a balanced
//!   tree (same meaning, both are associative) so that long generated filters stay shallow;
//! - a FROM or JOIN subquery without an alias binds a name no query can spell (`$0` for FROM,
//!   `$n` for the n-th JOIN);
//! - `SELECT VALUE expr AS alias` (select.md allows it) parses; the alias has no effect.

use crate::error::Error;
use crate::query::syntax::ast::{
    BinaryOp, Expr, ExprKind, From, FromKind, Join, JoinSource, Literal, OffsetLimit, OrderItem,
    PathStep, Pos, Query, Select, SelectItem, SelectKind, UnaryOp,
};
use crate::query::syntax::lexer::{self, Keyword, Token, TokenKind, edit_distance, error_at};

/// The service's limit on query text (concepts-limits.md: 512 KB).
pub const MAX_QUERY_BYTES: usize = 512 * 1024;

/// How deeply expressions and subqueries may nest; keeps every recursive consumer of the tree
/// (checks, evaluation, drop) far from the end of the stack.
pub const MAX_DEPTH: u32 = 256;

/// `AND`/`OR` chains longer than this are built as balanced trees instead of left-deep ones.
pub const BALANCE_ABOVE: usize = 32;

/// Errors travel boxed inside the parser: a small `Result` keeps the recursive frames small.
type PResult<T> = Result<T, Box<Error>>;

fn err_at(pos: Pos, message: impl Into<String>) -> Box<Error> {
    Box::new(error_at(pos, message))
}

/// Parses one query. Errors are 400s positioned at the offending token.
pub fn parse(text: &str) -> Result<Query, Error> {
    parse_boxed(text).map_err(|e| *e)
}

/// Parses a patch condition, the service's filter predicate: `FROM c [JOIN ...] [WHERE expr]`
/// without a SELECT (partial-document-update.md: `from c where c.taskNum = 3`). The result is
/// the equivalent `SELECT VALUE true ...` query, so checks and evaluation treat it like any
/// other.
pub fn parse_condition(text: &str) -> Result<Query, Error> {
    parse_condition_boxed(text).map_err(|e| *e)
}

fn parse_condition_boxed(text: &str) -> PResult<Query> {
    let mut p = Parser::start(
        text,
        "the condition is empty: write one such as FROM c WHERE c.status = 'open'",
    )?;
    let start = p.peek().pos;
    if !p.is_kw(Keyword::From) {
        return Err(
            p.expected("FROM at the start of the condition, as in FROM c WHERE c.status = 'open'")
        );
    }
    let mut st = QueryState::new();
    // `SELECT VALUE true`: valid whatever the FROM and JOINs bind; only matches count.
    let select = Select {
        distinct: false,
        top: None,
        kind: SelectKind::Value(Expr {
            kind: ExprKind::Literal(Literal::Bool(true)),
            pos: start,
        }),
        pos: start,
    };
    let mut q = clauses_after(select, start);
    p.parse_from(&mut q, &mut st)?;
    p.parse_where(&mut q, &mut st)?;
    if p.peek().kind != TokenKind::Eof {
        let what = match st.last {
            Clause::Where => "AND, OR or the end of the condition after its WHERE filter",
            _ => "JOIN, WHERE or the end of the condition after the FROM clause",
        };
        return Err(p.expected(what));
    }
    Ok(q)
}

fn parse_boxed(text: &str) -> PResult<Query> {
    let mut p = Parser::start(
        text,
        "the query is empty: write a query such as SELECT * FROM c",
    )?;
    let (query, _) = p.query(false)?;
    p.expect_end_of_query()?;
    Ok(*query)
}

/// An expression with the depth of its tree (a leaf is 1).
struct Node {
    /// Boxed: the tree needs it boxed anyway, and a small `Node` keeps frames small.
    expr: Box<Expr>,
    depth: u32,
}

impl Node {
    fn leaf(kind: ExprKind, pos: Pos) -> Node {
        Node {
            expr: Box::new(Expr { kind, pos }),
            depth: 1,
        }
    }
}

/// Binding strength of infix operators (higher binds tighter); the printer parenthesises by
/// the same table.
pub(crate) mod prec {
    pub const COALESCE: u8 = 1;
    pub const OR: u8 = 2;
    pub const AND: u8 = 3;
    pub const NOT: u8 = 4;
    pub const EQUALITY: u8 = 5;
    pub const RELATIONAL: u8 = 6;
    pub const BIT_OR: u8 = 7;
    pub const BIT_XOR: u8 = 8;
    pub const BIT_AND: u8 = 9;
    pub const SHIFT: u8 = 10;
    pub const CONCAT: u8 = 11;
    pub const ADDITIVE: u8 = 12;
    pub const MULTIPLICATIVE: u8 = 13;
    pub const UNARY: u8 = 14;
}

/// The binding strength of a binary operator; all of them are left-associative.
pub(crate) fn binary_precedence(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Coalesce => prec::COALESCE,
        BinaryOp::Or => prec::OR,
        BinaryOp::And => prec::AND,
        BinaryOp::Eq | BinaryOp::Ne => prec::EQUALITY,
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => prec::RELATIONAL,
        BinaryOp::BitOr => prec::BIT_OR,
        BinaryOp::BitXor => prec::BIT_XOR,
        BinaryOp::BitAnd => prec::BIT_AND,
        BinaryOp::Shl | BinaryOp::Shr | BinaryOp::UShr => prec::SHIFT,
        BinaryOp::Concat => prec::CONCAT,
        BinaryOp::Add | BinaryOp::Sub => prec::ADDITIVE,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => prec::MULTIPLICATIVE,
    }
}

/// Infix forms the precedence loop recognizes.
enum Infix {
    Binary(BinaryOp),
    In(bool),
    Like(bool),
    Between(bool),
    /// `NOT` in infix position not followed by IN, LIKE or BETWEEN.
    BadNot,
}

impl Infix {
    fn prec(&self) -> u8 {
        match self {
            Infix::Binary(op) => binary_precedence(*op),
            Infix::In(_) | Infix::Like(_) | Infix::Between(_) | Infix::BadNot => prec::EQUALITY,
        }
    }
}

/// An optional `[AS] alias` after a SELECT item or a FROM or JOIN source.
struct Alias {
    name: Option<String>,
    /// The alias token when the alias was given without AS: a misspelled clause keyword
    /// (`SELECT c.id FORM c`) lands here, so the clause error can point at it.
    implicit: Option<Token>,
}

/// A `(SELECT ...) [[AS] alias]` source of FROM or JOIN.
struct AliasedSubquery {
    query: Box<Query>,
    alias: Alias,
    depth: u32,
}

/// Parsing state of one query level.
struct QueryState {
    /// Depth of the deepest expression so far.
    depth: u32,
    /// The last clause parsed.
    last: Clause,
    /// The token just taken as an alias without AS, if the last thing parsed ended so.
    alias_tok: Option<Token>,
}

impl QueryState {
    /// The state right after SELECT.
    fn new() -> QueryState {
        QueryState {
            depth: 0,
            last: Clause::Select,
            alias_tok: None,
        }
    }

    /// `clause` has been parsed, ending with `alias_tok` (see [`Alias::implicit`]).
    fn ended(&mut self, clause: Clause, alias_tok: Option<Token>) {
        self.last = clause;
        self.alias_tok = alias_tok;
    }
}

/// A query of `select` whose other clauses are still to be parsed.
fn clauses_after(select: Select, pos: Pos) -> Query {
    Query {
        select,
        from: None,
        joins: Vec::new(),
        filter: None,
        group_by: Vec::new(),
        order_by: Vec::new(),
        offset_limit: None,
        pos,
    }
}

/// Clauses in the order a query must give them, for "out of place" messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Clause {
    Select,
    From,
    Join,
    Where,
    GroupBy,
    OrderBy,
    /// `ORDER BY RANK <scoring function>` (one function, no direction).
    OrderByRank,
    OffsetLimit,
}

impl Clause {
    fn name(self) -> &'static str {
        match self {
            Clause::Select => "SELECT",
            Clause::From => "FROM",
            Clause::Join => "JOIN",
            Clause::Where => "WHERE",
            Clause::GroupBy => "GROUP BY",
            Clause::OrderBy => "ORDER BY",
            Clause::OrderByRank => "ORDER BY RANK",
            Clause::OffsetLimit => "OFFSET ... LIMIT",
        }
    }

    fn of_keyword(kw: Keyword) -> Option<Clause> {
        Some(match kw {
            Keyword::Select => Clause::Select,
            Keyword::From => Clause::From,
            Keyword::Join => Clause::Join,
            Keyword::Where => Clause::Where,
            Keyword::Group => Clause::GroupBy,
            Keyword::Order => Clause::OrderBy,
            Keyword::Offset | Keyword::Limit => Clause::OffsetLimit,
            _ => return None,
        })
    }
}

const CLAUSE_WORDS: &[&str] = &["FROM", "JOIN", "WHERE", "GROUP", "ORDER", "OFFSET", "LIMIT"];

/// The clause keyword `word` looks like a misspelling of (`FORM`, `WHRE`), if any.
fn misspelled_clause(word: &str) -> Option<&'static str> {
    if word.len() < 3 {
        return None;
    }
    CLAUSE_WORDS.iter().copied().find(|k| {
        let tolerance = if k.len() <= 4 { 1 } else { 2 };
        edit_distance(word, k) <= tolerance || is_transposition(word, k)
    })
}

/// Whether `a` is `b` with two adjacent letters swapped (ignoring ASCII case).
fn is_transposition(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_uppercase()).collect();
    let b: Vec<char> = b.chars().collect();
    if a.len() != b.len() {
        return false;
    }
    let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    diff.len() == 2
        && diff[1] == diff[0] + 1
        && a[diff[0]] == b[diff[1]]
        && a[diff[1]] == b[diff[0]]
}

/// The error for keyword `kw` at `pos` where clause `last` has just ended, if the keyword is
/// a known misplacement (a clause out of order or repeated, LIMIT without OFFSET, an alias in
/// GROUP BY or ORDER BY, DISTINCT or TOP after the SELECT list).
fn misplaced_keyword(kw: Keyword, last: Clause, pos: Pos) -> Option<Box<Error>> {
    if let Some(clause) = Clause::of_keyword(kw) {
        if kw == Keyword::Limit {
            return Some(err_at(
                pos,
                "LIMIT needs an OFFSET before it: write OFFSET 0 LIMIT n (or use TOP n)",
            ));
        }
        if clause == Clause::Select {
            return Some(err_at(
                pos,
                "a request holds a single query; put a subquery in parentheses: (SELECT ...)",
            ));
        }
        if clause == Clause::Join && last == Clause::Select {
            return Some(err_at(
                pos,
                "JOIN needs a FROM clause before it: SELECT ... FROM c JOIN t IN c.tags",
            ));
        }
        if clause == last {
            let hint = if clause == Clause::Where {
                "; combine conditions with AND"
            } else {
                ""
            };
            return Some(err_at(
                pos,
                format!("a query can have only one {} clause{hint}", clause.name()),
            ));
        }
        if clause < last {
            return Some(err_at(
                pos,
                format!(
                    "{} must come before {}: clauses go in the order SELECT, FROM, JOIN, WHERE, \
                     GROUP BY, ORDER BY, OFFSET ... LIMIT",
                    clause.name(),
                    last.name()
                ),
            ));
        }
    }
    match kw {
        Keyword::As
            if matches!(
                last,
                Clause::GroupBy | Clause::OrderBy | Clause::OrderByRank
            ) =>
        {
            Some(err_at(
                pos,
                format!(
                    "{} items can't have aliases; give aliases in the SELECT list",
                    last.name()
                ),
            ))
        }
        Keyword::Top | Keyword::Distinct => Some(err_at(
            pos,
            format!(
                "{} goes right after SELECT: SELECT DISTINCT TOP 10 ...",
                kw.as_str()
            ),
        )),
        _ => None,
    }
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    idx: usize,
    /// Current recursion depth (expressions and subqueries).
    depth: u32,
}

impl<'a> Parser<'a> {
    /// A parser positioned on the first token of `text`, after the length limit and the
    /// empty-text check (`empty` says what to write instead).
    fn start(text: &'a str, empty: &str) -> PResult<Parser<'a>> {
        if text.len() > MAX_QUERY_BYTES {
            let pos = lexer::position_of(text, MAX_QUERY_BYTES);
            return Err(err_at(
                pos,
                format!(
                    "the query text is {} bytes long; the limit is {MAX_QUERY_BYTES} bytes \
                     (512 KB) — pass large values as parameters or split the query",
                    text.len()
                ),
            ));
        }
        let tokens = lexer::tokenize(text)?;
        let p = Parser {
            text,
            tokens,
            idx: 0,
            depth: 0,
        };
        if p.peek().kind == TokenKind::Eof {
            return Err(err_at(p.peek().pos, empty));
        }
        Ok(p)
    }
}

impl Parser<'_> {
    // -----------------------------------------------------------------------------------------
    // Token helpers

    fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        let i = (self.idx + ahead).min(self.tokens.len().saturating_sub(1));
        &self.tokens[i]
    }

    fn advance(&mut self) -> Token {
        let t = self.peek().clone();
        if self.idx + 1 < self.tokens.len() {
            self.idx += 1;
        }
        t
    }

    fn is_kw(&self, kw: Keyword) -> bool {
        self.peek().kind == TokenKind::Keyword(kw)
    }

    fn eat_kw(&mut self, kw: Keyword) -> bool {
        if self.is_kw(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        if &self.peek().kind == kind {
            self.advance();
            true
        } else {
            false
        }
    }

    /// How a token is shown in messages: its source text, or "the end of the query".
    fn describe(&self, t: &Token) -> String {
        if t.kind == TokenKind::Eof {
            return "the end of the query".to_string();
        }
        let raw = self.text.get(t.start..t.end).unwrap_or("");
        let shown: String = raw.chars().take(40).collect();
        if shown.len() < raw.len() {
            format!("'{shown}…'")
        } else {
            format!("'{shown}'")
        }
    }

    /// "expected {what}, found {token}" at the current token.
    fn expected(&self, what: &str) -> Box<Error> {
        let t = self.peek();
        err_at(
            t.pos,
            format!("expected {what}, found {}", self.describe(t)),
        )
    }

    /// `)` closing the `(` at `open`.
    fn expect_close_paren(&mut self, open: Pos) -> PResult<()> {
        if self.eat(&TokenKind::RParen) {
            return Ok(());
        }
        Err(self.unclosed('(', ')', open))
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.too_deep(self.peek().pos));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn too_deep(&self, pos: Pos) -> Box<Error> {
        err_at(
            pos,
            format!(
                "the query nests expressions too deeply (more than {MAX_DEPTH} levels); \
                 simplify it or split it into several queries"
            ),
        )
    }

    /// A node over `children`, failing when the tree would get too deep.
    fn node(&self, kind: ExprKind, pos: Pos, children: &[u32]) -> PResult<Node> {
        let depth = children.iter().copied().max().unwrap_or(0) + 1;
        if depth > MAX_DEPTH {
            return Err(self.too_deep(self.peek().pos));
        }
        Ok(Node {
            expr: Box::new(Expr { kind, pos }),
            depth,
        })
    }

    /// The current token's name if it is an identifier, taking it.
    fn eat_ident(&mut self) -> Option<String> {
        let TokenKind::Ident(name) = &self.peek().kind else {
            return None;
        };
        let name = name.clone();
        self.advance();
        Some(name)
    }

    /// A name that binds an alias (after AS, after a FROM source, after a JOIN subquery).
    fn alias_after_as(&mut self) -> PResult<String> {
        if let Some(name) = self.eat_ident() {
            return Ok(name);
        }
        let t = self.peek();
        match &t.kind {
            kind if kind.is_reserved_word() => Err(err_at(
                t.pos,
                format!(
                    "{} is a reserved word and can't be used as an alias; choose another name",
                    self.describe(t)
                ),
            )),
            TokenKind::Str(_) => Err(err_at(
                t.pos,
                "an alias must be a plain name (letters, digits and '_'); for other property \
                 names build the object yourself: SELECT VALUE {\"my name\": ...}",
            )),
            _ => Err(self.expected("an alias name after AS")),
        }
    }

    /// `[AS] alias`, if present.
    fn optional_alias(&mut self) -> PResult<Alias> {
        if self.eat_kw(Keyword::As) {
            return Ok(Alias {
                name: Some(self.alias_after_as()?),
                implicit: None,
            });
        }
        if let TokenKind::Ident(name) = &self.peek().kind {
            let name = name.clone();
            if let Some(e) = self.foreign_syntax(&name) {
                return Err(e);
            }
            return Ok(Alias {
                name: Some(name),
                implicit: Some(self.advance()),
            });
        }
        Ok(Alias {
            name: None,
            implicit: None,
        })
    }

    /// SQL from other dialects that would otherwise be taken as an alias (`FROM c LEFT JOIN`,
    /// `... UNION SELECT`).
    #[cold]
    fn foreign_syntax(&self, word: &str) -> Option<Box<Error>> {
        let upper = word.to_ascii_uppercase();
        let next = &self.peek_at(1).kind;
        let pos = self.peek().pos;
        match upper.as_str() {
            "INNER" | "LEFT" | "RIGHT" | "OUTER" | "CROSS" | "FULL"
                if matches!(next, TokenKind::Keyword(Keyword::Join))
                    || matches!(&next, TokenKind::Ident(w) if w.eq_ignore_ascii_case("OUTER")) =>
            {
                Some(err_at(
                    pos,
                    format!(
                        "{upper} JOIN is not supported: JOIN here is always a self-join with an \
                         array or subquery of the same item, written JOIN t IN c.tags"
                    ),
                ))
            }
            "UNION" | "INTERSECT" | "EXCEPT" | "MINUS" => Some(err_at(
                pos,
                format!("{upper} is not supported: run the queries separately"),
            )),
            _ => None,
        }
    }

    /// Whether the current token may follow a clause: another clause keyword, `)` (end of a
    /// subquery) or the end of the text.
    fn at_clause_boundary(&self) -> bool {
        match &self.peek().kind {
            TokenKind::Keyword(kw) => Clause::of_keyword(*kw).is_some(),
            TokenKind::RParen | TokenKind::Eof | TokenKind::Semicolon => true,
            _ => false,
        }
    }

    /// The error for a token that can't continue the query after clause `last`.
    /// `implicit_alias` is the token taken as an alias without AS just before, if any: a
    /// misspelled keyword (`SELECT c.id FORM c`) lands there, so the message points at it.
    fn clause_error(
        &self,
        last: Clause,
        expected: &str,
        implicit_alias: Option<&Token>,
        nested: bool,
    ) -> Box<Error> {
        if let Some(alias) = implicit_alias
            && !self.at_clause_boundary()
            && let Some(e) = self.misspelled_clause_at(alias, expected)
        {
            return e;
        }
        let t = self.peek();
        let specific = match &t.kind {
            TokenKind::Keyword(kw) => misplaced_keyword(*kw, last, t.pos),
            TokenKind::Semicolon => Some(err_at(
                t.pos,
                "';' is not part of the query language: remove it (a request holds one query)",
            )),
            TokenKind::RParen if !nested => Some(err_at(
                t.pos,
                "unmatched ')': there is no '(' for it to close",
            )),
            TokenKind::Ident(word) => self
                .foreign_syntax(word)
                .or_else(|| self.misspelled_clause_at(t, expected)),
            _ => None,
        };
        specific.unwrap_or_else(|| self.expected(expected))
    }

    /// "expected ..., found 'FORM' (did you mean FROM?)" when `t` is a name that looks like a
    /// misspelled clause keyword.
    fn misspelled_clause_at(&self, t: &Token, expected: &str) -> Option<Box<Error>> {
        let TokenKind::Ident(word) = &t.kind else {
            return None;
        };
        let kw = misspelled_clause(word)?;
        Some(err_at(
            t.pos,
            format!(
                "expected {expected}, found {} (did you mean {kw}?)",
                self.describe(t)
            ),
        ))
    }

    // -----------------------------------------------------------------------------------------
    // Queries

    /// One query, starting at SELECT. `nested` is true inside parentheses. The query is
    /// boxed at once and each clause parsed by its own function, keeping this frame (which
    /// recurses through subqueries) small.
    fn query(&mut self, nested: bool) -> PResult<(Box<Query>, u32)> {
        self.enter()?;
        let start = self.peek().pos;
        if !self.eat_kw(Keyword::Select) {
            return Err(self.expected("SELECT at the start of the query"));
        }
        let mut st = QueryState::new();
        let select = self.select_clause(&mut st)?;
        let mut q = Box::new(clauses_after(select, start));
        self.parse_from(&mut q, &mut st)?;
        self.parse_where(&mut q, &mut st)?;
        self.parse_group_by(&mut q, &mut st)?;
        self.parse_order_by(&mut q, &mut st)?;
        self.parse_offset_limit(&mut q, &mut st)?;
        self.end_of_query(nested, &st)?;
        self.leave();
        Ok((q, st.depth + 1))
    }

    fn parse_from(&mut self, q: &mut Query, st: &mut QueryState) -> PResult<()> {
        if !self.eat_kw(Keyword::From) {
            return Ok(());
        }
        let (from, d, tok) = self.source_after_from()?;
        st.depth = st.depth.max(d);
        q.from = Some(from);
        st.ended(Clause::From, tok);
        while self.eat_kw(Keyword::Join) {
            let (join, d, tok) = self.join(q.joins.len() + 1)?;
            st.depth = st.depth.max(d);
            q.joins.push(join);
            st.ended(Clause::Join, tok);
        }
        Ok(())
    }

    /// Takes `GROUP BY` or `ORDER BY` (`first` is GROUP or ORDER) if it starts here.
    fn eat_by_clause(&mut self, first: Keyword) -> PResult<bool> {
        if !self.eat_kw(first) {
            return Ok(false);
        }
        if !self.eat_kw(Keyword::By) {
            return Err(self.expected(&format!("BY after {}", first.as_str())));
        }
        Ok(true)
    }

    fn parse_where(&mut self, q: &mut Query, st: &mut QueryState) -> PResult<()> {
        if !self.eat_kw(Keyword::Where) {
            return Ok(());
        }
        let n = self.expr()?;
        st.depth = st.depth.max(n.depth);
        q.filter = Some(*n.expr);
        st.ended(Clause::Where, None);
        Ok(())
    }

    fn parse_group_by(&mut self, q: &mut Query, st: &mut QueryState) -> PResult<()> {
        if !self.eat_by_clause(Keyword::Group)? {
            return Ok(());
        }
        loop {
            let n = self.expr()?;
            st.depth = st.depth.max(n.depth);
            q.group_by.push(*n.expr);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        st.ended(Clause::GroupBy, None);
        Ok(())
    }

    fn parse_order_by(&mut self, q: &mut Query, st: &mut QueryState) -> PResult<()> {
        if !self.eat_by_clause(Keyword::Order)? {
            return Ok(());
        }
        if self.at_rank() {
            // `ORDER BY RANK <scoring function>`: one score, no direction (order-by-rank.md).
            let pos = self.peek().pos;
            self.advance();
            let n = self.expr()?;
            st.depth = st.depth.max(n.depth);
            q.order_by.push(OrderItem {
                expr: *n.expr,
                descending: true,
                direction_given: false,
                rank: true,
                pos,
            });
        } else {
            loop {
                let pos = self.peek().pos;
                let n = self.expr()?;
                st.depth = st.depth.max(n.depth);
                let (descending, direction_given) = if self.eat_kw(Keyword::Desc) {
                    (true, true)
                } else {
                    (false, self.eat_kw(Keyword::Asc))
                };
                q.order_by.push(OrderItem {
                    expr: *n.expr,
                    descending,
                    direction_given,
                    rank: false,
                    pos,
                });
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        let clause = if q.order_by.iter().any(|o| o.rank) {
            Clause::OrderByRank
        } else {
            Clause::OrderBy
        };
        st.ended(clause, None);
        Ok(())
    }

    fn parse_offset_limit(&mut self, q: &mut Query, st: &mut QueryState) -> PResult<()> {
        if !self.eat_kw(Keyword::Offset) {
            return Ok(());
        }
        let offset = self.count("OFFSET")?;
        if !self.eat_kw(Keyword::Limit) {
            return Err(
                self.expected("LIMIT after the OFFSET count (both are required: OFFSET n LIMIT m)")
            );
        }
        let limit = self.count("LIMIT")?;
        q.offset_limit = Some(OffsetLimit { offset, limit });
        st.ended(Clause::OffsetLimit, None);
        Ok(())
    }

    /// The query ends here: at `)` when nested, at the end of the text otherwise.
    fn end_of_query(&self, nested: bool, st: &QueryState) -> PResult<()> {
        let ends = if nested {
            self.peek().kind == TokenKind::RParen
        } else {
            self.peek().kind == TokenKind::Eof
        };
        if ends {
            return Ok(());
        }
        let default = match st.last {
            Clause::Select => "FROM, WHERE, GROUP BY, ORDER BY or OFFSET after the SELECT list",
            _ => "JOIN, WHERE, GROUP BY, ORDER BY or OFFSET after the FROM clause",
        };
        let expected = self.after_clause(st.last, default);
        let expected = if nested {
            format!("{expected}, or ')' to end the subquery")
        } else {
            expected.to_string()
        };
        Err(self.clause_error(st.last, &expected, st.alias_tok.as_ref(), nested))
    }

    /// What may follow clause `last`, for messages.
    fn after_clause(&self, last: Clause, default: &'static str) -> &'static str {
        match last {
            Clause::Where => "AND, OR, GROUP BY, ORDER BY or OFFSET after the WHERE condition",
            Clause::GroupBy => "',', ORDER BY or OFFSET after the GROUP BY list",
            Clause::OrderBy => "',', ASC, DESC or OFFSET after the ORDER BY list",
            Clause::OrderByRank => {
                "OFFSET after the ORDER BY RANK scoring function (it ranks by one function, \
                 without ASC or DESC; fuse several with RRF)"
            }
            Clause::OffsetLimit => "the end of the query after OFFSET ... LIMIT",
            _ => default,
        }
    }

    /// `RANK` followed by a function call: `RANK` is not a reserved word, so `ORDER BY rank`
    /// still sorts by a property named rank.
    fn at_rank(&self) -> bool {
        matches!(&self.peek().kind, TokenKind::Ident(w) if w.eq_ignore_ascii_case("RANK"))
            && matches!(self.peek_at(1).kind, TokenKind::Ident(_))
            && self.peek_at(2).kind == TokenKind::LParen
    }

    /// The count of TOP, OFFSET or LIMIT: an optionally signed number literal or a parameter
    /// (sql.g4's NUMERIC_LITERAL carries its sign; the checker rejects negatives).
    fn count(&mut self, clause: &str) -> PResult<Expr> {
        let pos = self.peek().pos;
        // A sign before a number is part of it; `Some(true)` for `-`.
        let negative = match (&self.peek().kind, &self.peek_at(1).kind) {
            (TokenKind::Minus, TokenKind::Number(_)) => Some(true),
            (TokenKind::Plus, TokenKind::Number(_)) => Some(false),
            _ => None,
        };
        if negative.is_some() {
            self.advance();
        }
        let kind = match &self.peek().kind {
            TokenKind::Param(name) => ExprKind::Param(name.clone()),
            TokenKind::Number(n) if negative == Some(true) => {
                ExprKind::Literal(Literal::Number(-n))
            }
            TokenKind::Number(n) => ExprKind::Literal(Literal::Number(*n)),
            _ => {
                return Err(self.expected(&format!(
                    "a non-negative integer or a parameter (such as @{}) after {clause}",
                    clause.to_ascii_lowercase()
                )));
            }
        };
        self.advance();
        Ok(Expr { kind, pos })
    }

    /// `SELECT [DISTINCT] [TOP n] selection` (SELECT already taken).
    fn select_clause(&mut self, st: &mut QueryState) -> PResult<Select> {
        let distinct = self.eat_kw(Keyword::Distinct);
        let top = if self.eat_kw(Keyword::Top) {
            Some(self.count("TOP")?)
        } else {
            None
        };
        if self.is_kw(Keyword::Distinct) {
            return Err(err_at(
                self.peek().pos,
                "DISTINCT must come before TOP: SELECT DISTINCT TOP n ...",
            ));
        }
        let pos = self.peek().pos;
        let kind = match &self.peek().kind {
            TokenKind::Star => {
                self.advance();
                if self.peek().kind == TokenKind::Comma {
                    return Err(err_at(
                        pos,
                        "'*' must be the only item in the SELECT list: use SELECT * or list the \
                         values you want, such as SELECT c.id, c.name",
                    ));
                }
                SelectKind::Star
            }
            TokenKind::Keyword(Keyword::Value) => self.select_value(st)?,
            _ => self.select_items(st)?,
        };
        Ok(Select {
            distinct,
            top,
            kind,
            pos,
        })
    }

    /// `VALUE expr [[AS] alias]`; the alias (allowed by select.md) has no effect.
    fn select_value(&mut self, st: &mut QueryState) -> PResult<SelectKind> {
        self.advance();
        if self.peek().kind == TokenKind::Star {
            return Err(err_at(
                self.peek().pos,
                "SELECT VALUE * is not valid: use SELECT * for whole items, or SELECT \
                 VALUE c to return each item as a value",
            ));
        }
        let n = self.expr()?;
        st.depth = st.depth.max(n.depth);
        st.alias_tok = self.optional_alias()?.implicit;
        if self.peek().kind == TokenKind::Comma {
            return Err(err_at(
                self.peek().pos,
                "SELECT VALUE takes a single expression; to return several values use \
                 SELECT a, b or SELECT VALUE {a: ..., b: ...}",
            ));
        }
        Ok(SelectKind::Value(*n.expr))
    }

    /// `expr [[AS] alias], ...`
    fn select_items(&mut self, st: &mut QueryState) -> PResult<SelectKind> {
        let mut items = Vec::new();
        loop {
            let item_pos = self.peek().pos;
            match &self.peek().kind {
                TokenKind::Star => {
                    return Err(err_at(
                        item_pos,
                        "'*' must be the only item in the SELECT list: use SELECT * or \
                         list the values you want",
                    ));
                }
                TokenKind::Keyword(Keyword::From) | TokenKind::Eof if items.is_empty() => {
                    return Err(self.expected(
                        "what to select (*, VALUE expression, or a list of expressions) after SELECT",
                    ));
                }
                _ => {}
            }
            let n = self.expr()?;
            st.depth = st.depth.max(n.depth);
            let alias = self.optional_alias()?;
            st.alias_tok = alias.implicit;
            items.push(SelectItem {
                expr: *n.expr,
                alias: alias.name,
                pos: item_pos,
            });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
            if self.at_clause_boundary() {
                return Err(self.expected(
                    "another item after ',' in the SELECT list (or remove the trailing ',')",
                ));
            }
        }
        Ok(SelectKind::Items(items))
    }

    /// The source after FROM.
    fn source_after_from(&mut self) -> PResult<(From, u32, Option<Token>)> {
        let t = self.peek().clone();
        let pos = t.pos;
        match &t.kind {
            TokenKind::LParen => {
                let sub = self.aliased_subquery("FROM")?;
                let kind = FromKind::Subquery {
                    query: sub.query,
                    alias: sub.alias.name.unwrap_or_else(|| "$0".to_string()),
                };
                Ok((From { kind, pos }, sub.depth, sub.alias.implicit))
            }
            TokenKind::Ident(name) => {
                let name = name.clone();
                self.advance();
                if self.eat_kw(Keyword::In) {
                    let n = self.postfix_expr()?;
                    let kind = FromKind::In {
                        alias: name,
                        expr: *n.expr,
                    };
                    return Ok((From { kind, pos }, n.depth, None));
                }
                let mut path = Vec::new();
                loop {
                    match &self.peek().kind {
                        TokenKind::Dot => {
                            self.advance();
                            path.push(PathStep::Property(self.property_name()?));
                        }
                        TokenKind::LBracket => {
                            let open = self.advance().pos;
                            path.push(self.path_index()?);
                            if !self.eat(&TokenKind::RBracket) {
                                return Err(self.unclosed('[', ']', open));
                            }
                        }
                        _ => break,
                    }
                }
                let alias = self.optional_alias()?;
                let kind = FromKind::Container {
                    name,
                    path,
                    alias: alias.name,
                };
                Ok((From { kind, pos }, 1, alias.implicit))
            }
            kind if kind.is_reserved_word() => Err(err_at(
                pos,
                format!(
                    "expected a container name, 'alias IN expression' or a (subquery) after FROM, \
                     found {}{}",
                    self.describe(&t),
                    if matches!(t.kind, TokenKind::Keyword(_)) {
                        ", a reserved word"
                    } else {
                        ""
                    }
                ),
            )),
            _ => {
                Err(self
                    .expected("a container name, 'alias IN expression' or a (subquery) after FROM"))
            }
        }
    }

    /// `(SELECT ...) [[AS] alias]` after FROM or JOIN.
    fn aliased_subquery(&mut self, after: &str) -> PResult<AliasedSubquery> {
        let open = self.advance().pos;
        if !self.is_kw(Keyword::Select) {
            return Err(self.expected(&format!(
                "a subquery (SELECT ...) inside the parentheses after {after}"
            )));
        }
        let (query, depth) = self.query(true)?;
        self.expect_close_paren(open)?;
        Ok(AliasedSubquery {
            query,
            alias: self.optional_alias()?,
            depth,
        })
    }

    /// `[ "name" ]` or `[ int ]` in a FROM path (the `[` already taken).
    fn path_index(&mut self) -> PResult<PathStep> {
        let t = self.peek().clone();
        let negative = t.kind == TokenKind::Minus;
        if negative {
            self.advance();
        }
        let t2 = self.peek().clone();
        match &t2.kind {
            TokenKind::Str(s) if !negative => {
                self.advance();
                Ok(PathStep::Property(s.clone()))
            }
            TokenKind::Number(n) => {
                if n.fract() != 0.0 || *n > 9_007_199_254_740_992.0 {
                    return Err(err_at(
                        t2.pos,
                        "an array index in a FROM path must be an integer",
                    ));
                }
                self.advance();
                // Exact: the value is an integer no larger than 2^53.
                let i = *n as i64;
                Ok(PathStep::Index(if negative { -i } else { i }))
            }
            _ => Err(self
                .expected("a property name in quotes or an array index inside [ ] in a FROM path")),
        }
    }

    /// The source after JOIN; `index` is the 1-based JOIN number (for a synthetic alias).
    fn join(&mut self, index: usize) -> PResult<(Join, u32, Option<Token>)> {
        let t = self.peek().clone();
        let pos = t.pos;
        match &t.kind {
            TokenKind::LParen => {
                let sub = self.aliased_subquery("JOIN")?;
                let join = Join {
                    alias: sub.alias.name.unwrap_or_else(|| format!("${index}")),
                    source: JoinSource::Subquery(sub.query),
                    pos,
                };
                Ok((join, sub.depth, sub.alias.implicit))
            }
            TokenKind::Ident(name) if self.peek_at(1).kind == TokenKind::Keyword(Keyword::In) => {
                let alias = name.clone();
                self.advance();
                self.advance();
                let n = self.postfix_expr()?;
                Ok((
                    Join {
                        alias,
                        source: JoinSource::In(*n.expr),
                        pos,
                    },
                    n.depth,
                    None,
                ))
            }
            TokenKind::Ident(_)
                if matches!(self.peek_at(1).kind, TokenKind::Dot | TokenKind::LBracket) =>
            {
                // from.md's `<container_expression> [[AS] input_alias]`: the value at a path,
                // joined once (the old join docs' `JOIN f.children`), not iterated.
                let n = self.postfix_expr()?;
                let expr = *n.expr;
                if !expr.is_document_path() {
                    return Err(err_at(
                        pos,
                        "a JOIN source is 'alias IN expression', a path such as c.address (joined once, \
                         not iterated) or a (subquery)",
                    ));
                }
                let alias = self.optional_alias()?;
                let name = alias.name.unwrap_or_else(|| {
                    last_property(&expr).map_or_else(|| format!("${index}"), str::to_string)
                });
                Ok((
                    Join {
                        alias: name,
                        source: JoinSource::Value(expr),
                        pos,
                    },
                    n.depth,
                    alias.implicit,
                ))
            }
            TokenKind::Ident(_) => {
                let t1 = self.peek_at(1).clone();
                Err(err_at(
                    t1.pos,
                    format!(
                        "expected IN after the JOIN alias (JOIN x IN c.items), found {}",
                        self.describe(&t1)
                    ),
                ))
            }
            _ => Err(self.expected(
                "'alias IN expression', a path such as c.address or a (subquery) after JOIN",
            )),
        }
    }

    /// A property name after `.`.
    fn property_name(&mut self) -> PResult<String> {
        if let Some(name) = self.eat_ident() {
            return Ok(name);
        }
        let t = self.peek();
        match &t.kind {
            kind if kind.is_reserved_word() => {
                let word = self.text.get(t.start..t.end).unwrap_or("");
                Err(err_at(
                    t.pos,
                    format!(
                        "'{word}' is a reserved word and can't follow '.'; write the property as [\"{word}\"]"
                    ),
                ))
            }
            TokenKind::Number(_) => {
                let raw = self.text.get(t.start..t.end).unwrap_or("");
                Err(err_at(
                    t.pos,
                    format!(
                        "a property name can't start with a digit: write [{raw}] for an array \
                         element or [\"{raw}\"] for a property"
                    ),
                ))
            }
            TokenKind::Str(s) => Err(err_at(
                t.pos,
                format!("write a quoted property name in brackets: [\"{s}\"]"),
            )),
            _ => Err(self.expected("a property name after '.'")),
        }
    }

    /// After the outermost query: only the end of the text may follow.
    fn expect_end_of_query(&self) -> PResult<()> {
        if self.peek().kind == TokenKind::Eof {
            Ok(())
        } else {
            Err(self.clause_error(Clause::OffsetLimit, "the end of the query", None, false))
        }
    }

    // -----------------------------------------------------------------------------------------
    // Expressions
    //
    // These functions recurse once per nesting level, so each keeps its own frame small:
    // every construct lives in its own function and error paths are built out of line. (In
    // debug builds a frame holds every temporary of every match arm.)

    /// A full expression (the conditional operator is the loosest).
    fn expr(&mut self) -> PResult<Node> {
        self.enter()?;
        let cond = self.binary(prec::COALESCE)?;
        let node = if self.peek().kind == TokenKind::Question {
            self.ternary(cond)?
        } else {
            cond
        };
        self.leave();
        Ok(node)
    }

    /// `cond ? a : b` after `cond`; right-associative.
    fn ternary(&mut self, cond: Node) -> PResult<Node> {
        self.advance();
        let then = self.expr()?;
        if self.peek().kind != TokenKind::Colon {
            return Err(self.expected("':' to complete the conditional expression (cond ? a : b)"));
        }
        self.advance();
        let otherwise = self.expr()?;
        let pos = cond.expr.pos;
        let depths = [cond.depth, then.depth, otherwise.depth];
        let kind = ExprKind::Ternary(cond.expr, then.expr, otherwise.expr);
        self.node(kind, pos, &depths)
    }

    /// The infix operator at the current token, if any.
    fn infix(&self) -> Option<Infix> {
        use BinaryOp as B;
        Some(Infix::Binary(match &self.peek().kind {
            TokenKind::Coalesce => B::Coalesce,
            TokenKind::Keyword(Keyword::Or) => B::Or,
            TokenKind::Keyword(Keyword::And) => B::And,
            TokenKind::Eq => B::Eq,
            TokenKind::Ne => B::Ne,
            TokenKind::Lt => B::Lt,
            TokenKind::Le => B::Le,
            TokenKind::Gt => B::Gt,
            TokenKind::Ge => B::Ge,
            TokenKind::Pipe => B::BitOr,
            TokenKind::Caret => B::BitXor,
            TokenKind::Amp => B::BitAnd,
            TokenKind::Shl => B::Shl,
            TokenKind::Shr => B::Shr,
            TokenKind::UShr => B::UShr,
            TokenKind::Concat => B::Concat,
            TokenKind::Plus => B::Add,
            TokenKind::Minus => B::Sub,
            TokenKind::Star => B::Mul,
            TokenKind::Slash => B::Div,
            TokenKind::Percent => B::Mod,
            TokenKind::Keyword(Keyword::In) => return Some(Infix::In(false)),
            TokenKind::Keyword(Keyword::Like) => return Some(Infix::Like(false)),
            TokenKind::Keyword(Keyword::Between) => return Some(Infix::Between(false)),
            TokenKind::Keyword(Keyword::Not) => {
                return Some(match self.peek_at(1).kind {
                    TokenKind::Keyword(Keyword::In) => Infix::In(true),
                    TokenKind::Keyword(Keyword::Like) => Infix::Like(true),
                    TokenKind::Keyword(Keyword::Between) => Infix::Between(true),
                    _ => Infix::BadNot,
                });
            }
            _ => return None,
        }))
    }

    /// Operators binding at least as tightly as `min` (precedence climbing).
    fn binary(&mut self, min: u8) -> PResult<Node> {
        let mut left = self.prefix(min)?;
        while let Some(op) = self.infix() {
            let p = op.prec();
            if p < min {
                break;
            }
            left = match op {
                Infix::Binary(op @ (BinaryOp::And | BinaryOp::Or)) => self.and_or(op, left, p)?,
                Infix::Binary(op) => self.binary_op(op, left, p)?,
                Infix::In(negated) => self.in_list(left, negated)?,
                Infix::Like(negated) => self.like(left, negated, p)?,
                Infix::Between(negated) => self.between(left, negated, p)?,
                Infix::BadNot => return Err(self.bad_not()),
            };
        }
        Ok(left)
    }

    fn binary_op(&mut self, op: BinaryOp, left: Node, p: u8) -> PResult<Node> {
        self.advance();
        let right = self.binary(p + 1)?;
        self.binary_node(op, left, right)
    }

    /// `left op right`, positioned where `left` starts.
    fn binary_node(&self, op: BinaryOp, left: Node, right: Node) -> PResult<Node> {
        let pos = left.expr.pos;
        let depths = [left.depth, right.depth];
        let kind = ExprKind::Binary(op, left.expr, right.expr);
        self.node(kind, pos, &depths)
    }

    /// A chain `a OP b OP c ...` of one AND or OR.
    fn and_or(&mut self, op: BinaryOp, first: Node, p: u8) -> PResult<Node> {
        let mut operands = vec![first];
        while matches!(self.infix(), Some(Infix::Binary(o)) if o == op) {
            self.advance();
            operands.push(self.binary(p + 1)?);
        }
        self.chain(op, operands)
    }

    #[cold]
    fn bad_not(&self) -> Box<Error> {
        let after = self.peek_at(1);
        err_at(
            after.pos,
            format!(
                "expected IN, LIKE or BETWEEN after NOT, found {}",
                self.describe(after)
            ),
        )
    }

    /// Takes `NOT` (when negated) and the IN, LIKE or BETWEEN keyword.
    fn take_negatable(&mut self, negated: bool) {
        if negated {
            self.advance();
        }
        self.advance();
    }

    /// `[NOT] IN (a, b, ...)` after the tested expression.
    fn in_list(&mut self, left: Node, negated: bool) -> PResult<Node> {
        self.take_negatable(negated);
        let open = self.peek().pos;
        if self.peek().kind != TokenKind::LParen
            || self.peek_at(1).kind == TokenKind::Keyword(Keyword::Select)
            || self.peek_at(1).kind == TokenKind::RParen
        {
            return Err(self.bad_in_list());
        }
        self.advance();
        let mut list = Vec::new();
        let mut depth = left.depth;
        loop {
            let n = self.expr()?;
            depth = depth.max(n.depth);
            list.push(*n.expr);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect_close_paren(open)?;
        let pos = left.expr.pos;
        let kind = ExprKind::In {
            expr: left.expr,
            list,
            negated,
        };
        self.node(kind, pos, &[depth])
    }

    #[cold]
    fn bad_in_list(&self) -> Box<Error> {
        if self.peek().kind != TokenKind::LParen {
            return self.expected(
                "'(' and a list of values after IN, as in IN (1, 2, 3) \
                 (to test array membership use ARRAY_CONTAINS)",
            );
        }
        let next = self.peek_at(1);
        if next.kind == TokenKind::RParen {
            return err_at(
                next.pos,
                "expected at least one value in the IN list, found ')'",
            );
        }
        err_at(
            next.pos,
            "IN takes a list of values, not a subquery; use \
             EXISTS(SELECT VALUE x FROM x IN c.items WHERE x = ...) or ARRAY_CONTAINS",
        )
    }

    /// `[NOT] LIKE pattern [ESCAPE 'c']` after the tested expression.
    fn like(&mut self, left: Node, negated: bool, p: u8) -> PResult<Node> {
        self.take_negatable(negated);
        let pattern = self.binary(p + 1)?;
        let escape = if self.eat_kw(Keyword::Escape) {
            Some(Box::new(self.escape_char()?))
        } else {
            None
        };
        let pos = left.expr.pos;
        let depths = [left.depth, pattern.depth];
        let kind = ExprKind::Like {
            expr: left.expr,
            pattern: pattern.expr,
            escape,
            negated,
        };
        self.node(kind, pos, &depths)
    }

    /// The one-character string after ESCAPE (sql.g4: `K_ESCAPE STRING_LITERAL`).
    fn escape_char(&mut self) -> PResult<Expr> {
        let t = self.peek();
        let pos = t.pos;
        let s = match &t.kind {
            TokenKind::Str(s) if s.chars().count() == 1 => s.clone(),
            TokenKind::Str(_) => {
                return Err(err_at(
                    pos,
                    "the ESCAPE string must be exactly one character, as in ESCAPE '^'",
                ));
            }
            _ => {
                return Err(self.expected("a one-character string after ESCAPE, as in ESCAPE '^'"));
            }
        };
        self.advance();
        Ok(Expr {
            kind: ExprKind::Literal(Literal::String(s.into())),
            pos,
        })
    }

    /// `[NOT] BETWEEN low AND high` after the tested expression.
    fn between(&mut self, left: Node, negated: bool, p: u8) -> PResult<Node> {
        self.take_negatable(negated);
        let low = self.binary(p + 1)?;
        if !self.eat_kw(Keyword::And) {
            return Err(
                self.expected("AND between the bounds of BETWEEN, as in x BETWEEN 1 AND 10")
            );
        }
        let high = self.binary(p + 1)?;
        let pos = left.expr.pos;
        let depths = [left.depth, low.depth, high.depth];
        let kind = ExprKind::Between {
            expr: left.expr,
            low: low.expr,
            high: high.expr,
            negated,
        };
        self.node(kind, pos, &depths)
    }

    /// Combines the operands of an AND or OR chain: left-deep when short, balanced when long.
    fn chain(&self, op: BinaryOp, operands: Vec<Node>) -> PResult<Node> {
        if operands.len() > BALANCE_ABOVE {
            return self.balanced(op, operands);
        }
        let mut iter = operands.into_iter();
        let Some(mut acc) = iter.next() else {
            return Err(self.expected("an expression"));
        };
        for right in iter {
            acc = self.binary_node(op, acc, right)?;
        }
        Ok(acc)
    }

    /// A balanced tree over `operands` (recursion depth is logarithmic).
    fn balanced(&self, op: BinaryOp, mut operands: Vec<Node>) -> PResult<Node> {
        if operands.len() == 1
            && let Some(only) = operands.pop()
        {
            return Ok(only);
        }
        if operands.is_empty() {
            return Err(self.expected("an expression"));
        }
        let right = operands.split_off(operands.len() / 2);
        let left = self.balanced(op, operands)?;
        let right = self.balanced(op, right)?;
        self.binary_node(op, left, right)
    }

    /// Prefix operators. `NOT` binds looser than comparisons, except where an operand of a
    /// tighter operator is expected (`1 + NOT x`), where it binds like `-`.
    fn prefix(&mut self, min: u8) -> PResult<Node> {
        let op = match self.peek().kind {
            TokenKind::Minus => UnaryOp::Neg,
            TokenKind::Plus => UnaryOp::Plus,
            TokenKind::Tilde => UnaryOp::BitNot,
            TokenKind::Keyword(Keyword::Not) => UnaryOp::Not,
            _ => return self.postfix_expr(),
        };
        let pos = self.peek().pos;
        self.enter()?;
        self.advance();
        let operand = if op == UnaryOp::Not && min <= prec::NOT {
            self.binary(prec::NOT)?
        } else {
            self.prefix(prec::UNARY)?
        };
        self.leave();
        self.unary(op, operand, pos)
    }

    fn unary(&self, op: UnaryOp, operand: Node, pos: Pos) -> PResult<Node> {
        // Fold a sign into a number literal: `-1` is the literal -1, as in sql.g4.
        if let ExprKind::Literal(Literal::Number(n)) = operand.expr.kind {
            match op {
                UnaryOp::Neg => return Ok(Node::leaf(ExprKind::Literal(Literal::Number(-n)), pos)),
                UnaryOp::Plus => return Ok(Node::leaf(ExprKind::Literal(Literal::Number(n)), pos)),
                _ => {}
            }
        }
        let depths = [operand.depth];
        self.node(ExprKind::Unary(op, operand.expr), pos, &depths)
    }

    /// A primary expression followed by any `.name` and `[expr]` accessors.
    fn postfix_expr(&mut self) -> PResult<Node> {
        let mut node = self.primary()?;
        loop {
            node = match self.peek().kind {
                TokenKind::Dot => self.dot_access(node)?,
                TokenKind::LBracket => self.bracket_access(node)?,
                TokenKind::LParen
                    if matches!(node.expr.kind, ExprKind::Property(..) | ExprKind::Index(..)) =>
                {
                    return Err(self.call_on_property());
                }
                _ => return Ok(node),
            };
        }
    }

    /// `.name` after `base`.
    fn dot_access(&mut self, base: Node) -> PResult<Node> {
        self.advance();
        let name = self.property_name()?;
        let pos = base.expr.pos;
        let depths = [base.depth];
        self.node(ExprKind::Property(base.expr, name), pos, &depths)
    }

    /// `[expr]` after `base`: a string literal makes a property access, anything else an index.
    fn bracket_access(&mut self, base: Node) -> PResult<Node> {
        let open = self.advance().pos;
        if self.peek().kind == TokenKind::RBracket {
            return Err(self.expected("a property name or an index inside [ ]"));
        }
        let index = self.expr()?;
        if !self.eat(&TokenKind::RBracket) {
            return Err(self.unclosed('[', ']', open));
        }
        let pos = base.expr.pos;
        let depths = [base.depth, index.depth];
        let kind = match &index.expr.kind {
            ExprKind::Literal(Literal::String(s)) => ExprKind::Property(base.expr, s.to_string()),
            _ => ExprKind::Index(base.expr, index.expr),
        };
        self.node(kind, pos, &depths)
    }

    #[cold]
    fn unclosed(&self, open_char: char, close: char, open: Pos) -> Box<Error> {
        self.expected(&format!(
            "'{close}' to close the '{open_char}' at line {}, column {}",
            open.line, open.column
        ))
    }

    #[cold]
    fn call_on_property(&self) -> Box<Error> {
        err_at(
            self.peek().pos,
            "only built-in functions and user-defined functions (udf.name(...)) can be called; \
             a property can't be",
        )
    }

    fn primary(&mut self) -> PResult<Node> {
        let pos = self.peek().pos;
        let literal = match &self.peek().kind {
            TokenKind::Number(n) => Literal::Number(*n),
            TokenKind::Str(s) => Literal::String(s.as_str().into()),
            TokenKind::True => Literal::Bool(true),
            TokenKind::False => Literal::Bool(false),
            TokenKind::Null => Literal::Null,
            TokenKind::Undefined => Literal::Undefined,
            TokenKind::Param(name) => {
                let kind = ExprKind::Param(name.clone());
                self.advance();
                return Ok(Node::leaf(kind, pos));
            }
            TokenKind::LParen => return self.parenthesized(),
            TokenKind::LBracket => return self.array(),
            TokenKind::LBrace => return self.object(),
            TokenKind::Keyword(Keyword::Exists) => return self.subquery_expr(Keyword::Exists),
            TokenKind::Keyword(Keyword::Array) => return self.subquery_expr(Keyword::Array),
            TokenKind::Ident(_) => return self.name_or_call(),
            _ => return Err(self.not_an_expression()),
        };
        self.advance();
        Ok(Node::leaf(ExprKind::Literal(literal), pos))
    }

    #[cold]
    fn not_an_expression(&self) -> Box<Error> {
        let t = self.peek();
        match &t.kind {
            TokenKind::Keyword(Keyword::Select) => {
                err_at(t.pos, "a subquery must be in parentheses: (SELECT ...)")
            }
            TokenKind::Keyword(_) => err_at(
                t.pos,
                format!(
                    "expected an expression, found the reserved word {}",
                    self.describe(t)
                ),
            ),
            TokenKind::Star => err_at(
                t.pos,
                "'*' can only stand alone as the SELECT list (SELECT * FROM c); it isn't a value",
            ),
            _ => self.expected("an expression"),
        }
    }

    /// `( expr )` or a scalar subquery `( SELECT ... )`.
    fn parenthesized(&mut self) -> PResult<Node> {
        let open = self.advance().pos;
        if self.is_kw(Keyword::Select) {
            let (q, d) = self.query(true)?;
            self.expect_close_paren(open)?;
            return self.node(ExprKind::Subquery(q), open, &[d]);
        }
        if self.peek().kind == TokenKind::RParen {
            return Err(self.expected("an expression inside the parentheses"));
        }
        let inner = self.expr()?;
        self.expect_close_paren(open)?;
        Ok(inner)
    }

    // `array`, `object` and `call_args` each spell out the same comma-list loop: they are on
    // the recursion path of nested expressions, and a shared loop taking the item parser as a
    // closure adds two frames per nesting level (in debug builds, 256 nested objects then need
    // 1 MB of stack instead of 0.6 MB).

    /// `[a, b, ...]`
    fn array(&mut self) -> PResult<Node> {
        let open = self.advance().pos;
        let mut items = Vec::new();
        let mut depth = 0;
        if !self.eat(&TokenKind::RBracket) {
            loop {
                let n = self.expr()?;
                depth = depth.max(n.depth);
                items.push(*n.expr);
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                if self.eat(&TokenKind::RBracket) {
                    break;
                }
                return Err(self.unclosed_list("',' or ']' to close the array", open));
            }
        }
        self.node(ExprKind::Array(items), open, &[depth])
    }

    /// `{name: expr, "name": expr, ...}`
    fn object(&mut self) -> PResult<Node> {
        let open = self.advance().pos;
        let mut members = Vec::new();
        let mut depth = 0;
        if !self.eat(&TokenKind::RBrace) {
            loop {
                let key = self.object_key()?;
                if !self.eat(&TokenKind::Colon) {
                    return Err(self.expected("':' after the property name"));
                }
                let n = self.expr()?;
                depth = depth.max(n.depth);
                members.push((key, *n.expr));
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                if self.eat(&TokenKind::RBrace) {
                    break;
                }
                return Err(self.unclosed_list("',' or '}' to close the object", open));
            }
        }
        self.node(ExprKind::Object(members), open, &[depth])
    }

    #[cold]
    fn unclosed_list(&self, what: &str, open: Pos) -> Box<Error> {
        self.expected(&format!(
            "{what} that starts at line {}, column {}",
            open.line, open.column
        ))
    }

    /// A property name in an object constructor: a name or a string (scalar-expressions.md).
    fn object_key(&mut self) -> PResult<String> {
        let t = self.peek();
        let key = match &t.kind {
            TokenKind::Str(s) => s.clone(),
            kind if matches!(kind, TokenKind::Ident(_)) || kind.is_reserved_word() => {
                self.text.get(t.start..t.end).unwrap_or("").to_string()
            }
            _ => {
                return Err(
                    self.expected("a property name (a name or a quoted string) in the object")
                );
            }
        };
        self.advance();
        Ok(key)
    }

    /// `EXISTS (SELECT ...)` or `ARRAY (SELECT ...)`.
    fn subquery_expr(&mut self, kw: Keyword) -> PResult<Node> {
        let pos = self.advance().pos;
        let open = self.peek().pos;
        if self.peek().kind != TokenKind::LParen
            || self.peek_at(1).kind != TokenKind::Keyword(Keyword::Select)
        {
            return Err(self.expected(&format!(
                "a subquery in parentheses after {0}, as in {0}(SELECT VALUE t FROM t IN c.tags)",
                kw.as_str()
            )));
        }
        self.advance();
        let (q, d) = self.query(true)?;
        self.expect_close_paren(open)?;
        let kind = if kw == Keyword::Exists {
            ExprKind::Exists(q)
        } else {
            ExprKind::ArraySubquery(q)
        };
        self.node(kind, pos, &[d])
    }

    /// An identifier, a built-in call `NAME(...)` or a UDF call `udf.name(...)`.
    fn name_or_call(&mut self) -> PResult<Node> {
        let t = self.advance();
        let TokenKind::Ident(name) = t.kind else {
            return Err(self.expected("a name"));
        };
        let udf_shape = self.peek().kind == TokenKind::Dot
            && matches!(self.peek_at(1).kind, TokenKind::Ident(_))
            && self.peek_at(2).kind == TokenKind::LParen;
        if udf_shape && name.eq_ignore_ascii_case("udf") {
            self.advance();
            let TokenKind::Ident(fn_name) = self.advance().kind else {
                return Err(self.expected("a function name"));
            };
            if name != "udf" {
                return Err(err_at(
                    t.pos,
                    format!("the udf prefix is lower-case: write udf.{fn_name}(...)"),
                ));
            }
            return self.call_args(fn_name, true, t.pos);
        }
        if self.peek().kind == TokenKind::LParen {
            return self.call_args(name.to_ascii_uppercase(), false, t.pos);
        }
        // `NaN` and `Infinity` are number literals (as in JavaScript, case-sensitive).
        let kind = match name.as_str() {
            "NaN" => ExprKind::Literal(Literal::Number(f64::NAN)),
            "Infinity" => ExprKind::Literal(Literal::Number(f64::INFINITY)),
            _ => ExprKind::Ident(name),
        };
        Ok(Node::leaf(kind, t.pos))
    }

    /// `( args )` of a call whose name is already taken.
    fn call_args(&mut self, name: String, udf: bool, pos: Pos) -> PResult<Node> {
        let open = self.advance().pos;
        let mut args = Vec::new();
        let mut depth = 0;
        if !self.eat(&TokenKind::RParen) {
            loop {
                if self.peek().kind == TokenKind::Star {
                    return Err(self.star_argument(&name));
                }
                let n = self.expr()?;
                depth = depth.max(n.depth);
                args.push(*n.expr);
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                if self.eat(&TokenKind::RParen) {
                    break;
                }
                return Err(self.unclosed_list(
                    &format!("',' or ')' to close the arguments of {name}"),
                    open,
                ));
            }
        }
        self.node(ExprKind::Call { name, args, udf }, pos, &[depth])
    }

    #[cold]
    fn star_argument(&self, name: &str) -> Box<Error> {
        err_at(
            self.peek().pos,
            format!("'*' is not an argument: write {name}(1) to count rows, or pass a value"),
        )
    }
}

/// The name a path's last property gives an unaliased JOIN (`JOIN f.children` binds
/// `children`, as `FROM Families.children` does); the printer leaves such an alias out.
pub(crate) fn last_property(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Property(_, name) => Some(name),
        ExprKind::Index(_, index) => match &index.kind {
            ExprKind::Literal(Literal::String(name)) => Some(name),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_signs_into_literals() {
        let q = parse("SELECT VALUE -1.5").expect("parses");
        let SelectKind::Value(e) = q.select.kind else {
            panic!("not VALUE")
        };
        assert_eq!(e.kind, ExprKind::Literal(Literal::Number(-1.5)));
        assert_eq!(
            e.pos,
            Pos {
                line: 1,
                column: 14
            }
        );
    }

    #[test]
    fn long_or_chains_are_balanced() {
        let terms: Vec<String> = (0..1000).map(|i| format!("c.a = {i}")).collect();
        let q = parse(&format!("SELECT * FROM c WHERE {}", terms.join(" OR "))).expect("parses");
        fn depth(e: &Expr) -> usize {
            match &e.kind {
                ExprKind::Binary(_, a, b) => 1 + depth(a).max(depth(b)),
                _ => 1,
            }
        }
        // ceil(log2(1000)) = 10 levels of OR over comparisons `c.a = i` (2 levels each).
        let d = depth(q.filter.as_ref().expect("filter"));
        assert_eq!(d, 12);
    }
}
