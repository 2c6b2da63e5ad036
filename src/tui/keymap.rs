//! Keys to actions: the embedded default keymap, the user's overlay, and resolution by mode.
//!
//! The keymap is the single source of the bindings: the hint bar and the help screen are
//! generated from it, so they always show the keys that really work.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;

/// The defaults, embedded so the binary needs no files.
pub const DEFAULT_KEYMAP: &str = include_str!("../../assets/keymap.toml");

/// Where keys are being read: each mode searches its own table, then its fallbacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Tree,
    Item,
    Editor,
    Results,
    Feed,
    Partitions,
    Workbench,
    Requests,
    Advisor,
    Palette,
    Help,
    /// A value shown whole over the panes (a result's cell or document).
    Value,
    /// A one-line text field (tree filter, parameter form, prompts).
    Input,
}

impl Mode {
    pub const ALL: &'static [Mode] = &[
        Mode::Tree,
        Mode::Item,
        Mode::Editor,
        Mode::Results,
        Mode::Feed,
        Mode::Partitions,
        Mode::Workbench,
        Mode::Requests,
        Mode::Advisor,
        Mode::Palette,
        Mode::Help,
        Mode::Value,
        Mode::Input,
    ];

    /// The tables this mode reads, most specific first.
    fn tables(self) -> &'static [&'static str] {
        match self {
            Mode::Tree => &["tree", "navigation", "global"],
            Mode::Item => &["item", "navigation", "global"],
            Mode::Editor => &["editor", "global"],
            Mode::Results => &["results", "navigation", "global"],
            Mode::Feed => &["feed", "navigation", "global"],
            Mode::Partitions => &["partitions", "navigation", "global"],
            Mode::Workbench => &["workbench", "navigation", "global"],
            Mode::Requests => &["requests", "navigation", "global"],
            Mode::Advisor => &["advisor", "navigation", "global"],
            Mode::Palette => &["palette", "global"],
            Mode::Help => &["help", "global"],
            Mode::Value => &["value", "help", "global"],
            Mode::Input => &["global"],
        }
    }

    /// Text fields: plain characters are typed, not looked up.
    pub fn is_text(self) -> bool {
        matches!(self, Mode::Editor | Mode::Palette | Mode::Input)
    }

    pub fn title(self) -> &'static str {
        match self {
            Mode::Tree => "Resource tree",
            Mode::Item => "Item",
            Mode::Editor => "Query editor",
            Mode::Results => "Query results",
            Mode::Feed => "Change feed",
            Mode::Partitions => "Partitions",
            Mode::Workbench => "Workbench",
            Mode::Requests => "Requests",
            Mode::Advisor => "Advisor",
            Mode::Palette => "Palette",
            Mode::Help => "Help",
            Mode::Value => "Value",
            Mode::Input => "Text field",
        }
    }
}

