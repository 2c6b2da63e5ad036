//! The bundled sample sets through the engine on a temporary data directory: every set
//! loads with the documented partition keys, the generators are deterministic and keep the
//! blog's distribution, and each denormalized design agrees with the data it copies.

use cosmoscope::engine::Backend;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use cosmoscope::samples::manifest::GeneratorRef;
use cosmoscope::samples::{self, Generator, LoadOptions, LoadReport, Sink, blog};
use serde_json::Value;

use crate::support::fixture::{Store, items, of_type, store, str_of};

/// Small enough for a debug build: a few blog users, a hundred customers.
const SMALL: LoadOptions = LoadOptions {
    scale: 0.25,
    seed: 11,
};

fn load(s: &Store, name: &str, options: LoadOptions) -> LoadReport {
    samples::load(&s.engine, name, &options, &mut |_| true)
        .unwrap_or_else(|e| panic!("load {name}: {e}"))
}

/// Generates a set in memory: every item as bytes, per stream, in order.
#[derive(Default)]
struct Collect(BTreeMap<String, Vec<Vec<u8>>>);

impl Sink for Collect {
    fn emit(&mut self, stream: &str, json: &[u8]) -> cosmoscope::Result<()> {
        self.0
            .entry(stream.to_string())
            .or_default()
            .push(json.to_vec());
        Ok(())
    }
}

fn generate(name: &str, design: &str, scale: f64, seed: u64) -> Collect {
    let r = GeneratorRef {
        name: name.into(),
        design: design.into(),
    };
    let mut out = Collect::default();
    Generator::new(&r, scale, seed)
        .and_then(|g| g.run(&mut out))
        .unwrap_or_else(|e| panic!("generate {name} {design}: {e}"));
    out
}

fn parsed(items: &[Vec<u8>]) -> Vec<Value> {
    items
        .iter()
        .map(|b| serde_json::from_slice(b).expect("generated JSON"))
        .collect()
}

#[test]
fn every_sample_loads_with_the_documented_partition_keys() {
    let expected: &[(&str, &[(&str, &str)])] = &[
        (
            "modeling",
            &[
                ("people", "/id"),
                ("posts", "/postId"),
                ("portfolios", "/id"),
                ("stocks", "/id"),
                ("publishers", "/id"),
                ("books", "/pub-id"),
                ("authors", "/id"),
                ("bookReviews", "/bookId"),
            ],
        ),
        (
            "webstore-relational",
            &[
                ("customer", "/id"),
                ("customerAddress", "/id"),
                ("customerPassword", "/id"),
                ("product", "/id"),
                ("productCategory", "/id"),
                ("productTag", "/id"),
                ("productTags", "/id"),
                ("salesOrder", "/id"),
                ("salesOrderDetail", "/id"),
            ],
        ),
        (
            "webstore",
            &[
                ("customer", "/customerId"),
                ("product", "/categoryId"),
                ("productMeta", "/type"),
            ],
        ),
        ("blog-v1", &[("users", "/id"), ("posts", "/postId")]),
        ("blog-v2", &[("users", "/id"), ("posts", "/postId")]),
        (
            "blog-v3",
            &[
                ("users", "/userId"),
                ("posts", "/postId"),
                ("feed", "/type"),
            ],
        ),
    ];
    let s = store();
    let mut last = 0;
    let reports = samples::load_all_defaults(&s.engine, &mut |p| {
        assert!(
            p.done >= last && p.done <= p.total,
            "progress moves forward"
        );
        last = p.done;
        true
    })
    .expect("load every sample");
    let listed = samples::list().expect("list");
    assert_eq!(reports.len(), expected.len());
    assert_eq!(
        last,
        listed.iter().map(|i| i.default_item_count).sum::<u64>()
    );
    for ((set, containers), (report, info)) in expected.iter().zip(reports.iter().zip(&listed)) {
        assert_eq!(report.name, *set);
        assert_eq!(info.name, *set);
        assert_eq!(report.items, info.default_item_count, "{set}");
        let actual = s.engine.list_containers(Some(set)).expect("containers");
        assert_eq!(actual.len(), containers.len(), "{set} has its containers");
        for (name, key) in *containers {
            let c = s
                .engine
                .container(set, name)
                .unwrap_or_else(|e| panic!("{set}/{name}: {e}"));
            assert_eq!(c.partition_key.paths, vec![key.to_string()], "{set}/{name}");
            let planned = info.databases[0]
                .containers
                .iter()
                .find(|x| x.id == *name)
                .expect("listed container");
            assert_eq!(c.statistics.item_count, planned.items, "{set}/{name} items");
            assert!(c.statistics.item_count > 0, "{set}/{name} is not empty");
        }
    }
    // The blog's posts spread over several physical partitions, so fan-out shows.
    for set in ["blog-v1", "blog-v2", "blog-v3"] {
        let posts = s.engine.container(set, "posts").expect("posts");
        assert!(posts.partition_count >= 4, "{set}/posts has 4+ ranges");
    }
}

