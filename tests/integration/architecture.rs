//! The layering of the source tree, checked on the source itself: each top-level module
//! names only the modules below it (README, "Architecture"), front ends reach the store and
//! the query engine only through the engine facade, and no two files import each other,
//! directly or around a loop.
//!
//! The check reads `src/` as text: every `crate::` path outside comments and `#[cfg(test)]`
//! modules (tests may reach across layers to check them), and every `super::` path that
//! climbs out of its top-level module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may name. `error` (the status-coded error) and
/// `charge` (the RU model's pure functions, which front ends use to round charges) sit below
/// everything and name nothing.
const LAYERS: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("charge", &[]),
    ("fault", &["error"]),
    ("store", &["error", "charge", "fault"]),
    ("query", &["error", "charge", "store"]),
    ("scripts", &["error", "charge", "store", "query"]),
    ("engine", &["error", "charge", "store", "query", "scripts"]),
    ("processor", &["error", "charge", "engine"]),
    ("recorded_requests", &["error", "engine"]),
    ("samples", &["error", "charge", "engine", "processor"]),
    (
        "workbench",
        &["error", "charge", "engine", "processor", "samples"],
    ),
    (
        "advisor",
        &[
            "error",
            "charge",
            "engine",
            "processor",
            "samples",
            "workbench",
            "recorded_requests",
        ],
    ),
    (
        "simulate",
        &[
            "error",
            "charge",
            "engine",
            "processor",
            "samples",
            "workbench",
        ],
    ),
    (
        "gateway",
        &["error", "charge", "engine", "recorded_requests"],
    ),
    (
        "tui",
        &[
            "error",
            "charge",
            "engine",
            "samples",
            "workbench",
            "advisor",
            "query",
            "gateway",
            "fault",
        ],
    ),
    (
        "cli",
        &[
            "error",
            "charge",
            "engine",
            "processor",
            "samples",
            "workbench",
            "simulate",
            "advisor",
            "gateway",
            "tui",
        ],
    ),
];

/// Paths into the query engine a front end may name, and why. Completion is a pure
/// function of the text being typed and a sample of documents: it asks no backend anything,
/// so it works the same whichever backend the explorer talks to.
const FRONT_END_ALLOWED: &[(&str, &str)] = &[(
    "query::complete",
    "completion reads only the typed text and sampled documents",
)];

/// Top-level modules that are front ends or clients of the facade: they speak the engine's
/// types and never the store's or the query engine's.
const ABOVE_THE_FACADE: &[&str] = &[
    "processor",
    "samples",
    "workbench",
    "simulate",
    "advisor",
    "gateway",
    "tui",
    "cli",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `src/query/run/mod.rs` is `["query", "run"]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("a file under src/");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of a file without comments, string literals' contents and a trailing
/// `#[cfg(test)] mod ... { }` (the project keeps unit tests last in a file).
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                // A string's text can mention `crate::` (messages, examples); skip it.
                let mut escaped = false;
                for c in chars.by_ref() {
                    match (escaped, c) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
                out.push_str("\"\"");
            }
            c => out.push(c),
        }
    }
    out
}

