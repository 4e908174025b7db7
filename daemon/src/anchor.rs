//! Keeping a feedback thread on its text while the file changes: capture an
//! anchor from a range, and re-anchor it against new text. Pure functions.
