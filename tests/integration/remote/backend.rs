//! The RemoteBackend's operations against the gateway, checked against the embedded
//! engine answering the same request.

use std::collections::BTreeSet;

use cosmoscope::engine::remote::{RemoteBackend, RemoteConfig, Secret};
use cosmoscope::engine::{
    Backend, ContainerSettings, FeedRequest, FeedStart, LogicalPartitionView, QueryOptions,
    QueryResult, RangeInfo, StatisticsSource, Throughput,
};
use cosmoscope::error::StatusCode;
use serde_json::{Value, json};

use super::{C, DB, RANGES, remote, server_with};

/// Every page of `sql` on `b`, documents in order, and the pages' results.
fn all_pages(b: &dyn Backend, sql: &str, max_items: usize) -> (Vec<Value>, Vec<QueryResult>) {
    let mut opts = QueryOptions {
        max_items: Some(max_items),
        ..QueryOptions::default()
    };
    let mut docs = Vec::new();
    let mut pages = Vec::new();
    loop {
        let page = b
            .query(DB, C, sql, &opts)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        docs.extend(page.documents.iter().map(|d| d.value().clone()));
        let next = page.continuation.clone();
        pages.push(page);
        match next {
            Some(c) => opts.continuation = Some(c),
            None => return (docs, pages),
        }
    }
}

/// Documents without the system properties a second read changes nothing in.
fn strip(docs: Vec<Value>) -> Vec<Value> {
    docs.into_iter()
        .map(|mut d| {
            if let Value::Object(o) = &mut d {
                o.remove("_lsn");
            }
            d
        })
        .collect()
}

#[test]
fn lists_the_tree_with_ranges_and_epk_bounds() {
    let server = server_with(24);
    let r = remote(&server, false);
    let dbs = r.list_databases().unwrap();
    let shop = dbs
        .iter()
        .find(|d| d.id == DB)
        .expect("the database is listed");
    assert_eq!(shop.container_count, 1);
    let listed = r.list_containers(Some(DB)).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].partition_count, RANGES);
    let info = r.container(DB, C).unwrap();
    assert_eq!(info.throughput.manual, Some(18_000));
    assert_eq!(info.partition_key.paths, vec!["/pk".to_string()]);
    assert_eq!(info.statistics.item_count, 24);
    let local = server.engine.partition_key_ranges(DB, C).unwrap();
    assert_eq!(r.partition_key_ranges(DB, C).unwrap(), local);
    let drawn: Vec<(String, String)> = info
        .partitions
        .unwrap()
        .iter()
        .map(|p| (p.min_inclusive.clone(), p.max_exclusive.clone()))
        .collect();
    let expected: Vec<(String, String)> = local
        .iter()
        .map(|p| (p.min_inclusive.clone(), p.max_exclusive.clone()))
        .collect();
    assert_eq!(drawn, expected);
    // The EPK is hashed by the client and placed on the account's ranges.
    let e = r.epk(DB, C, &json!("c3")).unwrap();
    let l = server.engine.epk(DB, C, &json!("c3")).unwrap();
    assert_eq!((e.epk, e.partitions), (l.epk, l.partitions));
    // What the service cannot report is a capability, and asking anyway is a clear error.
    let caps = r.capabilities();
    assert!(!caps.partition_statistics && !caps.metering && !caps.writes);
    let err = r.logical_partitions(DB, C, "0", None, 10).unwrap_err();
    assert!(
        err.message.contains("not available on a remote account"),
        "{err}"
    );
}

