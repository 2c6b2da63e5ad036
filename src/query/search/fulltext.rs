//! Full-text search building blocks: the English analyzer, BM25 scoring and reciprocal rank
//! fusion, as pure functions the query functions (`functions::search`) and the executor share.
//!
//! Sources: articles/cosmos-db/gen-ai/full-text-search.md and the FullTextContains*,
//! FullTextScore, RRF and ORDER BY RANK pages under articles/cosmos-db/nosql/query/ in
//! MicrosoftDocs/azure-databases-docs. The service names its techniques (tokenization, stop
//! word removal, stemming, BM25, RRF) but not their parameters; where it is silent this module
//! uses the standard choices (Lucene's English stop set and BM25 defaults, the Snowball English
//! stemmer, the RRF paper's k = 60) and says so next to each.
//!
//! Only English (`en-us`) is supported by the service's full-text policy, so there is one
//! analyzer and no language parameter.

use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Lucene's English stop word set (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`), sorted for
/// binary search. The service does not publish its list; this is the common default.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

fn is_apostrophe(c: char) -> bool {
    // The typographic apostrophe is as common as the ASCII one in pasted text.
    matches!(c, '\'' | '\u{2019}')
}

/// Splits `text` into raw words: runs of letters and digits (Unicode-aware). An apostrophe
/// between two letters stays inside the word ("don't", "o'clock"), and a '.' or ',' between
/// two digits too ("3.14", "1,000"), as Unicode word segmentation (UAX #29) keeps them; every
/// other character separates words.
fn words(text: &str, mut f: impl FnMut(&str)) {
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let joins = |inner: fn(char) -> bool| {
            start.is_some() && prev.is_some_and(inner) && next.is_some_and(inner)
        };
        let part = c.is_alphanumeric()
            || (is_apostrophe(c) && joins(char::is_alphabetic))
            || (matches!(c, '.' | ',') && joins(|d| d.is_numeric()));
        match (part, start) {
            (true, None) => start = Some(at),
            (false, Some(s)) => {
                f(&text[s..at]);
                start = None;
            }
            _ => {}
        }
        prev = Some(c);
    }
    if let Some(s) = start {
        f(&text[s..]);
    }
}

/// One word as the index would store it, or `None` for a stop word: lower-cased, the
/// possessive "'s" dropped (Lucene's EnglishPossessiveFilter runs before its stop filter, so
/// "it's" is the stop word "it"), then stemmed with Snowball English ("bicycles" → "bicycl",
/// "running" → "run").
fn term(word: &str) -> Option<String> {
    let mut w: String = word
        .chars()
        .map(|c| if is_apostrophe(c) { '\'' } else { c })
        .collect::<String>()
        .to_lowercase();
    if w.ends_with("'s") {
        w.truncate(w.len() - 2);
    }
    if w.is_empty() || is_stop_word(&w) {
        return None;
    }
    Some(stemmer().stem(&w).into_owned())
}

/// Distinct words seen on this thread and their terms (`None` for stop words). Stemming is
/// the analyzer's cost and a corpus repeats few distinct words, so a scan of a million texts
/// stems each word once. Bounded: cleared when it grows past this many words.
const TERM_CACHE_WORDS: usize = 1 << 18;

/// Words are short: a cheap hash.
type TermCache = HashMap<
    Box<str>,
    Option<Box<str>>,
    std::hash::BuildHasherDefault<crate::store::index::FoldHasher>,
>;

thread_local! {
    static TERMS: std::cell::RefCell<TermCache> = std::cell::RefCell::new(TermCache::default());
}

/// Calls `f` with each term of `text` in order, duplicates kept: the analyzer without
/// allocating per word.
pub fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    for_each_term_at(text, |_, t| f(t));
}

