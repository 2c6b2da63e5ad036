//! Taking over and giving back the terminal, on every exit path, panics included.

use std::io::{self, stdout};

use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

/// Whether the session captures the mouse (set once, when the guard is made).
static MOUSE: AtomicBool = AtomicBool::new(false);

/// Raw mode, the alternate screen, bracketed paste, and the mouse unless it was left to
/// the terminal.
pub fn enter() -> io::Result<()> {
    // What a fault in a damaged data file puts back before it reports (crate::fault).
    let mut original = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: tcgetattr fills the struct when it returns 0, and only then is it read.
    if unsafe { libc::tcgetattr(0, original.as_mut_ptr()) } == 0 {
        crate::fault::terminal_taken(unsafe { original.assume_init() });
    }
    enable_raw_mode()?;
    execute!(stdout(), EnterAlternateScreen, EnableBracketedPaste)?;
    if MOUSE.load(Ordering::Relaxed) {
        execute!(stdout(), EnableMouseCapture)?;
    }
    Ok(())
}

/// Undoes [`enter`]; safe to call more than once.
pub fn leave() -> io::Result<()> {
    crate::fault::terminal_released();
    let r = execute!(
        stdout(),
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen
    );
    disable_raw_mode()?;
    r
}

/// Gives the terminal to another program (the editor).
pub fn suspend() -> io::Result<()> {
    leave()
}

pub fn resume() -> io::Result<()> {
    enter()
}

/// Restores the terminal before the default panic message is printed, so a panic never
/// leaves the shell in raw mode on the alternate screen.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = leave();
        previous(info);
    }));
}

/// Leaves the terminal when dropped: the normal exit path and early returns.
pub struct Guard;

impl Guard {
    /// Takes the terminal; `mouse`: clicks and the wheel come to the explorer.
    pub fn new(mouse: bool) -> io::Result<Guard> {
        MOUSE.store(mouse, Ordering::Relaxed);
        enter()?;
        Ok(Guard)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = leave();
    }
}
