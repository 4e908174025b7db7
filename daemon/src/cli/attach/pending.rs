//! The requests a client sent through `parley attach` that the daemon has not
//! answered yet, told from each line's `id` and `method` alone. A named pipe
//! has no half-close, so on Windows attach cannot tell the daemon that its
//! input ended: it ends once every request it relayed has been answered.

use std::collections::HashSet;

use serde::Deserialize;
use serde::de::IgnoredAny;

/// The ids of requests relayed and not answered yet, as JSON text (`1` and
/// `"1"` are two ids).
#[derive(Debug, Default)]
pub struct Pending {
    ids: HashSet<String>,
}

/// The two fields that make a line a request (both) or an answer (an id only).
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

fn envelope(line: &[u8]) -> Option<(String, bool)> {
    let envelope: Envelope = serde_json::from_slice(line).ok()?;
    Some((envelope.id?.to_string(), envelope.method.is_some()))
}

impl Pending {
    /// A line the client sent: a request (an id and a method) awaits its answer.
    pub fn sent(&mut self, line: &[u8]) {
        if let Some((id, true)) = envelope(line) {
            self.ids.insert(id);
        }
    }

    /// A line the daemon sent: an answer (an id, no method) settles its request.
    pub fn received(&mut self, line: &[u8]) {
        if let Some((id, false)) = envelope(line) {
            self.ids.remove(&id);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_wait_for_answers_with_their_own_id() {
        let mut pending = Pending::default();
        pending.sent(br#"{"jsonrpc":"2.0","id":0,"method":"hello","params":{}}"#);
        pending.sent(br#"{"jsonrpc":"2.0","id":"0","method":"status"}"#);
        pending.sent(br#"{"jsonrpc":"2.0","method":"selection/changed","params":{}}"#);
        pending.sent(b"not json\n");
        assert!(!pending.is_empty());
        pending.received(br#"{"jsonrpc":"2.0","id":1,"method":"selection/get"}"#);
        pending.received(br#"{"jsonrpc":"2.0","method":"feedback/changed","params":{"id":0}}"#);
        pending.received(br#"{"jsonrpc":"2.0","id":0,"result":{"protocol":1}}"#);
        assert!(!pending.is_empty(), "the string id \"0\" is another request");
        pending.received(br#"{"jsonrpc":"2.0","id":"0","error":{"code":-32601,"message":"no"}}"#);
        assert!(pending.is_empty());
    }
}
