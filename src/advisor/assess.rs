//! Judging a candidate as the modelling guides argue ("Partitioning and horizontal
//! scaling", "Choose a partition key"): a key needs high cardinality (many distinct
//! values, so the data can spread over any number of physical partitions), writes spread
//! evenly over its values (no hot logical partition), no logical partition near the 20 GB
//! limit, and the most frequent queries answered inside one logical partition.
//!
//! Each shortfall is a finding with a severity: *fatal* when the design breaks (a logical
//! partition over the limit, a pattern that cannot run), *severe* when it caps scale or
//! throttles (low cardinality, a hot key, a range over its RU budget), *moderate* when it
//! costs RU (a pattern that fans out, uneven storage). Candidates rank by the sum of their
//! findings' weights, then by the RU/s their workload needs.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::measure::PatternMeasure;
use super::placement::{LevelCardinality, Placement, RangePlacement};
use crate::workbench::exec::FAN_OUT;

/// Fewer distinct values than this is low cardinality ("hundreds or thousands of distinct
/// values", the guides), when values average more than `ITEMS_PER_VALUE` items.
pub const LOW_CARDINALITY: u64 = 100;
const ITEMS_PER_VALUE: u64 = 10;
/// A logical partition taking more than this share of the writes is a hot key.
pub const HOT_KEY_SHARE: f64 = 0.25;
/// Largest range against the mean past which storage counts as skewed.
const STORAGE_SKEW: f64 = 1.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Severity {
    Moderate,
    Severe,
    Fatal,
}

impl Severity {
    fn weight(self) -> u64 {
        match self {
            Severity::Moderate => 1,
            Severity::Severe => 10,
            Severity::Fatal => 100,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub severity: Severity,
    /// A short name: low-cardinality, hot-key, over-budget, fan-out, storage-skew,
    /// partition-limit, id-collision, cannot-run.
    pub kind: &'static str,
    pub text: String,
}

/// The largest logical partition.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LargestPartition {
    pub key: Value,
    pub items: u64,
    pub bytes: u64,
    /// Of the container's logical partition limit (20 GB by default).
    pub share_of_limit: f64,
}

/// One physical partition under the candidate: its data and its load.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RangeView {
    #[serde(flatten)]
    pub data: RangePlacement,
    pub ru_per_second: f64,
    pub write_ru_per_second: f64,
    /// RU/s this range may use (the throughput over the ranges).
    pub budget: f64,
}

/// One pattern under the candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatternView {
    pub id: String,
    pub title: String,
    pub rate: f64,
    pub routing: String,
    pub requests: usize,
    pub ranges_touched: usize,
    /// Median RU per execution, and RU/s at the pattern's rate.
    pub request_charge: f64,
    pub ru_per_second: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The hottest physical partition and the pattern that heats it most.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HottestRange {
    pub id: String,
    pub ru_per_second: f64,
    pub budget: f64,
    pub pattern: Option<String>,
}

/// Everything measured of one candidate.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub cardinality: Vec<LevelCardinality>,
    pub logical_partitions: u64,
    /// Items that share an id with another item of their logical partition under this key.
    pub id_collisions: u64,
    pub largest_logical_partition: Option<LargestPartition>,
    pub physical_partitions: usize,
    pub storage_skew: f64,
    /// Hottest range's write RU/s against the mean over ranges (1 = even).
    pub write_skew: f64,
    /// Share of the write RU the busiest logical partition takes.
    pub hottest_key_write_share: f64,
    pub ru_per_second: f64,
    /// Share of the workload's requests that fan out.
    pub fan_out_share: f64,
    pub hottest_range: Option<HottestRange>,
    pub ranges: Vec<RangeView>,
    pub patterns: Vec<PatternView>,
}

