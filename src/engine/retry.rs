//! Retrying throttled requests the way the SDKs do.
//!
//! The service answers a request that would exceed a partition's RU budget with 429 and a
//! retry-after; every SDK waits that long and sends the request again, by default up to 9
//! times and for at most 30 s in total (.NET `MaxRetryAttemptsOnRateLimitedRequests`,
//! `MaxRetryWaitTimeOnRateLimitedRequests`). The workbench, the simulator and the sample
//! processors all send their requests through [`RetryPolicy::run`], so throttling shows up
//! as waits and a count of 429s instead of failures.

use std::time::Duration;

use crate::error::{Result, StatusCode};

/// Wait used when a 429 carries no retry-after (the store always sets one; this is a guard).
const FALLBACK_RETRY_AFTER: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (the SDKs' default: 9).
    pub max_retries: u32,
    /// Total time spent waiting across retries of one request (the SDKs' default: 30 s).
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_retries: 9,
            max_wait: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// Never retries: a 429 is returned at once (still counted).
    pub const NONE: RetryPolicy = RetryPolicy {
        max_retries: 0,
        max_wait: Duration::ZERO,
    };

    /// Runs `op`, sleeping the retry-after and trying again while it answers 429 and the
    /// policy allows. `throttled` counts every 429 received, retried or not.
    pub fn run<T>(&self, throttled: &mut u64, mut op: impl FnMut() -> Result<T>) -> Result<T> {
        let mut retries = 0;
        let mut waited = Duration::ZERO;
        loop {
            match op() {
                Err(e) if e.status == StatusCode::TooManyRequests => {
                    *throttled += 1;
                    let wait = e
                        .retry_after_ms
                        .map_or(FALLBACK_RETRY_AFTER, Duration::from_millis)
                        .max(Duration::from_millis(1));
                    if retries >= self.max_retries || waited + wait > self.max_wait {
                        return Err(e);
                    }
                    std::thread::sleep(wait);
                    waited += wait;
                    retries += 1;
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn throttle(ms: u64) -> Error {
        let mut e = Error::new(StatusCode::TooManyRequests, "Request rate is large");
        e.retry_after_ms = Some(ms);
        e
    }

    #[test]
    fn retries_throttled_requests_until_they_pass() {
        let mut calls = 0;
        let mut throttled = 0;
        let r = RetryPolicy::default().run(&mut throttled, || {
            calls += 1;
            if calls < 3 {
                Err(throttle(1))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(r.unwrap(), 3);
        assert_eq!(throttled, 2);
    }

    #[test]
    fn gives_up_after_the_policy_and_passes_other_errors_through() {
        let mut throttled = 0;
        let policy = RetryPolicy {
            max_retries: 2,
            max_wait: Duration::from_secs(1),
        };
        let r: Result<()> = policy.run(&mut throttled, || Err(throttle(1)));
        assert_eq!(r.unwrap_err().status, 429);
        assert_eq!(throttled, 3);
        let r: Result<()> = policy.run(&mut throttled, || Err(Error::not_found("gone")));
        assert_eq!(r.unwrap_err().status, 404);
        assert_eq!(throttled, 3);
    }
}
