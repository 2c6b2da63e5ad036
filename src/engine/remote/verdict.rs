//! The routing verdict checked against the account: the local planner (the one the
//! embedded engine routes with) plans the query on the account's key definition and
//! ranges, and its physical partitions are compared with those of the service's plan. The
//! query console then says whether what was learned locally holds on the account.

use crate::engine::query::QueryOptions;
use crate::engine::views::PartitionKeyRange;
use crate::store::catalog::{ContainerDef, Throughput};
use crate::store::epk::Epk;
use crate::store::partition_key::PartitionKeyDefinition;
use crate::store::ranges::PkRange;

/// The range ids the local planner reads for `sql`, or why it cannot say.
pub(super) fn local_ranges(
    sql: &str,
    opts: &QueryOptions,
    key: &PartitionKeyDefinition,
    ranges: &[PartitionKeyRange],
) -> Result<Vec<String>, String> {
    let q = crate::query::syntax::parser::parse(sql).map_err(|e| e.message)?;
    crate::query::syntax::check::check(&q).map_err(|e| e.message)?;
    let def = container(key, ranges)?;
    let request = opts.request();
    let plan = crate::query::plan::plan(&q, &def, &request.params, opts.partition_key.as_ref())
        .map_err(|e| e.message)?;
    Ok(plan.physical.iter().map(ToString::to_string).collect())
}

/// The verdict's words: agreement, or what the local planner would have read instead.
pub(super) fn sentence(service: &[String], local: &Result<Vec<String>, String>) -> String {
    match local {
        Ok(l) if l == service => "the local planner routes it the same way".into(),
        Ok(l) => format!(
            "the local planner would read ranges [{}] where the account reads [{}]",
            l.join(", "),
            service.join(", ")
        ),
        Err(why) => format!("the local planner could not plan it ({why})"),
    }
}

/// A container with the account's key and ranges, as the planner reads one; what the
/// planner does not consult keeps its default.
fn container(
    key: &PartitionKeyDefinition,
    ranges: &[PartitionKeyRange],
) -> Result<ContainerDef, String> {
    let unreadable = |r: &PartitionKeyRange| {
        format!(
            "range {:?} [{:?}, {:?}) is not one it can read",
            r.id, r.min_inclusive, r.max_exclusive
        )
    };
    let ranges = ranges
        .iter()
        .map(|r| {
            let read = || {
                Some(PkRange {
                    id: r.id.parse().ok()?,
                    min_inclusive: Epk::from_hex(&r.min_inclusive)?,
                    max_exclusive: Epk::from_hex(&r.max_exclusive)?,
                    parents: Vec::new(),
                })
            };
            read().ok_or_else(|| unreadable(r))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let next = ranges.iter().map(|r| r.id + 1).max().unwrap_or(0);
    Ok(ContainerDef {
        id: String::new(),
        database: String::new(),
        rid: 0,
        db_rid: 0,
        ts: 0,
        partition_key: key.clone(),
        throughput: Throughput::Manual(400),
        max_partition_bytes: u64::MAX,
        max_logical_partition_bytes: u64::MAX,
        default_ttl: None,
        unique_key_policy: Default::default(),
        indexing_policy: Default::default(),
        enforce_throughput: false,
        feed_previous_images: false,
        next_range_id: next,
        ranges,
        retired_ranges: Vec::new(),
        index_generation: 0,
        index_string_bytes: crate::store::index::STRING_BYTES,
        index_build: None,
        retired_index_generations: Vec::new(),
        vector_embedding_policy: None,
        full_text_policy: None,
        range_name_cache: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(id: &str, min: &str, max: &str) -> PartitionKeyRange {
        PartitionKeyRange {
            id: id.into(),
            min_inclusive: min.into(),
            max_exclusive: max.into(),
            parents: vec![],
        }
    }

    #[test]
    fn plans_on_the_accounts_ranges() {
        let key = PartitionKeyDefinition::new(vec!["/pk".into()]).unwrap();
        let ranges = [range("3", "", "80"), range("4", "80", "FF")];
        let all = local_ranges("SELECT * FROM c", &QueryOptions::default(), &key, &ranges);
        assert_eq!(all, Ok(vec!["3".to_string(), "4".to_string()]));
        let one = local_ranges(
            "SELECT * FROM c WHERE c.pk = 'p1'",
            &QueryOptions::default(),
            &key,
            &ranges,
        )
        .unwrap();
        assert_eq!(one.len(), 1);
        assert!(sentence(&one, &Ok(one.clone())).contains("same way"));
        assert!(sentence(&["3".into()], &Ok(vec!["4".into()])).contains("would read ranges [4]"));
        let bad = [range("x", "", "FF")];
        assert!(local_ranges("SELECT * FROM c", &QueryOptions::default(), &key, &bad).is_err());
    }
}
