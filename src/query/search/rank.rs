//! Ordering by scores: `ORDER BY RANK FullTextScore(...)`, `ORDER BY RANK RRF(...)` and
//! `ORDER BY [RANK] VectorDistance(...)`, and the corpus statistics BM25 scoring needs.
//!
//! A score sorts most relevant first without a direction (vectordistance.md, order-by-rank.md):
//! FullTextScore and the cosine and dot-product similarities descending, the euclidean
//! distance ascending. Keys are kept "higher is better" (a euclidean distance is negated), so
//! every score sorts descending and an item without a score (no vector, no text: the key is
//! undefined, which sorts lowest) comes last whichever the metric.
//!
//! FullTextScore's statistics are global, as the SDKs' hybrid search gathers them with a
//! statistics query over the whole container before ranking: the number of documents, the
//! words in the searched property, and per term the documents containing it.

use heed::RoTxn;

use crate::error::{Error, Result};
use crate::query::eval::env::Env;
use crate::query::eval::expr::aggregate_key;
use crate::query::eval::functions::search::{VectorOptions, full_text_score_terms, rrf_weights};
use crate::query::eval::value::Val;
use crate::query::search::fulltext::{self, CorpusStats, FullTextQuery, FullTextScores};
use crate::query::syntax::ast::{Expr, ExprKind, Literal, Query};
use crate::query::syntax::check::is_call;
use crate::query::syntax::names::path_text;
use crate::store::catalog::ContainerDef;
use crate::store::item::Record;
use crate::store::keys::{self, RangeId};
use crate::store::search_policy::same_search_path;
use crate::store::{Store, now_secs};

enum Component<'q> {
    /// A FullTextScore call: its text argument is scored against [`FullTextScores`].
    FullText(&'q Expr),
    /// A VectorDistance call, evaluated as written.
    Vector {
        call: &'q Expr,
        higher_is_better: bool,
    },
}

/// How a query's rows are ranked when its ORDER BY is a score.
pub struct Ranking<'q> {
    components: Vec<Component<'q>>,
    /// RRF's weights, one per component (1 each unless given).
    weights: Vec<f64>,
    /// RRF: the components' ranks are fused once every row is in.
    fused: bool,
}

