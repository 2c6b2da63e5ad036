//! Databases, containers, their offers (throughput) and partition key ranges, read from the
//! account's REST resources into the engine's views.
//!
//! A container's item count and size come from the `x-ms-resource-usage` header of its
//! read; its ranges' counts and storage from the service's partition statistics (see
//! `statistics`), asked for only when the ranges are wanted. A server that sends none
//! leaves them at zero, and the view says so (`StatisticsSource::Unreported`).

use hyper::Method;
use serde_json::{Value, json};

use super::RemoteBackend;
use super::http::{Answer, Call};
use super::statistics::{self, RangeStatistics};
use super::wire::scalar_text;
use crate::engine::views::{
    ContainerInfo, DatabaseInfo, PartitionKeyRange, RangeInfo, StatisticsSource, ThroughputView,
};
use crate::engine::{ContainerKey, ContainerSettings, IndexingPolicy, Throughput};
use crate::error::{Error, Result, StatusCode};
use crate::store::catalog::UniqueKeyPolicy;
use crate::store::partition_key::PartitionKeyDefinition;
use crate::store::stats::StatsView;

/// The service's storage limits, which a remote container has whatever it reports: 50 GB
/// per physical partition, 20 GB per logical partition (reference/cosmos.md).
const RANGE_STORAGE_LIMIT: u64 = 50 * 1024 * 1024 * 1024;
const LOGICAL_STORAGE_LIMIT: u64 = 20 * 1024 * 1024 * 1024;

pub(super) fn container_path(db: &str, name: &str) -> String {
    format!("dbs/{db}/colls/{name}")
}

impl RemoteBackend {
    pub(super) fn database_list(&self) -> Result<Vec<DatabaseInfo>> {
        let dbs = self
            .send(&Call::new(Method::GET, "dbs"))?
            .feed("Databases")?;
        dbs.iter()
            .map(|d| {
                let id = str_of(d, "id");
                let containers = self
                    .send(&Call::new(Method::GET, format!("dbs/{id}/colls")))?
                    .feed("DocumentCollections")?;
                Ok(DatabaseInfo {
                    rid: str_of(d, "_rid"),
                    ts: d.get("_ts").and_then(Value::as_i64).unwrap_or(0),
                    container_count: containers.len(),
                    id,
                })
            })
            .collect()
    }

    pub(super) fn database_create(&self, name: &str) -> Result<DatabaseInfo> {
        self.writable("creating a database")?;
        let d = self
            .send(&Call::new(Method::POST, "dbs").json(&json!({ "id": name })))?
            .json()?;
        Ok(DatabaseInfo {
            id: name.to_string(),
            rid: str_of(&d, "_rid"),
            ts: d.get("_ts").and_then(Value::as_i64).unwrap_or(0),
            container_count: 0,
        })
    }

    pub(super) fn container_create(
        &self,
        db: &str,
        name: &str,
        settings: ContainerSettings,
    ) -> Result<ContainerInfo> {
        self.writable("creating a container")?;
        let key = PartitionKeyDefinition::new(settings.partition_key_paths.clone())?;
        let mut body = json!({ "id": name, "partitionKey": key });
        if let Some(p) = &settings.indexing_policy {
            body["indexingPolicy"] = json!(p);
        }
        if let Some(ttl) = settings.default_ttl {
            body["defaultTtl"] = ttl.into();
        }
        if !settings.unique_keys.is_empty() {
            let keys: Vec<Value> = settings
                .unique_keys
                .iter()
                .map(|paths| json!({ "paths": paths }))
                .collect();
            body["uniqueKeyPolicy"] = json!({ "uniqueKeys": keys });
        }
        if let Some(p) = &settings.vector_embedding_policy {
            body["vectorEmbeddingPolicy"] = json!(p);
        }
        if let Some(p) = &settings.full_text_policy {
            body["fullTextPolicy"] = json!(p);
        }
        let call = Call::new(Method::POST, format!("dbs/{db}/colls")).json(&body);
        let call = match settings.throughput {
            Throughput::Manual(ru) => call.header("x-ms-offer-throughput", ru.to_string()),
            Throughput::Autoscale(max) => call.header(
                "x-ms-cosmos-offer-autopilot-settings",
                json!({ "maxThroughput": max }).to_string(),
            ),
        };
        self.send(&call)?;
        self.container_info(db, name, true)
    }

