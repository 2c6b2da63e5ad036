//! Commands on a container's server-side scripts: `sproc`, `trigger` and `udf`
//! (create, replace, read, list, delete) and `sproc execute`.

use std::io::Read;

use serde_json::Value;

use super::args::{
    ScriptCommand, ScriptName, ScriptSource, SprocCommand, TriggerCommand, TriggerOperationArg,
    TriggerSource, TriggerTypeArg,
};
use super::{CliResult, Failure, parse_json_arg, print_json, split_target};
use crate::engine::{Backend, ScriptKind, ScriptSpec, SprocRequest, TriggerOperation, TriggerType};

/// What every kind of script can be asked, with the kind it is asked of.
enum Action {
    Put(ScriptSpec, String, bool),
    Read(ScriptName),
    List(String),
    Delete(ScriptName),
}

pub fn sproc(engine: &dyn Backend, cmd: SprocCommand) -> CliResult {
    match cmd {
        SprocCommand::Resource(cmd) => script(engine, ScriptKind::StoredProcedure, cmd),
        SprocCommand::Execute {
            target,
            name,
            pk,
            params,
            log,
        } => {
            let (db, c) = split_target(&target)?;
            let params = params
                .iter()
                .map(|p| parse_json_arg("--param", p))
                .collect::<CliResult<Vec<Value>>>()?;
            let response = engine.execute_stored_procedure(
                db,
                c,
                &name,
                &SprocRequest {
                    partition_key: parse_json_arg("--pk", &pk)?,
                    params,
                    enable_log: log,
                },
            )?;
            print_json(&response.to_json());
            Ok(())
        }
    }
}

pub fn udf(engine: &dyn Backend, cmd: ScriptCommand) -> CliResult {
    script(engine, ScriptKind::UserDefinedFunction, cmd)
}

/// The resource commands of a stored procedure or a UDF.
fn script(engine: &dyn Backend, kind: ScriptKind, cmd: ScriptCommand) -> CliResult {
    let action = match cmd {
        ScriptCommand::Create(src) => put(kind, src, false)?,
        ScriptCommand::Replace(src) => put(kind, src, true)?,
        ScriptCommand::Read(name) => Action::Read(name),
        ScriptCommand::List { target } => Action::List(target),
        ScriptCommand::Delete(name) => Action::Delete(name),
    };
    run(engine, kind, action)
}

pub fn trigger(engine: &dyn Backend, cmd: TriggerCommand) -> CliResult {
    let kind = ScriptKind::Trigger;
    let action = match cmd {
        TriggerCommand::Create(src) => put_trigger(src, false)?,
        TriggerCommand::Replace(src) => put_trigger(src, true)?,
        TriggerCommand::Read(name) => Action::Read(name),
        TriggerCommand::List { target } => Action::List(target),
        TriggerCommand::Delete(name) => Action::Delete(name),
    };
    run(engine, kind, action)
}

fn put(kind: ScriptKind, src: ScriptSource, replace: bool) -> CliResult<Action> {
    let (spec, target) = spec(kind, src)?;
    Ok(Action::Put(spec, target, replace))
}

/// The script `src` names, and its container.
fn spec(kind: ScriptKind, src: ScriptSource) -> CliResult<(ScriptSpec, String)> {
    let body = read_body(src.file.as_deref())?;
    Ok((ScriptSpec::new(kind, src.name, body), src.target))
}

fn put_trigger(src: TriggerSource, replace: bool) -> CliResult<Action> {
    let (mut spec, target) = spec(ScriptKind::Trigger, src.source)?;
    spec.trigger_type = Some(match src.trigger_type {
        TriggerTypeArg::Pre => TriggerType::Pre,
        TriggerTypeArg::Post => TriggerType::Post,
    });
    spec.trigger_operation = Some(match src.operation {
        TriggerOperationArg::All => TriggerOperation::All,
        TriggerOperationArg::Create => TriggerOperation::Create,
        TriggerOperationArg::Replace => TriggerOperation::Replace,
        TriggerOperationArg::Delete => TriggerOperation::Delete,
        TriggerOperationArg::Upsert => TriggerOperation::Upsert,
    });
    Ok(Action::Put(spec, target, replace))
}

fn run(engine: &dyn Backend, kind: ScriptKind, action: Action) -> CliResult {
    match action {
        Action::Put(spec, target, replace) => {
            let (db, c) = split_target(&target)?;
            let info = if replace {
                engine.replace_script(db, c, &spec)?
            } else {
                engine.create_script(db, c, &spec)?
            };
            print_json(&info.to_json());
        }
        Action::Read(ScriptName { target, name }) => {
            let (db, c) = split_target(&target)?;
            print_json(&engine.read_script(db, c, kind, &name)?.to_json());
        }
        Action::List(target) => {
            let (db, c) = split_target(&target)?;
            let all: Vec<Value> = engine
                .list_scripts(db, c, kind)?
                .iter()
                .map(|s| s.to_json())
                .collect();
            print_json(&all);
        }
        Action::Delete(ScriptName { target, name }) => {
            let (db, c) = split_target(&target)?;
            engine.delete_script(db, c, kind, &name)?;
            print_json(&serde_json::json!({"deleted": name, "kind": kind.segment()}));
        }
    }
    Ok(())
}

/// The script's text from `file`, or stdin when there is none or it is "-".
fn read_body(file: Option<&std::path::Path>) -> CliResult<String> {
    match file {
        Some(path) if path.as_os_str() != "-" => std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display()))),
        _ => {
            let mut body = String::new();
            std::io::stdin()
                .read_to_string(&mut body)
                .map_err(|e| Failure::Usage(format!("cannot read the script from stdin: {e}")))?;
            Ok(body)
        }
    }
}