impl<'q> Ranking<'q> {
    /// The ranking of `q`, if its ORDER BY is a score: `ORDER BY RANK ...`, or a
    /// VectorDistance without ASC or DESC (with one, it sorts like any value).
    pub fn of(q: &'q Query, env: &Env) -> Option<Ranking<'q>> {
        let first = q.order_by.first()?;
        let is_vector = is_call(&first.expr, "VECTORDISTANCE");
        let scored = first.rank || (is_vector && !first.direction_given && q.order_by.len() == 1);
        if !scored {
            return None;
        }
        let ExprKind::Call { name, args, .. } = &first.expr.kind else {
            return None;
        };
        if name != "RRF" {
            return Some(Ranking {
                components: vec![component(&first.expr, env)?],
                weights: vec![1.0],
                fused: false,
            });
        }
        let (scores, weights) = match args.split_last() {
            Some((last, rest)) if matches!(last.kind, ExprKind::Array(_)) => {
                (rest, rrf_weights(&env.eval(last, &[])).unwrap_or_default())
            }
            _ => (&args[..], vec![1.0; args.len()]),
        };
        let components = scores
            .iter()
            .map(|a| component(a, env))
            .collect::<Option<Vec<_>>>()?;
        Some(Ranking {
            weights: if weights.len() == components.len() {
                weights
            } else {
                vec![1.0; components.len()]
            },
            components,
            fused: true,
        })
    }

    /// For an order by one vector distance: whether its best (most similar) values are the
    /// highest, so it sorts descending (cosine and dot product) rather than ascending
    /// (euclidean). `None` for a full-text or fused ranking.
    pub fn vector_descending(&self) -> Option<bool> {
        match self.components.as_slice() {
            [
                Component::Vector {
                    higher_is_better, ..
                },
            ] if !self.fused => Some(*higher_is_better),
            _ => None,
        }
    }

    /// Whether every row must be seen before any can be placed (RRF ranks are relative).
    pub fn fused(&self) -> bool {
        self.fused
    }

    /// The ORDER BY keys of a row: one "higher is better" score per component.
    pub fn keys(&self, env: &Env, row: &[(String, Val)]) -> Vec<Val> {
        self.components
            .iter()
            .map(|c| match c {
                Component::FullText(call) => full_text_score(call, env, row),
                Component::Vector {
                    call,
                    higher_is_better,
                } => match env.eval(call, row) {
                    Val::Num(n) if *higher_is_better => Val::Num(n),
                    Val::Num(n) => Val::Num(-n),
                    _ => Val::Undefined,
                },
            })
            .collect()
    }

    /// Replaces each row's component scores by its fused RRF score (rrf.md): the weighted sum
    /// of 1 / (k + rank) over the components that scored it, ranks counted from 1 in each
    /// component's own order (ties share the order rows arrived in).
    pub fn fuse<'r>(&self, rows: impl Iterator<Item = &'r mut Vec<Val>>) {
        let mut rows: Vec<&mut Vec<Val>> = rows.collect();
        // Per component, each row's 1-based rank in that component's order.
        let ranks: Vec<Vec<Option<usize>>> = (0..self.weights.len())
            .map(|i| {
                let mut scored: Vec<(usize, f64)> = rows
                    .iter()
                    .enumerate()
                    .filter_map(|(r, keys)| match keys.get(i) {
                        Some(Val::Num(n)) if !n.is_nan() => Some((r, *n)),
                        _ => None,
                    })
                    .collect();
                // Stable: tied scores keep the order the rows arrived in (key order per range).
                scored.sort_by(|a, b| b.1.total_cmp(&a.1));
                let mut ranks = vec![None; rows.len()];
                for (rank, (r, _)) in scored.into_iter().enumerate() {
                    ranks[r] = Some(rank + 1);
                }
                ranks
            })
            .collect();
        for (r, keys) in rows.iter_mut().enumerate() {
            let row: Vec<Option<usize>> = ranks.iter().map(|c| c[r]).collect();
            **keys = vec![Val::Num(fulltext::rrf(&row, Some(&self.weights)))];
        }
    }

    /// The number of scores per row.
    pub fn scores_per_row(&self) -> usize {
        self.components.len()
    }
}

fn component<'q>(e: &'q Expr, env: &Env) -> Option<Component<'q>> {
    let ExprKind::Call { name, args, .. } = &e.kind else {
        return None;
    };
    match name.as_str() {
        "FULLTEXTSCORE" => Some(Component::FullText(e)),
        "VECTORDISTANCE" => {
            // The metric comes from the call's options (constants); the container's vector
            // policy was folded into them before the query ran.
            let options: Vec<Val> = args.iter().map(|a| env.eval(a, &[])).collect();
            let distance = VectorOptions::of_call(VectorOptions::default(), &options)
                .unwrap_or_default()
                .distance;
            Some(Component::Vector {
                call: e,
                higher_is_better: distance.higher_is_closer(),
            })
        }
        _ => None,
    }
}

fn full_text_score(call: &Expr, env: &Env, row: &[(String, Val)]) -> Val {
    let (ExprKind::Call { args, .. }, Some(scores)) =
        (&call.kind, env.full_text.and_then(std::cell::OnceCell::get))
    else {
        return Val::Undefined;
    };
    let Some(query) = scores.get(&aggregate_key(call)) else {
        return Val::Undefined;
    };
    match args.first().map(|a| env.eval(a, row)) {
        // An item matching no term has no rank: RRF gives it no share for this score.
        Some(Val::Str(text)) => match query.stats.score_text(&text, &query.terms) {
            s if s > 0.0 => Val::Num(s),
            _ => Val::Undefined,
        },
        _ => Val::Undefined,
    }
}

