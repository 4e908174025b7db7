//! Converting columns between the encodings clients count in: VS Code counts
//! UTF-16 code units, Neovim bytes, agents see Unicode characters.

use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::Position;

/// Where each line of a text starts, for converting between byte offsets and
/// line + character positions.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { text, starts }
    }

    /// The 0-based line and character (counted in `encoding`) of a byte offset.
    pub fn position(&self, offset: usize, encoding: PositionEncoding) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let before = self.text.get(start..offset).unwrap_or("");
        let character = match encoding {
            PositionEncoding::Utf8 => before.len(),
            PositionEncoding::Utf16 => before.encode_utf16().count(),
            PositionEncoding::Utf32 => before.chars().count(),
        };
        Position { line: line as u32, character: character as u32 }
    }

    /// The byte offset of a position, clamped to the end of its line; `None`
    /// when the line does not exist.
    pub fn offset(&self, position: Position, encoding: PositionEncoding) -> Option<usize> {
        let start = *self.starts.get(position.line as usize)?;
        let end = self.starts.get(position.line as usize + 1).map_or(self.text.len(), |&next| next - 1);
        let line = &self.text[start..end];
        let mut counted = 0usize;
        for (i, c) in line.char_indices() {
            if counted >= position.character as usize {
                return Some(start + i);
            }
            counted += match encoding {
                PositionEncoding::Utf8 => c.len_utf8(),
                PositionEncoding::Utf16 => c.len_utf16(),
                PositionEncoding::Utf32 => 1,
            };
        }
        Some(end)
    }

    /// The text this index is of.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// How many lines the text has (a final newline does not start a new one).
    pub fn line_count(&self) -> usize {
        if self.text.ends_with('\n') { self.starts.len() - 1 } else { self.starts.len() }
    }
}

/// The character (Unicode scalar) column of `column`, counted in `encoding`
/// within `line`. A column past the end of the line maps past its end.
pub fn to_char_column(line: &str, column: u32, encoding: PositionEncoding) -> u32 {
    let column = column as usize;
    let mut counted = 0usize;
    let mut chars = 0u32;
    for c in line.chars() {
        if counted >= column {
            return chars;
        }
        counted += match encoding {
            PositionEncoding::Utf16 => c.len_utf16(),
            PositionEncoding::Utf8 => c.len_utf8(),
            PositionEncoding::Utf32 => 1,
        };
        chars += 1;
    }
    chars + (column.saturating_sub(counted)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_round_trips_in_every_encoding() {
        let text = "ab\naé𝄞b\n\nend";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        let cases = [
            (0, PositionEncoding::Utf8, (0, 0)),
            (3, PositionEncoding::Utf8, (1, 0)),
            (10, PositionEncoding::Utf8, (1, 7)),
            (10, PositionEncoding::Utf16, (1, 4)),
            (10, PositionEncoding::Utf32, (1, 3)),
            (12, PositionEncoding::Utf16, (2, 0)),
            (15, PositionEncoding::Utf32, (3, 2)),
        ];
        for (offset, encoding, (line, character)) in cases {
            let position = index.position(offset, encoding);
            assert_eq!((position.line, position.character), (line, character), "{offset} {encoding:?}");
            assert_eq!(index.offset(position, encoding), Some(offset), "{offset} {encoding:?}");
        }
        assert_eq!(index.offset(Position { line: 0, character: 99 }, PositionEncoding::Utf8), Some(2));
        assert_eq!(index.offset(Position { line: 9, character: 0 }, PositionEncoding::Utf8), None);
    }

    #[test]
    fn converts_each_encoding() {
        // "é" is 2 bytes / 1 unit; "𝄞" is 4 bytes / 2 units.
        let line = "aé𝄞b";
        let check = |col, enc, want| assert_eq!(to_char_column(line, col, enc), want, "{col} {enc:?}");
        check(0, PositionEncoding::Utf8, 0);
        check(3, PositionEncoding::Utf8, 2);
        check(7, PositionEncoding::Utf8, 3);
        check(4, PositionEncoding::Utf16, 3);
        check(5, PositionEncoding::Utf16, 4);
        check(3, PositionEncoding::Utf32, 3);
        check(10, PositionEncoding::Utf32, 10);
    }
}
