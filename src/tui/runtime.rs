//! The event loop: terminal events and effect results in, `update`, effects out to
//! blocking threads, and a coalesced redraw at most every frame interval. Each tick also
//! reads the in-process gateway's request log (see `serving`).

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::effect::Effect;
use super::msg::Msg;
use super::serving::Serving;
use super::state::App;
use super::{platform, terminal, ui, update, worker};
use crate::engine::{self, Progress, RangeProgress};

/// Frame interval: draws are coalesced to at most this rate.
const FRAME: Duration = Duration::from_millis(16);

/// Runs effects off the UI task and keeps the stop flags of running jobs.
pub struct Executor {
    engine: Arc<dyn engine::Backend>,
    data_dir: PathBuf,
    tx: UnboundedSender<Msg>,
    /// Cancel/stop flags of queries, subscriptions and palette streams, by ticket.
    flags: HashMap<u64, Arc<AtomicBool>>,
    /// The gateway run in this process.
    serving: Serving,
}

impl Executor {
    /// `gateway` says how a gateway the explorer starts serves (its key, TLS).
    pub fn new(
        engine: Arc<dyn engine::Backend>,
        data_dir: PathBuf,
        tx: UnboundedSender<Msg>,
        gateway: super::Options,
    ) -> Executor {
        Executor {
            serving: Serving::new(engine.clone(), data_dir.clone(), gateway),
            engine,
            data_dir,
            tx,
            flags: HashMap::new(),
        }
    }

    fn flag(&mut self, ticket: u64) -> Arc<AtomicBool> {
        self.flags.entry(ticket).or_default().clone()
    }

    fn stop(&mut self, ticket: u64) {
        if let Some(f) = self.flags.remove(&ticket) {
            f.store(true, Ordering::Release);
        }
    }

    /// Starts an effect. `Edit` is not handled here: it needs the terminal.
    pub fn spawn(&mut self, app: &App, effect: Effect) {
        match effect {
            Effect::CancelQuery { ticket }
            | Effect::Unsubscribe { ticket }
            | Effect::StopPalette { ticket }
            | Effect::CancelJob { ticket } => self.stop(ticket),
            Effect::StartJob { ticket, job } => {
                let stop = self.flag(ticket);
                let (engine, tx) = (self.engine.clone(), self.tx.clone());
                let dir = self.data_dir.clone();
                tokio::task::spawn_blocking(move || {
                    let send = |m| {
                        let _ = tx.send(m);
                    };
                    let done = worker::run_job(&*engine, &dir, ticket, &job, &stop, &send);
                    send(done);
                });
            }
            Effect::Subscribe {
                ticket,
                scope,
                mode,
                start,
            } => {
                let stop = self.flag(ticket);
                let (engine, tx) = (self.engine.clone(), self.tx.clone());
                let follower = worker::FeedFollower::new(ticket, scope, mode, &start);
                tokio::task::spawn_blocking(move || {
                    follower.run(&*engine, &stop, &|m| {
                        let _ = tx.send(m);
                    });
                });
            }
            Effect::StreamPalette { ticket } => {
                let stop = self.flag(ticket);
                let mut injector = app.palette.injector();
                let (engine, tx) = (self.engine.clone(), self.tx.clone());
                tokio::task::spawn_blocking(move || {
                    worker::stream_palette(&*engine, &mut injector, &stop);
                    drop(injector);
                    let _ = tx.send(Msg::PaletteDone { ticket });
                });
            }
            Effect::Copy { text } => {
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = tx.send(Msg::Copied(platform::copy(&text)));
                });
            }
            Effect::StartGateway { ticket, addr } => {
                let (start, tx) = (self.serving.start(ticket, addr), self.tx.clone());
                tokio::spawn(async move {
                    let _ = tx.send(start.await);
                });
            }
            Effect::StopGateway { ticket } => {
                let (stop, tx) = (self.serving.stop(ticket), self.tx.clone());
                tokio::spawn(async move {
                    let _ = tx.send(stop.await);
                });
            }
            Effect::Edit { .. } | Effect::EditQuery { .. } | Effect::EditScript { .. } => {}
            other => {
                let (cancel, progress) = match &other {
                    Effect::RunQuery { ticket, .. } => {
                        let (ticket, tx) = (*ticket, self.tx.clone());
                        let progress = Progress(Arc::new(move |p: &RangeProgress| {
                            let _ = tx.send(Msg::QueryProgress {
                                ticket,
                                progress: p.clone(),
                            });
                        }));
                        (self.flag(ticket), Some(progress))
                    }
                    _ => (Arc::new(AtomicBool::new(false)), None),
                };
                let (engine, tx, dir) =
                    (self.engine.clone(), self.tx.clone(), self.data_dir.clone());
                tokio::task::spawn_blocking(move || {
                    for m in worker::perform(&*engine, &dir, other, &cancel, progress) {
                        let _ = tx.send(m);
                    }
                });
            }
        }
    }
}

