//! Vector embedding and full-text policies through the engine: set at container creation,
//! kept in the catalog across reopening the store, shown with the container, and the
//! indexing policy's vector and full-text indexes checked against them on creation and
//! on every replacement.

use cosmoscope::engine::ContainerSettings;
use cosmoscope::engine::IndexingPolicy;
use cosmoscope::engine::{Backend, Engine};
use cosmoscope::engine::{DistanceFunction, FullTextPolicy, VectorDataType, VectorEmbeddingPolicy};
use serde_json::{Value, json};

use crate::support::fixture::{DB, Fixture, err, open, pk_settings};

fn indexing(v: Value) -> IndexingPolicy {
    serde_json::from_value(v).unwrap()
}

fn vector_policy() -> VectorEmbeddingPolicy {
    VectorEmbeddingPolicy::from_json(json!({"vectorEmbeddings": [
        {"path": "/embedding", "dataType": "float32", "dimensions": 1536, "distanceFunction": "cosine"},
        {"path": "/thumb", "dataType": "int8", "dimensions": 64, "distanceFunction": "euclidean"}
    ]}))
    .unwrap()
}

fn text_policy() -> FullTextPolicy {
    FullTextPolicy::from_json(json!({
        "defaultLanguage": "en-US",
        "fullTextPaths": [{"path": "/title", "language": "en-US"}, {"path": "/body", "language": "en-US"}]
    }))
    .unwrap()
}

