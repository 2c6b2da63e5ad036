//! Reading import files: a JSON array of items or NDJSON (one item per line), a chunk of
//! records at a time.
//!
//! A file is read as a stream, so an import holds one chunk, never the whole file: a file
//! of ten million items costs what one of a thousand does. Records remember the line they
//! start on, so every error names it. Imports check every record before writing any (the
//! CLI reads each file as a stream to check it, then reads each record again where it lies
//! to write it), so a malformed line changes nothing. Splitting an array into its elements only follows strings and nesting; each
//! element's JSON is checked when the record is parsed.
//!
//! Each record also knows where its text lies in the file ([`Origin`]), so that an import
//! can read the records again in another order ([`super::import_order`]).

use std::io::BufRead;

use crate::error::{Error, Result};

/// One item's JSON text and the line it starts on (1-based).
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub line: usize,
    pub json: &'a [u8],
}

/// Where a record's text lies in its file: from its first byte, `len` bytes, blanks
/// around it included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Origin {
    pub offset: u64,
    pub len: u64,
}

/// Records read from a file: their texts back to back, and where each starts and ends.
#[derive(Debug, Default)]
pub struct Chunk {
    text: Vec<u8>,
    /// Per record: its line, and its span in `text`.
    spans: Vec<(usize, usize, usize)>,
    /// Per record: where it was read from.
    origins: Vec<Origin>,
}

impl Chunk {
    pub fn records(&self) -> Vec<Record<'_>> {
        self.spans
            .iter()
            .map(|&(line, start, end)| Record {
                line,
                json: &self.text[start..end],
            })
            .collect()
    }

    /// Per record, in the order of [`Chunk::records`]: where its text lies in its file.
    pub fn origins(&self) -> &[Origin] {
        &self.origins
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Bytes of JSON held.
    pub fn bytes(&self) -> usize {
        self.text.len()
    }

    /// Adds the record starting on `line` whose text, blanks around it included, is `raw`,
    /// read from `origin`. Blank text is no record.
    pub fn push(&mut self, line: usize, raw: &[u8], origin: Origin) {
        let json = raw.trim_ascii();
        if json.is_empty() {
            return;
        }
        let start = self.text.len();
        self.text.extend_from_slice(json);
        self.spans.push((line, start, self.text.len()));
        self.origins.push(origin);
    }
}

/// Every record of an import file held in memory (the bundled samples): one chunk without
/// limits.
pub fn read_all(bytes: &[u8]) -> Result<Chunk> {
    Ok(RecordStream::new(bytes)
        .next_chunk(usize::MAX, usize::MAX)?
        .unwrap_or_default())
}

/// Where an array is between its elements.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Between {
    /// Before the `[`.
    Open,
    /// After `[`: an element or `]`.
    First,
    /// After `,`: an element.
    Next,
    /// After `]`: only whitespace.
    End,
}

/// Where the stream is in its file.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Nothing but (a byte-order mark and) whitespace read yet.
    Start,
    Ndjson,
    Between(Between),
    /// Inside an array element that began on `line`, `depth` brackets deep.
    Element {
        line: usize,
        depth: usize,
        in_string: bool,
        escaped: bool,
    },
    Done,
}

/// Reads an import file's records a chunk at a time (see the module comment). A file whose
/// first non-blank character is `[` is a JSON array; anything else is NDJSON, blank lines
/// ignored.
pub struct RecordStream<R> {
    reader: R,
    state: State,
    /// The line and column (1-based) of the next byte, and its offset in the file.
    line: usize,
    column: usize,
    offset: u64,
    /// The offset of the array element being read.
    element_start: u64,
    /// The element being read, when a chunk fills before its end.
    partial: Vec<u8>,
}

impl<R: BufRead> RecordStream<R> {
    pub fn new(reader: R) -> RecordStream<R> {
        RecordStream {
            reader,
            state: State::Start,
            line: 1,
            column: 1,
            offset: 0,
            element_start: 0,
            partial: Vec::new(),
        }
    }

    /// The next records: at least one, and no more than `max_items` or than reach
    /// `max_bytes` of JSON; `None` at the end of the file.
    pub fn next_chunk(&mut self, max_items: usize, max_bytes: usize) -> Result<Option<Chunk>> {
        let mut chunk = Chunk::default();
        while chunk.len() < max_items.max(1) && chunk.bytes() < max_bytes {
            let before = chunk.len();
            match self.state {
                State::Done => break,
                State::Start => self.detect()?,
                State::Ndjson => self.ndjson_line(&mut chunk)?,
                _ => self.array_bytes(&mut chunk)?,
            }
            if self.state == State::Done && chunk.len() == before {
                break;
            }
        }
        Ok((!chunk.is_empty()).then_some(chunk))
    }