/// The service's partition statistics, read through the gateway: each range's count and
/// storage and the largest logical partitions are the engine's own (sizes in whole KB).
#[test]
fn per_range_counts_storage_and_the_largest_keys_come_from_the_services_statistics() {
    let server = server_with(48);
    let r = remote(&server, false);
    assert_eq!(r.capabilities().range_statistics, StatisticsSource::Sampled);
    let report = r.partitions(DB, C, 5, 0).unwrap();
    let local = server.engine.partitions(DB, C, 5, 0).unwrap();
    assert_eq!(report.statistics_source, StatisticsSource::Sampled);
    let kb = |bytes: u64| bytes.div_ceil(1024) * 1024;
    let counts = |p: &[RangeInfo]| -> Vec<(String, u64, u64)> {
        p.iter()
            .map(|r| {
                (
                    r.id.clone(),
                    r.statistics.item_count,
                    kb(r.statistics.size_bytes),
                )
            })
            .collect()
    };
    assert_eq!(counts(&report.partitions), counts(&local.partitions));
    assert_eq!(
        report
            .partitions
            .iter()
            .map(|r| r.statistics.item_count)
            .sum::<u64>(),
        48
    );
    assert!(report.partitions.iter().all(|r| r.storage_fraction > 0.0));
    // The largest logical partitions: the engine's, by key, EPK, range and size.
    let keys = |l: &[LogicalPartitionView]| -> BTreeSet<String> {
        l.iter()
            .map(|l| {
                format!(
                    "{} {} {} {}",
                    l.partition_key,
                    l.epk,
                    l.range,
                    kb(l.statistics.size_bytes)
                )
            })
            .collect()
    };
    assert_eq!(report.largest_logical_partitions.len(), 5);
    let all_local: Vec<LogicalPartitionView> = local
        .partitions
        .iter()
        .flat_map(|p| {
            server
                .engine
                .largest_logical_partitions(DB, C, &p.id, 0, 3)
                .unwrap()
                .logical_partitions
        })
        .collect();
    assert!(
        keys(&report.largest_logical_partitions).is_subset(&keys(&all_local)),
        "{:?}",
        report.largest_logical_partitions
    );
    assert!(
        report.hottest_logical_partitions.is_empty(),
        "no RU per key"
    );
    // One range's sampled keys, paged.
    let range = &local.partitions[0].id;
    let page = r.largest_logical_partitions(DB, C, range, 0, 2).unwrap();
    let want = server
        .engine
        .largest_logical_partitions(DB, C, range, 0, 2)
        .unwrap();
    assert_eq!(
        keys(&page.logical_partitions),
        keys(&want.logical_partitions)
    );
    assert_eq!(page.next.as_deref(), Some("2"));
    // `container show` carries the same per-range figures.
    let info = r.container(DB, C).unwrap();
    assert_eq!(info.statistics_source, StatisticsSource::Sampled);
    assert_eq!(counts(&info.partitions.unwrap()), counts(&local.partitions));
}

/// A hierarchical key's sampled logical partitions come back as the engine's: the key's
/// levels as an array, hashed to the same EPK.
#[test]
fn hierarchical_keys_in_the_statistics_keep_their_levels_and_epks() {
    let server = server_with(0);
    let mut settings = ContainerSettings::new(vec!["/t".into(), "/u".into()]);
    settings.throughput = Throughput::Manual(12_000);
    server
        .engine
        .create_container(DB, "people", settings)
        .unwrap();
    for i in 0..30 {
        let doc = json!({"id": format!("p{i}"), "t": format!("t{}", i % 3), "u": i % 4});
        server
            .engine
            .upsert_item(DB, "people", doc.to_string().as_bytes(), None)
            .unwrap();
    }
    let r = remote(&server, false);
    let got = r.partitions(DB, "people", 4, 0).unwrap();
    let want = server.engine.partitions(DB, "people", 4, 0).unwrap();
    let key_and_epk = |l: &LogicalPartitionView| (l.partition_key.clone(), l.epk.clone());
    for l in &got.largest_logical_partitions {
        assert!(l.partition_key.is_array(), "{l:?}");
        let engine_side = server
            .engine
            .largest_logical_partitions(DB, "people", &l.range, 0, 3)
            .unwrap();
        assert!(
            engine_side
                .logical_partitions
                .iter()
                .any(|e| key_and_epk(e) == key_and_epk(l)),
            "{l:?} not among {engine_side:?}"
        );
    }
    assert_eq!(got.largest_logical_partitions.len(), 4);
    assert_eq!(
        got.partitions
            .iter()
            .map(|p| p.statistics.item_count)
            .sum::<u64>(),
        want.partitions
            .iter()
            .map(|p| p.statistics.item_count)
            .sum::<u64>()
    );
}

