//! The threads stored procedures and triggers run on, kept between executions with a warm
//! runtime each.
//!
//! Profiled (`perf record --call-graph dwarf` on the scripts bench's `sproc/create_one`),
//! a trivial procedure spent most of its script-side time compiling the server-side API's
//! text, then freeing the runtime and spawning its thread; the document write and its
//! commit were the rest. Now a thread waits for its next job, its runtime is armed afresh
//! for each (memory and stack limits, a new deadline and work counter: `runtime::Meter`),
//! each execution gets a new context (globals do not carry over) with the API loaded from
//! bytecode, and a runtime whose execution failed (a throw, the time budget, the memory
//! limit) is dropped and replaced, so nothing a failed script left behind is reused.

use std::sync::{Mutex, MutexGuard, PoisonError, mpsc};

use rquickjs::Runtime;

use super::runtime::{THREAD_STACK, internal};
use super::{Invocation, Limits, ToHost, run};
use crate::error::{Error, Result};

/// One execution for a script thread.
pub(super) struct Job {
    pub invocation: Invocation,
    pub limits: Limits,
    pub to_host: mpsc::Sender<ToHost>,
}

/// A script thread, by the queue of its jobs.
pub(super) struct Worker {
    jobs: mpsc::Sender<Job>,
}

/// Threads waiting for a job.
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// Idle threads kept at most (each holds its stack and a runtime); more are made while
/// more scripts run at once, and end when they come back to a full pool.
const MAX_IDLE: usize = 4;

impl Worker {
    /// Hands `job` to an idle thread, or to a new one when none is idle.
    pub fn start(mut job: Job) -> Result<Worker> {
        loop {
            let Some(worker) = idle().pop() else { break };
            match worker.jobs.send(job) {
                Ok(()) => return Ok(worker),
                // That thread has ended: try the next.
                Err(mpsc::SendError(back)) => job = back,
            }
        }
        let worker = Worker::spawn()?;
        worker
            .jobs
            .send(job)
            .map_err(|_| Error::internal("a new script thread ended at once"))?;
        Ok(worker)
    }

    /// Gives a thread whose job has finished back to the pool.
    pub fn release(self) {
        let mut idle = idle();
        if idle.len() < MAX_IDLE {
            idle.push(self);
        }
    }

    fn spawn() -> Result<Worker> {
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("script".into())
            .stack_size(THREAD_STACK)
            .spawn(move || serve(queue))
            .map_err(|e| Error::internal(format!("cannot start a script thread: {e}")))?;
        Ok(Worker { jobs })
    }
}

fn idle() -> MutexGuard<'static, Vec<Worker>> {
    IDLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A script thread: runs its jobs one after another until its queue is dropped.
fn serve(queue: mpsc::Receiver<Job>) {
    let mut warm: Option<Runtime> = None;
    for job in queue {
        let runtime = match warm.take() {
            Some(runtime) => runtime,
            None => match Runtime::new() {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = job.to_host.send(ToHost::Finished(Err(internal(e))));
                    continue;
                }
            },
        };
        let outcome = run(&runtime, job.invocation, job.limits, job.to_host.clone());
        let clean = outcome.is_ok();
        let _ = job.to_host.send(ToHost::Finished(outcome));
        if clean {
            // What the finished context left in cycles is collected now, off the caller's
            // time; the next job arms its own deadline.
            runtime.set_interrupt_handler(None);
            runtime.run_gc();
            warm = Some(runtime);
        }
    }
}
