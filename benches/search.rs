//! Search benchmarks: full-text matching, BM25 ranking, vector similarity and their fusion,
//! each a scan that scores every document in scope (what the engine does with or without
//! the service's search indexes; the indexes change only the charge).
//!
//! Data: `SEARCH_BENCH_ITEMS` (default 100,000 under `cargo bench`, 2,000 in criterion's
//! test mode) documents in a 4-range container partitioned by `/id`: `text`, 40–120 words
//! drawn with a skew from a 5,000-word vocabulary (so a search term is in a few percent of
//! the documents), and `v`, a 128-dimension float32 vector under a cosine vector policy.
//!
//! Queries:
//! 1. `SELECT VALUE COUNT(1) FROM c WHERE FullTextContains(c.text, @w)`
//! 2. `SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.text, [@a, @b])`
//! 3. `SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, @q)`
//! 4. `SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, [@a, @b]),
//!    VectorDistance(c.v, @q))`

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::*;

use std::hint::black_box;

use cosmoscope::engine::{Backend, Engine};
use cosmoscope::engine::{ContainerSettings, Throughput};
use cosmoscope::engine::{FullTextPolicy, VectorEmbeddingPolicy};
use criterion::Criterion;
use serde_json::{Value, json};

const DB: &str = "bench";
const DIMENSIONS: usize = 128;

fn items() -> usize {
    item_count("SEARCH_BENCH_ITEMS", 2_000, 100_000)
}

/// Pronounceable pseudo-words: a vocabulary far larger than the orders' 24 words.
fn vocabulary(rng: &mut Rng) -> Vec<String> {
    const ONSETS: [&str; 12] = ["b", "c", "d", "f", "g", "l", "m", "p", "r", "s", "t", "v"];
    const VOWELS: [&str; 5] = ["a", "e", "i", "o", "u"];
    (0..5_000)
        .map(|_| {
            (0..rng.range(2, 4))
                .map(|_| format!("{}{}", rng.pick(&ONSETS), rng.pick(&VOWELS)))
                .collect()
        })
        .collect()
}

fn vector(rng: &mut Rng) -> Vec<f64> {
    (0..DIMENSIONS)
        .map(|_| (rng.below(20_001) as f64 - 10_000.0) / 10_000.0)
        .collect()
}

fn documents(n: usize, words: &[String]) -> Vec<Vec<u8>> {
    let mut rng = Rng(0x5EA2C4);
    (0..n)
        .map(|i| {
            let text: Vec<&str> = (0..rng.range(40, 120))
                .map(|_| {
                    // Skewed: low ranks are common words, high ranks rare ones.
                    let r = rng.below(words.len() as u64);
                    words[(r * rng.below(words.len() as u64) / words.len() as u64) as usize]
                        .as_str()
                })
                .collect();
            serde_json::to_vec(&json!({
                "id": format!("d{i:07}"),
                "text": text.join(" "),
                "v": vector(&mut rng),
            }))
            .expect("serialize")
        })
        .collect()
}

fn open(n: usize) -> (tempfile::TempDir, Engine, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::open(dir.path()).expect("open engine");
    engine.create_database(DB).expect("database");
    let mut s = ContainerSettings::new(vec!["/id".into()]);
    s.throughput = Throughput::Manual(40_000);
    s.vector_embedding_policy = Some(
        VectorEmbeddingPolicy::from_json(json!({"vectorEmbeddings": [{
            "path": "/v", "dataType": "float32", "dimensions": DIMENSIONS,
            "distanceFunction": "cosine"}]}))
        .expect("vector policy"),
    );
    s.full_text_policy = Some(
        FullTextPolicy::from_json(json!({"defaultLanguage": "en-US",
            "fullTextPaths": [{"path": "/text", "language": "en-US"}]}))
        .expect("full-text policy"),
    );
    s.indexing_policy = Some(
        serde_json::from_value(json!({"includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/v/*"}, {"path": "/text/?"}]}))
        .expect("indexing policy"),
    );
    engine.create_container(DB, "c", s).expect("container");
    let mut rng = Rng(7);
    let words = vocabulary(&mut rng);
    let docs = documents(n, &words);
    import(&engine, DB, "c", &docs);
    (dir, engine, words)
}

fn run(engine: &Engine, sql: &str, params: &[(&str, Value)]) -> usize {
    let opts = options_with(params);
    let r = engine.query(DB, "c", sql, &opts).expect("query");
    black_box(&r.documents);
    r.documents.len()
}

/// A benchmark: its name, the query and its parameters.
type Case = (&'static str, &'static str, Vec<(&'static str, Value)>);

fn main() {
    let n = items();
    let (_dir, engine, words) = open(n);
    // Terms of middling frequency; a query vector like the documents'.
    let (a, b) = (json!(words[40]), json!(words[90]));
    let q = json!(vector(&mut Rng(99)));
    let queries: [Case; 4] = [
        (
            "full-text contains",
            "SELECT VALUE COUNT(1) FROM c WHERE FullTextContains(c.text, @a)",
            vec![("a", a.clone())],
        ),
        (
            "bm25 top 10",
            "SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.text, [@a, @b])",
            vec![("a", a.clone()), ("b", b.clone())],
        ),
        (
            "vector top 10",
            "SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, @q)",
            vec![("q", q.clone())],
        ),
        (
            "rrf top 10",
            "SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, [@a, @b]), \
             VectorDistance(c.v, @q))",
            vec![("a", a), ("b", b), ("q", q)],
        ),
    ];
    let mut c = Criterion::default().configure_from_args().sample_size(10);
    let mut group = c.benchmark_group(format!("search/{n}"));
    for (name, sql, params) in &queries {
        assert!(run(&engine, sql, params) > 0, "{name} returned nothing");
        group.bench_function(*name, |bench| bench.iter(|| run(&engine, sql, params)));
    }
    group.finish();
    c.final_summary();
}
