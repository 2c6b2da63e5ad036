//! Transactional batch through the engine: all-or-nothing on failure (the failing operation's
//! own status, 424 for the rest, nothing written, nothing in the feed), one `_ts` and one
//! commit on success, reads that see the batch's own writes, one logical partition only,
//! the service's limits, If-Match, and charges that add up.

use cosmoscope::engine::{
    Backend, BatchOperation, BatchResponse, OperationType, PatchOperation, PatchRequest,
};
use cosmoscope::engine::{FeedMode, FeedOp};
use serde_json::{Value, json};

use crate::support::fixture::*;

const C: &str = "posts";

fn fixture() -> Fixture {
    let fx = open();
    fx.pk_container(C);
    fx
}

fn run(fx: &Fixture, pk: &str, ops: &[BatchOperation]) -> BatchResponse {
    fx.engine
        .execute_batch(DB, C, &json!(pk), ops)
        .unwrap_or_else(|e| panic!("batch could not run: {e}"))
}

fn incr(path: &str, by: i64) -> PatchRequest {
    PatchRequest::new(vec![PatchOperation::Incr {
        path: path.into(),
        value: by.into(),
    }])
}

fn statuses(r: &BatchResponse) -> Vec<u16> {
    r.results.iter().map(|r| r.status_code.as_u16()).collect()
}

#[test]
fn a_failing_fifth_operation_leaves_nothing_written() {
    let fx = fixture();
    let post = fx.create(C, &json!({"id": "post", "pk": "p", "commentCount": 0}));
    fx.create(C, &json!({"id": "dup", "pk": "p"}));
    let feed_before = fx.drain_feed(C, FeedMode::AllVersions).len();
    let stats_before = container_counts(&fx.engine, C);

    let r = run(
        &fx,
        "p",
        &[
            BatchOperation::create(json!({"id": "a", "pk": "p"})),
            BatchOperation::upsert(json!({"id": "b", "pk": "p"})),
            BatchOperation::patch("post", &incr("/commentCount", 1)),
            BatchOperation::delete("dup"),
            BatchOperation::create(json!({"id": "post", "pk": "p"})), // 409
            BatchOperation::create(json!({"id": "never", "pk": "p"})),
        ],
    );

    assert!(!r.is_success());
    assert_eq!(r.status_code, 409, "the batch reports the failing status");
    assert_eq!(statuses(&r), [424, 424, 424, 424, 409, 424]);
    let failure = r.failure.as_ref().expect("a failure");
    assert_eq!(failure.index, 4);
    assert_eq!(failure.error.status, 409);
    assert!(
        r.results[4]
            .message
            .as_deref()
            .unwrap()
            .contains("already exists")
    );
    assert!(
        r.results
            .iter()
            .all(|x| x.resource_body.is_none() && x.etag.is_none())
    );

    for id in ["a", "b", "never"] {
        assert_eq!(
            err(fx.engine.read_item(DB, C, id, &json!("p"))).status,
            404,
            "{id}"
        );
    }
    assert_eq!(
        fx.read(C, "dup", &json!("p")).status,
        200,
        "the delete was rolled back"
    );
    let after = fx.read(C, "post", &json!("p"));
    assert_eq!(body(&after)["commentCount"], 0, "the patch was rolled back");
    assert_eq!(after.etag, post.etag);
    assert_eq!(
        fx.drain_feed(C, FeedMode::AllVersions).len(),
        feed_before,
        "the feed got nothing"
    );
    assert_eq!(container_counts(&fx.engine, C), stats_before);
}

