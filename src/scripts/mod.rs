//! Server-side JavaScript: stored procedures, triggers and user-defined functions run in an
//! embedded QuickJS-ng engine (`rquickjs`, built from its C sources with the system
//! compiler).
//!
//! The layer sits between the query engine and the engine facade (DESIGN.md §9): the
//! engine opens the store write transaction an execution runs in and hands this layer a
//! [`Host`] that performs the script's database operations in it; this layer knows
//! JavaScript and the service's server-side API (`getContext()`, the collection's document
//! operations with callbacks and `isAccepted`, request and response bodies, the `__`
//! shorthand, `console.log`; `prelude.js`), never the store.
//!
//! Each execution runs on a script thread of the `pool` in a context of its own (so no
//! global of one execution is seen by the next), bounded by [`Limits`] set afresh on the
//! thread's runtime: memory, stack, and the service's 5-second budget through the interrupt
//! handler. The script's operations come back to the calling thread over a channel, so the
//! write transaction never leaves the thread that opened it. UDFs ([`udf`]) are pure and
//! run on the query's own thread.

mod pool;
mod runtime;
pub mod udf;

use std::sync::{OnceLock, mpsc};
use std::time::Duration;

use rquickjs::module::WriteOptions;
use rquickjs::{Context, Ctx, Function, Module, Runtime};
use serde_json::{Map, Value, json};

use crate::error::{Error, Result, StatusCode};
pub use runtime::Limits;
use runtime::{Engine, FILE_NAME, Meter, Thrown, internal, timeout_error};

const PRELUDE: &str = include_str!("prelude.js");

/// A script's body is one function expression; it is compiled inside this wrapper so that
/// compiling never runs any of it, and positions on its first line are shifted back by the
/// wrapper's length.
const WRAP_OPEN: &str = "(function(){return (";
const WRAP_CLOSE: &str = "\n);})";

/// What a script runs as: what it may set and what it sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    StoredProcedure,
    PreTrigger,
    PostTrigger,
}

/// One execution: the script, its arguments and the messages it sees.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub role: Role,
    pub body: String,
    /// A stored procedure's parameters (triggers take none).
    pub args: Vec<Value>,
    /// The request body: the item a triggered write carries.
    pub request: Option<Value>,
    /// The response body: the item a post-triggered write stored.
    pub response: Option<Value>,
    /// The container's `_self` and name-based links (`getSelfLink`, `getAltLink`).
    pub self_link: String,
    pub alt_link: String,
}

/// What a successful execution leaves.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The response body as the script set it (`None` when it set none).
    pub response: Option<Value>,
    /// The request body, as a pre-trigger may have changed it.
    pub request: Option<Value>,
    /// `console.log` lines, newline-separated.
    pub log: String,
    /// Work done, in interrupt periods (the CPU component of the charge).
    pub ticks: u64,
    pub elapsed: Duration,
}

/// A document operation a script asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    Create {
        link: String,
        doc: Value,
        options: Map<String, Value>,
    },
    Upsert {
        link: String,
        doc: Value,
        options: Map<String, Value>,
    },
    Replace {
        link: String,
        doc: Value,
        options: Map<String, Value>,
    },
    Delete {
        link: String,
        options: Map<String, Value>,
    },
    Read {
        link: String,
        options: Map<String, Value>,
    },
    /// `queryDocuments`, `readDocuments` (as `SELECT * FROM root`) and the fluent helpers.
    Query {
        link: String,
        query: String,
        /// `(name with @, value)`.
        parameters: Vec<(String, Value)>,
        options: Map<String, Value>,
    },
}

/// The host's answer to an operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The budget is running low: the operation was not performed and its callback will
    /// not run (`isAccepted` is false).
    NotAccepted,
    /// Done: the resource (or the page of documents) and the response options
    /// (`continuation` for queries).
    Done {
        result: Value,
        options: Map<String, Value>,
    },
    /// Performed and failed: the callback gets an error with the status as `number`.
    Failed(Error),
}

/// What performs a script's operations: the engine, in the execution's transaction.
pub trait Host {
    fn perform(&mut self, op: Operation) -> Reply;
}

