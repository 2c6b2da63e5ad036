//! Denormalization as the designs prescribe, checked after real workloads: the simulator
//! runs a fixed number of operations with a seed (no clock), its change feed processors
//! catch up, and then every copy agrees with its source.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::AtomicBool;

use cosmoscope::engine::{Backend, Engine, PatchOperation, PatchRequest};
use cosmoscope::samples::blog::{FEED_SIZE, short_form};
use cosmoscope::samples::denormalize::{Denormalizer, LEASE_CONTAINER};
use cosmoscope::samples::{self, LoadOptions};
use cosmoscope::simulate::{self, SimOptions, SimReport};
use serde_json::{Value, json};

use crate::support::fixture::{Store, items, of_type, store, str_of};

/// Small enough for a debug build: 8 blog users, 100 customers.
const SMALL: LoadOptions = LoadOptions {
    scale: 0.25,
    seed: 7,
};

fn load(s: &Store, set: &str) {
    samples::load(&s.engine, set, &SMALL, &mut |_| true)
        .unwrap_or_else(|e| panic!("load {set}: {e}"));
}

/// `operations` operations of `set`'s workload, as fast as possible, processors drained.
fn simulate(s: &Store, set: &str, operations: u64, hot_key: f64) -> SimReport {
    let options = SimOptions {
        rate: None,
        operations: Some(operations),
        hot_key,
        seed: SMALL.seed,
        scale: SMALL.scale,
        ..SimOptions::new(set)
    };
    let report = simulate::run(&s.engine, &options, &AtomicBool::new(false), &mut |_| {})
        .unwrap_or_else(|e| panic!("simulate {set}: {e}"));
    assert_eq!(report.operations, operations);
    assert_eq!(report.stopped, "operations");
    assert_eq!(report.errors, 0, "{:?}", report.last_error);
    report
}

/// Runs `set`'s processors until they have caught up, then hands their leases back.
fn drain(s: &Store, set: &str) {
    let mut d = Denormalizer::for_set(&s.engine, set, set)
        .expect("processors")
        .expect("the design has processors");
    d.drain().expect("drain");
    d.release().expect("release");
}

/// Each post's counters equal its comments and likes.
fn assert_counters(posts: &[Value]) {
    let mut comments: HashMap<&str, u64> = HashMap::new();
    let mut likes: HashMap<&str, u64> = HashMap::new();
    for i in posts {
        match i["type"].as_str() {
            Some("comment") => *comments.entry(str_of(&i["postId"])).or_default() += 1,
            Some("like") => *likes.entry(str_of(&i["postId"])).or_default() += 1,
            _ => {}
        }
    }
    let list = of_type(posts, "post");
    assert!(!list.is_empty());
    for p in list {
        let id = str_of(&p["id"]);
        assert_eq!(
            p["commentCount"],
            json!(comments.get(id).copied().unwrap_or(0)),
            "commentCount of post {id}"
        );
        assert_eq!(
            p["likeCount"],
            json!(likes.get(id).copied().unwrap_or(0)),
            "likeCount of post {id}"
        );
    }
}

