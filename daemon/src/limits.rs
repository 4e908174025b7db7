//! The byte limits on what people, agents and reviewers write into Parley (a
//! comment, a reply, a note, a draft, a summary, a finding) and on what one
//! listing answer carries, so that no answer outgrows the 16 MiB a message may
//! hold. Pure: no IO.

use std::borrow::Cow;

/// The most a comment, reply, note, draft comment or summary may hold.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// About how many bytes of JSON a page of a listing (`feedback/list`, the
/// inbox, `get_feedback`) carries at most before it stops and says more
/// follow: well under the 16 MiB line limit, with room for the envelope and
/// an MCP result's text copy of the same threads.
pub const PAGE_BYTES: usize = 4 * 1024 * 1024;

/// Refuses `text` over [`MAX_TEXT_BYTES`]; `what` names it as the sentence
/// begins ("the comment", "the note").
pub fn check(what: &str, text: &str) -> Result<(), String> {
    if text.len() <= MAX_TEXT_BYTES {
        return Ok(());
    }
    Err(format!(
        "{what} is {} KiB, over Parley's limit of {} KiB: shorten it, or write the long part to a file in the \
         workspace and point to it",
        text.len().div_ceil(1024),
        MAX_TEXT_BYTES / 1024
    ))
}

/// `text` as listings show it: whole within [`MAX_TEXT_BYTES`], else cut
/// to fit it with a marker saying how long it was. A store written before
/// the limit may hold longer comments.
pub fn clip(text: &str) -> Cow<'_, str> {
    cut_to(text, MAX_TEXT_BYTES)
}

/// `text` within `bytes`: whole when it fits, else cut at a character
/// boundary and ended with a marker saying how long it was (a reviewer's
/// finding is cut so rather than fail its round).
pub fn cut_to(text: &str, bytes: usize) -> Cow<'_, str> {
    if text.len() <= bytes {
        return Cow::Borrowed(text);
    }
    let marker = format!(
        "\n\n[… cut by Parley: the whole text is {} KiB, over its limit of {} KiB]",
        text.len().div_ceil(1024),
        MAX_TEXT_BYTES / 1024
    );
    let mut end = bytes.saturating_sub(marker.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}{marker}", &text[..end]))
}

/// How many bytes `text` takes as a JSON string, quotes and escapes
/// included (as serde_json writes it), so a page's budget holds however
/// the text is made.
pub fn json_len(text: &str) -> usize {
    2 + text
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..0x20 => 6,
            _ => 1,
        })
        .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_at_the_limit_passes_and_over_it_is_refused_saying_the_limit() {
        assert!(check("the comment", &"a".repeat(MAX_TEXT_BYTES)).is_ok());
        let err = check("the comment", &"a".repeat(1024 * 1024)).expect_err("over the limit");
        assert!(err.starts_with("the comment is 1024 KiB, over Parley's limit of 64 KiB: shorten it"), "{err}");
    }

    #[test]
    fn long_text_is_clipped_at_a_character_boundary_with_a_marker() {
        assert_eq!(clip("short"), "short");
        let marker = "\n\n[… cut by Parley: the whole text is 65 KiB, over its limit of 64 KiB]";
        // A three-byte character straddles the cut.
        let kept = MAX_TEXT_BYTES - marker.len();
        let text = format!("{}€€{}", "a".repeat(kept - 1), "b".repeat(1024));
        let clipped = clip(&text);
        assert_eq!(clipped, format!("{}{marker}", "a".repeat(kept - 1)));
        assert!(clipped.len() <= MAX_TEXT_BYTES);
        assert_eq!(clip(&"a".repeat(MAX_TEXT_BYTES)).len(), MAX_TEXT_BYTES, "text at the limit is whole");
    }

    #[test]
    fn json_length_counts_escapes_as_serde_json_writes_them() {
        for text in ["", "plain", "quote \" and \\ backslash", "lines\n\r\t", "\u{1}\u{1f}\u{7f}", "é€😀", "\u{8}\u{c}"]
        {
            let written = serde_json::to_string(text).expect("a string serializes");
            assert_eq!(json_len(text), written.len(), "{text:?}");
        }
    }
}
