// The gateway's scenario for the official Node SDK (@azure/cosmos), run by
// tests/integration/gateway/sdk against `cosmoscope serve`.
//
//     node scenario.js PHASE ENDPOINT KEY DATABASE [STATE_FILE]
//
// PHASE is one of
//   main    resources (a hierarchical key too), point operations with their expected errors,
//           patch, batch, queries paged to the end, change feed, EPKs and feed ranges, 401.
//   split   writes items to a two-range container, reads the first pages of queries and the
//           change feed, saves their continuations in STATE_FILE, prints {"event": "paused"},
//           then waits for a line on stdin (the test splits the ranges meanwhile), resumes the
//           same iterators, writes more items and checks that every item came exactly once.
//   resume  a new client resumes the continuations STATE_FILE holds (taken before the split).
//
// Every phase prints one JSON document as its last line on stdout. Anything unexpected (a
// wrong status, result, order or count, an SDK exception) fails with exit status 1 and a
// `scenario failed:` message on stderr. Expectations are computed here from the data written.

"use strict";

const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");
const cosmos = require("@azure/cosmos");
const { CosmosClient, ChangeFeedStartFrom, PartitionKeyKind } = cosmos;

const SDK = "node";
const SDK_VERSION = require("@azure/cosmos/package.json").version;

// The SDK's own partition key hashing. It has no public function for a key's EPK, so this
// loads the module its routing uses (by file, past the package's export map).
const { hashPartitionKey } = require(
  path.join(path.dirname(require.resolve("@azure/cosmos")), "utils", "hashing", "hash.js"),
);

// The orders data: 60 items on 12 customers, with unique totals (for a stable ORDER BY)
// that are multiples of 0.25, so sums are exact in binary floating point.
const STATUSES = ["new", "paid", "shipped", "cancelled"];
const REGIONS = ["north", "south", "east"];
const ORDER_COUNT = 60;

function order(n) {
  return {
    id: "o-" + String(n).padStart(3, "0"),
    customerId: "c-" + (n % 12),
    n,
    total: ((n * 37) % 101) * 0.25,
    status: STATUSES[Math.floor(n / 3) % 4],
    region: REGIONS[n % 3],
  };
}

// The hierarchical data: 4 tenants x 5 users x 2 documents.
function person(t, u, k) {
  return { id: `d-${t}-${u}-${k}`, tenantId: `t${t}`, userId: `u${u}`, k };
}

class ScenarioError extends Error {}

function expect(cond, message) {
  if (!cond) throw new ScenarioError(message);
}

// Structural equality through canonical JSON (object keys sorted).
function canonical(v) {
  if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
  if (v && typeof v === "object") {
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
  }
  return JSON.stringify(v);
}

const ids = (docs) => docs.map((d) => d.id);
// A query page's items: the SDK's pipeline hands back a page without `resources` when a
// fetch produced nothing for the caller (an OFFSET skipping a whole range page, say).
const pageItems = (page) => page.resources ?? [];
const sorted = (xs, cmp) => [...xs].sort(cmp);
const byNumber = (a, b) => a - b;
const charge = (headers) => Number(headers["x-ms-request-charge"]);

class Scenario {
  constructor(endpoint, key, database) {
    this.endpoint = endpoint;
    this.key = key;
    this.databaseId = database;
    // Endpoint discovery stays on, as in an application: the gateway's account document
    // must advertise its own address for the client to keep talking to it.
    this.client = new CosmosClient({ endpoint, key });
    this.checks = 0;
    this.out = { sdk: SDK, sdkVersion: SDK_VERSION };
  }

  ok(cond, message) {
    expect(cond, message);
    this.checks++;
  }

