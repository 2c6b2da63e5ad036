//! The client's own metering: the RU each of its requests was charged, per container and
//! physical partition and per second, and the 429s it received. The service does not say
//! what other clients consume, so the Partitions view of a remote container shows this
//! session's load only (the backend's `metering` capability is false for that reason).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::engine::views::{RangeLoad, SampleView};

/// Seconds of history kept per range.
const KEPT_SECONDS: u64 = 600;

type RangeKey = (String, String, String);

#[derive(Debug, Default)]
pub(super) struct Meter {
    samples: Mutex<HashMap<RangeKey, Vec<SampleView>>>,
}

impl Meter {
    /// Records one answer (or a 429) of `range` of `db/name`.
    pub(super) fn record(&self, db: &str, name: &str, range: &str, ru: f64, throttled: bool) {
        if range.is_empty() {
            return;
        }
        let second = crate::store::now_secs().max(0) as u64;
        let mut all = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        let samples = all
            .entry((db.to_string(), name.to_string(), range.to_string()))
            .or_default();
        match samples.last_mut() {
            Some(s) if s.second == second => {
                s.ru += ru;
                s.requests += 1;
                s.throttled += u64::from(throttled);
            }
            _ => samples.push(SampleView {
                second,
                ru,
                requests: 1,
                throttled: u64::from(throttled),
            }),
        }
        samples.retain(|s| s.second + KEPT_SECONDS > second);
    }

    /// The load of each of `ranges` over the last `window` seconds.
    pub(super) fn load(
        &self,
        db: &str,
        name: &str,
        ranges: &[(String, f64)],
        window: u64,
    ) -> Vec<RangeLoad> {
        let now = crate::store::now_secs().max(0) as u64;
        let all = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        ranges
            .iter()
            .map(|(id, budget)| {
                let samples: Vec<SampleView> = all
                    .get(&(db.to_string(), name.to_string(), id.clone()))
                    .map(|s| {
                        s.iter()
                            .filter(|s| s.second + window >= now)
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                RangeLoad {
                    id: id.clone(),
                    budget_per_second: *budget,
                    ru_last_second: samples
                        .iter()
                        .find(|s| s.second + 1 == now)
                        .map_or(0.0, |s| crate::charge::round(s.ru)),
                    ru_peak: samples.iter().map(|s| s.ru).fold(0.0, f64::max),
                    throttled: samples.iter().map(|s| s.throttled).sum(),
                    requests: samples.iter().map(|s| s.requests).sum(),
                    samples,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_per_range_and_reports_the_window() {
        let m = Meter::default();
        m.record("d", "c", "1", 2.5, false);
        m.record("d", "c", "1", 1.0, true);
        m.record("d", "c", "2", 4.0, false);
        m.record("d", "c", "", 9.0, false);
        let load = m.load("d", "c", &[("1".into(), 100.0), ("3".into(), 100.0)], 60);
        assert_eq!(load[0].requests, 2);
        assert_eq!(load[0].throttled, 1);
        assert_eq!(load[0].ru_peak, 3.5);
        assert_eq!(load[1].requests, 0);
    }
}
