//! No-panic, no-hang, no-overflow fuzzing of the query parser and checks: a deterministic
//! generator produces random token soups and mutations (deletions, insertions, swaps,
//! truncations, duplications) of valid seed queries. Every input must give `Ok` or a 400
//! whose position lies inside the text. Runs on a thread with the default 2 MB test stack and
//! a watchdog, so a stack overflow or an endless loop fails the test with the offending case.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use cosmoscope::query::check;
use cosmoscope::query::parse;

use crate::support::fixture::Rng;

/// Valid queries the mutations start from (docs examples and every clause form).
const SEEDS: &[&str] = &[
    "SELECT * FROM c",
    "SELECT c.id, c.name AS n FROM c WHERE c.age > 21 ORDER BY c.name DESC",
    "SELECT DISTINCT TOP 10 VALUE p.category FROM products p",
    "SELECT TOP @n * FROM c WHERE c.pk = @pk",
    "SELECT VALUE p.price FROM products p WHERE p.price BETWEEN 17.25 AND 25.50",
    "SELECT VALUE p.name FROM products p WHERE p.description LIKE \"%20^%%\" ESCAPE \"^\"",
    "SELECT * FROM products p WHERE p.category IN (\"Accessories\", \"Clothing\")",
    "SELECT * FROM products p WHERE p.category NOT IN ('a', 'b') AND NOT p.x",
    "SELECT VALUE ((2 + 11 % 7) - 2) / 2",
    "SELECT (100 >> 2) AS a, (100 << 2) AS b, (100 >>> 0) AS c, (100 & 1000) AS d, \
     (100 | 1000) AS e, (100 ^ 1000) AS f, ~5 AS g",
    "SELECT p.onCloseout ? (p.price * 0.55) : p.onSale ? (p.price * 0.85) : p.price AS total \
     FROM products p",
    "SELECT p.name, p.collapsible ?? false AS isCollapsible FROM products p",
    "SELECT * FROM employees.employment e WHERE e.team = 'Retail support'",
    "SELECT COUNT(1) AS n, e.capabilities.softwareDevelopment AS lang FROM employees e \
     GROUP BY e.capabilities.softwareDevelopment",
    "SELECT VALUE {name: e.name} FROM employees e ORDER BY e.name OFFSET 2 LIMIT 2",
    "SELECT p.sku, t.name AS tag FROM products p JOIN t IN p.tags WHERE STARTSWITH(t.slug, 'c')",
    "SELECT VALUE COUNT(1) FROM products p JOIN (SELECT VALUE t FROM t IN p.tags \
     WHERE t.name IN ('winter', 'fall')) JOIN (SELECT VALUE s FROM s IN p.stock WHERE NOT s.b)",
    "SELECT VALUE {subtotal: p.price, total: udf.getTotalWithTax(p.price)} FROM products p",
    "SELECT s.id, m.unit FROM shipments s JOIN m IN (SELECT VALUE [{unit: 'ng', x: 1e-9}, \
     {unit: 'µg', x: 0.000001}]) WHERE s.weight.units = m.unit",
    "SELECT (SELECT VALUE 1) AS a, (SELECT VALUE Concat('ID-', 'x')) AS b",
    "SELECT p.id, (SELECT p.name WHERE CONTAINS(p.name, \"glove\")).name FROM products p",
    "SELECT p.name, (SELECT VALUE COUNT(1) FROM i IN p.inventory WHERE i.q > 10) AS n \
     FROM products p WHERE (SELECT VALUE COUNT(1) FROM i IN p.inventory) >= 1",
    "SELECT EXISTS (SELECT VALUE undefined), EXISTS (SELECT undefined)",
    "SELECT p.name, ARRAY (SELECT VALUE t.name FROM t in p.tags) AS tagNames FROM products p",
    "SELECT VALUE {a: IS_FINITE_NUMBER(8.9 / 0.0), b: SQRT(-1.0), c: 0x1F, d: .5, e: 1.}",
    "SELECT c[\"a b\"][0].x, c.tags[@i], c['y'] FROM root c",
    "SELECT * FROM c.children[0] ch WHERE ch.grade >= 5",
    "SELECT VALUE ch FROM ch IN c.children WHERE ch.age <> 3",
    "SELECT s.n FROM (SELECT VALUE {n: c.name} FROM c) s",
    "-- a comment\nSELECT c.id -- trailing\nFROM c",
    "select value c.a || 'x' || \"y\" from c where c.b != null and c.d = true or c.e = false",
    "SELECT VALUE 'esc \\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00'",
    "SELECT LEFT(c.s, 2), RIGHT(c.s, 1), ARRAY_CONTAINS(c.tags, 'a', true) FROM c",
    "SELECT VALUE [1, -2, +3, - c.x, NOT c.y, [], {}] FROM c",
    "SELECT c.a, SUM(c.b) AS s, AVG(c.c), MIN(c.d), MAX(c.e) FROM c GROUP BY c.a",
    "SELECT * FROM c WHERE c.a = 1 AND (c.b = 2 OR c.c = 3) AND NOT (c.d BETWEEN 1 AND 2)",
    "SELECT * FROM c ORDER BY c.a ASC, c.b DESC OFFSET @o LIMIT @l",
    "SELECT * FROM c WHERE c.name NOT LIKE '%bike%' AND c.x NOT BETWEEN 1 AND 2",
    "SELECT TOP 10 c.text FROM c WHERE FullTextContains(c.text, 'keyword1') \
     ORDER BY RANK FullTextScore(c.text, 'keyword1', 'keyword2')",
    "SELECT TOP 10 * FROM c ORDER BY RANK RRF(FullTextScore(c.text, ['a', 'b']), \
     VectorDistance(c.v, [1, 2, 3]), [2, 1])",
    "SELECT TOP 5 c.id, VectorDistance(c.v, @q, false, {'distanceFunction': 'euclidean'}) AS s \
     FROM c WHERE FullTextContainsAny(c.text, 'x', 'y') ORDER BY VectorDistance(c.v, @q)",
    "SELECT VALUE udf.f(c.a, udf.g(c.b)) FROM c",
    "SELECT TOP 5 c.id FROM c JOIN a IN c.accessories JOIN b IN a.parts WHERE b.q > 1",
];