  eq(actual, expected, what) {
    if (canonical(actual) !== canonical(expected)) {
      throw new ScenarioError(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
    }
    this.checks++;
  }

  // Runs `call`, which must fail with HTTP `status`; returns the error's charge.
  async failing(status, what, call) {
    let result;
    try {
      result = await call();
    } catch (e) {
      if (e instanceof ScenarioError) throw e;
      this.eq(e.code, status, `${what} status (${e.message})`);
      return charge(e.headers || {});
    }
    // Item reads answer 404 without throwing.
    if (result && result.statusCode === status) {
      this.checks++;
      return result.requestCharge;
    }
    throw new ScenarioError(`${what}: expected HTTP ${status}, got ${result && result.statusCode}`);
  }

  // ---- main ---------------------------------------------------------------------------

  async main() {
    await this.resources();
    await this.pointOperations();
    await this.queries();
    await this.hierarchical();
    await this.changeFeed();
    await this.wrongKey();
    this.out.checks = this.checks;
    return this.out;
  }

  async resources() {
    const { database: db } = await this.client.databases.create({ id: this.databaseId });
    this.db = db;
    await this.failing(409, "create an existing database", () => this.client.databases.create({ id: this.databaseId }));
    await this.failing(404, "read a missing database", () => this.client.database("missing").read());
    // 24,000 RU/s manual: four physical partitions, so cross-partition queries fan out.
    this.orders = (
      await db.containers.create({
        id: "orders",
        partitionKey: { paths: ["/customerId"], version: 2 },
        throughput: 24000,
      })
    ).container;
    this.people = (
      await db.containers.create({
        id: "people",
        partitionKey: { paths: ["/tenantId", "/userId"], kind: PartitionKeyKind.MultiHash, version: 2 },
        throughput: 24000,
      })
    ).container;
    this.ru = (await db.containers.create({ id: "ru", partitionKey: { paths: ["/pk"], version: 2 } })).container;
    const { resource: props } = await this.people.read();
    this.eq(props.partitionKey.kind, "MultiHash", "hierarchical key kind");
    this.eq(props.partitionKey.paths, ["/tenantId", "/userId"], "hierarchical key paths");
    this.eq((await this.orders.read()).resource.partitionKey.paths, ["/customerId"], "orders key paths");
    await this.failing(409, "create an existing container", () =>
      db.containers.create({ id: "ru", partitionKey: { paths: ["/pk"], version: 2 } }),
    );
    await this.failing(404, "read a missing container", () => db.container("missing").read());
    const { resources: list } = await db.containers.readAll().fetchAll();
    this.eq(sorted(ids(list)), ["orders", "people", "ru"], "containers listed");

    this.out.feedRanges = {};
    for (const [name, c] of [["orders", this.orders], ["people", this.people], ["ru", this.ru]]) {
      const ranges = await c.getFeedRanges();
      this.out.feedRanges[name] = ranges.map((r) => ({
        min: r.minInclusive,
        max: r.maxExclusive,
        isMinInclusive: true,
        isMaxInclusive: false,
      }));
    }
    this.ok(this.out.feedRanges.orders.length > 1, "orders has several feed ranges");

    // The SDK's hashing of full keys (a hierarchical prefix has no single EPK here).
    this.out.epk = [];
    for (const [c, name, key] of [
      [this.orders, "orders", "c-1"],
      [this.orders, "orders", ""],
      [this.orders, "orders", 5.5],
      [this.orders, "orders", 42],
      [this.orders, "orders", true],
      [this.orders, "orders", null],
      [this.people, "people", ["t1", "u2"]],
    ]) {
      const { resource } = await c.read();
      const epk = hashPartitionKey(Array.isArray(key) ? key : [key], resource.partitionKey);
      this.out.epk.push({ container: name, key, min: epk, max: epk, isMinInclusive: true, isMaxInclusive: true });
    }
  }

  // Point operations on the `ru` container, each recorded with its charge so the test can
  // replay them through the CLI on an equivalent container and compare.
  async pointOperations() {
    const c = this.ru;
    const log = [];
    const record = (op, status, requestCharge, fields) =>
      log.push({ op, status, charge: requestCharge, ...fields });
    const ifMatch = (etag) => ({ accessCondition: { type: "IfMatch", condition: etag } });

    const docA = { id: "a", pk: "p1", n: 1, tags: ["x", "y"], nested: { k: "v", w: 2 } };
    let r = await c.items.create(docA);
    this.eq(r.statusCode, 201, "create status");
    record("create", 201, r.requestCharge, { body: docA });
    const etag1 = r.resource._etag;
    r = await c.item("a", "p1").read();
    this.eq([r.statusCode, r.resource._etag], [200, etag1], "read");
    record("read", 200, r.requestCharge, { id: "a", pk: "p1" });
    let ch = await this.failing(404, "read a missing item", () => c.item("zz", "p1").read());
    record("read", 404, ch, { id: "zz", pk: "p1" });
    ch = await this.failing(409, "create an existing id", () => c.items.create(docA));
    record("create", 409, ch, { body: docA });

    const docA2 = { ...docA, n: 2, note: "replaced" };
    r = await c.item("a", "p1").replace(docA2, ifMatch(etag1));
    this.eq(r.statusCode, 200, "replace status");
    record("replace", 200, r.requestCharge, { body: docA2, ifMatch: "current" });
    const etag2 = r.resource._etag;
    this.ok(etag2 !== etag1, "replace changes the etag");
    ch = await this.failing(412, "replace with a stale etag", () => c.item("a", "p1").replace(docA, ifMatch(etag1)));
    record("replace", 412, ch, { body: docA, ifMatch: "stale" });

    const docB = { id: "b", pk: "p1", n: 10 };
    r = await c.items.upsert(docB);
    this.eq(r.statusCode, 201, "upsert (create) status");
    record("upsert", 201, r.requestCharge, { body: docB });
    const docB2 = { id: "b", pk: "p1", n: 11, more: "x".repeat(300) };
    r = await c.items.upsert(docB2);
    this.eq([r.statusCode, r.resource.n], [200, 11], "upsert (replace)");
    record("upsert", 200, r.requestCharge, { body: docB2 });

    const ops = [
      { op: "set", path: "/n", value: 5 },
      { op: "incr", path: "/n", value: 2 },
      { op: "add", path: "/tags/-", value: "z" },
      { op: "remove", path: "/nested/k" },
    ];
    r = await c.item("a", "p1").patch(ops);
    this.eq([r.resource.n, r.resource.tags, r.resource.nested], [7, ["x", "y", "z"], { w: 2 }], "patched item");
    record("patch", 200, r.requestCharge, { id: "a", pk: "p1", operations: ops });
    const condOps = [{ op: "set", path: "/status", value: "checked" }];
    ch = await this.failing(412, "patch whose condition does not match", () =>
      c.item("a", "p1").patch({ condition: "FROM c WHERE c.n = 100", operations: condOps }),
    );
    record("patch", 412, ch, { id: "a", pk: "p1", operations: condOps, condition: "FROM c WHERE c.n = 100" });
    r = await c.item("a", "p1").patch({ condition: "FROM c WHERE c.n = 7", operations: condOps });
    this.eq(r.resource.status, "checked", "conditionally patched item");
    record("patch", 200, r.requestCharge, { id: "a", pk: "p1", operations: condOps, condition: "FROM c WHERE c.n = 7" });
    const etag3 = r.resource._etag;

    ch = await this.failing(412, "delete with a stale etag", () => c.item("a", "p1").delete(ifMatch(etag2)));
    record("delete", 412, ch, { id: "a", pk: "p1", ifMatch: "stale" });
    r = await c.item("a", "p1").delete(ifMatch(etag3));
    this.eq(r.statusCode, 204, "delete status");
    record("delete", 204, r.requestCharge, { id: "a", pk: "p1", ifMatch: "current" });
    ch = await this.failing(404, "read a deleted item", () => c.item("a", "p1").read());
    record("read", 404, ch, { id: "a", pk: "p1" });
    ch = await this.failing(404, "delete a missing item", () => c.item("a", "p1").delete());
    record("delete", 404, ch, { id: "a", pk: "p1" });

    // A transactional batch: the SDK's operation shape is the service's (and the CLI's).
    const c1 = { id: "c1", pk: "p2", n: 1 };
    const c2 = { id: "c2", pk: "p2", n: 2 };
    const c3 = { id: "c3", pk: "p2", n: 3 };
    const c2b = { id: "c2", pk: "p2", n: 22 };
    const bops = [{ op: "incr", path: "/n", value: 100 }];
    const batch = [
      { operationType: "Create", resourceBody: c1 },
      { operationType: "Create", resourceBody: c2 },
      { operationType: "Upsert", resourceBody: c3 },
      { operationType: "Read", id: "c1" },
      { operationType: "Replace", id: "c2", resourceBody: c2b },
      { operationType: "Patch", id: "c1", resourceBody: { operations: bops } },
      { operationType: "Delete", id: "c3" },
    ];
    r = await c.items.batch(batch, "p2");
    this.eq(r.result.map((x) => x.statusCode), [201, 201, 201, 200, 200, 200, 204], "batch statuses");
    record("batch", 200, charge(r.headers), { pk: "p2", operations: batch });
    this.eq((await c.item("c1", "p2").read()).resource.n, 101, "batch patch applied");
    await this.failing(404, "batch delete applied", () => c.item("c3", "p2").read());

    const c4 = { id: "c4", pk: "p2", n: 4 };
    const failed = [
      { operationType: "Create", resourceBody: c4 },
      { operationType: "Create", resourceBody: c1 },
    ];
    // A batch that did not commit is still a response (the service's 207 Multi-Status):
    // each operation's status is in its result.
    r = await c.items.batch(failed, "p2");
    this.eq(r.result.map((x) => x.statusCode), [424, 409], "failed batch statuses");
    record("batch", 409, charge(r.headers), { pk: "p2", operations: failed });
    await this.failing(404, "a failed batch writes nothing", () => c.item("c4", "p2").read());

    // A single-partition query in one page: its charge is one request's, like the CLI's.
    const sql = "SELECT * FROM c WHERE c.n > @min";
    const page = await c.items
      .query({ query: sql, parameters: [{ name: "@min", value: 0 }] }, { partitionKey: "p2", maxItemCount: 100 })
      .fetchNext();
    this.eq(sorted(ids(page.resources)), ["c1", "c2"], "single-partition query on ru");
    record("query", 200, page.requestCharge, { pk: "p2", query: sql, parameters: { "@min": 0 } });
    this.out.operations = log;
  }

  // Every page of a query iterator, each checked against the page size; the items in order
  // and the partition key range ids the SDK's requests named (it names one when it runs a
  // query range by range), from each page's diagnostics.
  async paged(what, iterator, pageSize) {
    const items = [];
    const ranges = new Set();
    let pages = 0;
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      const resources = pageItems(page);
      expect(
        resources.length <= pageSize,
        `${what}: a page of ${resources.length} items, over maxItemCount ${pageSize}`,
      );
      for (const g of page.diagnostics.clientSideRequestStatistics.gatewayStatistics) {
        if (g.partitionKeyRangeId) ranges.add(g.partitionKeyRangeId);
      }
      items.push(...resources);
      pages++;
    }
    this.checks++;
    return { items, pages, ranges: sorted(ranges) };
  }