#[test]
fn item_crud_carries_the_charges_etags_and_conditions() {
    let server = server_with(0);
    let r = remote(&server, true);
    let body = json!({"id": "a", "pk": "c1", "n": 1}).to_string();
    let created = r.create_item(DB, C, body.as_bytes()).unwrap();
    assert_eq!(created.status, StatusCode::Created);
    assert!(created.request_charge > 0.0);
    let etag = created.etag.clone().expect("an etag");
    assert!(!created.range.is_empty());
    let dup = r.create_item(DB, C, body.as_bytes()).unwrap_err();
    assert_eq!(dup.status, StatusCode::Conflict);
    // The remote read costs what the engine charges for the same read.
    let read = r.read_item(DB, C, "a", &json!("c1")).unwrap();
    let local = server.engine.read_item(DB, C, "a", &json!("c1")).unwrap();
    assert_eq!(read.request_charge, local.request_charge);
    assert_eq!(read.etag.as_deref(), Some(etag.as_str()));
    let doc: Value = serde_json::from_slice(&read.body.unwrap()).unwrap();
    assert_eq!(doc["n"], 1);
    // If-Match: a stale etag is refused, the current one passes.
    let changed = json!({"id": "a", "pk": "c1", "n": 2}).to_string();
    let stale = r
        .replace_item(DB, C, changed.as_bytes(), Some("\"stale\""))
        .unwrap_err();
    assert_eq!(stale.status, StatusCode::PreconditionFailed);
    let replaced = r
        .replace_item(DB, C, changed.as_bytes(), Some(&etag))
        .unwrap();
    assert_eq!(replaced.status, StatusCode::Ok);
    assert_ne!(replaced.etag.as_deref(), Some(etag.as_str()));
    let deleted = r.delete_item(DB, C, "a", &json!("c1"), None).unwrap();
    assert_eq!(deleted.status, StatusCode::NoContent);
    assert!(deleted.request_charge > 0.0);
    let gone = r.read_item(DB, C, "a", &json!("c1")).unwrap_err();
    assert_eq!(gone.status, StatusCode::NotFound);
}

#[test]
fn a_read_only_session_refuses_writes_naming_the_flag() {
    let server = server_with(0);
    let r = remote(&server, false);
    let body = json!({"id": "a", "pk": "c1"}).to_string();
    let e = r.create_item(DB, C, body.as_bytes()).unwrap_err();
    assert_eq!(e.status, StatusCode::Forbidden);
    assert!(e.message.contains("--read-write"), "{e}");
    assert!(r.delete_container(DB, C).is_err());
    assert!(
        r.set_throughput(DB, C, Throughput::Manual(400))
            .unwrap_err()
            .message
            .contains("--read-write")
    );
    // Nothing reached the account.
    let local = server.engine.read_item(DB, C, "a", &json!("c1"));
    assert_eq!(local.unwrap_err().status, StatusCode::NotFound);
    assert_eq!(
        server.engine.container(DB, C).unwrap().throughput.manual,
        Some(18_000)
    );
}

