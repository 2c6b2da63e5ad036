//! The workbench through its library API on a temporary store: every pattern gets a row
//! for every design with positive charges and the routing each design implies, the JSON
//! has the documented shape, and bad suites and runs fail with clear errors.

use cosmoscope::engine::{Backend, QueryOptions};
use cosmoscope::workbench::{self, Report, RunOptions, RunProgress, Suite};
use serde_json::Value;

use crate::support::fixture::{Store, store};

/// Small data and few iterations: a debug build runs the blog suite in seconds.
fn options() -> RunOptions {
    RunOptions {
        scale: 0.25,
        iterations: 3,
        ..RunOptions::default()
    }
}

fn run(st: &Store, suite: &str) -> Report {
    let suite = Suite::builtin(suite).unwrap();
    workbench::run(&st.engine, &suite, &options(), &mut |_| true)
        .unwrap_or_else(|e| panic!("workbench: {e}"))
}

fn row<'a>(r: &'a Report, id: &str) -> &'a workbench::PatternReport {
    r.patterns
        .iter()
        .find(|p| p.id == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

#[test]
fn the_blog_suite_compares_the_three_designs() {
    let st = store();
    let mut stages = Vec::new();
    let suite = Suite::builtin("blog").unwrap();
    let report = workbench::run(&st.engine, &suite, &options(), &mut |p| {
        let stage = match p {
            RunProgress::Loading { .. } => "loading",
            RunProgress::Running { .. } => "running",
            RunProgress::Draining => "draining",
        };
        if stages.last() != Some(&stage) {
            stages.push(stage);
        }
        true
    })
    .unwrap();
    assert_eq!(stages, ["loading", "running", "draining"]);
    assert_eq!(report.loaded, ["blog-v1", "blog-v2", "blog-v3"]);

    let ids: Vec<&str> = report.patterns.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "C1", "Q1", "C2", "C2s", "Q2", "Q3", "C3", "C3s", "Q4", "C4", "C4s", "Q5", "Q6", "C1e",
            "C1es"
        ]
    );
    for p in &report.patterns {
        let designs: Vec<&str> = p.designs.0.iter().map(|d| d.design.as_str()).collect();
        // The script rows run where the guide denormalizes: v2 and v3 (the feed: v3).
        let expected: &[&str] = match p.id.as_str() {
            "C2s" => &["v3"],
            id if id.ends_with('s') => &["v2", "v3"],
            _ => &["v1", "v2", "v3"],
        };
        assert_eq!(designs, expected, "{}", p.id);
        for d in &p.designs.0 {
            let at = format!("{} on {}", p.id, d.design);
            assert!(d.request_charge > 0.0, "{at}: charge");
            assert!(d.requests >= 1 && d.partitions_touched >= 1, "{at}");
            assert_eq!(d.iterations, 3, "{at}");
            assert!(
                d.latency_ms >= 0.0 && d.latency_ms_p95 >= d.latency_ms,
                "{at}"
            );
            assert!(d.request_charge_min <= d.request_charge, "{at}");
            assert!(d.request_charge <= d.request_charge_max, "{at}");
            let counted: Vec<_> = d.operations.iter().filter(|o| !o.setup).collect();
            assert_eq!(counted.len(), d.requests, "{at}: one operation per request");
            assert!(counted.iter().all(|o| o.request_charge > 0.0), "{at}");
            assert_eq!(
                p.kind,
                if p.id.starts_with('C') {
                    "command"
                } else {
                    "query"
                }
            );
        }
    }

    // The article's headline: Q6 is one single-partition query in v3, a fan-out plus
    // follow-ups in v1; Q3 in v1 fans out.
    let q6 = row(&report, "Q6");
    let v3 = q6.design("v3").unwrap();
    assert_eq!(v3.routing, "single-partition");
    assert_eq!((v3.requests, v3.partitions_touched), (1, 1));
    assert_eq!(v3.operations[0].container, "feed");
    let v1 = q6.design("v1").unwrap();
    assert_eq!(v1.routing, "fan-out");
    assert_eq!(v1.operations[0].routing, "fan-out");
    assert_eq!(v1.operations[0].partitions.len(), 4, "posts has 4 ranges");
    assert!(v1.requests > 100, "v1 follows up per post: {}", v1.requests);
    assert!(v1.request_charge > 10.0 * v3.request_charge);
    assert_eq!(row(&report, "Q3").design("v1").unwrap().routing, "fan-out");
    assert_eq!(row(&report, "Q3").design("v2").unwrap().routing, "fan-out");
    assert_eq!(
        row(&report, "Q3").design("v3").unwrap().routing,
        "single-partition"
    );
    // Denormalized reads are one request; v1 needs follow-ups.
    let q2 = row(&report, "Q2");
    assert_eq!(q2.design("v1").unwrap().requests, 4);
    assert_eq!(q2.design("v2").unwrap().requests, 1);
    // v2/v3 pay for their counters at write time: a batch, with the setup read not counted.
    let c3 = row(&report, "C3").design("v2").unwrap();
    assert_eq!(c3.requests, 1);
    assert_eq!(c3.operations.iter().filter(|o| o.setup).count(), 1);
    assert!(c3.request_charge > row(&report, "C3").design("v1").unwrap().request_charge);

    // The processors ran while the commands wrote (v3 copies the new posts).
    assert!(report.processors["v3"].changes > 0);
    assert!(report.processors["v3"].writes > 0);

    // The JSON shape the CLI and the TUI read.
    let json = serde_json::to_value(&report).unwrap();
    let q6 = json["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "Q6")
        .unwrap();
    let keys: Vec<&String> = q6["designs"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["v1", "v2", "v3"]);
    for field in [
        "requestCharge",
        "latencyMs",
        "requests",
        "partitionsTouched",
    ] {
        assert!(q6["designs"]["v3"][field].is_number(), "{field}");
    }
    let op = &q6["designs"]["v3"]["operations"][0];
    for field in [
        "kind",
        "container",
        "routing",
        "partitions",
        "requestCharge",
    ] {
        assert!(!op[field].is_null(), "operation {field}");
    }
    let back: Report = serde_json::from_value(json).unwrap();
    assert_eq!(back, report);

    let table = report.to_table();
    assert!(table.contains("Q6 List the 100 newest") && table.contains("v3 (copies and feed)"));

    // A second run uses the loaded databases.
    let again = run(&st, "blog");
    assert!(again.loaded.is_empty());
}

