//! Access-pattern suites: which designs to compare, the parameters each iteration draws,
//! and for every pattern the requests each design sends.
//!
//! A suite is a TOML or JSON file (JSON when it starts with `{`). The bundled ones
//! (`sample-data/suites/`) show every feature; in short:
//!
//! ```toml
//! name = "blog"
//! title = "..."
//! [params]                       # generated per iteration, the same in every design
//! newId = { generate = "uuid" }  # uuid, now, username, title, sentence, paragraphs, name, int
//!
//! [[designs]]
//! id = "v1"
//! sample = "blog-v1"             # the bundled set loaded when the database is missing
//! database = "blog-v1"           # default: the sample's name
//! params = { postId = { partitionKeys = "posts" } }   # or { query = "c", sql = "..." },
//!                                                     # or { values = [...] }
//! [[patterns]]
//! id = "Q2"
//! title = "Retrieve a post"
//! workbench = true               # false: only the simulator runs it
//! [[patterns.steps."v1,v2"]]     # one list of steps per design (or comma-separated designs)
//! read = "posts"                 # read | query | create | upsert | replace | patch | delete | batch | execute
//! id = "{postId}"
//! pk = "{postId}"
//! as = "post"                    # bind the result for later steps: {post.userId}
//! # query: sql, params = { name = "{...}" }, pk?, orderBy = "-field"?, take = N?
//! # create/upsert/replace: body;  patch: id, pk, operations, condition?;  delete: id, pk
//! # create/upsert/replace/delete may name triggers: preTrigger = "name", postTrigger = "name"
//! # batch: pk, operations (the SDKs' {operationType, id?, resourceBody?, ifMatch?})
//! # execute: sproc, pk, args (the stored procedure's parameters, in order)
//! # forEach = "list": repeat for each element ({item});  setup = true: not measured
//!
//! [simulate]
//! mix = { Q2 = 20, C3 = 3 }      # the simulator's relative weights per pattern
//! hotParam = "postId"            # --hot-key pins this parameter for that share of writes
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

use super::template::{Template, parse_expr};
use crate::error::{Error, Result};
use crate::samples::registry;

/// The bundled suites, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("blog", include_str!("../../sample-data/suites/blog.toml")),
    (
        "webstore",
        include_str!("../../sample-data/suites/webstore.toml"),
    ),
];

/// A parsed and checked suite.
#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    /// Generated per iteration, the same in every design.
    pub params: Vec<(String, ParamSource)>,
    pub designs: Vec<Design>,
    pub patterns: Vec<Pattern>,
    pub simulate: Option<SimulateSpec>,
}

#[derive(Debug, Clone)]
pub struct Design {
    pub id: String,
    pub title: String,
    /// The bundled sample set that holds this design.
    pub sample: Option<String>,
    pub database: String,
    /// Drawn from this design's data.
    pub params: Vec<(String, ParamSource)>,
}