/// Checks that `body` compiles as one function, without running any of it. A syntax error
/// is a 400 with the engine's message and the position in `body`.
pub fn compile(body: &str) -> Result<()> {
    let engine = Engine::new(Limits {
        time: Duration::from_secs(1),
        ..Limits::default()
    })?;
    engine.context.with(|ctx| compiled(&ctx, body).map(|_| ()))
}

/// `body` compiled to its function value.
pub(crate) fn compiled<'js>(ctx: &Ctx<'js>, body: &str) -> Result<rquickjs::Value<'js>> {
    let source = format!("{WRAP_OPEN}{body}{WRAP_CLOSE}");
    let mut options = rquickjs::context::EvalOptions::default();
    options.global = true;
    options.filename = Some(FILE_NAME.to_string());
    let outer: Function = ctx
        .eval_with_options(source, options)
        .map_err(|e| compile_error(Thrown::catch(ctx, e)))?;
    let value: rquickjs::Value = outer
        .call(())
        .map_err(|e| compile_error(Thrown::catch(ctx, e)))?;
    if !value.is_function() {
        return Err(Error::bad_request(
            "The script's body must be one JavaScript function, such as \
             `function name(arg) { ... }`",
        ));
    }
    Ok(value)
}

fn compile_error(thrown: Thrown) -> Error {
    let name = if thrown.name.is_empty() {
        "SyntaxError".to_string()
    } else {
        thrown.name
    };
    let mut message = format!(
        "Encountered exception while compiling Javascript. Exception = {name}: {}",
        thrown.message
    );
    let mut err = Error::bad_request(String::new());
    if let Some((line, column)) = thrown.position {
        let column = if line == 1 {
            column.saturating_sub(WRAP_OPEN.len() as u32).max(1)
        } else {
            column
        };
        message.push_str(&format!(
            "\r\nSource information: line: {line}, column: {column}"
        ));
        err = err.at(line, column);
    }
    err.message = message;
    err
}

/// Messages between the script's thread and the host's.
enum ToHost {
    Perform(Operation, mpsc::Sender<Reply>),
    Finished(Result<Outcome>),
}

/// Runs one script to completion, its operations performed by `host` on this thread.
/// A thrown error or `abort` is `Err` (the caller rolls back); so is running out of time.
pub fn execute(invocation: Invocation, limits: Limits, host: &mut dyn Host) -> Result<Outcome> {
    let (to_host, from_script) = mpsc::channel::<ToHost>();
    let worker = pool::Worker::start(pool::Job {
        invocation,
        limits,
        to_host,
    })?;
    let mut outcome = None;
    for message in from_script {
        match message {
            ToHost::Perform(op, reply) => {
                let _ = reply.send(host.perform(op));
            }
            ToHost::Finished(result) => {
                outcome = Some(result);
                break;
            }
        }
    }
    match outcome {
        Some(outcome) => {
            worker.release();
            outcome
        }
        // The thread went away mid-execution (a panic in the engine): it is not reused,
        // and the caller rolls back as for any failed script.
        None => Err(Error::internal(
            "the script's thread ended without an outcome",
        )),
    }
}

/// The script's side, on a script thread: a new context on `runtime` armed with `limits`,
/// the server-side API, the script and its callbacks.
fn run(
    runtime: &Runtime,
    invocation: Invocation,
    limits: Limits,
    to_host: mpsc::Sender<ToHost>,
) -> Result<Outcome> {
    let meter = Meter::arm(runtime, limits);
    let context = Context::full(runtime).map_err(internal)?;
    let result = context.with(|ctx| -> Result<Value> {
        install_host(&ctx, to_host)?;
        load_prelude(&ctx)?;
        let function = compiled(&ctx, &invocation.body)?;
        let globals = ctx.globals();
        let stopped = |ctx: &Ctx, e: rquickjs::Error| -> Error {
            let thrown = Thrown::catch(ctx, e);
            if meter.timed_out() {
                timeout_error(&limits)
            } else {
                Error::internal(format!("JavaScript engine: {}", thrown.message))
            }
        };
        let start: Function = globals.get("__cosmoscope_start").map_err(internal)?;
        let drain: Function = globals.get("__cosmoscope_drain").map_err(internal)?;
        let finish: Function = globals.get("__cosmoscope_finish").map_err(internal)?;
        start
            .call::<_, ()>((function, input_json(&invocation)))
            .map_err(|e| stopped(&ctx, e))?;
        loop {
            let ran: bool = drain.call(()).map_err(|e| stopped(&ctx, e))?;
            let mut jobs = false;
            while ctx.execute_pending_job() {
                jobs = true;
            }
            if meter.timed_out() {
                return Err(timeout_error(&limits));
            }
            if !ran && !jobs {
                break;
            }
        }
        let out: String = finish.call(()).map_err(|e| stopped(&ctx, e))?;
        serde_json::from_str(&out)
            .map_err(|e| Error::internal(format!("script outcome is not JSON: {e}")))
    })?;
    outcome(result, meter.ticks(), meter.started.elapsed())
}