  // Runs `sql` on orders to its last page and compares the result with `expected` (both
  // through `key` when given). A `pipeline` query (ORDER BY, TOP, OFFSET, an aggregate,
  // DISTINCT, GROUP BY across partitions) must have run in the SDK's own pipeline: the
  // query plan, then one query per physical partition, merged here.
  async query(what, sql, pageSize, { params, pk, expected, key, pipeline } = {}) {
    const spec = { query: sql, parameters: Object.entries(params || {}).map(([name, value]) => ({ name, value })) };
    const options = { maxItemCount: pageSize };
    if (pk !== undefined) options.partitionKey = pk;
    const { items, pages, ranges } = await this.paged(what, this.orders.items.query(spec, options), pageSize);
    const k = key || ((v) => v);
    this.eq(k(items), k(expected), what);
    if (pipeline) {
      this.eq(ranges.length, this.out.feedRanges.orders.length,
        `${what}: physical partitions the SDK queried one by one (${ranges})`);
    }
    (this.out.queries = this.out.queries || []).push({ name: what, pages, count: items.length, rangesQueried: ranges });
    return { items, pages };
  }

  async queries() {
    const data = [];
    for (let n = 0; n < ORDER_COUNT; n++) data.push(order(n));
    for (const d of data) await this.orders.items.create(d);
    const allIds = sorted(ids(data));

    // Plain fan-out: every item once, in pages of at most 7.
    const all = await this.query("select all", "SELECT * FROM c", 7, { expected: data, key: (v) => sorted(ids(v)) });
    this.ok(all.pages >= Math.floor(ORDER_COUNT / 7), `select all: paged (${all.pages} pages)`);
    const { items: everything } = await this.paged("read all items", this.orders.items.readAll({ maxItemCount: 6 }), 6);
    this.eq(sorted(ids(everything)), allIds, "read all items");

    const byN = sorted(data, (a, b) => a.n - b.n);
    await this.query("order by n", "SELECT c.id, c.n FROM c ORDER BY c.n", 5, {
      expected: byN.map((d) => ({ id: d.id, n: d.n })),
      pipeline: true,
    });
    const paid = sorted(data.filter((d) => d.status === "paid"), (a, b) => b.total - a.total);
    await this.query("order by total desc with a parameter", "SELECT * FROM c WHERE c.status = @s ORDER BY c.total DESC", 4, {
      params: { "@s": "paid" },
      expected: paid,
      key: ids,
      pipeline: true,
    });
    const byTotal = sorted(data, (a, b) => b.total - a.total);
    await this.query("top", "SELECT TOP 7 VALUE c.n FROM c ORDER BY c.total DESC", 3, {
      expected: byTotal.slice(0, 7).map((d) => d.n),
      pipeline: true,
    });
    await this.query("offset limit", "SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 9 LIMIT 13", 4, {
      expected: Array.from({ length: 13 }, (_, i) => i + 9),
      pipeline: true,
    });
    const totals = data.map((d) => d.total);
    const sum = totals.reduce((a, b) => a + b, 0);
    await this.query("count", "SELECT VALUE COUNT(1) FROM c", 5, { expected: [ORDER_COUNT], pipeline: true });
    await this.query("sum", "SELECT VALUE SUM(c.total) FROM c", 5, { expected: [sum], pipeline: true });
    await this.query("min", "SELECT VALUE MIN(c.total) FROM c", 5, { expected: [Math.min(...totals)], pipeline: true });
    await this.query("max", "SELECT VALUE MAX(c.n) FROM c", 5, { expected: [ORDER_COUNT - 1], pipeline: true });
    await this.query("avg", "SELECT VALUE AVG(c.total) FROM c", 5, {
      expected: [sum / ORDER_COUNT],
      key: (v) => v.map((x) => Number(x.toFixed(9))),
      pipeline: true,
    });
    await this.query("count with a parameter", "SELECT VALUE COUNT(1) FROM c WHERE c.region = @r", 3, {
      params: { "@r": "north" },
      expected: [data.filter((d) => d.region === "north").length],
      pipeline: true,
    });
    await this.query("distinct value", "SELECT DISTINCT VALUE c.status FROM c", 3, { expected: STATUSES, key: sorted, pipeline: true });
    await this.query("distinct object", "SELECT DISTINCT c.region FROM c", 3, {
      expected: REGIONS.map((region) => ({ region })),
      key: (v) => sorted(v.map((x) => x.region)),
      pipeline: true,
    });
    const groups = new Map();
    for (const d of data) {
      const g = groups.get(d.status) || { status: d.status, count: 0, sum: 0, lo: Infinity };
      g.count++;
      g.sum += d.n;
      g.lo = Math.min(g.lo, d.total);
      groups.set(d.status, g);
    }
    const byStatus = (v) => sorted(v, (a, b) => (a.status < b.status ? -1 : 1));
    await this.query(
      "group by",
      "SELECT c.status, COUNT(1) AS count, SUM(c.n) AS sum, MIN(c.total) AS lo FROM c GROUP BY c.status",
      3,
      { expected: [...groups.values()], key: byStatus, pipeline: true },
    );

    // Single partition (the partition key given): the server runs the whole query.
    const c5 = sorted(data.filter((d) => d.customerId === "c-5"), (a, b) => b.n - a.n);
    await this.query("single partition order by", "SELECT * FROM c WHERE c.customerId = @c ORDER BY c.n DESC", 2, {
      params: { "@c": "c-5" },
      pk: "c-5",
      expected: c5,
      key: ids,
    });
    await this.query("single partition count", "SELECT VALUE COUNT(1) FROM c", 3, { pk: "c-5", expected: [c5.length] });
    const c5Groups = new Map();
    for (const d of c5) c5Groups.set(d.status, (c5Groups.get(d.status) || 0) + 1);
    await this.query("single partition group by", "SELECT c.status, COUNT(1) AS n FROM c GROUP BY c.status", 3, {
      pk: "c-5",
      expected: [...c5Groups].map(([status, n]) => ({ status, n })),
      key: byStatus,
    });
    await this.failing(400, "a query with a syntax error", () => this.orders.items.query("SELECT FROM WHERE").fetchAll());
  }

