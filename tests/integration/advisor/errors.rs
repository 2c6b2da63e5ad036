//! `cosmoscope advise`: a ranking as JSON, and clear errors for an empty container, a
//! workload naming properties no item has, a candidate naming one, and bad candidate
//! syntax — each changing nothing.

use serde_json::Value;

use crate::support::cli::{failed, ok, run, stdout};

fn setup(dir: &std::path::Path) {
    ok(dir, &["db", "create", "shop"]);
    ok(
        dir,
        &[
            "container",
            "create",
            "shop/orders",
            "--partition-key",
            "/id",
        ],
    );
    ok(
        dir,
        &[
            "container",
            "create",
            "shop/empty",
            "--partition-key",
            "/id",
        ],
    );
    let items: String = (0..300)
        .map(|i| {
            format!(
                "{{\"id\":\"o{i}\",\"customer\":\"c{}\",\"status\":\"s{}\"}}\n",
                i % 50,
                i % 2
            )
        })
        .collect();
    let file = dir.join("orders.ndjson");
    std::fs::write(&file, items).unwrap();
    ok(dir, &["import", "shop/orders", file.to_str().unwrap()]);
}

fn workload(dir: &std::path::Path, param: &str) -> String {
    let text = format!(
        "[[operations]]\nid = \"mine\"\nrate = 10\nquery = \"SELECT * FROM c WHERE c.customer = @c\"\nparams = {{ c = \"{param}\" }}\n\n[[operations]]\nid = \"new\"\nrate = 2\ncreate = true\n"
    );
    let file = dir.join(format!("workload{}.toml", param.len()));
    std::fs::write(&file, text).unwrap();
    file.to_string_lossy().into_owned()
}

#[test]
fn advise_prints_a_ranking_and_reports_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let good = workload(dir, "/customer");
    let advice = ok(
        dir,
        &[
            "advise",
            "shop/orders",
            "--workload",
            &good,
            "--candidates",
            "/customer,/status",
            "--iterations",
            "4",
            "--project",
            "10",
            "--json",
        ],
    );
    let keys: Vec<&str> = advice["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["/customer", "/id", "/status"]);
    let first = &advice["candidates"][0];
    assert_eq!(
        first["figures"]["patterns"][0]["routing"],
        "single-partition"
    );
    assert_eq!(first["projection"]["scale"], 10.0);
    assert!(first["projection"]["physicalPartitions"].as_u64().unwrap() >= 1);
    // The table says the same.
    let table = stdout(&run(
        dir,
        &[
            "advise",
            "shop/orders",
            "--workload",
            &good,
            "--candidates",
            "/customer",
            "--iterations",
            "2",
        ],
    ));
    assert!(table.contains("1    /customer"), "{table}");

    let e = failed(dir, &["advise", "shop/empty", "--workload", &good], 1);
    assert_eq!(e["status"], 400);
    assert!(
        e["message"].as_str().unwrap().contains("holds no items"),
        "{e}"
    );

    let missing = workload(dir, "/customerId");
    let e = failed(dir, &["advise", "shop/orders", "--workload", &missing], 1);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("@c draws from /customerId, which no item"),
        "{e}"
    );

    let e = failed(dir, &["advise", "shop/orders", "--candidates", "/nope"], 1);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("no item of shop/orders has /nope"),
        "{e}"
    );

    for bad in ["customer", "[/a", "/a suffix many buckets", "[/a]"] {
        let e = failed(dir, &["advise", "shop/orders", "--candidates", bad], 2);
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("invalid candidate key"),
            "{bad}: {e}"
        );
    }
    let e = failed(dir, &["advise", "shop/orders", "--project", "0.5"], 2);
    assert!(e["message"].as_str().unwrap().contains("--project"), "{e}");

    // Nothing was left behind.
    let dbs = ok(dir, &["db", "list"]);
    let names: Vec<&str> = dbs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect::<Vec<_>>();
    assert_eq!(names, ["shop"], "{dbs}");
    let _ = Value::Null;
}
