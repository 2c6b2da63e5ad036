//! Search: the full-text analyzer and BM25 scoring, and ordering by scores (full-text,
//! vector distance, reciprocal rank fusion).

pub mod fulltext;
pub mod rank;
