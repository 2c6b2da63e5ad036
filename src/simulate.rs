//! The workload simulator: live, realistic traffic against a bundled design, with the
//! design's change feed processors running, so its partitions, RU meters, throttling and
//! change feed have something to show (in this process or any other following the store).
//!
//! The workload is the design's access patterns from the bundled workbench suite — the
//! same requests the workbench measures — mixed by the suite's `[simulate]` weights (a
//! blog is read about nine times for every write). With `hot_key` set, that share of the
//! writes goes to one logical partition (the first value of the suite's `hotParam`: one
//! post for the blog, one customer for the web store). Throttled requests are retried
//! after their retry-after, as the SDKs do, and counted.
//!
//! Operations are drawn from a seeded stream and parameters from the design's data, so a
//! run of N operations with a seed is repeatable: tests call [`run`] with `operations`
//! and no rate instead of sleeping on a clock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::engine::Backend;
use crate::error::{Error, Result, StatusCode};
use crate::samples::denormalize::{self, Denormalizer, ProcessorStats};
use crate::samples::rng::Rng;
use crate::samples::{self, LoadOptions};
use crate::workbench::{Design, Executor, Pattern, PatternRun, Pools, Suite, Vars};

/// Operations per second when no rate is given: a busy but small blog, well inside what
/// the default sample containers' throughput serves.
pub const DEFAULT_RATE: f64 = 100.0;

/// How often the live status is reported.
const STATUS_EVERY: Duration = Duration::from_millis(250);
/// Operations between re-reads of the parameter pools (so new posts get comments too).
const REFRESH_POOLS_EVERY: u64 = 1000;
/// A run stops when this many operations in a row fail: something is wrong, not busy.
const MAX_CONSECUTIVE_ERRORS: u64 = 100;
/// Longest sleep between checks of the stop flag while pacing.
const PACING_SLICE: Duration = Duration::from_millis(50);

#[derive(Debug, Clone)]
pub struct SimOptions {
    /// A bundled sample set with a workload (blog-v1/v2/v3, webstore, webstore-relational).
    pub set: String,
    /// Scale and seed of the load when the set's database is missing; the seed also
    /// drives the workload.
    pub scale: f64,
    pub seed: u64,
    /// Target operations per second; `None` runs as fast as the store answers.
    pub rate: Option<f64>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Stop after this many operations.
    pub operations: Option<u64>,
    /// Share of writes sent to one logical partition (0 to 1).
    pub hot_key: f64,
    /// Run the design's change feed processors.
    pub processors: bool,
    /// At the end, let the processors catch up for at most this long (`None`: until they
    /// have).
    pub drain: Option<Duration>,
    /// Clients sending at once, each paced to its share of the rate, as an application's
    /// many users are. One client's rate is capped by each operation's latency (a write
    /// waits for its commit to be flushed), so one client cannot show a busy store.
    /// With one client a seeded run of N operations is repeatable.
    pub clients: usize,
}

impl SimOptions {
    pub fn new(set: impl Into<String>) -> SimOptions {
        SimOptions {
            set: set.into(),
            scale: 1.0,
            seed: samples::DEFAULT_SEED,
            rate: Some(DEFAULT_RATE),
            duration: None,
            operations: None,
            hot_key: 0.0,
            processors: true,
            drain: None,
            clients: 1,
        }
    }
}

/// The live summary, reported a few times a second.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimStatus {
    pub elapsed_seconds: f64,
    pub operations: u64,
    pub requests: u64,
    pub request_charge: f64,
    pub throttled: u64,
    pub errors: u64,
    /// Over the last status interval.
    pub ops_per_second: f64,
    pub ru_per_second: f64,
    pub processor_changes: u64,
}

