//! The JSON-RPC 2.0 envelope of hub messages: requests, notifications and
//! responses, the error object and the error codes Parley uses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request id: JSON-RPC allows numbers and strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    Number(i64),
    String(String),
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A request: it has an id and expects exactly one response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub jsonrpc: String,
    pub id: Id,
    pub method: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
}

/// A notification: no id, never answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    pub jsonrpc: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
}

/// A response to a request: either `result` or `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub jsonrpc: String,
    /// `None` only when the request could not be read well enough to know its id.
    pub id: Option<Id>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// The error member of a failed response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// Error codes: the JSON-RPC reserved ones and Parley's own (-32000 to -32099).
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The daemon could not be reached, or went away while the request was in flight.
    pub const DAEMON_UNAVAILABLE: i64 = -32000;
    /// A line exceeded the 16 MiB cap.
    pub const LINE_TOO_LONG: i64 = -32001;
    /// The first message on a connection was not a valid `hello`.
    pub const HELLO_REQUIRED: i64 = -32002;
    /// The client speaks a hub protocol major this daemon does not.
    pub const PROTOCOL_MISMATCH: i64 = -32003;
    /// The editor asked to answer a request did not answer in time.
    pub const EDITOR_TIMEOUT: i64 = -32004;
    /// The named thing (thread, review session, …) does not exist.
    pub const NOT_FOUND: i64 = -32005;
    /// The thing exists but is in the wrong state for the request: a resolved
    /// thread replied to or resolved again, an open one reopened, a completed
    /// review session continued, a session out of rounds.
    pub const CONFLICT: i64 = -32006;
    /// The store could not be written or flushed (disk full, read-only, …).
    pub const STORE_FAILED: i64 = -32007;
    /// Not a git repository, no changes in the scope, or git failed.
    pub const GIT_FAILED: i64 = -32008;
    /// The reviewer or the test command failed, timed out or printed no review.
    pub const REVIEWER_FAILED: i64 = -32009;
    /// The secret scan found a secret; nothing was sent anywhere.
    pub const SECRET_FOUND: i64 = -32010;
    /// A config file is invalid, or no reviewer is configured.
    pub const CONFIG_INVALID: i64 = -32011;
    /// The request was cancelled (its connection closed, or the daemon is stopping it).
    pub const CANCELLED: i64 = -32012;
    /// The daemon is shutting down; reconnect in a moment.
    pub const SHUTTING_DOWN: i64 = -32013;
    /// A file the request names cannot be read.
    pub const FILE_UNREADABLE: i64 = -32014;
    /// The method exists, but not for this connection's role.
    pub const WRONG_ROLE: i64 = -32015;
    /// GitHub could not be reached or refused (the message says why and
    /// what to do); nothing was half-done.
    pub const GITHUB_FAILED: i64 = -32016;
}

/// Any hub message, classified by which members it has.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

/// Why a line is not a JSON-RPC message. Carries the id when one could be read,
/// so the error response can name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    pub id: Option<Id>,
    pub error: ErrorObject,
}

#[derive(Deserialize)]
struct Loose {
    #[serde(default)]
    jsonrpc: Option<String>,
    /// `Some(Null)` for `"id": null`, which a request may not carry.
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
    /// `Some(Null)` for `"result": null`, which is a valid result.
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// Deserializes a member that is present, even as `null`, to `Some`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl Message {
    /// Parses one line. Every failure is an [`Invalid`] ready to be sent back.
    pub fn parse(line: &[u8]) -> Result<Message, Invalid> {
        let loose: Loose = serde_json::from_slice(line).map_err(|e| Invalid {
            id: None,
            error: ErrorObject::new(
                if e.is_data() { code::INVALID_REQUEST } else { code::PARSE_ERROR },
                format!("not a JSON-RPC 2.0 message: {e}"),
            ),
        })?;
        let null_id = matches!(loose.id, Some(Value::Null));
        let id = match loose.id {
            None | Some(Value::Null) => None,
            Some(value) => Some(serde_json::from_value::<Id>(value).map_err(|_| Invalid {
                id: None,
                error: ErrorObject::new(code::INVALID_REQUEST, "id must be an integer or a string"),
            })?),
        };
        if null_id && loose.method.is_some() {
            // A request must be answerable: with a null id it could not be
            // told from the answer to an unreadable message.
            let message = "\"id\" must be an integer or a string, not null (leave it out to send a notification)";
            return Err(Invalid { id: None, error: ErrorObject::new(code::INVALID_REQUEST, message) });
        }
        let seen = id.clone();
        let invalid =
            |message: &str| Invalid { id: seen.clone(), error: ErrorObject::new(code::INVALID_REQUEST, message) };
        if loose.jsonrpc.as_deref() != Some("2.0") {
            return Err(invalid("\"jsonrpc\" must be \"2.0\""));
        }
        let params = loose.params.unwrap_or(Value::Null);
        match (loose.method, id) {
            (Some(Value::String(method)), Some(id)) => {
                Ok(Message::Request(Request { jsonrpc: "2.0".into(), id, method, params }))
            }
            (Some(Value::String(method)), None) => {
                Ok(Message::Notification(Notification { jsonrpc: "2.0".into(), method, params }))
            }
            (Some(_), _) => Err(invalid("\"method\" must be a string")),
            (None, id) => {
                let error = match loose.error {
                    Some(e) => Some(serde_json::from_value(e).map_err(|_| invalid("malformed \"error\" member"))?),
                    None => None,
                };
                if loose.result.is_none() && error.is_none() {
                    return Err(invalid("a message needs \"method\", \"result\" or \"error\""));
                }
                Ok(Message::Response(Response { jsonrpc: "2.0".into(), id, result: loose.result, error }))
            }
        }
    }
}

