//! A small multi-line text buffer with a cursor: the query editor and one-line fields.
//!
//! Positions are in characters, not bytes, so the cursor never splits a UTF-8 sequence.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::query::complete::is_word_char;

#[derive(Debug, Clone, PartialEq)]
pub struct TextBuffer {
    pub lines: Vec<String>,
    pub row: usize,
    pub col: usize,
    pub multiline: bool,
    /// First line shown (the view scrolls to keep the cursor visible).
    pub scroll: usize,
}

impl Default for TextBuffer {
    fn default() -> TextBuffer {
        TextBuffer::new("", true)
    }
}

impl TextBuffer {
    pub fn new(text: &str, multiline: bool) -> TextBuffer {
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        if lines.is_empty() {
            lines.push(String::new());
        }
        let row = lines.len() - 1;
        let col = lines[row].chars().count();
        TextBuffer {
            lines,
            row,
            col,
            multiline,
            scroll: 0,
        }
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn set_text(&mut self, text: &str) {
        *self = TextBuffer::new(text, self.multiline);
    }

    fn byte_at(line: &str, col: usize) -> usize {
        line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
    }

    fn line_len(&self, row: usize) -> usize {
        self.lines[row].chars().count()
    }

    pub fn insert(&mut self, c: char) {
        let line = &mut self.lines[self.row];
        let at = Self::byte_at(line, self.col);
        line.insert(at, c);
        self.col += 1;
    }

    pub fn insert_str(&mut self, s: &str) {
        for c in s.chars() {
            if c == '\n' {
                self.newline();
            } else if c != '\r' {
                self.insert(c);
            }
        }
    }

    pub fn newline(&mut self) {
        if !self.multiline {
            return;
        }
        let line = &mut self.lines[self.row];
        let at = Self::byte_at(line, self.col);
        let rest = line.split_off(at);
        // Keep the indentation of the line being split.
        let indent: String = line.chars().take_while(|c| *c == ' ').collect();
        self.row += 1;
        self.col = indent.chars().count();
        self.lines.insert(self.row, indent + &rest);
    }

    pub fn backspace(&mut self) {
        if self.col > 0 {
            let line = &mut self.lines[self.row];
            let at = Self::byte_at(line, self.col - 1);
            line.remove(at);
            self.col -= 1;
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.line_len(self.row);
            self.lines[self.row].push_str(&line);
        }
    }

    pub fn delete(&mut self) {
        if self.col < self.line_len(self.row) {
            let line = &mut self.lines[self.row];
            let at = Self::byte_at(line, self.col);
            line.remove(at);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&next);
        }
    }

