//! Server-side JavaScript through the engine: stored procedures, triggers and their
//! resources on a real store, with our own versions of the official documentation's
//! example scripts and the modelling guides' ones.

use cosmoscope::engine::{
    Backend, Engine, FeedMode, ScriptKind, ScriptSpec, SprocRequest, TriggerOperation, TriggerType,
    TriggeredOp, TriggeredWrite,
};
use serde_json::{Value, json};

use crate::support::fixture::{self, DB, Fixture, bytes, err};

fn sproc(f: &Fixture, c: &str, id: &str, body: &str) {
    f.engine
        .create_script(
            DB,
            c,
            &ScriptSpec::new(ScriptKind::StoredProcedure, id, body),
        )
        .unwrap_or_else(|e| panic!("create sproc {id}: {e}"));
}

fn exec(
    f: &Fixture,
    c: &str,
    id: &str,
    pk: Value,
    params: Vec<Value>,
) -> cosmoscope::Result<cosmoscope::engine::SprocResponse> {
    f.engine.execute_stored_procedure(
        DB,
        c,
        id,
        &SprocRequest {
            partition_key: pk,
            params,
            enable_log: true,
        },
    )
}

fn count(f: &Fixture, c: &str) -> usize {
    fixture::items(&f.engine, DB, c).len()
}

const HELLO: &str = r#"function helloWorld() {
    var response = getContext().getResponse();
    response.setBody("Hello, World");
}"#;

#[test]
fn hello_world_sets_the_response_body() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(&f, "c", "helloWorld", HELLO);
    let r = exec(&f, "c", "helloWorld", json!("p"), vec![]).unwrap();
    assert_eq!(r.body, Some(json!("Hello, World")));
    assert!(r.request_charge >= 1.0, "{}", r.request_charge);
}

/// Counts its executions in a global, logs and reads the API's state: what an execution
/// leaves must not be seen by the next (the script threads and runtimes are reused).
const LEAKY: &str = r#"function leaky(shadowApi) {
    globalThis.runs = (globalThis.runs || 0) + 1;
    console.log("run " + globalThis.runs);
    getContext().getResponse().setBody({runs: globalThis.runs, before: typeof earlier});
    globalThis.earlier = true;
    if (shadowApi) { getContext = function () { throw new Error("shadowed"); }; }
}"#;

#[test]
fn nothing_an_execution_sets_is_seen_by_the_next() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(&f, "c", "leaky", LEAKY);
    for shadow in [false, false, true, false, true, false] {
        let r = exec(&f, "c", "leaky", json!("p"), vec![json!(shadow)]).unwrap();
        assert_eq!(
            r.body,
            Some(json!({"runs": 1, "before": "undefined"})),
            "a global carried over"
        );
        assert_eq!(r.log.as_deref(), Some("run 1"), "the log carried over");
    }
    // A script stopped by a failure does not spoil the next either.
    sproc(
        &f,
        "c",
        "fails",
        "function fails() { globalThis.runs = 41; throw new Error('no'); }",
    );
    assert!(exec(&f, "c", "fails", json!("p"), vec![]).is_err());
    let r = exec(&f, "c", "leaky", json!("p"), vec![json!(false)]).unwrap();
    assert_eq!(r.body, Some(json!({"runs": 1, "before": "undefined"})));
}

/// The docs' `createMyDocument`-style procedure: creates the item it is given and returns
/// its id; with a flag set and no description it throws, and nothing is written.
const CREATE_ITEM: &str = r#"function createItem(item, requireDescription) {
    var collection = getContext().getCollection();
    var accepted = collection.createDocument(collection.getSelfLink(), item,
        function (err, created) {
            if (err) throw new Error("Error" + err.message);
            if (requireDescription && !created.description) {
                throw new Error("The item must have a description");
            }
            getContext().getResponse().setBody(created.id);
        });
    if (!accepted) return;
}"#;

