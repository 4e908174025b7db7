//! The one rule for the ids people and agents type, for review sessions,
//! feedback threads and walkthroughs alike, at the command line and in the MCP tools: the
//! whole id, a session's number (`001`, or its tail such as `21-001`), or a
//! unique beginning of at least [`MIN_PREFIX`] characters, as git takes
//! commit ids. Pure: the caller looks up the ids an abbreviation matches and
//! hands them to [`pick`].

use crate::feedback::is_thread_id;
use crate::sessions::is_session_id;

/// The shortest beginning of an id that is taken as one: shorter ones would
/// name a random thread among many.
pub const MIN_PREFIX: usize = 4;

/// The rule, as every `--help` that takes a session id says it.
pub const SESSION_ID_HELP: &str =
    "The review session: its id (2026-11-21-001), its number (001) or a unique beginning of at least 4 characters";
/// The rule, as every `--help` that takes a thread id says it.
pub const THREAD_ID_HELP: &str =
    "The thread: its id, or a unique beginning of at least 4 characters (`parley feedback list --all` shows them)";

/// Which kind of id was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Session,
    Thread,
    /// Walkthrough ids are made as thread ids are, and read by their rule.
    Walkthrough,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Session => "review session",
            Kind::Thread => "thread",
            Kind::Walkthrough => "walkthrough",
        }
    }

    fn looks_like(self) -> &'static str {
        match self {
            Kind::Session => {
                "session ids look like 2026-11-21-001: give the whole id, its number (001) or at least 4 characters of its beginning"
            }
            Kind::Thread => {
                "thread ids look like 970f5fa9-6d1e-4c7a-9a55-2f0c3b8e1d42: give the whole id or at least 4 characters of its beginning"
            }
            Kind::Walkthrough => {
                "walkthrough ids look like 970f5fa9-6d1e-4c7a-9a55-2f0c3b8e1d42: give the whole id or at least 4 characters of its beginning"
            }
        }
    }

    /// Where the ids of this kind are listed.
    fn listed_by(self) -> &'static str {
        match self {
            Kind::Session => {
                "get_review_history lists the sessions of this repository (a session is named by its whole id, its \
                 number such as 001, or at least 4 characters of its beginning)"
            }
            Kind::Thread => "get_feedback lists the open threads with their ids",
            Kind::Walkthrough => "`parley walkthrough list` lists the walkthroughs with their ids",
        }
    }
}

/// What was typed, read by the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Given {
    /// A whole id: looked up as it is.
    Whole(String),
    /// A number or a beginning: the caller finds the ids it matches.
    Abbreviated(String),
}

/// Why a typed id names no one thing; each text says what to give instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("no {} id was given; {}", .0.name(), .0.looks_like())]
    Empty(Kind),
    #[error("{} id {given:?} is too short; {}", .kind.name(), .kind.looks_like())]
    TooShort { kind: Kind, given: String },
    #[error("{given:?} is not a {} id; {}", .kind.name(), .kind.looks_like())]
    Malformed { kind: Kind, given: String },
    #[error("no {} matches {given:?}; {}", .kind.name(), .kind.listed_by())]
    Unknown { kind: Kind, given: String },
    #[error("{given:?} matches {} {}s ({}); give more of the id", count(.matches), .kind.name(), .matches.join(", "))]
    Ambiguous { kind: Kind, given: String, matches: Vec<String> },
}

impl IdError {
    /// Whether the id was well formed but names nothing (a "not found").
    pub fn is_unknown(&self) -> bool {
        matches!(self, IdError::Unknown { .. })
    }
}

/// How many matched, said honestly when the look-up stopped early.
fn count(matches: &[String]) -> String {
    if matches.len() >= ABBREVIATION_MATCHES {
        format!("at least {}", matches.len())
    } else {
        matches.len().to_string()
    }
}

/// How many matches a look-up returns at most: enough to tell one from
/// several and to show a few.
pub const ABBREVIATION_MATCHES: usize = 6;

/// Reads what was typed as an id of `kind`.
pub fn read(kind: Kind, given: &str) -> Result<Given, IdError> {
    let given = given.trim();
    if given.is_empty() {
        return Err(IdError::Empty(kind));
    }
    let owned = || given.to_owned();
    match kind {
        Kind::Session if is_session_id(given) => Ok(Given::Whole(owned())),
        Kind::Session if !given.bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
            Err(IdError::Malformed { kind, given: owned() })
        }
        // A number (`001`, `21-001`) is matched whatever its length; a
        // beginning must be long enough ([`abbreviates_session`]).
        Kind::Session => Ok(Given::Abbreviated(owned())),
        Kind::Thread | Kind::Walkthrough if is_thread_id(&given.to_ascii_lowercase()) => {
            Ok(Given::Whole(given.to_ascii_lowercase()))
        }
        Kind::Thread | Kind::Walkthrough
            if !given.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') || given.len() > 36 =>
        {
            Err(IdError::Malformed { kind, given: owned() })
        }
        Kind::Thread | Kind::Walkthrough if given.len() < MIN_PREFIX => Err(IdError::TooShort { kind, given: owned() }),
        Kind::Thread | Kind::Walkthrough => Ok(Given::Abbreviated(given.to_ascii_lowercase())),
    }
}

