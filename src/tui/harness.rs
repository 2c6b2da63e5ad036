//! A headless driver for the UI: the real `update`, the real effects against a real
//! engine, and frames drawn on ratatui's `TestBackend`. Effects run synchronously, so a
//! test reads like a person at the keyboard: keys, then what the screen shows. A gateway
//! the UI starts runs for real, on a runtime of the harness's own, and its request log is
//! read when the test says so ([`Harness::poll_traffic`]), as the runtime's tick would.
//!
//! Test support only, so it panics where a test should fail: built with the `test-harness`
//! feature, which the integration tests and the benchmarks turn on and the program never
//! does.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::effect::Effect;
use super::keymap::Keymap;
use super::msg::Msg;
use super::serving::Serving;
use super::state::App;
use super::{Options, ui, update, worker};
use crate::engine::Backend;
use crate::gateway::Traffic;

pub struct Harness {
    pub app: App,
    pub engine: Arc<dyn Backend>,
    data_dir: PathBuf,
    terminal: Terminal<TestBackend>,
    followers: HashMap<u64, worker::FeedFollower>,
    /// What `Copy` effects copied.
    pub copied: Vec<String>,
    /// What the "editor" returns for the next `Edit` effects, in order.
    pub editor_results: VecDeque<Result<String, String>>,
    /// Every effect performed, for assertions.
    pub log: Vec<Effect>,
    serving: Serving,
    /// The runtime a started gateway runs on, made when the first one starts.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Harness {
    /// A UI on `engine`, `width`×`height`, with the tree loaded.
    pub fn new(engine: Arc<dyn Backend>, data_dir: PathBuf, width: u16, height: u16) -> Harness {
        let app = App::new("<data-dir>".into(), Arc::new(Keymap::defaults()));
        let terminal = Terminal::new(TestBackend::new(width, height))
            .unwrap_or_else(|e| panic!("test backend: {e}"));
        let serving = Serving::new(engine.clone(), data_dir.clone(), Options::default());
        let mut app = app;
        app.adopt(engine.as_ref());
        let mut h = Harness {
            app,
            serving,
            runtime: None,
            engine,
            data_dir,
            terminal,
            followers: HashMap::new(),
            copied: Vec::new(),
            editor_results: VecDeque::new(),
            log: Vec::new(),
        };
        let effects = update::start(&mut h.app);
        h.run(effects);
        h
    }

    /// Gateways started from now on take clients signed with `key` instead of the
    /// emulator's.
    pub fn set_gateway_key(&mut self, key: &str) {
        self.set_gateway_options(Options {
            key: Some(key.to_string()),
            ..Options::default()
        });
    }

    /// Gateways started from now on serve as `options` say (as the command line's
    /// `--serve-*` flags set them).
    pub fn set_gateway_options(&mut self, options: Options) {
        self.serving = Serving::new(self.engine.clone(), self.data_dir.clone(), options);
    }

    /// The running gateway's request log (a test may record exchanges of its own in it).
    pub fn gateway_traffic(&self) -> Option<Arc<Traffic>> {
        self.serving.traffic()
    }

    /// Reads the gateway's log as the runtime does on every tick.
    pub fn poll_traffic(&mut self) {
        if let Some(m) = self.serving.poll() {
            self.send(m);
        }
    }

