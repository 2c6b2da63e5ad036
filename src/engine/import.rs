//! Reading import files: a JSON array of items or NDJSON (one item per line).
//!
//! The file is split into records that remember their line, so every error names the line
//! it is on. Imports check every record before writing any, so a malformed line changes
//! nothing.

use serde_json::value::RawValue;

use crate::error::{Error, Result};

/// One item's JSON text and the line it starts on (1-based).
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub line: usize,
    pub json: &'a [u8],
}

/// Splits an import file into records. A file whose first non-blank character is `[` is a
/// JSON array; anything else is NDJSON (blank lines ignored).
pub fn records(bytes: &[u8]) -> Result<Vec<Record<'_>>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes); // UTF-8 BOM
    let first = bytes.iter().position(|b| !b.is_ascii_whitespace());
    match first.map(|i| bytes[i]) {
        None => Ok(Vec::new()),
        Some(b'[') => array_records(bytes),
        Some(_) => Ok(ndjson_records(bytes)),
    }
}

fn ndjson_records(bytes: &[u8]) -> Vec<Record<'_>> {
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| line.iter().any(|b| !b.is_ascii_whitespace()))
        .map(|(i, line)| Record {
            line: i + 1,
            json: line,
        })
        .collect()
}

fn array_records(bytes: &[u8]) -> Result<Vec<Record<'_>>> {
    let elements: Vec<&RawValue> = serde_json::from_slice(bytes).map_err(|e| {
        Error::bad_request(format!(
            "line {}, column {}: the file is not a valid JSON array: {e}",
            e.line(),
            e.column()
        ))
        .at(e.line() as u32, e.column() as u32)
    })?;
    let base = bytes.as_ptr() as usize;
    let mut line = 1;
    let mut scanned = 0;
    let mut out = Vec::with_capacity(elements.len());
    for raw in elements {
        let text = raw.get().as_bytes();
        let offset = (text.as_ptr() as usize)
            .saturating_sub(base)
            .min(bytes.len());
        line += bytes[scanned..offset]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        scanned = offset;
        out.push(Record { line, json: text });
    }
    Ok(out)
}

/// Prefixes an error with the record's line.
pub fn at_line(err: Error, line: usize) -> Error {
    let message = format!("line {line}: {}", err.message);
    Error {
        message,
        line: Some(line as u32),
        ..err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndjson_keeps_line_numbers() {
        let recs = records(b"{\"id\":\"a\"}\n\n{\"id\":\"b\"}\n").unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].line, 3);
        assert_eq!(recs[1].json, b"{\"id\":\"b\"}");
    }

    #[test]
    fn arrays_know_where_elements_start() {
        let recs = records(b"[\n {\"id\":\"a\"},\n\n {\"id\":\"b\",\n  \"x\": 1}\n]").unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].line, 2);
        assert_eq!(recs[1].line, 4);
    }

    #[test]
    fn broken_arrays_report_their_line() {
        let err = records(b"[\n{\"id\":\"a\"},\n{\"id\":}\n]").unwrap_err();
        assert_eq!(err.status, 400);
        assert_eq!(err.line, Some(3));
    }

    #[test]
    fn empty_files_have_no_records() {
        assert!(records(b"  \n").unwrap().is_empty());
    }
}