/// Whether `abbreviation` names the session `id`: a beginning of at least
/// [`MIN_PREFIX`] characters (`2026-11-2`), or its tail from a dash on, its
/// number (`003`, `23-003`).
pub fn abbreviates_session(abbreviation: &str, id: &str) -> bool {
    !abbreviation.is_empty()
        && ((abbreviation.len() >= MIN_PREFIX && id.starts_with(abbreviation))
            || id.strip_suffix(abbreviation).is_some_and(|head| head.is_empty() || head.ends_with('-')))
}

/// The one id `given` means among `found`, the ids it matched (at most
/// [`ABBREVIATION_MATCHES`]).
pub fn pick(kind: Kind, given: &str, mut found: Vec<String>) -> Result<String, IdError> {
    let given = given.trim();
    match found.len() {
        0 => Err(IdError::Unknown { kind, given: given.to_owned() }),
        1 => Ok(found.remove(0)),
        _ => {
            found.sort();
            Err(IdError::Ambiguous { kind, given: given.to_owned(), matches: found })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREAD: &str = "970f5fa9-6d1e-4c7a-9a55-2f0c3b8e1d42";

    #[test]
    fn typed_ids_are_read_by_one_rule() {
        let cases: [(Kind, &str, Result<Given, &str>); 12] = [
            (Kind::Session, " 2026-11-21-001 ", Ok(Given::Whole("2026-11-21-001".into()))),
            (Kind::Session, "001", Ok(Given::Abbreviated("001".into()))),
            (Kind::Session, "2026-11", Ok(Given::Abbreviated("2026-11".into()))),
            (Kind::Session, "abc", Err("is not a review session id")),
            (Kind::Session, "", Err("no review session id was given")),
            (Kind::Thread, THREAD, Ok(Given::Whole(THREAD.into()))),
            (Kind::Thread, &THREAD.to_ascii_uppercase(), Ok(Given::Whole(THREAD.into()))),
            (Kind::Thread, "970F", Ok(Given::Abbreviated("970f".into()))),
            (Kind::Thread, "970", Err("thread id \"970\" is too short; thread ids look like")),
            (Kind::Thread, "9", Err("at least 4 characters")),
            (Kind::Thread, "zz-top", Err("\"zz-top\" is not a thread id")),
            (Kind::Thread, &format!("{THREAD}0"), Err("is not a thread id")),
        ];
        for (kind, given, want) in cases {
            match (read(kind, given), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{given:?}"),
                (Err(got), Err(want)) => assert!(got.to_string().contains(want), "{given:?}: {got}"),
                (got, want) => panic!("{given:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn sessions_match_by_number_or_a_long_enough_beginning() {
        let id = "2026-11-21-013";
        for yes in ["2026-11-21-013", "2026", "2026-11-2", "013", "21-013"] {
            assert!(abbreviates_session(yes, id), "{yes}");
        }
        for no in ["2", "202", "13", "1-013", "014", "", "x", "2026-11-22", "2026-11-21-0134"] {
            assert!(!abbreviates_session(no, id), "{no}");
        }
    }

    #[test]
    fn a_lookup_names_one_id_or_says_why_not() {
        assert_eq!(pick(Kind::Thread, "970f", vec![THREAD.into()]), Ok(THREAD.into()));
        let unknown = pick(Kind::Thread, "abcd", vec![]).expect_err("none");
        assert!(unknown.is_unknown());
        assert_eq!(
            unknown.to_string(),
            "no thread matches \"abcd\"; get_feedback lists the open threads with their ids"
        );
        let walkthrough = read(Kind::Walkthrough, "970F").map(|_| pick(Kind::Walkthrough, "970f", vec![]));
        assert_eq!(
            walkthrough.expect("read as a thread id is").expect_err("none").to_string(),
            "no walkthrough matches \"970f\"; `parley walkthrough list` lists the walkthroughs with their ids"
        );
        assert!(read(Kind::Walkthrough, "9a").expect_err("short").to_string().contains("walkthrough ids look like"));
        let unknown = pick(Kind::Session, "999", vec![]).expect_err("none");
        assert!(unknown.to_string().starts_with("no review session matches \"999\""), "{unknown}");
        let two = pick(Kind::Session, "001", vec!["2026-11-22-001".into(), "2026-11-21-001".into()]).expect_err("two");
        assert_eq!(
            two.to_string(),
            "\"001\" matches 2 review sessions (2026-11-21-001, 2026-11-22-001); give more of the id"
        );
        let many: Vec<String> = (0..ABBREVIATION_MATCHES).map(|n| format!("2026-11-2{n}-001")).collect();
        assert!(pick(Kind::Session, "001", many).expect_err("many").to_string().contains("at least 6"));
    }
}