    /// A container's settings, throughput and ranges; with `ranges`, its partitions too.
    pub(super) fn container_info(
        &self,
        db: &str,
        name: &str,
        ranges: bool,
    ) -> Result<ContainerInfo> {
        Ok(self.container_read(db, name, &self.offers()?, ranges)?.0)
    }

    /// A container with its ranges and the service's partition statistics behind them
    /// (`None` when the server reports none).
    pub(super) fn container_statistics(
        &self,
        db: &str,
        name: &str,
    ) -> Result<(ContainerInfo, Option<Vec<RangeStatistics>>)> {
        self.container_read(db, name, &self.offers()?, true)
    }

    /// A container read with its usage (`x-ms-documentdb-populatequotainfo`: item count and
    /// size) and its ranges, its throughput found in `offers`; with `ranges`, its partition
    /// statistics too (a listing leaves them out: it shows no ranges).
    fn container_read(
        &self,
        db: &str,
        name: &str,
        offers: &[Value],
        ranges: bool,
    ) -> Result<(ContainerInfo, Option<Vec<RangeStatistics>>)> {
        let mut call = Call::new(Method::GET, container_path(db, name))
            .header("x-ms-documentdb-populatequotainfo", "True");
        if ranges {
            call = call.header(statistics::POPULATE, "True");
        }
        let answer = self.send(&call)?;
        let doc = answer.json()?;
        self.remember_key(db, name, &doc);
        let pkranges = self.ranges(db, name)?;
        let stats = ranges.then(|| statistics::parse(&doc)).flatten();
        let mut info = container_view(db, &doc, &answer, offers, &pkranges, ranges);
        if let (Some(stats), Some(parts)) = (&stats, info.partitions.as_mut()) {
            statistics::apply(stats, parts, RANGE_STORAGE_LIMIT);
        }
        info.statistics_source = match stats {
            Some(_) => StatisticsSource::Sampled,
            None => StatisticsSource::Unreported,
        };
        Ok((info, stats))
    }

    pub(super) fn container_list(&self, db: Option<&str>) -> Result<Vec<ContainerInfo>> {
        let dbs: Vec<String> = match db {
            Some(db) => vec![db.to_string()],
            None => self
                .send(&Call::new(Method::GET, "dbs"))?
                .feed("Databases")?
                .iter()
                .map(|d| str_of(d, "id"))
                .collect(),
        };
        let offers = self.offers()?;
        let mut out = Vec::new();
        // The feed has no usage: each container is read with it (one request per container,
        // and one for its ranges, as a listing's counts and partitions need).
        for db in dbs {
            let answer = self.send(&Call::new(Method::GET, format!("dbs/{db}/colls")))?;
            for doc in answer.feed("DocumentCollections")? {
                out.push(
                    self.container_read(&db, &str_of(&doc, "id"), &offers, false)?
                        .0,
                );
            }
        }
        Ok(out)
    }

    /// The container's rid and key, from the cache or a read of the container.
    pub(super) fn key_of(&self, db: &str, name: &str) -> Result<ContainerKey> {
        if let Some(k) = self.lock_keys().get(&(db.to_string(), name.to_string())) {
            return Ok(k.clone());
        }
        let doc = self
            .send(&Call::new(Method::GET, container_path(db, name)))?
            .json()?;
        self.remember_key(db, name, &doc)
            .ok_or_else(|| Error::internal(format!("container {db}/{name} has no partition key")))
    }

    fn remember_key(&self, db: &str, name: &str, doc: &Value) -> Option<ContainerKey> {
        let key = ContainerKey {
            rid: str_of(doc, "_rid"),
            partition_key: partition_key_of(doc)?,
        };
        self.lock_keys()
            .insert((db.to_string(), name.to_string()), key.clone());
        Some(key)
    }