#[test]
fn a_committed_batch_applies_every_operation_with_one_timestamp() {
    let fx = fixture();
    fx.create(C, &json!({"id": "post", "pk": "p", "commentCount": 0}));
    fx.create(C, &json!({"id": "old", "pk": "p"}));
    fx.create(C, &json!({"id": "edit", "pk": "p", "v": 1}));
    let feed_before = fx.drain_feed(C, FeedMode::AllVersions).len();

    let r = run(
        &fx,
        "p",
        &[
            BatchOperation::create(json!({"id": "comment", "pk": "p", "text": "hi"})),
            BatchOperation::read("comment"),
            BatchOperation::patch("post", &incr("/commentCount", 1)),
            BatchOperation::read("post"),
            BatchOperation::upsert(json!({"id": "new", "pk": "p"})),
            BatchOperation::upsert(json!({"id": "edit", "pk": "p", "v": 2})),
            BatchOperation::replace("edit", json!({"id": "edit", "pk": "p", "v": 3})),
            BatchOperation::delete("old"),
            BatchOperation::read("edit"),
        ],
    );

    assert!(r.is_success(), "{:?}", r.failure);
    assert_eq!(r.status_code, 200);
    assert_eq!(statuses(&r), [201, 200, 200, 200, 201, 200, 200, 204, 200]);
    let results = &r.results;
    assert_eq!(
        results[1].resource_body.as_ref().unwrap()["text"],
        "hi",
        "a read sees an earlier create"
    );
    assert_eq!(
        results[3].resource_body.as_ref().unwrap()["commentCount"],
        1,
        "and an earlier patch"
    );
    assert_eq!(
        results[8].resource_body.as_ref().unwrap()["v"],
        3,
        "and the last write of an item"
    );
    assert_eq!(results[1].etag, results[0].etag);
    assert!(
        results[7].resource_body.is_none(),
        "a delete returns no body"
    );

    assert_eq!(fx.read_json(C, "post", &json!("p"))["commentCount"], 1);
    assert_eq!(fx.read_json(C, "edit", &json!("p"))["v"], 3);
    assert_eq!(
        err(fx.engine.read_item(DB, C, "old", &json!("p"))).status,
        404
    );

    let changes = fx.drain_feed(C, FeedMode::AllVersions);
    let batch_changes = &changes[feed_before..];
    assert_eq!(batch_changes.len(), 6, "one event per write");
    let ts = batch_changes[0].timestamp;
    assert!(
        batch_changes.iter().all(|c| c.timestamp == ts),
        "one timestamp for the batch"
    );
    assert_eq!(
        batch_changes
            .iter()
            .filter(|c| c.operation == FeedOp::Delete)
            .count(),
        1
    );
    for id in ["comment", "post", "new", "edit"] {
        assert_eq!(fx.read_json(C, id, &json!("p"))["_ts"], ts, "{id}");
    }
    assert_eq!(
        container_counts(&fx.engine, C).0,
        4,
        "3 + comment + new − old"
    );
}

#[test]
fn an_operation_in_another_logical_partition_is_400() {
    let fx = fixture();
    fx.create(C, &json!({"id": "x", "pk": "other"}));
    let cases = [
        BatchOperation::create(json!({"id": "b", "pk": "other"})),
        BatchOperation::upsert(json!({"id": "b"})), // the undefined partition
        BatchOperation {
            partition_key: Some(json!("other")),
            ..BatchOperation::read("x")
        },
    ];
    for bad in cases {
        let r = run(
            &fx,
            "p",
            &[
                BatchOperation::create(json!({"id": "a", "pk": "p"})),
                bad.clone(),
            ],
        );
        assert_eq!(statuses(&r), [424, 400], "{bad:?}");
        let e = &r.failure.as_ref().unwrap().error;
        assert_eq!((e.status.as_u16(), e.substatus), (400, 1001), "{e}");
        assert!(e.message.contains("one logical partition"), "{e}");
    }
    // Reads by id look only in the batch's partition.
    let r = run(&fx, "p", &[BatchOperation::read("x")]);
    assert_eq!(statuses(&r), [404]);
    assert_eq!(
        err(fx.engine.read_item(DB, C, "a", &json!("p"))).status,
        404
    );
}

#[test]
fn the_service_limits_reject_the_whole_request() {
    let fx = fixture();
    let many: Vec<_> = (0..101)
        .map(|i| BatchOperation::create(json!({"id": format!("i{i}"), "pk": "p"})))
        .collect();
    let e = err(fx.engine.execute_batch(DB, C, &json!("p"), &many));
    assert_eq!(e.status.as_u16(), 400);
    assert!(
        e.message
            .starts_with("Batch request has more operations than what is supported"),
        "{e}"
    );
    assert!(e.request_charge > 0.0, "rejected requests are charged");
    assert_eq!(container_counts(&fx.engine, C).0, 0);
    let hundred = &many[..100];
    assert!(run(&fx, "p", hundred).is_success(), "exactly 100 is fine");
    assert_eq!(container_counts(&fx.engine, C).0, 100);

    assert_eq!(
        err(fx.engine.execute_batch(DB, C, &json!("p"), &[])).status,
        400
    );
    let blob = "x".repeat(700 * 1024);
    let big: Vec<_> = (0..3)
        .map(|i| BatchOperation::create(json!({"id": format!("big{i}"), "pk": "p", "blob": blob})))
        .collect();
    assert_eq!(
        err(fx.engine.execute_batch(DB, C, &json!("p"), &big)).status,
        413
    );
    assert_eq!(
        err(fx.engine.execute_batch(DB, "missing", &json!("p"), hundred)).status,
        404
    );
    assert_eq!(
        err(fx.engine.execute_batch(DB, C, &json!(["a", "b"]), hundred)).status,
        400,
        "a key with the wrong shape"
    );
}

