//! The embedded backend: the [`Backend`] operations on the LMDB store of a data directory,
//! each in the transactions it needs, with the RU charge the service would make.

use serde_json::Value;

use super::backend::{Backend, Capabilities, ContainerKey, ItemWriteKind, KeyPage, WriteDone};
use super::batch::{BatchOperation, BatchResponse, PatchRequest};
use super::feed::{FeedChange, FeedPage, FeedRequest};
use super::import::{self};
use super::plan::QueryPlan;
use super::query::{QueryOptions, QueryResult};
use super::scripts::{
    ScriptInfo, ScriptKind, ScriptSpec, SprocRequest, SprocResponse, TriggeredWrite,
};
use super::views::*;
use super::{Engine, IMPORT_BATCH_ITEMS, charge_round, charged, response};
use crate::error::{Error, Result, StatusCode};
use crate::store::catalog::{ContainerDef, ContainerSettings, Throughput};
use crate::store::epk;
use crate::store::item;
use crate::store::keys::RangeId;
use crate::store::meter;
use crate::store::ranges::PkRange;
use crate::store::stats::StatsView;
use crate::store::write::{WriteBatch, WriteKind};

impl Backend for Engine {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            partition_statistics: true,
            range_statistics: StatisticsSource::Exact,
            metering: true,
            enforcement_switch: true,
            writes: self.store.read_only().is_none(),
            // A store on read-only media stays so: there is nothing to switch.
            write_switch: false,
            billed: false,
        }
    }

    fn settle(&self) -> Result<bool> {
        self.results.settle()
    }

    fn create_database(&self, name: &str) -> Result<DatabaseInfo> {
        let mut txn = self.store.write_txn()?;
        let def = self
            .store
            .create_database(&mut txn, name, crate::store::now_secs())?;
        txn.commit()?;
        Ok(DatabaseInfo::new(&def, 0))
    }

    fn delete_database(&self, name: &str) -> Result<()> {
        let mut txn = self.store.write_txn()?;
        self.store.delete_database(&mut txn, name)?;
        txn.commit()?;
        Ok(())
    }

    fn list_databases(&self) -> Result<Vec<DatabaseInfo>> {
        let txn = self.store.read_txn()?;
        self.store
            .list_databases(&txn)?
            .iter()
            .map(|d| {
                Ok(DatabaseInfo::new(
                    d,
                    self.store.list_containers(&txn, &d.id)?.len(),
                ))
            })
            .collect()
    }

    fn create_container(
        &self,
        db: &str,
        name: &str,
        settings: ContainerSettings,
    ) -> Result<ContainerInfo> {
        let mut txn = self.store.write_txn()?;
        let def =
            self.store
                .create_container(&mut txn, db, name, settings, crate::store::now_secs())?;
        txn.commit()?;
        self.container(&def.database, &def.id)
    }

    fn delete_container(&self, db: &str, name: &str) -> Result<()> {
        let mut txn = self.store.write_txn()?;
        self.store.delete_container(&mut txn, db, name)?;
        txn.commit()?;
        Ok(())
    }

    /// Containers of one database, or of all databases.
    fn list_containers(&self, db: Option<&str>) -> Result<Vec<ContainerInfo>> {
        let txn = self.store.read_txn()?;
        let dbs = match db {
            Some(db) => vec![self.store.require_database(&txn, db)?],
            None => self.store.list_databases(&txn)?,
        };
        let mut out = Vec::new();
        for d in dbs {
            for c in self.store.list_containers(&txn, &d.id)? {
                let stats = self.store.container_stats(&txn, &c)?;
                out.push(ContainerInfo::new(
                    &c,
                    StatsView::from(&stats.counters),
                    None,
                ));
            }
        }
        Ok(out)
    }

    /// Settings, statistics and physical partitions of one container.
    fn container(&self, db: &str, name: &str) -> Result<ContainerInfo> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let stats = self.store.container_stats(&txn, &def)?;
        let ranges = self
            .store
            .ranges_with_stats(&txn, &def)?
            .iter()
            .map(|(r, s)| RangeInfo::new(&def, r, s))
            .collect();
        Ok(ContainerInfo::new(
            &def,
            StatsView::from(&stats.counters),
            Some(ranges),
        ))
    }

    fn container_key(&self, db: &str, name: &str) -> Result<ContainerKey> {
        let def = self.def(db, name)?;
        Ok(ContainerKey {
            rid: crate::store::item::container_rid(&def),
            partition_key: def.partition_key.clone(),
        })
    }

    /// The container's live physical partitions, in EPK order (the service's `pkranges`).
    fn partition_key_ranges(&self, db: &str, name: &str) -> Result<Vec<PartitionKeyRange>> {
        let def = self.def(db, name)?;
        Ok(def.ranges.iter().map(PartitionKeyRange::new).collect())
    }

    /// Changes throughput; raising it past `ranges × 10,000` RU/s splits ranges.
    fn set_throughput(
        &self,
        db: &str,
        name: &str,
        throughput: Throughput,
    ) -> Result<ContainerInfo> {
        let mut txn = self.store.write_txn()?;
        self.store.set_throughput(&mut txn, db, name, throughput)?;
        txn.commit()?;
        self.container(db, name)
    }

    /// Turns RU budget enforcement on or off: with it on, a request that finds its
    /// partition's budget for the current second spent gets 429 (retry-after in ms).
    fn set_throughput_enforcement(
        &self,
        db: &str,
        name: &str,
        enforce: bool,
    ) -> Result<ContainerInfo> {
        let mut txn = self.store.write_txn()?;
        let mut def = (*self.store.container(&txn, db, name)?).clone();
        def.enforce_throughput = enforce;
        self.store.put_container(&mut txn, &def)?;
        txn.commit()?;
        self.container(db, name)
    }

    /// Replaces the container's indexing policy (400 for an invalid one, for vector or
    /// full-text indexes off the container's policies, and for changed vector indexes,
    /// which the service fixes at creation). The new index
    /// builds in the background; `container` shows `indexTransformationProgress` and
    /// queries stay correct meanwhile.
    fn set_indexing_policy(
        &self,
        db: &str,
        name: &str,
        policy: crate::store::indexing::IndexingPolicy,
    ) -> Result<ContainerInfo> {
        self.store.set_indexing_policy(db, name, policy)?;
        self.container(db, name)
    }

    /// Ranges with statistics and recent load, and the largest and hottest logical
    /// partitions. `window` is how many seconds of meter history to include.
    fn partitions(
        &self,
        db: &str,
        name: &str,
        top: usize,
        window: u64,
    ) -> Result<PartitionsReport> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let ranges = self.store.ranges_with_stats(&txn, &def)?;
        let (now, _) = meter::current_second();
        let since = now.saturating_sub(window);
        let mut load = Vec::with_capacity(ranges.len());
        for (r, _) in &ranges {
            let samples = self.store.meter_history(&txn, def.rid, r.id, since)?;
            let last = samples
                .iter()
                .find(|s| s.second + 1 == now)
                .map_or(0.0, |s| s.ru);
            load.push(RangeLoad {
                id: r.id.to_string(),
                budget_per_second: charge_round(def.range_budget()),
                ru_last_second: charge_round(last),
                ru_peak: charge_round(samples.iter().map(|s| s.ru).fold(0.0, f64::max)),
                throttled: samples.iter().map(|s| s.throttled).sum(),
                requests: samples.iter().map(|s| s.requests).sum(),
                samples: samples.iter().map(SampleView::from).collect(),
            });
        }
        let (largest, hottest) = self.store.top_logical_partitions(&txn, &def, top)?;
        Ok(PartitionsReport {
            container: def.full_name(),
            partitions: ranges
                .iter()
                .map(|(r, s)| RangeInfo::new(&def, r, s))
                .collect(),
            load,
            window_seconds: window,
            statistics_source: StatisticsSource::Exact,
            largest_logical_partitions: largest
                .iter()
                .map(|l| LogicalPartitionView::new(&def, l))
                .collect(),
            hottest_logical_partitions: hottest
                .iter()
                .map(|l| LogicalPartitionView::new(&def, l))
                .collect(),
        })
    }

    /// Logical partitions of one physical partition in EPK order, read from that range's
    /// statistics only, `limit` per page; pass the last EPK (hex) as `after` for the next.
    fn logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<LogicalPartitionPage> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let r = live_range(&def, range)?;
        let after = after
            .map(|a| {
                epk::Epk::from_hex(a)
                    .ok_or_else(|| Error::bad_request(format!("{a:?} is not an EPK (hex digits)")))
            })
            .transpose()?;
        let limit = limit.max(1);
        let items = self.store.logical_partitions(
            &txn,
            &def,
            &r.min_inclusive,
            &r.max_exclusive,
            after.as_ref(),
            limit,
        )?;
        let next = (items.len() == limit)
            .then(|| items.last().map(|l| l.epk.to_hex()))
            .flatten();
        Ok(LogicalPartitionPage {
            range: range.to_string(),
            logical_partitions: items
                .iter()
                .map(|l| LogicalPartitionView::new(&def, l))
                .collect(),
            next,
        })
    }

    /// The logical partitions of one physical partition, largest first: `skip` then
    /// `limit` of them, from that range's statistics (no item is read). `next` is the skip
    /// for the following page.
    fn largest_logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: &str,
        skip: usize,
        limit: usize,
    ) -> Result<LogicalPartitionPage> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let r = live_range(&def, range)?;
        let limit = limit.max(1);
        let (top, more) = self.store.largest_in_range(
            &txn,
            &def,
            &r.min_inclusive,
            &r.max_exclusive,
            skip + limit,
        )?;
        Ok(LogicalPartitionPage {
            range: range.to_string(),
            logical_partitions: top
                .iter()
                .skip(skip)
                .map(|l| LogicalPartitionView::new(&def, l))
                .collect(),
            next: more.then(|| (skip + limit).to_string()),
        })
    }

    /// A page of `(partition key, id)` pairs of a container in storage order, read from keys
    /// and statistics only (no RU: this is the explorer's own listing, not a service
    /// request). Pass the returned cursor back to continue; `None` means done.
    fn item_keys(
        &self,
        db: &str,
        name: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<KeyPage> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let (keys, last) = self.store.item_keys(&txn, &def, after, limit.max(1))?;
        // Wire form to request form: bare for one-level keys.
        let keys = keys
            .into_iter()
            .map(|(pk, id)| match pk {
                Value::Array(mut a) if a.len() == 1 => (a.pop().unwrap_or(Value::Null), id),
                other => (other, id),
            })
            .collect();
        Ok((keys, last))
    }

    /// A key's EPK and the range that owns it; for a hierarchical prefix, the EPK range it
    /// spans and every range overlapping it.
    fn epk(&self, db: &str, name: &str, pk: &Value) -> Result<EpkInfo> {
        let def = self.def(db, name)?;
        let pkdef = &def.partition_key;
        let components = pkdef.parse_request_prefix(pk)?;
        if components.len() == pkdef.paths.len() {
            let value = pkdef.parse_request_value(pk)?;
            let e = value.epk(pkdef);
            let owner = def.owner(e.as_bytes())?;
            return Ok(EpkInfo {
                partition_key: value.to_display_json(),
                epk: e.to_hex(),
                epk_range: None,
                partitions: vec![owner.id.to_string()],
            });
        }
        let (min, max) = epk::prefix_range(&components, pkdef.paths.len())
            .map_err(|e| Error::bad_request(format!("invalid partition key prefix: {e}")))?;
        let partitions = def
            .ranges
            .iter()
            .filter(|r| r.overlaps(&min, &max))
            .map(|r| r.id.to_string())
            .collect();
        Ok(EpkInfo {
            partition_key: pk.clone(),
            epk: min.to_hex(),
            epk_range: Some((min.to_hex(), max.to_hex())),
            partitions,
        })
    }

    fn create_item(&self, db: &str, name: &str, body: &[u8]) -> Result<ItemResponse> {
        self.write_one(db, name, WriteKind::Create, body, None)
    }

    fn submit_item_write(
        &self,
        db: &str,
        name: &str,
        kind: ItemWriteKind,
        body: &[u8],
        key: Option<&Value>,
        if_match: Option<&str>,
        done: WriteDone,
    ) -> std::result::Result<(), WriteDone> {
        let kind = match kind {
            ItemWriteKind::Create => WriteKind::Create,
            ItemWriteKind::Upsert => WriteKind::Upsert,
            ItemWriteKind::Replace => WriteKind::Replace,
        };
        match charged(item::parse_body(body)) {
            Err(e) => done(Err(e)),
            Ok(doc) => self.group_commit.submit(
                &self.store,
                super::group_commit::Submitted {
                    db: db.to_string(),
                    container: name.to_string(),
                    kind,
                    doc,
                    key: key.cloned(),
                    if_match: if_match.map(str::to_string),
                    done,
                },
            ),
        }
        Ok(())
    }

    fn upsert_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.write_one(db, name, WriteKind::Upsert, body, if_match)
    }

    fn replace_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.write_one(db, name, WriteKind::Replace, body, if_match)
    }

    fn patch_item(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        request: &PatchRequest,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.patch_one(db, name, id, pk, request, if_match)
    }

    fn execute_batch(
        &self,
        db: &str,
        name: &str,
        pk: &Value,
        ops: &[BatchOperation],
    ) -> Result<BatchResponse> {
        self.run_batch(db, name, pk, ops)
    }

    fn read_item(&self, db: &str, name: &str, id: &str, pk: &Value) -> Result<ItemResponse> {
        charged((|| {
            let txn = self.store.read_txn()?;
            let def = self.store.container(&txn, db, name)?;
            let value = def.partition_key.parse_request_value(pk)?;
            let r = self.store.read_item(&txn, &def, id, &value)?;
            Ok(ItemResponse {
                status: StatusCode::Ok,
                etag: item::stored_etag(&r.json),
                body: Some(r.json),
                request_charge: r.request_charge,
                range: r.range.to_string(),
                lsn: None,
            })
        })())
    }

    fn delete_item(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        charged((|| {
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let value = batch.container().partition_key.parse_request_value(pk)?;
            let result = batch.delete(id, &value, if_match)?;
            batch.commit()?;
            Ok(response(result))
        })())
    }

    /// Checks an import file's records (JSON, id, partition key, ttl) without writing.
    fn validate_records(&self, db: &str, name: &str, records: &[import::Record]) -> Result<()> {
        let def = self.def(db, name)?;
        super::import_order::check_records(&def, records).map(|_| ())
    }

    /// Upserts records in batched transactions (each batch is atomic). With throughput
    /// enforcement on, a throttled batch commits what it has, waits the retry-after and
    /// goes on, as the SDKs' bulk mode does. `progress` gets the count written so far.
    fn import_records(
        &self,
        db: &str,
        name: &str,
        records: &[import::Record],
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        let started = std::time::Instant::now();
        let load = (records.len(), IMPORT_BATCH_ITEMS);
        let mut summary = self.bulk_load(db, name, load, || {
            self.import_records_in_batches(db, name, records, IMPORT_BATCH_ITEMS, progress)
        })?;
        // The rate includes building the index at the end.
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Streams every live item of a container (or of one logical partition) to `sink`, in
    /// key order, without holding one read transaction for the whole export.
    fn export(
        &self,
        db: &str,
        name: &str,
        pk: Option<&Value>,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        let def = self.def(db, name)?;
        let (min, max) = match pk {
            Some(pk) => {
                let value = def.partition_key.parse_request_value(pk)?;
                let e = value.epk(&def.partition_key);
                let mut end = e.as_bytes().to_vec();
                end.push(0xFF);
                (e, epk::Epk(end))
            }
            None => (epk::Epk::min(), epk::Epk::max()),
        };
        let mut after: Option<Vec<u8>> = None;
        let (mut count, mut expired) = (0, 0);
        let head_before = {
            let txn = self.store.read_txn()?;
            self.store.feed_head(&txn, &def)?
        };
        loop {
            let (items, last, head) = {
                let txn = self.store.read_txn()?;
                let (items, last) = self.store.scan_items_counted(
                    &txn,
                    &def,
                    &min,
                    &max,
                    after.as_deref(),
                    1000,
                    &mut expired,
                )?;
                let head = match (&last, pk) {
                    (None, None) => Some((
                        self.store.feed_head(&txn, &def)?,
                        self.store.container_stats(&txn, &def)?.counters.items,
                    )),
                    _ => None,
                };
                (items, last, head)
            };
            for it in &items {
                // An export is a copy someone will rely on: an item whose stored text is
                // not JSON (a damaged page) stops it instead of going out as it is.
                if serde_json::from_slice::<serde::de::IgnoredAny>(&it.json).is_err() {
                    return Err(Error::corrupt(format!(
                        "item {:?} in {} (its stored text is not JSON)",
                        it.id,
                        def.full_name()
                    )));
                }
                sink(&it.json)?;
                count += 1;
            }
            match last {
                Some(k) => after = Some(k),
                None => {
                    // A whole container read while nothing was written must add up to its
                    // count: a different number means the walk skipped pages a damaged
                    // file lost, or read garbage as items.
                    if let Some((head, stored)) = head
                        && head == head_before
                        && count + expired != stored
                    {
                        return Err(Error::damaged(format!(
                            "the export of {} read {} items, but the container holds {stored}: \
                             its data file is damaged. `cosmoscope check` reports what can \
                             still be read; restore the directory from a copy",
                            def.full_name(),
                            count + expired
                        )));
                    }
                    return Ok(count);
                }
            }
        }
    }

    /// The stored JSON of up to `limit` items, the first in key order. Keys begin with the
    /// hash of the partition key, so these are spread over the logical partitions. Unmetered:
    /// it is the explorer looking at the data (query completion), not a request.
    fn sample_documents(&self, db: &str, name: &str, limit: usize) -> Result<Vec<Vec<u8>>> {
        let def = self.def(db, name)?;
        let txn = self.store.read_txn()?;
        let (items, _) =
            self.store
                .scan_items(&txn, &def, &epk::Epk::min(), &epk::Epk::max(), None, limit)?;
        Ok(items.into_iter().map(|it| it.json).collect())
    }

    /// Like [`Engine::query`], stopping with 499 when `cancel` becomes true (checked between
    /// documents and ranges).
    fn query_cancellable(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<QueryResult> {
        let q = self.parsed(sql)?;
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let run = || {
            crate::query::run::run(
                &self.store,
                &txn,
                &def,
                sql,
                &q,
                &opts.request(),
                cancel,
                &self.results,
            )
        };
        match self.query_udfs(&txn, &def, sql, &q)? {
            Some(udfs) => crate::query::eval::udf::with_udfs(udfs, run),
            None => run(),
        }
    }

    /// The plan of `sql` on the container's partition key and ranges; it reads no item and
    /// costs nothing.
    fn query_plan(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
    ) -> Result<QueryPlan> {
        let q = self.parsed(sql)?;
        let def = self.def(db, name)?;
        let request = opts.request();
        let plan =
            crate::query::plan::plan(&q, &def, &request.params, request.partition_key.as_ref())?;
        Ok(QueryPlan::new(plan))
    }

    /// A page of the container's change feed.
    fn read_feed(&self, db: &str, name: &str, req: &FeedRequest) -> Result<FeedPage> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let page = self
            .store
            .read_feed(&txn, &def, &req.to_store(&def.full_name())?)?;
        Ok(FeedPage {
            changes: page
                .changes
                .into_iter()
                .map(FeedChange::from_store)
                .collect(),
            continuation: page.continuation,
            request_charge: page.request_charge,
            ranges: page.ranges.iter().map(RangeId::to_string).collect(),
            partition_key: def.partition_key.clone(),
        })
    }

    /// The container's change sequence; it moves on every write, so a follower polls this
    /// and reads the feed only when it changed.
    fn feed_head(&self, db: &str, name: &str) -> Result<u64> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        self.store.feed_head(&txn, &def)
    }

    fn create_script(&self, db: &str, name: &str, script: &ScriptSpec) -> Result<ScriptInfo> {
        self.put_script(db, name, script, false)
    }

    fn replace_script(&self, db: &str, name: &str, script: &ScriptSpec) -> Result<ScriptInfo> {
        self.put_script(db, name, script, true)
    }

    fn read_script(&self, db: &str, name: &str, kind: ScriptKind, id: &str) -> Result<ScriptInfo> {
        self.get_script(db, name, kind, id)
    }

    fn list_scripts(&self, db: &str, name: &str, kind: ScriptKind) -> Result<Vec<ScriptInfo>> {
        self.all_scripts(db, name, kind)
    }

    fn delete_script(&self, db: &str, name: &str, kind: ScriptKind, id: &str) -> Result<()> {
        self.remove_script(db, name, kind, id)
    }

    fn execute_stored_procedure(
        &self,
        db: &str,
        name: &str,
        id: &str,
        request: &SprocRequest,
    ) -> Result<SprocResponse> {
        self.run_stored_procedure(db, name, id, request)
    }

    fn write_item_with_triggers(
        &self,
        db: &str,
        name: &str,
        write: &TriggeredWrite,
    ) -> Result<ItemResponse> {
        self.run_triggered_write(db, name, write)
    }
}

/// The live physical partition `range` (its id) of `def`; 404 when there is none (it split,
/// or never was).
fn live_range<'d>(def: &'d ContainerDef, range: &str) -> Result<&'d PkRange> {
    range
        .parse::<RangeId>()
        .ok()
        .and_then(|id| def.range(id))
        .ok_or_else(|| {
            Error::not_found(format!(
                "container {} has no live partition key range {range}",
                def.full_name()
            ))
        })
}
