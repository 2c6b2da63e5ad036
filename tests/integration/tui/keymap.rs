//! The keymap as a user meets it: the help screen lists every binding of the view it is
//! opened from, every listed key really does what help says, and no default binding
//! silently shadows another.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cosmoscope::tui::action::Action;
use cosmoscope::tui::harness::parse_keys;
use cosmoscope::tui::keymap::{Chord, DEFAULT_KEYMAP, Keymap, Mode};
use cosmoscope::tui::msg::Msg;
use cosmoscope::tui::state::{App, Focus, Layer, View};
use cosmoscope::tui::{ui, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn app_in(mode: Mode) -> App {
    let mut app = App::new("<data-dir>".into(), Arc::new(Keymap::defaults()));
    let (focus, view) = match mode {
        Mode::Tree => (Focus::Tree, View::Item),
        Mode::Item => (Focus::View, View::Item),
        Mode::Editor => (Focus::Editor, View::Query),
        Mode::Results => (Focus::View, View::Query),
        Mode::Feed => (Focus::View, View::Feed),
        Mode::Partitions => (Focus::View, View::Partitions),
        Mode::Requests => (Focus::View, View::Requests),
        Mode::Advisor => (Focus::View, View::Advisor),
        other => panic!("{other:?} is not a pane"),
    };
    app.focus = focus;
    app.view = view;
    assert_eq!(app.mode(), mode);
    app
}

fn draw(app: &App, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|f| {
            ui::draw(f, app);
        })
        .expect("draw");
    let buf = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect()
}

const PANES: [Mode; 8] = [
    Mode::Tree,
    Mode::Item,
    Mode::Editor,
    Mode::Results,
    Mode::Feed,
    Mode::Partitions,
    Mode::Requests,
    Mode::Advisor,
];

#[test]
fn help_lists_every_binding_of_the_view_it_is_opened_from() {
    for mode in PANES {
        let mut app = app_in(mode);
        // F1 opens help everywhere, the editor included (where `?` is typed).
        for key in parse_keys("<f1>") {
            update::update(&mut app, Msg::Key(key));
        }
        assert!(
            matches!(app.layers.last(), Some(Layer::Help { .. })),
            "{mode:?}: F1 did not open help"
        );
        let bindings = app.keymap.bindings(mode);
        // Tall enough for every line of help.
        let frame = draw(&app, 120, bindings.len() as u16 + 12);
        assert!(
            frame
                .iter()
                .any(|l| l.contains(&format!("Help · {}", mode.title()))),
            "{mode:?}:\n{}",
            frame.join("\n")
        );
        for (action, chords) in &bindings {
            let line = frame
                .iter()
                .find(|l| l.contains(&format!(" {:<16}", action.name())))
                .unwrap_or_else(|| {
                    panic!(
                        "{mode:?}: help does not list {}:\n{}",
                        action.name(),
                        frame.join("\n")
                    )
                });
            for chord in chords {
                let key = chord.to_string();
                assert!(
                    line.replace('│', " ").split_whitespace().any(|w| w == key),
                    "{mode:?}: help shows {} without its key {key}: {line:?}",
                    action.name()
                );
            }
        }
        // Esc closes it again.
        for key in parse_keys("<esc>") {
            update::update(&mut app, Msg::Key(key));
        }
        assert!(app.layers.is_empty(), "{mode:?}");
    }
}

#[test]
fn every_listed_binding_resolves_to_its_action() {
    let keymap = Keymap::defaults();
    for mode in Mode::ALL {
        for (action, chords) in keymap.bindings(*mode) {
            for chord in chords {
                assert_eq!(
                    keymap.resolve(*mode, &chord),
                    Some(action),
                    "{mode:?}: {chord} is listed for {}",
                    action.name()
                );
            }
        }
    }
}

#[test]
fn the_hint_bar_names_only_keys_that_work_in_its_mode() {
    let keymap = Keymap::defaults();
    for mode in PANES {
        let app = app_in(mode);
        let frame = draw(&app, 240, 24);
        let hints = frame.last().expect("a hint line").trim().to_string();
        assert!(!hints.is_empty(), "{mode:?}");
        let bindings = keymap.bindings(mode);
        // Hints are `KEY label`, two spaces apart; keys have no spaces, labels may.
        for hint in hints.split("  ").map(str::trim).filter(|h| !h.is_empty()) {
            let (key, label) = hint.split_once(' ').unwrap_or((hint, ""));
            assert!(
                bindings
                    .iter()
                    .any(|(action, chords)| action.label() == label
                        && chords.iter().any(|c| c.to_string() == key)),
                "{mode:?}: the hint {hint:?} is not a live binding"
            );
        }
    }
}