impl SimStatus {
    /// One line for a terminal.
    pub fn line(&self) -> String {
        format!(
            "{:>6.1}s  {:>8} ops  {:>7.1} ops/s  {:>9.1} RU/s  {:>6} 429s  {:>5} errors  {:>8} changes processed",
            self.elapsed_seconds,
            self.operations,
            self.ops_per_second,
            self.ru_per_second,
            self.throttled,
            self.errors,
            self.processor_changes
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HotKey {
    pub param: String,
    pub value: Value,
    pub share: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatternTally {
    pub title: String,
    pub count: u64,
    pub request_charge: f64,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimReport {
    pub set: String,
    pub database: String,
    pub seed: u64,
    pub rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_key: Option<HotKey>,
    /// Why it stopped: `operations`, `duration` or `interrupted`.
    pub stopped: String,
    pub operations: u64,
    pub reads: u64,
    pub writes: u64,
    pub requests: u64,
    pub request_charge: f64,
    pub throttled: u64,
    pub errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    pub seconds: f64,
    pub ops_per_second: f64,
    pub ru_per_second: f64,
    pub clients: usize,
    /// Mean time an operation took (all its requests, retries included).
    pub mean_operation_ms: f64,
    /// When the run fell short of its rate, what held it back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_of_rate: Option<String>,
    /// Per pattern id.
    pub patterns: BTreeMap<String, PatternTally>,
    pub processors: ProcessorStats,
}

/// Loads `options.set` unless its database exists; returns whether it loaded.
pub fn ensure_loaded(
    engine: &dyn Backend,
    options: &SimOptions,
    progress: &mut dyn FnMut(&samples::Progress) -> bool,
) -> Result<bool> {
    let (suite, design) = Suite::for_sample(&options.set)?;
    let db = &suite
        .design(&design)
        .ok_or_else(|| Error::internal("the workload's design is missing"))?
        .database;
    if engine.list_databases()?.iter().any(|d| &d.id == db) {
        return Ok(false);
    }
    let load = LoadOptions {
        scale: options.scale,
        seed: options.seed,
    };
    samples::load(engine, &options.set, &load, progress)?;
    Ok(true)
}

/// Runs the workload until `operations` or `duration` is reached or `stop` is set, then
/// lets the processors catch up and releases their leases.
pub fn run(
    engine: &dyn Backend,
    options: &SimOptions,
    stop: &AtomicBool,
    status: &mut dyn FnMut(&SimStatus),
) -> Result<SimReport> {
    check_options(options)?;
    ensure_loaded(engine, options, &mut |_| true)?;
    let (suite, design_id) = Suite::for_sample(&options.set)?;
    let (workload, pools) = Workload::new(engine, &suite, &design_id, options)?;
    let denormalizers: Vec<Denormalizer> = if options.processors {
        Denormalizer::for_set(engine, &options.set, &workload.design.database)?
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };

    let tally = Mutex::new(Tally::default());
    let started = Instant::now();
    // `seconds` is the time the clients ran: the processors' shutdown and catching up
    // come after it and are not the workload's.
    let (stopped, seconds, denormalizers) = std::thread::scope(|scope| {
        let background = denormalize::spawn(scope, denormalizers);
        let processed = || background.total().changes;
        let mut reporter = StatusReporter {
            started,
            last: (started, 0, 0.0),
            processed: &processed,
            status,
        };
        let stopped = workload.drive(engine, options, pools, stop, &tally, &mut reporter);
        let seconds = started.elapsed().as_secs_f64();
        (stopped, seconds, background.stop())
    });
    let tally = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut denormalizers = denormalizers?;
    let drained = catch_up(&mut denormalizers, options.drain);
    let stopped = stopped?;
    drained?;
    Ok(report(
        options,
        workload,
        stopped,
        tally,
        seconds,
        &denormalizers,
    ))
}

/// The options a run cannot start with: a hot-key share outside 0 to 1, a rate that is not
/// a positive number.
fn check_options(options: &SimOptions) -> Result<()> {
    if !(0.0..=1.0).contains(&options.hot_key) {
        return Err(Error::bad_request(format!(
            "--hot-key is a share of writes between 0 and 1, got {}",
            options.hot_key
        )));
    }
    if let Some(r) = options.rate
        && !(r.is_finite() && r > 0.0)
    {
        return Err(Error::bad_request(format!(
            "--rate must be a positive number of operations per second, got {r}"
        )));
    }
    Ok(())
}

/// The hot key's parameter and value, and the writes (with their weights) that use it.
type HotWrites<'s> = (String, Value, Vec<(&'s Pattern, f64)>);
type Hot<'s> = Option<HotWrites<'s>>;

/// What a run draws its operations from: the design's patterns by weight, and the hot key
/// with the writes that use it.
struct Workload<'s> {
    suite: &'s Suite,
    design: &'s Design,
    mix: Vec<(&'s Pattern, f64)>,
    total_weight: f64,
    hot: Hot<'s>,
    /// Generated ids mix it in, so a seed never recreates a previous run's items.
    nonce: u64,
}

impl<'s> Workload<'s> {
    /// The workload of the suite's `[simulate]` section for `design_id`, and the parameter
    /// pools it starts drawing from.
    fn new(
        engine: &dyn Backend,
        suite: &'s Suite,
        design_id: &str,
        options: &SimOptions,
    ) -> Result<(Workload<'s>, Pools)> {
        let design = suite
            .design(design_id)
            .ok_or_else(|| Error::internal("the workload's design is missing"))?;
        let spec = suite.simulate.as_ref().ok_or_else(|| {
            Error::internal(format!("suite {} has no [simulate] section", suite.name))
        })?;
        let mix: Vec<(&Pattern, f64)> = spec
            .mix
            .iter()
            .filter_map(|(id, w)| suite.pattern(id).map(|p| (p, *w)))
            .filter(|(p, w)| *w > 0.0 && p.steps_for(&design.id).is_some())
            .collect();
        if mix.is_empty() {
            return Err(Error::internal(format!(
                "the workload of {} has no patterns",
                options.set
            )));
        }
        let pools = Pools::load(engine, suite, design)?;
        let nonce = crate::workbench::exec::run_nonce();
        let hot = match (options.hot_key > 0.0, &spec.hot_param) {
            (false, _) => None,
            (true, None) => {
                return Err(Error::bad_request(format!(
                    "the workload of {} has no hot key",
                    options.set
                )));
            }
            (true, Some(param)) => Some(hot_writes(&mix, design, &pools, param, &options.set)?),
        };
        let total_weight = mix.iter().map(|(_, w)| w).sum();
        let workload = Workload {
            suite,
            design,
            mix,
            total_weight,
            hot,
            nonce,
        };
        Ok((workload, pools))
    }

    /// Runs the clients until a stop reason comes (this thread watches for it and reports
    /// the status), each paced to its share of the rate, re-reading the pools now and then.
    /// Returns why it stopped; fails when too many operations in a row fail or the pools
    /// cannot be read.
    fn drive(
        &self,
        engine: &dyn Backend,
        options: &SimOptions,
        pools: Pools,
        stop: &AtomicBool,
        tally: &Mutex<Tally>,
        reporter: &mut StatusReporter,
    ) -> Result<&'static str> {
        let clients = options.clients.max(1);
        let shared = Shared {
            pools: RwLock::new(pools),
            next: AtomicU64::new(0),
            done: AtomicBool::new(false),
            failure: Mutex::new(None),
        };
        let started = reporter.started;
        std::thread::scope(|scope| {
            for client in 0..clients {
                let shared = &shared;
                scope.spawn(move || self.client(engine, options, client, shared, tally));
            }
            let reason = loop {
                {
                    let Ok(now) = tally.lock() else {
                        break Err(());
                    };
                    if let Some(reason) = stop_reason(stop, options, &now, started) {
                        break Ok(reason);
                    }
                    if shared.done.load(Ordering::Acquire) {
                        break Err(());
                    }
                    reporter.tick(&now);
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            shared.done.store(true, Ordering::Release);
            reason
        })
        .map_err(|()| {
            let failure = shared.failure.lock().ok().and_then(|mut f| f.take());
            failure.unwrap_or_else(|| Error::internal("a simulator client stopped"))
        })
    }

    /// One client's loop: operations drawn from its own seeded stream, numbered from the
    /// shared counter, paced to `rate / clients`.
    fn client(
        &self,
        engine: &dyn Backend,
        options: &SimOptions,
        client: usize,
        shared: &Shared,
        tally: &Mutex<Tally>,
    ) {
        let clients = options.clients.max(1);
        let executor = Executor::new(engine);
        let mut rng = Rng::derive(options.seed, "simulate", client as u64);
        let mut pacer = Pacer {
            next_due: Instant::now(),
        };
        let fail = |e: Error| {
            if let Ok(mut f) = shared.failure.lock() {
                f.get_or_insert(e);
            }
            shared.done.store(true, Ordering::Release);
        };
        while !shared.done.load(Ordering::Acquire) {
            if let Some(rate) = options.rate
                && !pacer.due(rate / clients as f64)
            {
                continue;
            }
            let n = shared.next.fetch_add(1, Ordering::AcqRel);
            if options.operations.is_some_and(|limit| n >= limit) {
                return;
            }
            if n > 0 && n.is_multiple_of(REFRESH_POOLS_EVERY) {
                match Pools::load(engine, self.suite, self.design) {
                    Ok(fresh) => {
                        if let Ok(mut p) = shared.pools.write() {
                            *p = fresh;
                        }
                    }
                    Err(e) => return fail(e),
                }
            }
            let began = Instant::now();
            let (pattern, result) = match shared.pools.read() {
                Ok(pools) => self.operation(&executor, &pools, &mut rng, options, n),
                Err(_) => return fail(Error::internal("the parameter pools were poisoned")),
            };
            let Ok(mut t) = tally.lock() else { return };
            t.busy += began.elapsed();
            t.record(pattern, result);
            if t.consecutive_errors >= MAX_CONSECUTIVE_ERRORS {
                let last = t.last_error.clone().unwrap_or_else(|| "?".into());
                drop(t);
                return fail(Error::new(
                    StatusCode::InternalServerError,
                    format!(
                        "{MAX_CONSECUTIVE_ERRORS} operations in a row failed; the last: {last}"
                    ),
                ));
            }
        }
    }

    /// Draws and runs operation number `n`: a pattern by weight (a write perhaps pinned to
    /// the hot key) with parameters drawn from the pools.
    fn operation(
        &self,
        executor: &Executor,
        pools: &Pools,
        rng: &mut Rng,
        options: &SimOptions,
        n: u64,
    ) -> (&'s Pattern, Result<PatternRun>) {
        let (pattern, pinned) = choose(
            rng,
            &self.mix,
            self.total_weight,
            options.hot_key,
            &self.hot,
        );
        let pinned: Vec<(&str, &Value)> = pinned.iter().map(|(n, v)| (*n, *v)).collect();
        let steps = pattern.steps_for(&self.design.id).unwrap_or_default();
        let result = Vars::draw(
            self.suite,
            self.design,
            pools,
            options.seed,
            self.nonce,
            "simulate",
            n,
            &pinned,
        )
        .and_then(|mut vars| executor.run(&self.design.database, steps, &mut vars));
        (pattern, result)
    }
}

/// The hot key of a run: the first pool value of `param`, and the writes of `mix` that use
/// it (there must be one).
fn hot_writes<'s>(
    mix: &[(&'s Pattern, f64)],
    design: &Design,
    pools: &Pools,
    param: &str,
    set: &str,
) -> Result<HotWrites<'s>> {
    let value = pools
        .get(param)
        .and_then(|p| p.first())
        .cloned()
        .ok_or_else(|| Error::internal(format!("hot parameter {param} has no values")))?;
    let writes: Vec<(&Pattern, f64)> = mix
        .iter()
        .filter(|(p, _)| p.is_command() && p.uses(&design.id, param))
        .copied()
        .collect();
    if writes.is_empty() {
        return Err(Error::internal(format!(
            "no write of the workload of {set} uses its hot parameter {param}"
        )));
    }
    Ok((param.to_string(), value, writes))
}

/// Why the loop stops before its next operation, if it does.
fn stop_reason(
    stop: &AtomicBool,
    options: &SimOptions,
    tally: &Tally,
    started: Instant,
) -> Option<&'static str> {
    if stop.load(Ordering::Acquire) {
        Some("interrupted")
    } else if options.operations.is_some_and(|n| tally.operations >= n) {
        Some("operations")
    } else if options.duration.is_some_and(|d| started.elapsed() >= d) {
        Some("duration")
    } else {
        None
    }
}

/// What the clients of a run share: the parameter pools (re-read now and then), the next
/// operation's number, whether to stop, and the failure that stopped them.
struct Shared {
    pools: RwLock<Pools>,
    next: AtomicU64,
    done: AtomicBool,
    failure: Mutex<Option<Error>>,
}

/// Spaces operations `1 / rate` seconds apart.
struct Pacer {
    next_due: Instant,
}

impl Pacer {
    /// Whether the next operation is due. When it is not, sleeps towards it (at most
    /// [`PACING_SLICE`], so the stop flag is seen) and says no.
    fn due(&mut self, rate: f64) -> bool {
        let now = Instant::now();
        if now < self.next_due {
            std::thread::sleep((self.next_due - now).min(PACING_SLICE));
            return false;
        }
        self.next_due += Duration::from_secs_f64(1.0 / rate);
        // After a stall, pick up the pace from now instead of bursting to catch up.
        if self.next_due + Duration::from_secs(1) < now {
            self.next_due = now;
        }
        true
    }
}

/// Reports the live status every [`STATUS_EVERY`], with rates over the last interval.
struct StatusReporter<'r> {
    /// When the run started.
    started: Instant,
    /// When the last status was reported, with the operations and charge then.
    last: (Instant, u64, f64),
    /// Changes the processors have handled so far.
    processed: &'r dyn Fn() -> u64,
    status: &'r mut dyn FnMut(&SimStatus),
}

impl StatusReporter<'_> {
    /// Reports the status if it is due.
    fn tick(&mut self, tally: &Tally) {
        let now = Instant::now();
        if now - self.last.0 < STATUS_EVERY {
            return;
        }
        let window = (now - self.last.0).as_secs_f64();
        (self.status)(&SimStatus {
            elapsed_seconds: round1(self.started.elapsed().as_secs_f64()),
            operations: tally.operations,
            requests: tally.requests,
            request_charge: crate::charge::round(tally.request_charge),
            throttled: tally.throttled,
            errors: tally.errors,
            ops_per_second: round1((tally.operations - self.last.1) as f64 / window),
            ru_per_second: round1((tally.request_charge - self.last.2) / window),
            processor_changes: (self.processed)(),
        });
        self.last = (now, tally.operations, tally.request_charge);
    }
}

/// Lets every processor catch up (for at most `limit` when given) and releases its leases.
/// A processor that fails to catch up does not keep the others from it: the error is
/// returned after all are done.
fn catch_up(denormalizers: &mut [Denormalizer], limit: Option<Duration>) -> Result<()> {
    let mut drained = Ok(());
    for d in denormalizers {
        match limit {
            Some(limit) => {
                d.drain_for(limit);
            }
            None => {
                if let Err(e) = d.drain() {
                    drained = Err(e);
                }
            }
        }
        let _ = d.release();
    }
    drained
}

/// What a run did, from its tally and the processors' totals.
fn report(
    options: &SimOptions,
    workload: Workload,
    stopped: &str,
    tally: Tally,
    seconds: f64,
    denormalizers: &[Denormalizer],
) -> SimReport {
    let mean_operation_ms = round1(mean_ms(&tally));
    let short_of_rate = short_of_rate(options, &tally, seconds);
    SimReport {
        set: options.set.clone(),
        database: workload.design.database.clone(),
        seed: options.seed,
        rate: options.rate,
        hot_key: workload.hot.map(|(param, value, _)| HotKey {
            param,
            value,
            share: options.hot_key,
        }),
        stopped: stopped.to_string(),
        operations: tally.operations,
        reads: tally.operations - tally.writes,
        writes: tally.writes,
        requests: tally.requests,
        request_charge: crate::charge::round(tally.request_charge),
        throttled: tally.throttled,
        errors: tally.errors,
        last_error: tally.last_error,
        seconds: (seconds * 1000.0).round() / 1000.0,
        ops_per_second: round1(tally.operations as f64 / seconds.max(1e-9)),
        ru_per_second: round1(tally.request_charge / seconds.max(1e-9)),
        clients: options.clients.max(1),
        mean_operation_ms,
        short_of_rate,
        patterns: tally
            .patterns
            .into_iter()
            .map(|(k, mut t)| {
                t.request_charge = crate::charge::round(t.request_charge);
                (k, t)
            })
            .collect(),
        processors: denormalize::total(denormalizers).rounded(),
    }
}

/// Mean milliseconds an operation took.
fn mean_ms(tally: &Tally) -> f64 {
    tally.busy.as_secs_f64() * 1000.0 / tally.operations.max(1) as f64
}

/// What held a run below its rate (under 90 % of it), in words: the clients' own latency
/// (each client waits for its operation before the next), throttling, or neither of those
/// (the machine: the clients had time left but did not get to run).
fn short_of_rate(options: &SimOptions, tally: &Tally, seconds: f64) -> Option<String> {
    let rate = options.rate?;
    let achieved = tally.operations as f64 / seconds.max(1e-9);
    if achieved >= 0.9 * rate || tally.operations == 0 {
        return None;
    }
    let clients = options.clients.max(1) as f64;
    let mean = mean_ms(tally);
    let ceiling = clients * 1000.0 / mean.max(1e-9);
    let why = if tally.throttled * 20 > tally.requests {
        format!(
            "{} of {} requests were throttled (429): the containers' throughput is the \
             limit; raise it or lower --rate",
            tally.throttled, tally.requests
        )
    } else if ceiling < rate * 1.1 {
        format!(
            "an operation took {mean:.1} ms on average, so {} can send at most {ceiling:.0} \
             ops/s; raise --clients (each waits for its operation, and a write for its \
             commit to be flushed)",
            match options.clients.max(1) {
                1 => "1 client".to_string(),
                n => format!("{n} clients"),
            }
        )
    } else {
        format!(
            "the clients were idle part of the time ({mean:.1} ms per operation would allow \
             {ceiling:.0} ops/s): the machine's cores are the limit (processors, the store's \
             commits and the clients share them)"
        )
    };
    Some(format!(
        "{achieved:.0} of the {rate:.0} ops/s asked for: {why}"
    ))
}

/// The next operation: a pattern by weight; a write goes to the hot key with probability
/// `hot_key`, as one of the writes that use the hot parameter.
fn choose<'s, 'h>(
    rng: &mut Rng,
    mix: &[(&'s Pattern, f64)],
    total: f64,
    hot_key: f64,
    hot: &'h Hot<'s>,
) -> (&'s Pattern, Vec<(&'h str, &'h Value)>) {
    let pattern = weighted(rng, mix, total);
    if let Some((param, value, writes)) = hot
        && pattern.is_command()
        && rng.chance(hot_key)
    {
        let total: f64 = writes.iter().map(|(_, w)| w).sum();
        return (weighted(rng, writes, total), vec![(param.as_str(), value)]);
    }
    (pattern, Vec::new())
}

fn weighted<'s>(rng: &mut Rng, items: &[(&'s Pattern, f64)], total: f64) -> &'s Pattern {
    let mut x = rng.unit() * total;
    for (p, w) in items {
        if x < *w {
            return p;
        }
        x -= w;
    }
    // Rounding left x at the very end: the last pattern with a weight.
    items[items.len() - 1].0
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