/// Where a parameter's value comes from each iteration.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamSource {
    Generate(Generate),
    /// A random logical partition key of a container, from its statistics (no request).
    PartitionKeys {
        container: String,
    },
    /// A random document of a query's results (run once before the patterns, not counted).
    Query {
        container: String,
        sql: String,
        limit: usize,
    },
    /// A random element of a fixed list.
    Values(Vec<Value>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Generate {
    Uuid,
    /// The current time, ISO 8601 with milliseconds (the samples' date format).
    Now,
    Username,
    Title,
    /// One to three sentences (a comment).
    Sentence,
    /// Two to six paragraphs (a post).
    Paragraphs,
    /// Two capitalized words (a category or tag name).
    Name,
    Int {
        min: i64,
        max: i64,
    },
}

#[derive(Debug, Clone)]
pub struct Pattern {
    pub id: String,
    pub title: String,
    /// Whether the workbench runs it (the simulator runs every pattern of its mix).
    pub workbench: bool,
    /// Steps per design id.
    pub steps: BTreeMap<String, Vec<Step>>,
}

impl Pattern {
    pub fn steps_for(&self, design: &str) -> Option<&[Step]> {
        self.steps.get(design).map(Vec::as_slice)
    }

    /// A command writes (any measured step of any design writes); otherwise a query.
    pub fn is_command(&self) -> bool {
        self.steps
            .values()
            .flatten()
            .any(|s| !s.setup && s.action.writes())
    }

    /// Whether any measured step of `design` reads parameter `name`.
    pub fn uses(&self, design: &str, name: &str) -> bool {
        self.steps_for(design)
            .into_iter()
            .flatten()
            .filter(|s| !s.setup)
            .any(|s| s.vars().contains(&name))
    }
}

#[derive(Debug, Clone)]
pub struct Step {
    pub action: Action,
    /// Binds the result (`as`).
    pub bind: Option<String>,
    /// Repeats the step for each element of this variable, bound as `item`.
    pub for_each: Option<String>,
    /// Not timed or counted: what the application already knows.
    pub setup: bool,
    /// Client-side sort of a query's documents by a field (descending when true).
    pub order_by: Option<(String, bool)>,
    /// Client-side cut of a query's documents.
    pub take: Option<usize>,
}

impl Step {
    fn vars(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .action
            .templates()
            .iter()
            .flat_map(|t| t.vars())
            .collect();
        out.extend(self.for_each.as_deref());
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Create,
    Upsert,
    Replace,
}

#[derive(Debug, Clone)]
pub enum Action {
    Read {
        container: String,
        id: Template,
        pk: Template,
    },
    Query {
        container: String,
        sql: String,
        params: Vec<(String, Template)>,
        pk: Option<Template>,
    },
    Write {
        kind: WriteKind,
        container: String,
        body: Template,
    },
    Patch {
        container: String,
        id: Template,
        pk: Template,
        operations: Template,
        condition: Option<String>,
    },
    Delete {
        container: String,
        id: Template,
        pk: Template,
    },
    Batch {
        container: String,
        pk: Template,
        operations: Template,
    },
    /// Executes a stored procedure of the container in one logical partition.
    Execute {
        container: String,
        sproc: String,
        pk: Template,
        args: Template,
    },
    /// A create, upsert, replace or delete (`write`) sent with the triggers it names, as
    /// the SDKs' `preTriggerInclude` / `postTriggerInclude` request options do.
    Triggered {
        write: Box<Action>,
        triggers: Triggers,
    },
}

/// The triggers a write step names (at most one of each, as the service allows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Triggers {
    pub pre: Option<String>,
    pub post: Option<String>,
}

impl Triggers {
    /// `(field name, trigger)` for each named trigger: `preTrigger` before `postTrigger`.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [("preTrigger", &self.pre), ("postTrigger", &self.post)]
            .into_iter()
            .filter_map(|(field, t)| t.as_deref().map(|t| (field, t)))
    }
}

impl Action {
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Read { .. } => "read",
            Action::Query { .. } => "query",
            Action::Write {
                kind: WriteKind::Create,
                ..
            } => "create",
            Action::Write {
                kind: WriteKind::Upsert,
                ..
            } => "upsert",
            Action::Write {
                kind: WriteKind::Replace,
                ..
            } => "replace",
            Action::Patch { .. } => "patch",
            Action::Delete { .. } => "delete",
            Action::Batch { .. } => "batch",
            Action::Execute { .. } => "execute",
            Action::Triggered { write, .. } => write.kind(),
        }
    }

    pub fn container(&self) -> &str {
        match self {
            Action::Read { container, .. }
            | Action::Query { container, .. }
            | Action::Write { container, .. }
            | Action::Patch { container, .. }
            | Action::Delete { container, .. }
            | Action::Batch { container, .. }
            | Action::Execute { container, .. } => container,
            Action::Triggered { write, .. } => write.container(),
        }
    }

    /// The triggers the step names, if any.
    pub fn triggers(&self) -> Option<&Triggers> {
        match self {
            Action::Triggered { triggers, .. } => Some(triggers),
            _ => None,
        }
    }

    pub fn writes(&self) -> bool {
        !matches!(self, Action::Read { .. } | Action::Query { .. })
    }

    fn templates(&self) -> Vec<&Template> {
        match self {
            Action::Read { id, pk, .. } | Action::Delete { id, pk, .. } => vec![id, pk],
            Action::Query { params, pk, .. } => {
                params.iter().map(|(_, t)| t).chain(pk.as_ref()).collect()
            }
            Action::Write { body, .. } => vec![body],
            Action::Patch {
                id, pk, operations, ..
            } => vec![id, pk, operations],
            Action::Batch { pk, operations, .. } => vec![pk, operations],
            Action::Execute { pk, args, .. } => vec![pk, args],
            Action::Triggered { write, .. } => write.templates(),
        }
    }
}

/// The simulator's workload over a suite's patterns.
#[derive(Debug, Clone)]
pub struct SimulateSpec {
    /// Relative weights per pattern id.
    pub mix: Vec<(String, f64)>,
    /// The parameter `--hot-key` pins for its share of writes.
    pub hot_param: Option<String>,
}

