//! Writing a query's result to a file, in the worker: as a JSON array, as NDJSON, or as
//! CSV (RFC 4180). The rows are either the pages the console loaded or the whole result,
//! the query run again page by page as `query --all` runs it, so memory holds one page.
//!
//! CSV needs its columns before its first row: they are the union of the rows' top-level
//! properties (in order of first appearance, system properties last, a `value` column for
//! rows that are not objects, as the results table shows them), so a whole result is
//! first written to a spool file beside the target while the columns are gathered, then
//! read back into the CSV. Nested values are written as their JSON text, strings bare, and
//! a missing property as an empty field (JSON `null` stays `null`, so the two differ).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::engine::{Backend, QueryOptions};
use crate::error::{Error, Result};

/// The file formats, chosen by the path's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Ndjson,
    Csv,
}

impl Format {
    /// The format a path's extension names (`.json`, `.ndjson` or `.jsonl`, `.csv`).
    pub fn of(path: &str) -> std::result::Result<Format, String> {
        let ext = Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("json") => Ok(Format::Json),
            Some("ndjson" | "jsonl") => Ok(Format::Ndjson),
            Some("csv") => Ok(Format::Csv),
            _ => Err(format!(
                "{path:?}: end the file name with .json, .ndjson or .csv to say the format"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Ndjson => "NDJSON",
            Format::Csv => "CSV",
        }
    }
}

/// Where the rows come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The rows the console loaded, in the order it shows them.
    Loaded(Vec<Value>),
    /// The whole result: the query run again, page by page.
    Query {
        db: String,
        c: String,
        sql: String,
        params: std::collections::BTreeMap<String, Value>,
    },
}

/// What an export did: the file (absolute), the rows written and the RU a re-run spent.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub path: PathBuf,
    pub rows: u64,
    pub request_charge: f64,
}

/// The columns of CSV rows, gathered row by row: top-level properties in order of first
/// appearance, system properties (`_rid`, …) after them, and `value` first when a row
/// is not an object.
#[derive(Debug, Default)]
pub struct Columns {
    user: Vec<String>,
    system: Vec<String>,
    scalar: bool,
    seen: std::collections::HashSet<String>,
}

impl Columns {
    pub fn add(&mut self, row: &Value) {
        match row {
            Value::Object(o) => {
                for k in o.keys() {
                    if self.seen.insert(k.clone()) {
                        if k.starts_with('_') {
                            self.system.push(k.clone());
                        } else {
                            self.user.push(k.clone());
                        }
                    }
                }
            }
            _ => self.scalar = true,
        }
    }

    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.user.len() + self.system.len() + 1);
        if self.scalar {
            out.push("value".to_string());
        }
        out.extend(self.user.iter().cloned());
        out.extend(self.system.iter().cloned());
        out
    }
}

/// One CSV field, quoted as RFC 4180 requires (a comma, a quote, CR or LF inside).
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A row's CSV record under `columns`, ending with CRLF as RFC 4180 has it.
pub fn csv_record(row: &Value, columns: &[String]) -> String {
    let fields: Vec<String> = columns
        .iter()
        .map(|c| {
            let v = match row {
                Value::Object(o) => o.get(c),
                other if c == "value" => Some(other),
                _ => None,
            };
            match v {
                None => String::new(),
                Some(Value::String(s)) => csv_field(s),
                Some(other) => csv_field(&other.to_string()),
            }
        })
        .collect();
    format!("{}\r\n", fields.join(","))
}

/// Writes rows one at a time in a format; CSV rows go to a spool file first.
struct Writer {
    format: Format,
    out: BufWriter<File>,
    path: PathBuf,
    /// CSV only: the spool (NDJSON) and its path, and the columns seen so far.
    spool: Option<(BufWriter<File>, PathBuf)>,
    columns: Columns,
    rows: u64,
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::bad_request(format!("writing {}: {e}", path.display()))
}

impl Writer {
    fn create(path: &Path, format: Format) -> Result<Writer> {
        let file = File::create(path)
            .map_err(|e| Error::bad_request(format!("cannot create {}: {e}", path.display())))?;
        let spool = if format == Format::Csv {
            let spool_path = path.with_extension("csv.part");
            let f = File::create(&spool_path).map_err(|e| io_error(&spool_path, e))?;
            Some((BufWriter::new(f), spool_path))
        } else {
            None
        };
        let mut w = Writer {
            format,
            out: BufWriter::new(file),
            path: path.to_path_buf(),
            spool,
            columns: Columns::default(),
            rows: 0,
        };
        if format == Format::Json {
            w.out.write_all(b"[").map_err(|e| io_error(path, e))?;
        }
        Ok(w)
    }