/// Runs the UI until the user quits; a gateway it runs (served as `gateway` says) stops
/// with it.
pub async fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    mut app: App,
    engine: Arc<dyn engine::Backend>,
    data_dir: PathBuf,
    gateway: super::Options,
) -> io::Result<()>
where
    B::Error: Into<io::Error>,
{
    let (tx, mut rx) = unbounded_channel::<Msg>();
    let mut exec = Executor::new(engine, data_dir.clone(), tx.clone(), gateway);
    {
        let tx = tx.clone();
        let dir = data_dir.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(Msg::History(worker::load_history(&dir)));
        });
    }
    let first = update::start(&mut app);
    run_effects(terminal, &mut app, &mut exec, first, &mut None)?;

    let mut events = Some(EventStream::new());
    let mut frame = tokio::time::interval(FRAME);
    frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut second = tokio::time::interval(Duration::from_millis(250));
    let mut dirty = true;
    let mut batch = Vec::with_capacity(64);
    while !app.quit {
        let msgs: Vec<Msg> = tokio::select! {
            ev = next_event(&mut events) => match ev {
                Some(Ok(Event::Key(k))) => vec![Msg::Key(k)],
                Some(Ok(Event::Paste(p))) => vec![Msg::Paste(p)],
                Some(Ok(Event::Mouse(m))) => vec![Msg::Mouse(m)],
                Some(Ok(Event::Resize(..))) => { dirty = true; Vec::new() }
                Some(Ok(_)) => Vec::new(),
                Some(Err(e)) => return Err(e),
                None => { app.quit = true; Vec::new() }
            },
            n = rx.recv_many(&mut batch, 256) => {
                if n == 0 { break; }
                std::mem::take(&mut batch)
            },
            _ = second.tick() => {
                let tick = Msg::Tick { now: crate::engine::now_secs() };
                std::iter::once(tick).chain(exec.serving.poll()).collect()
            },
            _ = frame.tick() => {
                if app.palette.dirty.swap(false, Ordering::AcqRel) || app.palette.running {
                    // No wait: the matcher publishes as it goes, so each frame shows the
                    // best matches found so far.
                    app.palette.tick(0);
                    dirty = true;
                }
                if dirty {
                    let (mut rows, mut screen) = (app.page_rows, app.screen);
                    terminal
                        .draw(|f| {
                            screen = f.area();
                            rows = ui::draw(f, &app);
                        })
                        .map_err(Into::into)?;
                    app.page_rows = rows;
                    app.screen = screen;
                    dirty = false;
                }
                continue;
            }
        };
        for msg in msgs {
            let effects = update::update(&mut app, msg);
            run_effects(terminal, &mut app, &mut exec, effects, &mut events)?;
            dirty = true;
        }
    }
    for (_, f) in exec.flags.drain() {
        f.store(true, Ordering::Release);
    }
    exec.serving.shutdown().await;
    Ok(())
}

async fn next_event(events: &mut Option<EventStream>) -> Option<io::Result<Event>> {
    match events {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}

/// Gives the terminal to `$EDITOR` on `text` (input paused so the editor gets every
/// key) and takes it back.
fn in_editor<B: Backend>(
    terminal: &mut Terminal<B>,
    events: &mut Option<EventStream>,
    text: &str,
    what: &str,
    suffix: &str,
) -> io::Result<Result<String, String>>
where
    B::Error: Into<io::Error>,
{
    *events = None;
    terminal::suspend()?;
    let result = platform::edit_in_editor(text, what, suffix);
    terminal::resume()?;
    terminal.clear().map_err(Into::into)?;
    *events = Some(EventStream::new());
    Ok(result)
}

/// Starts effects; an edit hands the terminal to `$EDITOR` right here (the UI is
/// suspended meanwhile, so nothing else needs to run).
fn run_effects<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    exec: &mut Executor,
    effects: Vec<Effect>,
    events: &mut Option<EventStream>,
) -> io::Result<()>
where
    B::Error: Into<io::Error>,
{
    let mut queue: std::collections::VecDeque<Effect> = effects.into();
    while let Some(effect) = queue.pop_front() {
        if let Effect::Edit {
            db,
            c,
            text,
            original,
            if_match,
            create,
        } = effect
        {
            let result = in_editor(terminal, events, &text, "item", "json")?;
            let msg = Msg::Edited {
                db,
                c,
                original: original.unwrap_or(text),
                result,
                if_match,
                create,
            };
            queue.extend(update::update(app, msg));
        } else if let Effect::EditScript {
            db,
            c,
            mut spec,
            original,
            create,
        } = effect
        {
            let result = in_editor(terminal, events, &spec.body, "script", "js")?;
            if let Some(original) = original {
                spec.body = original;
            }
            let msg = Msg::ScriptEdited {
                db,
                c,
                spec,
                create,
                result,
            };
            queue.extend(update::update(app, msg));
        } else if let Effect::EditQuery { text } = effect {
            let result = in_editor(terminal, events, &text, "query", "sql")?;
            queue.extend(update::update(app, Msg::QueryEdited(result)));
        } else {
            exec.spawn(app, effect);
        }
    }
    Ok(())
}