fn search_settings() -> ContainerSettings {
    ContainerSettings {
        indexing_policy: Some(indexing(json!({
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/embedding/*"}],
            "vectorIndexes": [
                {"path": "/embedding", "type": "diskANN"},
                {"path": "/thumb", "type": "flat"}
            ],
            "fullTextIndexes": [{"path": "/title"}]
        }))),
        vector_embedding_policy: Some(vector_policy()),
        full_text_policy: Some(text_policy()),
        ..pk_settings()
    }
}

#[test]
fn policies_survive_reopening_the_store() {
    let fx = open();
    fx.container("docs", search_settings());
    fx.pk_container("plain");
    let Fixture { engine, dir } = fx;
    drop(engine);

    let engine = Engine::open(dir.path()).unwrap();
    let info = engine.container(DB, "docs").unwrap();
    let vector = info
        .vector_embedding_policy
        .as_ref()
        .expect("vector policy kept");
    assert_eq!(vector, &vector_policy());
    let thumb = vector.embedding_for("/thumb").unwrap();
    assert_eq!(thumb.data_type, VectorDataType::Int8);
    assert_eq!(thumb.distance_function, DistanceFunction::Euclidean);
    assert_eq!(info.full_text_policy.as_ref(), Some(&text_policy()));
    assert_eq!(info.indexing_policy.vector_indexes.len(), 2);
    assert_eq!(info.indexing_policy.full_text_indexes[0].path, "/title");

    let shown = serde_json::to_value(&info).unwrap();
    assert_eq!(
        shown["vectorEmbeddingPolicy"]["vectorEmbeddings"][1]["dataType"],
        "int8"
    );
    assert_eq!(shown["fullTextPolicy"]["fullTextPaths"][1]["path"], "/body");
    assert_eq!(
        shown["indexingPolicy"]["vectorIndexes"][0]["type"],
        "diskANN"
    );

    // A container without the policies shows neither member, as its record stores neither
    // (so definitions written before these settings existed read the same).
    let plain = serde_json::to_value(engine.container(DB, "plain").unwrap()).unwrap();
    assert!(plain.get("vectorEmbeddingPolicy").is_none(), "{plain}");
    assert!(plain.get("fullTextPolicy").is_none(), "{plain}");
    drop(engine);
}

#[test]
fn creation_checks_the_policies_and_their_indexes() {
    let fx = open();
    let bad_dimensions = ContainerSettings {
        vector_embedding_policy: Some(
            VectorEmbeddingPolicy::from_json(
                json!({"vectorEmbeddings": [{"path": "/v", "dimensions": 0}]}),
            )
            .unwrap(),
        ),
        ..pk_settings()
    };
    let e = err(fx.engine.create_container(DB, "c", bad_dimensions));
    assert_eq!(e.status.as_u16(), 400);
    assert!(e.message.contains("has 0 dimensions"), "{}", e.message);

    let index_without_policy = ContainerSettings {
        indexing_policy: Some(indexing(
            json!({"vectorIndexes": [{"path": "/v", "type": "flat"}]}),
        )),
        ..pk_settings()
    };
    let e = err(fx.engine.create_container(DB, "c", index_without_policy));
    assert_eq!(e.status.as_u16(), 400);
    assert!(
        e.message
            .contains("the container has no vector embedding policy"),
        "{}",
        e.message
    );

    let flat_too_large = ContainerSettings {
        indexing_policy: Some(indexing(
            json!({"vectorIndexes": [{"path": "/embedding", "type": "flat"}]}),
        )),
        vector_embedding_policy: Some(vector_policy()),
        ..pk_settings()
    };
    let e = err(fx.engine.create_container(DB, "c", flat_too_large));
    assert!(
        e.message.contains("at most 505 dimensions"),
        "{}",
        e.message
    );

    let text_index_elsewhere = ContainerSettings {
        indexing_policy: Some(indexing(json!({"fullTextIndexes": [{"path": "/summary"}]}))),
        full_text_policy: Some(text_policy()),
        ..pk_settings()
    };
    let e = err(fx.engine.create_container(DB, "c", text_index_elsewhere));
    assert!(
        e.message
            .contains("'/summary' is not in the container's full-text policy"),
        "{}",
        e.message
    );

    // Nothing was created by the failed attempts.
    assert_eq!(err(fx.engine.container(DB, "c")).status, 404);
}

#[test]
fn set_indexing_keeps_search_indexes_within_the_policies() {
    let fx = open();
    fx.container("docs", search_settings());
    let keep_vectors = json!([
        {"path": "/thumb", "type": "flat"},
        {"path": "/embedding", "type": "DiskANN"}
    ]);

    // A vector index on a path the vector embedding policy does not declare.
    let e = err(fx.engine.set_indexing_policy(
        DB,
        "docs",
        indexing(json!({"vectorIndexes": [
            {"path": "/embedding", "type": "diskANN"},
            {"path": "/thumb", "type": "flat"},
            {"path": "/other", "type": "flat"}
        ]})),
    ));
    assert_eq!(e.status.as_u16(), 400);
    assert!(
        e.message.contains(
            "the vector index path '/other' is not in the container's vector embedding policy"
        ),
        "{}",
        e.message
    );

    // Vector indexes are fixed at creation, even on declared paths.
    let e = err(fx.engine.set_indexing_policy(
        DB,
        "docs",
        indexing(json!({"vectorIndexes": [{"path": "/embedding", "type": "diskANN"}]})),
    ));
    assert!(
        e.message
            .contains("vector indexes cannot be added, removed or changed"),
        "{}",
        e.message
    );

    // A full-text index outside the full-text policy.
    let e = err(fx.engine.set_indexing_policy(
        DB,
        "docs",
        indexing(json!({"vectorIndexes": keep_vectors, "fullTextIndexes": [{"path": "/summary"}]})),
    ));
    assert!(
        e.message.contains("the full-text index path '/summary'"),
        "{}",
        e.message
    );

    // Failed replacements changed nothing.
    let info = fx.engine.container(DB, "docs").unwrap();
    assert_eq!(info.indexing_policy.full_text_indexes.len(), 1);

    // Full-text indexes may change within the policy while the vector indexes stay.
    fx.engine
        .set_indexing_policy(
            DB,
            "docs",
            indexing(json!({
                "excludedPaths": [{"path": "/*"}],
                "includedPaths": [{"path": "/pk/?"}],
                "vectorIndexes": keep_vectors,
                "fullTextIndexes": [{"path": "/title"}, {"path": "/body"}]
            })),
        )
        .unwrap();
    while !fx.engine.advance_index_build(DB, "docs", 8).unwrap() {}
    let info = fx.engine.container(DB, "docs").unwrap();
    assert_eq!(info.indexing_policy.full_text_indexes.len(), 2);
    assert_eq!(info.indexing_policy.vector_indexes.len(), 2);
    assert_eq!(info.vector_embedding_policy, Some(vector_policy()));
}