#[test]
fn a_created_item_is_committed_and_a_throw_rolls_it_back() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(&f, "c", "createItem", CREATE_ITEM);
    let r = exec(
        &f,
        "c",
        "createItem",
        json!("a"),
        vec![
            json!({"id": "1", "pk": "a", "description": "x"}),
            json!(true),
        ],
    )
    .unwrap();
    assert_eq!(r.body, Some(json!("1")));
    assert!(
        r.request_charge > 5.0,
        "the create is charged: {}",
        r.request_charge
    );
    assert_eq!(f.read_json("c", "1", &json!("a"))["description"], "x");

    let before = f.drain_feed("c", FeedMode::AllVersions).len();
    let e = err(exec(
        &f,
        "c",
        "createItem",
        json!("a"),
        vec![json!({"id": "2", "pk": "a"}), json!(true)],
    ));
    assert_eq!(e.status, 400);
    assert!(
        e.message.contains("The item must have a description"),
        "{}",
        e.message
    );
    assert!(
        e.message
            .starts_with("Encountered exception while executing function"),
        "{}",
        e.message
    );
    assert_eq!(count(&f, "c"), 1, "the create was rolled back");
    assert_eq!(
        f.drain_feed("c", FeedMode::AllVersions).len(),
        before,
        "nothing in the change feed"
    );
}

#[test]
fn abort_rolls_back_every_write() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(
        &f,
        "c",
        "writeThenAbort",
        r#"function writeThenAbort() {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: "x", pk: "a"});
        c.upsertDocument(c.getSelfLink(), {id: "y", pk: "a"}, {}, function (err) {
            if (err) throw err;
            getContext().abort(new Error("changed my mind"));
        });
    }"#,
    );
    let e = err(exec(&f, "c", "writeThenAbort", json!("a"), vec![]));
    assert_eq!(e.status, 400);
    assert!(e.message.contains("changed my mind"), "{}", e.message);
    assert_eq!(count(&f, "c"), 0);
    assert!(f.drain_feed("c", FeedMode::AllVersions).is_empty());
}

#[test]
fn an_operation_error_keeps_its_status_when_thrown() {
    let f = fixture::open();
    f.pk_container("c");
    f.create("c", &json!({"id": "dup", "pk": "a"}));
    sproc(
        &f,
        "c",
        "dup",
        r#"function dup() {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: "new", pk: "a"});
        c.createDocument(c.getSelfLink(), {id: "dup", pk: "a"}, function (err) {
            if (err) throw err;
        });
    }"#,
    );
    let e = err(exec(&f, "c", "dup", json!("a"), vec![]));
    assert_eq!(e.status, 409, "{e}");
    assert_eq!(count(&f, "c"), 1, "the first create was rolled back");
}

#[test]
fn an_error_without_a_callback_is_thrown_by_the_runtime() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(
        &f,
        "c",
        "readMissing",
        r#"function readMissing() {
        var c = getContext().getCollection();
        c.readDocument(c.getAltLink() + "/docs/nope");
    }"#,
    );
    let e = err(exec(&f, "c", "readMissing", json!("a"), vec![]));
    assert_eq!(e.status, 404, "{e}");
}

#[test]
fn writes_to_another_logical_partition_are_rejected() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(
        &f,
        "c",
        "elsewhere",
        r#"function elsewhere(catchIt) {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: "1", pk: "other"}, function (err) {
            if (!catchIt) throw err;
            getContext().getResponse().setBody({number: err.number, message: err.message});
        });
    }"#,
    );
    let r = exec(&f, "c", "elsewhere", json!("mine"), vec![json!(true)]).unwrap();
    let body = r.body.unwrap();
    assert_eq!(body["number"], 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("cannot reference partition keys other than the one"),
        "{body}"
    );
    let e = err(exec(
        &f,
        "c",
        "elsewhere",
        json!("mine"),
        vec![json!(false)],
    ));
    assert_eq!(e.status, 400);
    assert!(
        e.message
            .contains("Requests originating from scripts cannot reference partition keys"),
        "{}",
        e.message
    );
    assert_eq!(count(&f, "c"), 0);
}

#[test]
fn items_of_other_partitions_are_invisible() {
    let f = fixture::open();
    f.pk_container("c");
    f.create("c", &json!({"id": "1", "pk": "a", "n": 1}));
    f.create("c", &json!({"id": "2", "pk": "b", "n": 2}));
    sproc(
        &f,
        "c",
        "all",
        r#"function all() {
        var c = getContext().getCollection();
        c.queryDocuments(c.getSelfLink(), "SELECT VALUE r.id FROM r", function (err, ids) {
            if (err) throw err;
            getContext().getResponse().setBody(ids);
        });
    }"#,
    );
    assert_eq!(
        exec(&f, "c", "all", json!("a"), vec![]).unwrap().body,
        Some(json!(["1"]))
    );
    assert_eq!(
        exec(&f, "c", "all", json!("b"), vec![]).unwrap().body,
        Some(json!(["2"]))
    );
}

