//! The palette's fuzzy matcher: entries sealed into chunks as they stream in, a pattern
//! matched by background threads chunk by chunk, and the best matches so far published
//! after every chunk.
//!
//! nucleo's `Nucleo` publishes a pass only when it has finished, after sorting every match;
//! over ten million ids that is seconds after a keystroke. Here the first results are
//! ready one chunk (a few milliseconds) after it, and the list improves as the pass goes
//! on. Scoring is nucleo's own (`nucleo::pattern::Pattern` on the same `Utf32String`
//! haystacks), and so is the order: higher score, then shorter text, then the earlier
//! entry. The list a finished pass shows is therefore a complete match's first rows.
//!
//! A pattern that only grew (a character typed at the end) rescans just the entries the
//! previous pattern matched, chunk by chunk, as far as that pass got.

use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use nucleo::pattern::{CaseMatching, Normalization, Pattern};
use nucleo::{Config, Utf32String};

/// Entries per sealed chunk: the unit of work and of publishing, so the first results
/// come about a chunk's matching after a keystroke (1–5 ms for 4,096 ids).
pub const CHUNK: usize = 4_096;
/// Matching threads. Two keep a pass short on a small machine; the UI has its own thread.
const THREADS: usize = 2;

/// One sealed run of entries, with their haystacks and the index of the first one.
struct Chunk<T> {
    base: u32,
    entries: Vec<T>,
    haystacks: Vec<Utf32String>,
}

/// Everything injected so far, in sealed chunks.
struct Entries<T> {
    chunks: RwLock<Vec<Arc<Chunk<T>>>>,
    /// Live injectors: while one is, more entries may come.
    injectors: AtomicUsize,
    notify: Arc<dyn Fn() + Send + Sync>,
}

impl<T> Entries<T> {
    fn chunks(&self) -> Vec<Arc<Chunk<T>>> {
        self.chunks
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Adds entries from any thread. Entries are buffered and sealed into a chunk when the
/// buffer is full, on [`Injector::flush`] and when the injector is dropped.
pub struct Injector<T: AsRef<str>> {
    entries: Arc<Entries<T>>,
    buffer: Vec<T>,
    haystacks: Vec<Utf32String>,
}

impl<T: AsRef<str>> Injector<T> {
    pub fn push(&mut self, entry: T) {
        self.haystacks.push(Utf32String::from(entry.as_ref()));
        self.buffer.push(entry);
        if self.buffer.len() >= CHUNK {
            self.flush();
        }
    }

    /// Makes what was pushed visible to the matcher.
    pub fn flush(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let entries = std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK));
        let haystacks = std::mem::replace(&mut self.haystacks, Vec::with_capacity(CHUNK));
        {
            let mut chunks = self
                .entries
                .chunks
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let base = chunks
                .last()
                .map_or(0, |c| c.base.saturating_add(c.entries.len() as u32));
            chunks.push(Arc::new(Chunk {
                base,
                entries,
                haystacks,
            }));
        }
        (self.entries.notify)();
    }
}

