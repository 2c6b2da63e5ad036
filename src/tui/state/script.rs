//! A container's server-side scripts as the explorer shows them: the script open in the
//! item view (its body, scrolled, and the last execution of a stored procedure), the form
//! that executes one, and the starting text of a new script.

use serde_json::Value;

use super::editor::TextBuffer;
use crate::engine::{ScriptInfo, ScriptKind, SprocResponse, TriggerOperation, TriggerType};
use crate::error::Error;

/// The kinds in the order the tree lists their groups.
pub const KINDS: [ScriptKind; 3] = [
    ScriptKind::StoredProcedure,
    ScriptKind::Trigger,
    ScriptKind::UserDefinedFunction,
];

/// The tree group's name for a kind.
pub fn group_label(kind: ScriptKind) -> &'static str {
    match kind {
        ScriptKind::StoredProcedure => "Stored procedures",
        ScriptKind::Trigger => "Triggers",
        ScriptKind::UserDefinedFunction => "UDFs",
    }
}

/// `pre · create`: when a trigger runs and on which writes.
pub fn trigger_label(t: Option<TriggerType>, op: Option<TriggerOperation>) -> String {
    let t = match t {
        Some(TriggerType::Pre) => "pre",
        Some(TriggerType::Post) => "post",
        None => "",
    };
    let op = op.map_or(String::new(), |o| format!("{o:?}").to_lowercase());
    match (t.is_empty(), op.is_empty()) {
        (false, false) => format!("{t} · {op}"),
        _ => format!("{t}{op}"),
    }
}

/// The outcome of the last execution of the stored procedure shown, with what it was
/// asked with.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    pub partition_key: Value,
    pub params: Vec<Value>,
    pub result: Result<SprocResponse, Error>,
}

/// How a line of an execution's report reads: drawing colours it by this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportLine {
    Heading,
    Plain,
    Error,
}

impl Execution {
    /// The report shown under the body: what it was asked with, the charge and range,
    /// the response body, the script log; or the status and the script's error.
    pub fn report(&self) -> Vec<(ReportLine, String)> {
        use ReportLine::*;
        let params = Value::Array(self.params.clone());
        let mut out = vec![
            (Heading, "── last execution ──".to_string()),
            (
                Plain,
                format!("partition key {} · parameters {params}", self.partition_key),
            ),
        ];
        match &self.result {
            Ok(r) => {
                out.push((
                    Plain,
                    format!(
                        "{} RU · range {}",
                        crate::tui::format::fmt_ru(r.request_charge),
                        r.range
                    ),
                ));
                out.push((Heading, "response body:".into()));
                let body = match &r.body {
                    Some(b) => serde_json::to_string_pretty(b).unwrap_or_default(),
                    None => "(none: the script set no body)".into(),
                };
                out.extend(body.lines().map(|l| (Plain, l.to_string())));
                if let Some(log) = &r.log {
                    out.push((Heading, "script log:".into()));
                    if log.is_empty() {
                        out.push((Plain, "(empty)".into()));
                    }
                    out.extend(log.lines().map(|l| (Plain, l.to_string())));
                }
            }
            Err(e) => {
                out.push((
                    Error,
                    format!(
                        "failed ({} {}) · {} RU · nothing it wrote was kept",
                        e.status,
                        e.status.name(),
                        crate::tui::format::fmt_ru(e.request_charge)
                    ),
                ));
                out.extend(
                    e.message
                        .lines()
                        .map(|l| (Error, l.trim_end_matches('\r').to_string())),
                );
            }
        }
        out
    }
}

/// The script open in the item view.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptView {
    pub db: String,
    pub c: String,
    pub info: ScriptInfo,
    /// The first line of the body shown.
    pub scroll: usize,
    pub execution: Option<Execution>,
    /// What the execute form held when it last ran, to fill it again.
    pub last_form: Option<(String, String, bool)>,
}