/// Fragments a random token soup is drawn from.
const VOCAB: &[&str] = &[
    "SELECT",
    "select",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "ORDER",
    "ASC",
    "DESC",
    "OFFSET",
    "LIMIT",
    "TOP",
    "DISTINCT",
    "VALUE",
    "AS",
    "IN",
    "JOIN",
    "AND",
    "OR",
    "NOT",
    "BETWEEN",
    "LIKE",
    "ESCAPE",
    "EXISTS",
    "ARRAY",
    "true",
    "false",
    "null",
    "undefined",
    "TRUE",
    "udf",
    "UDF",
    "LEFT",
    "RANK",
    "c",
    "p",
    "t",
    "root",
    "x",
    "_a1",
    "@p",
    "@",
    "1",
    "0",
    "-1",
    "1.5",
    ".5",
    "1e3",
    "1e",
    "0x1F",
    "0x",
    "'s'",
    "\"d\"",
    "'",
    "\"",
    "'\\n'",
    "'\\q'",
    "\"\\u12\"",
    "'\\uD800'",
    "*",
    ",",
    ".",
    ":",
    ";",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "?",
    "??",
    "+",
    "-",
    "/",
    "%",
    "||",
    "|",
    "&",
    "&&",
    "^",
    "~",
    "<<",
    ">>",
    ">>>",
    "=",
    "==",
    "!=",
    "<>",
    "!",
    "<",
    "<=",
    ">",
    ">=",
    "--",
    "\n",
    " ",
    "\t",
    "\r\n",
    "$",
    "é",
    "😀",
    "`",
    "#",
    "\\",
    "COUNT(1)",
    "ABS(",
    "CONTAINS(",
    "FOO(",
    "c.a",
    "c[0]",
    "c['k']",
    "(SELECT VALUE 1)",
];

/// Words swapped for a word of a seed: mostly keeps the syntax and exercises the checks
/// (unbound names, unknown functions, misplaced aggregates).
const WORDS: &[&str] = &[
    "c",
    "p",
    "t",
    "x",
    "root",
    "id",
    "name",
    "COUNT",
    "SUM",
    "MAX",
    "ABS",
    "CONTAINS",
    "CONCAT",
    "FOO",
    "LOWER",
    "udf",
    "true",
    "TRUE",
    "null",
    "undefined",
    "Infinity",
    "value",
    "a",
    "b",
    "tags",
    "items",
];

/// Character boundaries of `s`, including its end.
fn boundaries(s: &str) -> Vec<usize> {
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .collect()
}

/// One random edit of `s` (always valid UTF-8).
fn mutate(rng: &mut Rng, s: &str) -> String {
    let b = boundaries(s);
    let at = b[rng.index(b.len())];
    let to = b[rng.index(b.len())];
    let (lo, hi) = (at.min(to), at.max(to));
    match rng.index(9) {
        // Replace a word by another word (twice as likely as the other edits).
        7 | 8 => {
            let words: Vec<(usize, &str)> = s
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(|w| (w.as_ptr() as usize - s.as_ptr() as usize, w))
                .collect();
            if words.is_empty() {
                return s.to_string();
            }
            let (start, w) = words[rng.index(words.len())];
            format!(
                "{}{}{}",
                &s[..start],
                rng.pick(WORDS),
                &s[start + w.len()..]
            )
        }
        // Delete a range.
        0 => format!("{}{}", &s[..lo], &s[hi..]),
        // Insert a vocabulary fragment.
        1 => format!("{}{}{}", &s[..at], rng.pick(VOCAB), &s[at..]),
        // Insert a random character (ASCII mostly, sometimes anything).
        2 => {
            let c = if rng.index(4) == 0 {
                char::from_u32(rng.index(0x3_0000) as u32).unwrap_or('?')
            } else {
                char::from(rng.index(128) as u8)
            };
            format!("{}{c}{}", &s[..at], &s[at..])
        }
        // Swap two characters.
        3 => {
            let mut chars: Vec<char> = s.chars().collect();
            if chars.len() > 1 {
                let i = rng.index(chars.len());
                let j = rng.index(chars.len());
                chars.swap(i, j);
            }
            chars.into_iter().collect()
        }
        // Truncate.
        4 => s[..at].to_string(),
        // Duplicate a range.
        5 => format!("{}{}{}", &s[..hi], &s[lo..hi], &s[hi..]),
        // Replace a range with a vocabulary fragment.
        _ => format!("{}{}{}", &s[..lo], rng.pick(VOCAB), &s[hi..]),
    }
}

