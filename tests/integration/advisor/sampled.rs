//! A large container is advised on from one scan and a sample: the scan places every
//! candidate (hierarchical and synthetic included) exactly as the full-copy path does, a
//! sample of every item measures exactly what the full copies measure, and a real sample
//! rescales its queries' loads to what the full data loads.

use cosmoscope::advisor::candidates;
use cosmoscope::advisor::items::Items;
use cosmoscope::advisor::placement::{Limits, Placement};
use cosmoscope::advisor::scan::{ScanPlan, scan};
use cosmoscope::advisor::{self, Advice, AdviseOptions};
use cosmoscope::engine::{Backend, Throughput};
use serde_json::{Value, json};

use super::{container_with, skewed_items};
use crate::support::fixture::{self, DB, Fixture};

/// Small enough that 1,500 items split the ranges several times.
const MAX_PARTITION_BYTES: u64 = 40_000;

/// Candidates of every kind, one under which ids collide (/kind: ids repeat per tenant).
const CANDIDATES: &str =
    "/userId,[/tenant,/userId],[/kind,/userId,/id],/tenant+/kind,/userId suffix 7 buckets,/kind";

#[test]
fn the_scan_places_every_candidate_as_the_full_path_does() {
    let f = fixture::open();
    let throughput = Throughput::Manual(12_000);
    let mut items = skewed_items(1500);
    // Two items sharing an id in different logical partitions of today's key (/id, /n).
    items.push(json!({"id": "item-7", "userId": "u1", "tenant": "t1", "kind": "b", "n": -1}));
    container_with(
        &f,
        "source",
        &["/id", "/n"],
        throughput,
        Some(MAX_PARTITION_BYTES),
        &items,
    );
    let key = f.engine.container(DB, "source").unwrap().partition_key;
    let limits = Limits {
        throughput,
        max_partition_bytes: MAX_PARTITION_BYTES,
        max_logical_partition_bytes: 20 << 30,
    };
    let list = candidates::parse_list(CANDIDATES).unwrap();
    let plan = ScanPlan {
        candidates: &list,
        paths: vec!["/userId".into(), "/missing".into()],
        counted: vec!["/userId".into()],
        sample_rate: 1.0,
    };
    let found = scan(&f.engine, (DB, "source"), &key, &plan, &limits, &mut |_| {
        true
    })
    .unwrap();
    let all = Items::load(&f.engine, DB, "source", &key, &mut |_| {}).unwrap();
    assert_eq!(found.items, all.len() as u64);
    assert_eq!(found.bytes, all.total_bytes());
    assert_eq!(
        found.sample.docs, all.docs,
        "a sample at rate 1 is every item"
    );
    assert!(found.present.contains("/userId") && !found.present.contains("/missing"));
    // u1 is i = 143 + 200k (7 of them), and the added item.
    assert_eq!(found.count("/userId", &json!("u1")), 8);
    for (cand, scanned) in list.iter().zip(&found.placements) {
        let full = Placement::compute(cand, &all, &limits).unwrap();
        assert!(
            full.ranges.len() > 2,
            "{cand}: the data should split ranges"
        );
        assert_eq!(scanned.ranges, full.ranges, "{cand}");
        assert_eq!(scanned.cardinality, full.cardinality, "{cand}");
        assert_eq!(scanned.id_collisions, full.id_collisions, "{cand}");
        assert_eq!(scanned.storage_skew(), full.storage_skew(), "{cand}");
        let logical = |p: &Placement| -> Vec<(Vec<u8>, Value, u64, u64, usize)> {
            p.logical
                .iter()
                .map(|l| (l.epk.clone(), l.value.clone(), l.items, l.bytes, l.range))
                .collect()
        };
        assert_eq!(logical(scanned), logical(&full), "{cand}");
    }
    let kind = &found.placements[5];
    assert_eq!(kind.id_collisions, 1, "item-7 twice under /kind = 'b'");
    assert_eq!(kind.cardinality[0].distinct, 3);
    assert_eq!(found.placements[1].cardinality.len(), 2, "per level");
}

