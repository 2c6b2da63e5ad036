"""The `scripts` phase of scenario.py: stored procedures, triggers and user-defined
functions through the Python SDK against `cosmoscope serve` — create, read, replace, list,
delete; execution with parameters, logging and rollback; the bulk-import continuation
pattern; triggers named on writes; UDFs in queries.
"""

from urllib.parse import unquote

from azure.cosmos import PartitionKey, exceptions

HELLO = """function hello(name) {
    console.log("greeting", name);
    getContext().getResponse().setBody("Hello, " + name);
}"""

BULK = """function bulkImport(items) {
    var c = getContext().getCollection(), count = 0;
    if (items.length == 0) { getContext().getResponse().setBody(0); return; }
    next();
    function next() {
        var accepted = c.createDocument(c.getSelfLink(), items[count], function (err) {
            if (err) throw err;
            count++;
            if (count >= items.length) getContext().getResponse().setBody(count);
            else next();
        });
        if (!accepted) getContext().getResponse().setBody(count);
    }
}"""

FAIL_AFTER_WRITE = """function failAfterWrite(doc) {
    var c = getContext().getCollection();
    c.createDocument(c.getSelfLink(), doc, function (err) {
        if (err) throw err;
        throw new Error("refusing " + doc.id);
    });
}"""

ELSEWHERE = """function elsewhere() {
    var c = getContext().getCollection();
    c.createDocument(c.getSelfLink(), {id: "x", pk: "somewhere-else"}, function (err) {
        if (err) throw err;
    });
}"""

STAMP = """function stamp() {
    var r = getContext().getRequest();
    var doc = r.getBody();
    doc.stamped = true;
    r.setBody(doc);
}"""

REJECT = """function reject() {
    var doc = getContext().getResponse().getBody();
    if (doc.reject) throw new Error("rejected by the post-trigger");
}"""

TAX = """function tax(income) {
    if (income < 1000) return income * 0.1;
    if (income < 10000) return income * 0.2;
    return income * 0.4;
}"""


def run(sc):
    """Runs the phase on `sc` (a scenario.Scenario); returns the output document."""
    db = sc.client.create_database(sc.database_id)
    c = db.create_container("scripts", PartitionKey(path="/pk"))
    scripts = c.scripts

    # Resources.
    created = scripts.create_stored_procedure({"id": "hello", "body": HELLO})
    sc.eq(created["id"], "hello", "created sproc id")
    sc.ok(created["_self"].endswith("/"), "a sproc has a _self link")
    sc.failing(409, "create an existing sproc", lambda: scripts.create_stored_procedure({"id": "hello", "body": HELLO}))
    sc.failing(400, "create a sproc that does not compile",
               lambda: scripts.create_stored_procedure({"id": "bad", "body": "function bad( {"}))
    sc.eq(scripts.get_stored_procedure("hello")["body"], HELLO, "read sproc body")
    sc.eq([s["id"] for s in scripts.list_stored_procedures()], ["hello"], "sprocs listed")
    found = list(scripts.query_stored_procedures("SELECT * FROM s WHERE s.id = @id",
                                                 parameters=[{"name": "@id", "value": "hello"}]))
    sc.eq(len(found), 1, "sprocs queried")

    # Execution, with logging.
    result = scripts.execute_stored_procedure("hello", partition_key="a", params=["SDK"], enable_script_logging=True)
    sc.eq(result, "Hello, SDK", "sproc result")
    headers = sc.client.client_connection.last_response_headers
    sc.eq(unquote(headers.get("x-ms-documentdb-script-log-results", "")), "greeting SDK", "script log")
    sc.ok(float(headers["x-ms-request-charge"]) > 0, "an execution is charged")
    scripts.replace_stored_procedure("hello", {"id": "hello", "body": "function () { getContext().getResponse().setBody(7); }"})
    sc.eq(scripts.execute_stored_procedure("hello", partition_key="a"), 7, "replaced sproc result")

    # A throw rolls back what the script wrote.
    scripts.create_stored_procedure({"id": "failAfterWrite", "body": FAIL_AFTER_WRITE})
    sc.failing(400, "a throwing sproc",
               lambda: scripts.execute_stored_procedure("failAfterWrite", partition_key="a", params=[{"id": "r1", "pk": "a"}]))
    sc.failing(404, "the rolled-back item", lambda: c.read_item("r1", partition_key="a"))
    scripts.create_stored_procedure({"id": "elsewhere", "body": ELSEWHERE})
    sc.failing(400, "a write to another logical partition",
               lambda: scripts.execute_stored_procedure("elsewhere", partition_key="a"))

    # The bulk import continues over several executions.
    scripts.create_stored_procedure({"id": "bulkImport", "body": BULK})
    items = [{"id": "b%04d" % i, "pk": "bulk", "n": i, "pad": "x" * 200} for i in range(3000)]
    done, executions = 0, 0
    while done < len(items):
        n = scripts.execute_stored_procedure("bulkImport", partition_key="bulk", params=[items[done:]])
        sc.ok(n > 0, "each execution makes progress")
        done += n
        executions += 1
    sc.ok(executions > 1, "the import took several executions")
    count = list(c.query_items("SELECT VALUE COUNT(1) FROM c", partition_key="bulk"))[0]
    sc.eq(count, 3000, "bulk-imported items")

    # Triggers named on writes.
    scripts.create_trigger({"id": "stamp", "body": STAMP, "triggerType": "Pre", "triggerOperation": "All"})
    scripts.create_trigger({"id": "reject", "body": REJECT, "triggerType": "Post", "triggerOperation": "Create"})
    sc.eq([t["id"] for t in scripts.list_triggers()], ["reject", "stamp"], "triggers listed")
    stored = c.create_item({"id": "t1", "pk": "t"}, pre_trigger_include="stamp", post_trigger_include="reject")
    sc.eq(stored.get("stamped"), True, "the pre-trigger changed the item")
    sc.failing(400, "a throwing post-trigger",
               lambda: c.create_item({"id": "t2", "pk": "t", "reject": True}, post_trigger_include="reject"))
    sc.failing(404, "the write the post-trigger undid", lambda: c.read_item("t2", partition_key="t"))
    upserted = c.upsert_item({"id": "t1", "pk": "t", "v": 2}, pre_trigger_include="stamp")
    sc.eq(upserted.get("stamped"), True, "the pre-trigger on an upsert")
    scripts.delete_trigger("reject")
    sc.failing(404, "a deleted trigger", lambda: scripts.get_trigger("reject"))

    # UDFs in queries.
    scripts.create_user_defined_function({"id": "tax", "body": TAX})
    for i, income in enumerate([500, 5000, 50000]):
        c.create_item({"id": "i%d" % i, "pk": "tax", "income": income})
    taxes = list(c.query_items("SELECT VALUE udf.tax(c.income) FROM c ORDER BY c.income", partition_key="tax"))
    sc.eq(taxes, [50, 1000, 20000], "UDF results")
    sc.failing(400, "a query with an unknown UDF",
               lambda: list(c.query_items("SELECT VALUE udf.nope(c.income) FROM c", partition_key="tax")))
    sc.eq([u["id"] for u in scripts.list_user_defined_functions()], ["tax"], "udfs listed")
    scripts.delete_stored_procedure("hello")
    sc.failing(404, "a deleted sproc", lambda: scripts.get_stored_procedure("hello"))

    sc.out["bulkExecutions"] = executions
    sc.out["checks"] = sc.checks
    return sc.out
