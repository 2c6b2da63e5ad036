//! What the UI borrows from the machine: the clipboard, `$EDITOR`, the config directory.

use std::io::Write;
use std::path::PathBuf;

use base64::Engine as _;

/// Copies `text`: to the system clipboard when there is one, else through the terminal
/// with OSC 52 (which also works over SSH and in tmux with `set-clipboard on`).
pub fn copy(text: &str) -> Result<&'static str, String> {
    let system = arboard::Clipboard::new().and_then(|mut c| c.set_text(text.to_string()));
    if system.is_ok() {
        return Ok("system clipboard");
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut out = std::io::stdout();
    write!(out, "\x1b]52;c;{encoded}\x07")
        .and_then(|_| out.flush())
        .map(|_| "OSC 52")
        .map_err(|e| e.to_string())
}

/// The editor to hand items to: `$VISUAL`, `$EDITOR`, else `vi`.
pub fn editor_command() -> String {
    std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .ok()
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Writes `text` to a temporary file named `cosmoscope-{what}-….{suffix}` (the suffix
/// lets the editor highlight it), runs the editor on it and returns what the file holds
/// afterwards. The caller has already given the terminal to the editor.
pub fn edit_in_editor(text: &str, what: &str, suffix: &str) -> Result<String, String> {
    let mut file = tempfile::Builder::new()
        .prefix(&format!("cosmoscope-{what}-"))
        .suffix(&format!(".{suffix}"))
        .tempfile()
        .map_err(|e| format!("cannot create a temporary file: {e}"))?;
    file.write_all(text.as_bytes())
        .and_then(|_| file.flush())
        .map_err(|e| format!("cannot write the temporary file: {e}"))?;
    let command = editor_command();
    // The editor may carry arguments (`code --wait`).
    let mut parts = command.split_whitespace();
    let program = parts.next().unwrap_or("vi");
    let status = std::process::Command::new(program)
        .args(parts)
        .arg(file.path())
        .status()
        .map_err(|e| format!("cannot run {command:?} (set $EDITOR): {e}"))?;
    if !status.success() {
        return Err(format!("{command} exited with {status}; nothing saved"));
    }
    std::fs::read_to_string(file.path()).map_err(|e| format!("cannot read the edited file: {e}"))
}

/// The platform config directory (`~/.config/cosmoscope` on Linux).
pub fn config_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "cosmoscope").map(|d| d.config_dir().to_path_buf())
}
