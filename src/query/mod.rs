//! The NoSQL query dialect: syntax tree, runtime values, built-in functions, evaluation,
//! routing and execution against the store.

pub mod access;
pub mod ast;
pub mod cache;
pub mod check;
pub mod complete;
pub mod condition;
pub mod demand;
pub mod document;
pub mod eval;
pub mod exec;
pub mod fulltext;
pub mod functions;
pub mod lazy;
pub mod lexer;
pub mod parser;
pub mod plan;
pub mod prefetch;
pub mod rank;
pub mod run;
pub mod timing;
pub mod value;