/// The candidate's figures from its placement and its patterns' measures; `budget` is one
/// range's RU/s when the throughput is spread over the placement's ranges.
pub fn figures(
    placement: &Placement,
    patterns: &[PatternMeasure],
    throughput: u64,
    max_logical_bytes: u64,
) -> Figures {
    let load = Load::of(placement, patterns, throughput);
    let ranges = load.ranges;
    let writes: Vec<f64> = ranges.iter().map(|r| r.write_ru_per_second).collect();
    let mean_writes = writes.iter().sum::<f64>() / ranges.len().max(1) as f64;
    let total_writes: f64 = load.key_writes.values().sum();
    let hottest_key = load.key_writes.values().copied().fold(0.0, f64::max);
    let hottest_range = ranges
        .iter()
        .max_by(|a, b| a.ru_per_second.total_cmp(&b.ru_per_second))
        .filter(|r| r.ru_per_second > 0.0)
        .map(|r| HottestRange {
            id: r.data.id.clone(),
            ru_per_second: r.ru_per_second,
            budget: r.budget,
            pattern: load.heaters.get(&r.data.id).map(|(p, _)| p.clone()),
        });
    let requests: f64 = patterns.iter().map(|p| p.rate * p.requests as f64).sum();
    let fanned: f64 = patterns
        .iter()
        .map(|p| {
            let fan = p.operations.iter().filter(|o| o.routing == FAN_OUT).count();
            p.rate * fan as f64
        })
        .sum();
    let share = |part: f64, whole: f64| {
        if whole > 0.0 {
            round(part / whole)
        } else {
            0.0
        }
    };
    Figures {
        cardinality: placement.cardinality.clone(),
        logical_partitions: placement.logical.len() as u64,
        id_collisions: placement.id_collisions,
        largest_logical_partition: placement.largest().map(|l| LargestPartition {
            key: super::candidates::request_form(&l.value),
            items: l.items,
            bytes: l.bytes,
            share_of_limit: l.bytes as f64 / max_logical_bytes.max(1) as f64,
        }),
        physical_partitions: placement.ranges.len(),
        storage_skew: round(placement.storage_skew()),
        write_skew: match mean_writes > 0.0 {
            true => round(writes.iter().copied().fold(0.0, f64::max) / mean_writes),
            false => 1.0,
        },
        hottest_key_write_share: share(hottest_key, total_writes),
        ru_per_second: round(patterns.iter().map(|p| p.rate * mean_charge(p)).sum()),
        fan_out_share: share(fanned, requests),
        hottest_range,
        ranges,
        patterns: patterns.iter().map(pattern_view).collect(),
    }
}

/// The workload's load on the placement's ranges at the patterns' rates.
struct Load<'p> {
    ranges: Vec<RangeView>,
    /// Per range id: the pattern that contributes most RU/s, and that RU/s.
    heaters: HashMap<String, (String, f64)>,
    /// Write RU/s per candidate key.
    key_writes: HashMap<&'p str, f64>,
}