#[test]
fn the_webstore_suite_compares_relational_and_denormalized() {
    let st = store();
    let report = run(&st, "webstore");
    let ids: Vec<&str> = report.patterns.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W7s"]);
    for p in &report.patterns {
        let designs: &[&str] = if p.id == "W7s" {
            &["denormalized"]
        } else {
            &["relational", "denormalized"]
        };
        for &d in designs {
            let r = p.design(d).unwrap_or_else(|| panic!("{} has no {d}", p.id));
            assert!(r.request_charge > 0.0, "{} {d}", p.id);
        }
    }
    let w5 = row(&report, "W5");
    assert!(w5.design("relational").unwrap().requests >= 4);
    let denorm = w5.design("denormalized").unwrap();
    assert_eq!(
        (denorm.requests, denorm.routing.as_str()),
        (1, "single-partition")
    );
    assert_eq!(
        row(&report, "W6").design("denormalized").unwrap().routing,
        "fan-out"
    );
    assert_eq!(
        row(&report, "W2").design("denormalized").unwrap().routing,
        "single-partition"
    );
    // An order and its customer's count: one batch in the denormalized design.
    let w7 = row(&report, "W7");
    assert_eq!(
        w7.design("denormalized").unwrap().operations[0].kind,
        "batch"
    );
    assert_eq!(w7.design("relational").unwrap().requests, 2);
}

