//! Query text to a checked syntax tree and back: the lexer, the parser, the tree itself, the
//! semantic checks that run before planning, completion for a half-typed query, and the printer
//! that writes a tree as query text.

pub mod ast;
pub mod check;
pub mod complete;
pub mod lexer;
pub mod names;
pub mod parser;
pub mod print;
