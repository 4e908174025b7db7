//! A config file (`.parley.toml`, the user's `config.toml`), parsed and
//! checked as a review round reads it.

use parley_daemon::config::check_config_text;

/// Any bytes as a config file: a file that is not UTF-8 is refused before
/// it is parsed (by `read_to_string`), so only text reaches the parser.
///
/// Rules: a refusal is one line naming the file, never a panic.
pub fn config_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = check_config_text(text) {
        let message = e.to_string();
        assert!(message.starts_with("bad config in .parley.toml: "), "{message}");
        assert!(!message.contains('\n'), "a config error spans lines: {message}");
    }
}