/// The bundled suites' names, for messages.
fn builtin_names() -> String {
    BUILTIN
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Suite {
    /// A bundled suite: `blog` or `webstore`.
    pub fn builtin(name: &str) -> Result<Suite> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            Error::not_found(format!(
                "there is no bundled workbench suite {name:?}; the bundled suites are {}",
                builtin_names()
            ))
        })?;
        // A broken bundled suite is a fault of the build.
        Suite::parse(text).map_err(|e| {
            Error::internal(format!(
                "the bundled suite {name} is invalid: {}",
                e.message
            ))
        })
    }

    /// A bundled suite by name, else a suite file by path.
    pub fn load(name_or_path: &str) -> Result<Suite> {
        if BUILTIN.iter().any(|(n, _)| *n == name_or_path) {
            return Suite::builtin(name_or_path);
        }
        let text = std::fs::read_to_string(name_or_path).map_err(|e| {
            Error::bad_request(format!(
                "{name_or_path:?} is neither a bundled suite ({}) nor a readable suite file: {e}",
                builtin_names()
            ))
        })?;
        Suite::parse(&text)
    }

    /// The bundled suite and design that hold bundled sample set `set` (the simulator's
    /// workload for it).
    pub fn for_sample(set: &str) -> Result<(Suite, String)> {
        for (name, _) in BUILTIN {
            let suite = Suite::builtin(name)?;
            if let Some(d) = suite
                .designs
                .iter()
                .find(|d| d.sample.as_deref() == Some(set))
            {
                let id = d.id.clone();
                return Ok((suite, id));
            }
        }
        let known: Vec<String> = BUILTIN
            .iter()
            .filter_map(|(n, _)| Suite::builtin(n).ok())
            .flat_map(|s| s.designs.into_iter().filter_map(|d| d.sample))
            .collect();
        Err(Error::not_found(format!(
            "there is no workload for {set:?}; the simulator runs {}",
            known.join(", ")
        )))
    }

    /// Parses TOML, or JSON when the text starts with `{`, and checks it: unknown fields,
    /// steps naming no action or two, undefined variables and designs are all errors
    /// (400) that say where.
    pub fn parse(text: &str) -> Result<Suite> {
        let raw: RawSuite = if text.trim_start().starts_with('{') {
            serde_json::from_str(text)
                .map_err(|e| Error::bad_request(format!("invalid workbench suite (JSON): {e}")))?
        } else {
            toml::from_str(text).map_err(|e| {
                Error::bad_request(format!(
                    "invalid workbench suite (TOML): {}",
                    e.to_string().trim_end()
                ))
            })?
        };
        raw.check()
    }

    pub fn design(&self, id: &str) -> Option<&Design> {
        self.designs.iter().find(|d| d.id == id)
    }

    pub fn pattern(&self, id: &str) -> Option<&Pattern> {
        self.patterns.iter().find(|p| p.id == id)
    }
}