    /// Skips a byte-order mark and whitespace, and decides the format from the first byte.
    fn detect(&mut self) -> Result<()> {
        let line = self.line;
        let buf = self.reader.fill_buf().map_err(|e| io_error(line, e))?;
        if buf.is_empty() {
            self.state = State::Done;
            return Ok(());
        }
        if buf.starts_with(b"\xEF\xBB\xBF") {
            self.reader.consume(3);
            self.offset += 3;
            return Ok(());
        }
        let blank = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if blank == 0 {
            self.state = match buf[0] {
                b'[' => State::Between(Between::Open),
                _ => State::Ndjson,
            };
            return Ok(());
        }
        let skipped = &buf[..blank];
        self.line += skipped.iter().filter(|b| **b == b'\n').count();
        self.column = match skipped.iter().rposition(|b| *b == b'\n') {
            Some(last) => blank - last,
            None => self.column + blank,
        };
        self.reader.consume(blank);
        self.offset += blank as u64;
        Ok(())
    }

    fn ndjson_line(&mut self, chunk: &mut Chunk) -> Result<()> {
        let mut line = std::mem::take(&mut self.partial);
        line.clear();
        let read = self
            .reader
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error(self.line, e))?;
        if read == 0 {
            self.state = State::Done;
        } else {
            let origin = Origin {
                offset: self.offset,
                len: read as u64,
            };
            chunk.push(self.line, &line, origin);
            self.line += 1;
            self.offset += read as u64;
        }
        self.partial = line;
        Ok(())
    }

    /// Reads array bytes until a record completes, the buffer ends or the array does.
    fn array_bytes(&mut self, chunk: &mut Chunk) -> Result<()> {
        let here = (self.line, self.column);
        let buf = self.reader.fill_buf().map_err(|e| io_error(here.0, e))?;
        if buf.is_empty() {
            return match self.state {
                State::Between(Between::End) => {
                    self.state = State::Done;
                    Ok(())
                }
                State::Element { line, .. } => Err(syntax_error(
                    here,
                    &format!("it ends inside the element that starts on line {line}"),
                )),
                _ => Err(syntax_error(here, "it ends before its closing ]")),
            };
        }
        let mut used = 0;
        let mut completed = false;
        for &b in buf {
            used += 1;
            let (line, column) = (self.line, self.column);
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else {
                self.column += 1;
            }
            let (next, error) = step(self.state, b, line);
            if let Some(what) = error {
                return Err(syntax_error((line, column), what));
            }
            match (self.state, next) {
                (State::Element { .. }, State::Element { .. }) => self.partial.push(b),
                (State::Element { line, .. }, State::Between(_)) => {
                    let origin = Origin {
                        offset: self.element_start,
                        len: self.partial.len() as u64,
                    };
                    chunk.push(line, &self.partial, origin);
                    self.partial.clear();
                    completed = true;
                }
                (_, State::Element { .. }) => {
                    self.element_start = self.offset + used as u64 - 1;
                    self.partial.push(b);
                }
                _ => {}
            }
            self.state = next;
            if completed {
                break;
            }
        }
        self.reader.consume(used);
        self.offset += used as u64;
        Ok(())
    }
}

fn io_error(line: usize, e: std::io::Error) -> Error {
    Error::bad_request(format!("line {line}: cannot read the file: {e}"))
}

fn syntax_error((line, column): (usize, usize), what: &str) -> Error {
    Error::bad_request(format!(
        "line {line}, column {column}: the file is not a valid JSON array: {what}"
    ))
    .at(line as u32, column as u32)
}