#[test]
fn generators_are_deterministic() {
    for (name, design) in [
        ("blog", "v1"),
        ("blog", "v3"),
        ("webstore", "relational"),
        ("webstore", "denormalized"),
    ] {
        let a = generate(name, design, 0.2, 5);
        let b = generate(name, design, 0.2, 5);
        assert!(!a.0.is_empty());
        assert_eq!(a.0, b.0, "{name} {design}: same seed, same bytes");
        let c = generate(name, design, 0.2, 6);
        assert_eq!(
            a.0.keys().collect::<Vec<_>>(),
            c.0.keys().collect::<Vec<_>>()
        );
        assert_ne!(a.0, c.0, "{name} {design}: another seed, other data");
    }
    // Through the store too: two loads with one seed hold the same items.
    let (x, y) = (store(), store());
    load(&x, "blog-v2", SMALL);
    load(&y, "blog-v2", SMALL);
    for c in ["users", "posts"] {
        assert_eq!(
            items(&x.engine, "blog-v2", c),
            items(&y.engine, "blog-v2", c)
        );
    }
}

#[test]
fn scale_grows_the_generated_sets() {
    let count = |scale: f64| {
        let plan = generate("webstore", "denormalized", scale, 1);
        plan.0.values().map(Vec::len).sum::<usize>()
    };
    let (one, four) = (count(0.5), count(2.0));
    assert!(
        four > one * 3 && four < one * 5,
        "4× the scale is about 4× the items: {one} → {four}"
    );
}

#[test]
fn the_blog_keeps_its_distribution() {
    let g = generate("blog", "v2", 4.0, 3);
    let users = parsed(&g.0["users"]);
    let posts = parsed(&g.0["posts"]);
    let mut per_user: HashMap<&str, u64> = HashMap::new();
    let mut comments: HashMap<&str, u64> = HashMap::new();
    let mut likers: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    let mut likes: HashMap<&str, u64> = HashMap::new();
    let post_dates: HashMap<&str, &str> = of_type(&posts, "post")
        .into_iter()
        .map(|p| (str_of(&p["postId"]), str_of(&p["creationDate"])))
        .collect();
    for item in &posts {
        let post = str_of(&item["postId"]);
        match str_of(&item["type"]) {
            "post" => {
                *per_user.entry(str_of(&item["userId"])).or_default() += 1;
                let title_words = str_of(&item["title"]).split(' ').count();
                assert!((3..=9).contains(&title_words));
                let content = str_of(&item["content"]);
                assert!(
                    content.len() > 200 && content.contains("\n\n"),
                    "posts have paragraphs"
                );
            }
            "comment" => {
                *comments.entry(post).or_default() += 1;
                assert!(
                    str_of(&item["creationDate"]) >= post_dates[post],
                    "comments follow their post"
                );
            }
            "like" => {
                *likes.entry(post).or_default() += 1;
                assert!(
                    likers
                        .entry(post)
                        .or_default()
                        .insert(str_of(&item["userId"])),
                    "one like per user"
                );
            }
            other => panic!("unexpected type {other}"),
        }
    }
    assert_eq!(per_user.len(), users.len(), "every user posts");
    assert!(
        per_user.values().all(|n| (5..=50).contains(n)),
        "5–50 posts per user"
    );
    assert!(comments.values().all(|n| *n <= 25) && likes.values().all(|n| *n <= 100));
    assert!(
        comments.values().any(|n| *n >= 20),
        "some posts draw many comments"
    );
    assert!(
        likes.values().any(|n| *n >= 80),
        "some posts draw many likes"
    );
    for date in post_dates.values() {
        assert_eq!(date.len(), 24, "ISO 8601 with milliseconds: {date}");
        assert!(date.ends_with('Z') && date.as_bytes()[10] == b'T');
        assert!(("2019"..="2025-06").contains(&&date[..7]));
    }
}

#[test]
fn v2_counts_and_usernames_match_the_generated_items() {
    let s = store();
    load(&s, "blog-v2", SMALL);
    let users: HashMap<String, String> = items(&s.engine, "blog-v2", "users")
        .iter()
        .map(|u| (string_of(&u["id"]), string_of(&u["username"])))
        .collect();
    let posts = items(&s.engine, "blog-v2", "posts");
    let mut counts: HashMap<&str, (u64, u64)> = HashMap::new();
    for item in &posts {
        assert_eq!(
            item["userUsername"],
            users[str_of(&item["userId"])],
            "username copied in"
        );
        let e = counts.entry(str_of(&item["postId"])).or_default();
        match str_of(&item["type"]) {
            "comment" => e.0 += 1,
            "like" => e.1 += 1,
            _ => {}
        }
    }
    let post_items = of_type(&posts, "post");
    assert!(!post_items.is_empty());
    for p in post_items {
        let (c, l) = counts[str_of(&p["postId"])];
        assert_eq!(p["commentCount"], c, "commentCount of {}", p["id"]);
        assert_eq!(p["likeCount"], l, "likeCount of {}", p["id"]);
    }
}