    fn row(&mut self, row: &Value) -> Result<()> {
        let text = row.to_string();
        let path = self.path.clone();
        let line = |out: &mut BufWriter<File>, sep: &[u8]| {
            out.write_all(sep)
                .and_then(|_| out.write_all(text.as_bytes()))
                .map_err(|e| io_error(&path, e))
        };
        match (self.format, &mut self.spool) {
            (Format::Json, _) => line(&mut self.out, if self.rows == 0 { b"\n" } else { b",\n" })?,
            (Format::Ndjson, _) => {
                line(&mut self.out, b"")?;
                self.out.write_all(b"\n").map_err(|e| io_error(&path, e))?;
            }
            (Format::Csv, Some((spool, _))) => {
                self.columns.add(row);
                line(spool, b"")?;
                spool.write_all(b"\n").map_err(|e| io_error(&path, e))?;
            }
            (Format::Csv, None) => {}
        }
        self.rows += 1;
        Ok(())
    }

    /// Ends the file (the JSON array's bracket; CSV: the header and the spooled rows).
    fn finish(mut self) -> Result<u64> {
        let path = self.path.clone();
        match self.format {
            Format::Json => self
                .out
                .write_all(if self.rows == 0 { b"]\n" } else { b"\n]\n" })
                .map_err(|e| io_error(&path, e))?,
            Format::Ndjson => {}
            Format::Csv => {
                if let Some((spool, spool_path)) = self.spool.take() {
                    drop(
                        spool
                            .into_inner()
                            .map_err(|e| io_error(&spool_path, e.into_error()))?,
                    );
                    let columns = self.columns.names();
                    let header: Vec<String> = columns.iter().map(|c| csv_field(c)).collect();
                    let copied = write_csv(&mut self.out, &header, &columns, &spool_path);
                    let _ = std::fs::remove_file(&spool_path);
                    copied.map_err(|e| io_error(&path, e))?;
                }
            }
        }
        self.out.flush().map_err(|e| io_error(&path, e))?;
        Ok(self.rows)
    }

    /// Drops a half-written export: the file and its spool are removed.
    fn abandon(self) {
        if let Some((_, spool_path)) = &self.spool {
            let _ = std::fs::remove_file(spool_path);
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The CSV's header, then each spooled row as a record.
fn write_csv(
    out: &mut BufWriter<File>,
    header: &[String],
    columns: &[String],
    spool: &Path,
) -> std::io::Result<()> {
    out.write_all(format!("{}\r\n", header.join(",")).as_bytes())?;
    for line in BufReader::new(File::open(spool)?).lines() {
        let row: Value = serde_json::from_str(&line?).unwrap_or(Value::Null);
        out.write_all(csv_record(&row, columns).as_bytes())?;
    }
    Ok(())
}

/// Writes `source` to `path` in `format`, reporting rows written through `progress`;
/// `stop` cancels between pages (499, and nothing is left behind).
pub fn export(
    engine: &dyn Backend,
    source: &Source,
    path: &str,
    format: Format,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64),
) -> Result<Written> {
    let target = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    let mut w = Writer::create(&target, format)?;
    let mut request_charge = 0.0;
    let result = (|| -> Result<()> {
        match source {
            Source::Loaded(rows) => {
                for row in rows {
                    w.row(row)?;
                }
            }
            Source::Query { db, c, sql, params } => {
                let mut opts = QueryOptions {
                    params: params.clone().into_iter().collect(),
                    ..Default::default()
                };
                loop {
                    if stop.load(Ordering::Acquire) {
                        return Err(Error::cancelled("export cancelled"));
                    }
                    let page = engine.query_cancellable(db, c, sql, &opts, stop)?;
                    request_charge += page.request_charge;
                    for doc in page.documents {
                        w.row(&Value::from(doc))?;
                    }
                    progress(w.rows);
                    match page.continuation {
                        Some(next) => opts.continuation = Some(next),
                        None => break,
                    }
                }
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(Written {
            rows: w.finish()?,
            path: target,
            request_charge: crate::charge::round(request_charge),
        }),
        Err(e) => {
            w.abandon();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_quotes_as_rfc_4180_says() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn columns_are_the_union_of_top_level_properties_system_last() {
        let mut cols = Columns::default();
        for row in [
            json!({"id": "1", "_ts": 5, "n": 1}),
            json!({"id": "2", "tags": ["a"]}),
            json!(7),
        ] {
            cols.add(&row);
        }
        let names = cols.names();
        assert_eq!(names, ["value", "id", "n", "tags", "_ts"]);
        assert_eq!(
            csv_record(&json!({"id": "2", "tags": ["a", "b,c"]}), &names),
            ",2,,\"[\"\"a\"\",\"\"b,c\"\"]\",\r\n"
        );
        assert_eq!(csv_record(&json!(7), &names), "7,,,,\r\n");
        assert_eq!(csv_record(&json!({"n": null}), &names), ",,null,,\r\n");
    }

    #[test]
    fn the_format_is_the_extension() {
        assert_eq!(Format::of("a/b.JSON"), Ok(Format::Json));
        assert_eq!(Format::of("x.jsonl"), Ok(Format::Ndjson));
        assert_eq!(Format::of("x.csv"), Ok(Format::Csv));
        assert!(Format::of("x.txt").is_err());
        assert!(Format::of("x").is_err());
    }
}
