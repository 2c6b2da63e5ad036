//! Conditions over one document: a patch's filter predicate (`FROM c WHERE c.status =
//! 'open'`), parsed and checked like a query and evaluated with the query semantics against
//! a single item — no store, no routing, no charge.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::query::eval::functions::FnContext;
use crate::query::eval::value::Val;
use crate::query::run::pipeline::{Run, env, rows_of};
use crate::query::syntax::ast::Query;
use crate::query::syntax::{check, parser};

/// A compiled condition.
#[derive(Debug, Clone)]
pub struct Condition {
    query: Query,
}

impl Condition {
    /// Parses and checks `FROM alias [JOIN ...] [WHERE expr]`; errors are 400s with the
    /// line and column of the offending token.
    pub fn parse(text: &str) -> Result<Condition> {
        let query = parser::parse_condition(text).map_err(in_condition)?;
        check::check(&query).map_err(in_condition)?;
        Ok(Condition { query })
    }

    /// Whether `doc` satisfies the condition: some FROM/JOIN row of it passes the WHERE
    /// filter with exactly `true` (undefined and false both fail, as in a query).
    pub fn matches(&self, doc: &Value) -> bool {
        let params = crate::query::eval::expr::Params::default();
        let ctx = FnContext {
            now_ticks: crate::query::eval::functions::now_ticks(),
            clock: Some(crate::query::eval::functions::now_ticks),
            seed: 0,
        };
        let env = env(&params, &ctx, None, None);
        let root = Val::from_json(doc);
        let mut run = Run::new(&self.query, &env);
        rows_of(&self.query, Some(&root), &[], &env).any(|row| run.push(row).passed())
    }
}

fn in_condition(e: Error) -> Error {
    Error {
        message: format!("in the patch condition: {}", e.message),
        ..e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn holds(cond: &str, doc: Value) -> bool {
        Condition::parse(cond).expect("condition").matches(&doc)
    }

    #[test]
    fn filters_one_document_with_query_semantics() {
        let doc = json!({"status": "open", "n": 3, "tags": ["a", "b"]});
        assert!(holds("FROM c WHERE c.status = 'open'", doc.clone()));
        assert!(!holds("from c where c.status = 'closed'", doc.clone()));
        assert!(holds("FROM c", doc.clone()), "no WHERE: every item matches");
        assert!(
            !holds("FROM c WHERE c.missing = 1", doc.clone()),
            "undefined fails"
        );
        assert!(holds(
            "FROM c WHERE c.n > 2 AND IS_DEFINED(c.tags)",
            doc.clone()
        ));
        assert!(holds(
            "FROM root r JOIN t IN r.tags WHERE t = 'b'",
            doc.clone()
        ));
        assert!(!holds("FROM c JOIN t IN c.tags WHERE t = 'z'", doc));
    }

    #[test]
    fn errors_are_positioned_400s() {
        for bad in [
            "",
            "SELECT * FROM c",
            "WHERE c.a = 1",
            "FROM c WHERE",
            "FROM c ORDER BY c.a",
        ] {
            let e = Condition::parse(bad).unwrap_err();
            assert_eq!(e.status, 400, "{bad}: {e}");
            assert!(e.message.starts_with("in the patch condition"), "{e}");
        }
        let e = Condition::parse("FROM c WHERE x.a = 1").unwrap_err();
        assert_eq!((e.line, e.column), (Some(1), Some(14)), "{e}");
    }
}