/// Like [`for_each_term`], with each term's position: the index of its word among all the
/// words of `text`. Stop words are dropped but keep their places, as Lucene's stop filter
/// keeps position increments, so a phrase does not match across a removed word.
pub fn for_each_term_at(text: &str, mut f: impl FnMut(usize, &str)) {
    TERMS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let mut position = 0;
        words(text, |word| {
            let at = position;
            position += 1;
            if let Some(t) = cache.get(word) {
                if let Some(t) = t {
                    f(at, t);
                }
                return;
            }
            if cache.len() >= TERM_CACHE_WORDS {
                cache.clear();
            }
            let t = term(word).map(String::into_boxed_str);
            if let Some(t) = &t {
                f(at, t);
            }
            cache.insert(word.into(), t);
        })
    })
}

/// The English analyzer: the terms of `text` in order, duplicates kept (BM25 counts them).
pub fn analyze(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_string()));
    out
}

/// The number of terms in `text`, and into `tf` the occurrences of each of `query_terms`.
fn term_counts(text: &str, query_terms: &[String], tf: &mut Vec<u32>) -> u64 {
    tf.clear();
    tf.resize(query_terms.len(), 0);
    let mut len = 0;
    for_each_term(text, |t| {
        len += 1;
        if let Some(i) = query_terms.iter().position(|q| q == t) {
            tf[i] += 1;
        }
    });
    len
}

/// The distinct terms of several search strings, in first-seen order (each string analyzed
/// like a document; a query term repeated counts once in BM25).
pub fn query_terms<'a>(strings: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in strings {
        for t in analyze(s) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// BM25 term-frequency saturation. The docs only say "BM25"; 1.2 is Lucene's default.
pub const BM25_K1: f64 = 1.2;
/// BM25 document-length normalization; Lucene's default.
pub const BM25_B: f64 = 0.75;

/// Collection statistics BM25 needs, accumulated per document and mergeable across physical
/// partitions (the service scores with statistics of the whole container).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorpusStats {
    documents: u64,
    total_terms: u64,
    document_frequency: HashMap<String, u64>,
}

impl CorpusStats {
    /// Counts one document given its analyzed terms (the term-list model the tests check
    /// [`Self::add_text`] against).
    #[cfg(test)]
    pub fn add_document(&mut self, terms: &[String]) {
        self.documents += 1;
        self.total_terms += terms.len() as u64;
        for t in distinct(terms) {
            *self.document_frequency.entry(t.clone()).or_insert(0) += 1;
        }
    }

    /// Counts one document from its text, recording document frequencies of `query_terms`
    /// only (all that scoring them needs): one pass over the text, no term list built.
    pub fn add_text(&mut self, text: &str, query_terms: &[String]) {
        let mut tf = Vec::new();
        self.total_terms += term_counts(text, query_terms, &mut tf);
        self.documents += 1;
        for (q, n) in query_terms.iter().zip(&tf) {
            if *n == 0 {
                continue;
            }
            match self.document_frequency.get_mut(q.as_str()) {
                Some(df) => *df += 1,
                None => {
                    self.document_frequency.insert(q.clone(), 1);
                }
            }
        }
    }

    /// The BM25 score of a document given as text; `query_terms` distinct.
    pub fn score_text(&self, text: &str, query_terms: &[String]) -> f64 {
        let mut tf = Vec::new();
        let len = term_counts(text, query_terms, &mut tf);
        self.score_counts(
            len,
            query_terms.iter().zip(tf.iter().map(|n| f64::from(*n))),
        )
    }

    #[cfg(test)]
    pub fn documents(&self) -> u64 {
        self.documents
    }

    #[cfg(test)]
    pub fn total_terms(&self) -> u64 {
        self.total_terms
    }

    /// How many documents contain `term` (an analyzed term).
    pub fn document_frequency(&self, term: &str) -> u64 {
        self.document_frequency.get(term).copied().unwrap_or(0)
    }

    /// Mean document length in terms; 0 for an empty corpus.
    pub fn average_length(&self) -> f64 {
        if self.documents == 0 {
            0.0
        } else {
            self.total_terms as f64 / self.documents as f64
        }
    }