/// The blog guide's `createComment`: reads the post by its alt link, counts the comment
/// on it, replaces it through `_self`, then creates the comment, in one transaction.
const CREATE_COMMENT: &str = r#"function createComment(postId, comment) {
    var collection = getContext().getCollection();
    collection.readDocument(`${collection.getAltLink()}/docs/${postId}`, function (err, post) {
        if (err) throw err;
        post.commentCount++;
        collection.replaceDocument(post._self, post, function (err) {
            if (err) throw err;
            comment.postId = postId;
            collection.createDocument(collection.getSelfLink(), comment);
        });
    });
}"#;

#[test]
fn the_blogs_create_comment_counts_and_creates_in_one_transaction() {
    let f = fixture::open();
    f.container(
        "posts",
        cosmoscope::engine::ContainerSettings::new(vec!["/postId".into()]),
    );
    f.create(
        "posts",
        &json!({"id": "p1", "postId": "p1", "type": "post", "commentCount": 0}),
    );
    f.engine
        .create_script(
            DB,
            "posts",
            &ScriptSpec::new(ScriptKind::StoredProcedure, "createComment", CREATE_COMMENT),
        )
        .unwrap();
    for i in 0..3 {
        exec(
            &f,
            "posts",
            "createComment",
            json!("p1"),
            vec![
                json!("p1"),
                json!({"id": format!("c{i}"), "type": "comment", "content": "hi"}),
            ],
        )
        .unwrap();
    }
    assert_eq!(f.read_json("posts", "p1", &json!("p1"))["commentCount"], 3);
    let comments = f
        .engine
        .query(
            DB,
            "posts",
            "SELECT VALUE COUNT(1) FROM p WHERE p.type = 'comment'",
            &Default::default(),
        )
        .unwrap();
    assert_eq!(comments.documents[0].value(), &json!(3));
    // A duplicate comment fails the create: the count is not bumped either.
    let e = err(exec(
        &f,
        "posts",
        "createComment",
        json!("p1"),
        vec![json!("p1"), json!({"id": "c0", "type": "comment"})],
    ));
    assert_eq!(e.status, 409);
    assert_eq!(f.read_json("posts", "p1", &json!("p1"))["commentCount"], 3);
}

/// The docs' bulk import: creates items one after another from callbacks and returns how
/// many it created when an operation is not accepted; the caller executes it again with
/// the rest until all are in.
const BULK_IMPORT: &str = r#"function bulkImport(items) {
    var collection = getContext().getCollection();
    var link = collection.getSelfLink();
    var count = 0;
    if (!items) throw new Error("The array is undefined or null.");
    if (items.length == 0) { getContext().getResponse().setBody(0); return; }
    tryCreate(items[count], callback);
    function tryCreate(item, callback) {
        var isAccepted = collection.createDocument(link, item, { disableAutomaticIdGeneration: false }, callback);
        if (!isAccepted) getContext().getResponse().setBody(count);
    }
    function callback(err, item, options) {
        if (err) throw err;
        count++;
        if (count >= items.length) {
            getContext().getResponse().setBody(count);
        } else {
            tryCreate(items[count], callback);
        }
    }
}"#;

#[test]
fn bulk_import_continues_over_several_executions() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(&f, "c", "bulkImport", BULK_IMPORT);
    let items: Vec<Value> = (0..10_000)
        .map(|i| json!({"id": format!("i{i}"), "pk": "bulk", "n": i, "text": "some words to give the item a little weight"}))
        .collect();
    let mut done = 0;
    let mut executions = 0;
    while done < items.len() {
        let r = exec(
            &f,
            "c",
            "bulkImport",
            json!("bulk"),
            vec![Value::Array(items[done..].to_vec())],
        )
        .unwrap();
        let n = r.body.and_then(|b| b.as_u64()).unwrap() as usize;
        assert!(n > 0, "every execution makes progress");
        done += n;
        executions += 1;
        assert!(executions < 100);
    }
    assert!(
        executions > 1,
        "the RU budget split the import: {executions}"
    );
    assert_eq!(count(&f, "c"), 10_000);
}

#[test]
fn an_infinite_loop_is_stopped_and_rolled_back() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(
        &f,
        "c",
        "spin",
        r#"function spin() {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: "before", pk: "a"});
        while (true) {}
    }"#,
    );
    let started = std::time::Instant::now();
    let e = err(exec(&f, "c", "spin", json!("a"), vec![]));
    assert_eq!(e.status, 408, "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(count(&f, "c"), 0);
}