impl<T: AsRef<str>> Drop for Injector<T> {
    fn drop(&mut self) {
        self.flush();
        self.entries.injectors.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A match's rank; the smaller ranks first (nucleo's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ranked {
    score: u32,
    len: u32,
    index: u32,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> std::cmp::Ordering {
        other
            .score
            .cmp(&self.score)
            .then(self.len.cmp(&other.len))
            .then(self.index.cmp(&other.index))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// What the passes of the current pattern have found so far.
#[derive(Default)]
struct Progress {
    generation: u64,
    /// The best matches so far, best first, at most `shown`.
    top: Vec<Ranked>,
    matched: u32,
    /// Entries the passes have looked at (a chunk counts when it is done).
    searched: u32,
    /// Haystacks scored: fewer than `searched` when a grown pattern rescans only the
    /// previous pattern's matches.
    scored: u64,
    /// Per chunk, the offsets the pattern matched; `None` until the chunk is done.
    found: Vec<Option<Arc<[u32]>>>,
    /// Bumped at every publication.
    version: u64,
}

struct Shared {
    progress: Mutex<Progress>,
    published: Condvar,
    /// The current pattern's generation: workers of an older one stop.
    generation: AtomicU64,
    workers: AtomicUsize,
    shown: usize,
    /// Chunks the workers may still start (`None`: any number); taken with the chunk, so
    /// chunks start in order. Only tests and benchmarks limit it ([`Matcher::pace`]).
    allowance: Mutex<Option<usize>>,
    allowed: Condvar,
    /// Chunks started and not yet published.
    busy: AtomicUsize,
}

impl Shared {
    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next chunk of `job` for a worker, once the allowance lets it start one; `None`
    /// when the job is done or its pattern was replaced.
    fn claim<'j, T>(&self, job: &'j Job<T>) -> Option<&'j Work<T>> {
        let mut allowance = self
            .allowance
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        loop {
            if self.generation.load(Ordering::Acquire) != job.generation
                || job.next.load(Ordering::Acquire) >= job.work.len()
            {
                return None;
            }
            match *allowance {
                Some(0) => {
                    allowance = self
                        .allowed
                        .wait(allowance)
                        .unwrap_or_else(PoisonError::into_inner)
                }
                Some(n) => {
                    let work = job.work.get(job.next.fetch_add(1, Ordering::AcqRel))?;
                    *allowance = Some(n - 1);
                    self.busy.fetch_add(1, Ordering::AcqRel);
                    return Some(work);
                }
                None => {
                    let work = job.work.get(job.next.fetch_add(1, Ordering::AcqRel))?;
                    self.busy.fetch_add(1, Ordering::AcqRel);
                    return Some(work);
                }
            }
        }
    }

    /// Moves to a new generation and wakes workers waiting for an allowance, so that
    /// those of the old one stop.
    fn next_generation(&self, generation: u64) {
        self.generation.store(generation, Ordering::Release);
        let _allowance = self
            .allowance
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.allowed.notify_all();
    }
}

/// A chunk to match, and which of its entries can match (`None`: all of them).
struct Work<T> {
    slot: usize,
    chunk: Arc<Chunk<T>>,
    candidates: Option<Arc<[u32]>>,
}

/// One pass: the chunks a pattern still has to look at, claimed by the workers in order.
struct Job<T> {
    generation: u64,
    pattern: Pattern,
    work: Vec<Work<T>>,
    next: AtomicUsize,
}

/// How far matching has got, and the best matches found so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View<T> {
    /// The list to show, best first; `None` when it is the one the last tick gave.
    pub matches: Option<Vec<T>>,
    pub matched: u32,
    pub total: u32,
    pub searched: u32,
    /// Entries scored for this pattern: after an appended character, only the previous
    /// pattern's matches are.
    pub scored: u64,
    /// Matching (or injecting) goes on: the list may still change.
    pub running: bool,
}

pub struct Matcher<T: AsRef<str>> {
    entries: Arc<Entries<T>>,
    shared: Arc<Shared>,
    pattern: Pattern,
    /// The chunks given to the current pattern's passes, as those passes saw them.
    chunks: Vec<Arc<Chunk<T>>>,
    /// The publication last read by [`Matcher::tick`].
    seen: u64,
}

impl<T: AsRef<str> + Clone + Send + Sync + 'static> Matcher<T> {
    /// A matcher that calls `notify` (from any thread) when it has something new to show.
    pub fn new(shown: usize, notify: Arc<dyn Fn() + Send + Sync>) -> Matcher<T> {
        Matcher {
            entries: Arc::new(Entries {
                chunks: RwLock::new(Vec::new()),
                injectors: AtomicUsize::new(0),
                notify,
            }),
            shared: Arc::new(Shared {
                progress: Mutex::new(Progress::default()),
                published: Condvar::new(),
                generation: AtomicU64::new(0),
                workers: AtomicUsize::new(0),
                shown,
                allowance: Mutex::new(None),
                allowed: Condvar::new(),
                busy: AtomicUsize::new(0),
            }),
            pattern: Pattern::default(),
            chunks: Vec::new(),
            seen: u64::MAX,
        }
    }

    pub fn injector(&self) -> Injector<T> {
        self.entries.injectors.fetch_add(1, Ordering::AcqRel);
        Injector {
            entries: self.entries.clone(),
            buffer: Vec::new(),
            haystacks: Vec::new(),
        }
    }

    /// Forgets every entry; injectors handed out before push into nothing.
    pub fn restart(&mut self) {
        let notify = self.entries.notify.clone();
        self.entries = Arc::new(Entries {
            chunks: RwLock::new(Vec::new()),
            injectors: AtomicUsize::new(0),
            notify,
        });
        self.pattern = Pattern::default();
        self.chunks.clear();
        self.new_generation(0);
    }

