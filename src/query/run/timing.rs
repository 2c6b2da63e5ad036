//! The split of a range's time between loading documents and executing the query on them
//! (`documentLoadTimeInMs`, `queryEngineExecutionTimeInMs`).
//!
//! A clock read costs tens of nanoseconds, a sizable share of the few hundred a document
//! takes in a scan, and a fan-out reads a few documents in each of many ranges. So one clock
//! runs for the whole scan: the two phases are timed on one document in `EVERY` (counted
//! across ranges), and the clock is read as a range ends only once `EVERY` documents have
//! loaded since it was last read. The time between two reads goes to the ranges that ended
//! in it in proportion to their documents (a fan-out's ranges of one or two items each
//! share one read), and is divided between the phases in the proportion of its samples, or
//! of every sample so far when it had none.

use std::time::{Duration, Instant};

/// One document in this many is timed, and a range's end reads the clock only once this
/// many have loaded since it was last read.
const EVERY: u32 = 16;

/// Times a scan's loops over documents, range by range. Per document:
/// [`PhaseClock::loaded`] once it is read, [`PhaseClock::done`] once the query has run on
/// it; a document skipped in between (an expired one) counts as loading time of the next.
/// [`PhaseClock::lap`] ends a range (or a part of one), and [`PhaseClock::laps`] gives what
/// each took once the scan is done.
pub struct PhaseClock {
    /// When the clock was last read: the end of the last lap that read it.
    read_at: Instant,
    documents: u32,
    /// Documents since the last lap ended.
    lap_documents: u32,
    /// Set when the next document is timed: the end of the previous one.
    mark: Option<Instant>,
    /// When the timed document finished loading.
    loaded: Option<Instant>,
    /// The samples since the clock was last read.
    load: Duration,
    exec: Duration,
    /// Every earlier read's samples.
    all_load: Duration,
    all_exec: Duration,
    /// Laps ended since the clock was last read: who each was for, and its documents.
    unread: Vec<(usize, u32)>,
    /// Each lap's (loading, executing) nanoseconds, once the clock was read after it.
    laps: Vec<(usize, u128, u128)>,
}