    /// The container's live physical partitions, in EPK order, read from the account
    /// every time (a split shows at once).
    pub(super) fn ranges(&self, db: &str, name: &str) -> Result<Vec<PartitionKeyRange>> {
        let answer = self.send(
            &Call::new(
                Method::GET,
                format!("{}/pkranges", container_path(db, name)),
            )
            .header("x-ms-max-item-count", "-1"),
        )?;
        let mut ranges: Vec<PartitionKeyRange> = answer
            .feed("PartitionKeyRanges")?
            .iter()
            .map(|r| PartitionKeyRange {
                // A string on the service; some servers send a number.
                id: scalar_text(r.get("id")),
                min_inclusive: str_of(r, "minInclusive"),
                max_exclusive: str_of(r, "maxExclusive"),
                parents: r
                    .get("parents")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(|p| scalar_text(Some(p))).collect())
                    .unwrap_or_default(),
            })
            .collect();
        ranges.sort_by(|a, b| a.min_inclusive.cmp(&b.min_inclusive));
        Ok(ranges)
    }

    /// Every offer of the account (one request: the account's offers feed). A server that
    /// serves no offers (`@vercel/cosmosdb-server` answers 400 "no route") has no throughput
    /// to show: its containers list none.
    fn offers(&self) -> Result<Vec<Value>> {
        match self.send(&Call::new(Method::GET, "offers")) {
            Ok(answer) => answer.feed("Offers"),
            Err(e) if matches!(e.status, StatusCode::BadRequest | StatusCode::NotFound) => {
                Ok(Vec::new())
            }
            Err(e) => Err(e),
        }
    }

    pub(super) fn throughput_set(
        &self,
        db: &str,
        name: &str,
        throughput: Throughput,
    ) -> Result<ContainerInfo> {
        self.writable("changing throughput")?;
        let rid = self.key_of(db, name)?.rid;
        let mut offer = self
            .offers()?
            .into_iter()
            .find(|o| str_of(o, "offerResourceId") == rid)
            .ok_or_else(|| {
                Error::not_found(format!(
                    "container {db}/{name} has no throughput of its own (its database's is shared)"
                ))
            })?;
        offer["content"] = match throughput {
            Throughput::Manual(ru) => json!({ "offerThroughput": ru }),
            Throughput::Autoscale(max) => {
                json!({ "offerAutopilotSettings": { "maxThroughput": max } })
            }
        };
        let id = str_of(&offer, "id");
        self.send(&Call::new(Method::PUT, format!("offers/{id}")).json(&offer))?;
        self.container_info(db, name, true)
    }

    pub(super) fn indexing_set(
        &self,
        db: &str,
        name: &str,
        policy: IndexingPolicy,
    ) -> Result<ContainerInfo> {
        self.writable("changing the indexing policy")?;
        let path = container_path(db, name);
        let mut doc = self.send(&Call::new(Method::GET, path.clone()))?.json()?;
        doc["indexingPolicy"] = json!(policy);
        self.send(&Call::new(Method::PUT, path).json(&doc))?;
        self.container_info(db, name, true)
    }
}