/// Writes turned on for the session (as the explorer does after asking) go through, from
/// any thread holding the backend; turned off again, they are refused before sending.
#[test]
fn writes_switched_on_for_the_session_go_through_and_off_again_are_refused() {
    let server = server_with(0);
    let r = std::sync::Arc::new(remote(&server, false));
    assert!(r.capabilities().write_switch);
    assert_eq!(r.account().as_deref(), Some(r.endpoint()));
    let body = json!({"id": "a", "pk": "c1"}).to_string();
    assert_eq!(
        r.create_item(DB, C, body.as_bytes()).unwrap_err().status,
        StatusCode::Forbidden
    );
    let other = r.clone();
    std::thread::spawn(move || other.set_writes(true).unwrap())
        .join()
        .unwrap();
    assert!(r.capabilities().writes);
    let created = std::thread::scope(|s| {
        s.spawn(|| r.create_item(DB, C, body.as_bytes()))
            .join()
            .unwrap()
    })
    .unwrap();
    assert_eq!(created.status, StatusCode::Created);
    r.set_writes(false).unwrap();
    assert!(!r.capabilities().writes);
    let e = r.delete_item(DB, C, "a", &json!("c1"), None).unwrap_err();
    assert_eq!(e.status, StatusCode::Forbidden);
    assert!(server.engine.read_item(DB, C, "a", &json!("c1")).is_ok());
}

#[test]
fn a_wrong_key_is_a_401_that_never_shows_the_key() {
    let server = server_with(0);
    let key = "c2VjcmV0LWtleS10aGF0LWlzLWxvbmctZW5vdWdoLWZvci1obWFjLXNpZ25pbmc=";
    let config = RemoteConfig::new(&server.base, &Secret::new(key)).unwrap();
    let r = RemoteBackend::connect(&config).unwrap();
    let e = r.list_databases().unwrap_err();
    assert_eq!(e.status, StatusCode::Unauthorized);
    assert!(e.message.contains("check the key"), "{e}");
    let shown = format!("{e} {e:?} {} {r:?} {config:?}", e.to_json());
    assert!(!shown.contains(key), "{shown}");
}

#[test]
fn index_metrics_are_asked_of_the_account_only_when_the_query_asks() {
    let server = server_with(30);
    let r = remote(&server, false);
    let sql = "SELECT * FROM c WHERE c.team = 'red'";
    let run = |b: &dyn Backend, index_metrics: bool| {
        let opts = QueryOptions {
            max_items: Some(1000),
            index_metrics,
            ..QueryOptions::default()
        };
        b.query(DB, C, sql, &opts).unwrap()
    };
    let unasked = run(&r, false);
    assert_eq!(unasked.documents.len(), 10);
    assert_eq!(unasked.index_metrics, None, "the account was not asked");
    // Asked, the account's header comes back as the engine answering it reports them.
    let asked = run(&r, true).index_metrics.expect("the account sends them");
    let local = run(&*server.engine, true).index_metrics.expect("asked for");
    assert_eq!(asked, local);
    assert_eq!(asked.utilized_single_indexes[0].index_spec, "/team/?");
}

