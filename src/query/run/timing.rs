//! The split of a range's time between loading documents and executing the query on them
//! (`documentLoadTimeInMs`, `queryEngineExecutionTimeInMs`).
//!
//! A clock read costs tens of nanoseconds, a sizable share of the few hundred a document
//! takes in a scan, and a fan-out reads a few documents in each of many ranges. So one clock
//! runs for the whole scan: the two phases are timed on one document in `EVERY` (counted
//! across ranges), and each range's time, read once as it ends, is divided in the
//! proportion of its own samples, or of every sample so far when it had none.

use std::time::{Duration, Instant};

/// One document in this many is timed.
const EVERY: u32 = 16;

/// Times a scan's loops over documents, range by range. Per document:
/// [`PhaseClock::loaded`] once it is read, [`PhaseClock::done`] once the query has run on
/// it; a document skipped in between (an expired one) counts as loading time of the next.
/// [`PhaseClock::lap`] ends a range.
pub struct PhaseClock {
    /// Where the current lap started: the end of the last one.
    lap_start: Instant,
    documents: u32,
    /// Documents in the current lap.
    lap_documents: u32,
    /// Set when the next document is timed: the end of the previous one.
    mark: Option<Instant>,
    /// When the timed document finished loading.
    loaded: Option<Instant>,
    /// The current lap's samples.
    load: Duration,
    exec: Duration,
    /// Every earlier lap's samples.
    all_load: Duration,
    all_exec: Duration,
}

impl PhaseClock {
    pub fn start() -> PhaseClock {
        let start = Instant::now();
        PhaseClock {
            lap_start: start,
            documents: 0,
            lap_documents: 0,
            mark: Some(start),
            loaded: None,
            load: Duration::ZERO,
            exec: Duration::ZERO,
            all_load: Duration::ZERO,
            all_exec: Duration::ZERO,
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
        self.lap_documents += 1;
        if self.documents.is_multiple_of(EVERY) {
            self.mark = Some(Instant::now());
        }
    }

    /// The time since the last lap (or the start) as (loading, executing) nanoseconds. A
    /// lap without documents reads no clock: its time goes to the next lap.
    pub fn lap(&mut self) -> (u128, u128) {
        if self.lap_documents == 0 {
            return (0, 0);
        }
        let now = Instant::now();
        let total = (now - self.lap_start).as_nanos();
        self.lap_start = now;
        if self.mark.is_some() {
            // The next timed document starts loading in the next lap.
            self.mark = Some(now);
        }
        let (load, exec) = if (self.load + self.exec).is_zero() {
            (self.all_load, self.all_exec)
        } else {
            (self.load, self.exec)
        };
        self.all_load += self.load;
        self.all_exec += self.exec;
        (self.load, self.exec, self.lap_documents) = (Duration::ZERO, Duration::ZERO, 0);
        let sampled = (load + exec).as_nanos();
        if sampled == 0 {
            return (0, total);
        }
        let load = total * load.as_nanos() / sampled;
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
        let (load, exec) = clock.lap();
        // Every document spent its time loading: nearly all of it is loading time.
        assert!(load > 9 * exec, "{load} {exec}");
        assert!(load + exec >= 40 * 20_000);

        let mut clock = PhaseClock::start();
        assert_eq!(clock.lap(), (0, 0), "no documents, no time");
    }

    #[test]
    fn a_lap_without_samples_is_split_as_the_laps_before() {
        let mut clock = PhaseClock::start();
        // The first document is timed: it spends its time executing.
        clock.loaded();
        spin(Duration::from_micros(200));
        clock.done();
        let (load, exec) = clock.lap();
        assert!(exec > 9 * load, "{load} {exec}");
        // Three documents, none timed: the same proportion.
        for _ in 0..3 {
            clock.loaded();
            spin(Duration::from_micros(50));
            clock.done();
        }
        let (load, exec) = clock.lap();
        assert!(exec > 9 * load, "{load} {exec}");
        assert!(load + exec >= 150_000);
    }
}
