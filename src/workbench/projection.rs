//! Projection: what the same requests would cost with N times the data and throughput.
//!
//! The throughput at scale is N times today's, at most the service's default maximum of
//! 1,000,000 RU/s per container. Each container's physical partition count at scale comes from the service's rules as the
//! store applies them ([`crate::engine::projected_range_count`]: throughput splits, then
//! storage splits). Each request's charge is recomputed from the RU model's counted work:
//! the charge at scale is the measured charge plus the model's price of the work that
//! changes (ranges visited, documents loaded), so at N = 1 nothing changes and the table is
//! the measured one. What grows, and why:
//!
//! - a fan-out query visits every range, so it pays the per-range base on each range the
//!   container has at scale;
//! - a fan-out query that scans (its filter is not served by the index) loads every
//!   document, N times as many.
//!
//! The data is assumed to grow as more logical partitions of today's shape (more users,
//! more orders), so what one logical partition holds stays as it is: point operations,
//! single-partition queries and the documents an index lookup matches inside the key
//! values a query binds keep their measured work. Two kinds of counted work cannot be
//! scaled honestly from one run and are named in the notes instead of guessed: the
//! documents an index-served fan-out query matches (a filter on a non-key property may
//! match N times as many, or the same few), and the ranges a targeted query's key values
//! land on (they may spread over more ranges).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::exec::{FAN_OUT, QueryWorkCount, SINGLE};
use super::report::{DesignResult, OperationReport, Report};
use crate::charge::{self, QueryWork};
use crate::engine::{Backend, ContainerInfo, Throughput, fmt_bytes};
use crate::error::{Error, Result};

/// One container at today's scale and at N times it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerScale {
    pub database: String,
    pub container: String,
    pub items: u64,
    pub bytes: u64,
    /// RU/s provisioned (the autoscale maximum for autoscale).
    pub throughput: u64,
    pub ranges: usize,
    pub projected_items: u64,
    pub projected_bytes: u64,
    pub projected_throughput: u64,
    pub projected_ranges: usize,
}

impl ContainerScale {
    /// `info` (with its partitions) at `n` times its data and throughput.
    pub fn of(info: &ContainerInfo, n: f64) -> ContainerScale {
        let throughput = throughput_of(info);
        let ranges: Vec<(f64, u64)> = info
            .partitions
            .iter()
            .flatten()
            .map(|r| (r.key_space_fraction, r.statistics.size_bytes))
            .collect();
        let (items, bytes) = (info.statistics.item_count, info.statistics.size_bytes);
        ContainerScale {
            database: info.database.clone(),
            container: info.id.clone(),
            items,
            bytes,
            throughput: throughput.max_ru(),
            ranges: info.partition_count,
            projected_items: (items as f64 * n).round() as u64,
            projected_bytes: (bytes as f64 * n).round() as u64,
            projected_throughput: crate::engine::projected_throughput(throughput, n),
            projected_ranges: crate::engine::projected_range_count(
                &ranges,
                throughput,
                n,
                info.max_partition_bytes,
            ),
        }
    }
}

/// The container's throughput setting.
pub fn throughput_of(info: &ContainerInfo) -> Throughput {
    match (info.throughput.manual, info.throughput.autoscale_max) {
        (_, Some(max)) => Throughput::Autoscale(max),
        (Some(ru), None) => Throughput::Manual(ru),
        (None, None) => Throughput::Manual(400),
    }
}

/// One request at scale.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectedRequest {
    pub request_charge: f64,
    /// Physical partitions it touches at scale.
    pub ranges: usize,
    /// Why its charge grows, and which of its work was kept as measured.
    pub grows: Option<String>,
    pub unscaled: Option<String>,
}

