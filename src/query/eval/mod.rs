//! Evaluation: runtime values and their semantics, the expression evaluator and the
//! built-in function library.

pub mod budget;
pub mod env;
pub mod expr;
pub mod functions;
pub mod value;