    /// Matches `text` from now on. `appended` promises that the previous pattern's text is
    /// a prefix of `text`, so only what the previous pattern matched can match (nucleo's
    /// rule: not after a negated atom, whose meaning a longer text changes).
    pub fn set_pattern(&mut self, text: &str, appended: bool) {
        let narrows = appended && self.pattern.atoms.last().is_some_and(|a| !a.negative);
        self.pattern
            .reparse(text, CaseMatching::Smart, Normalization::Smart);
        self.chunks = self.entries.chunks();
        let previous = self.new_generation(self.chunks.len());
        let work = self
            .chunks
            .iter()
            .enumerate()
            .map(|(slot, chunk)| Work {
                slot,
                chunk: chunk.clone(),
                candidates: if narrows {
                    previous.get(slot).cloned().flatten()
                } else {
                    None
                },
            })
            .collect();
        self.start(work);
    }

    /// Starts a new generation over `chunks` chunks; returns the previous one's findings.
    fn new_generation(&mut self, chunks: usize) -> Vec<Option<Arc<[u32]>>> {
        let mut p = self.shared.progress();
        let generation = p.generation + 1;
        self.shared.next_generation(generation);
        let previous = std::mem::replace(&mut p.found, vec![None; chunks]);
        p.generation = generation;
        p.top.clear();
        p.matched = 0;
        p.searched = 0;
        p.scored = 0;
        p.version += 1;
        previous
    }

    /// Hands `work` to the matching threads.
    fn start(&mut self, work: Vec<Work<T>>) {
        if work.is_empty() {
            return;
        }
        let job = Arc::new(Job {
            generation: self.shared.generation.load(Ordering::Acquire),
            pattern: self.pattern.clone(),
            work,
            next: AtomicUsize::new(0),
        });
        for _ in 0..THREADS.min(job.work.len()) {
            self.shared.workers.fetch_add(1, Ordering::AcqRel);
            let (for_thread, shared) = (job.clone(), self.shared.clone());
            let notify = self.entries.notify.clone();
            let spawned = std::thread::Builder::new()
                .name("palette matcher".into())
                .spawn(move || run(&for_thread, &shared, &*notify));
            if spawned.is_err() {
                // No thread to be had: the pass runs here rather than not at all.
                run(&job, &self.shared, &*self.entries.notify);
            }
        }
    }

    /// Starts matching chunks sealed since the pattern's passes began (the pattern
    /// unchanged), once those passes are done.
    fn pick_up_new_chunks(&mut self) {
        if self.shared.workers.load(Ordering::Acquire) > 0 {
            return;
        }
        let chunks = self.entries.chunks();
        if chunks.len() <= self.chunks.len() {
            return;
        }
        let first = self.chunks.len();
        self.chunks = chunks;
        self.shared.progress().found.resize(self.chunks.len(), None);
        let work = self.chunks[first..]
            .iter()
            .enumerate()
            .map(|(i, chunk)| Work {
                slot: first + i,
                chunk: chunk.clone(),
                candidates: None,
            })
            .collect();
        self.start(work);
    }