/// Whether `q` ranks by FullTextScore (and so needs [`full_text_statistics`]).
pub fn ranks_by_full_text(q: &Query) -> bool {
    !full_text_calls(q).is_empty()
}

/// The FullTextScore calls `q` ranks by.
fn full_text_calls(q: &Query) -> Vec<&Expr> {
    let Some(first) = q.order_by.first().filter(|o| o.rank) else {
        return Vec::new();
    };
    match &first.expr.kind {
        ExprKind::Call { name, args, .. } if name == "RRF" => args
            .iter()
            .filter(|a| is_call(a, "FULLTEXTSCORE"))
            .collect(),
        _ if is_call(&first.expr, "FULLTEXTSCORE") => vec![&first.expr],
        _ => Vec::new(),
    }
}

/// The analyzed search terms of a FullTextScore call (its arguments are constants).
fn search_terms(call: &Expr, args: &[Expr], env: &Env) -> Result<Vec<String>> {
    let values: Vec<Val> = args.iter().map(|a| env.eval(a, &[])).collect();
    full_text_score_terms(&values).ok_or_else(|| {
        let at = args.get(1).map_or(call.pos, |a| a.pos);
        Error::bad_request(
            "FullTextScore searches for string terms: give them as strings or as one array of \
             strings, e.g. FullTextScore(c.text, [\"bicycle\", \"mountain\"])",
        )
        .at(at.line, at.column)
    })
}

/// What the statistics pass loaded of one range (for its charge): nothing when full-text
/// indexes on the searched paths answer it, every document otherwise.
pub struct StatisticsRead {
    pub range: RangeId,
    pub documents: u64,
    pub bytes: u64,
}

/// The global statistics of every FullTextScore call `q` ranks by: one pass over every item
/// of the container (all ranges, whatever the query's filter or routing, as the service's
/// statistics query counts the whole container).
pub fn full_text_statistics(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    q: &Query,
    env: &Env,
    root: &str,
) -> Result<(FullTextScores, Vec<StatisticsRead>)> {
    let calls = full_text_calls(q);
    if calls.is_empty() {
        return Ok((FullTextScores::new(), Vec::new()));
    }
    let mut queries: Vec<(usize, &Expr, FullTextQuery)> = Vec::with_capacity(calls.len());
    for call in calls {
        let ExprKind::Call { args, .. } = &call.kind else {
            continue;
        };
        let Some(text) = args.first() else {
            continue;
        };
        queries.push((
            aggregate_key(call),
            text,
            FullTextQuery {
                terms: search_terms(call, args, env)?,
                stats: CorpusStats::default(),
            },
        ));
    }
    // The service reads the statistics from full-text indexes where the paths have them.
    let indexed = queries.iter().all(|(_, text, _)| {
        path_text(text, root).is_some_and(|p| {
            def.indexing_policy
                .full_text_indexes
                .iter()
                .any(|i| same_search_path(&i.path, &p))
        })
    });
    let extractor = crate::query::read::extractor::Extractor::new(
        crate::query::read::demand::of_query(q, root),
    );
    let now = now_secs();
    let mut reads = Vec::with_capacity(def.ranges.len());
    let mut row = vec![(root.to_string(), Val::Undefined)];
    for range in &def.ranges {
        let start = keys::epk_bound(def.rid, &range.min_inclusive);
        let end = keys::epk_bound(def.rid, &range.max_exclusive);
        let mut read = StatisticsRead {
            range: range.id,
            documents: 0,
            bytes: 0,
        };
        let mut ahead = crate::store::readahead::ReadAhead::default();
        for entry in store.items.range(txn, &keys::half_open(&start, &end))? {
            let (_, value) = entry?;
            ahead.touch(value);
            let record = Record::decode(value)?;
            if record.header.is_expired(now) {
                continue;
            }
            read.documents += 1;
            read.bytes += record.json.len() as u64;
            row[0].1 = extractor
                .extract_stored(record.json, record.members.as_ref())
                .map_err(|e| Error::internal(format!("corrupt item: {e}")))?;
            for (_, text, query) in &mut queries {
                match env.eval(text, &row) {
                    Val::Str(s) => query.stats.add_text(&s, &query.terms),
                    _ => query.stats.add_text("", &query.terms),
                }
            }
        }
        if indexed {
            (read.documents, read.bytes) = (0, 0);
        }
        reads.push(read);
    }
    let scores = queries.into_iter().map(|(k, _, q)| (k, q)).collect();
    Ok((scores, reads))
}