/// The array reader's next state after byte `b`, read on `line`, or what is wrong.
fn step(state: State, b: u8, line: usize) -> (State, Option<&'static str>) {
    let element = State::Element {
        line,
        depth: usize::from(b == b'{' || b == b'['),
        in_string: b == b'"',
        escaped: false,
    };
    match state {
        State::Between(between) if b.is_ascii_whitespace() => (State::Between(between), None),
        State::Between(Between::Open) => (State::Between(Between::First), None),
        State::Between(Between::First) if b == b']' => (State::Between(Between::End), None),
        State::Between(Between::Next) if b == b']' => {
            (state, Some("a ] follows a comma (no element)"))
        }
        State::Between(Between::First | Between::Next) if b == b',' => {
            (state, Some("a comma where an element should be"))
        }
        State::Between(Between::First | Between::Next) => (element, None),
        State::Between(Between::End) => (state, Some("text after the closing ]")),
        State::Element {
            line,
            depth,
            in_string,
            escaped,
        } => {
            let (depth, in_string, escaped) = match (in_string, escaped, b) {
                (true, true, _) => (depth, true, false),
                (true, false, b'\\') => (depth, true, true),
                (true, false, b'"') => (depth, false, false),
                (true, false, _) => (depth, true, false),
                (false, _, b'"') => (depth, true, false),
                (false, _, b'{' | b'[') => (depth + 1, false, false),
                (false, _, b'}' | b']') if depth > 0 => (depth - 1, false, false),
                (false, _, b',') if depth == 0 => return (State::Between(Between::Next), None),
                (false, _, b']') => return (State::Between(Between::End), None),
                (false, _, b'}') => return (state, Some("a } that closes nothing")),
                _ => (depth, in_string, false),
            };
            (
                State::Element {
                    line,
                    depth,
                    in_string,
                    escaped,
                },
                None,
            )
        }
        State::Start | State::Ndjson | State::Done => (state, None),
    }
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

    fn lines_and_texts(bytes: &[u8]) -> Vec<(usize, String)> {
        let chunk = read_all(bytes).unwrap();
        chunk
            .records()
            .iter()
            .map(|r| (r.line, String::from_utf8_lossy(r.json).into_owned()))
            .collect()
    }

    #[test]
    fn ndjson_keeps_line_numbers() {
        assert_eq!(
            lines_and_texts(b"{\"id\":\"a\"}\n\n{\"id\":\"b\"}\r\n"),
            vec![(1, r#"{"id":"a"}"#.into()), (3, r#"{"id":"b"}"#.into())]
        );
    }

    #[test]
    fn arrays_know_where_elements_start() {
        let text = b"\xEF\xBB\xBF\n[\n {\"id\":\"a\", \"s\": \"],\\\"[\"},\n\n {\"id\":\"b\",\n  \"x\": [1, {}]}\n]\n";
        assert_eq!(
            lines_and_texts(text),
            vec![
                (3, r#"{"id":"a", "s": "],\"["}"#.into()),
                (5, "{\"id\":\"b\",\n  \"x\": [1, {}]}".into())
            ]
        );
        assert!(lines_and_texts(b" [ ] ").is_empty());
    }

    #[test]
    fn chunks_split_a_stream_without_losing_a_record() {
        let text: String = (0..1000)
            .map(|i| format!("{{\"id\":\"{i}\",\"pad\":\"{}\"}}", "x".repeat(i % 50)))
            .collect::<Vec<_>>()
            .join(",\n");
        let text = format!("[{text}]");
        // A reader that hands out 7 bytes at a time splits elements across reads.
        let reader = std::io::BufReader::with_capacity(7, text.as_bytes());
        let mut stream = RecordStream::new(reader);
        let mut seen = Vec::new();
        while let Some(chunk) = stream.next_chunk(64, 1 << 20).unwrap() {
            assert!(chunk.len() <= 64);
            for r in chunk.records() {
                let v: serde_json::Value = serde_json::from_slice(r.json).unwrap();
                seen.push((r.line, v["id"].as_str().unwrap().to_string()));
            }
        }
        let expected: Vec<(usize, String)> = (0..1000).map(|i| (i + 1, i.to_string())).collect();
        assert_eq!(seen, expected);
    }

    /// Each record's origin holds its text, read in pieces of any size (that holds a
    /// byte-order mark), whatever the format and the blanks between records.
    #[test]
    fn origins_locate_every_record_in_its_file() {
        let texts: [&[u8]; 3] = [
            b"\xEF\xBB\xBF {\"id\":\"a\"}\r\n\n  {\"id\":\"b\", \"s\": \"x\\ny\"}\n{\"id\":\"c\"}",
            b"\xEF\xBB\xBF\n[ {\"id\":\"a\", \"s\": \"],\\\"[\"} ,\n\n{\"id\":\"b\",\n \"x\": [1, {}]}\n,7]\n",
            b"[{\"id\":\"a\"}]",
        ];
        for text in texts {
            for capacity in [3, 4, 7, 64] {
                let reader = std::io::BufReader::with_capacity(capacity, text);
                let mut stream = RecordStream::new(reader);
                let mut found = 0;
                while let Some(chunk) = stream.next_chunk(2, 1 << 20).unwrap() {
                    for (r, o) in chunk.records().iter().zip(chunk.origins()) {
                        let raw = &text[o.offset as usize..(o.offset + o.len) as usize];
                        assert_eq!(raw.trim_ascii(), r.json, "capacity {capacity}");
                        found += 1;
                    }
                }
                assert_eq!(found, read_all(text).unwrap().len(), "capacity {capacity}");
                assert!(found > 0);
            }
        }
    }

    #[test]
    fn broken_arrays_report_their_line() {
        for (text, line) in [
            (&b"[\n{\"id\":\"a\"},\n{\"id\":\"b\"}\n"[..], 4),
            (b"[\n{\"id\":\"a\"},\n{\"id\":\"b\"\n", 4),
            (b"[\n{\"id\":\"a\"},\n]", 3),
            (b"[\n{\"id\":\"a\"}\n] x", 3),
            (b"[,]", 1),
        ] {
            let err = read_all(text).unwrap_err();
            assert_eq!(err.status, 400, "{err}");
            assert_eq!(err.line, Some(line), "{err}");
        }
        // An element's own JSON is checked when it is parsed, at its line.
        let chunk = read_all(b"[\n{\"id\":\"a\"},\n{\"id\":}\n]").unwrap();
        assert_eq!(chunk.records()[1].line, 3);
    }

    #[test]
    fn empty_files_have_no_records() {
        assert!(read_all(b"  \n").unwrap().is_empty());
        assert!(read_all(b"").unwrap().is_empty());
    }
}
