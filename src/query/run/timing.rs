//! The split of a range's time between loading documents and executing the query on them
//! (`documentLoadTimeInMs`, `queryEngineExecutionTimeInMs`).
//!
//! A clock read costs tens of nanoseconds, a sizable share of the few hundred a document
//! takes in a scan, so the two phases are timed on one document in `EVERY` and the loop's
//! whole time, read exactly, is divided in the proportion of those samples.

use std::time::{Duration, Instant};

/// One document in this many is timed.
const EVERY: u32 = 16;

/// Times one loop over documents. Per document: [`PhaseClock::loaded`] once it is read,
/// [`PhaseClock::done`] once the query has run on it; a document skipped in between (an
/// expired one) counts as loading time of the next.
pub struct PhaseClock {
    start: Instant,
    documents: u32,
    /// Set when the next document is timed: the end of the previous one.
    mark: Option<Instant>,
    /// When the timed document finished loading.
    loaded: Option<Instant>,
    load: Duration,
    exec: Duration,
}

impl PhaseClock {
    pub fn start() -> PhaseClock {
        let start = Instant::now();
        PhaseClock {
            start,
            documents: 0,
            mark: Some(start),
            loaded: None,
            load: Duration::ZERO,
            exec: Duration::ZERO,
        }
    }

    /// The current document has been read.
    #[inline]
    pub fn loaded(&mut self) {
        if let Some(mark) = self.mark.take() {
            let now = Instant::now();
            self.load += now - mark;
            self.loaded = Some(now);
        }
    }

    /// The query has run on the current document.
    #[inline]
    pub fn done(&mut self) {
        if let Some(loaded) = self.loaded.take() {
            self.exec += loaded.elapsed();
        }
        self.documents = self.documents.wrapping_add(1);
        if self.documents.is_multiple_of(EVERY) {
            self.mark = Some(Instant::now());
        }
    }

    /// The loop's time as (loading, executing) nanoseconds.
    pub fn finish(self) -> (u128, u128) {
        let total = self.start.elapsed().as_nanos();
        let sampled = (self.load + self.exec).as_nanos();
        if sampled == 0 {
            return (0, total);
        }
        let load = total * self.load.as_nanos() / sampled;
        (load, total - load)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {}
    }

    #[test]
    fn the_split_follows_the_sampled_documents_and_adds_up() {
        let mut clock = PhaseClock::start();
        for _ in 0..40 {
            spin(Duration::from_micros(20));
            clock.loaded();
            clock.done();
        }
        let (load, exec) = clock.finish();
        // Every document spent its time loading: nearly all of it is loading time.
        assert!(load > 9 * exec, "{load} {exec}");
        assert!(load + exec >= 40 * 20_000);

        let clock = PhaseClock::start();
        let (load, _) = clock.finish();
        assert_eq!(load, 0);
    }
}
