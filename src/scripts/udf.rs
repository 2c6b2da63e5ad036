//! User-defined functions for one query execution: the container's UDF bodies compiled in
//! one runtime on the query's thread, called per row with JSON-converted arguments. UDFs
//! are pure: they see no context object, and the runtime is gone when the query ends.

use std::cell::RefCell;
use std::collections::HashMap;

use rquickjs::{Function, Persistent, Value as JsValue};

use super::runtime::{Engine, Thrown, internal, timeout_error};
use super::{Limits, compiled};
use crate::error::{Error, Result};
use crate::query::eval::udf::UdfCall;
use crate::query::eval::value::Val;

/// The UDFs a query calls, compiled and ready.
pub struct Udfs {
    // Field order: the functions must drop before the runtime that owns them.
    functions: RefCell<HashMap<String, Persistent<Function<'static>>>>,
    engine: Engine,
}

impl Udfs {
    /// Compiles `bodies` (`(name, JavaScript function)`) in a fresh runtime bounded by
    /// `limits`; its time budget covers the whole query.
    pub fn new(bodies: &[(String, String)], limits: Limits) -> Result<Udfs> {
        let engine = Engine::new(limits)?;
        let mut functions = HashMap::new();
        engine.context.with(|ctx| -> Result<()> {
            // No context object for UDFs: getContext is not defined in their runtime.
            for (name, body) in bodies {
                let value = compiled(&ctx, body)?;
                let function = value.into_function().ok_or_else(|| {
                    Error::bad_request(format!("user-defined function {name} is not a function"))
                })?;
                functions.insert(name.clone(), Persistent::save(&ctx, function));
            }
            Ok(())
        })?;
        Ok(Udfs {
            functions: RefCell::new(functions),
            engine,
        })
    }
}

impl UdfCall for Udfs {
    fn call(&self, name: &str, args: &[Val]) -> Result<Val> {
        let functions = self.functions.borrow();
        let function = functions.get(name).ok_or_else(|| {
            Error::bad_request(format!(
                "udf.{name} is not a user-defined function of this container"
            ))
        })?;
        self.engine.context.with(|ctx| -> Result<Val> {
            let function = function.clone().restore(&ctx).map_err(internal)?;
            let mut js_args = rquickjs::function::Args::new(ctx.clone(), args.len());
            for a in args {
                let v: JsValue = match a.to_json() {
                    Some(json) => ctx.json_parse(json.to_string()).map_err(internal)?,
                    None => JsValue::new_undefined(ctx.clone()),
                };
                js_args.push_arg(v).map_err(internal)?;
            }
            let failed = |ctx: &rquickjs::Ctx, e: rquickjs::Error| -> Error {
                if self.engine.meter.timed_out() {
                    return timeout_error(&self.engine.meter.limits);
                }
                let thrown = Thrown::catch(ctx, e);
                Error::bad_request(format!(
                    "Encountered exception while executing Javascript. Exception = {}{}{} \
                     (in udf.{name})",
                    thrown.name,
                    if thrown.name.is_empty() { "" } else { ": " },
                    thrown.message
                ))
            };
            let result: JsValue = function.call_arg(js_args).map_err(|e| failed(&ctx, e))?;
            if result.is_undefined() {
                return Ok(Val::Undefined);
            }
            let text = ctx
                .json_stringify(result)
                .map_err(|e| failed(&ctx, e))?
                .map(|s| s.to_string())
                .transpose()
                .map_err(internal)?;
            Ok(match text {
                Some(text) => serde_json::from_str(&text)
                    .map(|v: serde_json::Value| Val::from_json(&v))
                    .unwrap_or(Val::Undefined),
                None => Val::Undefined,
            })
        })
    }
}
