"""The gateway's scenario for the official Python SDK (azure-cosmos), run by
tests/integration/gateway/sdk against `cosmoscope serve`.

    scenario.py PHASE ENDPOINT KEY DATABASE [STATE_FILE]

PHASE is one of
  main    resources (a hierarchical key too), point operations with their expected errors,
          patch, batch, queries paged to the end, change feed, EPKs and feed ranges, 401.
  split   writes items to a two-range container, reads the first pages of queries and the
          change feed, saves their continuations in STATE_FILE, prints {"event": "paused"},
          then waits for a line on stdin (the test splits the ranges meanwhile), resumes the
          same iterators, writes more items and checks that every item came exactly once.
  resume  a new client resumes the continuations STATE_FILE holds (taken before the split).
  scripts stored procedures, triggers and UDFs (scripts_scenario.py).

Every phase prints one JSON document as its last line on stdout. Anything unexpected (a
wrong status, result, order or count, an SDK exception) fails with exit status 1 and a
`scenario failed:` message on stderr. Expectations are computed here from the data written.
"""

import json
import sys
import traceback

import azure.cosmos
from azure.cosmos import CosmosClient, PartitionKey, exceptions
from azure.core import MatchConditions

SDK = "python"

# The orders data: 60 items on 12 customers, with unique totals (for a stable ORDER BY)
# that are multiples of 0.25, so sums are exact in binary floating point.
STATUSES = ["new", "paid", "shipped", "cancelled"]
REGIONS = ["north", "south", "east"]
ORDER_COUNT = 60