/// A request that took `charge` RU with `routing` and (for a query page) `work`, at a scale
/// where its container has `ranges_at_n` ranges and `n` times the data.
pub fn project_request(
    routing: &str,
    charge_measured: f64,
    work: Option<&QueryWorkCount>,
    n: f64,
    ranges_at_n: usize,
) -> ProjectedRequest {
    let Some(w) = work else {
        // A point operation or a batch: its charge is a function of its items only.
        return ProjectedRequest {
            request_charge: charge_measured,
            ranges: 1,
            grows: None,
            unscaled: None,
        };
    };
    let (mut ranges, mut docs, mut bytes) = (w.ranges, w.loaded_docs, w.loaded_bytes);
    let (mut grows, mut unscaled) = (Vec::new(), None);
    if routing == FAN_OUT {
        if ranges_at_n != w.ranges {
            grows.push(format!(
                "fan-out over {} ranges instead of {}",
                ranges_at_n, w.ranges
            ));
        }
        ranges = ranges_at_n;
        if w.scan {
            docs = (w.loaded_docs as f64 * n).round() as u64;
            bytes = (w.loaded_bytes as f64 * n).round() as u64;
            if n != 1.0 {
                grows.push(format!("its scan loads {n}× the documents"));
            }
        } else if w.loaded_docs > 0 {
            unscaled = Some(format!(
                "the {} documents its index lookup matched are kept as measured (a filter on \
                 a non-key property may match more at scale)",
                w.loaded_docs
            ));
        }
    } else if routing != SINGLE && w.ranges > 1 {
        unscaled = Some(format!(
            "its key values' {} ranges are kept as measured (they may spread over more)",
            w.ranges
        ));
    }
    let delta = model(ranges, docs, bytes) - model(w.ranges, w.loaded_docs, w.loaded_bytes);
    ProjectedRequest {
        request_charge: charge::round(charge_measured + delta),
        ranges,
        grows: (!grows.is_empty()).then(|| grows.join("; ")),
        unscaled,
    }
}

/// The RU model's price of visiting `ranges` ranges and loading `docs` documents of
/// `bytes` (output bytes do not change with scale and cancel out).
fn model(ranges: usize, docs: u64, bytes: u64) -> f64 {
    let visit = charge::query_range(QueryWork {
        visited: true,
        ..QueryWork::default()
    });
    visit * ranges as f64
        + charge::query_range(QueryWork {
            visited: false,
            loaded_docs: docs,
            loaded_bytes: bytes,
            output_bytes: 0,
        })
}

/// A workbench report at N times the data and throughput.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Projection {
    pub scale: f64,
    pub containers: Vec<ContainerScale>,
    /// The report with every charge and partition count at scale.
    pub report: Report,
    /// Per pattern and design: what grows and what was kept as measured.
    pub notes: Vec<String>,
}

/// Projects `report` to `n` times the data and throughput of its designs' containers, as
/// `engine` holds them now.
pub fn project(engine: &dyn Backend, report: &Report, n: f64) -> Result<Projection> {
    if !(n.is_finite() && n >= 1.0) {
        return Err(Error::bad_request(format!(
            "--project is how many times today's data to project to, 1 or more; got {n}"
        )));
    }
    let mut containers = Vec::new();
    for d in &report.designs {
        let names: BTreeSet<&str> = report
            .patterns
            .iter()
            .filter_map(|p| p.design(&d.id))
            .flat_map(|r| r.operations.iter().map(|o| o.container.as_str()))
            .collect();
        for c in names {
            containers.push(ContainerScale::of(&engine.container(&d.database, c)?, n));
        }
    }
    Ok(project_with(report, containers, n))
}

/// [`project`] with the containers' scales given.
pub fn project_with(report: &Report, containers: Vec<ContainerScale>, n: f64) -> Projection {
    let mut projected = report.clone();
    let mut notes = Vec::new();
    let database_of: BTreeMap<&str, &str> = report
        .designs
        .iter()
        .map(|d| (d.id.as_str(), d.database.as_str()))
        .collect();
    for p in &mut projected.patterns {
        for r in &mut p.designs.0 {
            let db = database_of
                .get(r.design.as_str())
                .copied()
                .unwrap_or_default();
            let scale_of = |c: &str| {
                containers
                    .iter()
                    .find(|s| s.database == db && s.container == c)
                    .map_or(1, |s| s.projected_ranges)
            };
            for line in project_result(r, &scale_of, n) {
                notes.push(format!("{} on {}: {line}", p.id, r.design));
            }
        }
    }
    notes.dedup();
    Projection {
        scale: n,
        containers,
        report: projected,
        notes,
    }
}