impl<'p> Load<'p> {
    fn of(placement: &Placement, patterns: &'p [PatternMeasure], throughput: u64) -> Load<'p> {
        let budget = round(throughput as f64 / placement.ranges.len().max(1) as f64);
        let mut load = Load {
            ranges: placement
                .ranges
                .iter()
                .map(|r| RangeView {
                    data: r.clone(),
                    ru_per_second: 0.0,
                    write_ru_per_second: 0.0,
                    budget,
                })
                .collect(),
            heaters: HashMap::new(),
            key_writes: HashMap::new(),
        };
        for p in patterns {
            for (id, ru) in &p.per_range {
                if let Some(r) = load.ranges.iter_mut().find(|r| r.data.id == *id) {
                    r.ru_per_second += ru * p.rate;
                }
                let e = load
                    .heaters
                    .entry(id.clone())
                    .or_insert((p.id.clone(), 0.0));
                if ru * p.rate > e.1 {
                    *e = (p.id.clone(), ru * p.rate);
                }
            }
            for (id, ru) in &p.writes_per_range {
                if let Some(r) = load.ranges.iter_mut().find(|r| r.data.id == *id) {
                    r.write_ru_per_second += ru * p.rate;
                }
            }
            for (key, ru) in &p.writes_per_key {
                *load.key_writes.entry(key).or_default() += ru * p.rate;
            }
        }
        for r in &mut load.ranges {
            r.ru_per_second = round(r.ru_per_second);
            r.write_ru_per_second = round(r.write_ru_per_second);
        }
        load
    }
}

fn pattern_view(p: &PatternMeasure) -> PatternView {
    PatternView {
        id: p.id.clone(),
        title: p.title.clone(),
        rate: round(p.rate),
        routing: p.routing.to_string(),
        requests: p.requests,
        ranges_touched: p.ranges_touched,
        request_charge: p.request_charge,
        ru_per_second: round(p.rate * mean_charge(p)),
        error: p.error.clone(),
    }
}

/// Mean RU per execution of a pattern, over its ranges.
fn mean_charge(p: &PatternMeasure) -> f64 {
    p.per_range.values().sum()
}

fn round(v: f64) -> f64 {
    crate::charge::round(v)
}

/// The findings on a candidate's figures; `items` is the container's item count.
pub fn findings(f: &Figures, items: u64) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut add = |severity, kind, text: String| {
        out.push(Finding {
            severity,
            kind,
            text,
        })
    };
    if let Some(l) = &f.largest_logical_partition
        && l.share_of_limit > 1.0
    {
        add(
            Severity::Fatal,
            "partition-limit",
            format!(
                "its largest logical partition ({}) holds {} bytes, over the logical partition \
                 limit: writes to it fail with 403",
                l.key, l.bytes
            ),
        );
    }
    if f.id_collisions > 0 {
        add(
            Severity::Fatal,
            "id-collision",
            format!(
                "{} items share an id with another item of their logical partition: a \
                 container with this key cannot hold them all (ids are unique per logical \
                 partition)",
                f.id_collisions
            ),
        );
    }
    for p in &f.patterns {
        if let Some(e) = &p.error {
            add(
                Severity::Fatal,
                "cannot-run",
                format!("{} cannot run: {e}", p.id),
            );
        }
    }
    let distinct = f.cardinality.last().map_or(0, |c| c.distinct);
    if distinct < LOW_CARDINALITY && items >= ITEMS_PER_VALUE * distinct {
        add(
            Severity::Severe,
            "low-cardinality",
            format!(
                "low cardinality: {distinct} distinct values, so the data can never spread over \
                 more than {distinct} logical partitions"
            ),
        );
    }
    if f.hottest_key_write_share > HOT_KEY_SHARE {
        add(
            Severity::Severe,
            "hot-key",
            format!(
                "one logical partition takes {:.0}% of the write RU: a hot partition",
                f.hottest_key_write_share * 100.0
            ),
        );
    }
    if let Some(h) = &f.hottest_range
        && h.ru_per_second > h.budget
    {
        add(
            Severity::Severe,
            "over-budget",
            format!(
                "range {} needs {:.1} RU/s of its {:.1} RU/s budget (mostly {}): requests will \
                 be throttled",
                h.id,
                h.ru_per_second,
                h.budget,
                h.pattern.as_deref().unwrap_or("?")
            ),
        );
    }
    let busiest = f
        .patterns
        .iter()
        .filter(|p| p.error.is_none())
        .max_by(|a, b| a.rate.total_cmp(&b.rate))
        .map(|p| p.id.clone());
    for p in f
        .patterns
        .iter()
        .filter(|p| p.routing == FAN_OUT && p.rate > 0.0)
    {
        let most = if busiest.as_ref() == Some(&p.id) {
            ", the most frequent pattern"
        } else {
            ""
        };
        add(
            Severity::Moderate,
            "fan-out",
            format!(
                "{} ({:.1}/s{most}) fans out to {} physical partitions",
                p.id, p.rate, p.ranges_touched
            ),
        );
    }
    if f.physical_partitions > 1 && f.storage_skew > STORAGE_SKEW {
        add(
            Severity::Moderate,
            "storage-skew",
            format!(
                "uneven storage: the largest physical partition holds {:.1}× the mean",
                f.storage_skew
            ),
        );
    }
    out
}

/// The weight of some findings (the ranking's first criterion).
pub fn score(findings: &[Finding]) -> u64 {
    findings.iter().map(|f| f.severity.weight()).sum()
}

/// The verdict in words: what is wrong, worst first, or why the key is good.
pub fn verdict(findings: &[Finding], f: &Figures) -> String {
    let worst = findings.iter().map(|x| x.severity).max();
    let list = |s: Severity| -> Vec<&str> {
        findings
            .iter()
            .filter(|x| x.severity == s)
            .map(|x| x.text.as_str())
            .collect()
    };
    match worst {
        Some(Severity::Fatal) => format!("avoid: {}", list(Severity::Fatal).join("; ")),
        Some(Severity::Severe) => format!("poor: {}", list(Severity::Severe).join("; ")),
        Some(Severity::Moderate) => format!("workable: {}", list(Severity::Moderate).join("; ")),
        None => {
            let distinct = f.cardinality.last().map_or(0, |c| c.distinct);
            let mut good = vec![if distinct >= LOW_CARDINALITY {
                format!("high cardinality ({distinct} values)")
            } else {
                format!("{distinct} distinct values, enough for this data")
            }];
            if f.hottest_key_write_share > 0.0 {
                good.push(format!(
                    "writes spread evenly (the busiest key takes {:.1}%)",
                    f.hottest_key_write_share * 100.0
                ));
            }
            if !f.patterns.is_empty() {
                good.push("no pattern fans out".to_string());
            }
            format!("good: {}", good.join(", "))
        }
    }
}