#[test]
fn a_body_that_does_not_compile_is_refused_with_its_position() {
    let f = fixture::open();
    f.pk_container("c");
    let e = err(f.engine.create_script(
        DB,
        "c",
        &ScriptSpec::new(
            ScriptKind::StoredProcedure,
            "bad",
            "function bad() {\n  var x = ;\n}",
        ),
    ));
    assert_eq!(e.status, 400);
    assert!(e.message.contains("compiling"), "{}", e.message);
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.column.is_some());
    let e = err(f.engine.create_script(
        DB,
        "c",
        &ScriptSpec::new(ScriptKind::StoredProcedure, "notfn", "42"),
    ));
    assert_eq!(e.status, 400);
    assert!(
        f.engine
            .list_scripts(DB, "c", ScriptKind::StoredProcedure)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn scripts_are_resources_persisted_and_dropped_with_their_container() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = Engine::open(dir.path()).unwrap();
        engine.create_database(DB).unwrap();
        engine
            .create_container(DB, "c", fixture::pk_settings())
            .unwrap();
        engine
            .create_script(
                DB,
                "c",
                &ScriptSpec::new(ScriptKind::StoredProcedure, "helloWorld", HELLO),
            )
            .unwrap();
        let e = err(engine.create_script(
            DB,
            "c",
            &ScriptSpec::new(ScriptKind::StoredProcedure, "helloWorld", HELLO),
        ));
        assert_eq!(e.status, 409);
        engine
            .create_script(
                DB,
                "c",
                &ScriptSpec::new(
                    ScriptKind::UserDefinedFunction,
                    "tax",
                    "function tax(x) { return x * 0.1; }",
                ),
            )
            .unwrap();
        let e = err(engine.create_script(
            DB,
            "c",
            &ScriptSpec::new(ScriptKind::Trigger, "t", "function t() {}"),
        ));
        assert_eq!(e.status, 400, "a trigger needs its type and operation");
    }
    let engine = Engine::open(dir.path()).unwrap();
    let listed = engine
        .list_scripts(DB, "c", ScriptKind::StoredProcedure)
        .unwrap();
    assert_eq!(listed.len(), 1);
    let json = listed[0].to_json();
    assert_eq!(json["id"], "helloWorld");
    assert!(
        json["_self"].as_str().unwrap().contains("/sprocs/"),
        "{json}"
    );
    let r = engine
        .execute_stored_procedure(
            DB,
            "c",
            "helloWorld",
            &SprocRequest {
                partition_key: json!("x"),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(r.body, Some(json!("Hello, World")));
    let old = engine
        .read_script(DB, "c", ScriptKind::StoredProcedure, "helloWorld")
        .unwrap();
    let replaced = engine
        .replace_script(
            DB,
            "c",
            &ScriptSpec::new(
                ScriptKind::StoredProcedure,
                "helloWorld",
                "function () { getContext().getResponse().setBody(2); }",
            ),
        )
        .unwrap();
    assert_ne!(old.etag, replaced.etag);
    assert_eq!(replaced.rid, old.rid);
    assert_eq!(
        engine
            .execute_stored_procedure(
                DB,
                "c",
                "helloWorld",
                &SprocRequest {
                    partition_key: json!("x"),
                    ..Default::default()
                }
            )
            .unwrap()
            .body,
        Some(json!(2))
    );
    engine
        .delete_script(DB, "c", ScriptKind::UserDefinedFunction, "tax")
        .unwrap();
    assert_eq!(
        err(engine.read_script(DB, "c", ScriptKind::UserDefinedFunction, "tax")).status,
        404
    );
    engine.delete_container(DB, "c").unwrap();
    engine
        .create_container(DB, "c", fixture::pk_settings())
        .unwrap();
    assert!(
        engine
            .list_scripts(DB, "c", ScriptKind::StoredProcedure)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        err(engine.execute_stored_procedure(
            DB,
            "c",
            "helloWorld",
            &SprocRequest {
                partition_key: json!("x"),
                ..Default::default()
            }
        ))
        .status,
        404
    );
}

#[test]
fn queries_page_with_continuations_and_the_shorthand_filters() {
    let f = fixture::open();
    f.pk_container("c");
    for i in 0..25 {
        f.create(
            "c",
            &json!({"id": format!("{i:02}"), "pk": "a", "n": i, "tags": [i % 2, i % 3]}),
        );
    }
    sproc(
        &f,
        "c",
        "pages",
        r#"function pages(prefix) {
        var c = getContext().getCollection();
        var pages = 0, ids = [];
        run();
        function run(token) {
            var accepted = c.queryDocuments(c.getSelfLink(),
                {query: "SELECT r.id FROM r WHERE r.n >= @min ORDER BY r.id", parameters: [{name: "@min", value: 5}]},
                {pageSize: 7, continuation: token},
                function (err, docs, options) {
                    if (err) throw err;
                    pages++;
                    docs.forEach(function (d) { ids.push(d.id); });
                    if (options.continuation) run(options.continuation);
                    else getContext().getResponse().setBody({pages: pages, count: ids.length, first: ids[0]});
                });
            if (!accepted) throw new Error("not accepted");
        }
    }"#,
    );
    let body = exec(&f, "c", "pages", json!("a"), vec![])
        .unwrap()
        .body
        .unwrap();
    assert_eq!(body, json!({"pages": 3, "count": 20, "first": "05"}));

    sproc(
        &f,
        "c",
        "fluent",
        r#"function fluent() {
        var result = __.chain()
            .filter(function (d) { return d.n % 5 === 0; })
            .sortByDescending(function (d) { return d.n; })
            .pluck("n")
            .value(function (err, ns) {
                if (err) throw err;
                __.filter(function (d) { return d.n < 2; }, function (err, small) {
                    console.log("small", small.length);
                    getContext().getResponse().setBody({ns: ns, small: small.length, flat: [[1, [2]], [3]]});
                });
            });
        if (!result.isAccepted) throw new Error("not accepted");
    }"#,
    );
    let r = exec(&f, "c", "fluent", json!("a"), vec![]).unwrap();
    assert_eq!(r.body.unwrap()["ns"], json!([20, 15, 10, 5, 0]));
    assert_eq!(r.log.as_deref(), Some("small 2"));
}