/// A key with its modifiers, normalised so `G` and `shift-g` are the same chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Chord {
    code: ChordCode,
    ctrl: bool,
    alt: bool,
    shift: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum ChordCode {
    Char(char),
    F(u8),
    Named(Named),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Named {
    Enter,
    Esc,
    Tab,
    BackTab,
    Space,
    Backspace,
    Delete,
    Insert,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
}

const NAMES: &[(&str, Named)] = &[
    ("enter", Named::Enter),
    ("esc", Named::Esc),
    ("tab", Named::Tab),
    ("backtab", Named::BackTab),
    ("space", Named::Space),
    ("backspace", Named::Backspace),
    ("delete", Named::Delete),
    ("insert", Named::Insert),
    ("up", Named::Up),
    ("down", Named::Down),
    ("left", Named::Left),
    ("right", Named::Right),
    ("home", Named::Home),
    ("end", Named::End),
    ("pageup", Named::PageUp),
    ("pagedown", Named::PageDown),
];

impl Chord {
    /// Parses `ctrl-enter`, `G`, `?`, `f5`, `alt-1`.
    pub fn parse(s: &str) -> Result<Chord, String> {
        let mut rest = s;
        let (mut ctrl, mut alt, mut shift) = (false, false, false);
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-") {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-") {
                alt = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("shift-") {
                shift = true;
                rest = r;
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => {
                // Shifted letters are their capital; other shifted characters are what
                // the terminal sends (`?`, not `shift-/`).
                if shift && c.is_ascii_alphabetic() && !ctrl {
                    shift = false;
                    ChordCode::Char(c.to_ascii_uppercase())
                } else {
                    ChordCode::Char(c)
                }
            }
            _ => {
                let lower = rest.to_ascii_lowercase();
                if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    if !(1..=12).contains(&n) {
                        return Err(format!("{s:?}: function keys are f1 to f12"));
                    }
                    ChordCode::F(n)
                } else if let Some((_, n)) = NAMES.iter().find(|(name, _)| *name == lower) {
                    ChordCode::Named(*n)
                } else {
                    return Err(format!(
                        "{s:?} is not a key: use a character or one of {}, f1..f12",
                        NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        };
        if let ChordCode::Named(Named::BackTab) = code {
            shift = false;
        }
        Ok(Chord {
            code,
            ctrl,
            alt,
            shift,
        })
    }

    /// The chord a terminal key event is, or `None` for keys the keymap cannot name.
    pub fn from_event(key: &KeyEvent) -> Option<Chord> {
        let m = key.modifiers;
        let mut shift = m.contains(KeyModifiers::SHIFT);
        let code = match key.code {
            KeyCode::Char(' ') => ChordCode::Named(Named::Space),
            KeyCode::Char(c) => {
                // The character already carries the shift (`G`, `?`).
                shift = false;
                ChordCode::Char(if m.contains(KeyModifiers::CONTROL) {
                    c.to_ascii_lowercase()
                } else {
                    c
                })
            }
            KeyCode::F(n) => ChordCode::F(n),
            KeyCode::Enter => ChordCode::Named(Named::Enter),
            KeyCode::Esc => ChordCode::Named(Named::Esc),
            KeyCode::Tab => ChordCode::Named(Named::Tab),
            KeyCode::BackTab => {
                shift = false;
                ChordCode::Named(Named::BackTab)
            }
            KeyCode::Backspace => ChordCode::Named(Named::Backspace),
            KeyCode::Delete => ChordCode::Named(Named::Delete),
            KeyCode::Insert => ChordCode::Named(Named::Insert),
            KeyCode::Up => ChordCode::Named(Named::Up),
            KeyCode::Down => ChordCode::Named(Named::Down),
            KeyCode::Left => ChordCode::Named(Named::Left),
            KeyCode::Right => ChordCode::Named(Named::Right),
            KeyCode::Home => ChordCode::Named(Named::Home),
            KeyCode::End => ChordCode::Named(Named::End),
            KeyCode::PageUp => ChordCode::Named(Named::PageUp),
            KeyCode::PageDown => ChordCode::Named(Named::PageDown),
            _ => return None,
        };
        Some(Chord {
            code,
            ctrl: m.contains(KeyModifiers::CONTROL),
            alt: m.contains(KeyModifiers::ALT),
            shift,
        })
    }

    /// A plain character with no ctrl/alt: typed in text fields.
    pub fn is_plain_char(&self) -> bool {
        !self.ctrl
            && !self.alt
            && matches!(
                self.code,
                ChordCode::Char(_) | ChordCode::Named(Named::Space)
            )
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        if self.shift {
            f.write_str("shift-")?;
        }
        match self.code {
            ChordCode::Char(c) => write!(f, "{c}"),
            ChordCode::F(n) => write!(f, "F{n}"),
            ChordCode::Named(n) => {
                let name = NAMES
                    .iter()
                    .find(|(_, x)| *x == n)
                    .map_or("?", |(name, _)| name);
                let pretty = match n {
                    Named::Up => "↑",
                    Named::Down => "↓",
                    Named::Left => "←",
                    Named::Right => "→",
                    Named::BackTab => "shift-tab",
                    Named::PageUp => "PgUp",
                    Named::PageDown => "PgDn",
                    _ => name,
                };
                f.write_str(pretty)
            }
        }
    }
}

/// Tables of chord → action, by table name.
#[derive(Debug, Clone)]
pub struct Keymap {
    tables: BTreeMap<String, BTreeMap<Chord, Action>>,
}

/// Reads a keymap that is not valid TOML one line at a time: `[table]` headers and
/// `"key" = "action"` lines; each line TOML cannot read is a problem naming its line.
fn parse_lines(
    text: &str,
) -> (
    BTreeMap<String, BTreeMap<String, String>>,
    Vec<KeymapProblem>,
) {
    let mut tables: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut table: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let problem = |why: String| KeymapProblem(format!("keymap line {}: {why}", n + 1));
        if trimmed.starts_with('[') {
            match toml::from_str::<BTreeMap<String, toml::Table>>(trimmed) {
                Ok(t) if t.len() == 1 => table = t.into_keys().next(),
                _ => {
                    problems.push(problem(format!("{trimmed:?} is not a [table] header")));
                    table = None;
                }
            }
            continue;
        }
        match toml::from_str::<BTreeMap<String, String>>(trimmed) {
            Ok(entry) => match &table {
                Some(t) => tables.entry(t.clone()).or_default().extend(entry),
                None => problems.push(problem(
                    "a binding outside a [table] (or under a broken header)".into(),
                )),
            },
            Err(e) => problems.push(problem(e.message().trim().to_string().replace('\n', " "))),
        }
    }
    (tables, problems)
}

/// What loading a keymap found wrong; reported in the UI, never fatal.
#[derive(Debug, Clone, PartialEq)]
pub struct KeymapProblem(pub String);

impl Keymap {
    /// The embedded defaults.
    pub fn defaults() -> Keymap {
        // The embedded file is checked by a test, so parsing cannot fail here; if it ever
        // did, an empty keymap plus the problem is still no panic.
        Keymap::parse(DEFAULT_KEYMAP)
            .map(|(k, _)| k)
            .unwrap_or_else(|_| Keymap {
                tables: BTreeMap::new(),
            })
    }

    /// Parses a keymap file; unknown keys or actions are reported and skipped. A file that
    /// is not TOML is read line by line instead, so every line that is wrong is reported
    /// (not only the first) and the good ones still apply.
    pub fn parse(text: &str) -> Result<(Keymap, Vec<KeymapProblem>), KeymapProblem> {
        let (raw, mut problems) = match toml::from_str(text) {
            Ok(raw) => (raw, Vec::new()),
            Err(_) => parse_lines(text),
        };
        let (keymap, more) = Keymap::from_tables(raw);
        problems.extend(more);
        Ok((keymap, problems))
    }

    /// Resolves raw tables of key names and action names.
    fn from_tables(
        raw: BTreeMap<String, BTreeMap<String, String>>,
    ) -> (Keymap, Vec<KeymapProblem>) {
        let mut problems = Vec::new();
        let mut tables = BTreeMap::new();
        for (table, entries) in raw {
            let mut map = BTreeMap::new();
            for (key, action) in entries {
                let chord = match Chord::parse(&key) {
                    Ok(c) => c,
                    Err(e) => {
                        problems.push(KeymapProblem(format!("[{table}] {e}")));
                        continue;
                    }
                };
                let action: Action =
                    match serde_json::from_value(serde_json::Value::String(action.clone())) {
                        Ok(a) => a,
                        Err(_) => {
                            problems.push(KeymapProblem(format!(
                            "[{table}] {key:?}: {action:?} is not an action (see ? for the list)"
                        )));
                            continue;
                        }
                    };
                if map.insert(chord, action).is_some() {
                    problems.push(KeymapProblem(format!(
                        "[{table}] {key:?} is bound twice (as {chord})"
                    )));
                }
            }
            tables.insert(table, map);
        }
        (Keymap { tables }, problems)
    }

    /// The defaults overlaid with the user's file, if there is one.
    pub fn load(user_file: Option<&Path>) -> (Keymap, Vec<KeymapProblem>) {
        let mut keymap = Keymap::defaults();
        let Some(path) = user_file else {
            return (keymap, Vec::new());
        };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (keymap, Vec::new()),
            Err(e) => {
                return (
                    keymap,
                    vec![KeymapProblem(format!("{}: {e}", path.display()))],
                );
            }
        };
        match Keymap::parse(&text) {
            Ok((user, problems)) => {
                for (table, entries) in user.tables {
                    keymap.tables.entry(table).or_default().extend(entries);
                }
                let problems = problems
                    .into_iter()
                    .map(|p| KeymapProblem(format!("{}: {}", path.display(), p.0)))
                    .collect();
                (keymap, problems)
            }
            Err(p) => (
                keymap,
                vec![KeymapProblem(format!("{}: {}", path.display(), p.0))],
            ),
        }
    }

    /// The action a key means in `mode`, if any.
    pub fn resolve(&self, mode: Mode, chord: &Chord) -> Option<Action> {
        if mode.is_text() && chord.is_plain_char() {
            return None; // typed into the field
        }
        mode.tables()
            .iter()
            .find_map(|t| self.tables.get(*t).and_then(|m| m.get(chord)))
            .copied()
    }

    /// Every binding that is live in `mode` (shadowed ones left out), grouped by action in
    /// the order of [`Action::ALL`].
    pub fn bindings(&self, mode: Mode) -> Vec<(Action, Vec<Chord>)> {
        let mut seen = std::collections::HashSet::new();
        let mut by_action: BTreeMap<usize, (Action, Vec<Chord>)> = BTreeMap::new();
        for table in mode.tables() {
            let Some(map) = self.tables.get(*table) else {
                continue;
            };
            for (chord, action) in map {
                if !seen.insert(*chord) || (mode.is_text() && chord.is_plain_char()) {
                    continue;
                }
                let order = Action::ALL
                    .iter()
                    .position(|a| a == action)
                    .unwrap_or(usize::MAX);
                by_action
                    .entry(order)
                    .or_insert_with(|| (*action, Vec::new()))
                    .1
                    .push(*chord);
            }
        }
        by_action.into_values().collect()
    }

    /// The first key bound to `action` in `mode`, for hints like "press F5 to run".
    pub fn key_for(&self, mode: Mode, action: Action) -> Option<Chord> {
        self.bindings(mode)
            .into_iter()
            .find(|(a, _)| *a == action)
            .and_then(|(_, keys)| keys.into_iter().next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, m: KeyModifiers) -> Chord {
        Chord::from_event(&KeyEvent::new(code, m)).expect("nameable key")
    }

    #[test]
    fn defaults_parse_without_problems() {
        let (_, problems) = Keymap::parse(DEFAULT_KEYMAP).expect("default keymap parses");
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn chords_normalise_shift_and_case() {
        assert_eq!(Chord::parse("G"), Chord::parse("shift-g"));
        assert_eq!(
            Chord::parse("G").unwrap(),
            key(KeyCode::Char('G'), KeyModifiers::SHIFT)
        );
        assert_eq!(
            Chord::parse("ctrl-p").unwrap(),
            key(KeyCode::Char('p'), KeyModifiers::CONTROL)
        );
        assert_eq!(
            Chord::parse("backtab").unwrap(),
            key(KeyCode::BackTab, KeyModifiers::SHIFT)
        );
        assert_eq!(
            Chord::parse("space").unwrap(),
            key(KeyCode::Char(' '), KeyModifiers::NONE)
        );
        assert!(Chord::parse("f13").is_err());
        assert!(Chord::parse("hyper-x").is_err());
    }

    #[test]
    fn text_modes_type_plain_characters() {
        let k = Keymap::defaults();
        let q = key(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(k.resolve(Mode::Tree, &q), Some(Action::Quit));
        assert_eq!(k.resolve(Mode::Editor, &q), None);
        assert_eq!(k.resolve(Mode::Palette, &q), None);
        let f5 = key(KeyCode::F(5), KeyModifiers::NONE);
        assert_eq!(k.resolve(Mode::Editor, &f5), Some(Action::RunQuery));
        let ctrl_c = key(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(k.resolve(Mode::Input, &ctrl_c), Some(Action::Quit));
    }

    #[test]
    fn view_tables_shadow_navigation() {
        let k = Keymap::defaults();
        let l = key(KeyCode::Char('l'), KeyModifiers::NONE);
        assert_eq!(k.resolve(Mode::Tree, &l), Some(Action::Expand));
        assert_eq!(k.resolve(Mode::Results, &l), Some(Action::Right));
    }

    #[test]
    fn every_action_is_reachable() {
        let k = Keymap::defaults();
        for action in Action::ALL {
            let reachable = Mode::ALL
                .iter()
                .any(|m| k.bindings(*m).iter().any(|(a, _)| a == action));
            assert!(reachable, "{action:?} has no key in any mode");
        }
    }

    #[test]
    fn every_view_can_run_a_query_by_function_key() {
        // Ctrl-Enter does not reach the program in many terminals: F5 must work everywhere.
        let k = Keymap::defaults();
        let f5 = key(KeyCode::F(5), KeyModifiers::NONE);
        for m in Mode::ALL {
            assert_eq!(k.resolve(*m, &f5), Some(Action::RunQuery), "{m:?}");
        }
    }

    #[test]
    fn user_overlay_replaces_and_reports() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keymap.toml");
        std::fs::write(
            &path,
            "[global]\n\"x\" = \"quit\"\n\"y\" = \"fly\"\n\"hyper-z\" = \"quit\"\n",
        )
        .unwrap();
        let (k, problems) = Keymap::load(Some(&path));
        assert_eq!(problems.len(), 2, "{problems:?}");
        let x = key(KeyCode::Char('x'), KeyModifiers::NONE);
        assert_eq!(k.resolve(Mode::Partitions, &x), Some(Action::Quit));
        // Defaults survive.
        let q = key(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(k.resolve(Mode::Tree, &q), Some(Action::Quit));

        std::fs::write(&path, "not toml [").unwrap();
        let (k, problems) = Keymap::load(Some(&path));
        assert_eq!(problems.len(), 1);
        assert_eq!(k.resolve(Mode::Tree, &q), Some(Action::Quit));
    }

    #[test]
    fn a_file_that_is_not_toml_reports_every_bad_line_and_keeps_the_good_ones() {
        let text = "[global]\n\"x\" = \"quit\"\n\"y\" = quit\n[tree\n\"z\" = \"help\"\n[item]\n\"w\" = \"fly\"\n\"v\" \"help\"\n";
        let (k, problems) = Keymap::parse(text).expect("read line by line");
        let lines: Vec<&str> = problems.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(problems.len(), 5, "{lines:#?}");
        assert!(lines[0].starts_with("keymap line 3:"), "{lines:#?}");
        assert!(lines[1].starts_with("keymap line 4:"), "{lines:#?}");
        assert!(lines[2].starts_with("keymap line 5:"), "{lines:#?}");
        assert!(lines[3].starts_with("keymap line 8:"), "{lines:#?}");
        assert!(lines[4].contains("\"fly\" is not an action"), "{lines:#?}");
        let x = key(KeyCode::Char('x'), KeyModifiers::NONE);
        assert_eq!(k.resolve(Mode::Tree, &x), Some(Action::Quit));
    }

    #[test]
    fn duplicate_chords_in_one_table_are_reported() {
        let (_, problems) =
            Keymap::parse("[tree]\n\"G\" = \"top\"\n\"shift-g\" = \"bottom\"\n").expect("parses");
        assert_eq!(problems.len(), 1, "{problems:?}");
    }
}
