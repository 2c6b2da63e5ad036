//! What a workbench run found: per pattern and design, the median charge and latency over
//! the iterations, and the requests and partitions of a representative run (the one whose
//! charge is the median) with each of its requests.
//!
//! JSON (`cosmoscope workbench --json`):
//!
//! ```json
//! {"suite": "blog", "title": "...", "iterations": 20, "seed": 1,
//!  "designs": [{"id": "v1", "title": "...", "database": "blog-v1", "sample": "blog-v1"}],
//!  "loaded": ["blog-v1"],
//!  "patterns": [{"id": "Q6", "title": "...", "kind": "query",
//!    "designs": {"v1": {"requestCharge": 2063.5, "latencyMs": 30.1, "requests": 301,
//!      "partitionsTouched": 5, "routing": "fan-out", ...,
//!      "operations": [{"kind": "query", "container": "posts", "routing": "fan-out",
//!                      "partitions": ["0","1","2","3"], "requestCharge": 40.2, ...}]}}}],
//!  "processors": {"v2": {"changes": 12, ...}}, "seconds": 3.2}
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::exec::{FAN_OUT, PatternRun, QueryWorkCount};
use crate::samples::denormalize::ProcessorStats;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub suite: String,
    pub title: String,
    pub iterations: usize,
    pub seed: u64,
    pub designs: Vec<DesignInfo>,
    /// Sample sets this run loaded because their databases were missing.
    pub loaded: Vec<String>,
    pub patterns: Vec<PatternReport>,
    /// What the change feed processors did meanwhile, per design.
    pub processors: BTreeMap<String, ProcessorStats>,
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DesignInfo {
    pub id: String,
    pub title: String,
    pub database: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatternReport {
    pub id: String,
    pub title: String,
    /// `command` (writes) or `query`.
    pub kind: String,
    /// One column group per design, in the suite's order (a JSON object keyed by design).
    pub designs: DesignResults,
}

impl PatternReport {
    pub fn design(&self, id: &str) -> Option<&DesignResult> {
        self.designs.0.iter().find(|d| d.design == id)
    }
}

/// The results of one pattern per design, ordered as the suite lists the designs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DesignResults(pub Vec<DesignResult>);

/// One design's figures for one pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DesignResult {
    /// The design id (the key of the JSON object).
    #[serde(skip)]
    pub design: String,
    /// Median RU over the iterations.
    pub request_charge: f64,
    /// Median time of the requests, in milliseconds.
    pub latency_ms: f64,
    /// Requests of the representative run.
    pub requests: usize,
    /// Distinct physical partitions the representative run touched (over all containers).
    pub partitions_touched: usize,
    /// The widest routing of the representative run: `single-partition`, `targeted` or
    /// `fan-out`.
    pub routing: String,
    pub request_charge_min: f64,
    pub request_charge_max: f64,
    /// 95th percentile of the latency, in milliseconds.
    pub latency_ms_p95: f64,
    pub iterations: usize,
    /// 429s met (and retried) over the iterations.
    pub throttled: u64,
    /// Each request of the representative run (setup requests marked, not counted above).
    pub operations: Vec<OperationReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationReport {
    /// read, query, create, upsert, replace, patch, delete or batch.
    pub kind: String,
    pub container: String,
    pub routing: String,
    /// Range ids of the physical partitions it touched.
    pub partitions: Vec<String>,
    pub request_charge: f64,
    pub latency_ms: f64,
    /// The query text, or the item addressed.
    pub detail: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub setup: bool,
    /// A query page's counted work (what a projection recomputes the charge from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<QueryWorkCount>,
}

impl DesignResult {
    /// Summarizes the iterations of one pattern on one design.
    pub fn from_runs(design: &str, runs: &[PatternRun]) -> DesignResult {
        let mut charges: Vec<f64> = runs.iter().map(PatternRun::request_charge).collect();
        charges.sort_by(f64::total_cmp);
        let mut latencies: Vec<f64> = runs.iter().map(|r| ms(r.latency())).collect();
        latencies.sort_by(f64::total_cmp);
        let median_charge = median(&charges);
        // The representative run: the one whose charge is closest to the median.
        let rep = runs
            .iter()
            .min_by(|a, b| {
                (a.request_charge() - median_charge)
                    .abs()
                    .total_cmp(&(b.request_charge() - median_charge).abs())
            })
            .cloned()
            .unwrap_or_default();
        DesignResult {
            design: design.to_string(),
            request_charge: median_charge,
            latency_ms: round3(median(&latencies)),
            requests: rep.requests(),
            partitions_touched: rep.partitions_touched(),
            routing: rep.routing().to_string(),
            request_charge_min: charges.first().copied().unwrap_or(0.0),
            request_charge_max: charges.last().copied().unwrap_or(0.0),
            latency_ms_p95: round3(percentile(&latencies, 0.95)),
            iterations: runs.len(),
            throttled: runs.iter().map(|r| r.throttled).sum(),
            operations: rep
                .ops
                .iter()
                .map(|o| OperationReport {
                    kind: o.kind.to_string(),
                    container: o.container.clone(),
                    routing: o.routing.to_string(),
                    partitions: o.partitions.clone(),
                    request_charge: o.request_charge,
                    latency_ms: round3(ms(o.latency)),
                    detail: o.detail.clone(),
                    setup: o.setup,
                    work: o.work,
                })
                .collect(),
        }
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Median of sorted values (the mean of the middle two for an even count).
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => crate::charge::round((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Serialize for DesignResults {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for d in &self.0 {
            map.serialize_entry(&d.design, d)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for DesignResults {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = DesignResults;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of design results keyed by design id")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<DesignResults, A::Error> {
                let mut out = Vec::new();
                while let Some((design, mut r)) = m.next_entry::<String, DesignResult>()? {
                    r.design = design;
                    out.push(r);
                }
                Ok(DesignResults(out))
            }
        }
        d.deserialize_map(Ordered)
    }
}

// ---- the table ----

/// Width of the pattern column.
const PATTERN_WIDTH: usize = 28;

impl Report {
    /// The comparison table a terminal shows: one row per pattern, one column group per
    /// design (median RU, median ms, requests, partitions touched; `*` marks a fan-out).
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} — {} ({} iterations per pattern, seed {})",
            self.suite, self.title, self.iterations, self.seed
        );
        if !self.loaded.is_empty() {
            let _ = writeln!(out, "loaded first: {}", self.loaded.join(", "));
        }
        out.push('\n');
        let group = |s: &str| format!(" │ {s:<28}");
        let mut head1 = format!("{:<PATTERN_WIDTH$}", "");
        let mut head2 = format!("{:<PATTERN_WIDTH$}", "pattern");
        for d in &self.designs {
            let label = truncate(&format!("{} ({})", d.id, d.title), 28);
            head1.push_str(&group(&label));
            head2.push_str(&group(&format!(
                "{:>9} {:>7} {:>4} {:>5}",
                "RU", "ms", "req", "parts"
            )));
        }
        let _ = writeln!(out, "{}", head1.trim_end());
        let _ = writeln!(out, "{}", head2.trim_end());
        let rule_width = PATTERN_WIDTH + self.designs.len() * 31;
        let _ = writeln!(out, "{}", "─".repeat(rule_width));
        for p in &self.patterns {
            let mut line = format!(
                "{:<PATTERN_WIDTH$}",
                truncate(&format!("{} {}", p.id, p.title), PATTERN_WIDTH - 1)
            );
            for d in &self.designs {
                let cell = match p.design(&d.id) {
                    Some(r) => format!(
                        "{:>9.2} {:>7.2} {:>4} {:>4}{}",
                        r.request_charge,
                        r.latency_ms,
                        r.requests,
                        r.partitions_touched,
                        if r.routing == FAN_OUT { "*" } else { " " }
                    ),
                    None => format!("{:>9}", "—"),
                };
                line.push_str(&group(&cell));
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        let _ = writeln!(
            out,
            "\nRU: median request charge · ms: median latency · req: requests issued · \
             parts: physical partitions touched (* a fan-out query)"
        );
        let busy: Vec<String> = self
            .processors
            .iter()
            .filter(|(_, s)| s.changes > 0)
            .map(|(d, s)| {
                format!(
                    "{d}: {} changes, {} writes, {:.2} RU",
                    s.changes, s.writes, s.request_charge
                )
            })
            .collect();
        if !busy.is_empty() {
            let _ = writeln!(out, "change feed processors: {}", busy.join("; "));
        }
        out
    }
}

fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_percentiles() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 3.0, 9.0]), 2.5);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.95), 4.0);
        assert_eq!(percentile(&[5.0], 0.5), 5.0);
    }

    #[test]
    fn design_results_keep_their_order_through_json() {
        let r = |d: &str| DesignResult::from_runs(d, &[PatternRun::default()]);
        let row = PatternReport {
            id: "Q1".into(),
            title: "t".into(),
            kind: "query".into(),
            designs: DesignResults(vec![r("v2"), r("v1")]),
        };
        let json = serde_json::to_string(&row).unwrap();
        assert!(json.find("\"v2\"").unwrap() < json.find("\"v1\"").unwrap());
        let back: PatternReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, row);
    }
}
