//! The daemon's one notion of "now" as text: RFC 3339 in UTC with
//! milliseconds, the format every stored and published time uses.

/// The current time as RFC 3339 in UTC, with milliseconds.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
