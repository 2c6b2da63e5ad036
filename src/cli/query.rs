//! `query`: run a NoSQL query and print the result with its routing, charge and metrics.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::stream::ArrayDocument;
use super::{CliResult, Failure, parse_json_arg, print_json, split_target};
use crate::engine::{Backend, QueryOptions};

/// The query text: the argument, stdin for "-", or the file `--file` names.
pub fn text(sql: Option<&str>, file: Option<&Path>) -> CliResult<String> {
    let read = |what: &str, r: std::io::Result<String>| {
        r.map_err(|e| Failure::Usage(format!("cannot read the query from {what}: {e}")))
    };
    let text = match (sql, file) {
        (Some("-"), None) => read("stdin", std::io::read_to_string(std::io::stdin()))?,
        (Some(sql), None) => sql.to_string(),
        (None, Some(path)) => read(&path.display().to_string(), std::fs::read_to_string(path))?,
        _ => {
            return Err(Failure::Usage(
                "give the query as an argument, \"-\" for stdin, or --file FILE (one of them)"
                    .into(),
            ));
        }
    };
    if text.trim().is_empty() {
        return Err(Failure::Usage("the query text is empty".into()));
    }
    Ok(text)
}

#[allow(clippy::too_many_arguments)]
pub fn query(
    engine: &dyn Backend,
    target: &str,
    sql: &str,
    params: &[String],
    pk: Option<&str>,
    max_items: i64,
    continuation: Option<String>,
    all: bool,
) -> CliResult {
    let (db, c) = split_target(target)?;
    // pagination.md: "You can set MaxItemCount to -1 if you don't want to place a limit on
    // the number of results per query execution" (the 4 MB page limit still holds).
    let max_items = match max_items {
        -1 => usize::MAX,
        n => usize::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
            Failure::Usage(
                "--max-items must be at least 1, or -1 for no item limit (pages still end at 4 MB)"
                    .into(),
            )
        })?,
    };
    let mut values = HashMap::new();
    for p in params {
        let Some((name, json)) = p.split_once('=') else {
            return Err(Failure::Usage(format!(
                "--param takes @name=JSON, got {p:?}"
            )));
        };
        // Parameter names carry their `@`, as the service requires ("Names of parameters
        // must begin with '@'"): `a=1` is refused rather than bound to a name the query
        // cannot write.
        let Some(name) = name.trim().strip_prefix('@').filter(|n| !n.is_empty()) else {
            return Err(Failure::Usage(format!(
                "--param takes @name=JSON with the @ (as the query writes it), got {p:?}"
            )));
        };
        let name = name.to_string();
        let value: Value = parse_json_arg(&format!("--param @{name}"), json)?;
        values.insert(name, value);
    }
    let partition_key = pk.map(|p| parse_json_arg("--pk", p)).transpose()?;
    let mut opts = QueryOptions {
        params: values,
        partition_key,
        max_items: Some(max_items),
        continuation,
        // Printed with the rest of what the query reports.
        index_metrics: true,
        ..QueryOptions::default()
    };
    let mut result = engine.query(db, c, sql, &opts)?;
    if !all {
        print_json(&result);
        // A result still being computed is kept for `--continuation` in a later process
        // once it is whole: this process stays until then.
        if result.still_computing() {
            eprintln!(
                "the result is still being computed; waiting until it is kept, so that \
                 --continuation continues it (ctrl-c abandons it)"
            );
            if let Err(e) = engine.settle() {
                eprintln!("the result could not be kept for --continuation: {e}");
                return Err(Failure::Printed);
            }
        }
        return Ok(());
    }
    // Every page, its documents written as they come (memory holds one page); the charges
    // and metrics are summed and written after them.
    let mut doc = ArrayDocument::begin(
        std::io::BufWriter::new(std::io::stdout().lock()),
        "documents",
    );
    loop {
        for d in std::mem::take(&mut result.documents) {
            if !doc.push(&d) {
                return Ok(()); // the reader went away (`| head`)
            }
        }
        let Some(token) = result.continuation.take() else {
            break;
        };
        opts.continuation = Some(token);
        let next = match engine.query(db, c, sql, &opts) {
            Ok(next) => next,
            Err(e) => {
                let mut rest = serde_json::Map::new();
                rest.insert("error".into(), e.to_json());
                doc.finish(rest);
                return Err(Failure::Printed);
            }
        };
        if result.still_computing() {
            // Pages that returned while the result was computed carry nothing: what is
            // told after the documents is the pages' that delivered it.
            let charged = result.request_charge;
            result = next;
            result.request_charge = crate::charge::round(charged + result.request_charge);
            continue;
        }
        result.request_charge = crate::charge::round(result.request_charge + next.request_charge);
        result.metrics.output_document_count += next.metrics.output_document_count;
        result.metrics.output_document_size += next.metrics.output_document_size;
        for (p, n) in result.partitions.iter_mut().zip(&next.partitions) {
            p.request_charge = crate::charge::round(p.request_charge + n.request_charge);
        }
        result.continuation = next.continuation;
        result.documents = next.documents;
    }
    let mut rest = match serde_json::to_value(&result) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    rest.remove("documents");
    doc.finish(rest);
    Ok(())
}