#[test]
fn a_cross_partition_query_runs_range_by_range() {
    let server = server_with(60);
    let r = remote(&server, false);
    let sql = "SELECT * FROM c WHERE c.n >= 0";
    let page = r
        .query(
            DB,
            C,
            sql,
            &QueryOptions {
                max_items: Some(1000),
                ..QueryOptions::default()
            },
        )
        .unwrap();
    assert_eq!(page.documents.len(), 60);
    assert_eq!(page.routing.kind, "fan-out");
    assert!(
        page.routing
            .reason
            .contains("the local planner routes it the same way"),
        "{}",
        page.routing.reason
    );
    assert_eq!(page.partitions.len(), RANGES, "every range contacted");
    let summed: f64 = page.partitions.iter().map(|p| p.request_charge).sum();
    assert!((page.request_charge - summed).abs() < 0.01, "{page:?}");
    assert!(page.partitions.iter().all(|p| p.request_charge > 0.0));
    // Which ranges returned results, and for which logical partitions: as the engine says.
    let local = server
        .engine
        .query(
            DB,
            C,
            sql,
            &QueryOptions {
                max_items: Some(1000),
                ..QueryOptions::default()
            },
        )
        .unwrap();
    let keys = |q: &QueryResult| -> BTreeSet<(String, String)> {
        q.partitions
            .iter()
            .flat_map(|p| {
                p.logical_partitions
                    .iter()
                    .map(|k| (p.id.to_string(), k.to_string()))
            })
            .collect()
    };
    assert_eq!(keys(&page), keys(&local));
    assert!(page.metrics.retrieved_document_count >= 60);
    // Paged: every item exactly once.
    let (docs, pages) = all_pages(&r, sql, 7);
    let ids: BTreeSet<String> = docs.iter().map(|d| d["id"].to_string()).collect();
    assert_eq!((docs.len(), ids.len()), (60, 60));
    assert!(pages.len() >= 9);
    // A key in the filter: the plan targets one range.
    let one = r
        .query(
            DB,
            C,
            "SELECT * FROM c WHERE c.pk = 'c5'",
            &QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(one.routing.kind, "targeted");
    assert!(
        one.routing.reason.contains("same way"),
        "{}",
        one.routing.reason
    );
    assert_eq!(one.partitions.len(), 1);
    assert_eq!(one.documents.len(), 5);
    // With the key given, the account serves it whole.
    let keyed = r
        .query(
            DB,
            C,
            "SELECT VALUE COUNT(1) FROM c",
            &QueryOptions {
                partition_key: Some(json!("c5")),
                ..QueryOptions::default()
            },
        )
        .unwrap();
    assert_eq!(keyed.routing.kind, "single-partition");
    assert_eq!(keyed.documents[0].value(), &json!(5));
}

#[test]
fn merging_queries_equal_the_engines_results() {
    let server = server_with(45);
    let r = remote(&server, false);
    let ordered = [
        "SELECT * FROM c ORDER BY c.n DESC",
        "SELECT c.id, c.n FROM c ORDER BY c.n",
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT VALUE SUM(c.n) FROM c",
        "SELECT VALUE AVG(c.n) FROM c",
        "SELECT VALUE MIN(c.n) FROM c WHERE c.n > 10",
        "SELECT VALUE MAX(c.team) FROM c",
        "SELECT COUNT(1) AS n, SUM(c.n) AS total FROM c",
        "SELECT * FROM c ORDER BY c.n OFFSET 5 LIMIT 10",
        "SELECT TOP 4 * FROM c ORDER BY c.n DESC",
        "SELECT DISTINCT VALUE c.team FROM c ORDER BY c.team",
    ];
    for sql in ordered {
        let (remote_docs, pages) = all_pages(&r, sql, 8);
        let (local_docs, _) = all_pages(&*server.engine, sql, 1000);
        assert_eq!(strip(remote_docs), strip(local_docs), "{sql}");
        assert!(
            pages[0].request_charge > 0.0,
            "{sql}: the first page carries the charge"
        );
        assert_eq!(pages[0].partitions.len(), RANGES, "{sql}");
    }
    // Grouped and distinct results have no order of their own: compared as sets.
    for sql in [
        "SELECT c.team, COUNT(1) AS n, MAX(c.n) AS highest FROM c GROUP BY c.team",
        "SELECT DISTINCT c.team FROM c",
    ] {
        let set =
            |docs: Vec<Value>| -> BTreeSet<String> { docs.iter().map(|d| d.to_string()).collect() };
        let (remote_docs, _) = all_pages(&r, sql, 100);
        let (local_docs, _) = all_pages(&*server.engine, sql, 1000);
        assert_eq!(remote_docs.len(), local_docs.len(), "{sql}");
        assert_eq!(set(remote_docs), set(local_docs), "{sql}");
    }
}

#[test]
fn the_change_feed_drains_per_range_and_follows_new_writes() {
    let server = server_with(30);
    let r = remote(&server, false);
    let mut req = FeedRequest {
        max_items: 7,
        ..FeedRequest::default()
    };
    let mut seen = BTreeSet::new();
    let mut ranges = BTreeSet::new();
    let mut charge = 0.0;
    loop {
        let page = r.read_feed(DB, C, &req).unwrap();
        charge += page.request_charge;
        ranges.extend(page.ranges.iter().cloned());
        for ch in &page.changes {
            assert!(seen.insert(ch.id.clone()), "{} delivered twice", ch.id);
        }
        req.start = FeedStart::Continuation(page.continuation.clone());
        if page.changes.is_empty() {
            break;
        }
    }
    assert_eq!(seen.len(), 30);
    assert_eq!(ranges.len(), RANGES);
    assert!(charge > 0.0);
    // Caught up: nothing new (every range answered 304), the position kept.
    let idle = r.read_feed(DB, C, &req).unwrap();
    assert!(idle.changes.is_empty());
    // New writes in another client show up from the saved continuation, and only they.
    for i in 0..4 {
        let doc = json!({"id": format!("new{i}"), "pk": format!("c{i}"), "n": 100 + i});
        server
            .engine
            .upsert_item(DB, C, doc.to_string().as_bytes(), None)
            .unwrap();
    }
    req.start = FeedStart::Continuation(idle.continuation);
    req.max_items = 100;
    let page = r.read_feed(DB, C, &req).unwrap();
    let ids: BTreeSet<String> = page.changes.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids, (0..4).map(|i| format!("new{i}")).collect());
    assert_eq!(
        page.changes[0].partition_key(),
        json!([page.changes[0].current.as_ref().unwrap().value()["pk"]])
    );
    // From now: nothing of the past.
    let now = r
        .read_feed(
            DB,
            C,
            &FeedRequest {
                start: FeedStart::Now,
                ..FeedRequest::default()
            },
        )
        .unwrap();
    assert!(now.changes.is_empty());
}