/// Every path the code names from the crate root: `crate::a::b` as `["a", "b"]`, one per
/// name in `crate::{a::b, c}`, `super::...` climbing to the root resolved the same way, and
/// a path through one of the module's own `children` (`use child::Thing` in a `mod.rs`).
fn crate_paths(code: &str, module: &[String], children: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for child in children {
        let mut from = 0;
        while let Some(at) = code[from..].find(&format!("{child}::")) {
            let at = from + at;
            let before = code[..at].chars().next_back();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                let mut path = module.to_vec();
                path.push(child.clone());
                out.push(path);
            }
            from = at + child.len() + 2;
        }
    }
    let bytes = code.as_bytes();
    let ident = |at: usize| -> usize {
        at + code[at..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(code.len() - at)
    };
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let (base, rest) = if starts_word && bytes[i..].starts_with(b"crate::") {
            (Vec::new(), i + "crate::".len())
        } else if starts_word && bytes[i..].starts_with(b"super::") {
            let mut base = module.to_vec();
            let mut at = i;
            while code[at..].starts_with("super::") {
                base.pop();
                at += "super::".len();
            }
            (base, at)
        } else {
            i += 1;
            continue;
        };
        if code[rest..].starts_with('{') {
            // `crate::{a::b, c}`: each item's path (up to a nested brace).
            let end = code[rest..].find('}').map_or(code.len(), |e| rest + e);
            for item in code[rest + 1..end].split(',') {
                let text: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut path = base.clone();
                path.extend(
                    text.split("::")
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                );
                if path.len() > base.len() {
                    out.push(path);
                }
            }
            i = end;
            continue;
        }
        let mut path = base;
        let mut at = rest;
        loop {
            let end = ident(at);
            if end == at {
                break;
            }
            path.push(code[at..end].to_string());
            if code[end..].starts_with("::") && ident(end + 2) > end + 2 {
                at = end + 2;
            } else {
                at = end;
                break;
            }
        }
        if !path.is_empty() {
            out.push(path);
        }
        i = at.max(i + 1);
    }
    out
}

struct SourceFile {
    path: PathBuf,
    module: Vec<String>,
    paths: Vec<Vec<String>>,
}

impl SourceFile {
    /// `mod.rs`, `lib.rs` or `main.rs`: the file of a module with children.
    fn is_module_file(&self) -> bool {
        self.path
            .file_stem()
            .is_some_and(|s| s == "mod" || s == "lib" || s == "main")
    }
}

fn sources() -> Vec<SourceFile> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let modules: Vec<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    files
        .into_iter()
        .map(|path| {
            let module = module_of(&path);
            let children: Vec<String> = modules
                .iter()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(&module))
                .filter_map(|m| m.last().cloned())
                .collect();
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            let paths = crate_paths(&code_of(&text), &module, &children);
            SourceFile {
                path,
                module,
                paths,
            }
        })
        .collect()
}

fn allowed(layer: &str) -> Option<&'static [&'static str]> {
    LAYERS
        .iter()
        .find(|(name, _)| *name == layer)
        .map(|(_, below)| *below)
}