// ---- the file format ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: String,
    title: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    params: BTreeMap<String, RawParam>,
    designs: Vec<RawDesign>,
    patterns: Vec<RawPattern>,
    #[serde(default)]
    simulate: Option<RawSimulate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDesign {
    id: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    sample: Option<String>,
    #[serde(default)]
    database: Option<String>,
    #[serde(default)]
    params: BTreeMap<String, RawParam>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawParam {
    #[serde(default)]
    generate: Option<String>,
    #[serde(default)]
    min: Option<i64>,
    #[serde(default)]
    max: Option<i64>,
    #[serde(default)]
    partition_keys: Option<String>,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    sql: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    values: Option<Vec<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPattern {
    id: String,
    title: String,
    #[serde(default = "yes")]
    workbench: bool,
    steps: BTreeMap<String, Vec<RawStep>>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawStep {
    #[serde(default)]
    read: Option<String>,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    create: Option<String>,
    #[serde(default)]
    upsert: Option<String>,
    #[serde(default)]
    replace: Option<String>,
    #[serde(default)]
    patch: Option<String>,
    #[serde(default)]
    delete: Option<String>,
    #[serde(default)]
    batch: Option<String>,
    #[serde(default)]
    execute: Option<String>,
    #[serde(default)]
    sproc: Option<String>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    pre_trigger: Option<String>,
    #[serde(default)]
    post_trigger: Option<String>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    pk: Option<Value>,
    #[serde(default)]
    sql: Option<String>,
    #[serde(default)]
    params: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    body: Option<Value>,
    #[serde(default)]
    operations: Option<Value>,
    #[serde(default)]
    condition: Option<String>,
    #[serde(default, rename = "as")]
    bind: Option<String>,
    #[serde(default)]
    for_each: Option<String>,
    #[serde(default)]
    setup: bool,
    #[serde(default)]
    order_by: Option<String>,
    #[serde(default)]
    take: Option<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSimulate {
    mix: BTreeMap<String, f64>,
    #[serde(default)]
    hot_param: Option<String>,
}

/// Rows a `query` parameter source keeps at most, unless it says otherwise.
const QUERY_POOL_LIMIT: usize = 1000;

fn bad(msg: String) -> Error {
    Error::bad_request(format!("invalid workbench suite: {msg}"))
}

fn is_identifier(s: &str) -> bool {
    parse_expr(s).is_ok_and(|e| e.path.is_empty() && e.filter.is_none())
}

impl RawSuite {
    /// Checks every part of the suite in the file's order, and builds it.
    fn check(self) -> Result<Suite> {
        if self.name.trim().is_empty() {
            return Err(bad("the suite needs a name".into()));
        }
        let params = check_params(self.params, "[params]")?;
        let designs = check_designs(self.designs, &params)?;
        let patterns = check_patterns(self.patterns, &params, &designs)?;
        let simulate = self
            .simulate
            .map(|s| s.check(&params, &designs, &patterns))
            .transpose()?;
        Ok(Suite {
            name: self.name,
            title: self.title,
            description: self.description.map(|d| d.trim().to_string()),
            params,
            designs,
            patterns,
            simulate,
        })
    }
}

/// Checks the designs: at least one, each valid and defined once.
fn check_designs(raw: Vec<RawDesign>, params: &[(String, ParamSource)]) -> Result<Vec<Design>> {
    if raw.is_empty() {
        return Err(bad("the suite has no [[designs]]".into()));
    }
    let mut designs = Vec::new();
    for d in raw {
        let design = d.check(params, &designs)?;
        designs.push(design);
    }
    Ok(designs)
}

impl RawDesign {
    /// Checks a design's id (against the `earlier` designs), sample set, database and
    /// parameters (against the suite-wide `params`).
    fn check(self, params: &[(String, ParamSource)], earlier: &[Design]) -> Result<Design> {
        let at = format!("design {:?}", self.id);
        if !is_identifier(&self.id) {
            return Err(bad(format!(
                "{at}: ids are letters, digits and underscores"
            )));
        }
        if earlier.iter().any(|x| x.id == self.id) {
            return Err(bad(format!("{at} is defined twice")));
        }
        if let Some(s) = &self.sample
            && !registry::SETS.contains(&s.as_str())
        {
            return Err(bad(format!(
                "{at}: there is no sample set {s:?}; the bundled sets are {}",
                registry::SETS.join(", ")
            )));
        }
        let database = match (self.database, &self.sample) {
            (Some(db), _) => db,
            (None, Some(s)) => s.clone(),
            (None, None) => {
                return Err(bad(format!("{at} names neither a database nor a sample")));
            }
        };
        let dparams = check_params(self.params, &format!("{at} params"))?;
        if let Some((n, _)) = dparams
            .iter()
            .find(|(n, _)| params.iter().any(|(p, _)| p == n))
        {
            return Err(bad(format!(
                "{at}: parameter {n:?} is also a suite-wide [params] entry"
            )));
        }
        Ok(Design {
            title: self.title.unwrap_or_else(|| self.id.clone()),
            id: self.id,
            sample: self.sample,
            database,
            params: dparams,
        })
    }
}

/// Checks the patterns: at least one, each defined once and with valid steps.
fn check_patterns(
    raw: Vec<RawPattern>,
    params: &[(String, ParamSource)],
    designs: &[Design],
) -> Result<Vec<Pattern>> {
    if raw.is_empty() {
        return Err(bad("the suite has no [[patterns]]".into()));
    }
    let mut patterns: Vec<Pattern> = Vec::new();
    for p in raw {
        if patterns.iter().any(|x| x.id == p.id) {
            return Err(bad(format!("pattern {:?} is defined twice", p.id)));
        }
        let pattern = p.check(params, designs)?;
        patterns.push(pattern);
    }
    Ok(patterns)
}

impl RawPattern {
    /// Checks the steps under each key, for every design the key names; each design of
    /// the pattern needs steps.
    fn check(self, params: &[(String, ParamSource)], designs: &[Design]) -> Result<Pattern> {
        let mut steps: BTreeMap<String, Vec<Step>> = BTreeMap::new();
        for (key, raw_steps) in &self.steps {
            for design in key.split(',').map(str::trim) {
                let at = format!("pattern {:?}, design {design:?}", self.id);
                let Some(d) = designs.iter().find(|d| d.id == design) else {
                    return Err(bad(format!(
                        "{at}: the suite has no such design (it has {})",
                        designs
                            .iter()
                            .map(|d| d.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                };
                let list = steps.entry(design.to_string()).or_default();
                let mut known = names_in_scope(params, d, list);
                for raw in raw_steps {
                    let at = format!("{at}, step {}", list.len() + 1);
                    let step = raw.check(&at, &known)?;
                    known.extend(step.bind.clone());
                    list.push(step);
                }
            }
        }
        if steps.is_empty() {
            return Err(bad(format!("pattern {:?} has no steps", self.id)));
        }
        if let Some((d, _)) = steps.iter().find(|(_, s)| s.is_empty()) {
            return Err(bad(format!(
                "pattern {:?}, design {d:?} has no steps",
                self.id
            )));
        }
        Ok(Pattern {
            id: self.id,
            title: self.title,
            workbench: self.workbench,
            steps,
        })
    }
}

/// The names design `d`'s next step may use: the suite's and the design's parameters, and
/// what its `earlier` steps bind.
fn names_in_scope(
    params: &[(String, ParamSource)],
    d: &Design,
    earlier: &[Step],
) -> BTreeSet<String> {
    let mut known: BTreeSet<String> = params
        .iter()
        .chain(&d.params)
        .map(|(n, _)| n.clone())
        .collect();
    // Steps listed under several keys for one design (`v1` and `"v1,v2"`) run in the
    // keys' alphabetical order; the names they bind carry over.
    for s in earlier {
        known.extend(s.bind.clone());
    }
    known
}

impl RawSimulate {
    /// Checks the simulator's mix (known patterns, weights ≥ 0, one positive) and that its
    /// hot parameter exists in every design.
    fn check(
        self,
        params: &[(String, ParamSource)],
        designs: &[Design],
        patterns: &[Pattern],
    ) -> Result<SimulateSpec> {
        for (id, w) in &self.mix {
            if !patterns.iter().any(|p| &p.id == id) {
                return Err(bad(format!("[simulate] mix names no pattern {id:?}")));
            }
            if !(w.is_finite() && *w >= 0.0) {
                return Err(bad(format!(
                    "[simulate] mix: the weight of {id} must be a number ≥ 0"
                )));
            }
        }
        if self.mix.values().sum::<f64>() <= 0.0 {
            return Err(bad("[simulate] mix has no positive weight".into()));
        }
        if let Some(h) = &self.hot_param {
            let everywhere = designs
                .iter()
                .all(|d| params.iter().chain(&d.params).any(|(n, _)| n == h));
            if !everywhere {
                return Err(bad(format!(
                    "[simulate] hotParam {h:?} is not a parameter of every design"
                )));
            }
        }
        Ok(SimulateSpec {
            mix: self.mix.into_iter().collect(),
            hot_param: self.hot_param,
        })
    }
}

fn check_params(raw: BTreeMap<String, RawParam>, at: &str) -> Result<Vec<(String, ParamSource)>> {
    raw.into_iter()
        .map(|(name, p)| {
            let at = format!("{at}: {name}");
            if !is_identifier(&name) || name == "item" {
                return Err(bad(format!(
                    "{at}: parameter names are letters, digits and underscores (and not \"item\")"
                )));
            }
            let sources = [
                p.generate.is_some(),
                p.partition_keys.is_some(),
                p.query.is_some(),
                p.values.is_some(),
            ];
            if sources.iter().filter(|s| **s).count() != 1 {
                return Err(bad(format!(
                    "{at}: give exactly one of generate, partitionKeys, query (with sql) or values"
                )));
            }
            let only = |ok: bool, field: &str| {
                if ok {
                    Ok(())
                } else {
                    Err(bad(format!("{at}: {field} does not apply to this source")))
                }
            };
            only(
                p.min.is_none() && p.max.is_none() || p.generate.is_some(),
                "min/max",
            )?;
            only(
                p.sql.is_none() && p.limit.is_none() || p.query.is_some(),
                "sql/limit",
            )?;
            let source = if let Some(g) = p.generate {
                ParamSource::Generate(match g.as_str() {
                    "uuid" => Generate::Uuid,
                    "now" => Generate::Now,
                    "username" => Generate::Username,
                    "title" => Generate::Title,
                    "sentence" => Generate::Sentence,
                    "paragraphs" => Generate::Paragraphs,
                    "name" => Generate::Name,
                    "int" => {
                        let (min, max) = (p.min.unwrap_or(0), p.max.unwrap_or(100));
                        if min > max {
                            return Err(bad(format!("{at}: min is above max")));
                        }
                        Generate::Int { min, max }
                    }
                    other => {
                        return Err(bad(format!(
                            "{at}: cannot generate {other:?}; choose uuid, now, username, title, \
                             sentence, paragraphs, name or int"
                        )));
                    }
                })
            } else if let Some(container) = p.partition_keys {
                ParamSource::PartitionKeys { container }
            } else if let Some(container) = p.query {
                let sql = p
                    .sql
                    .ok_or_else(|| bad(format!("{at}: a query source needs sql")))?;
                ParamSource::Query {
                    container,
                    sql,
                    limit: p.limit.unwrap_or(QUERY_POOL_LIMIT).max(1),
                }
            } else {
                let values = p.values.unwrap_or_default();
                if values.is_empty() {
                    return Err(bad(format!("{at}: values is empty")));
                }
                ParamSource::Values(values)
            };
            Ok((name, source))
        })
        .collect()
}

impl RawStep {
    /// Checks a step and builds it: one action, only the fields it takes, templates that
    /// parse and name only what is `known` (parameters and earlier steps' `as`), and valid
    /// `as`, `forEach` and `orderBy`.
    fn check(&self, at: &str, known: &BTreeSet<String>) -> Result<Step> {
        let (kind, container) = self.named_action(at)?;
        self.check_fields(at, kind)?;
        let action = self.action(at, kind, container.clone())?;
        self.check_scope(at, &action, known)?;
        if let Some(b) = &self.bind
            && (!is_identifier(b) || b == "item")
        {
            return Err(bad(format!(
                "{at}: as = {b:?}: names are letters, digits and underscores (and not \"item\")"
            )));
        }
        let order_by = self.order_by.as_deref().map(|o| match o.strip_prefix('-') {
            Some(f) => (f.to_string(), true),
            None => (o.trim_start_matches('+').to_string(), false),
        });
        if order_by.as_ref().is_some_and(|(f, _)| f.is_empty()) {
            return Err(bad(format!(
                "{at}: orderBy names a field, \"-field\" for descending"
            )));
        }
        Ok(Step {
            action,
            bind: self.bind.clone(),
            for_each: self.for_each.clone(),
            setup: self.setup,
            order_by,
            take: self.take,
        })
    }

    /// The one action the step names, with its container.
    fn named_action(&self, at: &str) -> Result<(&'static str, &String)> {
        let actions = [
            ("read", &self.read),
            ("query", &self.query),
            ("create", &self.create),
            ("upsert", &self.upsert),
            ("replace", &self.replace),
            ("patch", &self.patch),
            ("delete", &self.delete),
            ("batch", &self.batch),
            ("execute", &self.execute),
        ];
        let named: Vec<(&str, &String)> = actions
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|c| (*k, c)))
            .collect();
        match named.as_slice() {
            [one] => Ok(*one),
            [] => Err(bad(format!(
                "{at}: a step names one action with its container: read, query, create, \
                 upsert, replace, patch, delete, batch or execute (e.g. read = \"users\")"
            ))),
            several => Err(bad(format!(
                "{at}: a step does one thing; this one names {}",
                several
                    .iter()
                    .map(|(k, _)| *k)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ))),
        }
    }

    /// Fails on a field that a `kind` step does not take.
    fn check_fields(&self, at: &str, kind: &str) -> Result<()> {
        // Which fields each action takes.
        let allowed: &[&str] = match kind {
            "query" => &["sql", "params", "pk", "orderBy", "take"],
            "create" | "upsert" | "replace" => &["body", "preTrigger", "postTrigger"],
            "delete" => &["id", "pk", "preTrigger", "postTrigger"],
            "read" => &["id", "pk"],
            "patch" => &["id", "pk", "operations", "condition"],
            "execute" => &["sproc", "pk", "args"],
            _ => &["pk", "operations"],
        };
        let given = [
            ("id", self.id.is_some()),
            ("pk", self.pk.is_some()),
            ("sql", self.sql.is_some()),
            ("params", self.params.is_some()),
            ("body", self.body.is_some()),
            ("operations", self.operations.is_some()),
            ("condition", self.condition.is_some()),
            ("orderBy", self.order_by.is_some()),
            ("take", self.take.is_some()),
            ("sproc", self.sproc.is_some()),
            ("args", self.args.is_some()),
            ("preTrigger", self.pre_trigger.is_some()),
            ("postTrigger", self.post_trigger.is_some()),
        ];
        if let Some((f, _)) = given.iter().find(|(f, g)| *g && !allowed.contains(f)) {
            return Err(bad(format!(
                "{at}: {f} does not apply to {} (it takes {})",
                a_step(kind),
                allowed.join(", ")
            )));
        }
        Ok(())
    }

    /// The `kind` action on `container`, from the fields it needs.
    fn action(&self, at: &str, kind: &str, container: String) -> Result<Action> {
        let tpl = |field: &str, v: &Option<Value>| required(at, kind, field, v.as_ref());
        let action = match kind {
            "read" => Action::Read {
                container,
                id: tpl("id", &self.id)?,
                pk: tpl("pk", &self.pk)?,
            },
            "delete" => Action::Delete {
                container,
                id: tpl("id", &self.id)?,
                pk: tpl("pk", &self.pk)?,
            },
            "query" => self.query_action(at, container)?,
            "create" | "upsert" | "replace" => Action::Write {
                kind: match kind {
                    "create" => WriteKind::Create,
                    "upsert" => WriteKind::Upsert,
                    _ => WriteKind::Replace,
                },
                container,
                body: tpl("body", &self.body)?,
            },
            "patch" => Action::Patch {
                container,
                id: tpl("id", &self.id)?,
                pk: tpl("pk", &self.pk)?,
                operations: tpl("operations", &self.operations)?,
                condition: self.condition.clone(),
            },
            "execute" => Action::Execute {
                container,
                sproc: self
                    .sproc
                    .clone()
                    .ok_or_else(|| bad(format!("{at}: an execute step needs sproc")))?,
                pk: tpl("pk", &self.pk)?,
                args: match &self.args {
                    None => Template::parse(&Value::Array(Vec::new()))
                        .map_err(|why| bad(format!("{at}, args: {why}")))?,
                    Some(Value::Array(_)) => tpl("args", &self.args)?,
                    Some(_) => {
                        return Err(bad(format!(
                            "{at}: args is the stored procedure's parameters, a list"
                        )));
                    }
                },
            },
            _ => Action::Batch {
                container,
                pk: tpl("pk", &self.pk)?,
                operations: tpl("operations", &self.operations)?,
            },
        };
        if matches!(kind, "patch" | "batch") && !matches!(self.operations, Some(Value::Array(_))) {
            return Err(bad(format!("{at}: operations must be a list")));
        }
        let triggers = Triggers {
            pre: self.pre_trigger.clone(),
            post: self.post_trigger.clone(),
        };
        if let Some((field, _)) = triggers.named().find(|(_, t)| t.trim().is_empty()) {
            return Err(bad(format!(
                "{at}: {field} names a trigger of the container"
            )));
        }
        if triggers == Triggers::default() {
            return Ok(action);
        }
        Ok(Action::Triggered {
            write: Box::new(action),
            triggers,
        })
    }

    /// A query action: its sql, its parameters (`@` optional) and its partition key if any.
    fn query_action(&self, at: &str, container: String) -> Result<Action> {
        let sql = self
            .sql
            .clone()
            .ok_or_else(|| bad(format!("{at}: a query step needs sql")))?;
        let params = self
            .params
            .iter()
            .flatten()
            .map(|(n, v)| {
                let t =
                    Template::parse(v).map_err(|why| bad(format!("{at}, params.{n}: {why}")))?;
                Ok((n.trim_start_matches('@').to_string(), t))
            })
            .collect::<Result<Vec<_>>>()?;
        let pk = self
            .pk
            .as_ref()
            .map(|pk| required(at, "query", "pk", Some(pk)))
            .transpose()?;
        Ok(Action::Query {
            container,
            sql,
            params,
            pk,
        })
    }

    /// Fails when `forEach` or a template of `action` names a variable not in scope:
    /// the `known` names, and `item` in a forEach step.
    fn check_scope(&self, at: &str, action: &Action, known: &BTreeSet<String>) -> Result<()> {
        if let Some(f) = &self.for_each
            && !known.contains(f)
        {
            return Err(bad(format!(
                "{at}: forEach names {f:?}, which no parameter or earlier step (as = ...) defines"
            )));
        }
        let mut scope = known.clone();
        if self.for_each.is_some() {
            scope.insert("item".into());
        }
        for t in action.templates() {
            if let Some(v) = t.vars().into_iter().find(|v| !scope.contains(*v)) {
                let hint = if v == "item" {
                    " ({item} exists only in forEach steps)"
                } else {
                    ""
                };
                return Err(bad(format!(
                    "{at}: {{{v}}} is not defined: no parameter or earlier step (as = ...) \
                     has that name{hint}"
                )));
            }
        }
        Ok(())
    }
}

/// Field `field` of a `kind` step as a template: it must be there and parse.
/// "a read step", "an execute step".
fn a_step(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind} step")
}

fn required(at: &str, kind: &str, field: &str, v: Option<&Value>) -> Result<Template> {
    let v = v.ok_or_else(|| bad(format!("{at}: {} needs {field}", a_step(kind))))?;
    Template::parse(v).map_err(|why| bad(format!("{at}, {field}: {why}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_suites_parse() {
        let blog = Suite::builtin("blog").unwrap();
        assert_eq!(blog.designs.len(), 3);
        let ids: Vec<&str> = blog
            .patterns
            .iter()
            .filter(|p| p.workbench)
            .map(|p| p.id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "C1", "Q1", "C2", "C2s", "Q2", "Q3", "C3", "C3s", "Q4", "C4", "C4s", "Q5", "Q6",
                "C1e", "C1es"
            ]
        );
        // The script rows are on the designs that denormalize (v1 does not; only v3 has
        // the feed).
        for p in &blog.patterns {
            for d in &blog.designs {
                let absent =
                    (p.id.ends_with('s') && d.id == "v1") || (p.id == "C2s" && d.id == "v2");
                assert_eq!(p.steps_for(&d.id).is_some(), !absent, "{} {}", p.id, d.id);
            }
        }
        let feed = &blog.pattern("C2s").unwrap().steps_for("v3").unwrap()[1];
        assert_eq!(
            feed.action.triggers().and_then(|t| t.post.as_deref()),
            Some("truncateFeed")
        );
        assert_eq!(
            (feed.action.kind(), feed.action.container()),
            ("create", "feed")
        );
        let c3s = blog.pattern("C3s").unwrap().steps_for("v3").unwrap();
        assert!(matches!(
            &c3s[1].action,
            Action::Execute { container, sproc, .. } if container == "posts" && sproc == "createComment"
        ));
        assert!(blog.pattern("C3").unwrap().is_command());
        assert!(!blog.pattern("Q6").unwrap().is_command());
        assert!(blog.pattern("C3").unwrap().uses("v2", "postId"));
        let web = Suite::builtin("webstore").unwrap();
        assert_eq!(web.designs.len(), 2);
        assert_eq!(Suite::for_sample("blog-v3").unwrap().1, "v3");
        assert_eq!(Suite::for_sample("webstore").unwrap().1, "denormalized");
        assert_eq!(Suite::for_sample("modeling").unwrap_err().status, 404);
    }

    #[test]
    fn json_suites_parse_too() {
        let s = Suite::parse(
            r#"{"name": "t", "title": "T", "designs": [{"id": "a", "database": "db"}],
                "patterns": [{"id": "P", "title": "p", "steps": {"a": [
                    {"read": "c", "id": "x", "pk": "x"}]}}]}"#,
        )
        .unwrap();
        assert_eq!(s.designs[0].database, "db");
    }

    fn err(text: &str) -> String {
        let e = Suite::parse(text).unwrap_err();
        assert_eq!(e.status, 400);
        e.message
    }

    const HEAD: &str = "name = \"t\"\ntitle = \"T\"\n[[designs]]\nid = \"a\"\ndatabase = \"db\"\n";

    #[test]
    fn mistakes_are_reported_where_they_are() {
        let m = err("name = \"t\"\ntitle = ");
        assert!(m.contains("TOML") && m.contains("line 2"), "{m}");
        let m = err("{\"name\": 1}");
        assert!(m.contains("JSON") && m.contains("line 1"), "{m}");
        let m = err(&format!(
            "{HEAD}[[patterns]]\nid = \"P\"\ntitle = \"p\"\n[[patterns.steps.a]]\nread = \"c\"\nid = \"{{nope}}\"\npk = \"x\"\n"
        ));
        assert!(
            m.contains("pattern \"P\", design \"a\", step 1") && m.contains("{nope}"),
            "{m}"
        );
        let m = err(&format!(
            "{HEAD}[[patterns]]\nid = \"P\"\ntitle = \"p\"\n[[patterns.steps.b]]\nread = \"c\"\nid = \"x\"\npk = \"x\"\n"
        ));
        assert!(m.contains("no such design"), "{m}");
        let m = err(&format!(
            "{HEAD}[[patterns]]\nid = \"P\"\ntitle = \"p\"\n[[patterns.steps.a]]\nread = \"c\"\nquery = \"c\"\n"
        ));
        assert!(m.contains("read and query"), "{m}");
        let m = err(&format!(
            "{HEAD}[[patterns]]\nid = \"P\"\ntitle = \"p\"\n[[patterns.steps.a]]\nread = \"c\"\nsql = \"x\"\nid = \"x\"\npk = \"x\"\n"
        ));
        assert!(m.contains("sql does not apply to a read step"), "{m}");
        let m = err(&format!(
            "{HEAD}[[patterns]]\nid = \"P\"\ntitle = \"p\"\n[[patterns.steps.a]]\nread = \"c\"\nid = \"x\"\npk = \"x\"\nbogus = 1\n"
        ));
        assert!(m.contains("unknown field") && m.contains("bogus"), "{m}");
        // Triggers go on writes only, and name something.
        let step = |fields: &str| {
            err(&format!(
                "{HEAD}[[patterns]]\nid = \"P\"\ntitle = \"p\"\n[[patterns.steps.a]]\n{fields}"
            ))
        };
        let m = step("read = \"c\"\nid = \"x\"\npk = \"x\"\npostTrigger = \"t\"\n");
        assert!(
            m.contains("postTrigger does not apply to a read step"),
            "{m}"
        );
        let m = step("create = \"c\"\nbody = {}\npreTrigger = \" \"\n");
        assert!(m.contains("preTrigger names a trigger"), "{m}");
    }
}
