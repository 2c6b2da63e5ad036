//! The client's half of a cross-partition query: combining what each physical partition
//! returned for the plan's rewritten query into the query's result, as the SDKs' query
//! pipelines do (Python `_execution_context/`, Node `queryExecutionContext/`).
//!
//! Row shapes per range (see `query::plan::rewrite` for the service's):
//! - ORDER BY: `{"_rid", "orderByItems": [{"item": v}, ...], "payload": p}`, each range in
//!   order; merged by the items (ties to the range with the lower `minInclusive`, i.e.
//!   the earlier range here), yielding the payloads.
//! - VALUE aggregates: one row per range, `[{"item": partial}]`; AVG's partial is
//!   `{"sum", "count"}`, MIN/MAX's `item2` holds `{"min"|"max", "count"}`.
//! - Aggregates without VALUE: `{"payload": {alias: {"item": partial}}}`.
//! - GROUP BY: `{"groupByItems": [...], "payload": ...}`, grouped again across ranges.
//! - DISTINCT, then OFFSET/LIMIT and TOP, on the merged stream.
//!
//! Each range's rows arrive complete (the backend drains every range before merging), so
//! the merges are sorts and folds over vectors rather than streams.

use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::engine::plan::{AggregateKind, DistinctType, QueryInfo, SortOrder};
use crate::query::eval::value::{Val, total_cmp};

/// The merged result of `ranges` (each range's rows, in EPK order) under `info`.
pub fn merge(info: &QueryInfo, ranges: Vec<Vec<Value>>) -> Vec<Value> {
    let rows: Vec<Value> = if !info.group_by_expressions.is_empty() {
        group(info, ranges.into_iter().flatten().collect())
    } else if !info.aggregates.is_empty() {
        value_aggregates(info, ranges)
    } else if info
        .group_by_alias_to_aggregate_type
        .iter()
        .any(|(_, a)| a.is_some())
    {
        // Aggregates without VALUE and without GROUP BY: one group of everything.
        group(info, ranges.into_iter().flatten().collect())
    } else if !info.order_by.is_empty() {
        order(info, ranges)
    } else {
        ranges.into_iter().flatten().collect()
    };
    let rows = match info.distinct_type {
        DistinctType::None => rows,
        DistinctType::Ordered | DistinctType::Unordered => distinct(rows),
    };
    let skip = info.offset.unwrap_or(0) as usize;
    let take = info
        .limit
        .map_or(usize::MAX, |l| l as usize)
        .min(info.top.map_or(usize::MAX, |t| t as usize));
    rows.into_iter().skip(skip).take(take).collect()
}

/// ORDER BY: a stable sort of the ranges' rows in EPK order is the k-way merge with ties
/// to the earlier range.
fn order(info: &QueryInfo, ranges: Vec<Vec<Value>>) -> Vec<Value> {
    let mut rows: Vec<(Vec<Val>, Value)> = ranges
        .into_iter()
        .flatten()
        .map(|row| {
            let keys = row
                .get("orderByItems")
                .and_then(Value::as_array)
                .map(|items| items.iter().map(|i| item_val(i.get("item"))).collect())
                .unwrap_or_default();
            let payload = row.get("payload").cloned().unwrap_or(Value::Null);
            (keys, payload)
        })
        .collect();
    rows.sort_by(|(a, _), (b, _)| compare_keys(&info.order_by, a, b));
    rows.into_iter().map(|(_, p)| p).collect()
}