    pub fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.line_len(self.row);
        }
    }

    pub fn right(&mut self) {
        if self.col < self.line_len(self.row) {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    /// The character before the cursor on its line.
    fn char_before(&self) -> Option<char> {
        self.col
            .checked_sub(1)
            .and_then(|c| self.lines[self.row].chars().nth(c))
    }

    fn char_at(&self) -> Option<char> {
        self.lines[self.row].chars().nth(self.col)
    }

    /// To the start of the word before the cursor (over any spacing and punctuation first),
    /// to the previous line's end at a line start.
    pub fn word_left(&mut self) {
        if self.col == 0 {
            return self.left();
        }
        while self.char_before().is_some_and(|c| !is_word_char(c)) {
            self.col -= 1;
        }
        while self.char_before().is_some_and(is_word_char) {
            self.col -= 1;
        }
    }

    /// To the end of the word after the cursor, to the next line's start at a line end.
    pub fn word_right(&mut self) {
        if self.col == self.line_len(self.row) {
            return self.right();
        }
        while self.char_at().is_some_and(|c| !is_word_char(c)) {
            self.col += 1;
        }
        while self.char_at().is_some_and(is_word_char) {
            self.col += 1;
        }
    }

    /// Deletes back to where [`TextBuffer::word_left`] goes.
    pub fn delete_word_back(&mut self) {
        let (row, col) = (self.row, self.col);
        self.word_left();
        if self.row == row {
            let line = &mut self.lines[row];
            let (a, b) = (Self::byte_at(line, self.col), Self::byte_at(line, col));
            line.replace_range(a..b, "");
        } else {
            // At a line start: join the lines, as backspace does.
            self.row = row;
            self.col = col;
            self.backspace();
        }
    }

    pub fn up(&mut self) {
        if self.row > 0 {
            self.row -= 1;
            self.col = self.col.min(self.line_len(self.row));
        }
    }

    pub fn down(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = self.col.min(self.line_len(self.row));
        }
    }

    /// The cursor as a character offset into [`TextBuffer::text`].
    pub fn cursor_offset(&self) -> usize {
        self.lines[..self.row]
            .iter()
            .map(|l| l.chars().count() + 1)
            .sum::<usize>()
            + self.col
    }

    /// Replaces the text from character offset `start` (on the cursor's line; an earlier
    /// offset is taken as the line's start) up to the cursor with `text`.
    pub fn replace_before_cursor(&mut self, start: usize, text: &str) {
        let line_start = self.cursor_offset() - self.col;
        let from = start.saturating_sub(line_start).min(self.col);
        let line = &mut self.lines[self.row];
        let (a, b) = (Self::byte_at(line, from), Self::byte_at(line, self.col));
        line.replace_range(a..b, "");
        self.col = from;
        self.insert_str(text);
    }

    /// Moves the cursor to a 1-based line and column (an error position).
    pub fn goto(&mut self, line: usize, column: usize) {
        self.row = line.saturating_sub(1).min(self.lines.len() - 1);
        self.col = column.saturating_sub(1).min(self.line_len(self.row));
    }

    /// Applies an editing key; returns false for keys that are not editing keys.
    pub fn handle_key(&mut self, key: &KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c) if !ctrl && !alt => self.insert(c),
            KeyCode::Left if ctrl || alt => self.word_left(),
            KeyCode::Right if ctrl || alt => self.word_right(),
            KeyCode::Char('b') if alt => self.word_left(),
            KeyCode::Char('f') if alt => self.word_right(),
            KeyCode::Char('w') if ctrl => self.delete_word_back(),
            KeyCode::Backspace if ctrl || alt => self.delete_word_back(),
            KeyCode::Home if ctrl => (self.row, self.col) = (0, 0),
            KeyCode::End if ctrl => {
                self.row = self.lines.len() - 1;
                self.col = self.line_len(self.row);
            }
            KeyCode::Char('a') if ctrl => self.col = 0,
            KeyCode::Char('e') if ctrl => self.col = self.line_len(self.row),
            KeyCode::Char('k') if ctrl => {
                let line = &mut self.lines[self.row];
                let at = Self::byte_at(line, self.col);
                line.truncate(at);
            }
            KeyCode::Char('u') if ctrl => {
                let line = &mut self.lines[self.row];
                let at = Self::byte_at(line, self.col);
                line.drain(..at);
                self.col = 0;
            }
            KeyCode::Enter if self.multiline && !ctrl => self.newline(),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete => self.delete(),
            KeyCode::Left => self.left(),
            KeyCode::Right => self.right(),
            KeyCode::Up if self.multiline && !ctrl => self.up(),
            KeyCode::Down if self.multiline && !ctrl => self.down(),
            KeyCode::Home => self.col = 0,
            KeyCode::End => self.col = self.line_len(self.row),
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_move_and_delete_across_punctuation_and_lines() {
        let mut b = TextBuffer::new("SELECT c.name\nFROM c", true);
        b.word_left();
        assert_eq!((b.row, b.col), (1, 5));
        b.word_left();
        assert_eq!((b.row, b.col), (1, 0));
        b.word_left();
        assert_eq!((b.row, b.col), (0, 13));
        b.word_left();
        assert_eq!((b.row, b.col), (0, 9));
        b.delete_word_back();
        assert_eq!(b.lines[0], "SELECT name");
        b.word_right();
        assert_eq!((b.row, b.col), (0, 11));
        b.word_right();
        assert_eq!((b.row, b.col), (1, 0));
        b.delete_word_back();
        assert_eq!(b.text(), "SELECT nameFROM c");
        b.set_text("a = 'Zoë x'");
        b.delete_word_back();
        assert_eq!(b.text(), "a = 'Zoë ");
        b.delete_word_back();
        assert_eq!(b.text(), "a = '");
    }

    #[test]
    fn replacing_the_word_before_the_cursor() {
        let mut b = TextBuffer::new("SELECT *\nFROM c WHERE c.na", true);
        assert_eq!(b.cursor_offset(), 26);
        b.replace_before_cursor(24, "name");
        assert_eq!(b.text(), "SELECT *\nFROM c WHERE c.name");
        b.replace_before_cursor(23, "[\"odd name\"]");
        assert_eq!(b.text(), "SELECT *\nFROM c WHERE c[\"odd name\"]");
        assert_eq!(b.col, 26);
    }

    #[test]
    fn editing_across_lines_and_multibyte_characters() {
        let mut b = TextBuffer::new("SELECT *", true);
        b.newline();
        b.insert_str("FROM c WHERE c.name = 'Zoë'");
        assert_eq!(b.text(), "SELECT *\nFROM c WHERE c.name = 'Zoë'");
        b.left();
        b.backspace(); // removes ë, a two-byte character
        assert_eq!(b.lines[1], "FROM c WHERE c.name = 'Zo'");
        b.col = 0;
        b.backspace(); // joins the lines
        assert_eq!(b.text(), "SELECT *FROM c WHERE c.name = 'Zo'");
        b.goto(1, 9);
        b.insert(' ');
        assert_eq!(b.text(), "SELECT * FROM c WHERE c.name = 'Zo'");
    }

    #[test]
    fn single_line_fields_ignore_newlines() {
        let mut b = TextBuffer::new("abc", false);
        b.newline();
        b.insert_str("d\ne");
        assert_eq!(b.text(), "abcde");
    }

    #[test]
    fn newline_keeps_indentation() {
        let mut b = TextBuffer::new("  WHERE x", true);
        b.newline();
        b.insert('A');
        assert_eq!(b.text(), "  WHERE x\n  A");
    }
}
