//! The printer against every query the project's tests write: each Rust string literal in
//! `tests/` and `src/` whose text starts with SELECT and parses must print to text that parses
//! back to the same tree, and printing that tree again must give the same text.
//!
//! The sources are read when the test runs, so queries added to any test are covered without
//! listing them here. Literals are found by a small scanner of Rust's lexical rules (comments,
//! character literals and lifetimes, normal, byte and raw strings); queries built with
//! `format!` placeholders mostly don't parse and are skipped.

use std::path::{Path, PathBuf};

use super::tests::round_trip;

/// Fewer queries than this that parse means the scan has stopped finding them (the suite
/// held 843 such, of 1,078 literals starting with SELECT, when this was written), not that
/// the printer is right.
const AT_LEAST: usize = 750;

#[test]
fn every_query_of_the_test_suite_reads_back_the_same() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests", "src"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    let mut parsed = 0;
    let mut failures = Vec::new();
    for file in &files {
        let Ok(source) = std::fs::read_to_string(file) else {
            panic!("can't read {}", file.display());
        };
        for text in string_literals(&source) {
            if !starts_with_select(&text) {
                continue;
            }
            match round_trip(&text) {
                Ok(None) => {}
                Ok(Some(_)) => parsed += 1,
                Err(why) => failures.push(format!("{}: {why}", file.display())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the queries don't survive printing; the first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n\n")
    );
    assert!(
        parsed >= AT_LEAST,
        "only {parsed} queries of the test suite parsed (from {} files)",
        files.len()
    );
}

/// The `.rs` files below `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("can't list {}", dir.display());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn starts_with_select(text: &str) -> bool {
    text.trim_start()
        .get(..6)
        .is_some_and(|w| w.eq_ignore_ascii_case("SELECT"))
}

/// The contents of every string literal of Rust `source`, escapes resolved.
fn string_literals(source: &str) -> Vec<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        i = match c {
            '/' if next == Some('/') => skip_line(&chars, i),
            '/' if next == Some('*') => skip_block_comment(&chars, i),
            '\'' => skip_char_or_lifetime(&chars, i),
            '"' => {
                let (text, end) = quoted(&chars, i + 1);
                out.push(text);
                end
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                let mut end = i;
                while chars
                    .get(end)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    end += 1;
                }
                let word: String = chars[start..end].iter().collect();
                match (word.as_str(), chars.get(end)) {
                    ("r" | "br" | "cr", Some('"' | '#')) => match raw(&chars, end) {
                        Some((text, after)) => {
                            out.push(text);
                            after
                        }
                        None => end,
                    },
                    ("b" | "c", Some('"')) => {
                        let (text, after) = quoted(&chars, end + 1);
                        out.push(text);
                        after
                    }
                    _ => end,
                }
            }
            _ => i + 1,
        };
    }
    out
}

fn skip_line(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && chars[i] != '\n' {
        i += 1;
    }
    i
}

/// Past the `/* ... */` at `i`; block comments nest.
fn skip_block_comment(chars: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        match (chars[i], chars.get(i + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                i += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    i
}

/// Past the character literal (`'a'`, `'\''`, `'"'`) or the lifetime's quote at `i`.
fn skip_char_or_lifetime(chars: &[char], i: usize) -> usize {
    match (chars.get(i + 1), chars.get(i + 2)) {
        (Some('\\'), _) => {
            let mut j = i + 3;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            j + 1
        }
        (Some(_), Some('\'')) => i + 3,
        _ => i + 1,
    }
}

/// The text of a normal string whose contents start at `i`, and the index past its end.
fn quoted(chars: &[char], mut i: usize) -> (String, usize) {
    let mut text = String::new();
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '"' => break,
            '\\' => i = escape(chars, i, &mut text),
            c => text.push(c),
        }
    }
    (text, i)
}

/// Resolves the escape whose character after the backslash is at `i`; returns the index past it.
fn escape(chars: &[char], i: usize, text: &mut String) -> usize {
    let Some(&c) = chars.get(i) else {
        return i;
    };
    match c {
        'n' => text.push('\n'),
        'r' => text.push('\r'),
        't' => text.push('\t'),
        '0' => text.push('\0'),
        'x' => {
            let hex: String = chars.iter().skip(i + 1).take(2).collect();
            text.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            return i + 3;
        }
        'u' => {
            let Some(close) = chars[i..].iter().position(|&c| c == '}') else {
                return i + 1;
            };
            let hex: String = chars[i + 2..i + close].iter().collect();
            text.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            return i + close + 1;
        }
        // A line continuation: the newline and the next line's leading whitespace go.
        '\n' => {
            let mut j = i + 1;
            while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            return j;
        }
        other => text.push(other),
    }
    i + 1
}

/// A raw string whose `#`s or opening quote are at `i`: its text and the index past its end.
fn raw(chars: &[char], i: usize) -> Option<(String, usize)> {
    let hashes = chars[i..].iter().take_while(|&&c| c == '#').count();
    let open = i + hashes;
    if chars.get(open) != Some(&'"') {
        return None;
    }
    let mut j = open + 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            let text = chars[open + 1..j].iter().collect();
            return Some((text, j + 1 + hashes));
        }
        j += 1;
    }
    None
}

#[test]
fn the_scanner_reads_rust_string_literals() {
    let source = r####"
        // "a comment" is no string
        /* nor "this" /* nested "one" */ "here" */
        let a = 'x'; let q = '"'; let e = '\''; fn f<'a>(s: &'a str) {}
        let s = "SELECT \"x\"\n\
                 FROM c";
        let r = r#"SELECT "raw" \n"#;
        let b = b"bytes";
        let r#type = r"plain raw";
    "####;
    assert_eq!(
        string_literals(source),
        vec![
            "SELECT \"x\"\nFROM c",
            "SELECT \"raw\" \\n",
            "bytes",
            "plain raw"
        ]
    );
    assert!(starts_with_select("  \n select 1"));
    assert!(!starts_with_select("SELEC"));
}
