//! Deterministic data shared by the benchmarks: a tiny PRNG and the vocabulary of the
//! generated sales orders (perf.md's data set shape), so every bench measures the same kind
//! of document.

#![allow(dead_code)] // each bench uses a different part

use cosmoscope::engine::Backend;

pub mod kept;
use serde_json::{Value, json};

// ---- deterministic data ----

/// SplitMix64: tiny, fast and good enough to shuffle keys and vary documents.
pub struct Rng(pub u64);

impl Rng {
    /// The generator of item `i` of the data set `seed`: each item's draws are its own, so
    /// any item can be made again from its number alone.
    pub fn for_item(seed: u64, i: usize) -> Rng {
        // One SplitMix step scatters the start: seeds `i` and `i + 1` would otherwise give
        // streams one draw apart.
        Rng(Rng(seed ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)).next())
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn range(&mut self, lo: u64, hi_inclusive: u64) -> u64 {
        lo + self.below(hi_inclusive - lo + 1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    pub fn uuid(&mut self) -> String {
        let (a, b) = (self.next(), self.next());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xFFFF,
            a & 0xFFF,
            ((b >> 48) & 0x3FFF) | 0x8000,
            b & 0xFFFF_FFFF_FFFF
        )
    }

    pub fn date(&mut self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.range(2020, 2025),
            self.range(1, 12),
            self.range(1, 28),
            self.below(24),
            self.below(60),
            self.below(60),
            self.below(1000)
        )
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

pub const CITIES: [(&str, &str); 40] = [
    ("Oslo", "Norway"),
    ("Bergen", "Norway"),
    ("Stockholm", "Sweden"),
    ("Gothenburg", "Sweden"),
    ("Copenhagen", "Denmark"),
    ("Aarhus", "Denmark"),
    ("Helsinki", "Finland"),
    ("Reykjavik", "Iceland"),
    ("London", "United Kingdom"),
    ("Manchester", "United Kingdom"),
    ("Edinburgh", "United Kingdom"),
    ("Dublin", "Ireland"),
    ("Paris", "France"),
    ("Lyon", "France"),
    ("Marseille", "France"),
    ("Berlin", "Germany"),
    ("Hamburg", "Germany"),
    ("Munich", "Germany"),
    ("Frankfurt", "Germany"),
    ("Amsterdam", "Netherlands"),
    ("Rotterdam", "Netherlands"),
    ("Brussels", "Belgium"),
    ("Zurich", "Switzerland"),
    ("Vienna", "Austria"),
    ("Prague", "Czechia"),
    ("Warsaw", "Poland"),
    ("Madrid", "Spain"),
    ("Barcelona", "Spain"),
    ("Lisbon", "Portugal"),
    ("Rome", "Italy"),
    ("Milan", "Italy"),
    ("Athens", "Greece"),
    ("New York", "United States"),
    ("Seattle", "United States"),
    ("Chicago", "United States"),
    ("Toronto", "Canada"),
    ("Vancouver", "Canada"),
    ("Sydney", "Australia"),
    ("Tokyo", "Japan"),
    ("Singapore", "Singapore"),
];
pub const FIRST: [&str; 12] = [
    "Ana", "Bjorn", "Chen", "Dagny", "Emeka", "Farah", "Gustav", "Hiro", "Ingrid", "Jonas",
    "Keiko", "Lars",
];
pub const LAST: [&str; 12] = [
    "Andersen", "Berg", "Costa", "Dahl", "Eriksen", "Fischer", "Garcia", "Hansen", "Ito",
    "Johansen", "Kowalski", "Larsen",
];
pub const STREETS: [&str; 8] = [
    "Main Street",
    "Harbour Road",
    "Storgata",
    "Church Lane",
    "Rue de la Paix",
    "Market Square",
    "Kongens gate",
    "Station Road",
];
pub const PRODUCTS: [(&str, &str); 10] = [
    ("BK-M68B", "Mountain-200 Black"),
    ("BK-R93R", "Road-150 Red"),
    ("BK-T79Y", "Touring-1000 Yellow"),
    ("HL-U509", "Sport-100 Helmet, Blue"),
    ("FR-R92B", "HL Road Frame - Black"),
    ("GL-F110", "Full-Finger Gloves"),
    ("TI-M823", "HL Mountain Tire"),
    ("BC-R205", "Road Bottle Cage"),
    ("SH-M897", "Men's Sports Shorts"),
    ("LJ-0192", "Long-Sleeve Logo Jersey"),
];
pub const STATUSES: [&str; 5] = ["Shipped", "Pending", "Cancelled", "Delivered", "Processing"];
pub const CURRENCIES: [&str; 4] = ["USD", "EUR", "GBP", "NOK"];
/// 4 × 25 = 100 sales regions.
pub const REGIONS: [&str; 4] = ["AMER", "EMEA", "APAC", "LATAM"];
pub const WORDS: [&str; 24] = [
    "please",
    "deliver",
    "to",
    "the",
    "back",
    "door",
    "customer",
    "requested",
    "gift",
    "wrapping",
    "call",
    "before",
    "arrival",
    "fragile",
    "items",
    "leave",
    "with",
    "neighbour",
    "if",
    "not",
    "home",
    "invoice",
    "separately",
    "thanks",
];

/// How many items a bench loads: `var` from the environment, else `full` under `cargo bench`
/// and `smoke` in criterion's test mode (`cargo test -p cosmoscope-bench --benches`,
/// `-- --test`).
pub fn item_count(var: &str, smoke: usize, full: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    let quick = !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test");
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { smoke } else { full })
}

/// Query options with `params` (`@name` → JSON value) and pages of up to 1,000 results.
pub fn options_with(params: &[(&str, Value)]) -> cosmoscope::engine::QueryOptions {
    cosmoscope::engine::QueryOptions {
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        max_items: Some(1000),
        ..Default::default()
    }
}

/// Imports `docs` (serialized items) into `db/container` through `Engine::import_records`, as
/// `cosmoscope import` does; returns items per second.
pub fn import(
    engine: &cosmoscope::engine::Engine,
    db: &str,
    container: &str,
    docs: &[Vec<u8>],
) -> f64 {
    let records: Vec<cosmoscope::engine::import::Record> = docs
        .iter()
        .enumerate()
        .map(|(line, json)| cosmoscope::engine::import::Record { line, json })
        .collect();
    let t = std::time::Instant::now();
    engine
        .import_records(db, container, &records, &mut |_| {})
        .expect("import");
    docs.len() as f64 / t.elapsed().as_secs_f64()
}

/// A sales order's shipping address in `city`, `country`: the same random draws, in the
/// same order, in every bench's orders (the data sets kept between runs depend on it).
#[allow(dead_code)]
pub fn ship_to(rng: &mut Rng, city: &str, country: &str) -> Value {
    json!({
        "name": format!("{} {}", rng.pick(&FIRST), rng.pick(&LAST)),
        "street": format!("{} {}", rng.range(1, 9999), rng.pick(&STREETS)),
        "city": city,
        "postalCode": format!("{:05}", rng.below(100_000)),
        "country": country,
    })
}

/// A sales order shaped like perf.md's data set, for the store and query benches: order
/// `i`, with `id` and `customer_id` drawn by the caller, and the members `sales` returns (its
/// sales person, and what else a bench groups on) between its currency and its address,
/// drawn there. The draws come in the same order for every bench, so each bench's data
/// depends only on its own seed and `sales`.
#[allow(dead_code)]
pub fn sales_order(
    rng: &mut Rng,
    i: usize,
    (id, customer_id): (&str, &str),
    sales: impl FnOnce(&mut Rng) -> Vec<(&'static str, Value)>,
) -> Value {
    let (city, country) = *rng.pick(&CITIES);
    let (details, sub_total) = order_lines(rng);
    let tax = sub_total * 8 / 100;
    let freight = sub_total / 40;
    let comment = order_comment(rng);
    let mut doc = serde_json::Map::new();
    let mut put = |name: &str, value: Value| {
        doc.insert(name.to_string(), value);
    };
    put("id", json!(id));
    put("type", json!("SalesOrder"));
    put("customerId", json!(customer_id));
    put("orderNumber", json!(format!("SO{:07}", 43_659 + i)));
    put("orderDate", json!(rng.date()));
    put("shipDate", json!(rng.date()));
    put("creationDate", json!(rng.date()));
    put("status", json!(rng.pick(&STATUSES)));
    put("currency", json!(rng.pick(&CURRENCIES)));
    for (name, value) in sales(rng) {
        put(name, value);
    }
    put("shipTo", ship_to(rng, city, country));
    put("details", Value::Array(details));
    put("subTotal", money(sub_total));
    put("taxAmt", money(tax));
    put("freight", money(freight));
    put("totalDue", money(sub_total + tax + freight));
    put("comment", json!(comment));
    Value::Object(doc)
}

/// A sales order's lines (1–5 products) and their total in cents before tax.
#[allow(dead_code)]
fn order_lines(rng: &mut Rng) -> (Vec<Value>, u64) {
    let mut sub_total = 0;
    let lines = (0..rng.range(1, 5))
        .map(|_| {
            let (sku, name) = *rng.pick(&PRODUCTS);
            let price = rng.range(499, 339_999);
            let quantity = rng.range(1, 6);
            sub_total += price * quantity;
            let discount = [0.0, 0.0, 0.05, 0.1][rng.below(4) as usize];
            json!({
                "sku": format!("{sku}-{}", rng.range(38, 52)),
                "name": format!("{name}, {}", rng.range(38, 52)),
                "price": money(price),
                "quantity": quantity,
                "discount": discount,
            })
        })
        .collect();
    (lines, sub_total)
}

/// A sales order's comment: words to 10–150 characters.
#[allow(dead_code)]
fn order_comment(rng: &mut Rng) -> String {
    let mut comment = String::new();
    let length = rng.range(10, 150) as usize;
    while comment.len() < length {
        if !comment.is_empty() {
            comment.push(' ');
        }
        let word: &&str = rng.pick(&WORDS);
        comment.push_str(word);
    }
    comment
}

pub fn money(cents: u64) -> Value {
    json!(cents as f64 / 100.0)
}

/// Closes `engine`, compacts its store as `cosmoscope import` does after a large import
/// (see `Engine::close_and_compact`), and opens it again; with a line on what was done.
#[allow(dead_code)]
pub fn reopen_compacted(
    engine: cosmoscope::engine::Engine,
) -> (cosmoscope::engine::Engine, String) {
    use cosmoscope::engine::{CompactOutcome as Outcome, CompactWhen as When};
    let dir = engine.data_dir().to_path_buf();
    let note = match engine.close_and_compact(When::Worthwhile).expect("compact") {
        Outcome::Compacted {
            before,
            after,
            seconds,
        } => format!(
            "compacted the engine's file from {} to {} MB in {seconds:.1} s",
            before >> 20,
            after >> 20
        ),
        Outcome::NotWorthwhile { file, free } => {
            format!("no compaction ({} of {} MB free)", free >> 20, file >> 20)
        }
        Outcome::InUse { .. } => "no compaction (store in use)".to_string(),
    };
    let engine = cosmoscope::engine::Engine::open(&dir).expect("reopen engine");
    (engine, note)
}

/// `1234567.8` as `1,234,568`: the figures the benches print.
pub fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v);
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// Bytes of the file at `path`, or of all files under it.
pub fn dir_size(path: &std::path::Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| dir_size(&e.path())).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

// ---- the raw heed floor ----

/// The raw floor's one unnamed database of byte keys and values.
pub type RawDb = heed::Database<'static, heed::types::Bytes, heed::types::Bytes>;

/// A plain env opened the way the store opens its own (no TLS read txns), with one unnamed
/// database, in a fresh directory of its own. `no_sync` skips the flush at commit, for
/// floors that load data only to read it.
pub fn open_raw(dir: &std::path::Path, no_sync: bool) -> (heed::Env<heed::WithoutTls>, RawDb) {
    let mut options = heed::EnvOpenOptions::new().read_txn_without_tls();
    options.map_size(1 << 36).max_dbs(1);
    if no_sync {
        // SAFETY: NO_SYNC risks only this throwaway env on a crash.
        unsafe { options.flags(heed::EnvFlags::NO_SYNC) };
    }
    // SAFETY: each raw env gets its own fresh temp dir, opened once in this process.
    let env = unsafe { options.open(dir) }.expect("open raw env");
    let wtxn = env.write_txn().expect("write txn");
    let db: RawDb = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            let db =
                opener.create_database::<heed::types::Bytes, heed::types::Bytes>(wtxn, None)?;
            Ok(heed::CommitOrAbort::<_, ()>::Commit(db))
        })
        .expect("create raw db")
        .unwrap_commit();
    (env, db)
}

