//! One JSON document written as its pages arrive: `{"<key>": [ ...items... ], ...rest}`.
//! `feed --all` and `query --all` print every page of a long result this way, so memory
//! holds one page whatever the result's length. The output is the pretty-printed document
//! a single page prints, with the array first.

use std::io::Write;

use serde::Serialize;
use serde_json::{Map, Value};

pub(crate) struct ArrayDocument<W: Write> {
    out: W,
    count: u64,
    /// False once a write failed: the reader went away (`| head`).
    open: bool,
}

/// Pretty JSON nested `levels` deep (two spaces each); JSON strings hold no raw newlines,
/// so indenting every line is safe.
fn nested(value: &impl Serialize, levels: usize) -> String {
    let pad = format!("\n{}", "  ".repeat(levels));
    serde_json::to_string_pretty(value)
        .unwrap_or_default()
        .replace('\n', &pad)
}

impl<W: Write> ArrayDocument<W> {
    /// Starts the document with the array member `key`.
    pub fn begin(mut out: W, key: &str) -> ArrayDocument<W> {
        let open = write!(out, "{{\n  {}: [", Value::from(key)).is_ok();
        ArrayDocument {
            out,
            count: 0,
            open,
        }
    }

    /// Appends one item; false when the reader went away.
    pub fn push(&mut self, item: &impl Serialize) -> bool {
        if self.open {
            let sep = if self.count == 0 { "\n    " } else { ",\n    " };
            self.open = write!(self.out, "{sep}{}", nested(item, 2)).is_ok();
            self.count += 1;
        }
        self.open
    }

    /// Items pushed so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Closes the array and writes the other members, in their order.
    pub fn finish(mut self, rest: Map<String, Value>) {
        if !self.open {
            return;
        }
        let mut tail = String::from(if self.count == 0 { "]" } else { "\n  ]" });
        for (k, v) in &rest {
            tail.push_str(&format!(
                ",\n  {}: {}",
                Value::from(k.as_str()),
                nested(v, 1)
            ));
        }
        tail.push_str("\n}\n");
        let _ = self.out.write_all(tail.as_bytes());
        let _ = self.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn written(items: &[Value], rest: Value) -> Value {
        let mut out = Vec::new();
        let mut doc = ArrayDocument::begin(&mut out, "documents");
        for item in items {
            assert!(doc.push(item));
        }
        let Value::Object(rest) = rest else {
            unreachable!()
        };
        doc.finish(rest);
        serde_json::from_slice(&out).expect("one JSON document")
    }

    #[test]
    fn the_streamed_document_is_the_one_a_single_page_prints() {
        let items = [
            json!({"id": "a", "nested": {"x": [1, 2]}}),
            json!("b"),
            json!(3),
        ];
        let rest = json!({"continuation": null, "requestCharge": 2.5, "metrics": {"n": 1}});
        let mut expected = rest.clone();
        expected["documents"] = json!(items);
        assert_eq!(written(&items, rest), expected);
        assert_eq!(
            written(&[], json!({"count": 0})),
            json!({"documents": [], "count": 0})
        );
    }

    #[test]
    fn a_closed_reader_stops_the_stream() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut doc = ArrayDocument::begin(Closed, "changes");
        assert!(!doc.push(&json!(1)));
    }
}
