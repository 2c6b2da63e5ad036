//! The NoSQL query dialect: syntax tree, runtime values, built-in functions, evaluation,
//! routing and execution against the store.

pub mod eval;
pub mod read;
pub mod run;
pub mod search;
pub mod syntax;

pub use eval::{functions, value};
pub use read::document;
pub use syntax::{ast, check, complete, parser};