  async hierarchical() {
    const data = [];
    for (let t = 0; t < 4; t++) for (let u = 0; u < 5; u++) for (let k = 0; k < 2; k++) data.push(person(t, u, k));
    for (const d of data) await this.people.items.create(d);
    const r = await this.people.item("d-1-2-0", ["t1", "u2"]).read();
    this.eq([r.statusCode, r.resource.k], [200, 0], "read by a full hierarchical key");
    await this.failing(404, "read under another user", () => this.people.item("d-1-2-0", ["t1", "u3"]).read());
    let got = await this.paged("full key", this.people.items.query("SELECT * FROM c", { partitionKey: ["t1", "u2"], maxItemCount: 3 }), 3);
    this.eq(sorted(ids(got.items)), ["d-1-2-0", "d-1-2-1"], "query by a full hierarchical key");
    // A prefix (tenant only) reaches the ranges its EPK range overlaps, and no other tenant.
    got = await this.paged("prefix", this.people.items.query("SELECT * FROM c", { partitionKey: ["t1"], maxItemCount: 4 }), 4);
    this.eq(sorted(ids(got.items)), sorted(ids(data.filter((d) => d.tenantId === "t1"))), "query by a key prefix");
    got = await this.paged(
      "people fan-out",
      this.people.items.query("SELECT VALUE c.id FROM c WHERE c.userId = 'u3' ORDER BY c.id DESC", { maxItemCount: 3 }),
      3,
    );
    this.eq(got.items, sorted(ids(data.filter((d) => d.userId === "u3"))).reverse(), "hierarchical fan-out");
    this.eq(got.ranges.length, this.out.feedRanges.people.length,
      `hierarchical fan-out: physical partitions the SDK queried one by one (${got.ranges})`);
  }