#[test]
fn async_scripts_with_promises_run_to_the_end() {
    let f = fixture::open();
    f.pk_container("c");
    f.create("c", &json!({"id": "1", "pk": "a", "n": 1}));
    sproc(
        &f,
        "c",
        "asyncBump",
        r#"async function asyncBump(id) {
        const c = getContext().getCollection();
        const read = (link) => new Promise((resolve, reject) => {
            const ok = c.readDocument(link, (err, doc) => err ? reject(err) : resolve(doc));
            if (!ok) reject(new Error("not accepted"));
        });
        const replace = (doc) => new Promise((resolve, reject) => {
            c.replaceDocument(doc._self, doc, (err, d) => err ? reject(err) : resolve(d));
        });
        const doc = await read(`${c.getAltLink()}/docs/${id}`);
        doc.n += 1;
        const stored = await replace(doc);
        getContext().getResponse().setBody(stored.n);
    }"#,
    );
    assert_eq!(
        exec(&f, "c", "asyncBump", json!("a"), vec![json!("1")])
            .unwrap()
            .body,
        Some(json!(2))
    );
    let e = err(exec(
        &f,
        "c",
        "asyncBump",
        json!("a"),
        vec![json!("missing")],
    ));
    assert_eq!(e.status, 404, "a rejected await fails the script: {e}");
}

/// The docs' pre-trigger: stamps a timestamp on an item that has none.
const STAMP: &str = r#"function validateItemTimestamp() {
    var request = getContext().getRequest();
    var item = request.getBody();
    if (!("timestamp" in item)) {
        item["timestamp"] = "2026-01-01T00:00:00Z";
    }
    request.setBody(item);
}"#;

/// A post-trigger in the docs' `updateMetadata` style: keeps a count document in the same
/// logical partition; it throws on a marker, to undo the write.
const COUNT_POST: &str = r#"function countItems() {
    var c = getContext().getCollection();
    var created = getContext().getResponse().getBody() || {id: "deleted", pk: "a"};
    if (created.fail) throw new Error("post-trigger refused " + created.id);
    c.queryDocuments(c.getSelfLink(), "SELECT * FROM r WHERE r.id = 'meta'", function (err, docs) {
        if (err) throw err;
        var meta = docs.length ? docs[0] : {id: "meta", pk: created.pk, count: 0};
        meta.count += 1;
        c.upsertDocument(c.getSelfLink(), meta, function (err) { if (err) throw err; });
    });
}"#;