/// Whether `q` orders by a score: `ORDER BY RANK ...` or a VectorDistance.
pub fn orders_by_score(q: &Query) -> bool {
    q.order_by
        .first()
        .is_some_and(|o| o.rank || is_call(&o.expr, "VECTORDISTANCE"))
}

/// Whether ordering `q` by its score needs every document in scope: always, except a
/// VectorDistance alone on a path with a vector index that the call does not bypass
/// (`bruteForce` true): the index yields the nearest vectors, so the service loads only the
/// results (vectordistance.md, vector-search.md).
pub fn scores_every_document(q: &Query, def: &ContainerDef, root: &str) -> bool {
    let Some(first) = q.order_by.first().filter(|_| orders_by_score(q)) else {
        return false;
    };
    let ExprKind::Call { name, args, .. } = &first.expr.kind else {
        return true;
    };
    let brute_force = !matches!(
        args.get(2).map(|a| &a.kind),
        None | Some(ExprKind::Literal(Literal::Bool(false)))
    );
    let indexed = args
        .first()
        .and_then(|a| path_text(a, root))
        .is_some_and(|p| {
            def.indexing_policy
                .vector_indexes
                .iter()
                .any(|i| same_search_path(&i.path, &p))
        });
    !(name == "VECTORDISTANCE" && indexed && !brute_force)
}

/// `q` with the container's vector embedding policy applied to its VectorDistance calls: a
/// call on a policy path compares with the policy's distance function and data type unless
/// its own options name them (vector-search.md: the policy says how each path's vectors are
/// compared). `None` when no call needs it.
pub fn with_vector_policy(q: &Query, def: &ContainerDef, root: &str) -> Option<Query> {
    let policy = def.vector_embedding_policy.as_ref()?;
    let mut out = q.clone();
    let mut changed = false;
    out.for_each_expr_mut(&mut |e| {
        let pos = e.pos;
        let ExprKind::Call {
            name,
            args,
            udf: false,
        } = &mut e.kind
        else {
            return;
        };
        if name != "VECTORDISTANCE" || args.len() < 2 {
            return;
        }
        let Some(embedding) = args
            .first()
            .and_then(|a| path_text(a, root))
            .and_then(|p| policy.embedding_for(&p))
        else {
            return;
        };
        let defaults = [
            ("distanceFunction", embedding.distance_function.as_str()),
            ("dataType", embedding.data_type.as_str()),
        ];
        let literal = |s: &str| Expr {
            kind: ExprKind::Literal(Literal::String(s.into())),
            pos,
        };
        if args.len() == 2 {
            // bool_expr's default (vectordistance.md): use the index if there is one.
            args.push(Expr {
                kind: ExprKind::Literal(Literal::Bool(false)),
                pos,
            });
        }
        match args.get_mut(3) {
            None => args.push(Expr {
                kind: ExprKind::Object(
                    defaults
                        .iter()
                        .map(|(k, v)| (k.to_string(), literal(v)))
                        .collect(),
                ),
                pos,
            }),
            Some(Expr {
                kind: ExprKind::Object(members),
                ..
            }) => {
                for (k, v) in defaults {
                    if !members.iter().any(|(m, _)| m.eq_ignore_ascii_case(k)) {
                        members.push((k.to_string(), literal(v)));
                    }
                }
            }
            // Options from a parameter or an expression are taken as they are.
            Some(_) => return,
        }
        changed = true;
    });
    changed.then_some(out)
}
