//! The query language through its public API and through `Engine::query`: each clause,
//! operator and constant form of the documentation, the built-in functions, subqueries,
//! vector and full-text search, queries run range by range with the query plan, and
//! fuzzing of the parser and of execution.

mod bounded;
mod clause_from;
mod clause_group_by;
mod clause_join;
mod clause_offset_limit;
mod clause_order_by;
mod clause_select;
mod clause_where;
mod constants_keywords;
mod differential;
mod engine;
mod functions_array;
mod functions_engine;
mod functions_math;
mod functions_string;
mod functions_types;
mod fuzz;
mod operators;
mod paging;
mod parser;
mod ranges_plan;
mod search;
mod subqueries;