#[test]
fn if_match_inside_a_batch() {
    let fx = fixture();
    let first = fx.create(C, &json!({"id": "a", "pk": "p", "v": 1}));
    let stale = first.etag.clone().unwrap();
    fx.replace(C, &json!({"id": "a", "pk": "p", "v": 2}));
    let current = fx.read(C, "a", &json!("p")).etag.unwrap();

    let with = |etag: &str| {
        [
            BatchOperation::replace("a", json!({"id": "a", "pk": "p", "v": 3})).if_match(etag),
            BatchOperation::patch("a", &incr("/v", 1)).if_match(etag),
            BatchOperation::delete("a").if_match(etag),
            BatchOperation::read("a").if_match(etag),
        ]
    };
    for (i, op) in with(&stale).into_iter().enumerate() {
        let r = run(
            &fx,
            "p",
            &[BatchOperation::create(json!({"id": "n", "pk": "p"})), op],
        );
        assert_eq!(statuses(&r), [424, 412], "operation {i}");
        assert!(
            r.results[1].request_charge >= 1.0,
            "the failed check is charged"
        );
    }
    assert_eq!(fx.read_json(C, "a", &json!("p"))["v"], 2);

    let [replace, patch, _, _] = with(&current);
    let r = run(&fx, "p", &[replace, patch.clone()]);
    assert_eq!(
        statuses(&r),
        [424, 412],
        "the replace changed the etag the patch expected"
    );
    let r = run(&fx, "p", &[patch]);
    assert_eq!(statuses(&r), [200]);
    assert_eq!(fx.read_json(C, "a", &json!("p"))["v"], 3);
}

#[test]
fn the_batch_charge_is_the_sum_of_its_operations() {
    let fx = fixture();
    fx.pk_container("twin");
    let doc = |id: &str| json!({"id": id, "pk": "p", "text": "x".repeat(3000), "n": 1});
    for c in [C, "twin"] {
        fx.create(c, &doc("seed"));
    }
    let r = run(
        &fx,
        "p",
        &[
            BatchOperation::create(doc("a")),
            BatchOperation::read("seed"),
            BatchOperation::upsert(doc("seed")),
            BatchOperation::patch("a", &incr("/n", 1)),
            BatchOperation::delete("seed"),
        ],
    );
    assert!(r.is_success());
    let sum: f64 = r.results.iter().map(|x| x.request_charge).sum();
    assert!(
        (r.request_charge - sum).abs() < 1e-9,
        "{} vs {sum}",
        r.request_charge
    );

    // Each operation costs what it costs on its own.
    let e = &fx.engine;
    let alone = [
        e.create_item(DB, "twin", &bytes(&doc("a")))
            .unwrap()
            .request_charge,
        e.read_item(DB, "twin", "seed", &json!("p"))
            .unwrap()
            .request_charge,
        e.upsert_item(DB, "twin", &bytes(&doc("seed")), None)
            .unwrap()
            .request_charge,
        e.patch_item(DB, "twin", "a", &json!("p"), &incr("/n", 1), None)
            .unwrap()
            .request_charge,
        e.delete_item(DB, "twin", "seed", &json!("p"), None)
            .unwrap()
            .request_charge,
    ];
    let batched: Vec<f64> = r.results.iter().map(|x| x.request_charge).collect();
    assert_eq!(batched, alone);
    assert!(
        r.results[1].request_charge >= 1.0
            && r.results[2].request_charge > r.results[0].request_charge
    );

    // A failed batch pays for what ran, the failing operation included, and nothing after.
    let r = run(
        &fx,
        "p",
        &[
            BatchOperation::create(doc("b")),
            BatchOperation::read("missing"),
            BatchOperation::create(doc("c")),
        ],
    );
    assert_eq!(statuses(&r), [424, 404, 424]);
    assert!(r.results[0].request_charge > 5.0);
    assert_eq!(r.results[1].request_charge, 1.0);
    assert_eq!(r.results[2].request_charge, 0.0);
    assert_eq!(
        r.request_charge,
        cosmoscope::charge::batch(r.results.iter().map(|x| x.request_charge))
    );
}