#[derive(Default)]
struct Tally {
    /// Time spent in operations, summed over the clients.
    busy: Duration,
    operations: u64,
    writes: u64,
    requests: u64,
    request_charge: f64,
    throttled: u64,
    errors: u64,
    consecutive_errors: u64,
    last_error: Option<String>,
    patterns: BTreeMap<String, PatternTally>,
}

impl Tally {
    fn record(&mut self, pattern: &Pattern, result: Result<crate::workbench::PatternRun>) {
        self.operations += 1;
        let entry = self
            .patterns
            .entry(pattern.id.clone())
            .or_insert_with(|| PatternTally {
                title: pattern.title.clone(),
                ..PatternTally::default()
            });
        entry.count += 1;
        if pattern.is_command() {
            self.writes += 1;
        }
        match result {
            Ok(run) => {
                // Setup requests are real requests too: count everything sent.
                let charge: f64 = run.ops.iter().map(|o| o.request_charge).sum();
                self.requests += run.ops.len() as u64;
                self.request_charge += charge;
                entry.request_charge += charge;
                self.throttled += run.throttled;
                self.consecutive_errors = 0;
            }
            Err(e) => {
                if e.status == StatusCode::TooManyRequests {
                    self.throttled += 1;
                }
                self.errors += 1;
                self.consecutive_errors += 1;
                self.last_error = Some(format!("{}: {}", pattern.id, e.message));
            }
        }
    }
}