impl ErrorObject {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }
}

impl Request {
    pub fn new(id: Id, method: &str, params: Value) -> Self {
        Self { jsonrpc: "2.0".into(), id, method: method.into(), params }
    }
}

impl Notification {
    pub fn new(method: &str, params: Value) -> Self {
        Self { jsonrpc: "2.0".into(), method: method.into(), params }
    }
}

impl Response {
    pub fn ok(id: Id, result: Value) -> Self {
        Self { jsonrpc: "2.0".into(), id: Some(id), result: Some(result), error: None }
    }

    pub fn err(id: Option<Id>, error: ErrorObject) -> Self {
        Self { jsonrpc: "2.0".into(), id, result: None, error: Some(error) }
    }
}

/// Serializes a message as one line, newline included.
pub fn to_line<T: Serialize>(message: &T) -> Vec<u8> {
    // Serializing these plain data types cannot fail: no maps with non-string keys.
    let mut line = serde_json::to_vec(message).expect("wire types always serialize");
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn check(line: &str, want: Result<&str, (Option<Id>, i64)>) {
        let got = Message::parse(line.as_bytes());
        match (got, want) {
            (Ok(Message::Request(r)), Ok("request")) => assert_eq!(r.jsonrpc, "2.0"),
            (Ok(Message::Notification(_)), Ok("notification")) => {}
            (Ok(Message::Response(_)), Ok("response")) => {}
            (Err(invalid), Err((id, code))) => {
                assert_eq!(invalid.id, id, "{line}");
                assert_eq!(invalid.error.code, code, "{line}: {}", invalid.error.message);
            }
            (got, want) => panic!("{line}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn classifies_messages() {
        check(r#"{"jsonrpc":"2.0","id":1,"method":"status"}"#, Ok("request"));
        check(r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#, Ok("request"));
        check(r#"{"jsonrpc":"2.0","method":"editor/focus"}"#, Ok("notification"));
        check(r#"{"jsonrpc":"2.0","id":3,"result":null}"#, Ok("response"));
        check(r#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}"#, Ok("response"));
        check("not json", Err((None, code::PARSE_ERROR)));
        check(r#"[1,2]"#, Err((None, code::INVALID_REQUEST)));
        check(r#"{"id":7,"method":"x"}"#, Err((Some(Id::Number(7)), code::INVALID_REQUEST)));
        check(r#"{"jsonrpc":"2.0","id":7,"method":5}"#, Err((Some(Id::Number(7)), code::INVALID_REQUEST)));
        check(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#, Err((None, code::INVALID_REQUEST)));
        check(r#"{"jsonrpc":"2.0","id":1}"#, Err((Some(Id::Number(1)), code::INVALID_REQUEST)));
        // A request with a null id could never be answered by its id.
        check(r#"{"jsonrpc":"2.0","id":null,"method":"status"}"#, Err((None, code::INVALID_REQUEST)));
        check(r#"{"jsonrpc":"2.0","id":1.5,"method":"status"}"#, Err((None, code::INVALID_REQUEST)));
        // An error answer to an unreadable message carries a null id.
        check(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#, Ok("response"));
    }

    #[test]
    fn lines_are_compact_and_terminated() {
        let line = to_line(&Request::new(Id::Number(1), "status", json!({"a": "x\ny"})));
        assert_eq!(
            String::from_utf8(line).expect("utf-8"),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\",\"params\":{\"a\":\"x\\ny\"}}\n"
        );
    }
    proptest! {
        /// Any bytes at all: an answer, never a panic.
        #[test]
        fn parse_never_panics(line in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = Message::parse(&line);
        }

        /// Lines that look like JSON-RPC, with members of any JSON type: a
        /// wrong version or id type is an invalid request, whatever else.
        #[test]
        fn odd_members_are_refused_with_an_answer(
            id in "(null|1|-7|\"x\"|true|\\[1\\]|\\{\\}|1\\.5)",
            method in "(\"m\"|null|1|\\[\\]|\\{\\})",
            version in "(\"2\\.0\"|\"1\\.0\"|2|null)",
            member in "(method|result|error|params)",
        ) {
            let line = format!("{{\"jsonrpc\":{version},\"id\":{id},\"{member}\":{method}}}");
            let outcome = Message::parse(line.as_bytes());
            let bad_id = matches!(id.as_str(), "true" | "[1]" | "{}" | "1.5");
            if bad_id || version != "\"2.0\"" {
                let invalid = outcome.expect_err("refused");
                prop_assert_eq!(invalid.error.code, code::INVALID_REQUEST, "{}", line);
                prop_assert!(!invalid.error.message.is_empty());
            }
        }

        /// A request survives the trip through a line.
        #[test]
        fn requests_round_trip(
            id in prop_oneof![
                any::<i64>().prop_map(Id::Number),
                ".{0,12}".prop_map(Id::String),
            ],
            method in "[a-z/_]{1,20}",
            text in ".{0,30}",
        ) {
            let request = Request::new(id, &method, json!({"text": text}));
            let line = to_line(&request);
            prop_assert_eq!(Message::parse(&line[..line.len() - 1]), Ok(Message::Request(request)));
        }
    }
}