#[test]
fn the_stored_procedure_rows_do_what_the_batch_rows_do() {
    let st = store();
    let suite = Suite::builtin("blog").unwrap();
    let options = RunOptions {
        patterns: Some(vec!["C3".into(), "C3s".into(), "C4".into(), "C4s".into()]),
        ..options()
    };
    let report = workbench::run(&st.engine, &suite, &options, &mut |_| true).unwrap();
    for (batch, script) in [("C3", "C3s"), ("C4", "C4s")] {
        for design in ["v2", "v3"] {
            let b = row(&report, batch).design(design).unwrap();
            let s = row(&report, script).design(design).unwrap();
            let ops: Vec<_> = s.operations.iter().filter(|o| !o.setup).collect();
            assert_eq!(ops.len(), 1, "{script} on {design}: one request");
            assert_eq!(ops[0].kind, "execute");
            assert_eq!(ops[0].container, "posts");
            assert_eq!(
                (s.routing.as_str(), s.partitions_touched),
                ("single-partition", 1)
            );
            // Both write the same two documents; the script's charge adds what it runs.
            assert!(s.request_charge > 0.0 && b.request_charge > 0.0, "{design}");
        }
    }
    // Either way, every post's counts agree with its comments and likes.
    let all = QueryOptions {
        max_items: Some(1_000_000),
        ..QueryOptions::default()
    };
    for db in ["blog-v2", "blog-v3"] {
        let counts = st
            .engine
            .query(
                db,
                "posts",
                "SELECT c.postId, c.type, COUNT(1) AS n FROM c WHERE c.type IN ('comment', 'like') \
                 GROUP BY c.postId, c.type",
                &all,
            )
            .unwrap();
        let posts = st
            .engine
            .query(
                db,
                "posts",
                "SELECT c.postId, c.commentCount, c.likeCount FROM c WHERE c.type = 'post'",
                &all,
            )
            .unwrap();
        let count_of = |post: &Value, kind: &str| {
            counts
                .documents
                .iter()
                .map(|d| d.value())
                .find(|d| d["postId"] == post["postId"] && d["type"] == kind)
                .map_or(0, |d| d["n"].as_u64().unwrap_or(0))
        };
        let mut checked = 0;
        for post in posts.documents.iter().map(|d| d.value()) {
            assert_eq!(
                post["commentCount"].as_u64(),
                Some(count_of(post, "comment")),
                "{db}: {post}"
            );
            assert_eq!(
                post["likeCount"].as_u64(),
                Some(count_of(post, "like")),
                "{db}: {post}"
            );
            checked += 1;
        }
        assert!(checked > 0, "{db} has posts");
    }
}

/// Every item of `db`'s posts that carries its author's username carries the current one.
fn usernames_agree(st: &Store, db: &str) -> usize {
    let users = all(
        st,
        db,
        "users",
        "SELECT c.id, c.username FROM c WHERE IS_DEFINED(c.username)",
    );
    let name_of: std::collections::HashMap<&str, &Value> = users
        .iter()
        .filter_map(|u| Some((u["id"].as_str()?, &u["username"])))
        .collect();
    let items = all(
        st,
        db,
        "posts",
        "SELECT c.id, c.userId, c.userUsername FROM c WHERE IS_DEFINED(c.userUsername)",
    );
    for item in &items {
        let user = item["userId"].as_str().unwrap_or_default();
        assert_eq!(
            Some(&item["userUsername"]),
            name_of.get(user).copied(),
            "{db}: {item} has its author's old username"
        );
    }
    items.len()
}

/// v3's feed holds exactly the newest posts, and users a copy of each post.
fn copies_agree(st: &Store) {
    let newest = all(
        st,
        "blog-v3",
        "posts",
        "SELECT TOP 100 VALUE c.creationDate FROM c WHERE c.type = 'post' ORDER BY c.creationDate DESC",
    );
    let mut feed = all(st, "blog-v3", "feed", "SELECT VALUE c.creationDate FROM c");
    feed.sort_by(|a, b| b.as_str().cmp(&a.as_str()));
    // Dates, not ids: posts created in the same millisecond may trade places at the cut.
    assert_eq!(feed, newest, "the feed is the 100 newest posts");
    let count = |c: &str| {
        all(
            st,
            "blog-v3",
            c,
            "SELECT VALUE COUNT(1) FROM c WHERE c.type = 'post'",
        )
    };
    assert_eq!(
        count("users"),
        count("posts"),
        "a copy of every post in users"
    );
}

fn all(st: &Store, db: &str, c: &str, sql: &str) -> Vec<Value> {
    let options = QueryOptions {
        max_items: Some(1_000_000),
        ..QueryOptions::default()
    };
    let page = st.engine.query(db, c, sql, &options).unwrap();
    assert!(page.continuation.is_none(), "{sql}: one page");
    page.documents.iter().map(|d| d.value().clone()).collect()
}