/// Projects one design's figures for a pattern in place; returns its notes.
fn project_result(
    r: &mut DesignResult,
    ranges_at_n: &dyn Fn(&str) -> usize,
    n: f64,
) -> Vec<String> {
    let mut delta = 0.0;
    let mut notes = Vec::new();
    let mut touched: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut fanned: BTreeSet<String> = BTreeSet::new();
    for op in r.operations.iter_mut() {
        let at_n = ranges_at_n(&op.container);
        let p = project_request(&op.routing, op.request_charge, op.work.as_ref(), n, at_n);
        if !op.setup {
            delta += p.request_charge - op.request_charge;
            touched
                .entry(op.container.clone())
                .or_default()
                .extend(op.partitions.iter().cloned());
            if op.routing == FAN_OUT {
                fanned.insert(op.container.clone());
            }
            notes.extend(describe(op, &p));
        }
        op.request_charge = p.request_charge;
    }
    r.request_charge = charge::round(r.request_charge + delta);
    r.request_charge_min = charge::round(r.request_charge_min + delta);
    r.request_charge_max = charge::round(r.request_charge_max + delta);
    r.partitions_touched = touched
        .iter()
        .map(|(c, ids)| match fanned.contains(c) {
            true => ranges_at_n(c),
            false => ids.len().min(ranges_at_n(c).max(1)),
        })
        .sum();
    notes.sort();
    notes.dedup();
    notes
}

fn describe(op: &OperationReport, p: &ProjectedRequest) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(g) = &p.grows {
        out.push(format!("{} on {} grows: {g}", op.kind, op.container));
    }
    if let Some(u) = &p.unscaled {
        out.push(format!("not scaled: {} on {}: {u}", op.kind, op.container));
    }
    out
}

impl Projection {
    /// The workbench table at scale, with the containers' growth and the notes.
    pub fn to_table(&self) -> String {
        let mut out = format!(
            "projected to {}× today's data and throughput (at most 1,000,000 RU/s per container, \
             the service's default maximum); ms and req are as measured: latency is not \
             projected, and every container is assumed to grow {}×, though one its design keeps \
             at a fixed size (a feed of the 100 newest) does not\n\n",
            self.scale, self.scale
        );
        out.push_str(&self.report.to_table());
        out.push_str("\ncontainers at scale:\n");
        for c in &self.containers {
            let _ = writeln!(
                out,
                "  {}/{}: {} items, {} → {} items, {}; {} → {} RU/s; {} → {} physical partitions",
                c.database,
                c.container,
                c.items,
                fmt_bytes(c.bytes),
                c.projected_items,
                fmt_bytes(c.projected_bytes),
                c.throughput,
                c.projected_throughput,
                c.ranges,
                c.projected_ranges
            );
        }
        if !self.notes.is_empty() {
            out.push_str("\nwhat grows, and what is kept as measured:\n");
            for n in &self.notes {
                let _ = writeln!(out, "  {n}");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(ranges: usize, docs: u64, scan: bool) -> QueryWorkCount {
        QueryWorkCount {
            ranges,
            loaded_docs: docs,
            loaded_bytes: docs * 1000,
            output_bytes: 500,
            scan,
        }
    }

    #[test]
    fn at_one_nothing_changes() {
        for routing in [SINGLE, "targeted", FAN_OUT] {
            let p = project_request(routing, 12.34, Some(&work(4, 10, true)), 1.0, 4);
            assert_eq!(p.request_charge, 12.34);
        }
    }

    #[test]
    fn fan_out_pays_each_new_range_and_scans_grow() {
        let p = project_request(FAN_OUT, 10.0, Some(&work(4, 0, false)), 10.0, 8);
        assert_eq!(
            p.request_charge,
            charge::round(10.0 + 4.0 * charge::QUERY_PER_RANGE)
        );
        assert_eq!(p.ranges, 8);
        let s = project_request(FAN_OUT, 10.0, Some(&work(1, 100, true)), 10.0, 1);
        let extra = 900.0 * charge::QUERY_PER_LOADED_DOC
            + 900.0 * 1000.0 / 1024.0 * charge::QUERY_PER_LOADED_KB;
        assert_eq!(s.request_charge, charge::round(10.0 + extra));
        let single = project_request(SINGLE, 3.0, Some(&work(1, 5, false)), 100.0, 50);
        assert_eq!(single.request_charge, 3.0);
        assert_eq!(
            project_request(SINGLE, 6.2, None, 100.0, 50).request_charge,
            6.2
        );
    }
}
