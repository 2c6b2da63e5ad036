//! What the advisor found: the candidates ranked with their verdicts, findings and figures
//! (and their projection to N times the data), as JSON (`advise --json`) and as the table a
//! terminal shows.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use super::AdviseOptions;
use super::assess::{self, Figures, Finding, Severity};
use super::candidates::Candidate;
use super::measure::PatternMeasure;
use super::placement::Placement;
use super::workload::Workload;
use crate::engine::ContainerInfo;
use crate::engine::fmt_bytes;
use crate::workbench::projection::{project_request, throughput_of};

/// One candidate as measured, before it is judged.
pub struct Measured {
    pub candidate: Candidate,
    pub is_current: bool,
    pub placement: Placement,
    pub patterns: Vec<PatternMeasure>,
    /// The queries the workload sent (for proposals).
    pub queries: Vec<(String, HashMap<String, Value>)>,
    /// What the advice should say about how this candidate was measured.
    pub notes: Vec<String>,
}

impl Measured {
    pub fn new(
        candidate: Candidate,
        is_current: bool,
        placement: Placement,
        patterns: Vec<PatternMeasure>,
        queries: Vec<(String, HashMap<String, Value>)>,
        notes: Vec<String>,
    ) -> Measured {
        Measured {
            candidate,
            is_current,
            placement,
            patterns,
            queries,
            notes,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Advice {
    pub container: String,
    pub items: u64,
    pub bytes: u64,
    /// RU/s provisioned (the autoscale maximum for autoscale).
    pub throughput: u64,
    pub partition_key: String,
    /// The workload (suite or file), if any.
    pub workload: Option<String>,
    /// Requests per second the weights were scaled to, and runs per pattern.
    pub rate: f64,
    pub iterations: usize,
    /// Best first.
    pub candidates: Vec<Assessment>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assessment {
    pub rank: usize,
    pub key: String,
    pub candidate: Candidate,
    /// Today's key.
    pub current: bool,
    pub verdict: String,
    pub score: u64,
    pub findings: Vec<Finding>,
    pub figures: Figures,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<ProjectedFigures>,
}

/// A candidate at N times the data, throughput and request rate.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedFigures {
    pub scale: f64,
    pub physical_partitions: usize,
    /// RU/s one range may use at scale.
    pub budget: f64,
    pub ru_per_second: f64,
    pub patterns: Vec<ProjectedPattern>,
    /// What grows, and which counted work is kept as measured.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedPattern {
    pub id: String,
    pub request_charge: f64,
    pub ranges_touched: usize,
    pub ru_per_second: f64,
}

/// Judges and ranks the measured candidates of a container holding `(items, bytes)`;
/// `notes` say how they were measured.
pub fn rank(
    measured: Vec<Measured>,
    info: &ContainerInfo,
    (n_items, bytes): (u64, u64),
    workload: Option<&Workload>,
    opts: &AdviseOptions,
    mut notes: Vec<String>,
) -> Advice {
    let throughput = throughput_of(info);
    let mut seen = std::collections::HashSet::new();
    for n in measured.iter().flat_map(|m| &m.notes) {
        if seen.insert(n.clone()) {
            notes.push(n.clone());
        }
    }
    if workload.is_none() {
        notes.push(
            "no workload: only the data's placement was judged; pass --workload SUITE|FILE to \
             judge the queries and writes too"
                .into(),
        );
    }
    let mut out: Vec<Assessment> = measured
        .into_iter()
        .map(|m| {
            let figures = assess::figures(
                &m.placement,
                &m.patterns,
                throughput.max_ru(),
                info.max_logical_partition_bytes,
            );
            let mut findings = assess::findings(&figures, n_items);
            let projection = opts.project.map(|n| {
                let p = project(&m, &figures, info, n);
                findings.extend(projected_findings(&figures, info, n, n_items));
                p
            });
            findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
            Assessment {
                rank: 0,
                key: m.candidate.to_string(),
                current: m.is_current,
                verdict: assess::verdict(&findings, &figures),
                score: assess::score(&findings),
                findings,
                figures,
                projection,
                candidate: m.candidate,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.score
            .cmp(&b.score)
            .then(a.figures.ru_per_second.total_cmp(&b.figures.ru_per_second))
    });
    for (i, a) in out.iter_mut().enumerate() {
        a.rank = i + 1;
    }
    Advice {
        container: format!("{}/{}", info.database, info.id),
        items: n_items,
        bytes,
        throughput: throughput.max_ru(),
        partition_key: info.partition_key.paths.join(","),
        workload: workload.map(|w| w.name.clone()),
        rate: opts.rate,
        iterations: opts.iterations,
        candidates: out,
        notes,
    }
}

/// The candidate at `n` times the data and throughput (at most the service's 1,000,000 RU/s),
/// with the workload's rates `n` times today's: ranges by the split rules, each pattern's charge recomputed from the counted
/// work of a median execution (see `workbench::projection`).
fn project(m: &Measured, f: &Figures, info: &ContainerInfo, n: f64) -> ProjectedFigures {
    let throughput = throughput_of(info);
    let widths = m.placement.layout.widths();
    let ranges: Vec<(f64, u64)> = widths
        .iter()
        .zip(&m.placement.ranges)
        .map(|(w, r)| (*w, r.bytes))
        .collect();
    let at_n =
        crate::engine::projected_range_count(&ranges, throughput, n, info.max_partition_bytes);
    let mut notes = Vec::new();
    let patterns: Vec<ProjectedPattern> = m
        .patterns
        .iter()
        .map(|p| {
            let mut charge = 0.0;
            let mut touched = 0;
            for op in &p.operations {
                let r = project_request(op.routing, op.request_charge, op.work.as_ref(), n, at_n);
                charge += r.request_charge;
                touched = touched.max(r.ranges);
                notes.extend(r.grows.map(|g| format!("{}: {} grows: {g}", p.id, op.kind)));
                notes.extend(r.unscaled.map(|u| format!("{}: not scaled: {u}", p.id)));
            }
            let charge = crate::charge::round(charge);
            ProjectedPattern {
                id: p.id.clone(),
                request_charge: charge,
                ranges_touched: touched.min(at_n),
                ru_per_second: crate::charge::round(p.rate * n * charge),
            }
        })
        .collect();
    notes.sort();
    notes.dedup();
    let _ = f;
    ProjectedFigures {
        scale: n,
        physical_partitions: at_n,
        budget: crate::charge::round(
            crate::engine::projected_throughput(throughput, n) as f64 / at_n.max(1) as f64,
        ),
        ru_per_second: crate::charge::round(patterns.iter().map(|p| p.ru_per_second).sum()),
        patterns,
        notes,
    }
}

/// Findings that only show at scale: a low-cardinality key's values do not multiply with
/// the data, so its logical partitions grow with it, and may pass the limit.
fn projected_findings(f: &Figures, info: &ContainerInfo, n: f64, items: u64) -> Vec<Finding> {
    let low = assess::findings(f, items)
        .iter()
        .any(|x| x.kind == "low-cardinality");
    match &f.largest_logical_partition {
        Some(l) if low && l.bytes as f64 * n > info.max_logical_partition_bytes as f64 => {
            vec![Finding {
                severity: Severity::Fatal,
                kind: "partition-limit",
                text: format!(
                    "at {n}× the data its largest logical partition ({}) would hold {}, over the \
                     {} limit (its values do not multiply with the data)",
                    l.key,
                    fmt_bytes((l.bytes as f64 * n) as u64),
                    fmt_bytes(info.max_logical_partition_bytes)
                ),
            }]
        }
        _ => Vec::new(),
    }
}

impl Advice {
    /// The ranking and each candidate's figures, for a terminal.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "advise {} — {} items, {}, {} RU/s, partition key {}",
            self.container,
            self.items,
            fmt_bytes(self.bytes),
            self.throughput,
            self.partition_key
        );
        match &self.workload {
            Some(w) => {
                let _ = writeln!(
                    out,
                    "workload {w}: {} requests/s, {} runs per pattern",
                    self.rate, self.iterations
                );
            }
            None => out.push_str("no workload\n"),
        }
        out.push('\n');
        let _ = writeln!(out, "{:<4} {:<30} verdict", "rank", "key");
        for a in &self.candidates {
            let key = format!("{}{}", a.key, if a.current { " (current)" } else { "" });
            let _ = writeln!(out, "{:<4} {:<30} {}", a.rank, key, a.verdict);
        }
        for a in &self.candidates {
            candidate_table(&mut out, a);
        }
        for n in &self.notes {
            let _ = writeln!(out, "\nnote: {n}");
        }
        out
    }
}

fn candidate_table(out: &mut String, a: &Assessment) {
    let f = &a.figures;
    let _ = writeln!(out, "\n{} {}", a.rank, a.key);
    let levels: Vec<String> = f
        .cardinality
        .iter()
        .map(|c| format!("{} {}", c.key, c.distinct))
        .collect();
    let _ = writeln!(out, "  distinct values: {}", levels.join(", "));
    if let Some(l) = &f.largest_logical_partition {
        let _ = writeln!(
            out,
            "  largest logical partition: {} — {} items, {} ({:.4}% of the limit)",
            l.key,
            l.items,
            fmt_bytes(l.bytes),
            l.share_of_limit * 100.0
        );
    }
    let _ = writeln!(
        out,
        "  {} physical partitions · storage skew {:.2} · write skew {:.2} · busiest key {:.1}% of writes · {:.1} RU/s · fan-out {:.0}% of requests",
        f.physical_partitions,
        f.storage_skew,
        f.write_skew,
        f.hottest_key_write_share * 100.0,
        f.ru_per_second,
        f.fan_out_share * 100.0
    );
    if let Some(h) = &f.hottest_range {
        let _ = writeln!(
            out,
            "  hottest range {}: {:.1} of {:.1} RU/s, mostly {}",
            h.id,
            h.ru_per_second,
            h.budget,
            h.pattern.as_deref().unwrap_or("?")
        );
    }
    if !f.patterns.is_empty() {
        let _ = writeln!(
            out,
            "  {:<24} {:>7} {:<16} {:>6} {:>4} {:>9} {:>9}",
            "pattern", "rate/s", "routing", "ranges", "req", "RU/exec", "RU/s"
        );
        for p in &f.patterns {
            let title = match p.title == p.id {
                true => p.id.clone(),
                false => format!("{} {}", p.id, p.title),
            };
            let title: String = title.chars().take(24).collect();
            match &p.error {
                Some(e) => {
                    let _ = writeln!(out, "  {title:<24} {:>7.1} cannot run: {e}", p.rate);
                }
                None => {
                    let _ = writeln!(
                        out,
                        "  {title:<24} {:>7.1} {:<16} {:>6} {:>4} {:>9.2} {:>9.1}",
                        p.rate,
                        p.routing,
                        p.ranges_touched,
                        p.requests,
                        p.request_charge,
                        p.ru_per_second
                    );
                }
            }
        }
    }
    for r in &f.ranges {
        let _ = writeln!(
            out,
            "  range {:>3} [{}, {}): {} items, {}, {} logical · {:.1} RU/s ({:.1} writes) of {:.1}",
            r.data.id,
            short(&r.data.min_inclusive),
            short(&r.data.max_exclusive),
            r.data.items,
            fmt_bytes(r.data.bytes),
            r.data.logical_partitions,
            r.ru_per_second,
            r.write_ru_per_second,
            r.budget
        );
    }
    if let Some(p) = &a.projection {
        let _ = writeln!(
            out,
            "  at {}×: {} physical partitions, {:.1} RU/s each, {:.1} RU/s in all",
            p.scale, p.physical_partitions, p.budget, p.ru_per_second
        );
        for pp in &p.patterns {
            let _ = writeln!(
                out,
                "    {:<22} {:>9.2} RU/exec {:>6} ranges {:>11.1} RU/s",
                pp.id, pp.request_charge, pp.ranges_touched, pp.ru_per_second
            );
        }
        for n in &p.notes {
            let _ = writeln!(out, "    {n}");
        }
    }
}

/// An EPK bound shortened for the table.
fn short(epk: &str) -> String {
    match epk.len() {
        0 => "\"\"".into(),
        n if n > 8 => format!("{}…", &epk[..8]),
        _ => epk.to_string(),
    }
}