#[test]
fn the_script_rows_do_what_the_processors_do() {
    // The processor way (C2, C1e) with the processors running, drained before the report;
    // the script way (C2s, C1es) with no processor at all, so the scripts alone keep the
    // feed at its bound and the usernames current.
    for (patterns, processors) in [(["C2", "C1e"], true), (["C2s", "C1es"], false)] {
        let st = store();
        let suite = Suite::builtin("blog").unwrap();
        let options = RunOptions {
            patterns: Some(patterns.iter().map(|p| p.to_string()).collect()),
            processors,
            ..options()
        };
        let report = workbench::run(&st.engine, &suite, &options, &mut |_| true).unwrap();
        copies_agree(&st);
        for db in ["blog-v2", "blog-v3"] {
            assert!(usernames_agree(&st, db) > 0, "{db} has usernames to check");
        }
        if processors {
            assert!(report.processors["v3"].writes > 0);
            continue;
        }
        // C2s: the feed copy with its trigger, the users copy and the post, one request each.
        let c2s = row(&report, "C2s").design("v3").unwrap();
        let sent: Vec<(&str, &str)> = c2s
            .operations
            .iter()
            .filter(|o| !o.setup)
            .map(|o| (o.kind.as_str(), o.container.as_str()))
            .collect();
        assert_eq!(
            sent,
            [("create", "feed"), ("create", "users"), ("create", "posts")]
        );
        assert!(
            c2s.operations[1]
                .detail
                .contains("postTrigger truncateFeed")
        );
        // C1es: the rename, the query for the user's partitions, one execution in each.
        for design in ["v2", "v3"] {
            let c1es = row(&report, "C1es").design(design).unwrap();
            let kinds: Vec<&str> = c1es.operations.iter().map(|o| o.kind.as_str()).collect();
            let queries = kinds.iter().skip(1).take_while(|k| **k == "query").count();
            let executions = &kinds[1 + queries..];
            assert_eq!(kinds[0], "patch", "{design}");
            assert!(
                queries >= 1 && !executions.is_empty(),
                "{design}: {kinds:?}"
            );
            assert!(
                executions.iter().all(|k| *k == "execute"),
                "{design}: {kinds:?}"
            );
        }
    }
}