    /// Lucene's non-negative BM25 IDF, `ln(1 + (N - n + 0.5) / (n + 0.5))`. `n` is capped at
    /// `N` so statistics that lag behind the documents cannot make it negative.
    pub fn idf(&self, term: &str) -> f64 {
        let big_n = self.documents as f64;
        let n = self.document_frequency(term).min(self.documents) as f64;
        (1.0 + (big_n - n + 0.5) / (n + 0.5)).ln()
    }

    /// BM25 score of one document (its analyzed terms) for the query terms, summed over the
    /// distinct query terms the document contains; 0 when none matches or the corpus is empty.
    #[cfg(test)]
    pub fn score(&self, doc_terms: &[String], query_terms: &[String]) -> f64 {
        let counts =
            distinct(query_terms).map(|q| (q, doc_terms.iter().filter(|t| *t == q).count() as f64));
        self.score_counts(doc_terms.len() as u64, counts)
    }

    /// BM25 of a document of `len` terms with these (query term, occurrences) pairs.
    fn score_counts<'q>(&self, len: u64, counts: impl Iterator<Item = (&'q String, f64)>) -> f64 {
        let avgdl = self.average_length();
        if avgdl <= 0.0 {
            return 0.0;
        }
        let norm = 1.0 - BM25_B + BM25_B * len as f64 / avgdl;
        counts
            .map(|(q, tf)| {
                if tf == 0.0 {
                    0.0
                } else {
                    self.idf(q) * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * norm)
                }
            })
            .sum()
    }
}

/// The distinct elements of `terms` in first-seen order (term lists are short; no hashing).
#[cfg(test)]
fn distinct(terms: &[String]) -> impl Iterator<Item = &String> {
    terms
        .iter()
        .enumerate()
        .filter(|(i, t)| !terms[..*i].contains(t))
        .map(|(_, t)| t)
}

/// The RRF rank constant. The docs do not give it; 60 is the value of the original paper
/// (Cormack et al., 2009) and the common default elsewhere.
pub const RRF_K: f64 = 60.0;

/// Reciprocal rank fusion of one document's 1-based ranks under each scoring function:
/// `Σ wᵢ / (k + rankᵢ)`. A missing rank (the document is not in that function's results)
/// contributes 0; a weight missing from a shorter `weights` counts as 1 (the checker is the
/// place to reject a weights array of the wrong length).
pub fn rrf(ranks: &[Option<usize>], weights: Option<&[f64]>) -> f64 {
    ranks
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let r = (*r)?;
            let w = weights.and_then(|ws| ws.get(i)).copied().unwrap_or(1.0);
            Some(w / (RRF_K + r as f64))
        })
        .sum()
}

/// The analyzed terms of one FullTextScore call and the corpus they are scored against.
#[derive(Debug, Default, Clone)]
pub struct FullTextQuery {
    pub terms: Vec<String>,
    pub stats: CorpusStats,
}