/// A container resource in the engine's view.
fn container_view(
    db: &str,
    doc: &Value,
    answer: &Answer,
    offers: &[Value],
    ranges: &[PartitionKeyRange],
    with_ranges: bool,
) -> ContainerInfo {
    let rid = str_of(doc, "_rid");
    let offer = offers
        .iter()
        .find(|o| str_of(o, "offerResourceId") == rid)
        .and_then(|o| o.get("content"));
    let autoscale_max = offer
        .and_then(|c| c.pointer("/offerAutopilotSettings/maxThroughput"))
        .and_then(Value::as_u64);
    let manual = match autoscale_max {
        Some(_) => None,
        None => offer
            .and_then(|c| c.get("offerThroughput"))
            .and_then(Value::as_u64),
    };
    let ru = autoscale_max.or(manual).unwrap_or(0) as f64;
    let share = 1.0 / ranges.len().max(1) as f64;
    let partitions = with_ranges.then(|| {
        ranges
            .iter()
            .map(|r| RangeInfo {
                id: r.id.clone(),
                min_inclusive: r.min_inclusive.clone(),
                max_exclusive: r.max_exclusive.clone(),
                parents: r.parents.clone(),
                lsn: 0,
                throughput_fraction: share,
                key_space_fraction: key_space_fraction(&r.min_inclusive, &r.max_exclusive),
                statistics: empty_stats(),
                storage_fraction: 0.0,
            })
            .collect()
    });
    let usage = answer.header("x-ms-resource-usage").unwrap_or_default();
    let mut statistics = empty_stats();
    statistics.item_count = usage_of(usage, "documentsCount");
    statistics.size_bytes = usage_of(usage, "documentsSize") * 1024;
    ContainerInfo {
        id: str_of(doc, "id"),
        database: db.to_string(),
        ts: doc.get("_ts").and_then(Value::as_i64).unwrap_or(0),
        rid,
        partition_key: partition_key_of(doc).unwrap_or_else(|| PartitionKeyDefinition {
            paths: Vec::new(),
            kind: "Hash".into(),
            version: 2,
        }),
        throughput: ThroughputView {
            manual,
            autoscale_max,
            per_partition_budget: crate::charge::round(ru * share),
            // The service always enforces throughput.
            enforced: true,
        },
        default_ttl: doc.get("defaultTtl").and_then(Value::as_i64),
        unique_key_policy: doc
            .get("uniqueKeyPolicy")
            .and_then(|u| serde_json::from_value::<UniqueKeyPolicy>(u.clone()).ok())
            .unwrap_or_default(),
        // A policy this crate cannot read (a newer index kind) shows as the default rather
        // than failing the whole container view.
        indexing_policy: doc
            .get("indexingPolicy")
            .and_then(|p| serde_json::from_value(p.clone()).ok())
            .unwrap_or_default(),
        vector_embedding_policy: None,
        full_text_policy: None,
        index_transformation_progress: answer
            .header("x-ms-documentdb-collection-index-transformation-progress")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or(100),
        // The service does not say where its index cuts strings.
        indexed_string_bytes: None,
        max_partition_bytes: RANGE_STORAGE_LIMIT,
        max_logical_partition_bytes: LOGICAL_STORAGE_LIMIT,
        feed_previous_images: false,
        statistics,
        // Set by the caller, which knows whether the statistics were asked for and sent.
        statistics_source: StatisticsSource::Unreported,
        partition_count: ranges.len(),
        partitions,
    }
}

fn partition_key_of(doc: &Value) -> Option<PartitionKeyDefinition> {
    let key = doc.get("partitionKey")?;
    let paths: Vec<String> = key
        .get("paths")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    PartitionKeyDefinition::new(paths).ok()
}

/// `name=value` from a `x-ms-resource-usage` header (`documentsSize=12;documentsCount=3;`).
fn usage_of(header: &str, name: &str) -> u64 {
    header
        .split(';')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| k.trim() == name)
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

fn empty_stats() -> StatsView {
    StatsView {
        item_count: 0,
        size_bytes: 0,
        request_charge_total: 0.0,
        operations: Value::Object(Default::default()),
    }
}

/// The share of the EPK space in `[min, max)`, from the bounds' leading bytes (`""` is the
/// start, `"FF"` the end).
pub(super) fn key_space_fraction(min: &str, max: &str) -> f64 {
    let position = |hex: &str| -> f64 {
        if hex.eq_ignore_ascii_case("FF") {
            return 1.0;
        }
        let digits: String = hex.chars().take(8).collect();
        let padded = format!("{digits:0<8}");
        u32::from_str_radix(&padded, 16).map_or(0.0, |v| v as f64 / 4_294_967_296.0)
    };
    ((position(max) - position(min)) * 1e6).round() / 1e6
}

pub(super) fn str_of(v: &Value, name: &str) -> String {
    scalar_text(v.get(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_space_shares_come_from_the_bounds() {
        assert_eq!(key_space_fraction("", "FF"), 1.0);
        assert_eq!(key_space_fraction("", "80"), 0.5);
        assert_eq!(key_space_fraction("80", "FF"), 0.5);
        assert_eq!(key_space_fraction("40", "80"), 0.25);
    }

    #[test]
    fn resource_usage_is_read_by_name() {
        let h = "documentsSize=12;documentsCount=3;collectionSize=12;";
        assert_eq!(usage_of(h, "documentsCount"), 3);
        assert_eq!(usage_of(h, "documentsSize"), 12);
        assert_eq!(usage_of(h, "missing"), 0);
    }
}