    /// Waits up to `ms` for something new while matching goes on, then says how far
    /// matching has got, with the list to show when it changed since the last call.
    pub fn tick(&mut self, ms: u64) -> View<T> {
        self.pick_up_new_chunks();
        let (sealed, total) = {
            let chunks = self
                .entries
                .chunks
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            let total = chunks
                .last()
                .map_or(0, |c| c.base.saturating_add(c.entries.len() as u32));
            (chunks.len(), total)
        };
        let running = || {
            self.shared.workers.load(Ordering::Acquire) > 0
                || self.entries.injectors.load(Ordering::Acquire) > 0
                || sealed > self.chunks.len()
        };
        let mut p = self.shared.progress();
        if p.version == self.seen && ms > 0 && running() {
            p = self
                .shared
                .published
                .wait_timeout(p, Duration::from_millis(ms))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let matches = (p.version != self.seen)
            .then(|| p.top.iter().filter_map(|r| self.entry(r.index)).collect());
        self.seen = p.version;
        View {
            matches,
            matched: p.matched,
            total,
            searched: p.searched,
            scored: p.scored,
            running: running(),
        }
    }

    /// Lets the workers start at most `chunks` more chunks (`None`: no limit), so a test
    /// or a benchmark can look at the palette part way through a pass.
    #[cfg(any(test, feature = "test-harness"))]
    pub fn pace(&self, chunks: Option<usize>) {
        *self
            .shared
            .allowance
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = chunks;
        self.shared.allowed.notify_all();
    }

    /// Matching waits for `Matcher::pace` to allow more: every allowed chunk is published.
    pub fn held(&self) -> bool {
        let allowance = self
            .shared
            .allowance
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *allowance == Some(0) && self.shared.busy.load(Ordering::Acquire) == 0
    }

    /// The entry at a global index, among the chunks the passes were given.
    fn entry(&self, index: u32) -> Option<T> {
        let at = self.chunks.partition_point(|c| c.base <= index);
        let chunk = self.chunks.get(at.checked_sub(1)?)?;
        chunk.entries.get((index - chunk.base) as usize).cloned()
    }
}

impl<T: AsRef<str>> Drop for Matcher<T> {
    fn drop(&mut self) {
        // Workers of a dropped palette stop at their next chunk.
        let generation = self.shared.generation.load(Ordering::Acquire) + 1;
        self.shared.next_generation(generation);
    }
}

/// A matching thread: claims chunks of `job` in order until none is left or the pattern
/// changed, publishing each chunk's matches.
fn run<T: AsRef<str>>(job: &Job<T>, shared: &Shared, notify: &(dyn Fn() + Send + Sync)) {
    let mut matcher = nucleo::Matcher::new(Config::DEFAULT);
    let empty = job.pattern.atoms.is_empty();
    while let Some(work) = shared.claim(job) {
        let chunk = &work.chunk;
        let mut found = Vec::new();
        let mut best: BinaryHeap<Ranked> = BinaryHeap::with_capacity(shared.shown + 1);
        let mut consider = |offset: u32| {
            let Some(haystack) = chunk.haystacks.get(offset as usize) else {
                return;
            };
            let Some(score) = job.pattern.score(haystack.slice(..), &mut matcher) else {
                return;
            };
            found.push(offset);
            // An empty pattern lists entries in the order they came, as nucleo does.
            let len = if empty { 0 } else { haystack.len() as u32 };
            let ranked = Ranked {
                score,
                len,
                index: chunk.base + offset,
            };
            if best.len() < shared.shown {
                best.push(ranked);
            } else if best.peek().is_some_and(|worst| ranked < *worst) {
                best.pop();
                best.push(ranked);
            }
        };
        match &work.candidates {
            Some(offsets) => offsets.iter().for_each(|&o| consider(o)),
            None => (0..chunk.entries.len() as u32).for_each(&mut consider),
        }
        let mut p = shared.progress();
        shared.busy.fetch_sub(1, Ordering::AcqRel);
        if p.generation != job.generation {
            break;
        }
        p.matched += found.len() as u32;
        p.searched += chunk.entries.len() as u32;
        p.scored += work
            .candidates
            .as_ref()
            .map_or(chunk.entries.len(), |c| c.len()) as u64;
        if let Some(slot) = p.found.get_mut(work.slot) {
            *slot = Some(found.into());
        }
        let mut top = std::mem::take(&mut p.top);
        top.extend(best.into_sorted_vec());
        top.sort_unstable();
        top.truncate(shared.shown);
        p.top = top;
        p.version += 1;
        drop(p);
        shared.published.notify_all();
        notify();
    }
    shared.workers.fetch_sub(1, Ordering::AcqRel);
    shared.published.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Text(String);

    impl AsRef<str> for Text {
        fn as_ref(&self) -> &str {
            &self.0
        }
    }

    /// Ids in three shapes (so lengths and scores vary), over several chunks.
    fn texts(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| match i % 3 {
                0 => format!("order-{i:07} · bench/orders"),
                1 => format!("c-{} · key in bench/orders #{}", i % 997, i % 10),
                _ => format!("customer-{i} · shop/customers"),
            })
            .collect()
    }

    fn matcher(texts: &[String]) -> Matcher<Text> {
        let m = Matcher::new(200, Arc::new(|| {}));
        let mut injector = m.injector();
        for t in texts {
            injector.push(Text(t.clone()));
        }
        drop(injector);
        m
    }

    /// Ticks until matching is done (or held); the last list shown.
    fn settle(m: &mut Matcher<Text>, shown: &mut Vec<String>) -> View<Text> {
        loop {
            let held = m.held();
            let view = m.tick(10);
            if let Some(list) = &view.matches {
                *shown = list.iter().map(|t| t.0.clone()).collect();
            }
            if !view.running || held {
                return view;
            }
        }
    }