fn string_of(v: &Value) -> String {
    str_of(v).to_string()
}

#[test]
fn v3_feed_holds_the_newest_posts_and_users_hold_every_post() {
    let s = store();
    load(
        &s,
        "blog-v3",
        LoadOptions {
            scale: 0.2,
            seed: 4,
        },
    );
    let posts = items(&s.engine, "blog-v3", "posts");
    let mut full: Vec<&Value> = of_type(&posts, "post");
    assert!(
        full.len() > blog::FEED_SIZE,
        "enough posts to trim the feed"
    );
    full.sort_by(|a, b| {
        (str_of(&b["creationDate"]), str_of(&b["id"]))
            .cmp(&(str_of(&a["creationDate"]), str_of(&a["id"])))
    });
    let newest: Vec<Value> = full[..blog::FEED_SIZE]
        .iter()
        .map(|p| blog::short_form(p))
        .collect();
    let mut feed = items(&s.engine, "blog-v3", "feed");
    feed.sort_by(|a, b| {
        (str_of(&b["creationDate"]), str_of(&b["id"]))
            .cmp(&(str_of(&a["creationDate"]), str_of(&a["id"])))
    });
    assert_eq!(feed, newest, "feed = short forms of the 100 newest posts");
    assert!(feed.iter().all(|f| f["type"] == "post"));

    let users = items(&s.engine, "blog-v3", "users");
    let copies: HashMap<&str, &Value> = of_type(&users, "post")
        .into_iter()
        .map(|c| (str_of(&c["postId"]), c))
        .collect();
    assert_eq!(copies.len(), full.len(), "one copy per post");
    for p in &full {
        let copy = copies[str_of(&p["postId"])];
        assert_eq!(*copy, blog::short_form(p));
        assert_eq!(copy["content"], blog::summary(str_of(&p["content"])));
        assert!(str_of(&copy["content"]).chars().count() <= blog::SUMMARY_CHARS + 1);
    }
    for u in of_type(&users, "user") {
        assert_eq!(u["userId"], u["id"], "user items carry their partition key");
    }
}

#[test]
fn webstore_sales_order_count_equals_the_orders() {
    let s = store();
    load(&s, "webstore", SMALL);
    let items = items(&s.engine, "webstore", "customer");
    let mut orders: HashMap<&str, u64> = HashMap::new();
    for o in of_type(&items, "salesOrder") {
        *orders.entry(str_of(&o["customerId"])).or_default() += 1;
        let n = o["details"].as_array().expect("details embedded").len();
        assert!((1..=5).contains(&n), "1–5 details per order");
    }
    let customers = of_type(&items, "customer");
    assert!(!customers.is_empty() && !orders.is_empty());
    for c in customers {
        assert_eq!(c["customerId"], c["id"]);
        let expected = orders.get(str_of(&c["id"])).copied().unwrap_or(0);
        assert_eq!(
            c["salesOrderCount"], expected,
            "salesOrderCount of {}",
            c["id"]
        );
        assert!(!c["addresses"].as_array().expect("addresses").is_empty());
        assert!(c["password"]["hash"].is_string());
    }
    // Products carry their category's name and their tags' names.
    let meta = items_of(&s, "webstore", "productMeta");
    let names: HashMap<&str, &str> = meta
        .iter()
        .map(|m| (str_of(&m["id"]), str_of(&m["name"])))
        .collect();
    for p in items_of(&s, "webstore", "product") {
        assert_eq!(names[str_of(&p["categoryId"])], str_of(&p["categoryName"]));
        for t in p["tags"].as_array().expect("tags") {
            assert_eq!(names[str_of(&t["id"])], str_of(&t["name"]));
        }
    }
}

fn items_of(s: &Store, db: &str, c: &str) -> Vec<Value> {
    items(&s.engine, db, c)
}

