//! The NoSQL query dialect: syntax tree, runtime values, built-in functions.

pub mod ast;
pub mod functions;
pub mod value;