fn trigger(f: &Fixture, id: &str, body: &str, t: TriggerType, op: TriggerOperation) {
    f.engine
        .create_script(DB, "c", &ScriptSpec::trigger(id, body, t, op))
        .unwrap_or_else(|e| panic!("create trigger {id}: {e}"));
}

fn triggered(
    f: &Fixture,
    op: TriggeredOp,
    pre: Option<&str>,
    post: Option<&str>,
) -> cosmoscope::Result<cosmoscope::engine::ItemResponse> {
    f.engine.write_item_with_triggers(
        DB,
        "c",
        &TriggeredWrite {
            op,
            if_match: None,
            pre_trigger: pre.map(str::to_string),
            post_trigger: post.map(str::to_string),
        },
    )
}

#[test]
fn triggers_run_in_the_writes_transaction() {
    let f = fixture::open();
    f.pk_container("c");
    trigger(
        &f,
        "stamp",
        STAMP,
        TriggerType::Pre,
        TriggerOperation::Create,
    );
    trigger(
        &f,
        "count",
        COUNT_POST,
        TriggerType::Post,
        TriggerOperation::All,
    );

    let r = triggered(
        &f,
        TriggeredOp::Create(bytes(&json!({"id": "1", "pk": "a"}))),
        Some("stamp"),
        Some("count"),
    )
    .unwrap();
    let stored: Value = serde_json::from_slice(r.body.as_deref().unwrap()).unwrap();
    assert_eq!(
        stored["timestamp"], "2026-01-01T00:00:00Z",
        "the pre-trigger changed the item"
    );
    assert_eq!(f.read_json("c", "meta", &json!("a"))["count"], 1);
    triggered(
        &f,
        TriggeredOp::Upsert(bytes(&json!({"id": "2", "pk": "a"}))),
        None,
        Some("count"),
    )
    .unwrap();
    assert_eq!(f.read_json("c", "meta", &json!("a"))["count"], 2);

    // A throwing post-trigger undoes the write and its own work.
    let feed = f.drain_feed("c", FeedMode::AllVersions).len();
    let e = err(triggered(
        &f,
        TriggeredOp::Create(bytes(&json!({"id": "3", "pk": "a", "fail": true}))),
        None,
        Some("count"),
    ));
    assert_eq!(e.status, 400);
    assert!(
        e.message.contains("post-trigger refused 3"),
        "{}",
        e.message
    );
    assert_eq!(
        err(f.engine.read_item(DB, "c", "3", &json!("a"))).status,
        404
    );
    assert_eq!(f.drain_feed("c", FeedMode::AllVersions).len(), feed);

    // A trigger named on the wrong kind of write or as the wrong type is refused, and a
    // missing one is not found.
    let item = || bytes(&json!({"id": "4", "pk": "a"}));
    for (op, pre, status) in [
        (TriggeredOp::Upsert(item()), "stamp", 400),
        (TriggeredOp::Create(item()), "count", 400),
        (TriggeredOp::Create(item()), "missing", 404),
    ] {
        assert_eq!(
            err(triggered(&f, op, Some(pre), None)).status,
            status,
            "{pre}"
        );
    }

    // Deletes run their post-trigger too.
    triggered(
        &f,
        TriggeredOp::Delete {
            id: "1".into(),
            partition_key: json!("a"),
        },
        None,
        Some("count"),
    )
    .unwrap();
    assert_eq!(f.read_json("c", "meta", &json!("a"))["count"], 3);
}

/// The docs' UDF: a tiered tax on an income, which throws when there is none.
const TAX: &str = r#"function tax(income) {
    if (income == undefined) throw "no input";
    if (income < 1000) return income * 0.1;
    else if (income < 10000) return income * 0.2;
    else return income * 0.4;
}"#;

fn udf_query(f: &Fixture, sql: &str) -> cosmoscope::Result<Vec<Value>> {
    f.engine
        .query(DB, "c", sql, &Default::default())
        .map(|r| r.documents.iter().map(|d| d.value().clone()).collect())
}