#[test]
fn both_webstore_designs_hold_the_same_store() {
    let s = store();
    load(&s, "webstore", SMALL);
    load(&s, "webstore-relational", SMALL);
    let person = |c: &Value| {
        (
            string_of(&c["id"]),
            string_of(&c["firstName"]),
            string_of(&c["lastName"]),
            string_of(&c["emailAddress"]),
        )
    };
    let denorm = items_of(&s, "webstore", "customer");
    let a: BTreeSet<_> = of_type(&denorm, "customer")
        .into_iter()
        .map(person)
        .collect();
    let b: BTreeSet<_> = items_of(&s, "webstore-relational", "customer")
        .iter()
        .map(person)
        .collect();
    assert!(!a.is_empty());
    assert_eq!(a, b, "the same customers");

    let order = |o: &Value| {
        (
            string_of(&o["id"]),
            string_of(&o["customerId"]),
            string_of(&o["orderDate"]),
        )
    };
    let a: BTreeSet<_> = of_type(&denorm, "salesOrder")
        .into_iter()
        .map(order)
        .collect();
    let b: BTreeSet<_> = items_of(&s, "webstore-relational", "salesOrder")
        .iter()
        .map(order)
        .collect();
    assert_eq!(a, b, "the same orders");
    let details: usize = of_type(&denorm, "salesOrder")
        .iter()
        .map(|o| o["details"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(
        details,
        items_of(&s, "webstore-relational", "salesOrderDetail").len()
    );
    let addresses: usize = of_type(&denorm, "customer")
        .iter()
        .map(|c| c["addresses"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(
        addresses,
        items_of(&s, "webstore-relational", "customerAddress").len()
    );

    let product = |p: &Value| {
        (
            string_of(&p["id"]),
            string_of(&p["sku"]),
            string_of(&p["categoryId"]),
        )
    };
    let a: BTreeSet<_> = items_of(&s, "webstore", "product")
        .iter()
        .map(product)
        .collect();
    let b: BTreeSet<_> = items_of(&s, "webstore-relational", "product")
        .iter()
        .map(product)
        .collect();
    assert_eq!(a, b, "the same products");
    assert_eq!(
        items_of(&s, "webstore", "productMeta").len(),
        items_of(&s, "webstore-relational", "productCategory").len()
            + items_of(&s, "webstore-relational", "productTag").len()
    );
}

#[test]
fn bad_loads_are_refused_before_writing() {
    let s = store();
    load(&s, "modeling", LoadOptions::default());
    let again = samples::load(&s.engine, "modeling", &LoadOptions::default(), &mut |_| {
        true
    });
    let e = again.expect_err("loading over an existing database");
    assert_eq!(e.status.as_u16(), 409);
    assert!(e.message.contains("db delete modeling"), "{}", e.message);
    assert_eq!(s.engine.list_containers(Some("modeling")).unwrap().len(), 8);

    let e = samples::load(&s.engine, "nope", &LoadOptions::default(), &mut |_| true).unwrap_err();
    assert_eq!(e.status.as_u16(), 404);
    assert!(
        e.message.contains("blog-v3"),
        "names the sets: {}",
        e.message
    );
    for scale in [0.0, -1.0, f64::NAN, 1e9] {
        let o = LoadOptions { scale, seed: 1 };
        let e = samples::load(&s.engine, "blog-v1", &o, &mut |_| true).unwrap_err();
        assert_eq!(e.status.as_u16(), 400, "scale {scale}");
    }
    let o = LoadOptions {
        scale: 2.0,
        seed: 1,
    };
    assert_eq!(
        samples::load(&s.engine, "modeling", &o, &mut |_| true)
            .unwrap_err()
            .status,
        400
    );
    assert_eq!(
        s.engine.list_databases().unwrap().len(),
        1,
        "nothing else was created"
    );
}

#[test]
fn a_load_can_be_cancelled_between_batches() {
    let s = store();
    let e = samples::load(&s.engine, "blog-v1", &SMALL, &mut |_| false).unwrap_err();
    assert_eq!(e.status.as_u16(), 499);
    let written: u64 = s
        .engine
        .list_containers(Some("blog-v1"))
        .unwrap()
        .iter()
        .map(|c| c.statistics.item_count)
        .sum();
    let planned = samples::info("blog-v1").unwrap().default_item_count;
    assert!(written > 0 && written < planned, "stopped early: {written}");
}

#[test]
fn first_launch_leaves_used_stores_alone() {
    let s = store();
    s.engine.create_database("mine").unwrap();
    let loaded = samples::first_launch(&s.engine, s.engine.data_dir(), &mut |_| true).unwrap();
    assert!(
        loaded.is_none(),
        "a store with databases is not first launch"
    );
    assert_eq!(s.engine.list_databases().unwrap().len(), 1);

    let t = store();
    std::fs::write(t.engine.data_dir().join(samples::FIRST_LAUNCH_MARKER), "").unwrap();
    let loaded = samples::first_launch(&t.engine, t.engine.data_dir(), &mut |_| true).unwrap();
    assert!(
        loaded.is_none(),
        "samples are offered once, not after the user deleted them"
    );
    assert!(t.engine.list_databases().unwrap().is_empty());
}
