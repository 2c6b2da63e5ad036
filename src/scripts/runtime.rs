//! One QuickJS runtime with the service's bounds: a memory limit, a stack limit and a
//! wall-clock deadline enforced by the interrupt handler, which also counts the work done
//! (QuickJS calls it every few thousand branches and calls), the deterministic measure of
//! a script's CPU the RU charge uses.
//!
//! Measured on this machine (2 cores; release build): `Runtime::new` 21 µs, a full context
//! 250 µs, a trivial script in an existing context 15 µs. Compiling the server-side API
//! (`prelude.js`) in every execution cost more than all of these together (the profile in
//! `pool`), which is why stored procedures and triggers run on kept runtimes with the API
//! loaded from bytecode.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rquickjs::{Context, Ctx, Runtime, Value};

use crate::error::{Error, Result, StatusCode};

/// The bounds of one execution.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock budget: the service's 5 seconds (reference/cosmos.md §7.1).
    pub time: Duration,
    /// Heap a script may allocate.
    pub memory: usize,
    /// JavaScript stack depth, in bytes of native stack.
    pub stack: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            time: Duration::from_secs(5),
            memory: 128 << 20,
            stack: 1 << 20,
        }
    }
}

/// Native stack of the thread a script runs on: room above the JavaScript stack limit for
/// QuickJS's own frames and ours.
pub(crate) const THREAD_STACK: usize = 8 << 20;

/// A runtime and its context, with the deadline it enforces: what compiling a body at
/// creation and a query's UDFs use (stored procedures and triggers run on `pool`'s warm
/// runtimes instead).
pub(crate) struct Engine {
    // Field order: the context must drop before its runtime.
    pub context: Context,
    _runtime: Runtime,
    pub meter: Meter,
}

impl Engine {
    pub fn new(limits: Limits) -> Result<Engine> {
        let runtime = Runtime::new().map_err(internal)?;
        let meter = Meter::arm(&runtime, limits);
        let context = Context::full(&runtime).map_err(internal)?;
        Ok(Engine {
            context,
            _runtime: runtime,
            meter,
        })
    }
}

/// One execution's bounds as set on its runtime: the clock it started on and the work it
/// has done.
pub(crate) struct Meter {
    pub started: Instant,
    pub limits: Limits,
    ticks: Arc<AtomicU64>,
}

impl Meter {
    /// Sets `runtime`'s memory and stack limits and a deadline `limits.time` from now, for
    /// an execution that starts now. A runtime that is used again is armed again, so every
    /// execution gets the whole of its budget and a count of its own.
    pub fn arm(runtime: &Runtime, limits: Limits) -> Meter {
        runtime.set_memory_limit(limits.memory);
        runtime.set_max_stack_size(limits.stack);
        let started = Instant::now();
        let deadline = started + limits.time;
        let ticks = Arc::new(AtomicU64::new(0));
        let counter = ticks.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || {
            counter.fetch_add(1, Ordering::Relaxed);
            Instant::now() >= deadline
        })));
        Meter {
            started,
            limits,
            ticks,
        }
    }

    /// Interrupt-handler calls so far: work done, in units of QuickJS's interrupt period.
    pub fn ticks(&self) -> u64 {
        self.ticks.load(Ordering::Relaxed)
    }

    pub fn timed_out(&self) -> bool {
        self.started.elapsed() >= self.limits.time
    }
}

pub(crate) fn internal(e: rquickjs::Error) -> Error {
    Error::internal(format!("JavaScript engine: {e}"))
}

/// The file name scripts are compiled under, so positions read `script:LINE:COLUMN`.
pub(crate) const FILE_NAME: &str = "script";

/// What went wrong in a JavaScript call: the pending exception's message and the
/// position its stack names (`at script:LINE:COLUMN`).
pub(crate) struct Thrown {
    pub name: String,
    pub message: String,
    pub position: Option<(u32, u32)>,
}

impl Thrown {
    pub fn catch(ctx: &Ctx<'_>, err: rquickjs::Error) -> Thrown {
        if !matches!(err, rquickjs::Error::Exception) {
            return Thrown {
                name: String::new(),
                message: err.to_string(),
                position: None,
            };
        }
        let value: Value = ctx.catch();
        let text = |v: Option<Value>| -> String {
            v.and_then(|v| v.as_string().and_then(|s| s.to_string().ok()))
                .unwrap_or_default()
        };
        match value.as_object() {
            Some(obj) => {
                let stack = text(obj.get("stack").ok());
                Thrown {
                    name: text(obj.get("name").ok()),
                    message: text(obj.get("message").ok()),
                    position: position_in(&stack),
                }
            }
            None => Thrown {
                name: String::new(),
                message: value
                    .as_string()
                    .and_then(|s| s.to_string().ok())
                    .unwrap_or_else(|| format!("{value:?}")),
                position: None,
            },
        }
    }
}

/// The first `script:LINE:COLUMN` in a stack trace.
pub(crate) fn position_in(stack: &str) -> Option<(u32, u32)> {
    let at = stack.find(&format!("{FILE_NAME}:"))? + FILE_NAME.len() + 1;
    let mut parts = stack[at..].split(|c: char| !c.is_ascii_digit());
    let line = parts.next()?.parse().ok()?;
    let column = parts.next()?.parse().ok()?;
    Some((line, column))
}

/// The service's answer to a script stopped at its time budget.
pub(crate) fn timeout_error(limits: &Limits) -> Error {
    // 408 RequestTimeout is our choice: the references give the 5-second bound but not the
    // status the service answers when a script overruns it.
    Error::new(
        StatusCode::RequestTimeout,
        format!(
            "The script exceeded its allotted time of {} seconds and was stopped; nothing it \
             wrote was kept. Long work must check the isAccepted result of each operation and \
             return its progress, so the caller can continue in another execution.",
            limits.time.as_secs_f64()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_come_from_the_stack() {
        assert_eq!(position_in("    at script:3:14\n"), Some((3, 14)));
        assert_eq!(position_in("    at <eval> (script:1:2)\n"), Some((1, 2)));
        assert_eq!(position_in("nothing"), None);
    }
}
