//! A container's details pane: its settings and statistics as one scrollable text, read
//! from the engine's container view (and, for a bundled sample's container, the note that
//! explains its design). The store keeps one region, so there is no conflict resolution
//! policy to show.

use serde_json::Value;

use super::script::ReportLine;
use crate::engine::ContainerInfo;
use crate::tui::format::{fmt_bytes, fmt_ru, plural};

/// What the pane shows, as the worker read it.
#[derive(Debug, Clone)]
pub struct Details {
    pub info: ContainerInfo,
    /// The sample set's note on this container's design, if it is a sample's.
    pub note: Option<String>,
    /// Stored procedures, triggers and UDFs, in that order.
    pub scripts: [usize; 3],
}

/// The pane on one container, scrolled.
#[derive(Debug, Clone)]
pub struct DetailsView {
    pub db: String,
    pub c: String,
    pub details: Details,
    pub scroll: usize,
}

impl DetailsView {
    pub fn line_count(&self) -> usize {
        self.details.lines().len()
    }
}

/// An EPK bound by its first hex digits (the rest are zeros for the ranges a container
/// starts with, and a split's median is told apart by these).
fn short_epk(hex: &str) -> String {
    match hex {
        "" => "\"\"".into(),
        h if h.chars().count() > 8 => format!("{}…", h.chars().take(8).collect::<String>()),
        h => h.to_string(),
    }
}

/// `50 GB`, `200 KB`: a limit in the units people set it in.
fn limit(bytes: u64) -> String {
    fmt_bytes(bytes).replace(".0 ", " ")
}

impl Details {
    /// The pane's text, a heading per part.
    pub fn lines(&self) -> Vec<(ReportLine, String)> {
        use ReportLine::*;
        let i = &self.info;
        let mut out: Vec<(ReportLine, String)> = Vec::new();
        let part = |out: &mut Vec<(ReportLine, String)>, title: &str| {
            if !out.is_empty() {
                out.push((Plain, String::new()));
            }
            out.push((Heading, format!("── {title} ──")));
        };
        part(&mut out, "partition key");
        out.push((
            Plain,
            format!(
                "{} ({}, version {})",
                i.partition_key.paths.join(", "),
                i.partition_key.kind,
                i.partition_key.version
            ),
        ));

        part(&mut out, "throughput");
        let t = &i.throughput;
        let provisioned = match (t.manual, t.autoscale_max) {
            (Some(ru), _) => format!("manual {ru} RU/s"),
            (None, Some(max)) => format!("autoscale up to {max} RU/s (from {} RU/s)", max / 10),
            _ => "shared".to_string(),
        };
        out.push((Plain, provisioned));
        out.push((
            Plain,
            format!(
                "{} · {} RU/s per partition · {}",
                plural(i.partition_count as u64, "physical partition"),
                fmt_ru(t.per_partition_budget),
                if t.enforced {
                    "enforced: over-budget requests get 429"
                } else {
                    "not enforced: overload is recorded, not refused (as the emulator runs)"
                }
            ),
        ));

        part(&mut out, "statistics");
        out.push((
            Plain,
            format!(
                "{} · {} · {} RU consumed",
                plural(i.statistics.item_count, "item"),
                fmt_bytes(i.statistics.size_bytes),
                fmt_ru(i.statistics.request_charge_total)
            ),
        ));
        out.push((
            Plain,
            format!(
                "limits: {} per physical partition · {} per logical partition",
                limit(i.max_partition_bytes),
                limit(i.max_logical_partition_bytes)
            ),
        ));

        part(&mut out, "physical partitions");
        let source = i.statistics_source.label();
        if !source.is_empty() {
            out.push((Plain, format!("items and sizes: {source}")));
        }
        for r in i.partitions.iter().flatten() {
            out.push((
                Plain,
                format!(
                    "range {:<3} [{}, {})  {:>5.1}% of keys · {} · {} · {:.0}% of its storage",
                    r.id,
                    short_epk(&r.min_inclusive),
                    short_epk(&r.max_exclusive),
                    r.key_space_fraction * 100.0,
                    plural(r.statistics.item_count, "item"),
                    fmt_bytes(r.statistics.size_bytes),
                    r.storage_fraction * 100.0
                ),
            ));
        }

        part(&mut out, "time to live");
        out.push((
            Plain,
            match i.default_ttl {
                None => "off".to_string(),
                Some(-1) => "on: items expire only when they set their own ttl".to_string(),
                Some(s) => format!("{s} s after an item's last write (unless it sets its own)"),
            },
        ));

        part(&mut out, "unique keys");
        let keys = &i.unique_key_policy.unique_keys;
        if keys.is_empty() {
            out.push((Plain, "none".into()));
        }
        for k in keys {
            out.push((Plain, k.paths.join(" + ")));
        }

        part(&mut out, "indexing policy");
        let policy = serde_json::to_value(&i.indexing_policy).unwrap_or(Value::Null);
        let text = serde_json::to_string_pretty(&policy).unwrap_or_default();
        out.extend(text.lines().map(|l| (Plain, l.to_string())));
        if i.index_transformation_progress < 100 {
            out.push((
                Plain,
                format!(
                    "(being rebuilt under this policy: {}% done)",
                    i.index_transformation_progress
                ),
            ));
        }

        part(&mut out, "change feed and scripts");
        out.push((
            Plain,
            format!(
                "previous images of replaced and deleted items: {}",
                if i.feed_previous_images {
                    "kept"
                } else {
                    "not kept"
                }
            ),
        ));
        let [sprocs, triggers, udfs] = self.scripts;
        out.push((
            Plain,
            format!(
                "{} · {} · {}",
                plural(sprocs as u64, "stored procedure"),
                plural(triggers as u64, "trigger"),
                plural(udfs as u64, "UDF")
            ),
        ));

        if let Some(note) = &self.note {
            part(&mut out, "about this sample's design");
            out.extend(note.lines().map(|l| (Plain, l.to_string())));
        }
        out
    }
}