impl ScriptView {
    pub fn new(db: String, c: String, info: ScriptInfo) -> ScriptView {
        ScriptView {
            db,
            c,
            info,
            scroll: 0,
            execution: None,
            last_form: None,
        }
    }

    /// Every line the view scrolls over: the body, then the last execution's report.
    pub fn line_count(&self) -> usize {
        self.info.body.lines().count() + self.execution.as_ref().map_or(0, |e| e.report().len())
    }
}

/// The script being read for the item view; `then_edit` opens it in `$EDITOR` once read
/// (edit asked for on a tree row whose body is not loaded).
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptRequest {
    pub ticket: u64,
    pub db: String,
    pub c: String,
    pub kind: ScriptKind,
    pub id: String,
    pub then_edit: bool,
}

/// A stored procedure execution under way, with what it was asked with.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingExecution {
    pub ticket: u64,
    pub db: String,
    pub c: String,
    pub id: String,
    pub partition_key: Value,
    pub params: Vec<Value>,
}

/// The stored procedure execution form's fields, in the order Tab walks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecuteField {
    PartitionKey,
    Params,
    Log,
}

/// The execute form: the logical partition (JSON), the parameters (a JSON array) and
/// whether the script's `console.log` output comes back.
#[derive(Debug)]
pub struct ExecuteForm {
    pub db: String,
    pub c: String,
    pub id: String,
    pub partition_key: TextBuffer,
    pub params: TextBuffer,
    pub log: bool,
    pub field: ExecuteField,
}

impl ExecuteForm {
    /// The text field with focus (none on the log switch).
    pub fn text_field(&mut self) -> Option<&mut TextBuffer> {
        match self.field {
            ExecuteField::PartitionKey => Some(&mut self.partition_key),
            ExecuteField::Params => Some(&mut self.params),
            ExecuteField::Log => None,
        }
    }

    /// Moves to the next field (`forward`) or the previous one, stopping at the ends.
    pub fn step(&mut self, forward: bool) {
        use ExecuteField::*;
        self.field = match (self.field, forward) {
            (PartitionKey, true) | (Log, false) => Params,
            (Params | Log, true) => Log,
            (PartitionKey | Params, false) => PartitionKey,
        };
    }

    /// The partition key and the parameters as JSON, or what is wrong with them.
    pub fn parsed(&self) -> Result<(Value, Vec<Value>), String> {
        let pk_text = self.partition_key.text();
        if pk_text.trim().is_empty() {
            return Err(
                "a stored procedure runs in one logical partition: give its key as JSON (\"c-1\", 42, [\"a\",\"b\"])".into(),
            );
        }
        let pk = serde_json::from_str(&pk_text).map_err(|e| {
            format!("the partition key is not JSON ({e}); strings need quotes: \"c-1\"")
        })?;
        let params_text = self.params.text();
        let params = if params_text.trim().is_empty() {
            Vec::new()
        } else {
            match serde_json::from_str(&params_text) {
                Ok(Value::Array(a)) => a,
                Ok(_) => {
                    return Err(
                        "the parameters are a JSON array, one element per argument: [\"a\", 2]"
                            .into(),
                    );
                }
                Err(e) => return Err(format!("the parameters are not JSON ({e})")),
            }
        };
        Ok((pk, params))
    }
}

/// What a new script's body starts as, so the editor opens on something that compiles and
/// shows the shape the service expects.
pub fn template(kind: ScriptKind, id: &str, trigger: Option<TriggerType>) -> String {
    let name = if crate::query::complete::is_word_char(id.chars().next().unwrap_or('_'))
        && id.chars().all(crate::query::complete::is_word_char)
        && !id.starts_with(|c: char| c.is_ascii_digit())
    {
        id
    } else {
        "script"
    };
    match (kind, trigger) {
        (ScriptKind::StoredProcedure, _) => format!(
            "function {name}(name) {{\n    var response = getContext().getResponse();\n    response.setBody(\"Hello, \" + (name || \"world\"));\n}}\n"
        ),
        (ScriptKind::Trigger, Some(TriggerType::Post)) => format!(
            "function {name}() {{\n    var response = getContext().getResponse();\n    var written = response.getBody();\n    // written is the item as stored; throw to undo the write.\n}}\n"
        ),
        (ScriptKind::Trigger, _) => format!(
            "function {name}() {{\n    var request = getContext().getRequest();\n    var item = request.getBody();\n    // change item here; throw to refuse the write.\n    request.setBody(item);\n}}\n"
        ),
        (ScriptKind::UserDefinedFunction, _) => {
            format!("function {name}(value) {{\n    return value;\n}}\n")
        }
    }
}

