//! Converting columns between the encodings clients count in: VS Code counts
//! UTF-16 code units, Neovim bytes, agents see Unicode characters.

use parley_protocol::hello::PositionEncoding;

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
