//! Query text to a checked syntax tree: the lexer, the parser, the tree itself, the semantic
//! checks that run before planning, and completion for a half-typed query.

pub mod ast;
pub mod check;
pub mod complete;
pub mod lexer;
pub mod names;
pub mod parser;