/// Items of one size: every user (100) holds `n / 100` of them, so any user's query loads
/// what any other's does, and a draw from a sample costs what a draw from all costs.
fn even_items(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let kind = ["a", "b", "c", "d"][i % 4];
            json!({
                "id": format!("item-{i:05}"),
                "userId": format!("u{:03}", (i * 7) % 100),
                "tenant": format!("t{:02}", i % 40),
                "kind": kind,
                "note": "x".repeat(60),
            })
        })
        .collect()
}

const WORKLOAD: &str = r#"
[[operations]]
id = "byUser"
weight = 5
query = "SELECT * FROM c WHERE c.userId = @u"
params = { u = "/userId" }

[[operations]]
id = "byTenantKind"
weight = 2
query = "SELECT c.id FROM c WHERE c.tenant = @t AND c.kind = @k"
params = { t = "/tenant", k = "/kind" }

[[operations]]
id = "scan"
weight = 1
query = "SELECT VALUE COUNT(1) FROM c WHERE UPPER(c.kind) = 'A'"

[[operations]]
id = "read"
weight = 2
read = true

[[operations]]
id = "write"
weight = 2
create = true

[[operations]]
id = "replace"
weight = 1
replace = true
"#;

fn advise(f: &Fixture, sample: Option<usize>, candidates: &str) -> Advice {
    let file = f.dir.path().join("workload.toml");
    std::fs::write(&file, WORKLOAD).unwrap();
    let opts = AdviseOptions {
        workload: Some(file.to_string_lossy().into_owned()),
        candidates: Some(candidates.into()),
        iterations: 6,
        sample,
        ..AdviseOptions::new(DB, "c")
    };
    advisor::advise(&f.engine, &opts, &mut |_| true).unwrap()
}

/// Placement figures, which the scan measures exactly on any sample.
fn placed(a: &advisor::Assessment) -> Value {
    let f = &a.figures;
    json!({
        "cardinality": f.cardinality,
        "logical": f.logical_partitions,
        "largest": f.largest_logical_partition,
        "ranges": f.ranges.iter().map(|r| &r.data).collect::<Vec<_>>(),
        "storageSkew": f.storage_skew,
        "collisions": f.id_collisions,
    })
}

#[test]
fn a_sample_of_every_item_measures_what_the_full_copies_measure() {
    let f = fixture::open();
    container_with(
        &f,
        "c",
        &["/id"],
        Throughput::Manual(24_000),
        None,
        &skewed_items(600),
    );
    let list = "/userId,[/tenant,/userId],/userId+/kind,/kind suffix 5 buckets";
    let full = advise(&f, None, list);
    // A sample rate of 1 or more keeps every item: the scan-and-sample path on all of them.
    let sampled = advise(&f, Some(10_000), list);
    assert!(
        sampled.notes[0].contains("sample of 600 items (600 drawn evenly"),
        "{:?}",
        sampled.notes
    );
    for (a, b) in full.candidates.iter().zip(&sampled.candidates) {
        assert_eq!(a.key, b.key);
        assert_eq!(placed(a), placed(b), "{}", a.key);
        // The workload's figures too: the same copies, the same draws, nothing rescaled.
        let load = |x: &advisor::Assessment| {
            json!({
                "patterns": x.figures.patterns,
                "ranges": x.figures.ranges,
                "writeSkew": x.figures.write_skew,
                "hotKey": x.figures.hottest_key_write_share,
                "ruPerSecond": x.figures.ru_per_second,
                "verdict": x.verdict,
            })
        };
        assert_eq!(load(a), load(b), "{}", a.key);
    }
}