fn compare_keys(order: &[SortOrder], a: &[Val], b: &[Val]) -> Ordering {
    for (i, dir) in order.iter().enumerate() {
        let (x, y) = (
            a.get(i).unwrap_or(&Val::Undefined),
            b.get(i).unwrap_or(&Val::Undefined),
        );
        let o = total_cmp(x, y);
        let o = match dir {
            SortOrder::Ascending => o,
            SortOrder::Descending => o.reverse(),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// A missing `item` is undefined (which orders first).
fn item_val(v: Option<&Value>) -> Val {
    v.map_or(Val::Undefined, Val::from_json)
}

/// One aggregate's combination across ranges.
#[derive(Debug, Clone)]
enum Acc {
    Count(f64),
    Sum(Option<f64>),
    Average {
        sum: f64,
        count: f64,
    },
    Extreme {
        kind: AggregateKind,
        best: Option<Val>,
    },
}

impl Acc {
    fn new(kind: AggregateKind) -> Acc {
        match kind {
            AggregateKind::Count => Acc::Count(0.0),
            AggregateKind::Sum => Acc::Sum(None),
            AggregateKind::Average => Acc::Average {
                sum: 0.0,
                count: 0.0,
            },
            AggregateKind::Min | AggregateKind::Max => Acc::Extreme { kind, best: None },
        }
    }

    /// Adds one range's partial: the `{"item": ..., "item2"?: ...}` object.
    fn add(&mut self, partial: &Value) {
        let item = partial.get("item");
        match self {
            Acc::Count(n) => *n += item.and_then(Value::as_f64).unwrap_or(0.0),
            Acc::Sum(s) => {
                if let Some(v) = item.and_then(Value::as_f64) {
                    *s = Some(s.unwrap_or(0.0) + v);
                }
            }
            Acc::Average { sum, count } => {
                if let Some(obj) = item {
                    *sum += obj.get("sum").and_then(Value::as_f64).unwrap_or(0.0);
                    *count += obj.get("count").and_then(Value::as_f64).unwrap_or(0.0);
                }
            }
            Acc::Extreme { kind, best } => {
                // A range with no values has no item (or a count of 0 in item2).
                let empty = partial
                    .pointer("/item2/count")
                    .and_then(Value::as_f64)
                    .is_some_and(|c| c == 0.0);
                let Some(v) = item.filter(|_| !empty) else {
                    return;
                };
                let v = Val::from_json(v);
                let better = match best {
                    None => true,
                    Some(b) => {
                        let o = total_cmp(&v, b);
                        if *kind == AggregateKind::Min {
                            o == Ordering::Less
                        } else {
                            o == Ordering::Greater
                        }
                    }
                };
                if better {
                    *best = Some(v);
                }
            }
        }
    }

    /// The combined value; `None` when undefined (a SUM, AVG, MIN or MAX of nothing).
    fn finish(&self) -> Option<Value> {
        match self {
            Acc::Count(n) => Some(number(*n)),
            Acc::Sum(s) => s.map(number),
            Acc::Average { sum, count } => (*count > 0.0).then(|| number(sum / count)),
            Acc::Extreme { best, .. } => best.as_ref().and_then(Val::to_json),
        }
    }
}

fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// `SELECT VALUE <aggregate>`: each range's row is `[{"item": partial}]`.
fn value_aggregates(info: &QueryInfo, ranges: Vec<Vec<Value>>) -> Vec<Value> {
    let mut accs: Vec<Acc> = info.aggregates.iter().map(|k| Acc::new(*k)).collect();
    for row in ranges.into_iter().flatten() {
        let partials = match &row {
            Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
        for (acc, partial) in accs.iter_mut().zip(partials.iter()) {
            acc.add(partial);
        }
    }
    accs.iter().filter_map(Acc::finish).collect()
}

/// GROUP BY (and aggregates without VALUE, as one group): rows grouped by their
/// `groupByItems`, each alias's aggregate combined, the other members taken from the
/// group's first row.
fn group(info: &QueryInfo, rows: Vec<Value>) -> Vec<Value> {
    let mut groups: Vec<(String, Value, Vec<Acc>)> = Vec::new();
    let aliases = &info.group_by_alias_to_aggregate_type;
    for row in rows {
        let key = canonical(row.get("groupByItems").unwrap_or(&Value::Null));
        let payload = row.get("payload").cloned().unwrap_or(Value::Null);
        let at = match groups.iter().position(|(k, _, _)| *k == key) {
            Some(i) => i,
            None => {
                let accs = if info.has_select_value {
                    info.aggregates.iter().map(|k| Acc::new(*k)).collect()
                } else {
                    aliases
                        .iter()
                        .map(|(_, a)| Acc::new(a.unwrap_or(AggregateKind::Count)))
                        .collect()
                };
                groups.push((key, payload.clone(), accs));
                groups.len() - 1
            }
        };
        let accs = &mut groups[at].2;
        if info.has_select_value {
            if let Value::Array(partials) = &payload {
                for (acc, p) in accs.iter_mut().zip(partials) {
                    acc.add(p);
                }
            }
        } else {
            for (acc, (alias, kind)) in accs.iter_mut().zip(aliases) {
                if kind.is_some()
                    && let Some(p) = payload.get(alias)
                {
                    acc.add(p);
                }
            }
        }
    }
    groups
        .into_iter()
        .filter_map(|(_, first, accs)| {
            if info.has_select_value {
                if info.aggregates.is_empty() {
                    return Some(first);
                }
                return accs.first().and_then(Acc::finish);
            }
            let mut out = Map::new();
            for (acc, (alias, kind)) in accs.iter().zip(aliases) {
                let value = match kind {
                    Some(_) => acc.finish(),
                    None => first.get(alias).cloned(),
                };
                if let Some(v) = value {
                    out.insert(alias.clone(), v);
                }
            }
            Some(Value::Object(out))
        })
        .collect()
}

/// Drops repeated results, keeping the first.
fn distinct(rows: Vec<Value>) -> Vec<Value> {
    let mut seen = HashSet::new();
    rows.into_iter()
        .filter(|r| seen.insert(canonical(r)))
        .collect()
}

/// A value's text with object members sorted, so equal values have equal text.
fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&o[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn order_by_merges_ranges_with_ties_to_the_earlier_range() {
        let info = QueryInfo {
            order_by: vec![SortOrder::Descending],
            ..QueryInfo::default()
        };
        let row = |v: i64, tag: &str| json!({"_rid": "x", "orderByItems": [{"item": v}], "payload": {"v": v, "t": tag}});
        let merged = merge(
            &info,
            vec![
                vec![row(5, "a"), row(1, "a")],
                vec![row(5, "b"), row(3, "b")],
            ],
        );
        let tags: Vec<String> = merged
            .iter()
            .map(|p| format!("{}{}", p["v"], p["t"].as_str().unwrap()))
            .collect();
        assert_eq!(tags, ["5a", "5b", "3b", "1a"]);
    }

    #[test]
    fn value_aggregates_combine_partials() {
        let info = |k| QueryInfo {
            aggregates: vec![k],
            has_select_value: true,
            ..QueryInfo::default()
        };
        let parts =
            |a: Value, b: Value| vec![vec![json!([{"item": a}])], vec![json!([{"item": b}])]];
        assert_eq!(
            merge(&info(AggregateKind::Count), parts(json!(2), json!(3))),
            [json!(5)]
        );
        assert_eq!(
            merge(&info(AggregateKind::Sum), parts(json!(2.5), json!(3))),
            [json!(5.5)]
        );
        assert_eq!(
            merge(
                &info(AggregateKind::Average),
                parts(json!({"sum": 6, "count": 2}), json!({"sum": 4, "count": 3}))
            ),
            [json!(2)]
        );
        assert_eq!(
            merge(&info(AggregateKind::Max), parts(json!("b"), json!("a"))),
            [json!("b")]
        );
        // A range without values gives no minimum; AVG of nothing is undefined.
        let empty_min = vec![
            vec![json!([{"item2": {"min": null, "count": 0}}])],
            vec![json!([{"item": 7, "item2": {"min": 7, "count": 1}}])],
        ];
        assert_eq!(merge(&info(AggregateKind::Min), empty_min), [json!(7)]);
        assert!(
            merge(
                &info(AggregateKind::Average),
                parts(json!({"sum": 0, "count": 0}), json!({"sum": 0, "count": 0}))
            )
            .is_empty()
        );
    }

    #[test]
    fn groups_merge_across_ranges() {
        let info = QueryInfo {
            group_by_expressions: vec!["c.team".into()],
            group_by_aliases: vec!["team".into(), "n".into()],
            group_by_alias_to_aggregate_type: vec![
                ("team".into(), None),
                ("n".into(), Some(AggregateKind::Count)),
            ],
            ..QueryInfo::default()
        };
        let row = |t: &str, n: i64| json!({"groupByItems": [{"item": t}], "payload": {"team": t, "n": {"item": n}}});
        let merged = merge(
            &info,
            vec![vec![row("a", 2), row("b", 1)], vec![row("a", 3)]],
        );
        assert_eq!(
            merged,
            [json!({"team": "a", "n": 5}), json!({"team": "b", "n": 1})]
        );
    }

    #[test]
    fn distinct_then_offset_limit_and_top() {
        let info = QueryInfo {
            distinct_type: DistinctType::Unordered,
            offset: Some(1),
            limit: Some(2),
            ..QueryInfo::default()
        };
        let merged = merge(
            &info,
            vec![
                vec![json!({"a": 1, "b": 2}), json!(3)],
                vec![json!({"b": 2, "a": 1}), json!(4), json!(5)],
            ],
        );
        assert_eq!(merged, [json!(3), json!(4)]);
        let top = QueryInfo {
            top: Some(2),
            ..QueryInfo::default()
        };
        assert_eq!(
            merge(&top, vec![vec![json!(1)], vec![json!(2), json!(3)]]).len(),
            2
        );
    }
}
