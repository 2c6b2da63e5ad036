//! User data made safe and measured for the screen.
//!
//! Item ids, partition key values, property names and values, query text and the requests
//! an application sends can hold any character. Two kinds would mislead the person reading:
//! control characters (ratatui drops them, so `a\nb` and `ab` would look alike) and the
//! invisible formatting characters that reorder or hide text (bidirectional overrides and
//! isolates, zero-width spaces; ratatui drops zero-width clusters too, and a terminal that
//! received one would reorder what follows it). [`escape`] shows each as a JSON-style escape,
//! the notation the rest of the explorer uses for values. Widths are display columns
//! (`unicode-width`, as ratatui measures), so CJK and emoji, two columns each, neither push a
//! row's counts out of its pane nor leave a column short.

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Whether `c` is shown escaped: C0 and C1 controls, DEL, and the invisible characters
/// that change how the text around them displays or make two texts look alike. The
/// zero-width joiners are not among them: they hold emoji sequences together.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'                  // Arabic letter mark
            | '\u{200B}'               // zero-width space
            | '\u{200E}' | '\u{200F}'   // left-to-right and right-to-left marks
            | '\u{2028}' | '\u{2029}'   // line and paragraph separators
            | '\u{202A}'..='\u{202E}'   // embeddings and overrides
            | '\u{2060}'..='\u{2069}'   // word joiner, invisible operators, isolates
            | '\u{FEFF}'                // zero-width no-break space (BOM)
            | '\u{FFF9}'..='\u{FFFB}' // interlinear annotation
        )
}

/// `s` with every control and invisible formatting character written as an escape (`\n`,
/// `\t`, `\r`, otherwise `\uXXXX`); borrowed when there is none.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Display columns of `s` as the terminal shows it (after [`escape`]).
pub fn width(s: &str) -> usize {
    escape(s).width()
}

/// `s` escaped and cut to `width` display columns, the cut marked with `…`.
pub fn clip(s: &str, width: usize) -> String {
    let s = escape(s);
    if s.width() <= width {
        return s.into_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `s` escaped, cut and padded with spaces to exactly `width` display columns: a table
/// cell (`format!("{:<w$}")` pads by characters, which is short for wide text).
pub fn fit(s: &str, width: usize) -> String {
    let mut out = clip(s, width);
    let pad = width.saturating_sub(out.width());
    out.extend(std::iter::repeat_n(' ', pad));
    out
}

/// Display columns of the first `chars` characters of `line`: where a text cursor after
/// them stands on screen.
pub fn columns_before(line: &str, chars: usize) -> usize {
    line.chars()
        .take(chars)
        .map(|c| c.width().unwrap_or(0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_shown_as_escapes() {
        assert_eq!(escape("plain id"), "plain id");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(escape("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(escape("\u{1b}[31mred"), "\\u001b[31mred");
        assert_eq!(escape("user\u{202E}gpj.exe"), "user\\u202egpj.exe");
        assert_eq!(escape("a\u{2066}b\u{2069}"), "a\\u2066b\\u2069");
        assert_eq!(escape("zero\u{200B}width"), "zero\\u200bwidth");
        assert_eq!(escape("c1\u{9B}"), "c1\\u009b");
        // Joiners stay: they hold emoji sequences together and reorder nothing.
        assert_eq!(escape("é漢🙂👩\u{200D}💻"), "é漢🙂👩\u{200D}💻");
    }

    #[test]
    fn widths_count_display_columns() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("漢字"), 4);
        assert_eq!(width("🙂x"), 3);
        assert_eq!(width("a\nb"), 4);
    }

    #[test]
    fn clip_cuts_by_columns_and_never_splits_a_wide_character() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("漢字漢字", 5), "漢字…");
        assert_eq!(clip("漢字漢字", 4), "漢…");
        assert_eq!(width(&clip("漢字漢字", 4)), 3);
        assert_eq!(clip("🙂🙂🙂", 3), "🙂…");
        assert_eq!(clip("a\u{202E}bc", 4), "a\\u…");
        assert_eq!(clip("anything", 0), "");
        assert_eq!(clip("ab", 1), "…");
    }

    #[test]
    fn a_cursor_after_wide_characters_stands_two_columns_per_character() {
        assert_eq!(columns_before("ab", 1), 1);
        assert_eq!(columns_before("'東京' x", 3), 5);
        assert_eq!(columns_before("ab", 9), 2);
    }

    #[test]
    fn fit_pads_to_exact_columns() {
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(fit("漢", 4), "漢  ");
        assert_eq!(width(&fit("漢字漢字", 5)), 5);
        assert_eq!(width(&fit("漢字漢字", 4)), 4);
        assert_eq!(fit("abcdef", 4), "abc…");
    }
}