/// Evaluates the server-side API (`prelude.js`) in `ctx` from the bytecode compiled once
/// per process: loading it costs a fraction of compiling its text.
fn load_prelude(ctx: &Ctx<'_>) -> Result<()> {
    let api_error = |ctx: &Ctx, e: rquickjs::Error| {
        Error::internal(format!(
            "server-side API: {}",
            Thrown::catch(ctx, e).message
        ))
    };
    let bytecode = prelude_bytecode()?;
    // SAFETY: `bytecode` is what `Module::write` produced from PRELUDE in this process,
    // with this same QuickJS build: valid bytecode, as `Module::load` requires.
    let module = unsafe { Module::load(ctx.clone(), bytecode) }.map_err(|e| api_error(ctx, e))?;
    let (_, evaluated) = module.eval().map_err(|e| api_error(ctx, e))?;
    evaluated.finish::<()>().map_err(|e| api_error(ctx, e))
}

/// `prelude.js` compiled as a module, once.
fn prelude_bytecode() -> Result<&'static [u8]> {
    static BYTECODE: OnceLock<std::result::Result<Vec<u8>, String>> = OnceLock::new();
    BYTECODE
        .get_or_init(|| {
            let runtime = Runtime::new().map_err(|e| e.to_string())?;
            let context = Context::full(&runtime).map_err(|e| e.to_string())?;
            context.with(|ctx| {
                Module::declare(ctx.clone(), "prelude", PRELUDE)
                    .and_then(|m| m.write(WriteOptions::default()))
                    .map_err(|e| Thrown::catch(&ctx, e).message)
            })
        })
        .as_deref()
        .map_err(|e| Error::internal(format!("server-side API: {e}")))
}

/// The JSON `__cosmoscope_start` takes.
fn input_json(inv: &Invocation) -> String {
    let mut input = json!({
        "kind": match inv.role {
            Role::StoredProcedure => "sproc",
            Role::PreTrigger => "pre",
            Role::PostTrigger => "post",
        },
        "args": inv.args,
        "selfLink": inv.self_link,
        "altLink": inv.alt_link,
    });
    if let Some(request) = &inv.request {
        input["request"] = request.clone();
    }
    if let Some(response) = &inv.response {
        input["response"] = response.clone();
    }
    input.to_string()
}

/// The native function behind every document operation: the operation goes to the host's
/// thread and the reply comes back as JSON for `prelude.js`.
fn install_host(ctx: &Ctx<'_>, to_host: mpsc::Sender<ToHost>) -> Result<()> {
    let call = move |op: String, args: String| -> String {
        let reply = match parse_operation(&op, &args) {
            Ok(operation) => {
                let (tx, rx) = mpsc::channel();
                match to_host.send(ToHost::Perform(operation, tx)) {
                    Ok(()) => rx.recv().unwrap_or_else(|_| {
                        Reply::Failed(Error::internal("the host stopped answering"))
                    }),
                    Err(_) => Reply::Failed(Error::internal("the host stopped answering")),
                }
            }
            Err(e) => Reply::Failed(e),
        };
        reply_json(reply)
    };
    let function = Function::new(ctx.clone(), call).map_err(internal)?;
    ctx.globals().set("__host_call", function).map_err(internal)
}