  async changeFeed() {
    const c = this.orders;
    // Reads until the feed answers 304 (nothing new in any range); the items and the token.
    const drain = async (from) => {
      const it = c.items.getChangeFeedIterator({ changeFeedStartFrom: from, maxItemCount: 7 });
      const items = [];
      for (;;) {
        const page = await it.readNext();
        if (page.statusCode === 304) return { items, token: page.continuationToken };
        expect(page.result.length <= 7, `change feed page of ${page.result.length} items, over maxItemCount 7`);
        items.push(...page.result);
      }
    };

    // From the beginning: each item once, at its latest version.
    await c.item("o-003", "c-3").patch([{ op: "set", path: "/v", value: 2 }]);
    const first = await drain(ChangeFeedStartFrom.Beginning());
    const orderIds = Array.from({ length: ORDER_COUNT }, (_, n) => order(n).id);
    this.eq(sorted(ids(first.items)), orderIds, "change feed from the beginning: every item once");
    this.eq(first.items.filter((d) => d.id === "o-003").map((d) => d.v), [2], "change feed: the latest version");
    // From now: nothing old, then what is written after.
    const now = await drain(ChangeFeedStartFrom.Now());
    this.eq(now.items, [], "change feed from now");
    const fresh = [];
    for (let n = ORDER_COUNT; n < ORDER_COUNT + 3; n++) fresh.push(order(n));
    for (const d of fresh) await c.items.create(d);
    const afterNow = await drain(ChangeFeedStartFrom.Continuation(now.token));
    this.eq(sorted(ids(afterNow.items)), ids(fresh), "change feed after now");
    // From the continuation saved at the end of the first read: the writes since.
    await c.items.upsert({ ...order(7), v: 3 });
    const since = await drain(ChangeFeedStartFrom.Continuation(first.token));
    this.eq(sorted(ids(since.items)), sorted([...ids(fresh), "o-007"]), "change feed from a saved continuation");
    const again = await drain(ChangeFeedStartFrom.Continuation(since.token));
    this.eq(again.items, [], "change feed at its end");
  }