/// The deterministic case number `i`.
fn case(i: usize) -> String {
    let mut rng = Rng(0x5EED_0000 ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
    match i % 10 {
        // A random token soup, sometimes starting like a query.
        0 | 1 => {
            let mut s = String::new();
            if rng.index(2) == 0 {
                s.push_str("SELECT ");
            }
            for _ in 0..rng.index(30) {
                s.push_str(rng.pick(VOCAB));
                if rng.index(3) != 0 {
                    s.push(' ');
                }
            }
            s
        }
        // Deep or long structures around the limits.
        2 if i % 20 == 2 => {
            let n = rng.index(400);
            let (open, close) = [
                ("(", ")"),
                ("[", "]"),
                ("{a:", "}"),
                ("(SELECT VALUE ", ")"),
                ("ABS(", ")"),
                ("NOT ", ""),
                ("- ", ""),
                ("", ".a"),
                ("", " + 1"),
                ("", " OR c.x"),
            ][rng.index(10)];
            let mut s = format!("SELECT VALUE {}c{}", open.repeat(n), close.repeat(n));
            if rng.index(2) == 0 {
                s = mutate(&mut rng, &s);
            }
            s.push_str(" FROM c");
            s
        }
        // One to four mutations of a seed, mostly one.
        _ => {
            let mut s = rng.pick(SEEDS).to_string();
            let edits = [1, 1, 1, 2, 3, 4][rng.index(6)];
            for _ in 0..edits {
                s = mutate(&mut rng, &s);
            }
            s
        }
    }
}

/// Ok, or a 400 positioned inside `text` (a column just past the end of a line is allowed:
/// that is where an unexpected end of the query is reported).
fn verify(text: &str) -> Result<(), String> {
    let result = parse(text).and_then(|q| check(&q));
    let Err(e) = result else {
        return Ok(());
    };
    if e.status != 400 {
        return Err(format!("status {} for {text:?}: {e}", e.status));
    }
    let (Some(line), Some(column)) = (e.line, e.column) else {
        return Err(format!("no position for {text:?}: {e}"));
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let Some(content) = (line as usize).checked_sub(1).and_then(|l| lines.get(l)) else {
        return Err(format!("line {line} outside {text:?}: {e}"));
    };
    let width = content.chars().count() + 1;
    if column == 0 || column as usize > width {
        return Err(format!(
            "column {column} outside line {line} (width {width}) of {text:?}: {e}"
        ));
    }
    if e.message.is_empty() {
        return Err(format!("empty message for {text:?}"));
    }
    Ok(())
}

/// Cases per run; `QUERY_FUZZ_CASES` overrides it for longer runs.
const CASES: usize = 40_000;

fn case_count() -> usize {
    std::env::var("QUERY_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES)
}

#[test]
fn random_inputs_never_panic_hang_or_misplace_errors() {
    let progress = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = mpsc::channel();
    let worker_progress = Arc::clone(&progress);
    let cases = case_count();
    // The default test-thread stack: deep inputs must be rejected before they overflow it.
    let worker = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let mut failures = Vec::new();
            let mut parsed = 0;
            for i in 0..cases {
                worker_progress.store(i, Ordering::Relaxed);
                let text = case(i);
                if let Err(message) = verify(&text) {
                    failures.push(format!("case {i}: {message}"));
                }
                if parse(&text).is_ok() {
                    parsed += 1;
                }
            }
            let _ = done_tx.send(());
            (failures, parsed)
        })
        .expect("spawn the fuzz worker");
    if done_rx.recv_timeout(Duration::from_secs(120)).is_err() {
        let i = progress.load(Ordering::Relaxed);
        panic!("the parser hung or crashed on case {i}: {:?}", case(i));
    }
    let (failures, parsed) = worker.join().expect("the fuzz worker panicked");
    assert!(
        failures.is_empty(),
        "{} bad results, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    // A fair share of the inputs still parses, so the semantic checks get exercised too.
    assert!(parsed > cases / 10, "only {parsed} inputs parsed");
}

#[test]
fn seeds_are_valid() {
    for seed in SEEDS {
        let q = parse(seed).unwrap_or_else(|e| panic!("{seed:?}: {e}"));
        // UDF calls check too: whether the container has them is decided when it runs.
        check(&q).unwrap_or_else(|e| panic!("{seed:?}: {e}"));
    }
}

#[test]
fn every_prefix_of_every_seed() {
    for seed in SEEDS {
        for end in boundaries(seed) {
            let text = &seed[..end];
            if let Err(message) = verify(text) {
                panic!("{message}");
            }
        }
    }
}