#[test]
fn a_sample_rescales_its_queries_to_the_full_data() {
    let f = fixture::open();
    container_with(
        &f,
        "c",
        &["/id"],
        Throughput::Manual(24_000),
        None,
        &even_items(2000),
    );
    let list = "/userId,/tenant,[/kind,/userId]";
    let full = advise(&f, None, list);
    let sampled = advise(&f, Some(300), list);
    let note = &sampled.notes[0];
    assert!(note.contains("all 2000 items"), "{note}");
    let order = |a: &Advice| {
        a.candidates
            .iter()
            .map(|c| c.key.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(order(&sampled), order(&full));
    for (a, b) in full.candidates.iter().zip(&sampled.candidates) {
        assert_eq!(placed(a), placed(b), "{}", a.key);
        for (p, q) in a.figures.patterns.iter().zip(&b.figures.patterns) {
            assert_eq!(
                (&p.id, &p.routing, p.ranges_touched, p.requests),
                (&q.id, &q.routing, q.ranges_touched, q.requests),
                "{}",
                a.key
            );
            // Every item is the same size and every user and (tenant, kind) holds as many,
            // and each query's groups are in the sample: the same charge. The bound is the
            // output bytes a COUNT keeps as measured (a smaller number on the sample) and
            // rounding per range.
            assert!(
                (p.request_charge - q.request_charge).abs() <= 0.05,
                "{} {}: full {} sampled {}",
                a.key,
                p.id,
                p.request_charge,
                q.request_charge
            );
        }
    }
}

/// Container `c` (400 RU/s) holding `n` [`even_items`], and options to advise on it with
/// [`WORKLOAD`] on a sample of about `sample` items.
fn sampled_setup(n: usize, sample: usize) -> (Fixture, AdviseOptions) {
    let f = fixture::open();
    container_with(
        &f,
        "c",
        &["/id"],
        Throughput::Manual(400),
        None,
        &even_items(n),
    );
    let file = f.dir.path().join("workload.toml");
    std::fs::write(&file, WORKLOAD).unwrap();
    let opts = AdviseOptions {
        workload: Some(file.to_string_lossy().into_owned()),
        sample: Some(sample),
        ..AdviseOptions::new(DB, "c")
    };
    (f, opts)
}

#[test]
fn a_sampled_advice_cancelled_while_scanning_or_replaying_leaves_no_copy() {
    let (f, opts) = sampled_setup(300, 50);
    for stop_at in ["reading", "replaying"] {
        let opts = AdviseOptions {
            candidates: Some("/userId".into()),
            ..opts.clone()
        };
        let e = advisor::advise(&f.engine, &opts, &mut |p| match p {
            advisor::Progress::Reading { .. } => stop_at != "reading",
            advisor::Progress::Replaying { .. } => stop_at != "replaying",
            _ => true,
        })
        .unwrap_err();
        assert_eq!(e.status, 499, "{stop_at}");
        let dbs: Vec<String> = f
            .engine
            .list_databases()
            .unwrap()
            .into_iter()
            .map(|d| d.id)
            .collect();
        assert_eq!(dbs, [DB], "{stop_at}");
    }
}

#[test]
fn a_key_the_service_refuses_stops_the_scan_with_its_reason() {
    let f = fixture::open();
    let items: Vec<Value> = (0..2000)
        .map(|i| json!({"id": format!("i{i}"), "shape": {"sides": i % 5}}))
        .collect();
    container_with(&f, "c", &["/id"], Throughput::Manual(400), None, &items);
    let opts = AdviseOptions {
        candidates: Some("/shape".into()),
        sample: Some(100),
        ..AdviseOptions::new(DB, "c")
    };
    let e = advisor::advise(&f.engine, &opts, &mut |_| true).unwrap_err();
    assert_eq!(e.status, 400, "{e}");
    // The first item the scan met (in the container's order) names the problem.
    assert!(e.message.starts_with("candidate /shape: item i"), "{e}");
    assert!(e.message.contains("not an object or array"), "{e}");
    assert_eq!(f.engine.list_databases().unwrap().len(), 1);
}

#[test]
fn a_sampled_advice_proposes_candidates_and_places_them_by_a_second_scan() {
    let (f, opts) = sampled_setup(1000, 200);
    let opts = AdviseOptions {
        iterations: 3,
        ..opts
    };
    let mut scans = 0;
    let advice = advisor::advise(&f.engine, &opts, &mut |p| {
        scans += usize::from(matches!(p, advisor::Progress::Reading { done: 1000, .. }));
        true
    })
    .unwrap();
    let mut keys: Vec<&str> = advice.candidates.iter().map(|a| a.key.as_str()).collect();
    keys.sort();
    // userId (100 values) is what byUser binds; tenant (40) is too few values to propose.
    assert_eq!(keys, ["/id", "/userId"]);
    assert_eq!(scans, 2, "one scan for today's key, one for the proposals");
    let user = advice
        .candidates
        .iter()
        .find(|a| a.key == "/userId")
        .unwrap();
    assert_eq!(user.figures.cardinality[0].distinct, 100, "from every item");
    assert!(
        advice
            .notes
            .iter()
            .any(|n| n.contains("proposed from the sample"))
    );
}
