//! Writing a host's settings file without losing what the user wrote: JSON
//! read leniently (comments and trailing commas, as hosts write it), a
//! timestamped backup beside the file, and the new text put in place by one
//! rename. `mcp-config --write` and `hooks install --write` both use it.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use jsonc_parser::ParseOptions;

/// JSON with comments and trailing commas, as VS Code, Zed and Claude Code's
/// settings are written; nothing looser.
pub fn lenient_json() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// `<file>.<UTC time>.bak` beside the file; a second backup in the same
/// second gets a number, so no backup is ever overwritten.
pub fn backup_path(path: &Path) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut candidate = path.with_file_name(format!("{name}.{stamp}.bak"));
    let mut n = 1;
    while candidate.exists() {
        n += 1;
        candidate = path.with_file_name(format!("{name}.{stamp}-{n}.bak"));
    }
    candidate
}

/// Writes `text` to `path` through a temporary file and a rename, so a host
/// reading the file meanwhile sees the old or the new text, never half; the
/// new file keeps the permissions of `keep_mode_of`.
pub fn replace(path: &Path, text: &str, keep_mode_of: Option<&Path>) -> anyhow::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.parley-{}.tmp", std::process::id()));
    std::fs::write(&temporary, text).with_context(|| format!("writing {}", temporary.display()))?;
    if let Some(original) = keep_mode_of
        && let Ok(metadata) = std::fs::metadata(original)
    {
        let _ = std::fs::set_permissions(&temporary, metadata.permissions());
    }
    std::fs::rename(&temporary, path).with_context(|| {
        let _ = std::fs::remove_file(&temporary);
        format!("replacing {}", path.display())
    })
}