#[test]
fn a_split_mid_query_and_mid_feed_loses_nothing() {
    let server = server_with(48);
    let r = remote(&server, false);
    // First pages before the split.
    let sql = "SELECT * FROM c";
    let mut opts = QueryOptions {
        max_items: Some(5),
        ..QueryOptions::default()
    };
    let first = r.query(DB, C, sql, &opts).unwrap();
    let mut ids: Vec<String> = first
        .documents
        .iter()
        .map(|d| d.value()["id"].to_string())
        .collect();
    let mut feed = FeedRequest {
        max_items: 5,
        ..FeedRequest::default()
    };
    let page = r.read_feed(DB, C, &feed).unwrap();
    let mut changes: Vec<String> = page.changes.iter().map(|c| c.id.clone()).collect();
    feed.start = FeedStart::Continuation(page.continuation);
    // Raising throughput past ranges × 10,000 RU/s splits every range.
    server
        .engine
        .set_throughput(DB, C, Throughput::Manual(60_000))
        .unwrap();
    assert!(server.engine.partition_key_ranges(DB, C).unwrap().len() > RANGES);
    opts.continuation = first.continuation;
    loop {
        let page = r.query(DB, C, sql, &opts).unwrap();
        ids.extend(page.documents.iter().map(|d| d.value()["id"].to_string()));
        match page.continuation {
            Some(c) => opts.continuation = Some(c),
            None => break,
        }
    }
    let unique: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(
        (ids.len(), unique.len()),
        (48, 48),
        "every item once across the split"
    );
    loop {
        let page = r.read_feed(DB, C, &feed).unwrap();
        if page.changes.is_empty() {
            break;
        }
        changes.extend(page.changes.iter().map(|c| c.id.clone()));
        feed.start = FeedStart::Continuation(page.continuation);
    }
    let unique: BTreeSet<&String> = changes.iter().collect();
    assert_eq!(
        (changes.len(), unique.len()),
        (48, 48),
        "every change once across the split"
    );
}
