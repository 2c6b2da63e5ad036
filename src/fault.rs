//! Faults inside a store's memory map, contained: a damaged data file ends the process
//! with an error that says so, never with a signal.
//!
//! LMDB reads pages straight from the map. The check made before mapping a file
//! (`store::pages`) catches a truncated file, but a page overwritten in the middle is found
//! only when a read follows it: LMDB then touches an address past the file's end (SIGBUS),
//! follows a pointer out of the map (SIGSEGV) or fails one of its own assertions (SIGABRT).
//! None of those can be turned back into an error in the read that met it, but each can be
//! reported and the process ended cleanly: the handler prints the CLI's JSON error naming
//! the data file, puts the terminal back if the explorer had it, and exits with status 3,
//! the status of every other damage report.
//!
//! Without any store open, or for a fault next to the stack pointer (a stack overflow, which
//! Rust's own handler reports), the handler steps aside and the handler that was there
//! before runs. Any other fault while a store is open is reported as damage: inside the map
//! it surely is; outside it, it is LMDB following a damaged page's garbage offsets (this
//! program has no other unsafe code that could fault), and a SIGABRT is one of LMDB's
//! assertions failing, whose message, printed just before, says which.
//!
//! Everything the handler touches is prepared beforehand and read with atomics; it calls
//! only `write`, `tcsetattr` and `_exit`, which are async-signal-safe.

use std::sync::Once;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// The process exit status of a damaged store (as the CLI's for a damage error).
pub const DAMAGED_EXIT: i32 = 3;

/// Open stores' maps: start, end, and the message for a fault in that map.
const SLOTS: usize = 32;
static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static MESSAGES: [AtomicPtr<Message>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// The handlers that were in place before (Rust's own SIGSEGV handler reports stack
/// overflows), run for faults that are not a store's.
static PREVIOUS: [AtomicPtr<libc::sigaction>; 3] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; 3];
const SIGNALS: [libc::c_int; 3] = [libc::SIGBUS, libc::SIGSEGV, libc::SIGABRT];

/// The terminal as it was before the explorer took it over, to put back on a fault.
static TERMINAL: AtomicPtr<libc::termios> = AtomicPtr::new(std::ptr::null_mut());

/// A fault report, ready to write.
struct Message(Vec<u8>);

static INSTALL: Once = Once::new();

/// A store's map, registered while the store is open; dropping it unregisters the map.
pub struct MapGuard {
    slot: Option<usize>,
}

impl Drop for MapGuard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            STARTS[i].store(0, Ordering::SeqCst);
            ENDS[i].store(0, Ordering::SeqCst);
            // The message is leaked: a handler running on another thread may be reading it.
            MESSAGES[i].store(std::ptr::null_mut(), Ordering::SeqCst);
        }
    }
}

/// Reports faults in the memory map of `file` (just opened by LMDB) as damage to it. The
/// map is found in the process's own list of mappings: LMDB does not say where it put it.
/// Where there is no such list (not Linux), nothing is registered.
pub fn register_file(file: &std::path::Path) -> MapGuard {
    let path = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    // Lines are `start-end perms offset dev inode path`; the newest map of the file is the
    // one just made (a process may hold an older map of it until a store is dropped).
    let range = maps
        .lines()
        .filter(|line| line.ends_with(&*path.to_string_lossy()))
        .filter_map(|line| {
            let (start, rest) = line.split_once('-')?;
            let end = rest.split_whitespace().next()?;
            Some((
                usize::from_str_radix(start, 16).ok()?,
                usize::from_str_radix(end, 16).ok()?,
            ))
        })
        .max_by_key(|&(_, end)| end);
    match range {
        Some((start, end)) if end > start => register_map(start, end - start, file),
        _ => MapGuard { slot: None },
    }
}

/// Reports faults in `[start, start + len)` as damage to the data file at `file`.
/// With more stores open than there are slots, the extra ones are not covered (their
/// faults end the process with the signal, as before).
pub fn register_map(start: usize, len: usize, file: &std::path::Path) -> MapGuard {
    install();
    let json = serde_json::json!({"error": {
        "status": 500,
        "substatus": crate::error::substatus::STORE_DAMAGED,
        "code": "InternalServerError",
        "message": format!(
            "the data file {} is damaged: reading it met a page that is not there or not what \
             it should be. `cosmoscope check` reports what can still be read; restore the \
             directory from a copy",
            file.display()
        ),
        "requestCharge": 0.0,
    }});
    let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
    let message = Box::into_raw(Box::new(Message(text.into_bytes())));
    for i in 0..SLOTS {
        if STARTS[i]
            .compare_exchange(0, start, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            MESSAGES[i].store(message, Ordering::SeqCst);
            ENDS[i].store(start.saturating_add(len), Ordering::SeqCst);
            return MapGuard { slot: Some(i) };
        }
    }
    MapGuard { slot: None }
}