#[test]
fn udfs_in_queries_equal_the_same_logic_in_sql() {
    let f = fixture::open();
    f.pk_container("c");
    for (i, income) in [500, 999, 1000, 5000, 9999, 10000, 250000]
        .iter()
        .enumerate()
    {
        f.create(
            "c",
            &json!({"id": format!("{i}"), "pk": format!("p{}", i % 3), "income": income}),
        );
    }
    let e = err(udf_query(&f, "SELECT VALUE udf.tax(c.income) FROM c"));
    assert_eq!(e.status, 400, "no such UDF yet: {e}");
    f.engine
        .create_script(
            DB,
            "c",
            &ScriptSpec::new(ScriptKind::UserDefinedFunction, "tax", TAX),
        )
        .unwrap();
    let by_udf = udf_query(
        &f,
        "SELECT c.id, udf.tax(c.income) AS tax FROM c WHERE udf.tax(c.income) > 100 ORDER BY c.id",
    )
    .unwrap();
    let by_sql = udf_query(
        &f,
        "SELECT c.id, (c.income < 1000 ? c.income * 0.1 : (c.income < 10000 ? c.income * 0.2 : c.income * 0.4)) AS tax \
         FROM c WHERE (c.income < 1000 ? c.income * 0.1 : (c.income < 10000 ? c.income * 0.2 : c.income * 0.4)) > 100 ORDER BY c.id",
    )
    .unwrap();
    assert_eq!(by_udf, by_sql);
    assert_eq!(by_udf.len(), 5, "{by_udf:?}");
    // Nested in other expressions, with a subquery and a constructed argument.
    let v = udf_query(&f, "SELECT VALUE {t: udf.tax(ABS(-2000)), n: (SELECT VALUE COUNT(1) FROM x IN [udf.tax(10)])} FROM c WHERE c.id = '0'").unwrap();
    assert_eq!(v, vec![json!({"t": 400, "n": 1})]);
    // A throwing UDF fails the query with a 400.
    f.create("c", &json!({"id": "none", "pk": "p0"}));
    let e = err(udf_query(&f, "SELECT VALUE udf.tax(c.income) FROM c"));
    assert_eq!(e.status, 400);
    assert!(e.message.contains("no input"), "{}", e.message);
}

#[test]
fn runaway_recursion_and_memory_fail_cleanly() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(
        &f,
        "c",
        "deep",
        "function deep() { function r(n) { return r(n + 1) + 1; } r(0); }",
    );
    let e = err(exec(&f, "c", "deep", json!("a"), vec![]));
    assert_eq!(e.status, 400, "{e}");
    assert!(e.message.to_lowercase().contains("stack"), "{}", e.message);
    sproc(
        &f,
        "c",
        "hog",
        "function hog() { var a = []; for (;;) { a.push(new Array(1000000).fill(1)); } }",
    );
    let e = err(exec(&f, "c", "hog", json!("a"), vec![]));
    assert!(e.status == 400 || e.status == 408, "{e}");
    // The engine still serves scripts afterwards.
    sproc(&f, "c", "helloWorld", HELLO);
    assert_eq!(
        exec(&f, "c", "helloWorld", json!("a"), vec![])
            .unwrap()
            .body,
        Some(json!("Hello, World"))
    );
}

#[test]
fn odd_inputs_are_request_errors() {
    let f = fixture::open();
    f.pk_container("c");
    sproc(
        &f,
        "c",
        "odd",
        r#"function odd(kind) {
        var c = getContext().getCollection();
        if (kind === "notObject") c.createDocument(c.getSelfLink(), 42);
        if (kind === "badLink") c.createDocument("dbs/x/colls/y", {id: "1", pk: "a"});
        if (kind === "badDocLink") c.readDocument("nonsense");
        if (kind === "badQuery") c.queryDocuments(c.getSelfLink(), "SELEC * FROM c", function (err) { if (err) throw err; });
        if (kind === "throwString") throw "plain string";
        if (kind === "throwObject") throw {code: 7};
        if (kind === "noCallbackFn") c.createDocument(c.getSelfLink(), {id: "1", pk: "a"}, {}, 5);
    }"#,
    );
    for kind in [
        "notObject",
        "badLink",
        "badDocLink",
        "badQuery",
        "throwString",
        "throwObject",
        "noCallbackFn",
    ] {
        let e = err(exec(&f, "c", "odd", json!("a"), vec![json!(kind)]));
        assert_eq!(e.status, 400, "{kind}: {e}");
    }
    assert_eq!(count(&f, "c"), 0);
    // A missing partition key, or one of the wrong shape.
    assert_eq!(
        err(exec(&f, "c", "odd", json!(["a", "b"]), vec![])).status,
        400
    );
}