/// The feed holds exactly the short forms of the newest posts; every post has its copy in
/// `users`, byte for byte the generator's short form.
fn assert_v3_copies(engine: &Engine) {
    let posts = items(engine, "blog-v3", "posts");
    let users = items(engine, "blog-v3", "users");
    let feed = items(engine, "blog-v3", "feed");
    let mut all: Vec<&Value> = of_type(&posts, "post");
    all.sort_by(|a, b| {
        (str_of(&b["creationDate"]), str_of(&b["id"]))
            .cmp(&(str_of(&a["creationDate"]), str_of(&a["id"])))
    });
    let newest: BTreeMap<&str, Value> = all
        .iter()
        .take(FEED_SIZE)
        .map(|p| (str_of(&p["id"]), short_form(p)))
        .collect();
    assert_eq!(feed.len(), FEED_SIZE.min(all.len()), "feed size");
    let in_feed: BTreeMap<&str, Value> =
        feed.iter().map(|f| (str_of(&f["id"]), f.clone())).collect();
    assert_eq!(
        in_feed.keys().collect::<Vec<_>>(),
        newest.keys().collect::<Vec<_>>(),
        "the feed holds the newest posts"
    );
    assert_eq!(in_feed, newest, "feed items are the posts' short forms");

    let copies: HashMap<(&str, &str), &Value> = users
        .iter()
        .filter(|u| u["type"] == "post")
        .map(|u| ((str_of(&u["userId"]), str_of(&u["id"])), u))
        .collect();
    assert_eq!(copies.len(), all.len(), "one copy per post in users");
    for p in &all {
        let copy = copies
            .get(&(str_of(&p["userId"]), str_of(&p["id"])))
            .unwrap_or_else(|| panic!("post {} has no copy in users", p["id"]));
        assert_eq!(
            serde_json::to_vec(*copy).unwrap(),
            serde_json::to_vec(&short_form(p)).unwrap(),
            "the copy of post {} is its short form",
            p["id"]
        );
    }
}

#[test]
fn a_v3_workload_keeps_counters_copies_and_the_feed() {
    let st = store();
    load(&st, "blog-v3");
    let report = simulate(&st, "blog-v3", 600, 0.0);
    assert!(report.writes > 20, "the mix writes: {report:?}");
    assert!(report.patterns.contains_key("C2") && report.patterns.contains_key("C3"));
    assert!(report.processors.changes > 0 && report.processors.writes > 0);
    assert!(report.request_charge > 0.0);

    assert_counters(&items(&st.engine, "blog-v3", "posts"));
    assert_v3_copies(&st.engine);

    // The leases are ordinary items: one per range of each monitored container.
    let leases = items(&st.engine, "blog-v3", LEASE_CONTAINER);
    let names: BTreeSet<&str> = leases.iter().map(|l| str_of(&l["processorName"])).collect();
    assert_eq!(names, BTreeSet::from(["post-copies", "usernames"]));
    let posts_ranges = st
        .engine
        .container("blog-v3", "posts")
        .unwrap()
        .partition_count;
    assert_eq!(
        leases
            .iter()
            .filter(|l| l["processorName"] == "post-copies")
            .count(),
        posts_ranges
    );
    assert!(leases.iter().all(|l| l["Owner"].is_null()), "released");
}

#[test]
fn several_clients_share_the_workload_and_keep_the_design_consistent() {
    let st = store();
    load(&st, "blog-v3");
    let options = SimOptions {
        rate: None,
        operations: Some(400),
        clients: 4,
        seed: SMALL.seed,
        scale: SMALL.scale,
        ..SimOptions::new("blog-v3")
    };
    let report = simulate::run(&st.engine, &options, &AtomicBool::new(false), &mut |_| {})
        .unwrap_or_else(|e| panic!("simulate: {e}"));
    assert_eq!((report.operations, report.clients), (400, 4));
    assert_eq!(report.errors, 0, "{:?}", report.last_error);
    assert!(report.mean_operation_ms > 0.0);
    // Concurrent writers (batches, processors) leave the counters and copies right.
    assert_counters(&items(&st.engine, "blog-v3", "posts"));
    assert_v3_copies(&st.engine);

    // A rate no client can reach is reported with what held it back.
    let options = SimOptions {
        rate: Some(1_000_000.0),
        operations: Some(50),
        processors: false,
        ..options
    };
    let report = simulate::run(&st.engine, &options, &AtomicBool::new(false), &mut |_| {})
        .unwrap_or_else(|e| panic!("simulate: {e}"));
    let short = report.short_of_rate.expect("short of the rate");
    assert!(
        short.contains("of the 1000000 ops/s asked for: "),
        "{short}"
    );
}

