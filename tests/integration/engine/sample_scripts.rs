//! The sample designs' server-side scripts (the modelling guides' `createComment`,
//! `createLike`, `updateUsernames`, the `truncateFeed` post-trigger and the WebStore's
//! sales order procedure), loaded with the sets and compared with what the change feed
//! processors and transactional batches do to the same data.

use std::collections::BTreeMap;

use cosmoscope::engine::{
    Backend, QueryOptions, ScriptKind, SprocRequest, TriggeredOp, TriggeredWrite,
};
use cosmoscope::samples::blog::short_form;
use cosmoscope::samples::denormalize::Denormalizer;
use cosmoscope::samples::{self, LoadOptions};
use serde_json::{Value, json};

use crate::support::fixture::{Store, items, of_type, store, str_of};

const SMALL: LoadOptions = LoadOptions {
    scale: 0.25,
    seed: 7,
};

fn load(s: &Store, set: &str) {
    samples::load(&s.engine, set, &SMALL, &mut |_| true)
        .unwrap_or_else(|e| panic!("load {set}: {e}"));
}

fn exec(s: &Store, db: &str, c: &str, id: &str, pk: Value, params: Vec<Value>) -> Value {
    s.engine
        .execute_stored_procedure(
            db,
            c,
            id,
            &SprocRequest {
                partition_key: pk,
                params,
                enable_log: false,
            },
        )
        .unwrap_or_else(|e| panic!("{id}: {e}"))
        .body
        .unwrap_or(Value::Null)
}

/// Items without the system properties a write stamps (`_etag`, `_ts`, `_rid`...), by id.
fn user_data(items: Vec<Value>) -> BTreeMap<String, Value> {
    items
        .into_iter()
        .map(|mut v| {
            if let Some(o) = v.as_object_mut() {
                o.retain(|k, _| !k.starts_with('_'));
            }
            (str_of(&v["id"]).to_string(), v)
        })
        .collect()
}

#[test]
fn the_sets_load_their_scripts() {
    let s = store();
    load(&s, "blog-v3");
    let sprocs: Vec<String> = s
        .engine
        .list_scripts("blog-v3", "posts", ScriptKind::StoredProcedure)
        .unwrap()
        .into_iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(sprocs, ["createComment", "createLike", "updateUsernames"]);
    let triggers = s
        .engine
        .list_scripts("blog-v3", "feed", ScriptKind::Trigger)
        .unwrap();
    assert_eq!(triggers[0].id, "truncateFeed");
}

#[test]
fn comments_and_likes_through_the_procedures_keep_the_counters() {
    let s = store();
    load(&s, "blog-v2");
    let posts = items(&s.engine, "blog-v2", "posts");
    let targets: Vec<(String, u64, u64)> = of_type(&posts, "post")
        .iter()
        .take(3)
        .map(|p| {
            (
                str_of(&p["id"]).to_string(),
                p["commentCount"].as_u64().unwrap(),
                p["likeCount"].as_u64().unwrap(),
            )
        })
        .collect();
    for (i, (post, _, _)) in targets.iter().enumerate() {
        let pk = json!(post);
        let comment = json!({"id": format!("sc-{i}"), "type": "comment", "userId": "u", "userUsername": "x", "content": "hi", "creationDate": "2026-01-01T00:00:00Z"});
        exec(
            &s,
            "blog-v2",
            "posts",
            "createComment",
            pk.clone(),
            vec![pk.clone(), comment],
        );
        let like = json!({"id": format!("sl-{i}"), "type": "like", "userId": "u", "userUsername": "x", "creationDate": "2026-01-01T00:00:00Z"});
        exec(
            &s,
            "blog-v2",
            "posts",
            "createLike",
            pk.clone(),
            vec![pk.clone(), like.clone()],
        );
        exec(
            &s,
            "blog-v2",
            "posts",
            "createLike",
            pk.clone(),
            vec![pk, json!({"id": format!("sl2-{i}"), "type": "like"})],
        );
    }
    let after = items(&s.engine, "blog-v2", "posts");
    for (post, comments, likes) in &targets {
        let p = after.iter().find(|i| i["id"] == post.as_str()).unwrap();
        assert_eq!(p["commentCount"], json!(comments + 1));
        assert_eq!(p["likeCount"], json!(likes + 2));
        let own = |t: &str| {
            after
                .iter()
                .filter(|i| i["postId"] == post.as_str() && i["type"] == t)
                .count() as u64
        };
        assert_eq!(own("comment"), comments + 1);
        assert_eq!(own("like"), likes + 2);
    }
}