    /// nucleo's own complete match of `pattern`: its first 200 rows and the count.
    fn complete(texts: &[String], pattern: &str) -> (Vec<String>, u32) {
        let mut n = nucleo::Nucleo::new(Config::DEFAULT, Arc::new(|| {}), Some(1), 1);
        let injector = n.injector();
        for t in texts {
            injector.push(t.clone(), |t, cols| cols[0] = t.as_str().into());
        }
        n.pattern
            .reparse(0, pattern, CaseMatching::Smart, Normalization::Smart, false);
        while n.tick(10).running {}
        let snap = n.snapshot();
        let count = snap.matched_item_count();
        let rows = snap
            .matched_items(0..count.min(200))
            .map(|i| i.data.clone())
            .collect();
        (rows, count)
    }

    #[test]
    fn every_keystroke_ends_with_the_complete_matchs_rows() {
        let texts = texts(3 * CHUNK + 123);
        let mut m = matcher(&texts);
        let mut shown = Vec::new();
        let view = settle(&mut m, &mut shown);
        assert_eq!(view.total as usize, texts.len());
        // The empty pattern lists entries in the order they came.
        assert_eq!(shown, texts[..200].to_vec());
        // Typing (each appended), a backspace, a negation and a second word.
        let typed = [
            ("4", false),
            ("42", true),
            ("421", true),
            ("42", false),
            ("42 !cust", true),
            ("42 !custo", true),
            ("ord 7", false),
        ];
        for (pattern, appended) in typed {
            m.set_pattern(pattern, appended);
            let view = settle(&mut m, &mut shown);
            let (rows, count) = complete(&texts, pattern);
            assert_eq!(view.matched, count, "{pattern}");
            assert_eq!(view.searched as usize, texts.len(), "{pattern}");
            assert_eq!(shown, rows, "{pattern}");
        }
    }

    #[test]
    fn a_partial_result_is_shown_while_matching_goes_on() {
        let texts = texts(3 * CHUNK);
        let mut m = matcher(&texts);
        let mut shown = Vec::new();
        settle(&mut m, &mut shown);
        m.pace(Some(1));
        m.set_pattern("or", false);
        let view = settle(&mut m, &mut shown);
        assert!(view.running, "the pass is held after one chunk");
        assert_eq!(view.searched as usize, CHUNK);
        assert!(!shown.is_empty() && view.matched > 0);
        // Only the first chunk has been looked at, and its best rows are shown.
        let first_chunk = &texts[..CHUNK];
        assert!(shown.iter().all(|s| first_chunk.contains(s)), "{shown:?}");
        assert_eq!(complete(first_chunk, "or").0, shown);
        m.pace(None);
        let view = settle(&mut m, &mut shown);
        assert!(!view.running);
        assert_eq!(shown, complete(&texts, "or").0);
    }

    #[test]
    fn an_appended_character_rescans_only_the_previous_matches() {
        let texts = texts(2 * CHUNK);
        let mut m = matcher(&texts);
        let mut shown = Vec::new();
        m.set_pattern("9", false);
        let first = settle(&mut m, &mut shown);
        assert_eq!(first.scored as usize, texts.len());
        m.set_pattern("99", true);
        let second = settle(&mut m, &mut shown);
        assert_eq!(second.scored, u64::from(first.matched));
        assert!(second.matched < first.matched);
        assert_eq!(shown, complete(&texts, "99").0);
        // A backspace is not an append: everything is looked at again.
        m.set_pattern("9", false);
        let third = settle(&mut m, &mut shown);
        assert_eq!(third.scored as usize, texts.len());
        assert_eq!(third.matched, first.matched);
    }

    #[test]
    fn entries_pushed_after_a_pass_are_matched_and_a_restart_forgets_them() {
        let texts = texts(CHUNK + 10);
        let mut m = matcher(&texts[..10]);
        let mut shown = Vec::new();
        m.set_pattern("order", false);
        settle(&mut m, &mut shown);
        let mut injector = m.injector();
        for t in &texts[10..] {
            injector.push(Text(t.clone()));
        }
        drop(injector);
        let view = settle(&mut m, &mut shown);
        assert_eq!(view.total as usize, texts.len());
        assert_eq!(shown, complete(&texts, "order").0);
        m.restart();
        let view = settle(&mut m, &mut shown);
        assert_eq!((view.total, view.matched), (0, 0));
        assert!(shown.is_empty());
    }
}
