//! Patch through the engine: each operation's semantics on a stored item and its error
//! cases, JSON-pointer escaping, arrays, conditions in the query dialect, protected paths,
//! If-Match, charges, and that a failed patch changes nothing.

use cosmoscope::Error;
use cosmoscope::engine::{Backend, FeedMode, FeedOp};
use cosmoscope::engine::{ItemResponse, PatchRequest};
use serde_json::{Value, json};

use crate::support::fixture::*;

const C: &str = "items";

fn fixture() -> Fixture {
    let fx = open();
    fx.pk_container(C);
    fx.create(
        C,
        &json!({
            "id": "bike", "pk": "p", "price": 455.95, "used": false, "tags": ["r-series"],
            "inventory": {"quantity": 15}, "a/b": {"c~d": 1}, "n": 1
        }),
    );
    fx
}

fn request(ops: Value) -> PatchRequest {
    PatchRequest::from_json(ops).expect("patch request")
}

fn patch(fx: &Fixture, ops: Value) -> Result<ItemResponse, Error> {
    fx.engine
        .patch_item(DB, C, "bike", &json!("p"), &request(ops), None)
}

fn patched(fx: &Fixture, ops: Value) -> Value {
    body(&patch(fx, ops).unwrap_or_else(|e| panic!("patch: {e}")))
}

/// A patch that must fail with 400, leaving the item as it was.
fn rejected(fx: &Fixture, ops: Value) -> Error {
    let before = fx.read(C, "bike", &json!("p"));
    let e = err(patch(fx, ops));
    assert_eq!(e.status.as_u16(), 400, "{e}");
    assert!(e.request_charge >= 1.0, "failed patches are charged");
    assert_eq!(
        fx.read(C, "bike", &json!("p")).etag,
        before.etag,
        "nothing changed"
    );
    e
}

#[test]
fn the_documented_example_end_to_end() {
    let fx = fixture();
    let before = fx.read(C, "bike", &json!("p"));
    let r = patch(
        &fx,
        json!([
            {"op": "add", "path": "/color", "value": "silver"},
            {"op": "remove", "path": "/used"},
            {"op": "set", "path": "/price", "value": 355.45},
            {"op": "incr", "path": "/inventory/quantity", "value": 10},
            {"op": "add", "path": "/tags/-", "value": "featured-bikes"},
            {"op": "move", "from": "/color", "path": "/inventory/color"}
        ]),
    )
    .unwrap();
    assert_eq!(r.status.as_u16(), 200);
    let doc = body(&r);
    assert_eq!(doc["price"], 355.45);
    assert_eq!(doc["inventory"], json!({"quantity": 25, "color": "silver"}));
    assert_eq!(doc["tags"], json!(["r-series", "featured-bikes"]));
    assert!(doc.get("used").is_none() && doc.get("color").is_none());
    assert_ne!(r.etag, before.etag, "a patch is a write: new etag");
    assert_eq!(doc["_etag"].as_str(), r.etag.as_deref());
    assert_eq!(
        fx.read_json(C, "bike", &json!("p")),
        doc,
        "what the patch returned is stored"
    );

    // The feed sees a replace with the whole item, as the service documents.
    let changes = fx.drain_feed(C, FeedMode::AllVersions);
    let last = changes.last().unwrap();
    assert_eq!(last.operation, FeedOp::Replace);
    assert_eq!(current(last), doc);
}

#[test]
fn add_set_and_replace() {
    let fx = fixture();
    let doc = patched(
        &fx,
        json!([
            {"op": "add", "path": "/new", "value": {"x": 1}},
            {"op": "add", "path": "/n", "value": 2},
            {"op": "set", "path": "/new/y", "value": [1]},
            {"op": "replace", "path": "/price", "value": null}
        ]),
    );
    assert_eq!(doc["new"], json!({"x": 1, "y": [1]}));
    assert_eq!(doc["n"], 2, "add on an existing member replaces it");
    assert_eq!(doc["price"], Value::Null);

    let e = rejected(
        &fx,
        json!([{"op": "replace", "path": "/missing", "value": 1}]),
    );
    assert!(e.message.contains("/missing does not exist"), "{e}");
    let e = rejected(&fx, json!([{"op": "set", "path": "/no/such", "value": 1}]));
    assert!(e.message.contains("/no does not exist"), "{e}");
    let e = rejected(&fx, json!([{"op": "add", "path": "/n/x", "value": 1}]));
    assert!(e.message.contains("a number"), "{e}");
}