/// Per FullTextScore call of the query (keyed by [`aggregate_key`](crate::query::eval::expr::aggregate_key) of the call).
pub type FullTextScores = HashMap<usize, FullTextQuery>;

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(ts: &[&str]) -> Vec<String> {
        ts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn stop_words_are_sorted_and_distinct() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn analyzer_drops_stop_words() {
        assert_eq!(analyze("the bicycle and a car"), terms(&["bicycl", "car"]));
        assert!(analyze("it is not THE one or that").contains(&"one".to_string()));
        assert_eq!(analyze("to be or not to be"), Vec::<String>::new());
    }

    #[test]
    fn analyzer_stems() {
        assert_eq!(analyze("bicycles"), terms(&["bicycl"]));
        assert_eq!(analyze("bicycle"), terms(&["bicycl"]));
        assert_eq!(analyze("running runs"), terms(&["run", "run"]));
    }

    #[test]
    fn analyzer_folds_case() {
        assert_eq!(analyze("Red RED red"), terms(&["red", "red", "red"]));
        assert_eq!(analyze("ÉCOLE"), analyze("école"));
    }

    #[test]
    fn analyzer_splits_on_punctuation() {
        assert_eq!(
            analyze("red-bicycle,blue;car!(fast)"),
            terms(&["red", "bicycl", "blue", "car", "fast"])
        );
        assert_eq!(analyze("  \t\n..."), Vec::<String>::new());
        assert_eq!(analyze(""), Vec::<String>::new());
    }

    #[test]
    fn analyzer_handles_apostrophes_and_numbers() {
        // Possessive removed, then "it" is a stop word.
        assert_eq!(analyze("it's"), Vec::<String>::new());
        assert_eq!(analyze("John's bikes"), analyze("john bike"));
        assert_eq!(analyze("John\u{2019}s"), analyze("john"));
        assert_eq!(analyze("don't"), terms(&["don't"]));
        assert_eq!(analyze("'quoted'"), terms(&["quot"]));
        assert_eq!(
            analyze("pi is 3.14, not 1,000."),
            terms(&["pi", "3.14", "1,000"])
        );
        assert_eq!(analyze("end.Start"), terms(&["end", "start"]));
    }

    #[test]
    fn analyzer_accepts_any_unicode() {
        for s in [
            "日本語のテキスト",
            "naïve café",
            "👍🏽 emoji",
            "\u{0}\u{ffff}",
            "ǅ'",
        ] {
            let _ = analyze(s);
        }
        assert_eq!(analyze("naïve café"), terms(&["naïv", "café"]));
    }

    #[test]
    fn query_terms_are_distinct() {
        assert_eq!(
            query_terms(["red bicycles", "bicycle", "the"]),
            terms(&["red", "bicycl"])
        );
    }

    /// d1 = [bike, red], d2 = [bike, blue, bike], d3 = [car]: N = 3, avgdl = 2.
    fn tiny_corpus() -> (CorpusStats, [Vec<String>; 3]) {
        let docs = [
            terms(&["bike", "red"]),
            terms(&["bike", "blue", "bike"]),
            terms(&["car"]),
        ];
        let mut stats = CorpusStats::default();
        for d in &docs {
            stats.add_document(d);
        }
        (stats, docs)
    }

    #[test]
    fn bm25_hand_computed() {
        let (stats, [d1, d2, _]) = tiny_corpus();
        assert_eq!(stats.documents(), 3);
        assert_eq!(stats.total_terms(), 6);
        assert_eq!(stats.document_frequency("bike"), 2);
        assert_eq!(stats.average_length(), 2.0);
        // d1 has average length, so the tf part is 1 * 2.2 / (1 + 1.2) = 1: score = idf.
        let red = (1.0f64 + 2.5 / 1.5).ln();
        assert!((stats.score(&d1, &terms(&["red"])) - red).abs() < 1e-12);
        assert!((red - 0.980_829_253_011_726).abs() < 1e-12);
        // d2: tf 2, |d| 3: norm = 0.25 + 0.75 * 1.5 = 1.375.
        let bike = (1.0f64 + 1.5 / 2.5).ln() * 2.0 * 2.2 / (2.0 + 1.2 * 1.375);
        assert!((stats.score(&d2, &terms(&["bike"])) - bike).abs() < 1e-12);
        // Both terms on d1: the sum of the per-term scores.
        let d1_bike = (1.0f64 + 1.5 / 2.5).ln();
        let both = stats.score(&d1, &terms(&["bike", "red"]));
        assert!((both - (red + d1_bike)).abs() < 1e-12);
    }

    #[test]
    fn bm25_more_occurrences_score_higher() {
        let docs = [
            analyze("bicycle shop downtown"),
            analyze("bicycle bicycle shop"),
            analyze("car wash station"),
        ];
        let mut stats = CorpusStats::default();
        docs.iter().for_each(|d| stats.add_document(d));
        let q = query_terms(["bicycles"]);
        assert!(stats.score(&docs[1], &q) > stats.score(&docs[0], &q));
    }

    #[test]
    fn bm25_rarer_term_weighs_more() {
        let (stats, _) = tiny_corpus();
        assert!(stats.idf("red") > stats.idf("bike"));
        // Same length and tf: only the IDF differs.
        let doc = terms(&["bike", "red"]);
        assert!(stats.score(&doc, &terms(&["red"])) > stats.score(&doc, &terms(&["bike"])));
    }

    #[test]
    fn bm25_zero_without_a_match_or_corpus() {
        let (stats, [d1, _, d3]) = tiny_corpus();
        assert_eq!(stats.score(&d3, &terms(&["bike", "red"])), 0.0);
        assert_eq!(stats.score(&d1, &[]), 0.0);
        assert_eq!(CorpusStats::default().score(&d1, &terms(&["bike"])), 0.0);
    }

    #[test]
    fn bm25_repeated_query_terms_count_once() {
        let (stats, [d1, ..]) = tiny_corpus();
        assert_eq!(
            stats.score(&d1, &terms(&["red", "red", "red"])),
            stats.score(&d1, &terms(&["red"]))
        );
    }

    #[test]
    fn bm25_idf_is_never_negative() {
        let mut stats = CorpusStats::default();
        for _ in 0..10 {
            stats.add_document(&terms(&["everywhere"]));
        }
        assert!(stats.idf("everywhere") > 0.0);
        // Statistics that claim more documents with the term than documents at all.
        let mut lagging = stats.clone();
        lagging
            .document_frequency
            .insert("everywhere".to_string(), 15);
        assert!(lagging.idf("everywhere") > 0.0);
    }

    #[test]
    fn counting_texts_agrees_with_analyzed_term_lists() {
        let texts = [
            "Red bicycles and a red skateboard",
            "The mountain bicycle climbs the mountain",
            "A blue skateboard",
            "",
            "Bicycles, bicycles: BICYCLES!",
        ];
        let query = query_terms(["bicycle", "red mountain"]);
        let mut from_lists = CorpusStats::default();
        let mut from_texts = CorpusStats::default();
        for t in texts {
            from_lists.add_document(&analyze(t));
            from_texts.add_text(t, &query);
        }
        assert_eq!(from_texts.documents(), from_lists.documents());
        assert_eq!(from_texts.total_terms(), from_lists.total_terms());
        for q in &query {
            assert_eq!(
                from_texts.document_frequency(q),
                from_lists.document_frequency(q),
                "{q}"
            );
        }
        for t in texts {
            let a = from_texts.score_text(t, &query);
            let b = from_lists.score(&analyze(t), &query);
            assert!((a - b).abs() < 1e-12, "{t}: {a} vs {b}");
        }
        // The cache gives the same terms the second time a word is seen.
        assert_eq!(analyze("Running RUNNING running"), ["run", "run", "run"]);
    }

    #[test]
    fn rrf_values() {
        assert_eq!(rrf(&[Some(1)], None), 1.0 / 61.0);
        assert_eq!(rrf(&[Some(1), Some(2)], None), 1.0 / 61.0 + 1.0 / 62.0);
        assert_eq!(rrf(&[None, Some(3)], None), 1.0 / 63.0);
        assert_eq!(rrf(&[None, None], None), 0.0);
        assert_eq!(rrf(&[], None), 0.0);
        assert_eq!(
            rrf(&[Some(1), Some(2)], Some(&[2.0, 1.0])),
            2.0 / 61.0 + 1.0 / 62.0
        );
        // A missing weight counts as 1.
        assert_eq!(
            rrf(&[Some(1), Some(2)], Some(&[0.5])),
            0.5 / 61.0 + 1.0 / 62.0
        );
        // A better rank always contributes more.
        assert!(rrf(&[Some(1)], None) > rrf(&[Some(2)], None));
    }
}