/// What the new-script prompt's answer names: the id and, for a trigger, when it runs and
/// on which writes (`audit pre create`; `pre all` when left out, as the CLI defaults).
pub fn parse_new(
    kind: ScriptKind,
    answer: &str,
) -> Result<(String, Option<TriggerType>, Option<TriggerOperation>), String> {
    let mut words = answer.split_whitespace();
    let Some(id) = words.next() else {
        return Err(format!("a {} needs a name", kind.noun()));
    };
    if kind != ScriptKind::Trigger {
        return match words.next() {
            None => Ok((id.to_string(), None, None)),
            Some(extra) => Err(format!("a name has no spaces ({extra:?} follows it)")),
        };
    }
    let mut trigger_type = TriggerType::Pre;
    let mut operation = TriggerOperation::All;
    for w in words {
        match w.to_ascii_lowercase().as_str() {
            "pre" => trigger_type = TriggerType::Pre,
            "post" => trigger_type = TriggerType::Post,
            "all" => operation = TriggerOperation::All,
            "create" => operation = TriggerOperation::Create,
            "replace" => operation = TriggerOperation::Replace,
            "delete" => operation = TriggerOperation::Delete,
            "upsert" => operation = TriggerOperation::Upsert,
            other => {
                return Err(format!(
                    "{other:?} is neither pre/post nor an operation (all, create, replace, delete, upsert)"
                ));
            }
        }
    }
    Ok((id.to_string(), Some(trigger_type), Some(operation)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_trigger_names_its_type_and_operation_or_takes_pre_all() {
        let t = ScriptKind::Trigger;
        assert_eq!(
            parse_new(t, "audit post create"),
            Ok((
                "audit".into(),
                Some(TriggerType::Post),
                Some(TriggerOperation::Create)
            ))
        );
        assert_eq!(
            parse_new(t, "stamp"),
            Ok((
                "stamp".into(),
                Some(TriggerType::Pre),
                Some(TriggerOperation::All)
            ))
        );
        assert!(parse_new(t, "x sideways").is_err());
        assert!(parse_new(ScriptKind::StoredProcedure, "a b").is_err());
        assert!(parse_new(ScriptKind::UserDefinedFunction, "  ").is_err());
    }

    #[test]
    fn the_form_wants_a_json_key_and_an_array_of_parameters() {
        let form = |pk: &str, params: &str| ExecuteForm {
            db: "d".into(),
            c: "c".into(),
            id: "p".into(),
            partition_key: TextBuffer::new(pk, false),
            params: TextBuffer::new(params, false),
            log: false,
            field: ExecuteField::PartitionKey,
        };
        assert_eq!(
            form("\"c-1\"", "[1, \"a\"]").parsed(),
            Ok((Value::from("c-1"), vec![Value::from(1), Value::from("a")]))
        );
        assert_eq!(form("7", "").parsed(), Ok((Value::from(7), vec![])));
        assert!(form("c-1", "").parsed().is_err());
        assert!(form("", "").parsed().is_err());
        assert!(form("1", "{\"a\":1}").parsed().is_err());
        let mut f = form("1", "");
        f.step(true);
        f.step(true);
        assert_eq!(f.field, ExecuteField::Log);
        f.step(true);
        assert_eq!(f.field, ExecuteField::Log);
        f.step(false);
        f.step(false);
        f.step(false);
        assert_eq!(f.field, ExecuteField::PartitionKey);
    }
}