#[test]
fn remove_incr_and_move() {
    let fx = fixture();
    let doc = patched(
        &fx,
        json!([
            {"op": "remove", "path": "/used"},
            {"op": "incr", "path": "/n", "value": -3},
            {"op": "incr", "path": "/price", "value": 0.05},
            {"op": "incr", "path": "/views", "value": 7},
            {"op": "move", "from": "/inventory", "path": "/stock"}
        ]),
    );
    assert!(doc.get("used").is_none());
    assert_eq!(doc["n"], -2);
    assert_eq!(doc["price"], 456.0);
    assert_eq!(doc["views"], 7, "incr creates a missing field");
    assert_eq!(doc["stock"], json!({"quantity": 15}));
    assert!(doc.get("inventory").is_none());

    let e = rejected(&fx, json!([{"op": "remove", "path": "/used"}]));
    assert!(e.message.contains("does not exist"), "{e}");
    let e = rejected(&fx, json!([{"op": "incr", "path": "/tags", "value": 1}]));
    assert!(e.message.contains("not a number"), "{e}");
    let e = rejected(
        &fx,
        json!([{"op": "move", "from": "/nothing", "path": "/x"}]),
    );
    assert!(e.message.contains("does not exist"), "{e}");
    let e = rejected(
        &fx,
        json!([{"op": "move", "from": "/stock", "path": "/stock/inner"}]),
    );
    assert!(e.message.contains("inside"), "{e}");
    let e =
        PatchRequest::from_json(json!([{"op": "incr", "path": "/n", "value": "1"}])).unwrap_err();
    assert!(e.message.contains("expected a JSON number"), "{e}");
}

#[test]
fn arrays() {
    let fx = fixture();
    let doc = patched(
        &fx,
        json!([
            {"op": "add", "path": "/tags/0", "value": "first"},
            {"op": "add", "path": "/tags/-", "value": "last"},
            {"op": "set", "path": "/tags/1", "value": "R"},
            {"op": "add", "path": "/nums", "value": [1, 2, 3]},
            {"op": "remove", "path": "/nums/0"},
            {"op": "incr", "path": "/nums/1", "value": 10},
            {"op": "replace", "path": "/nums/0", "value": 20}
        ]),
    );
    assert_eq!(doc["tags"], json!(["first", "R", "last"]));
    assert_eq!(
        doc["nums"],
        json!([20, 13]),
        "incr changes the element in place"
    );

    for (ops, why) in [
        (
            json!([{"op": "add", "path": "/tags/4", "value": 0}]),
            "past the end",
        ),
        (
            json!([{"op": "set", "path": "/tags/3", "value": 0}]),
            "out of range",
        ),
        (json!([{"op": "remove", "path": "/tags/3"}]), "out of range"),
        (
            json!([{"op": "replace", "path": "/tags/-", "value": 0}]),
            "only add",
        ),
        (
            json!([{"op": "set", "path": "/tags/x", "value": 0}]),
            "not an array index",
        ),
    ] {
        let e = rejected(&fx, ops.clone());
        assert!(e.message.contains(why), "{ops}: {e}");
    }
}

#[test]
fn json_pointer_escaping() {
    let fx = fixture();
    let doc = patched(
        &fx,
        json!([
            {"op": "incr", "path": "/a~1b/c~0d", "value": 1},
            {"op": "set", "path": "/x~1y", "value": "slash"},
            {"op": "set", "path": "/t~0", "value": "tilde"}
        ]),
    );
    assert_eq!(doc["a/b"]["c~d"], 2);
    assert_eq!(doc["x/y"], "slash");
    assert_eq!(doc["t~"], "tilde");
    let e = rejected(&fx, json!([{"op": "set", "path": "/a~b", "value": 1}]));
    assert!(e.message.contains("~0"), "{e}");
    let e = rejected(&fx, json!([{"op": "set", "path": "price", "value": 1}]));
    assert!(e.message.contains("start with /"), "{e}");
}

#[test]
fn conditions_in_the_query_dialect() {
    let fx = fixture();
    let with = |cond: &str| {
        request(
            json!({"operations": [{"op": "incr", "path": "/n", "value": 1}], "condition": cond}),
        )
    };
    let run = |req: &PatchRequest| fx.engine.patch_item(DB, C, "bike", &json!("p"), req, None);

    let r = run(&with(
        "FROM c WHERE c.used = false AND c.inventory.quantity > 10",
    ))
    .unwrap();
    assert_eq!(body(&r)["n"], 2);
    let r = run(&with("from c join t in c.tags where t = 'r-series'")).unwrap();
    assert_eq!(body(&r)["n"], 3);

    let before = fx.read(C, "bike", &json!("p"));
    let e = err(run(&with("FROM c WHERE c.used = true")));
    assert_eq!(e.status.as_u16(), 412, "{e}");
    assert!(e.request_charge >= 1.0);
    let e = err(run(&with("FROM c WHERE c.nothing = 1")));
    assert_eq!(e.status.as_u16(), 412, "undefined does not match");
    assert_eq!(fx.read(C, "bike", &json!("p")).etag, before.etag);

    let e = err(run(&with("FROM c WHERE c.n = ")));
    assert_eq!(e.status.as_u16(), 400);
    assert_eq!(e.line, Some(1), "{e}");
    assert!(e.message.contains("patch condition"), "{e}");
    let e = err(run(&with("SELECT * FROM c")));
    assert!(e.message.contains("FROM at the start"), "{e}");
}