  async wrongKey() {
    const bad = "A".repeat(86) + "=="; // a well-formed base64 key that is not the gateway's
    try {
      await new CosmosClient({ endpoint: this.endpoint, key: bad }).databases.readAll().fetchAll();
    } catch (e) {
      this.eq(e.code, 401, `a wrong key (${e.message})`);
      this.out.wrongKeyStatus = e.code;
      return;
    }
    throw new ScenarioError("a client with a wrong key was served");
  }

  // ---- split / resume -----------------------------------------------------------------

  async split(stateFile) {
    const { database: db } = await this.client.databases.createIfNotExists({ id: this.databaseId });
    // 12,000 RU/s: two physical partitions; the test raises the throughput to split them.
    const { container: c } = await db.containers.create({
      id: "split",
      partitionKey: { paths: ["/pk"], version: 2 },
      throughput: 12000,
    });
    const pre = range(0, SPLIT_ITEMS).map((i) => splitItem(i, "pre"));
    for (const d of pre) await c.items.create(d);
    const before = (await c.getFeedRanges()).map(feedRange);
    this.eq(before.length, 2, "feed ranges before the split");

    // The first pages of each kind of read, with the iterators kept for after the split.
    const fanout = c.items.query(PRE_QUERY, { maxItemCount: 6 });
    const fanoutSeen = await takePages(fanout, 2);
    const fanoutToken = fanoutSeen.token;
    // An ORDER BY query runs in the SDK's pipeline, range by range. (None is held across the
    // split: when a range a pipelined query reads answers 410/1002, this SDK's document
    // producer buffers the error, its parallel context puts the producer back in the queue
    // instead of replacing it, and the query asks the gone range again forever:
    // queryExecutionContext/documentProducer.js bufferMore and peakNextItem,
    // parallelQueryExecutionContextBase.js bufferDocumentProducer.)
    const orderedRanges = new Set();
    let got = await drainQuery(c.items.query(ORDERED_QUERY, { maxItemCount: 5 }), orderedRanges);
    this.eq(got.map((d) => d.n), range(0, SPLIT_ITEMS), "ORDER BY query before the split");
    this.eq(orderedRanges.size, 2, `ORDER BY: physical partitions the SDK queried one by one (${[...orderedRanges]})`);
    const single = c.items.query(PRE_QUERY, { partitionKey: SINGLE_KEY, maxItemCount: 1 });
    const singleSeen = await takePages(single, 1);
    expect(singleSeen.token, "a single-partition query page before the last has a continuation token");
    expect(fanoutToken, "a fan-out query page before the last has a continuation token");
    const feed = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 7 });
    const feedSeen = [];
    let feedToken;
    while (feedSeen.length < 14) {
      const page = await feed.readNext();
      expect(page.statusCode !== 304, "the change feed ended before its second page");
      feedSeen.push(...page.result);
      feedToken = page.continuationToken;
    }
    const state = {
      feedToken,
      feedSeen: ids(feedSeen),
      fanoutToken,
      fanoutSeen: ids(fanoutSeen.items),
      singleToken: singleSeen.token,
      singleSeen: ids(singleSeen.items),
    };
    save(stateFile, state);
    process.stdout.write(JSON.stringify({ event: "paused", feedRanges: before }) + "\n");
    const line = await readLine();
    expect(line.trim() === "go", `expected \`go\` on stdin after the pause, got ${JSON.stringify(line)}`);

    // The same iterators after the split: the ranges they were reading are gone.
    const preIds = sorted(ids(pre));
    let rest = await drainQuery(fanout);
    this.eq(sorted(ids([...fanoutSeen.items, ...rest])), preIds, "fan-out query across the split: every item once");
    // The same ORDER BY query again on this client: it plans again and queries the children.
    const orderedAfter = new Set();
    got = await drainQuery(c.items.query(ORDERED_QUERY, { maxItemCount: 5 }), orderedAfter);
    this.eq(got.map((d) => d.n), range(0, SPLIT_ITEMS), "ORDER BY query after the split");
    const children = [...orderedAfter].filter((id) => !orderedRanges.has(id));
    this.eq(children.length, 4, `ORDER BY after the split: the SDK queried the children (${[...orderedAfter]})`);
    rest = await drainQuery(single);
    this.eq(sorted(ids([...singleSeen.items, ...rest])), singleIds(), "single-partition query across the split");
    const post = range(SPLIT_ITEMS, SPLIT_ITEMS + POST_ITEMS).map((i) => splitItem(i, "post"));
    for (const d of post) await c.items.create(d);
    const feedRest = [];
    for (;;) {
      const page = await feed.readNext();
      if (page.statusCode === 304) break;
      feedRest.push(...page.result);
    }
    const every = sorted(ids([...pre, ...post]));
    this.eq(sorted(ids([...feedSeen, ...feedRest])), every, "change feed across the split: every item once");
    const after = (await c.getFeedRanges()).map(feedRange);
    this.ok(after.length > before.length, "more feed ranges after the split");
    state.all = every;
    save(stateFile, state);
    return { ...this.out, rangesBefore: before, rangesAfter: after, checks: this.checks };
  }

  async resume(stateFile) {
    const state = JSON.parse(fs.readFileSync(stateFile, "utf8"));
    const c = this.client.database(this.databaseId).container("split");
    const it = c.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(state.feedToken),
      maxItemCount: 7,
    });
    const got = [];
    for (;;) {
      const page = await it.readNext();
      if (page.statusCode === 304) break;
      got.push(...page.result);
    }
    const feedSeen = new Set(state.feedSeen);
    this.eq(sorted(ids(got)), state.all.filter((id) => !feedSeen.has(id)), "change feed from a continuation saved before the split");
    let rest = await drainQuery(c.items.query(PRE_QUERY, { maxItemCount: 6, continuationToken: state.fanoutToken }));
    this.eq(
      sorted([...state.fanoutSeen, ...ids(rest)]),
      sorted(range(0, SPLIT_ITEMS).map((i) => splitItem(i, "pre").id)),
      "fan-out query from a continuation saved before the split",
    );
    rest = await drainQuery(
      c.items.query(PRE_QUERY, { partitionKey: SINGLE_KEY, maxItemCount: 1, continuationToken: state.singleToken }),
    );
    this.eq(sorted([...state.singleSeen, ...ids(rest)]), singleIds(), "single-partition query from a continuation saved before the split");
    const ranges = (await c.getFeedRanges()).map(feedRange);
    return { ...this.out, feedRanges: ranges, checks: this.checks };
  }
}

