//! Evaluation: runtime values and their semantics, the expression evaluator and the
//! built-in function library; user-defined functions are called through [`udf`].

pub mod budget;
pub mod env;
pub mod expr;
pub mod functions;
pub mod udf;
pub mod value;
mod value_json;