#[test]
fn id_partition_key_and_system_properties_cannot_be_patched() {
    let fx = fixture();
    for path in [
        "/id",
        "/pk",
        "/_etag",
        "/_ts",
        "/_rid",
        "/_self",
        "/_attachments",
    ] {
        let e = rejected(&fx, json!([{"op": "set", "path": path, "value": "x"}]));
        assert!(e.message.contains("cannot be patched"), "{path}: {e}");
    }
    let e = rejected(&fx, json!([{"op": "remove", "path": "/pk"}]));
    assert!(e.message.contains("partition key"), "{e}");
    let e = rejected(
        &fx,
        json!([{"op": "move", "from": "/id", "path": "/oldId"}]),
    );
    assert!(e.message.contains("id"), "{e}");

    // A nested key path protects its parents too.
    fx.container(
        "nested",
        cosmoscope::engine::ContainerSettings::new(vec!["/addr/zip".into()]),
    );
    fx.create(
        "nested",
        &json!({"id": "a", "addr": {"zip": "1000", "city": "X"}}),
    );
    let nested = |ops: Value| {
        fx.engine
            .patch_item(DB, "nested", "a", &json!("1000"), &request(ops), None)
    };
    assert_eq!(
        err(nested(json!([{"op": "set", "path": "/addr", "value": {}}]))).status,
        400
    );
    let ok = nested(json!([{"op": "set", "path": "/addr/city", "value": "Y"}])).unwrap();
    assert_eq!(body(&ok)["addr"], json!({"zip": "1000", "city": "Y"}));
}

#[test]
fn if_match_missing_items_and_limits() {
    let fx = fixture();
    let stale = fx.read(C, "bike", &json!("p")).etag.unwrap();
    patched(&fx, json!([{"op": "incr", "path": "/n", "value": 1}]));
    let req = request(json!([{"op": "incr", "path": "/n", "value": 1}]));
    let e = err(fx
        .engine
        .patch_item(DB, C, "bike", &json!("p"), &req, Some(&stale)));
    assert_eq!(e.status.as_u16(), 412, "{e}");
    let current = fx.read(C, "bike", &json!("p")).etag.unwrap();
    let r = fx
        .engine
        .patch_item(DB, C, "bike", &json!("p"), &req, Some(&current))
        .unwrap();
    assert_eq!(body(&r)["n"], 3);

    let e = err(fx.engine.patch_item(DB, C, "nope", &json!("p"), &req, None));
    assert_eq!(e.status.as_u16(), 404);
    let e = err(fx
        .engine
        .patch_item(DB, C, "bike", &json!("other"), &req, None));
    assert_eq!(
        e.status.as_u16(),
        404,
        "the item lives in another logical partition"
    );
    assert_eq!(
        err(fx
            .engine
            .patch_item(DB, "missing", "bike", &json!("p"), &req, None))
        .status,
        404
    );

    let eleven: Vec<Value> = (0..11)
        .map(|i| json!({"op": "set", "path": format!("/f{i}"), "value": i}))
        .collect();
    let e = rejected(&fx, Value::Array(eleven));
    assert!(e.message.contains("at most 10"), "{e}");
    let ten: Vec<Value> = (0..10)
        .map(|i| json!({"op": "set", "path": format!("/f{i}"), "value": i}))
        .collect();
    assert_eq!(patched(&fx, Value::Array(ten))["f9"], 9);
    rejected(&fx, json!([]));

    for bad in [
        json!(5),
        json!({"ops": []}),
        json!([{"op": "copy", "path": "/a", "from": "/b"}]),
    ] {
        let e = PatchRequest::from_json(bad.clone()).unwrap_err();
        assert_eq!(e.status.as_u16(), 400, "{bad}");
    }
}

#[test]
fn a_patch_costs_a_replace_of_the_result() {
    let fx = fixture();
    let r = patch(
        &fx,
        json!([{"op": "set", "path": "/note", "value": "x".repeat(2000)}]),
    )
    .unwrap();
    // Replacing the item with the same content writes the same image: the same charge.
    let mut same = body(&r);
    for p in ["_rid", "_self", "_etag", "_attachments", "_ts"] {
        same.as_object_mut().unwrap().remove(p);
    }
    let replaced = fx.replace(C, &same);
    assert_eq!(r.request_charge, replaced.request_charge);
    assert!(r.request_charge > 10.0, "{}", r.request_charge);
}

#[test]
fn a_patch_cannot_grow_an_item_past_two_megabytes() {
    let fx = fixture();
    let big = "x".repeat(1024 * 1024 + 10);
    patched(&fx, json!([{"op": "set", "path": "/a", "value": big}]));
    let before = fx.read(C, "bike", &json!("p")).etag;
    let e = err(patch(
        &fx,
        json!([{"op": "set", "path": "/b", "value": big}]),
    ));
    assert_eq!(e.status.as_u16(), 413, "{e}");
    assert_eq!(fx.read(C, "bike", &json!("p")).etag, before);
}
