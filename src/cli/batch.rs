//! `batch DB/C --pk JSON`: a transactional batch read from stdin.
//!
//! Input: a JSON array of operations in the SDKs' shape (see [`crate::engine::batch`]).
//! Output: `{"statusCode", "requestCharge", "partitionKeyRangeId", "results": [{"statusCode",
//! "requestCharge", "eTag"?, "resourceBody"?}]}`. A batch that did not commit prints the same
//! document, with the failing operation's status, substatus and message in its result, 424
//! in every other, and an `"error"` object naming the failing `operationIndex`; the exit
//! status is then 1.

use serde_json::Value;

use super::items::{parse_stdin_json, read_stdin};
use super::{CliResult, Failure, parse_json_arg, print_json, split_target};
use crate::engine::{Backend, BatchOperation};
use crate::error::Error;

pub fn batch(engine: &dyn Backend, target: &str, pk: &str) -> CliResult {
    let (db, c) = split_target(target)?;
    let pk = parse_json_arg("--pk", pk)?;
    let ops = operations(parse_stdin_json(&read_stdin()?)?)?;
    let response = engine.execute_batch(db, c, &pk, &ops)?;
    print_json(&response.to_json());
    if response.is_success() {
        Ok(())
    } else {
        Err(Failure::Printed)
    }
}

/// The operations of the stdin array, each read on its own so an error names its index.
fn operations(input: Value) -> Result<Vec<BatchOperation>, Error> {
    let Value::Array(items) = input else {
        return Err(Error::bad_request(
            "a batch is a JSON array of operations, e.g. [{\"operationType\": \"Create\", \
             \"resourceBody\": {...}}]",
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value(v)
                .map_err(|e| Error::bad_request(format!("batch operation {i}: {e}")))
        })
        .collect()
}