#[test]
fn each_module_names_only_the_layers_below_it() {
    let mut violations = Vec::new();
    let files = sources();
    assert!(
        files.len() > 100,
        "read the source tree ({} files)",
        files.len()
    );
    for f in &files {
        let Some(layer) = f.module.first() else {
            continue; // lib.rs and main.rs assemble the layers
        };
        let below = allowed(layer).unwrap_or_else(|| {
            panic!(
                "{} is in top-level module `{layer}`, which LAYERS does not place; add it",
                f.path.display()
            )
        });
        for path in &f.paths {
            let Some(target) = path.first() else { continue };
            if target == layer || !LAYERS.iter().any(|(name, _)| name == target) {
                continue; // its own layer, or a crate-root item (`crate::Result`)
            }
            if !below.contains(&target.as_str()) {
                violations.push(format!(
                    "{}: `{layer}` names `crate::{}`, which is not below it",
                    f.path.display(),
                    path.join("::")
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn front_ends_and_clients_reach_the_store_and_the_query_engine_only_through_the_facade() {
    let mut violations = Vec::new();
    for f in sources() {
        let Some(layer) = f.module.first() else {
            continue;
        };
        if !ABOVE_THE_FACADE.contains(&layer.as_str()) {
            continue;
        }
        for path in &f.paths {
            let Some(target) = path.first() else { continue };
            if target != "store" && target != "query" {
                continue;
            }
            let text = path.join("::");
            let allowance = FRONT_END_ALLOWED
                .iter()
                .find(|(prefix, _)| text == *prefix || text.starts_with(&format!("{prefix}::")));
            if allowance.is_none() {
                violations.push(format!("{}: names `crate::{text}`", f.path.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "front ends speak the engine's types (crate::engine); these name the layers below \
         it:\n{}",
        violations.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other_even_around_a_loop() {
    let files = sources();
    let modules: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.clone(), i))
        .collect();
    // A path names the file that defines its longest module prefix.
    let file_of = |path: &[String]| -> Option<usize> {
        (1..=path.len())
            .rev()
            .find_map(|n| modules.get(&path[..n]).copied())
    };
    let edges: Vec<BTreeSet<usize>> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            f.paths
                .iter()
                .filter_map(|p| file_of(p))
                .filter(|&t| t != i)
                // A `mod.rs` declaring, re-exporting or dispatching to its own children is
                // how Rust nests modules, not a loop: its edges into its subtree don't count.
                .filter(|&t| !(f.is_module_file() && files[t].module.starts_with(&f.module)))
                .collect()
        })
        .collect();
    let cycles = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            c.iter()
                .map(|&i| {
                    files[i]
                        .path
                        .strip_prefix(src())
                        .unwrap_or(&files[i].path)
                        .display()
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join(" ↔ ")
        })
        .collect::<Vec<_>>();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// Tarjan's strongly connected components of a graph given as adjacency sets.
fn strongly_connected(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Walk<'g> {
        edges: &'g [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in self.edges[v].iter() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                self.out.push(component);
            }
        }
    }
    let n = edges.len();
    let mut walk = Walk {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if walk.index[v].is_none() {
            walk.visit(v);
        }
    }
    walk.out
}

#[test]
fn a_loop_of_imports_is_one_component() {
    // 0 → 1 → 2 → 0 is a loop; 3 → 0 only enters it.
    let edges: Vec<BTreeSet<usize>> = [vec![1], vec![2], vec![0], vec![0]]
        .into_iter()
        .map(|e| e.into_iter().collect())
        .collect();
    let mut components: Vec<Vec<usize>> = strongly_connected(&edges)
        .into_iter()
        .map(|mut c| {
            c.sort();
            c
        })
        .collect();
    components.sort();
    assert_eq!(components, vec![vec![0, 1, 2], vec![3]]);
}

#[test]
fn the_checks_see_the_paths_they_judge() {
    // The scanner itself, on code shaped like the tree's.
    let module = vec!["tui".to_string(), "update".to_string()];
    let code = code_of(
        "use crate::engine::{Backend, FeedRequest};\n\
         use crate::{error::Error, query::complete};\n\
         let k = keymap::Chord::parse(\"ctrl-p\");\n\
         // crate::store::Store in a comment is not a use\n\
         let m = \"crate::store in a message\";\n\
         fn f() -> super::super::samples::Set { crate::store::now_secs() }\n\
         #[cfg(test)]\nmod tests { use crate::store::Store; }\n",
    );
    let paths: Vec<String> = crate_paths(&code, &module, &["keymap".to_string()])
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "tui::update::keymap",
            "engine",
            "error::Error",
            "query::complete",
            "samples::Set",
            "store::now_secs"
        ]
    );
}

/// Every colour a theme file can set is drawn with somewhere: a theme field that nothing
/// reads would be a setting that changes nothing (issue 23's theme audit).
#[test]
fn every_theme_field_is_drawn_with() {
    let mut files = Vec::new();
    rust_files(&src().join("tui"), &mut files);
    let drawing: String = files
        .iter()
        .filter(|f| !f.ends_with("theme.rs"))
        .map(|f| code_of(&std::fs::read_to_string(f).expect("a readable source file")))
        .collect();
    let names = cosmoscope::tui::ui::theme::Theme::NAMES;
    assert!(names.len() > 10 && drawing.contains("theme().selected"));
    let unused: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| !drawing.contains(&format!("theme().{name}")))
        .collect();
    assert!(
        unused.is_empty(),
        "theme fields nothing draws with: {unused:?}"
    );
}