#[test]
fn malformed_operations_fail_their_batch_with_400() {
    let fx = fixture();
    fx.create(C, &json!({"id": "a", "pk": "p"}));
    let bad = [
        BatchOperation {
            id: None,
            ..BatchOperation::read("a")
        },
        BatchOperation {
            resource_body: None,
            ..BatchOperation::create(json!({}))
        },
        BatchOperation::create(json!([1, 2])),
        BatchOperation::create(json!({"pk": "p"})), // no id
        BatchOperation::replace("b", json!({"id": "a", "pk": "p"})),
        BatchOperation {
            operation_type: OperationType::Patch,
            resource_body: Some(json!("x")),
            ..BatchOperation::read("a")
        },
        BatchOperation::patch("a", &PatchRequest::new(vec![])),
        BatchOperation::patch(
            "a",
            &PatchRequest::new(vec![PatchOperation::Remove { path: "/id".into() }]),
        ),
        BatchOperation::patch("a", &incr("/n", 1).with_condition("SELECT * FROM c")),
        BatchOperation::patch(
            "a",
            &PatchRequest::new(vec![PatchOperation::Remove {
                path: "/nope".into(),
            }]),
        ),
    ];
    for op in bad {
        let r = run(
            &fx,
            "p",
            &[
                op.clone(),
                BatchOperation::create(json!({"id": "z", "pk": "p"})),
            ],
        );
        assert_eq!(statuses(&r), [400, 424], "{op:?}: {:?}", r.failure);
        assert!(r.results[0].request_charge >= 1.0);
    }
    assert_eq!(
        err(fx.engine.read_item(DB, C, "z", &json!("p"))).status,
        404
    );
}

#[test]
fn a_comment_and_its_counter_in_one_batch() {
    let fx = fixture();
    fx.create(C, &json!({"id": "post", "pk": "p", "commentCount": 0}));
    for i in 0..3 {
        let r = run(
            &fx,
            "p",
            &[
                BatchOperation::create(
                    json!({"id": format!("c{i}"), "pk": "p", "type": "comment"}),
                ),
                BatchOperation::patch("post", &incr("/commentCount", 1)),
            ],
        );
        assert!(r.is_success());
    }
    // The same comment again fails, and the counter does not move.
    let r = run(
        &fx,
        "p",
        &[
            BatchOperation::create(json!({"id": "c0", "pk": "p", "type": "comment"})),
            BatchOperation::patch("post", &incr("/commentCount", 1)),
        ],
    );
    assert_eq!(statuses(&r), [409, 424]);
    assert_eq!(fx.read_json(C, "post", &json!("p"))["commentCount"], 3);
}

#[test]
fn operations_read_from_the_sdk_json_shape() {
    let ops: Vec<BatchOperation> = serde_json::from_value(json!([
        {"operationType": "Create", "resourceBody": {"id": "a", "pk": "p"}},
        {"operationType": "patch", "id": "a", "resourceBody": [{"op": "set", "path": "/s", "value": 1}]},
        {"operationType": "Read", "id": "a", "ifMatch": "\"x\"", "partitionKey": "p"}
    ]))
    .unwrap();
    assert_eq!(ops[1].operation_type, OperationType::Patch);
    assert_eq!(ops[2].if_match.as_deref(), Some("\"x\""));
    let typo: Result<BatchOperation, _> =
        serde_json::from_value(json!({"operationType": "Read", "id": "a", "ifmatch": "x"}));
    assert!(typo.unwrap_err().to_string().contains("ifmatch"));
    let unknown: Result<BatchOperation, _> =
        serde_json::from_value(json!({"operationType": "Query"}));
    assert!(unknown.is_err());
    // The constructors produce the same shape.
    let round: Value = serde_json::to_value(BatchOperation::read("a").if_match("\"x\"")).unwrap();
    assert_eq!(
        round,
        json!({"operationType": "Read", "id": "a", "ifMatch": "\"x\""})
    );
}