/// Tables a mode reads, most specific first (as the keymap file documents).
fn tables(mode: Mode) -> &'static [&'static str] {
    match mode {
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

#[test]
fn no_default_binding_shadows_another_by_accident() {
    let raw: BTreeMap<String, BTreeMap<String, String>> =
        toml::from_str(DEFAULT_KEYMAP).expect("the default keymap is TOML");
    let parsed: BTreeMap<&str, BTreeMap<Chord, String>> = raw
        .iter()
        .map(|(t, entries)| {
            let mut map = BTreeMap::new();
            for (k, a) in entries {
                let chord = Chord::parse(k).unwrap_or_else(|e| panic!("[{t}] {e}"));
                assert!(
                    map.insert(chord, a.clone()).is_none(),
                    "[{t}] {k} is bound twice"
                );
            }
            (t.as_str(), map)
        })
        .collect();
    // Every table the modes read exists, and no table is left unread.
    let read: BTreeSet<&str> = Mode::ALL.iter().flat_map(|m| tables(*m)).copied().collect();
    let defined: BTreeSet<&str> = parsed.keys().copied().collect();
    assert_eq!(read, defined);

    // Where a view's table takes a key from [navigation] or [global] for a different
    // action, it is on purpose: these and no others.
    let mut shadowed = BTreeSet::new();
    for mode in Mode::ALL {
        let t = tables(*mode);
        for (i, table) in t.iter().enumerate() {
            for (chord, action) in &parsed[table] {
                for lower in &t[i + 1..] {
                    if let Some(other) = parsed[lower].get(chord)
                        && other != action
                    {
                        shadowed.insert(format!(
                            "[{table}] {chord} = {action} over [{lower}] {other}"
                        ));
                    }
                }
            }
        }
    }
    let expected: BTreeSet<String> = [
        "[advisor] h = left over [navigation] collapse",
        "[advisor] l = right over [navigation] expand",
        "[advisor] ← = left over [navigation] collapse",
        "[advisor] → = right over [navigation] expand",
        "[results] h = left over [navigation] collapse",
        "[results] l = right over [navigation] expand",
        "[results] ← = left over [navigation] collapse",
        "[results] → = right over [navigation] expand",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(shadowed, expected);

    // Plain characters in [global] cannot be typed in text fields: every global action
    // bound only to plain characters must also have a key that works while typing.
    let keymap = Keymap::defaults();
    for (chord, action) in &parsed["global"] {
        if chord.is_plain_char() {
            let action: Action = serde_json::from_value(serde_json::Value::String(action.clone()))
                .expect("an action");
            let typed_fallback = keymap
                .bindings(Mode::Editor)
                .iter()
                .any(|(a, _)| *a == action);
            assert!(
                typed_fallback,
                "{} is bound to {chord} only, which the query editor types",
                action.name()
            );
        }
    }
}

#[test]
fn a_keymap_file_that_is_not_toml_reports_every_bad_line_in_the_message_log() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("keymap.toml");
    std::fs::write(
        &path,
        "[global]\n\"x\" = \"quit\"\n\"y\" = quit\n\"F\" = \"zoom\n[results]\n\"u\" = \"sort\"\n\"hyper-k\" = \"sort\"\n",
    )
    .expect("write");
    let (keymap, problems) = Keymap::load(Some(&path));
    let mut app = App::new("<data-dir>".into(), Arc::new(keymap));
    let texts: Vec<String> = problems.into_iter().map(|p| p.0).collect();
    cosmoscope::tui::report_problems(&mut app, &texts);
    let log: Vec<&str> = app.log.iter().map(|m| m.text.as_str()).collect();
    // Lines 3 and 4 are not TOML, line 7 names no key; each is reported, with its file.
    assert_eq!(log.len(), 4, "{log:#?}");
    let file = path.display().to_string();
    assert!(
        log[0].starts_with(&format!("{file}: keymap line 3:")),
        "{log:#?}"
    );
    assert!(
        log[1].starts_with(&format!("{file}: keymap line 4:")),
        "{log:#?}"
    );
    assert!(log[2].contains("\"hyper-k\" is not a key"), "{log:#?}");
    assert!(log[3].contains("3 problems"), "{log:#?}");
    // The good lines still apply.
    let u = parse_keys("u")[0];
    let chord = Chord::from_event(&u).expect("a chord");
    assert_eq!(
        app.keymap.resolve(Mode::Results, &chord),
        Some(Action::Sort)
    );
}