def order(n):
    return {
        "id": "o-%03d" % n,
        "customerId": "c-%d" % (n % 12),
        "n": n,
        "total": (n * 37 % 101) * 0.25,
        "status": STATUSES[(n // 3) % 4],
        "region": REGIONS[n % 3],
    }


# The hierarchical data: 4 tenants x 5 users x 2 documents.
def person(t, u, k):
    return {"id": "d-%d-%d-%d" % (t, u, k), "tenantId": "t%d" % t, "userId": "u%d" % u, "k": k}


class ScenarioError(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise ScenarioError(message)


def expect_eq(actual, expected, what):
    if actual != expected:
        raise ScenarioError("%s: expected %r, got %r" % (what, expected, actual))


class Scenario:
    def __init__(self, endpoint, key, database):
        self.endpoint = endpoint
        self.key = key
        self.database_id = database
        # Endpoint discovery stays on, as in an application: the gateway's account document
        # must advertise its own address for the client to keep talking to it.
        self.client = CosmosClient(endpoint, credential=key)
        self.checks = 0
        self.out = {"sdk": SDK, "sdkVersion": azure.cosmos.__version__}

    def ok(self, cond, message):
        expect(cond, message)
        self.checks += 1

    def eq(self, actual, expected, what):
        expect_eq(actual, expected, what)
        self.checks += 1

    def last_charge(self):
        headers = self.client.client_connection.last_response_headers
        return float(headers["x-ms-request-charge"])

    def failing(self, status, what, call):
        """Runs `call`, which must fail with HTTP `status`; returns the error's charge."""
        try:
            call()
        except exceptions.CosmosHttpResponseError as e:
            expect_eq(e.status_code, status, what + " status")
            self.checks += 1
            return float((e.headers or {}).get("x-ms-request-charge", "nan"))
        raise ScenarioError("%s: expected HTTP %d, the request succeeded" % (what, status))

    # -- main -------------------------------------------------------------------------------

    def main(self):
        self.resources()
        self.point_operations()
        self.queries()
        self.hierarchical()
        self.change_feed()
        self.wrong_key()
        self.out["checks"] = self.checks
        return self.out

    def resources(self):
        db = self.client.create_database(self.database_id)
        self.db = db
        self.failing(409, "create an existing database", lambda: self.client.create_database(self.database_id))
        self.failing(404, "read a missing database", lambda: self.client.get_database_client("missing").read())
        # 24,000 RU/s manual: four physical partitions, so cross-partition queries fan out.
        self.orders = db.create_container("orders", PartitionKey(path="/customerId"), offer_throughput=24000)
        self.people = db.create_container(
            "people", PartitionKey(path=["/tenantId", "/userId"], kind="MultiHash"), offer_throughput=24000
        )
        self.ru = db.create_container("ru", PartitionKey(path="/pk"))
        props = self.people.read()
        self.eq(props["partitionKey"]["kind"], "MultiHash", "hierarchical key kind")
        self.eq(props["partitionKey"]["paths"], ["/tenantId", "/userId"], "hierarchical key paths")
        self.eq(self.orders.read()["partitionKey"]["paths"], ["/customerId"], "orders key paths")
        self.failing(409, "create an existing container", lambda: db.create_container("ru", PartitionKey(path="/pk")))
        self.failing(404, "read a missing container", lambda: db.get_container_client("missing").read())
        names = sorted(c["id"] for c in db.list_containers())
        self.eq(names, ["orders", "people", "ru"], "containers listed")
        self.out["feedRanges"] = {
            name: [fr["Range"] for fr in c.read_feed_ranges()]
            for name, c in (("orders", self.orders), ("people", self.people), ("ru", self.ru))
        }
        self.ok(len(self.out["feedRanges"]["orders"]) > 1, "orders has several feed ranges")
        # The SDK's own hashing: feed_range_from_partition_key is a point range at the key's
        # EPK, or the EPK range of a hierarchical prefix.
        epks = []
        for container, name, key in (
            (self.orders, "orders", "c-1"),
            (self.orders, "orders", ""),
            (self.orders, "orders", 5.5),
            (self.orders, "orders", 42),
            (self.orders, "orders", True),
            (self.orders, "orders", None),
            (self.people, "people", ["t1", "u2"]),
            (self.people, "people", ["t1"]),
        ):
            r = container.feed_range_from_partition_key(key)["Range"]
            epks.append({"container": name, "key": key, "min": r["min"], "max": r["max"],
                         "isMinInclusive": r["isMinInclusive"], "isMaxInclusive": r["isMaxInclusive"]})
        self.out["epk"] = epks

    def point_operations(self):
        """Point operations on the `ru` container, each recorded with its charge so the test
        can replay them through the CLI on an equivalent container and compare."""
        c = self.ru
        log = []

        def record(op, status, charge, **fields):
            entry = {"op": op, "status": status, "charge": charge}
            entry.update(fields)
            log.append(entry)

        doc_a = {"id": "a", "pk": "p1", "n": 1, "tags": ["x", "y"], "nested": {"k": "v", "w": 2}}
        created = c.create_item(doc_a)
        record("create", 201, self.last_charge(), body=doc_a)
        etag1 = created["_etag"]
        self.eq(created["n"], 1, "created item")
        read = c.read_item("a", partition_key="p1")
        record("read", 200, self.last_charge(), id="a", pk="p1")
        self.eq(read["_etag"], etag1, "read etag")
        charge = self.failing(404, "read a missing item", lambda: c.read_item("zz", partition_key="p1"))
        record("read", 404, charge, id="zz", pk="p1")
        charge = self.failing(409, "create an existing id", lambda: c.create_item(doc_a))
        record("create", 409, charge, body=doc_a)

        doc_a2 = dict(doc_a, n=2, note="replaced")
        replaced = c.replace_item("a", doc_a2, etag=etag1, match_condition=MatchConditions.IfNotModified)
        record("replace", 200, self.last_charge(), body=doc_a2, ifMatch="current")
        etag2 = replaced["_etag"]
        self.ok(etag2 != etag1, "replace changes the etag")
        charge = self.failing(
            412, "replace with a stale etag",
            lambda: c.replace_item("a", doc_a, etag=etag1, match_condition=MatchConditions.IfNotModified),
        )
        record("replace", 412, charge, body=doc_a, ifMatch="stale")

        doc_b = {"id": "b", "pk": "p1", "n": 10}
        c.upsert_item(doc_b)
        record("upsert", 201, self.last_charge(), body=doc_b)
        doc_b2 = {"id": "b", "pk": "p1", "n": 11, "more": "x" * 300}
        upserted = c.upsert_item(doc_b2)
        record("upsert", 200, self.last_charge(), body=doc_b2)
        self.eq(upserted["n"], 11, "upserted item")

        ops = [
            {"op": "set", "path": "/n", "value": 5},
            {"op": "incr", "path": "/n", "value": 2},
            {"op": "add", "path": "/tags/-", "value": "z"},
            {"op": "remove", "path": "/nested/k"},
        ]
        patched = c.patch_item("a", partition_key="p1", patch_operations=ops)
        record("patch", 200, self.last_charge(), id="a", pk="p1", operations=ops)
        self.eq((patched["n"], patched["tags"], patched["nested"]), (7, ["x", "y", "z"], {"w": 2}), "patched item")
        cond_ops = [{"op": "set", "path": "/status", "value": "checked"}]
        charge = self.failing(
            412, "patch whose condition does not match",
            lambda: c.patch_item("a", partition_key="p1", patch_operations=cond_ops,
                                 filter_predicate="FROM c WHERE c.n = 100"),
        )
        record("patch", 412, charge, id="a", pk="p1", operations=cond_ops, condition="FROM c WHERE c.n = 100")
        patched = c.patch_item("a", partition_key="p1", patch_operations=cond_ops,
                               filter_predicate="FROM c WHERE c.n = 7")
        record("patch", 200, self.last_charge(), id="a", pk="p1", operations=cond_ops, condition="FROM c WHERE c.n = 7")
        self.eq(patched["status"], "checked", "conditionally patched item")
        etag3 = patched["_etag"]

        charge = self.failing(
            412, "delete with a stale etag",
            lambda: c.delete_item("a", partition_key="p1", etag=etag2, match_condition=MatchConditions.IfNotModified),
        )
        record("delete", 412, charge, id="a", pk="p1", ifMatch="stale")
        c.delete_item("a", partition_key="p1", etag=etag3, match_condition=MatchConditions.IfNotModified)
        record("delete", 204, self.last_charge(), id="a", pk="p1", ifMatch="current")
        charge = self.failing(404, "read a deleted item", lambda: c.read_item("a", partition_key="p1"))
        record("read", 404, charge, id="a", pk="p1")
        charge = self.failing(404, "delete a missing item", lambda: c.delete_item("a", partition_key="p1"))
        record("delete", 404, charge, id="a", pk="p1")

        # A transactional batch, in the SDK's tuple form; `wire` is the same batch in the
        # service's (and the CLI's) operation shape, for the replay.
        c1 = {"id": "c1", "pk": "p2", "n": 1}
        c2 = {"id": "c2", "pk": "p2", "n": 2}
        c3 = {"id": "c3", "pk": "p2", "n": 3}
        c2b = {"id": "c2", "pk": "p2", "n": 22}
        bops = [{"op": "incr", "path": "/n", "value": 100}]
        batch = [
            ("create", (c1,)), ("create", (c2,)), ("upsert", (c3,)), ("read", ("c1",)),
            ("replace", ("c2", c2b)), ("patch", ("c1", bops)), ("delete", ("c3",)),
        ]
        wire = [
            {"operationType": "Create", "resourceBody": c1},
            {"operationType": "Create", "resourceBody": c2},
            {"operationType": "Upsert", "resourceBody": c3},
            {"operationType": "Read", "id": "c1"},
            {"operationType": "Replace", "id": "c2", "resourceBody": c2b},
            {"operationType": "Patch", "id": "c1", "resourceBody": {"operations": bops}},
            {"operationType": "Delete", "id": "c3"},
        ]
        results = c.execute_item_batch(batch, partition_key="p2")
        record("batch", 200, float(results.get_response_headers()["x-ms-request-charge"]), pk="p2", operations=wire)
        self.eq([r["statusCode"] for r in results], [201, 201, 201, 200, 200, 200, 204], "batch statuses")
        self.eq(c.read_item("c1", partition_key="p2")["n"], 101, "batch patch applied")
        self.failing(404, "batch delete applied", lambda: c.read_item("c3", partition_key="p2"))

        c4 = {"id": "c4", "pk": "p2", "n": 4}
        failing = [("create", (c4,)), ("create", (c1,))]
        wire = [{"operationType": "Create", "resourceBody": c4}, {"operationType": "Create", "resourceBody": c1}]
        try:
            c.execute_item_batch(failing, partition_key="p2")
            raise ScenarioError("a batch creating an existing id succeeded")
        except exceptions.CosmosBatchOperationError as e:
            self.eq(e.error_index, 1, "failed batch operation index")
            self.eq([r["statusCode"] for r in e.operation_responses], [424, 409], "failed batch statuses")
            charge = float(e.headers["x-ms-request-charge"])
        record("batch", 409, charge, pk="p2", operations=wire)
        self.failing(404, "a failed batch writes nothing", lambda: c.read_item("c4", partition_key="p2"))

        # A single-partition query in one page: its charge is one request's, like the CLI's.
        sql = "SELECT * FROM c WHERE c.n > @min"
        docs = list(c.query_items(sql, parameters=[{"name": "@min", "value": 0}], partition_key="p2",
                                  max_item_count=100))
        self.eq(sorted(d["id"] for d in docs), ["c1", "c2"], "single-partition query on ru")
        record("query", 200, self.last_charge(), pk="p2", query=sql, parameters={"@min": 0})
        self.out["operations"] = log

    def paged(self, what, iterable, page_size):
        """Every page of a query, each checked against the page size; the items in order."""
        items, pages = [], 0
        for page in iterable.by_page():
            page = list(page)
            expect(len(page) <= page_size, "%s: a page of %d items, over max_item_count %d" % (what, len(page), page_size))
            items.extend(page)
            pages += 1
        self.checks += 1
        return items, pages

    def query(self, what, sql, page_size, params=None, pk=None, expected=None, key=None, pipeline=False):
        """Runs `sql` on orders to its last page and compares the result with `expected`
        (both through `key` when given). A `pipeline` query (ORDER BY, TOP, OFFSET, an
        aggregate, DISTINCT across partitions) must have run in the SDK's own pipeline: the
        query plan, then one query per physical partition, merged here."""
        ranges = set()
        kwargs = {"max_item_count": page_size, "raw_response_hook": range_recorder(ranges)}
        if params:
            kwargs["parameters"] = [{"name": k, "value": v} for k, v in params.items()]
        if pk is not None:
            kwargs["partition_key"] = pk
        else:
            kwargs["enable_cross_partition_query"] = True
        items, pages = self.paged(what, self.orders.query_items(sql, **kwargs), page_size)
        got = items if key is None else key(items)
        want = expected if key is None else key(expected)
        self.eq(got, want, what)
        if pipeline:
            self.eq(len(ranges), len(self.out["feedRanges"]["orders"]),
                    what + ": physical partitions the SDK queried one by one (%s)" % sorted(ranges))
        self.out.setdefault("queries", []).append(
            {"name": what, "pages": pages, "count": len(items), "rangesQueried": sorted(ranges)})
        return items, pages

    def queries(self):
        data = [order(n) for n in range(ORDER_COUNT)]
        for d in data:
            self.orders.create_item(d)
        by_n = sorted(data, key=lambda d: d["n"])
        ids = sorted(d["id"] for d in data)

        # Plain fan-out: every item once, in pages of at most 7.
        got, pages = self.paged("select all", self.orders.query_items("SELECT * FROM c", max_item_count=7,
                                                                       enable_cross_partition_query=True), 7)
        self.eq(sorted(d["id"] for d in got), ids, "select all: every item once")
        self.ok(pages >= ORDER_COUNT // 7, "select all: paged (%d pages)" % pages)
        self.out.setdefault("queries", []).append({"name": "select all", "pages": pages, "count": len(got)})
        got, _ = self.paged("read all items", self.orders.read_all_items(max_item_count=6), 6)
        self.eq(sorted(d["id"] for d in got), ids, "read all items")

        # Partition statistics and usage, asked for as Data Explorer asks: one element per
        # physical partition, whose document counts add up to what was written.
        props = self.orders.read(populate_partition_key_range_statistics=True, populate_quota_info=True)
        stats = props.get("statistics") or []
        self.eq(len(stats), 4, "statistics: one per physical partition")
        self.eq(sum(s["documentCount"] for s in stats), ORDER_COUNT, "statistics: document counts")
        self.ok(all(isinstance(s["id"], str) and (s["sizeInKB"] > 0) == (s["documentCount"] > 0)
                    and isinstance(s["partitionKeys"], list) for s in stats),
                "statistics: ids, sizes and keys: %r" % stats)
        usage = self.orders.client_connection.last_response_headers.get("x-ms-resource-usage", "")
        self.ok("documentsCount=%d;" % ORDER_COUNT in usage, "usage header: %r" % usage)

        self.query("order by n", "SELECT c.id, c.n FROM c ORDER BY c.n", 5,
                   expected=[{"id": d["id"], "n": d["n"]} for d in by_n], pipeline=True)
        paid = sorted((d for d in data if d["status"] == "paid"), key=lambda d: -d["total"])
        self.query("order by total desc with a parameter",
                   "SELECT * FROM c WHERE c.status = @s ORDER BY c.total DESC", 4, params={"@s": "paid"},
                   expected=paid, key=lambda docs: [d["id"] for d in docs], pipeline=True)
        by_total = sorted(data, key=lambda d: -d["total"])
        self.query("top", "SELECT TOP 7 VALUE c.n FROM c ORDER BY c.total DESC", 3,
                   expected=[d["n"] for d in by_total[:7]], pipeline=True)
        self.query("offset limit", "SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 9 LIMIT 13", 4,
                   expected=list(range(9, 22)), pipeline=True)
        self.query("count", "SELECT VALUE COUNT(1) FROM c", 5, expected=[ORDER_COUNT], pipeline=True)
        self.query("sum", "SELECT VALUE SUM(c.total) FROM c", 5, expected=[sum(d["total"] for d in data)], pipeline=True)
        self.query("min", "SELECT VALUE MIN(c.total) FROM c", 5, expected=[min(d["total"] for d in data)], pipeline=True)
        self.query("max", "SELECT VALUE MAX(c.n) FROM c", 5, expected=[ORDER_COUNT - 1], pipeline=True)
        avg = sum(d["total"] for d in data) / ORDER_COUNT
        got, _ = self.query("avg", "SELECT VALUE AVG(c.total) FROM c", 5, expected=[avg],
                            key=lambda v: [round(x, 9) for x in v], pipeline=True)
        north = [d for d in data if d["region"] == "north"]
        self.query("count with a parameter", "SELECT VALUE COUNT(1) FROM c WHERE c.region = @r", 3,
                   params={"@r": "north"}, expected=[len(north)], pipeline=True)
        self.query("distinct value", "SELECT DISTINCT VALUE c.status FROM c", 3,
                   expected=STATUSES, key=sorted, pipeline=True)
        self.query("distinct object", "SELECT DISTINCT c.region FROM c", 3,
                   expected=[{"region": r} for r in REGIONS], key=lambda v: sorted(x["region"] for x in v), pipeline=True)
        # This SDK does not support GROUP BY across partitions (its README's "Limitations"):
        # it leaves GroupBy and NonValueAggregate out of x-ms-cosmos-supported-query-features,
        # and the service refuses such a query with 400.
        self.failing(400, "a cross-partition GROUP BY, which the SDK does not support",
                     lambda: list(self.orders.query_items(
                         "SELECT c.status, COUNT(1) AS count FROM c GROUP BY c.status",
                         enable_cross_partition_query=True)))

        # Single partition (the partition key given): the server runs the whole query.
        c5 = sorted((d for d in data if d["customerId"] == "c-5"), key=lambda d: -d["n"])
        self.query("single partition order by", "SELECT * FROM c WHERE c.customerId = @c ORDER BY c.n DESC", 2,
                   params={"@c": "c-5"}, pk="c-5", expected=c5, key=lambda docs: [d["id"] for d in docs])
        self.query("single partition count", "SELECT VALUE COUNT(1) FROM c", 3, pk="c-5", expected=[len(c5)])
        c5_groups = {}
        for d in c5:
            c5_groups[d["status"]] = c5_groups.get(d["status"], 0) + 1
        self.query("single partition group by", "SELECT c.status, COUNT(1) AS n FROM c GROUP BY c.status", 3,
                   pk="c-5", expected=[{"status": s, "n": n} for s, n in c5_groups.items()],
                   key=lambda v: sorted(v, key=lambda g: g["status"]))
        self.failing(400, "a query with a syntax error",
                     lambda: list(self.orders.query_items("SELECT FROM WHERE", enable_cross_partition_query=True)))

    def hierarchical(self):
        data = [person(t, u, k) for t in range(4) for u in range(5) for k in range(2)]
        for d in data:
            self.people.create_item(d)
        doc = self.people.read_item("d-1-2-0", partition_key=["t1", "u2"])
        self.eq(doc["k"], 0, "read by a full hierarchical key")
        self.failing(404, "read under another user", lambda: self.people.read_item("d-1-2-0", partition_key=["t1", "u3"]))
        ids = lambda docs: sorted(d["id"] for d in docs)
        got, _ = self.paged("full key", self.people.query_items("SELECT * FROM c", partition_key=["t1", "u2"],
                                                                  max_item_count=3), 3)
        self.eq(ids(got), ["d-1-2-0", "d-1-2-1"], "query by a full hierarchical key")
        # A prefix (tenant only) reaches the ranges its EPK range overlaps, and no other tenant.
        got, _ = self.paged("prefix", self.people.query_items("SELECT * FROM c", partition_key=["t1"],
                                                               max_item_count=4), 4)
        self.eq(ids(got), sorted(d["id"] for d in data if d["tenantId"] == "t1"), "query by a key prefix")
        ranges = set()
        got, _ = self.paged("people fan-out", self.people.query_items(
            "SELECT VALUE c.id FROM c WHERE c.userId = 'u3' ORDER BY c.id DESC",
            enable_cross_partition_query=True, max_item_count=3, raw_response_hook=range_recorder(ranges)), 3)
        self.eq(got, sorted((d["id"] for d in data if d["userId"] == "u3"), reverse=True), "hierarchical fan-out")
        self.eq(len(ranges), len(self.out["feedRanges"]["people"]),
                "hierarchical fan-out: physical partitions the SDK queried one by one (%s)" % sorted(ranges))

    def change_feed(self):
        c = self.orders
        headers = lambda: self.client.client_connection.last_response_headers

        def drain(**kwargs):
            items = []
            for page in c.query_items_change_feed(max_item_count=7, **kwargs).by_page():
                page = list(page)
                expect(len(page) <= 7, "change feed page of %d items, over max_item_count 7" % len(page))
                items.extend(page)
            return items, headers()["etag"]

        # From the beginning: each item once, at its latest version.
        c.patch_item("o-003", partition_key="c-3", patch_operations=[{"op": "set", "path": "/v", "value": 2}])
        items, token = drain(start_time="Beginning")
        self.eq(sorted(d["id"] for d in items), sorted(order(n)["id"] for n in range(ORDER_COUNT)),
                "change feed from the beginning: every item once")
        self.eq([d.get("v") for d in items if d["id"] == "o-003"], [2], "change feed: the latest version")
        # From now: nothing old, then what is written after.
        old, now_token = drain(start_time="Now")
        self.eq(old, [], "change feed from now")
        new = [order(n) for n in range(ORDER_COUNT, ORDER_COUNT + 3)]
        for d in new:
            c.create_item(d)
        after_now, _ = drain(continuation=now_token)
        self.eq(sorted(d["id"] for d in after_now), [d["id"] for d in new], "change feed after now")
        # From the continuation saved at the end of the first read: the writes since.
        c.upsert_item(dict(order(7), v=3))
        since, token2 = drain(continuation=token)
        self.eq(sorted(d["id"] for d in since), sorted([d["id"] for d in new] + ["o-007"]),
                "change feed from a saved continuation")
        again, _ = drain(continuation=token2)
        self.eq(again, [], "change feed at its end")

    def wrong_key(self):
        bad = "A" * 86 + "=="  # a well-formed base64 key that is not the gateway's
        try:
            client = CosmosClient(self.endpoint, credential=bad)
            list(client.list_databases())
        except exceptions.CosmosHttpResponseError as e:
            self.eq(e.status_code, 401, "a wrong key")
            self.out["wrongKeyStatus"] = e.status_code
            return
        raise ScenarioError("a client with a wrong key was served")

    # -- split / resume -------------------------------------------------------------------

    def split(self, state_file):
        db = self.client.create_database_if_not_exists(self.database_id)
        # 12,000 RU/s: two physical partitions; the test raises the throughput to split them.
        c = db.create_container("split", PartitionKey(path="/pk"), offer_throughput=12000)
        pre = [split_item(i, "pre") for i in range(SPLIT_ITEMS)]
        for d in pre:
            c.create_item(d)
        before = [fr["Range"] for fr in c.read_feed_ranges()]
        self.eq(len(before), 2, "feed ranges before the split")

        # The first pages of each kind of read, with the iterators kept for after the split.
        fanout = c.query_items(PRE_QUERY, enable_cross_partition_query=True, max_item_count=6).by_page()
        fanout_seen = take_pages(fanout, 2)
        # The SDK resumes streaming cross-partition queries from a token (its README).
        fanout_token = fanout.continuation_token
        expect(fanout_token, "a fan-out query page before the last has a continuation token")
        # An ORDER BY query, run in the SDK's pipeline range by range, fills the client's
        # routing map with the two ranges. (None is held across the split: when a range it
        # reads splits, this SDK rebuilds that range's producers from the start, repeating
        # items already returned: _execution_context/multi_execution_aggregator.py,
        # _repair_document_producer.)
        ordered_ranges = set()
        got = drain(c.query_items(ORDERED_QUERY, enable_cross_partition_query=True, max_item_count=5,
                                  raw_response_hook=range_recorder(ordered_ranges)).by_page())
        self.eq([d["n"] for d in got], list(range(SPLIT_ITEMS)), "ORDER BY query before the split")
        self.eq(len(ordered_ranges), 2, "ORDER BY: physical partitions the SDK queried one by one (%s)"
                % sorted(ordered_ranges))
        single = c.query_items(PRE_QUERY, partition_key=SINGLE_KEY, max_item_count=1).by_page()
        single_seen = take_pages(single, 1)
        single_token = single.continuation_token
        expect(single_token, "a single-partition query page before the last has a continuation token")
        feed = c.query_items_change_feed(start_time="Beginning", max_item_count=7).by_page()
        feed_seen = take_pages(feed, 2)
        feed_token = self.client.client_connection.last_response_headers["etag"]
        state = {
            "feedToken": feed_token,
            "feedSeen": ids(feed_seen),
            "fanoutToken": fanout_token,
            "fanoutSeen": ids(fanout_seen),
            "singleToken": single_token,
            "singleSeen": ids(single_seen),
        }
        save(state_file, state)
        print(json.dumps({"event": "paused", "feedRanges": before}), flush=True)
        line = sys.stdin.readline()
        expect(line.strip() == "go", "expected `go` on stdin after the pause, got %r" % line)

        # The same iterators after the split: the ranges they were reading are gone.
        pre_ids = sorted(ids(pre))
        rest = drain(fanout)
        self.eq(sorted(ids(fanout_seen + rest)), pre_ids, "fan-out query across the split: every item once")
        # The same ORDER BY query again on this client, whose routing map still holds the
        # parents: they answer 410/1002, and the SDK re-reads the ranges and queries the
        # children.
        ordered_after = set()
        got = drain(c.query_items(ORDERED_QUERY, enable_cross_partition_query=True, max_item_count=5,
                                  raw_response_hook=range_recorder(ordered_after)).by_page())
        self.eq([d["n"] for d in got], list(range(SPLIT_ITEMS)), "ORDER BY query after the split")
        self.eq(len(ordered_after - ordered_ranges), 4, "ORDER BY after the split: the SDK queried the children (%s)"
                % sorted(ordered_after))
        rest = drain(single)
        self.eq(sorted(ids(single_seen + rest)), single_ids(), "single-partition query across the split")
        post = [split_item(i, "post") for i in range(SPLIT_ITEMS, SPLIT_ITEMS + POST_ITEMS)]
        for d in post:
            c.create_item(d)
        rest = drain(feed)
        every = sorted(ids(pre + post))
        self.eq(sorted(ids(feed_seen + rest)), every, "change feed across the split: every item once")
        after = [fr["Range"] for fr in c.read_feed_ranges(force_refresh=True)]
        self.ok(len(after) > len(before), "more feed ranges after the split")
        state["all"] = every
        save(state_file, state)
        return dict(self.out, rangesBefore=before, rangesAfter=after, checks=self.checks)

    def resume(self, state_file):
        with open(state_file) as f:
            state = json.load(f)
        c = self.client.get_database_client(self.database_id).get_container_client("split")
        feed = c.query_items_change_feed(continuation=state["feedToken"], max_item_count=7).by_page()
        got = drain(feed)
        want = sorted(set(state["all"]) - set(state["feedSeen"]))
        self.eq(sorted(ids(got)), want, "change feed from a continuation saved before the split")
        fanout = c.query_items(PRE_QUERY, enable_cross_partition_query=True, max_item_count=6).by_page(
            state["fanoutToken"])
        got = drain(fanout)
        self.eq(sorted(state["fanoutSeen"] + ids(got)), sorted(split_item(i, "pre")["id"] for i in range(SPLIT_ITEMS)),
                "fan-out query from a continuation saved before the split")
        single = c.query_items(PRE_QUERY, partition_key=SINGLE_KEY, max_item_count=1).by_page(state["singleToken"])
        got = drain(single)
        self.eq(sorted(state["singleSeen"] + ids(got)), single_ids(),
                "single-partition query from a continuation saved before the split")
        ranges = [fr["Range"] for fr in c.read_feed_ranges()]
        return dict(self.out, feedRanges=ranges, checks=self.checks)


# The split scenario's data: 80 items on 40 keys, then 20 more after the split.
SPLIT_ITEMS = 80
POST_ITEMS = 20
SINGLE_KEY = "k-1"
PRE_QUERY = "SELECT * FROM c WHERE c.kind = 'pre'"
ORDERED_QUERY = "SELECT c.id, c.n FROM c WHERE c.kind = 'pre' ORDER BY c.n"


def split_item(i, kind):
    return {"id": "s-%03d" % i, "pk": "k-%d" % (i % 40), "n": i, "kind": kind}


def single_ids():
    return sorted(split_item(i, "pre")["id"] for i in range(SPLIT_ITEMS) if "k-%d" % (i % 40) == SINGLE_KEY)


def range_recorder(ranges):
    """A raw_response_hook that adds the partition key range id each request named (the
    SDK names one when it runs a query range by range) to `ranges`."""
    def hook(response):
        rid = response.http_request.headers.get("x-ms-documentdb-partitionkeyrangeid")
        if rid is not None:
            ranges.add(rid)
    return hook


def ids(docs):
    return [d["id"] for d in docs]


def take_pages(pages, n):
    """The items of the next `n` non-empty pages."""
    items = []
    while n > 0:
        page = list(next(pages))
        if page:
            items.extend(page)
            n -= 1
    return items


def drain(pages):
    return [d for page in pages for d in page]


def save(path, state):
    with open(path, "w") as f:
        json.dump(state, f)


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    phase, endpoint, key, database = argv[1:5]
    state_file = argv[5] if len(argv) > 5 else None
    try:
        if phase == "main":
            out = Scenario(endpoint, key, database).main()
        elif phase == "scripts":
            import scripts_scenario

            out = scripts_scenario.run(Scenario(endpoint, key, database))
        elif phase in ("split", "resume"):
            if not state_file:
                print("the %s phase needs STATE_FILE" % phase, file=sys.stderr)
                return 2
            scenario = Scenario(endpoint, key, database)
            out = scenario.split(state_file) if phase == "split" else scenario.resume(state_file)
        else:
            print("unknown phase %r" % phase, file=sys.stderr)
            return 2
    except ScenarioError as e:
        print("scenario failed: %s" % e, file=sys.stderr)
        return 1
    except Exception:  # an SDK exception is a failure too, with its traceback
        print("scenario failed with an exception:\n%s" % traceback.format_exc(), file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
