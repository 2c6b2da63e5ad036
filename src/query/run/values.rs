//! A query over documents held in memory rather than a container: what the REST API's
//! queries over resource feeds (databases, containers, offers) need. No index, routing,
//! paging or charge: the documents go through the same [`pipeline`](super::pipeline) as a
//! container's do, so the dialect and its semantics are the same.

use std::collections::HashMap;

use serde_json::Value;

use super::pipeline::{self, Run};
use crate::error::Result;
use crate::query::eval::expr::Params;
use crate::query::eval::value::Val;
use crate::query::syntax::{check::check, parser::parse};

/// Runs `sql` with `params` (names without `@`) over `docs`; results in query order.
pub fn over_values(
    sql: &str,
    params: &HashMap<String, Value>,
    docs: &[Value],
) -> Result<Vec<Value>> {
    let q = parse(sql)?;
    check(&q)?;
    let params: Params = params
        .iter()
        .map(|(k, v)| (k.clone(), Val::from_json(v)))
        .collect();
    let ctx = super::function_context(super::token::query_hash(sql, &HashMap::new()));
    let env = pipeline::env(&params, &ctx, None, None);
    let mut run = Run::new(&q, &env);
    for doc in docs {
        let doc = Val::from_json(doc);
        for row in pipeline::rows_of(&q, Some(&doc), &[], &env) {
            run.push(row);
        }
    }
    Ok(run.finish().iter().filter_map(Val::to_json).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn filters_projects_and_orders_like_a_container_query() {
        let docs = [
            json!({"id": "b", "n": 2}),
            json!({"id": "a", "n": 1}),
            json!({"id": "c"}),
        ];
        let params = HashMap::from([("id".to_string(), json!("a"))]);
        let one = over_values("SELECT * FROM root r WHERE r.id = @id", &params, &docs).unwrap();
        assert_eq!(one, [json!({"id": "a", "n": 1})]);
        let ids = over_values(
            "SELECT VALUE r.id FROM r WHERE IS_DEFINED(r.n) ORDER BY r.n DESC",
            &HashMap::new(),
            &docs,
        )
        .unwrap();
        assert_eq!(ids, [json!("b"), json!("a")]);
        let count = over_values("SELECT VALUE COUNT(1) FROM r", &HashMap::new(), &docs).unwrap();
        assert_eq!(count, [json!(3)]);
        assert!(over_values("SELECT FROM", &HashMap::new(), &docs).is_err());
    }
}
