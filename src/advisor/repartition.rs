//! A re-partitioned copy of a container that stays: a new container beside the source,
//! keyed by a candidate, filled with a bulk copy of the source's items through the facade,
//! so the user can query both and compare. Unlike the advisor's own copies ([`super::copy`])
//! it keeps the source's limits and TTL, and it is left for the user.
//!
//! A copy that does not finish (cancelled, or an error part way) is deleted: a container
//! holding part of the items would answer queries wrongly without saying so.

use serde_json::{Map, Value};

use super::candidates::Candidate;
use super::copy::settings_for;
use crate::engine::{Backend, import::Record};
use crate::error::{Error, Result, StatusCode};

/// Items written per import transaction: the unit of progress and of cancellation.
const BATCH: usize = 2_000;

/// What a finished copy holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Repartitioned {
    pub database: String,
    pub container: String,
    pub key: String,
    pub items: u64,
    /// How long the copy took.
    pub seconds: f64,
}

/// The name a copy of `container` keyed by `candidate` gets unless the user picks one:
/// `posts-by-userId`, `posts-by-tenantId-userId`, `posts-by-date-10-buckets`.
pub fn default_name(container: &str, candidate: &Candidate) -> String {
    let mut parts: Vec<String> = candidate
        .source_paths()
        .iter()
        .map(|p| p.trim_start_matches('/').replace('/', "."))
        .collect();
    if let Candidate::Synthetic {
        buckets: Some(n), ..
    } = candidate
    {
        parts.push(format!("{n}-buckets"));
    }
    // Container ids may not hold `/`, `\`, `#` or `?` (the service's rule).
    let key: String = parts
        .join("-")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{container}-by-{key}")
}

/// Creates `db`/`target` keyed by `candidate` with `db`/`source`'s settings and copies every
/// item of `source` into it. `progress(done, total)` after each batch; false cancels (499).
/// On cancel or error the new container is deleted; a `target` that exists already is left
/// alone (409).
pub fn repartition(
    engine: &dyn Backend,
    db: &str,
    source: &str,
    candidate: &Candidate,
    target: &str,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Repartitioned> {
    if target.trim().is_empty() {
        return Err(Error::bad_request("the copy needs a container name"));
    }
    let info = engine.container(db, source)?;
    candidate.definition()?;
    let total = info.statistics.item_count;
    let started = std::time::Instant::now();
    engine.create_container(db, target, settings_for(&info, candidate))?;
    match fill(engine, db, source, candidate, target, total, progress) {
        Ok(items) => Ok(Repartitioned {
            database: db.to_string(),
            container: target.to_string(),
            key: candidate.to_string(),
            items,
            seconds: started.elapsed().as_secs_f64(),
        }),
        Err(e) => {
            // The half copy goes; if even that fails, say which container is left.
            if let Err(d) = engine.delete_container(db, target) {
                return Err(Error::new(
                    e.status,
                    format!(
                        "{}; the partial copy {db}/{target} could not be deleted ({}): delete \
                         it by hand",
                        e.message, d.message
                    ),
                ));
            }
            Err(e)
        }
    }
}

/// Streams `source`'s items into `target` in batches.
fn fill(
    engine: &dyn Backend,
    db: &str,
    source: &str,
    candidate: &Candidate,
    target: &str,
    total: u64,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<u64> {
    let mut batch: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
    let mut written = 0u64;
    let mut flush = |batch: &mut Vec<Vec<u8>>, written: &mut u64| -> Result<()> {
        let records: Vec<Record> = batch
            .iter()
            .enumerate()
            .map(|(i, json)| Record {
                line: *written as usize + i + 1,
                json,
            })
            .collect();
        let summary = engine.import_records(db, target, &records, &mut |_| {})?;
        if summary.replaced > 0 {
            // An upsert that replaced: two source items met in one logical partition
            // with the same id, and one would be lost.
            return Err(Error::conflict(format!(
                "{} items of {db}/{source} share an id with another item in the same logical \
                 partition under {candidate}: the copy would lose them (ids are unique per \
                 logical partition)",
                summary.replaced
            )));
        }
        *written += summary.items;
        batch.clear();
        if !progress(*written, total.max(*written)) {
            return Err(Error::cancelled("the copy was cancelled"));
        }
        Ok(())
    };
    engine.export(db, source, None, &mut |json| {
        let mut doc: Map<String, Value> = serde_json::from_slice(json)
            .map_err(|e| Error::internal(format!("an exported item is not a JSON object: {e}")))?;
        candidate.prepare(&mut doc)?;
        let body = serde_json::to_vec(&Value::Object(doc))
            .map_err(|e| Error::internal(format!("an item could not be written: {e}")))?;
        batch.push(body);
        if batch.len() >= BATCH {
            flush(&mut batch, &mut written)?;
        }
        Ok(())
    })?;
    if !batch.is_empty() {
        flush(&mut batch, &mut written)?;
    }
    if written == 0 {
        return Err(Error::new(
            StatusCode::BadRequest,
            format!("{db}/{source} holds no items: there is nothing to copy"),
        ));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_say_the_key() {
        let path = Candidate::Path {
            path: "/userId".into(),
        };
        assert_eq!(default_name("posts", &path), "posts-by-userId");
        let h = Candidate::Hierarchical {
            paths: vec!["/tenant".into(), "/user/id".into()],
        };
        assert_eq!(default_name("posts", &h), "posts-by-tenant-user.id");
        let s = Candidate::Synthetic {
            paths: vec!["/date".into()],
            buckets: Some(10),
        };
        assert_eq!(default_name("posts", &s), "posts-by-date-10-buckets");
        let odd = Candidate::Path {
            path: "/a#b?".into(),
        };
        assert_eq!(default_name("c", &odd), "c-by-a_b_");
    }
}
