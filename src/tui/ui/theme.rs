//! Colours and text styles, in one place: built-in defaults, overridable from
//! `theme.toml` in the config directory.
//!
//! ```toml
//! focus_border = "yellow"                     # a colour: name, "#rrggbb" or 0-255
//! selected = { fg = "black", bg = "#87afff", bold = true }
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub border: Style,
    pub focus_border: Style,
    pub title: Style,
    pub title_focus: Style,
    pub selected: Style,
    pub selected_unfocused: Style,
    pub dim: Style,
    pub status: Style,
    pub status_dir: Style,
    pub status_container: Style,
    pub tab: Style,
    pub tab_active: Style,
    pub charge: Style,
    pub info: Style,
    pub error: Style,
    pub hints: Style,
    pub hint_key: Style,
    pub hint: Style,
    pub key: Style,
    pub string: Style,
    pub number: Style,
    pub literal: Style,
    pub punct: Style,
    pub system: Style,
    pub keyword: Style,
    pub function: Style,
    pub param: Style,
    pub hot: Style,
    pub lit: Style,
    pub unlit: Style,
    pub header: Style,
    pub added: Style,
    pub removed: Style,
}

const fn fg(c: Color) -> Style {
    Style::new().fg(c)
}

/// The built-in theme.
pub static DEFAULT: Theme = Theme {
    border: fg(Color::DarkGray),
    focus_border: fg(Color::Cyan),
    title: fg(Color::Gray),
    title_focus: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
    selected: Style::new().bg(Color::Blue).fg(Color::White),
    selected_unfocused: Style::new().bg(Color::DarkGray),
    dim: fg(Color::DarkGray),
    status: Style::new().bg(Color::Black),
    status_dir: Style::new().fg(Color::Black).bg(Color::Gray),
    status_container: Style::new().fg(Color::Black).bg(Color::Cyan),
    tab: fg(Color::Gray),
    tab_active: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
    charge: Style::new().fg(Color::Black).bg(Color::Yellow),
    info: fg(Color::Green),
    error: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
    hints: Style::new(),
    hint_key: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
    hint: fg(Color::Gray),
    key: fg(Color::LightBlue),
    string: fg(Color::Green),
    number: fg(Color::Yellow),
    literal: fg(Color::Magenta),
    punct: fg(Color::Gray),
    system: fg(Color::DarkGray),
    keyword: Style::new()
        .fg(Color::LightMagenta)
        .add_modifier(Modifier::BOLD),
    function: fg(Color::LightCyan),
    param: fg(Color::Yellow),
    hot: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
    lit: Style::new().fg(Color::Black).bg(Color::Yellow),
    unlit: Style::new().fg(Color::Gray).bg(Color::DarkGray),
    header: Style::new().fg(Color::White).add_modifier(Modifier::BOLD),
    added: fg(Color::Green),
    removed: fg(Color::Red),
};

static ACTIVE: OnceLock<Theme> = OnceLock::new();

/// The theme in use: the one installed at start-up, else the default.
pub fn theme() -> &'static Theme {
    ACTIVE.get().unwrap_or(&DEFAULT)
}

/// Installs the theme for this process (the first call wins).
pub fn install(t: Theme) {
    let _ = ACTIVE.set(t);
}

/// A style as written in the theme file: a colour, or a table.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum StyleSpec {
    Color(String),
    Full {
        fg: Option<String>,
        bg: Option<String>,
        #[serde(default)]
        bold: bool,
        #[serde(default)]
        italic: bool,
        #[serde(default)]
        underline: bool,
    },
}

fn color(s: &str) -> Result<Color, String> {
    s.parse::<Color>()
        .map_err(|_| format!("{s:?} is not a colour (a name like \"cyan\", \"#rrggbb\" or 0-255)"))
}

impl StyleSpec {
    fn style(&self) -> Result<Style, String> {
        match self {
            StyleSpec::Color(c) => Ok(Style::new().fg(color(c)?)),
            StyleSpec::Full {
                fg,
                bg,
                bold,
                italic,
                underline,
            } => {
                let mut st = Style::new();
                if let Some(c) = fg {
                    st = st.fg(color(c)?);
                }
                if let Some(c) = bg {
                    st = st.bg(color(c)?);
                }
                for (on, m) in [
                    (*bold, Modifier::BOLD),
                    (*italic, Modifier::ITALIC),
                    (*underline, Modifier::UNDERLINED),
                ] {
                    if on {
                        st = st.add_modifier(m);
                    }
                }
                Ok(st)
            }
        }
    }
}

macro_rules! named_styles {
    ($($name:ident),* $(,)?) => {
        impl Theme {
            /// The names a theme file may set.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            fn slot(&mut self, name: &str) -> Option<&mut Style> {
                match name {
                    $(stringify!($name) => Some(&mut self.$name),)*
                    _ => None,
                }
            }
        }
    };
}

named_styles!(
    border,
    focus_border,
    title,
    title_focus,
    selected,
    selected_unfocused,
    dim,
    status,
    status_dir,
    status_container,
    tab,
    tab_active,
    charge,
    info,
    error,
    hints,
    hint_key,
    hint,
    key,
    string,
    number,
    literal,
    punct,
    system,
    keyword,
    function,
    param,
    hot,
    lit,
    unlit,
    header,
    added,
    removed
);

impl Theme {
    /// Parses a theme file over the defaults; problems are reported and skipped.
    pub fn parse(text: &str) -> (Theme, Vec<String>) {
        let mut t = DEFAULT.clone();
        let raw: BTreeMap<String, StyleSpec> = match toml::from_str(text) {
            Ok(r) => r,
            Err(e) => return (t, vec![format!("theme: {e}")]),
        };
        let mut problems = Vec::new();
        for (name, spec) in raw {
            match (t.slot(&name), spec.style()) {
                (Some(slot), Ok(style)) => *slot = style,
                (None, _) => problems.push(format!(
                    "theme: {name:?} is not a style name (one of {})",
                    Theme::NAMES.join(", ")
                )),
                (_, Err(e)) => problems.push(format!("theme: {name}: {e}")),
            }
        }
        (t, problems)
    }

    /// The defaults overlaid with `path` if it exists.
    pub fn load(path: Option<&Path>) -> (Theme, Vec<String>) {
        match path.map(std::fs::read_to_string) {
            Some(Ok(text)) => {
                let (t, p) = Theme::parse(&text);
                let shown = path.map(|p| p.display().to_string()).unwrap_or_default();
                (t, p.into_iter().map(|e| format!("{shown}: {e}")).collect())
            }
            Some(Err(e)) if e.kind() != std::io::ErrorKind::NotFound => {
                (DEFAULT.clone(), vec![format!("theme file: {e}")])
            }
            _ => (DEFAULT.clone(), Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theme_files_override_and_report() {
        let (t, problems) = Theme::parse(
            "focus_border = \"yellow\"\nselected = { fg = \"black\", bg = \"#87afff\", bold = true }\nnope = \"red\"\nerror = \"mauve-ish\"\n",
        );
        assert_eq!(t.focus_border, Style::new().fg(Color::Yellow));
        assert_eq!(
            t.selected,
            Style::new()
                .fg(Color::Black)
                .bg(Color::Rgb(0x87, 0xaf, 0xff))
                .add_modifier(Modifier::BOLD)
        );
        assert_eq!(t.error, DEFAULT.error);
        assert_eq!(problems.len(), 2, "{problems:?}");
        let (t, problems) = Theme::parse("not toml [");
        assert_eq!(t, DEFAULT);
        assert_eq!(problems.len(), 1);
    }
}