// ---- floors on the engine's store ----

/// The floor of `SELECT TOP k * FROM c ORDER BY c.<property> DESC` on the engine's own
/// store: the backward walk of the property's index, a read of each of the first `k`
/// items and a copy of its JSON into a result that outlives the read transaction. Any plan
/// over this store does this much; the engine adds the parse, plan, routing, what each
/// result's partitions were, the metrics and the charge. The items read.
pub fn floor_ordered(
    engine: &cosmoscope::engine::Engine,
    (db, container): (&str, &str),
    property: &str,
    k: usize,
) -> usize {
    use cosmoscope::store::Epk;
    use cosmoscope::store::testing::Record as StoredRecord;
    use cosmoscope::store::testing::{IndexReader, PathHasher};
    use std::sync::Arc;

    let store = engine.store();
    let txn = store.read_txn().expect("read txn");
    let def = store.container(&txn, db, container).expect("container");
    let reader = IndexReader::new(store, &txn, &def, def.ready_index().generation);
    let mut path = PathHasher::default();
    path.property(property);
    let everywhere = [(Vec::new(), Epk::max().0)];
    let mut key = reader.item_key(&[]);
    let cid_len = key.len();
    let mut docs: Vec<Arc<[u8]>> = Vec::with_capacity(k);
    reader
        .walk(
            path.finish(),
            1,
            (true, None),
            &[],
            &everywhere,
            |_, item| {
                key.truncate(cid_len);
                key.extend_from_slice(item);
                if let Some(record) = store.read_record(&txn, &key)? {
                    docs.push(Arc::from(StoredRecord::decode(record)?.json));
                }
                Ok(docs.len() < k)
            },
        )
        .expect("walk");
    docs.len()
}