// The split scenario's data: 80 items on 40 keys, then 20 more after the split.
const SPLIT_ITEMS = 80;
const POST_ITEMS = 20;
const SINGLE_KEY = "k-1";
const PRE_QUERY = "SELECT * FROM c WHERE c.kind = 'pre'";
const ORDERED_QUERY = "SELECT c.id, c.n FROM c WHERE c.kind = 'pre' ORDER BY c.n";

const range = (from, to) => Array.from({ length: to - from }, (_, i) => from + i);
const splitItem = (i, kind) => ({ id: "s-" + String(i).padStart(3, "0"), pk: "k-" + (i % 40), n: i, kind });
const singleIds = () =>
  sorted(range(0, SPLIT_ITEMS).filter((i) => "k-" + (i % 40) === SINGLE_KEY).map((i) => splitItem(i, "pre").id));
const feedRange = (r) => ({ min: r.minInclusive, max: r.maxExclusive, isMinInclusive: true, isMaxInclusive: false });
const save = (file, state) => fs.writeFileSync(file, JSON.stringify(state));

// The items of the next `n` non-empty pages, the continuation token after them, and the
// partition key range ids the SDK's requests named.
async function takePages(iterator, n) {
  const items = [];
  const ranges = new Set();
  let token;
  while (n > 0) {
    expect(iterator.hasMoreResults(), "the query ended early");
    const page = await iterator.fetchNext();
    for (const g of page.diagnostics.clientSideRequestStatistics.gatewayStatistics) {
      if (g.partitionKeyRangeId) ranges.add(g.partitionKeyRangeId);
    }
    token = page.continuationToken;
    if (pageItems(page).length > 0) {
      items.push(...pageItems(page));
      n--;
    }
  }
  return { items, token, ranges: sorted(ranges) };
}