/// The explorer took the terminal over: on a fault, put `original` back first.
pub fn terminal_taken(original: libc::termios) {
    let old = TERMINAL.swap(Box::into_raw(Box::new(original)), Ordering::SeqCst);
    if !old.is_null() {
        // SAFETY: only this function stores pointers here, each from Box::into_raw; the
        // handler only reads through it, and runs at most once before the process exits.
        drop(unsafe { Box::from_raw(old) });
    }
}

/// The explorer gave the terminal back.
pub fn terminal_released() {
    let old = TERMINAL.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !old.is_null() {
        // SAFETY: as in `terminal_taken`.
        drop(unsafe { Box::from_raw(old) });
    }
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: plain libc calls setting up a handler for this process; the alternate
        // stack is leaked so it outlives every thread that may fault on its own stack.
        unsafe {
            let size = libc::SIGSTKSZ.max(64 * 1024);
            let stack = Box::leak(vec![0u8; size].into_boxed_slice());
            let ss = libc::stack_t {
                ss_sp: stack.as_mut_ptr().cast(),
                ss_flags: 0,
                ss_size: size,
            };
            libc::sigaltstack(&ss, std::ptr::null_mut());
            for (i, sig) in SIGNALS.into_iter().enumerate() {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let previous: *mut libc::sigaction = Box::into_raw(Box::new(std::mem::zeroed()));
                libc::sigaction(sig, &action, previous);
                PREVIOUS[i].store(previous, Ordering::SeqCst);
            }
        }
    });
}

/// The map slot holding `addr`, if a store's map does.
fn slot_of(addr: usize) -> Option<usize> {
    (0..SLOTS).find(|&i| {
        let start = STARTS[i].load(Ordering::SeqCst);
        start != 0 && addr >= start && addr < ENDS[i].load(Ordering::SeqCst)
    })
}

/// The stack pointer of the interrupted code, where the platform says how to read it.
fn interrupted_sp(ctx: *mut libc::c_void) -> Option<usize> {
    if ctx.is_null() {
        return None;
    }
    // SAFETY: an SA_SIGINFO handler's third argument is the interrupted ucontext.
    let uc = unsafe { &*(ctx as *const libc::ucontext_t) };
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    return Some(uc.uc_mcontext.gregs[libc::REG_RSP as usize] as usize);
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    return Some(uc.uc_mcontext.sp as usize);
    #[allow(unreachable_code)]
    {
        let _ = uc;
        None
    }
}

/// A fault within this distance of the stack pointer is the stack running into its guard
/// page (Rust's own handler reports that), not the store's.
const STACK_REACH: usize = 256 * 1024;

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let any_store = || (0..SLOTS).find(|&i| STARTS[i].load(Ordering::SeqCst) != 0);
    let slot = match sig {
        libc::SIGABRT => any_store(),
        // Inside a map: surely the file. Elsewhere, while a store is open, LMDB following
        // a damaged page's garbage offsets, unless the stack overflowed.
        _ => slot_of(addr).or_else(|| {
            let near_stack = interrupted_sp(ctx).is_some_and(|sp| sp.abs_diff(addr) < STACK_REACH);
            if near_stack { None } else { any_store() }
        }),
    };
    let message = slot.map(|i| MESSAGES[i].load(Ordering::SeqCst));
    match message {
        Some(m) if !m.is_null() => {
            // SAFETY: messages are never freed (see MapGuard::drop); the terminal state is
            // a Box only `terminal_taken`/`terminal_released` replace. Only write,
            // tcsetattr and _exit are called, all async-signal-safe.
            unsafe {
                let term = TERMINAL.load(Ordering::SeqCst);
                if !term.is_null() {
                    let restore = b"\x1b[?2004l\x1b[?1049l\x1b[?25h";
                    libc::write(1, restore.as_ptr().cast(), restore.len());
                    libc::tcsetattr(0, libc::TCSANOW, term);
                }
                let text = &(*m).0;
                libc::write(1, text.as_ptr().cast(), text.len());
                libc::_exit(DAMAGED_EXIT);
            }
        }
        _ => {
            // Not a store's fault: put back the handler that was there before (or the
            // default action) and return. A fault repeats at the same instruction and meets
            // it; abort raises again after a handler returns.
            let previous = SIGNALS
                .iter()
                .position(|&s| s == sig)
                .map(|i| PREVIOUS[i].load(Ordering::SeqCst))
                .filter(|p| !p.is_null());
            // SAFETY: the previous actions were stored before this handler was installed
            // and are never freed; sigaction and signal are async-signal-safe.
            unsafe {
                match previous {
                    Some(p) => {
                        libc::sigaction(sig, p, std::ptr::null_mut());
                    }
                    None => {
                        libc::signal(sig, libc::SIG_DFL);
                    }
                }
            }
        }
    }
}