fn parse_operation(op: &str, args: &str) -> Result<Operation> {
    let mut args: Map<String, Value> = serde_json::from_str(args)
        .map_err(|e| Error::bad_request(format!("invalid arguments to {op}: {e}")))?;
    let link = match args.remove("link") {
        Some(Value::String(s)) => s,
        _ => {
            return Err(Error::bad_request(format!(
                "{op}: the first argument must be a link string (such as \
                 getContext().getCollection().getSelfLink())"
            )));
        }
    };
    let options = match args.remove("options") {
        Some(Value::Object(o)) => o,
        _ => Map::new(),
    };
    let doc = args.remove("doc").unwrap_or(Value::Null);
    Ok(match op {
        "create" => Operation::Create { link, doc, options },
        "upsert" => Operation::Upsert { link, doc, options },
        "replace" => Operation::Replace { link, doc, options },
        "delete" => Operation::Delete { link, options },
        "read" => Operation::Read { link, options },
        "query" => {
            let spec = args.remove("query").unwrap_or(Value::Null);
            let query = spec
                .get("query")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let parameters = spec
                .get("parameters")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .filter_map(|p| {
                            let name = p.get("name")?.as_str()?.to_string();
                            Some((name, p.get("value").cloned().unwrap_or(Value::Null)))
                        })
                        .collect()
                })
                .unwrap_or_default();
            Operation::Query {
                link,
                query,
                parameters,
                options,
            }
        }
        other => {
            return Err(Error::internal(format!("unknown script operation {other}")));
        }
    })
}

fn reply_json(reply: Reply) -> String {
    match reply {
        Reply::NotAccepted => json!({"accepted": false}),
        Reply::Done { result, options } => {
            json!({"accepted": true, "result": result, "options": options})
        }
        Reply::Failed(e) => json!({"accepted": true, "error": {
            "number": e.status.as_u16(),
            "code": e.code(),
            "substatus": e.substatus,
            "message": e.message,
        }}),
    }
    .to_string()
}

/// The outcome JSON of `__cosmoscope_finish`, or the script's error as the service
/// answers it.
fn outcome(mut result: Value, ticks: u64, elapsed: Duration) -> Result<Outcome> {
    let log = result
        .get("log")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(error) = result.get("error") {
        return Err(script_error(error));
    }
    Ok(Outcome {
        response: result.get_mut("response").map(Value::take),
        request: result.get_mut("request").map(Value::take),
        log,
        ticks,
        elapsed,
    })
}

/// A thrown value as the service reports it: an error that came from an operation keeps
/// its status (a 409 from a create stays a 409); anything else is a 400 with the script's
/// message and stack.
fn script_error(error: &Value) -> Error {
    let text = |k: &str| error.get(k).and_then(Value::as_str).unwrap_or_default();
    let status = error
        .get("number")
        .and_then(Value::as_u64)
        .and_then(service_status);
    let exception = match text("name") {
        "" => text("message").to_string(),
        name => format!("{name}: {}", text("message")),
    };
    let mut message =
        format!("Encountered exception while executing function. Exception = {exception}");
    let stack = text("stack");
    if !stack.is_empty() {
        message.push_str(&format!("\r\nStack trace: {}", stack.trim_end()));
    }
    let mut err = Error::new(status.unwrap_or(StatusCode::BadRequest), message);
    if let Some((line, column)) = runtime::position_in(stack) {
        err = err.at(line, column);
    }
    if let Some(sub) = error.get("substatus").and_then(Value::as_u64) {
        err = err.with_substatus(sub as u32);
    }
    err
}

/// The statuses a script's error may carry through (the service's `ErrorCodes`).
fn service_status(n: u64) -> Option<StatusCode> {
    Some(match n {
        400 => StatusCode::BadRequest,
        403 => StatusCode::Forbidden,
        404 => StatusCode::NotFound,
        408 => StatusCode::RequestTimeout,
        409 => StatusCode::Conflict,
        412 => StatusCode::PreconditionFailed,
        413 => StatusCode::RequestEntityTooLarge,
        429 => StatusCode::TooManyRequests,
        449 => StatusCode::RetryWith,
        500 => StatusCode::InternalServerError,
        _ => return None,
    })
}