// Every remaining item of a query; the range ids its requests named are added to `ranges`.
async function drainQuery(iterator, ranges = new Set()) {
  const items = [];
  while (iterator.hasMoreResults()) {
    const page = await iterator.fetchNext();
    for (const g of page.diagnostics.clientSideRequestStatistics.gatewayStatistics) {
      if (g.partitionKeyRangeId) ranges.add(g.partitionKeyRangeId);
    }
    items.push(...pageItems(page));
  }
  return items;
}

function readLine() {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin });
    rl.once("line", (line) => {
      resolve(line); // before close(), whose "close" event would resolve with ""
      rl.close();
    });
    rl.once("close", () => resolve(""));
  });
}

async function main(argv) {
  if (argv.length < 4) {
    process.stderr.write("usage: node scenario.js main|split|resume ENDPOINT KEY DATABASE [STATE_FILE]\n");
    return 2;
  }
  const [phase, endpoint, key, database, stateFile] = argv;
  if (phase !== "main" && !stateFile) {
    process.stderr.write(`the ${phase} phase needs STATE_FILE\n`);
    return 2;
  }
  const scenario = new Scenario(endpoint, key, database);
  let out;
  try {
    if (phase === "main") out = await scenario.main();
    else if (phase === "split") out = await scenario.split(stateFile);
    else if (phase === "resume") out = await scenario.resume(stateFile);
    else {
      process.stderr.write(`unknown phase ${phase}\n`);
      return 2;
    }
  } catch (e) {
    // A ScenarioError says what was expected; anything else is an SDK exception, with its
    // status and stack.
    const detail = e instanceof ScenarioError ? e.message : `${e.code ? `HTTP ${e.code} ` : ""}${e.stack || e}`;
    process.stderr.write(`scenario failed: ${detail}\n`);
    return 1;
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
module.exports = { Scenario, ScenarioError };
