//! `sproc`, `trigger` and `udf` through the real binary, and item writes naming triggers.

use serde_json::json;

use crate::support::cli::{failed, json_of, ok, run, run_stdin, stdout};

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    ok(dir.path(), &["db", "create", "shop"]);
    ok(
        dir.path(),
        &[
            "container",
            "create",
            "shop/orders",
            "--partition-key",
            "/customerId",
        ],
    );
    dir
}

/// The WebStore's sales order procedure: creates the order and counts it on the customer,
/// in the customer's logical partition, as one transaction.
const CREATE_ORDER: &str = r#"function createSalesOrder(order) {
    var c = getContext().getCollection();
    var customerLink = c.getAltLink() + "/docs/" + order.customerId;
    c.readDocument(customerLink, function (err, customer) {
        if (err) throw err;
        customer.salesOrderCount = (customer.salesOrderCount || 0) + 1;
        c.replaceDocument(customer._self, customer, { etag: customer._etag }, function (err) {
            if (err) throw err;
            order.type = "salesOrder";
            c.createDocument(c.getSelfLink(), order, function (err, created) {
                if (err) throw err;
                console.log("order", created.id, "for", order.customerId);
                getContext().getResponse().setBody({order: created.id, count: customer.salesOrderCount});
            });
        });
    });
}"#;

#[test]
fn sproc_commands_create_execute_and_list() {
    let dir = setup();
    let d = dir.path();
    let customer = json!({"id": "c1", "customerId": "c1", "type": "customer"}).to_string();
    assert!(
        run_stdin(d, &["item", "create", "shop/orders"], &customer)
            .status
            .success()
    );
    let file = d.join("createSalesOrder.js");
    std::fs::write(&file, CREATE_ORDER).unwrap();
    let created = ok(
        d,
        &[
            "sproc",
            "create",
            "shop/orders",
            "createSalesOrder",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(created["id"], "createSalesOrder");
    assert_eq!(created["body"], CREATE_ORDER);

    let order = json!({"id": "o1", "customerId": "c1", "total": 10}).to_string();
    let execute = |extra: &[&str]| -> Vec<String> {
        let base = [
            "sproc",
            "execute",
            "shop/orders",
            "createSalesOrder",
            "--pk",
            "\"c1\"",
            "--param",
        ];
        base.iter()
            .chain(std::iter::once(&order.as_str()))
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let args = execute(&["--log"]);
    let r = ok(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r["body"], json!({"order": "o1", "count": 1}));
    assert_eq!(r["log"], "order o1 for c1");
    assert!(r["requestCharge"].as_f64().unwrap() > 10.0, "{r}");
    let customer = ok(d, &["item", "read", "shop/orders", "c1", "--pk", "\"c1\""]);
    assert_eq!(customer["resource"]["salesOrderCount"], 1);

    // The same order again conflicts: the count is not bumped.
    let args = execute(&[]);
    let e = failed(d, &args.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    assert_eq!(e["status"], 409);
    let customer = ok(d, &["item", "read", "shop/orders", "c1", "--pk", "\"c1\""]);
    assert_eq!(customer["resource"]["salesOrderCount"], 1);

    let listed = ok(d, &["sproc", "list", "shop/orders"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(
        ok(d, &["sproc", "read", "shop/orders", "createSalesOrder"])["id"],
        "createSalesOrder"
    );
    // From stdin, replacing.
    let out = run_stdin(
        d,
        &["sproc", "replace", "shop/orders", "createSalesOrder"],
        "function () { getContext().getResponse().setBody(1); }",
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(
        ok(
            d,
            &[
                "sproc",
                "execute",
                "shop/orders",
                "createSalesOrder",
                "--pk",
                "\"x\""
            ]
        )["body"],
        1
    );
    ok(d, &["sproc", "delete", "shop/orders", "createSalesOrder"]);
    assert_eq!(
        failed(d, &["sproc", "read", "shop/orders", "createSalesOrder"], 1)["status"],
        404
    );
}

#[test]
fn a_script_that_does_not_compile_is_a_request_error_with_its_position() {
    let dir = setup();
    let d = dir.path();
    let out = run_stdin(
        d,
        &["udf", "create", "shop/orders", "broken"],
        "function broken(x) {\n  return x +;\n}",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let e = json_of(&out)["error"].clone();
    assert_eq!(e["status"], 400);
    assert_eq!(e["line"], 2);
    assert_eq!(
        failed(
            d,
            &["sproc", "execute", "shop/orders", "none", "--pk", "\"x\""],
            1
        )["status"],
        404
    );
    assert_eq!(
        failed(
            d,
            &[
                "sproc",
                "execute",
                "shop/orders",
                "none",
                "--pk",
                "not json"
            ],
            2
        )["status"],
        400
    );
}

#[test]
fn triggers_and_udfs_from_the_command_line() {
    let dir = setup();
    let d = dir.path();
    let stamp = r#"function stamp() {
        var r = getContext().getRequest();
        var item = r.getBody();
        item.stamped = true;
        r.setBody(item);
    }"#;
    let out = run_stdin(
        d,
        &[
            "trigger",
            "create",
            "shop/orders",
            "stamp",
            "--type",
            "pre",
            "--operation",
            "create",
        ],
        stamp,
    );
    assert!(out.status.success(), "{}", stdout(&out));
    let t = json_of(&out);
    assert_eq!(t["triggerType"], "Pre");
    assert_eq!(t["triggerOperation"], "Create");
    let item = json!({"id": "o1", "customerId": "c1", "total": 250}).to_string();
    let out = run_stdin(
        d,
        &["item", "create", "shop/orders", "--pre-trigger", "stamp"],
        &item,
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(json_of(&out)["resource"]["stamped"], true);
    // On an upsert the create-only trigger is refused, and nothing is written.
    let item2 = json!({"id": "o2", "customerId": "c1"}).to_string();
    let out = run_stdin(
        d,
        &["item", "upsert", "shop/orders", "--pre-trigger", "stamp"],
        &item2,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        failed(
            d,
            &["item", "read", "shop/orders", "o2", "--pk", "\"c1\""],
            1
        )["status"],
        404
    );

    let out = run_stdin(
        d,
        &["udf", "create", "shop/orders", "discount"],
        "function discount(total) { return total > 100 ? total * 0.9 : total; }",
    );
    assert!(out.status.success(), "{}", stdout(&out));
    let q = ok(
        d,
        &[
            "query",
            "shop/orders",
            "SELECT VALUE udf.discount(o.total) FROM o",
        ],
    );
    assert_eq!(q["documents"], json!([225]));
    assert_eq!(
        ok(d, &["udf", "list", "shop/orders"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        ok(d, &["trigger", "list", "shop/orders"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let out = run(d, &["trigger", "delete", "shop/orders", "stamp"]);
    assert!(out.status.success());
}