#[test]
fn a_step_naming_a_trigger_that_cannot_run_fails_the_run_before_it_writes() {
    use cosmoscope::engine::{ScriptSpec, TriggerOperation, TriggerType};
    let st = store();
    st.engine.create_database("t").unwrap();
    st.engine
        .create_container("t", "c", crate::support::fixture::pk_settings())
        .unwrap();
    let trigger = |id: &str, body: &str, t: TriggerType, op: TriggerOperation| {
        st.engine
            .create_script("t", "c", &ScriptSpec::trigger(id, body, t, op))
            .unwrap();
    };
    trigger(
        "stamp",
        "function stamp() { var r = getContext().getRequest(); var d = r.getBody(); \
         d.stamped = true; r.setBody(d); }",
        TriggerType::Pre,
        TriggerOperation::Create,
    );
    trigger(
        "onDelete",
        "function onDelete() {}",
        TriggerType::Post,
        TriggerOperation::Delete,
    );
    let suite = |triggers: &str| {
        Suite::parse(&format!(
            r#"{{"name": "t", "title": "T", "params": {{"id": {{"generate": "uuid"}}}},
                "designs": [{{"id": "d", "database": "t"}}],
                "patterns": [{{"id": "P", "title": "p", "steps": {{"d": [
                    {{"create": "c", "body": {{"id": "{{id}}", "pk": "{{id}}"}}, {triggers}}}]}}}}]}}"#
        ))
        .unwrap()
    };
    let fails = |triggers: &str| {
        let e =
            workbench::run(&st.engine, &suite(triggers), &options(), &mut |_| true).unwrap_err();
        assert_eq!(e.status.as_u16(), 400, "{}", e.message);
        e.message
    };
    let m = fails(r#""postTrigger": "nope""#);
    assert!(
        m.contains("pattern \"P\", design \"d\", step 1: postTrigger \"nope\" of t/c")
            && m.contains("no such trigger (the container has onDelete, stamp)"),
        "{m}"
    );
    let m = fails(r#""postTrigger": "stamp""#);
    assert!(m.contains("it is a Pre-trigger"), "{m}");
    let m = fails(r#""postTrigger": "onDelete""#);
    assert!(
        m.contains("it runs on Delete operations, not on a create"),
        "{m}"
    );
    assert!(
        all(&st, "t", "c", "SELECT * FROM c").is_empty(),
        "nothing was written"
    );

    // A trigger that fits runs with every write of the step.
    let report = workbench::run(
        &st.engine,
        &suite(r#""preTrigger": "stamp""#),
        &options(),
        &mut |_| true,
    )
    .unwrap();
    let written = all(&st, "t", "c", "SELECT VALUE c.stamped FROM c");
    assert_eq!(written, vec![Value::Bool(true); 3]);
    let d = report.patterns[0].design("d").unwrap();
    assert!(d.operations[0].detail.contains("preTrigger stamp"));
}

#[test]
fn parameters_line_up_across_designs() {
    // The same seed draws the same post in every design: v2's and v3's Q2 read the same
    // item, so they cost the same.
    let st = store();
    let suite = Suite::builtin("blog").unwrap();
    let opts = RunOptions {
        patterns: Some(vec!["Q2".into(), "Q4".into()]),
        ..options()
    };
    let report = workbench::run(&st.engine, &suite, &opts, &mut |_| true).unwrap();
    for id in ["Q2", "Q4"] {
        let r = row(&report, id);
        assert_eq!(
            r.design("v2").unwrap().request_charge,
            r.design("v3").unwrap().request_charge,
            "{id}"
        );
    }
}

#[test]
fn cancelling_stops_the_run_and_releases_the_leases() {
    let st = store();
    let suite = Suite::builtin("blog").unwrap();
    let mut seen = 0;
    let err = workbench::run(&st.engine, &suite, &options(), &mut |p| {
        if matches!(p, RunProgress::Running { .. }) {
            seen += 1;
        }
        seen < 5
    })
    .unwrap_err();
    assert_eq!(err.status.as_u16(), 499);
    let mut owners = Vec::new();
    st.engine
        .export("blog-v3", "leases", None, &mut |b| {
            let v: Value = serde_json::from_slice(b).unwrap();
            owners.push(v["Owner"].clone());
            Ok(())
        })
        .unwrap();
    assert!(!owners.is_empty() && owners.iter().all(Value::is_null));
}

fn parse_error(text: &str) -> String {
    let e = Suite::parse(text).unwrap_err();
    assert_eq!(e.status.as_u16(), 400, "{}", e.message);
    e.message
}

#[test]
fn suite_errors_say_what_and_where() {
    let m = parse_error("name = \"x\"\ntitle = \"y\"\n[[designs]\n");
    assert!(
        m.contains("invalid workbench suite (TOML)") && m.contains("line 3"),
        "{m}"
    );

    let m = parse_error("{\"name\": \"x\", \"title\": \"y\", \"designs\": [}");
    assert!(m.contains("(JSON)") && m.contains("column"), "{m}");

    let head = "name = \"x\"\ntitle = \"y\"\n[[designs]]\nid = \"a\"\nsample = \"blog-v1\"\n\
                params = { postId = { partitionKeys = \"posts\" } }\n";
    let m = parse_error(&format!(
        "{head}[[patterns]]\nid = \"Q\"\ntitle = \"q\"\n[[patterns.steps.a]]\nread = \"posts\"\n\
         id = \"{{post.id}}\"\npk = \"{{postId}}\"\n"
    ));
    assert!(
        m.contains("pattern \"Q\", design \"a\", step 1") && m.contains("{post} is not defined"),
        "{m}"
    );
    let m = parse_error(&format!(
        "{head}[[patterns]]\nid = \"Q\"\ntitle = \"q\"\n[[patterns.steps.a]]\nquery = \"posts\"\n"
    ));
    assert!(m.contains("a query step needs sql"), "{m}");
    // A stored procedure step: its procedure, and its parameters as a list.
    let execute = |fields: &str| {
        parse_error(&format!(
            "{head}[[patterns]]\nid = \"Q\"\ntitle = \"q\"\n[[patterns.steps.a]]\n\
             execute = \"posts\"\npk = \"{{postId}}\"\n{fields}"
        ))
    };
    let m = execute("");
    assert!(m.contains("an execute step needs sproc"), "{m}");
    let m = execute("sproc = \"s\"\nargs = \"{postId}\"\n");
    assert!(
        m.contains("args is the stored procedure's parameters, a list"),
        "{m}"
    );
    let m = execute("sproc = \"s\"\nsql = \"SELECT 1\"\n");
    assert!(m.contains("sql does not apply to an execute step"), "{m}");
    let m = parse_error(&format!(
        "{head}[[patterns]]\nid = \"Q\"\ntitle = \"q\"\n[[patterns.steps.a]]\nread = \"posts\"\n\
         id = \"{{item.id}}\"\npk = \"x\"\n"
    ));
    assert!(m.contains("only in forEach"), "{m}");
    let m = parse_error(&format!(
        "{head}[[patterns]]\nid = \"Q\"\ntitle = \"q\"\n[[patterns.steps.a]]\nread = \"posts\"\n\
         id = \"{{postId\"\npk = \"x\"\n"
    ));
    assert!(m.contains("unclosed"), "{m}");
    let m = parse_error(
        "name = \"x\"\ntitle = \"y\"\n[[designs]]\nid = \"a\"\nsample = \"nope\"\n\
         [[patterns]]\nid = \"Q\"\ntitle = \"q\"\nsteps = {}\n",
    );
    assert!(m.contains("no sample set \"nope\""), "{m}");
    let m = parse_error(
        "name = \"x\"\ntitle = \"y\"\n[params]\nn = { generate = \"dice\" }\n[[designs]]\n\
         id = \"a\"\ndatabase = \"d\"\n[[patterns]]\nid = \"Q\"\ntitle = \"q\"\n\
         [[patterns.steps.a]]\nread = \"posts\"\nid = \"x\"\npk = \"x\"\n",
    );
    assert!(m.contains("cannot generate \"dice\""), "{m}");

    assert_eq!(Suite::builtin("nope").unwrap_err().status, 404);
    assert_eq!(Suite::load("/no/such/suite.toml").unwrap_err().status, 400);
}

#[test]
fn a_user_suite_runs_against_an_existing_database() {
    let st = store();
    cosmoscope::samples::load(
        &st.engine,
        "modeling",
        &cosmoscope::samples::LoadOptions::default(),
        &mut |_| true,
    )
    .unwrap();
    let suite = Suite::parse(
        r#"{"name": "mine", "title": "Mine",
            "params": {"n": {"values": [1, 2]}},
            "designs": [{"id": "m", "database": "modeling"}],
            "patterns": [{"id": "P1", "title": "count everything", "steps": {"m": [
                {"query": "people", "sql": "SELECT VALUE COUNT(1) FROM c WHERE @n > 0",
                 "params": {"n": "{n}"}}]}}]}"#,
    )
    .unwrap();
    let report = workbench::run(&st.engine, &suite, &options(), &mut |_| true).unwrap();
    assert!(report.patterns[0].designs.0[0].request_charge > 0.0);
    assert!(report.processors.is_empty());

    // A design without a sample and without its database: 404 naming it.
    let suite = Suite::parse(
        r#"{"name": "x", "title": "X", "designs": [{"id": "d", "database": "absent"}],
            "patterns": [{"id": "P", "title": "p", "steps": {"d": [
                {"read": "c", "id": "a", "pk": "a"}]}}]}"#,
    )
    .unwrap();
    let e = workbench::run(&st.engine, &suite, &options(), &mut |_| true).unwrap_err();
    assert_eq!(e.status.as_u16(), 404);
    assert!(e.message.contains("\"absent\""), "{}", e.message);
}

#[test]
fn throttled_requests_are_retried_and_counted() {
    // A container that enforces 400 RU/s, and writes of about 150 items' worth of text
    // (some 100 KB, over 50 RU each): a dozen of them overrun the budget unless they take
    // longer than a second apart, however slow the machine. Each 429 waits its retry-after
    // (the rest of the second) and goes again.
    let st = store();
    st.engine.create_database("tight").unwrap();
    let settings = cosmoscope::engine::ContainerSettings {
        enforce_throughput: true,
        ..cosmoscope::engine::ContainerSettings::new(vec!["/pk".into()])
    };
    st.engine.create_container("tight", "c", settings).unwrap();
    let texts: Vec<String> = (0..150).map(|i| format!(r#""t{i}": "{{text}}""#)).collect();
    let suite = Suite::parse(&format!(
        r#"{{"name": "t", "title": "T",
            "params": {{"id": {{"generate": "uuid"}}, "text": {{"generate": "paragraphs"}}}},
            "designs": [{{"id": "d", "database": "tight"}}],
            "patterns": [{{"id": "W", "title": "write", "steps": {{"d": [
                {{"create": "c", "body": {{"id": "{{id}}", "pk": "{{id}}", {}}}}}]}}}}]}}"#,
        texts.join(", ")
    ))
    .unwrap();
    let opts = RunOptions {
        iterations: 12,
        ..options()
    };
    let report = workbench::run(&st.engine, &suite, &opts, &mut |_| true).unwrap();
    let r = &report.patterns[0].designs.0[0];
    assert_eq!(r.iterations, 12, "every write went through");
    assert!(r.request_charge > 50.0, "each write is a large one: {r:?}");
    assert!(r.throttled > 0, "the budget was exceeded: {r:?}");
    let throttled = st
        .engine
        .partitions("tight", "c", 10, 60)
        .unwrap()
        .load
        .iter()
        .map(|l| l.throttled)
        .sum::<u64>();
    assert!(throttled > 0, "the store recorded the 429s");
}