#[test]
fn the_same_seed_gives_the_same_workload() {
    let (a, b) = (store(), store());
    for st in [&a, &b] {
        load(st, "blog-v3");
    }
    let (ra, rb) = (
        simulate(&a, "blog-v3", 150, 0.3),
        simulate(&b, "blog-v3", 150, 0.3),
    );
    let counts = |r: &SimReport| -> Vec<(String, u64)> {
        r.patterns
            .iter()
            .map(|(k, t)| (k.clone(), t.count))
            .collect()
    };
    assert_eq!(counts(&ra), counts(&rb));
    assert_eq!(ra.hot_key, rb.hot_key);
}

#[test]
fn a_hot_key_sends_writes_to_one_logical_partition() {
    let st = store();
    load(&st, "blog-v3");
    let report = simulate(&st, "blog-v3", 300, 1.0);
    let hot = report.hot_key.expect("hot key");
    assert_eq!(hot.param, "postId");
    // Every comment and like went to the hot post; so did its counters.
    let posts = items(&st.engine, "blog-v3", "posts");
    let hot_post = str_of(&hot.value);
    let reactions = (report.patterns.get("C3").map_or(0, |t| t.count)
        + report.patterns.get("C4").map_or(0, |t| t.count)) as usize;
    assert!(reactions > 0);
    let new_on_hot = posts
        .iter()
        .filter(|i| i["postId"] == hot_post && i["type"] != "post")
        // Generated data ends in June 2025; the simulator writes at the current time.
        .filter(|i| str_of(&i["creationDate"]) > "2025-06-01")
        .count();
    assert_eq!(new_on_hot, reactions);
    assert_counters(&posts);
}

/// Renames `user` in `db` and lets the processors propagate it; returns the old name.
fn rename(st: &Store, db: &str, user: &str, new_name: &str) -> String {
    let old = st
        .engine
        .read_item(db, "users", user, &json!(user))
        .unwrap();
    let old: Value = serde_json::from_slice(old.body.as_deref().unwrap()).unwrap();
    let patch = PatchRequest::new(vec![PatchOperation::Set {
        path: "/username".into(),
        value: json!(new_name),
    }]);
    st.engine
        .patch_item(db, "users", user, &json!(user), &patch, None)
        .unwrap();
    drain(st, db);
    str_of(&old["username"]).to_string()
}

/// The user who wrote the most posts, comments and likes.
fn busiest_user(posts: &[Value]) -> String {
    let mut n: HashMap<&str, usize> = HashMap::new();
    for i in posts {
        *n.entry(str_of(&i["userId"])).or_default() += 1;
    }
    n.into_iter()
        .max_by_key(|(u, c)| (*c, *u))
        .map(|(u, _)| u.to_string())
        .unwrap()
}

#[test]
fn a_rename_reaches_every_copy_in_v3() {
    let st = store();
    load(&st, "blog-v3");
    simulate(&st, "blog-v3", 200, 0.0);
    let user = busiest_user(&items(&st.engine, "blog-v3", "posts"));
    let old = rename(&st, "blog-v3", &user, "renamed_user");
    for c in ["posts", "users", "feed"] {
        let all = items(&st.engine, "blog-v3", c);
        assert!(
            all.iter().all(|i| i["userUsername"] != old.as_str()),
            "{c} still has {old}"
        );
        let renamed = all
            .iter()
            .filter(|i| i["userId"] == user.as_str() && i.get("userUsername").is_some());
        assert!(renamed.clone().all(|i| i["userUsername"] == "renamed_user"));
        if c != "feed" {
            assert!(renamed.count() > 0, "{c} has the user's items");
        }
    }
    // The copies changed through the posts' change feed, so they still match exactly.
    assert_v3_copies(&st.engine);
    assert_counters(&items(&st.engine, "blog-v3", "posts"));
}