impl PhaseClock {
    pub fn start() -> PhaseClock {
        let start = Instant::now();
        PhaseClock {
            read_at: start,
            documents: 0,
            lap_documents: 0,
            mark: Some(start),
            loaded: None,
            load: Duration::ZERO,
            exec: Duration::ZERO,
            all_load: Duration::ZERO,
            all_exec: Duration::ZERO,
            unread: Vec::new(),
            laps: Vec::new(),
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

    /// The lap since the last one ends, for `id` (laps for the same id add up). A lap
    /// without documents takes no time: its time goes to the next lap. The clock is read
    /// once `EVERY` documents have loaded since it was last read.
    pub fn lap(&mut self, id: usize) {
        if self.lap_documents == 0 {
            return;
        }
        self.unread
            .push((id, std::mem::take(&mut self.lap_documents)));
        let unread: u32 = self.unread.iter().map(|(_, n)| n).sum();
        if unread >= EVERY {
            self.read();
        }
    }

    /// Each lap's (loading, executing) nanoseconds, by the id it was given, in the order
    /// the laps ended (the clock is read for those it was not read after yet).
    pub fn laps(&mut self) -> &[(usize, u128, u128)] {
        if !self.unread.is_empty() {
            self.read();
        }
        &self.laps
    }

    /// Reads the clock: the time since the last read goes to the laps that ended since.
    fn read(&mut self) {
        let now = Instant::now();
        let total = (now - self.read_at).as_nanos();
        self.read_at = now;
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
        (self.load, self.exec) = (Duration::ZERO, Duration::ZERO);
        let sampled = (load + exec).as_nanos();
        let documents: u128 = self.unread.iter().map(|&(_, n)| u128::from(n)).sum();
        let mut given = 0;
        let last = self.unread.len().saturating_sub(1);
        for (i, (id, n)) in self.unread.drain(..).enumerate() {
            // The last lap takes what division left over, so the laps add up to the total.
            let all = if i == last {
                total - given
            } else {
                total * u128::from(n) / documents
            };
            given += all;
            let load = match sampled {
                0 => 0,
                _ => all * load.as_nanos() / sampled,
            };
            self.laps.push((id, load, all - load));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {}
    }

    /// A lap of `n` documents, each spending `load` loading and `exec` executing.
    fn lap(clock: &mut PhaseClock, id: usize, n: usize, (load, exec): (u64, u64)) {
        for _ in 0..n {
            spin(Duration::from_micros(load));
            clock.loaded();
            spin(Duration::from_micros(exec));
            clock.done();
        }
        clock.lap(id);
    }

    #[test]
    fn the_split_follows_the_sampled_documents_and_adds_up() {
        let mut clock = PhaseClock::start();
        lap(&mut clock, 0, 40, (20, 0));
        let [(0, load, exec)] = *clock.laps() else {
            panic!("one lap: {:?}", clock.laps());
        };
        // Every document spent its time loading: nearly all of it is loading time.
        assert!(load > 9 * exec, "{load} {exec}");
        assert!(load + exec >= 40 * 20_000);

        let mut clock = PhaseClock::start();
        clock.lap(0);
        assert!(clock.laps().is_empty(), "no documents, no time");
    }

    #[test]
    fn a_read_without_samples_is_split_as_the_reads_before() {
        let mut clock = PhaseClock::start();
        // Documents 1 and 17 are timed; the clock is read after the seventeenth.
        lap(&mut clock, 0, 1, (0, 200));
        lap(&mut clock, 1, 16, (0, 0));
        assert_eq!(clock.laps().len(), 2);
        let (_, load, exec) = clock.laps()[0];
        // Three documents, none timed: split in the same proportion as the read before.
        lap(&mut clock, 2, 3, (50, 0));
        let (_, later_load, later_exec) = clock.laps()[2];
        assert!(later_load + later_exec >= 150_000);
        let (a, b) = (later_load * exec, load * later_exec);
        assert!(
            a.abs_diff(b) <= (load + exec).max(later_load + later_exec),
            "{a} {b}"
        );
    }

    #[test]
    fn ranges_of_few_documents_share_a_read_by_their_documents() {
        let started = Instant::now();
        let mut clock = PhaseClock::start();
        // Ranges of 2, 6 and 2 documents, an empty one, then one of 20: the clock is read
        // only after the last, and the four with documents share that read.
        lap(&mut clock, 0, 2, (10, 10));
        lap(&mut clock, 1, 6, (10, 10));
        lap(&mut clock, 2, 2, (10, 10));
        clock.lap(3);
        assert!(
            clock.laps.is_empty() && clock.unread.len() == 3,
            "not read yet"
        );
        lap(&mut clock, 4, 20, (10, 10));
        let laps = clock.laps().to_vec();
        let elapsed = started.elapsed().as_nanos();
        let ids: Vec<usize> = laps.iter().map(|l| l.0).collect();
        assert_eq!(ids, [0, 1, 2, 4]);
        // In proportion to their documents, 2 : 6 : 2 : 20.
        let all: Vec<u128> = laps.iter().map(|&(_, l, e)| l + e).collect();
        assert!(all[0].abs_diff(all[2]) <= 1, "{all:?}");
        assert!(all[1].abs_diff(3 * all[0]) <= 3, "{all:?}");
        assert!(all[3].abs_diff(10 * all[0]) <= 10, "{all:?}");
        assert!(all[0] >= 2 * 20_000, "{all:?}");
        // Together they are the time the scan took.
        let total: u128 = all.iter().sum();
        assert!(
            total >= 30 * 20_000 && total <= elapsed,
            "{total} {elapsed}"
        );
    }
}