    fn block_on<T>(&mut self, work: impl std::future::Future<Output = T>) -> T {
        let rt = self.runtime.get_or_insert_with(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap_or_else(|e| panic!("runtime: {e}"))
        });
        rt.block_on(work)
    }

    /// Sends keys written like `j j <enter> <c-p> <f5>`: `<...>` names a key, anything
    /// else is typed character by character (`<space>` for a space).
    pub fn keys(&mut self, spec: &str) {
        for key in parse_keys(spec) {
            self.send(Msg::Key(key));
        }
    }

    /// Types text into whatever has focus.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            let key = if c == '\n' {
                KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)
            } else {
                KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
            };
            self.send(Msg::Key(key));
        }
    }

    /// A left click at a cell of the last frame drawn ([`Harness::render`] first).
    pub fn click(&mut self, column: u16, row: u16) {
        self.mouse(MouseEventKind::Down(MouseButton::Left), column, row);
    }

    /// A turn of the wheel (down or up) over a cell of the last frame drawn.
    pub fn wheel(&mut self, down: bool, column: u16, row: u16) {
        let kind = if down {
            MouseEventKind::ScrollDown
        } else {
            MouseEventKind::ScrollUp
        };
        self.mouse(kind, column, row);
    }

    fn mouse(&mut self, kind: MouseEventKind, column: u16, row: u16) {
        self.send(Msg::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }));
    }

    pub fn send(&mut self, msg: Msg) {
        let effects = update::update(&mut self.app, msg);
        self.run(effects);
    }

    /// Performs effects until none are left.
    fn run(&mut self, effects: Vec<Effect>) {
        let mut queue: VecDeque<Effect> = effects.into();
        while let Some(effect) = queue.pop_front() {
            self.log.push(effect.clone());
            let msgs = match effect {
                Effect::Subscribe {
                    ticket,
                    scope,
                    mode,
                    start,
                } => {
                    let f = worker::FeedFollower::new(ticket, scope, mode, &start);
                    self.followers.insert(ticket, f);
                    self.poll_feed_for(ticket)
                }
                Effect::Unsubscribe { ticket } => {
                    self.followers.remove(&ticket);
                    Vec::new()
                }
                Effect::StreamPalette { ticket } => {
                    let mut injector = self.app.palette.injector();
                    worker::stream_palette(&*self.engine, &mut injector, &AtomicBool::new(false));
                    drop(injector);
                    vec![Msg::PaletteDone { ticket }]
                }
                Effect::StartJob { ticket, job } => {
                    let progress = std::cell::RefCell::new(Vec::new());
                    let done = worker::run_job(
                        &*self.engine,
                        &self.data_dir,
                        ticket,
                        &job,
                        &AtomicBool::new(false),
                        &|m| progress.borrow_mut().push(m),
                    );
                    let mut msgs = progress.into_inner();
                    msgs.push(done);
                    msgs
                }
                Effect::StartGateway { ticket, addr } => {
                    let start = self.serving.start(ticket, addr);
                    vec![self.block_on(start)]
                }
                Effect::StopGateway { ticket } => {
                    let stop = self.serving.stop(ticket);
                    vec![self.block_on(stop)]
                }
                Effect::Copy { text } => {
                    self.copied.push(text);
                    vec![Msg::Copied(Ok("test clipboard"))]
                }
                Effect::Edit {
                    db,
                    c,
                    text,
                    original,
                    if_match,
                    create,
                } => {
                    let result = self
                        .editor_results
                        .pop_front()
                        .unwrap_or_else(|| Ok(text.clone()));
                    vec![Msg::Edited {
                        db,
                        c,
                        original: original.unwrap_or(text),
                        result,
                        if_match,
                        create,
                    }]
                }
                Effect::EditScript {
                    db,
                    c,
                    mut spec,
                    original,
                    create,
                } => {
                    let result = self
                        .editor_results
                        .pop_front()
                        .unwrap_or_else(|| Ok(spec.body.clone()));
                    if let Some(original) = original {
                        spec.body = original;
                    }
                    vec![Msg::ScriptEdited {
                        db,
                        c,
                        spec,
                        create,
                        result,
                    }]
                }
                Effect::EditQuery { text } => {
                    let result = self.editor_results.pop_front().unwrap_or(Ok(text));
                    vec![Msg::QueryEdited(result)]
                }
                other => worker::perform(
                    &*self.engine,
                    &self.data_dir,
                    other,
                    &AtomicBool::new(false),
                    None,
                ),
            };
            for m in msgs {
                queue.extend(update::update(&mut self.app, m));
            }
        }
        self.settle_palette();
    }

    fn poll_feed_for(&mut self, ticket: u64) -> Vec<Msg> {
        let Some(f) = self.followers.get_mut(&ticket) else {
            return Vec::new();
        };
        let (msg, ended) = f.poll(&*self.engine);
        if ended {
            self.followers.remove(&ticket);
        }
        msg.into_iter().collect()
    }

    /// Polls every live feed subscription once, as its thread would.
    pub fn poll_feeds(&mut self) {
        let tickets: Vec<u64> = self.followers.keys().copied().collect();
        for t in tickets {
            for m in self.poll_feed_for(t) {
                self.send(m);
            }
        }
    }

    /// Lets the palette's matcher finish, or go as far as it is allowed
    /// (`PaletteState::pace`).
    pub fn settle_palette(&mut self) {
        for _ in 0..500 {
            // Held before the tick: the tick then reads every allowed chunk's matches.
            let held = self.app.palette.held();
            self.app.palette.tick(10);
            if !self.app.palette.running || held {
                break;
            }
        }
    }

    /// Draws a frame and returns it as text, one line per row.
    pub fn render(&mut self) -> String {
        let (mut rows, mut screen) = (0, self.app.screen);
        let app = &self.app;
        if let Err(e) = self.terminal.draw(|f| {
            screen = f.area();
            rows = ui::draw(f, app);
        }) {
            panic!("draw: {e}");
        }
        self.app.page_rows = rows;
        self.app.screen = screen;
        let buf = self.terminal.backend().buffer();
        let area = buf.area;
        let mut out = String::new();
        for y in 0..area.height {
            let mut line = String::new();
            // A wide character (an emoji) covers the next cell, which the backend never
            // rewrites: skip it, as a terminal would, instead of reading a stale symbol.
            let mut covered = 0;
            for x in 0..area.width {
                if covered > 0 {
                    covered -= 1;
                    continue;
                }
                let symbol = buf[(x, y)].symbol();
                line.push_str(symbol);
                covered = ratatui::text::Span::raw(symbol).width().saturating_sub(1);
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    pub fn resize(&mut self, width: u16, height: u16) {
        self.terminal.backend_mut().resize(width, height);
        let _ = self
            .terminal
            .resize(ratatui::layout::Rect::new(0, 0, width, height));
    }
}

impl Drop for Harness {
    /// A gateway still serving stops with the harness, before its runtime goes.
    fn drop(&mut self) {
        if self.runtime.is_some() {
            let stop = self.serving.shutdown();
            self.block_on(stop);
        }
    }
}

/// Parses a key macro (see [`Harness::keys`]).
pub fn parse_keys(spec: &str) -> Vec<KeyEvent> {
    let mut out = Vec::new();
    let mut chars = spec.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '<' {
            let name: String = chars.by_ref().take_while(|c| *c != '>').collect();
            if let Some(k) = named_key(&name) {
                out.push(k);
            }
        } else if c != ' ' {
            let m = if c.is_ascii_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            out.push(KeyEvent::new(KeyCode::Char(c), m));
        }
    }
    out
}

fn named_key(name: &str) -> Option<KeyEvent> {
    let (mods, base) = if let Some(r) = name.strip_prefix("c-") {
        (KeyModifiers::CONTROL, r)
    } else if let Some(r) = name.strip_prefix("a-") {
        (KeyModifiers::ALT, r)
    } else if let Some(r) = name.strip_prefix("s-") {
        (KeyModifiers::SHIFT, r)
    } else {
        (KeyModifiers::NONE, name)
    };
    let code = match base {
        "enter" | "ret" => KeyCode::Enter,
        "esc" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "space" => KeyCode::Char(' '),
        "bs" => KeyCode::Backspace,
        "del" => KeyCode::Delete,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "lt" => KeyCode::Char('<'),
        f if f.starts_with('f') => KeyCode::F(f[1..].parse().ok()?),
        c if c.chars().count() == 1 => KeyCode::Char(c.chars().next()?),
        _ => return None,
    };
    Some(KeyEvent::new(code, mods))
}