#[test]
fn a_v2_workload_and_rename() {
    let st = store();
    load(&st, "blog-v2");
    let report = simulate(&st, "blog-v2", 300, 0.0);
    assert!(report.writes > 0);
    assert_counters(&items(&st.engine, "blog-v2", "posts"));
    let user = busiest_user(&items(&st.engine, "blog-v2", "posts"));
    let old = rename(&st, "blog-v2", &user, "someone_else");
    let posts = items(&st.engine, "blog-v2", "posts");
    assert!(posts.iter().all(|i| i["userUsername"] != old.as_str()));
    assert!(
        posts
            .iter()
            .filter(|i| i["userId"] == user.as_str())
            .all(|i| i["userUsername"] == "someone_else")
    );
}

#[test]
fn webstore_orders_count_and_renames_reach_products() {
    let st = store();
    load(&st, "webstore");
    let report = simulate(&st, "webstore", 300, 0.0);
    assert!(report.patterns.get("W7").is_some_and(|t| t.count > 0));
    // Every customer's salesOrderCount equals its orders (new ones included).
    let customers = items(&st.engine, "webstore", "customer");
    let mut orders: HashMap<&str, u64> = HashMap::new();
    for o in of_type(&customers, "salesOrder") {
        *orders.entry(str_of(&o["customerId"])).or_default() += 1;
    }
    for c in of_type(&customers, "customer") {
        assert_eq!(
            c["salesOrderCount"],
            json!(orders.get(str_of(&c["id"])).copied().unwrap_or(0)),
            "customer {}",
            c["id"]
        );
    }

    // Rename a category and a tag the way an operator would; the processor copies them.
    let meta = items(&st.engine, "webstore", "productMeta");
    let products = items(&st.engine, "webstore", "product");
    let category = str_of(&products[0]["categoryId"]).to_string();
    let tag = str_of(&products[0]["tags"][0]["id"]).to_string();
    assert!(meta.iter().any(|m| m["id"] == category.as_str()));
    let set_name = |id: &str, pk: &str, name: &str| {
        let patch = PatchRequest::new(vec![PatchOperation::Set {
            path: "/name".into(),
            value: json!(name),
        }]);
        st.engine
            .patch_item("webstore", "productMeta", id, &json!(pk), &patch, None)
            .unwrap();
    };
    // The processors must exist (leases created) before the renames to see them.
    drain(&st, "webstore");
    set_name(&category, "category", "Renamed Category");
    set_name(&tag, "tag", "Renamed Tag");
    drain(&st, "webstore");
    let products = items(&st.engine, "webstore", "product");
    let in_category: Vec<&Value> = products
        .iter()
        .filter(|p| p["categoryId"] == category.as_str())
        .collect();
    assert!(!in_category.is_empty());
    assert!(
        in_category
            .iter()
            .all(|p| p["categoryName"] == "Renamed Category")
    );
    let tagged: Vec<&Value> = products
        .iter()
        .filter(|p| {
            p["tags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["id"] == tag.as_str())
        })
        .collect();
    assert!(!tagged.is_empty());
    for p in tagged {
        for t in p["tags"].as_array().unwrap() {
            if t["id"] == tag.as_str() {
                assert_eq!(t["name"], "Renamed Tag", "product {}", p["id"]);
            } else {
                assert_ne!(t["name"], "Renamed Tag");
            }
        }
    }
}

#[test]
fn writes_made_while_no_processor_ran_are_caught_up() {
    let st = store();
    load(&st, "blog-v3");
    // Processors run once (leases created at "now"), then stop.
    drain(&st, "blog-v3");
    // A workload without processors leaves the copies behind...
    let options = SimOptions {
        rate: None,
        operations: Some(150),
        processors: false,
        seed: 3,
        scale: SMALL.scale,
        ..SimOptions::new("blog-v3")
    };
    let r = simulate::run(&st.engine, &options, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(r.patterns.contains_key("C2"), "new posts were written");
    assert_eq!(r.processors.changes, 0);
    // ...and the next processor run resumes from the checkpoints and catches up.
    drain(&st, "blog-v3");
    assert_v3_copies(&st.engine);
}