#[test]
fn update_usernames_matches_the_processor() {
    let (by_processor, by_script) = (store(), store());
    load(&by_processor, "blog-v2");
    load(&by_script, "blog-v2");
    let users = items(&by_script.engine, "blog-v2", "users");
    // v2's user items have no type; they are the ones with a username.
    let user = users
        .iter()
        .find(|u| u.get("username").is_some())
        .expect("a user")
        .clone();
    let user_id = str_of(user.get("userId").unwrap_or(&user["id"])).to_string();
    let renamed = json!({"username": "renamed-by-test"});

    // The processor way: rename the user; the usernames processor fans out to posts.
    let mut d = Denormalizer::for_set(&by_processor.engine, "blog-v2", "blog-v2")
        .unwrap()
        .unwrap();
    let mut changed = user.clone();
    changed["username"] = renamed["username"].clone();
    by_processor
        .engine
        .replace_item(
            "blog-v2",
            "users",
            &serde_json::to_vec(&changed).unwrap(),
            None,
        )
        .unwrap();
    d.drain().unwrap();
    d.release().unwrap();

    // The guide's way: the procedure on every logical partition of posts.
    by_script
        .engine
        .replace_item(
            "blog-v2",
            "users",
            &serde_json::to_vec(&changed).unwrap(),
            None,
        )
        .unwrap();
    let keys = by_script
        .engine
        .query(
            "blog-v2",
            "posts",
            "SELECT DISTINCT VALUE p.postId FROM p",
            &QueryOptions {
                max_items: Some(100_000),
                ..Default::default()
            },
        )
        .unwrap();
    let mut touched = 0;
    for key in &keys.documents {
        let n = exec(
            &by_script,
            "blog-v2",
            "posts",
            "updateUsernames",
            key.value().clone(),
            vec![json!(user_id), renamed["username"].clone()],
        );
        touched += n.as_u64().unwrap();
    }
    assert!(touched > 0, "the user has posts, comments or likes");
    let a = user_data(items(&by_processor.engine, "blog-v2", "posts"));
    let b = user_data(items(&by_script.engine, "blog-v2", "posts"));
    assert_eq!(a, b, "the same posts, comments and likes either way");
    assert!(b.values().any(|i| i["userUsername"] == "renamed-by-test"));
}

/// A new post, later than every generated one.
fn new_post(n: usize) -> Value {
    json!({
        "id": format!("new-post-{n:03}"), "type": "post", "postId": format!("new-post-{n:03}"),
        "userId": "u-new", "userUsername": "newcomer", "title": "Fresh", "content": "Some words",
        "commentCount": 0, "likeCount": 0,
        "creationDate": format!("2026-02-01T00:{:02}:{:02}Z", n / 60, n % 60),
    })
}

#[test]
fn truncate_feed_keeps_the_same_newest_posts_as_the_processor() {
    let (by_processor, by_trigger) = (store(), store());
    load(&by_processor, "blog-v3");
    load(&by_trigger, "blog-v3");
    let before = items(&by_trigger.engine, "blog-v3", "feed").len();
    let new = 105;

    let mut d = Denormalizer::for_set(&by_processor.engine, "blog-v3", "blog-v3")
        .unwrap()
        .unwrap();
    for n in 0..new {
        by_processor
            .engine
            .create_item(
                "blog-v3",
                "posts",
                &serde_json::to_vec(&new_post(n)).unwrap(),
            )
            .unwrap();
    }
    d.drain().unwrap();
    d.release().unwrap();

    for n in 0..new {
        let post = new_post(n);
        by_trigger
            .engine
            .create_item("blog-v3", "posts", &serde_json::to_vec(&post).unwrap())
            .unwrap();
        by_trigger
            .engine
            .write_item_with_triggers(
                "blog-v3",
                "feed",
                &TriggeredWrite {
                    op: TriggeredOp::Create(serde_json::to_vec(&short_form(&post)).unwrap()),
                    if_match: None,
                    pre_trigger: None,
                    post_trigger: Some("truncateFeed".into()),
                },
            )
            .unwrap();
    }
    let a = user_data(items(&by_processor.engine, "blog-v3", "feed"));
    let b = user_data(items(&by_trigger.engine, "blog-v3", "feed"));
    assert_eq!(b.len(), 100, "the trigger keeps 100 (there were {before})");
    assert_eq!(a, b, "the same feed either way");
}

#[test]
fn the_sales_order_procedure_counts_orders_in_one_transaction() {
    let s = store();
    load(&s, "webstore");
    let customers = items(&s.engine, "webstore", "customer");
    let customer = of_type(&customers, "customer")[0].clone();
    let id = str_of(&customer["customerId"]).to_string();
    let before = customer["salesOrderCount"].as_u64().unwrap_or(0);
    for n in 0..3 {
        let order = json!({"id": format!("so-test-{n}"), "customerId": id, "orderDate": "2026-02-01", "total": 10 + n});
        let body = exec(
            &s,
            "webstore",
            "customer",
            "createSalesOrder",
            json!(id),
            vec![order],
        );
        assert_eq!(body["salesOrderCount"], json!(before + n + 1));
    }
    let after = items(&s.engine, "webstore", "customer");
    let c = after.iter().find(|i| i["id"] == customer["id"]).unwrap();
    assert_eq!(c["salesOrderCount"], json!(before + 3));
    let orders = after
        .iter()
        .filter(|i| i["customerId"] == id.as_str() && i["type"] == "salesOrder")
        .count() as u64;
    assert_eq!(orders, before + 3, "the count equals the orders");
}
