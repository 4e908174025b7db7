//! The relay between an MCP host's stdio and the daemon's socket.
//!
//! Lines pass through as raw bytes: re-serializing MCP through typed messages
//! would drop fields this build does not know. The relay reads only the `id`
//! and `method` of each line, enough to
//! - remember the handshake (`initialize`, `notifications/initialized`,
//!   `logging/setLevel`) so it can replay it to a restarted daemon,
//! - answer requests that were in flight when the daemon went away with an
//!   error carrying their own ids (a request is never run twice),
//! - send again, on a new connection, the one request a dead daemon provably
//!   never read: the last one written, when the connection was reset with
//!   data unread (see `Relay::reset`),
//! - know which replies are still due when the host closes stdin.
//!
//! It also checks that each host line is JSON at all, and answers one that is
//! not with a JSON-RPC parse error (`-32700`): the daemon's MCP side (rmcp)
//! drops such a line without a word, which would leave a host waiting forever
//! on the id it sent. The check is the daemon's own reading of a line (UTF-8,
//! an optional byte order mark, JSON syntax, nesting at most 127 deep), so a
//! line the shim passes on is one the daemon reads.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use parley_protocol::framing::{LineError, LineReader};
use parley_protocol::jsonrpc::code;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};

use crate::connect::{ConnectError, HubConnection};

/// The deepest nesting of arrays and objects the daemon reads: serde_json's
/// own limit, which rmcp's parsing of a line keeps.
const MAX_DEPTH: usize = 127;
/// The UTF-8 byte order mark, which the daemon reads past at the start of a line.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// How long replies still due are awaited after the host closes stdin.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a replayed handshake may take on a restarted daemon.
const REPLAY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens a fresh connection to the daemon (starting it if need be).
pub trait Connector {
    fn connect(&mut self) -> impl Future<Output = Result<HubConnection, ConnectError>>;
}

/// The part of an MCP line the relay looks at.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CancelledParams<'a> {
    #[serde(borrow, rename = "requestId")]
    request_id: &'a RawValue,
}

/// What was learnt from one line.
enum Kind {
    /// Has an id and a method; the raw id text.
    Request(String),
    /// Has a method and no id.
    Notification,
    /// Has an id and no method; the raw id text.
    Response(String),
    /// Not JSON, or not an object: passed through untouched.
    Other,
}

fn classify(line: &[u8]) -> (Kind, Option<String>, Option<String>) {
    let Ok(env) = serde_json::from_slice::<Envelope>(line) else {
        return (Kind::Other, None, None);
    };
    let method = env.method.map(|m| m.into_owned());
    let id = env.id.map(|id| id.get().to_owned()).filter(|id| id != "null");
    let cancelled = match (&method, env.params) {
        (Some(m), Some(params)) if m == "notifications/cancelled" => {
            serde_json::from_str::<CancelledParams>(params.get()).ok().map(|p| p.request_id.get().to_owned())
        }
        _ => None,
    };
    let kind = match (id, &method) {
        (Some(id), Some(_)) => Kind::Request(id),
        (None, Some(_)) => Kind::Notification,
        (Some(id), None) => Kind::Response(id),
        (None, None) => Kind::Other,
    };
    (kind, method, cancelled)
}

/// Why the daemon could not read `line` as JSON, when it could not.
///
/// Reads the whole line without building it: every string is checked as
/// UTF-8 and for its escapes, every number for its range, and nesting is
/// counted by serde_json's own recursion limit, exactly as when the daemon
/// reads the line into its messages.
fn unreadable(line: &[u8]) -> Option<String> {
    let line = line.strip_prefix(BYTE_ORDER_MARK).unwrap_or(line);
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => return Some(format!("the line is not UTF-8 (byte {} is not)", e.valid_up_to() + 1)),
    };
    let error = serde_json::from_str::<AnyJson>(text).err()?;
    Some(match error.classify() {
        serde_json::error::Category::Eof => format!("the line ends before its JSON does ({error})"),
        _ if error.to_string().starts_with("recursion limit exceeded") => {
            format!("the line nests arrays and objects more than {MAX_DEPTH} deep ({error})")
        }
        _ => format!("the line is not JSON ({error})"),
    })
}

/// Any JSON value, read through and thrown away. Every value is read with
/// `deserialize_any`, so each array and object counts against serde_json's
/// recursion limit, as it does when the daemon reads a message; serde's own
/// `IgnoredAny` skips nested values without counting them.
struct AnyJson;

impl<'de> Deserialize<'de> for AnyJson {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(AnyJsonVisitor)
    }
}

struct AnyJsonVisitor;

impl<'de> serde::de::Visitor<'de> for AnyJsonVisitor {
    type Value = AnyJson;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_i64<E>(self, _: i64) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_u64<E>(self, _: u64) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_f64<E>(self, _: f64) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_str<E>(self, _: &str) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_unit<E>(self) -> Result<AnyJson, E> {
        Ok(AnyJson)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<AnyJson, A::Error> {
        while seq.next_element::<AnyJson>()?.is_some() {}
        Ok(AnyJson)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<AnyJson, A::Error> {
        while map.next_entry::<AnyJson, AnyJson>()?.is_some() {}
        Ok(AnyJson)
    }
}

/// The raw id of the request in a line the daemon cannot read, when the
/// relay can still read it (reading bytes that are not UTF-8 as replacement
/// characters), else `null`: the host learns which of its requests failed.
fn id_of_unreadable(line: &[u8]) -> String {
    let lossy = String::from_utf8_lossy(line);
    match classify(lossy.as_bytes()) {
        (Kind::Request(id), _, _) => id,
        _ => "null".to_owned(),
    }
}

fn error_line(raw_id: &str, code: i64, message: &str) -> Vec<u8> {
    let message = serde_json::to_string(message).expect("a string always serializes");
    format!(r#"{{"jsonrpc":"2.0","id":{raw_id},"error":{{"code":{code},"message":{message}}}}}"#).into_bytes()
}

/// A host request as written to the daemon.
struct Sent {
    /// The raw id text.
    id: String,
    /// The line with its newline, as written.
    framed: Vec<u8>,
    is_initialize: bool,
    /// Whether this is already its second connection: it is moved once at most.
    moved: bool,
}

/// The handshake lines a legacy (`initialize`) client sent, for replay.
#[derive(Default)]
struct Handshake {
    initialize: Option<Vec<u8>>,
    initialized: Option<Vec<u8>>,
    set_level: Option<Vec<u8>>,
}

struct Relay<O, C> {
    stdout: O,
    connector: C,
    daemon: Option<HubConnection>,
    /// Ids (raw JSON text) of host requests sent to the daemon and not yet answered.
    in_flight: HashSet<String>,
    /// Ids of replayed requests whose answers the host must not see.
    swallow: HashSet<String>,
    /// The last line written on the current connection, while it is a host
    /// request: the one request a reset proves unread.
    last_sent: Option<Sent>,
    handshake: Handshake,
    replays: u64,
}

/// Relays between `stdin`/`stdout` and the daemon until the host closes stdin.
/// Returns the process exit code.
pub async fn run<I, O, C>(stdin: I, stdout: O, connector: C) -> i32
where
    I: AsyncBufRead + Unpin,
    O: AsyncWrite + Unpin,
    C: Connector,
{
    let mut host = LineReader::new(stdin);
    let mut relay = Relay {
        stdout,
        connector,
        daemon: None,
        in_flight: HashSet::new(),
        swallow: HashSet::new(),
        last_sent: None,
        handshake: Handshake::default(),
        replays: 0,
    };
    // Connect eagerly so a missing daemon starts while the host prepares its
    // first message; failure here is retried on the first request.
    if let Err(e) = relay.reconnect().await {
        eprintln!("parley-mcp: {e}");
    }
    loop {
        let event = match relay.daemon.as_mut() {
            // The daemon side first: when it has gone away and the host has
            // written meanwhile, the loss must be noticed before the request
            // is relayed into a dead connection.
            Some(daemon) => tokio::select! {
                biased;
                line = daemon.reader.next_line() => Side::Daemon(line),
                line = host.next_line() => Side::Host(line),
            },
            None => Side::Host(host.next_line().await),
        };
        let result = match event {
            Side::Host(Ok(Some(line))) => relay.on_host_line(line).await,
            Side::Host(Ok(None)) => return relay.drain().await,
            Side::Host(Err(LineError::TooLong)) => {
                eprintln!("parley-mcp: dropped a message over the 16 MiB limit");
                let line =
                    error_line("null", code::LINE_TOO_LONG, "message exceeds the 16 MiB line limit and was dropped");
                relay.write_host(&line).await
            }
            Side::Host(Err(LineError::Io(e))) => {
                eprintln!("parley-mcp: reading stdin: {e}");
                return relay.drain().await;
            }
            Side::Daemon(Ok(Some(line))) => relay.on_daemon_line(line).await,
            Side::Daemon(Ok(None)) => relay.lost("the Parley daemon closed the connection").await,
            Side::Daemon(Err(LineError::Io(e))) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                relay.reset(&e).await
            }
            // The daemon is fine; one of its answers could not be relayed.
            // Which request it answered is unknown (its id was in the line
            // dropped), so every request in flight gets the error.
            Side::Daemon(Err(LineError::TooLong)) => {
                let why = "an answer from the Parley daemon was longer than the 16 MiB limit and was dropped";
                let advice = "Ask for less at once: get_feedback takes a filePath, or a smaller limit";
                relay.lost_with(why, code::LINE_TOO_LONG, advice).await
            }
            Side::Daemon(Err(e)) => relay.lost(&format!("reading from the Parley daemon: {e}")).await,
        };
        if let Err(e) = result {
            // stdout is gone: the host has exited, nobody is left to answer.
            eprintln!("parley-mcp: writing stdout: {e}");
            return 1;
        }
    }
}

enum Side {
    Host(Result<Option<Vec<u8>>, LineError>),
    Daemon(Result<Option<Vec<u8>>, LineError>),
}

impl<O: AsyncWrite + Unpin, C: Connector> Relay<O, C> {
    async fn write_host(&mut self, line: &[u8]) -> std::io::Result<()> {
        self.stdout.write_all(line).await?;
        self.stdout.write_all(b"\n").await?;
        self.stdout.flush().await
    }

    async fn on_host_line(&mut self, line: Vec<u8>) -> std::io::Result<()> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        if let Some(why) = unreadable(&line) {
            // Passed on, the line would be dropped by the daemon unanswered.
            eprintln!("parley-mcp: answered a line that is not JSON with a parse error: {why}");
            let message = format!("parse error: {why}; send one JSON-RPC message per line, as UTF-8 JSON");
            return self.write_host(&error_line(&id_of_unreadable(&line), code::PARSE_ERROR, &message)).await;
        }
        let (kind, method, cancelled) = classify(&line);
        match method.as_deref() {
            Some("initialize") => {
                self.handshake = Handshake { initialize: Some(line.clone()), ..Handshake::default() };
            }
            Some("notifications/initialized") => self.handshake.initialized = Some(line.clone()),
            Some("logging/setLevel") => self.handshake.set_level = Some(line.clone()),
            _ => {}
        }
        if let Some(id) = cancelled {
            self.in_flight.remove(&id);
        }
        let is_initialize = method.as_deref() == Some("initialize");
        if self.daemon.is_none() {
            // A new `initialize` is itself the handshake: nothing to replay.
            let replay = !is_initialize;
            if let Err(e) = self.reconnect_and_replay(replay).await {
                eprintln!("parley-mcp: {e}");
                if let Kind::Request(id) = kind {
                    let message = format!("Parley daemon unavailable: {e}");
                    return self.write_host(&error_line(&id, code::DAEMON_UNAVAILABLE, &message)).await;
                }
                return Ok(());
            }
        }
        let mut framed = line;
        framed.push(b'\n');
        if self.send(&framed).await {
            self.sent(kind, framed, is_initialize, false);
            return Ok(());
        }
        // The write failed, so the daemon never received the line: it went
        // away just now. Reconnect and send it this once.
        self.lost("the Parley daemon closed the connection").await?;
        let retried = match self.reconnect_and_replay(!is_initialize).await {
            Ok(()) => self.send(&framed).await,
            Err(e) => {
                eprintln!("parley-mcp: {e}");
                false
            }
        };
        match kind {
            kind if retried => {
                self.sent(kind, framed, is_initialize, true);
                Ok(())
            }
            Kind::Request(id) => {
                let message = "Parley daemon unavailable: it went away and could not be restarted; run `parley daemon` in a terminal to see why";
                self.write_host(&error_line(&id, code::DAEMON_UNAVAILABLE, message)).await
            }
            _ => Ok(()),
        }
    }

    /// Notes a host line written to the daemon: a request is in flight, and
    /// the line is the connection's last.
    fn sent(&mut self, kind: Kind, framed: Vec<u8>, is_initialize: bool, moved: bool) {
        self.last_sent = match kind {
            Kind::Request(id) => {
                self.in_flight.insert(id.clone());
                Some(Sent { id, framed, is_initialize, moved })
            }
            _ => None,
        };
    }

    /// Writes a framed line to the daemon; false when the connection is gone.
    async fn send(&mut self, framed: &[u8]) -> bool {
        match self.daemon.as_mut() {
            Some(daemon) => daemon.writer.write_all(framed).await.is_ok(),
            None => false,
        }
    }

    async fn on_daemon_line(&mut self, line: Vec<u8>) -> std::io::Result<()> {
        if let (Kind::Response(id), _, _) = classify(&line) {
            if self.swallow.remove(&id) {
                return Ok(());
            }
            self.in_flight.remove(&id);
        }
        self.write_host(&line).await
    }

    /// The daemon went away: every request it had not answered gets an error
    /// with its own id. The next host message reconnects.
    async fn lost(&mut self, why: &str) -> std::io::Result<()> {
        let advice = "Call again: the daemon is restarted on the next call";
        self.lost_with(why, code::DAEMON_UNAVAILABLE, advice).await
    }

    /// [`Relay::lost`], with its own error code and advice.
    async fn lost_with(&mut self, why: &str, error_code: i64, advice: &str) -> std::io::Result<()> {
        self.daemon = None;
        self.swallow.clear();
        self.last_sent = None;
        let mut ids: Vec<String> = self.in_flight.drain().collect();
        ids.sort();
        if !ids.is_empty() {
            eprintln!("parley-mcp: {why}; failing {} request(s) in flight", ids.len());
        }
        let message = format!("{why} while handling this request; it was not retried. {advice}");
        for id in ids {
            self.write_host(&error_line(&id, error_code, &message)).await?;
        }
        Ok(())
    }

    /// The daemon reset the connection: it closed with data it had not read.
    ///
    /// The daemon runs a line only once it has read it whole, and the unread
    /// bytes are the end of what was written last. So the last line written
    /// was never run, and if it is a request still unanswered it is sent to a
    /// new connection (once: it is not moved a second time). Every other
    /// request in flight may have been read, and gets its error.
    async fn reset(&mut self, e: &std::io::Error) -> std::io::Result<()> {
        let unread = self.last_sent.take().filter(|sent| !sent.moved && self.in_flight.remove(&sent.id));
        self.lost(&format!("reading from the Parley daemon: {e}")).await?;
        let Some(sent) = unread else {
            return Ok(());
        };
        let moved = match self.reconnect_and_replay(!sent.is_initialize).await {
            Ok(()) => self.send(&sent.framed).await,
            Err(e) => {
                eprintln!("parley-mcp: {e}");
                false
            }
        };
        if moved {
            eprintln!(
                "parley-mcp: the Parley daemon went away before reading request {}; sent it to the new daemon",
                sent.id
            );
            self.sent(Kind::Request(sent.id), sent.framed, sent.is_initialize, true);
            return Ok(());
        }
        let message = "Parley daemon unavailable: it went away before reading this request and could not be restarted; run `parley daemon` in a terminal to see why";
        self.write_host(&error_line(&sent.id, code::DAEMON_UNAVAILABLE, message)).await
    }

    async fn reconnect(&mut self) -> Result<(), ConnectError> {
        // Nothing is written on the new connection yet.
        self.last_sent = None;
        self.daemon = Some(self.connector.connect().await?);
        Ok(())
    }

    /// Reconnects and, for a legacy client, replays its handshake so the new
    /// daemon connection is in the state the host believes it is in.
    async fn reconnect_and_replay(&mut self, replay: bool) -> Result<(), ConnectError> {
        self.reconnect().await?;
        if !replay {
            return Ok(());
        }
        let Some(initialize) = self.handshake.initialize.clone() else {
            return Ok(());
        };
        let why = match tokio::time::timeout(REPLAY_TIMEOUT, self.replay(initialize)).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(why)) => why,
            Err(_) => "the restarted daemon did not answer initialize within 10 s".to_owned(),
        };
        self.daemon = None;
        Err(ConnectError::HelloBroken(format!("replaying the MCP handshake: {why}")))
    }

    async fn replay(&mut self, initialize: Vec<u8>) -> Result<(), String> {
        let init_id = self.replay_request(&initialize).await?;
        // The server accepts nothing else before it has answered initialize.
        loop {
            let daemon = self.daemon.as_mut().ok_or("no daemon")?;
            match daemon.reader.next_line().await {
                Ok(Some(line)) => {
                    if let (Kind::Response(id), _, _) = classify(&line)
                        && id == init_id
                    {
                        self.swallow.remove(&id);
                        break;
                    }
                }
                Ok(None) | Err(_) => {
                    self.daemon = None;
                    return Err("the restarted daemon closed the connection".into());
                }
            }
        }
        if let Some(initialized) = self.handshake.initialized.clone() {
            self.send_raw(initialized).await?;
        }
        if let Some(set_level) = self.handshake.set_level.clone() {
            self.replay_request(&set_level).await?;
        }
        Ok(())
    }

    /// Sends a copy of a host request under a relay-owned id; returns that id.
    async fn replay_request(&mut self, line: &[u8]) -> Result<String, String> {
        let mut value: serde_json::Value = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        self.replays += 1;
        let id = format!("\"parley-mcp-replay-{}\"", self.replays);
        value["id"] = serde_json::Value::String(format!("parley-mcp-replay-{}", self.replays));
        let line = serde_json::to_vec(&value).map_err(|e| e.to_string())?;
        self.swallow.insert(id.clone());
        self.send_raw(line).await?;
        Ok(id)
    }

    async fn send_raw(&mut self, mut line: Vec<u8>) -> Result<(), String> {
        // A line of the relay's own is now the connection's last.
        self.last_sent = None;
        let daemon = self.daemon.as_mut().ok_or("no daemon")?;
        line.push(b'\n');
        daemon.writer.write_all(&line).await.map_err(|e| e.to_string())
    }

    /// The host closed stdin: half-close toward the daemon and pass on the
    /// replies still due, for at most [`DRAIN_TIMEOUT`].
    async fn drain(mut self) -> i32 {
        let Some(mut daemon) = self.daemon.take() else {
            return 0;
        };
        let _ = daemon.writer.shutdown().await;
        let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
        while !self.in_flight.is_empty() {
            match tokio::time::timeout_at(deadline, daemon.reader.next_line()).await {
                Ok(Ok(Some(line))) => {
                    if let (Kind::Response(id), _, _) = classify(&line) {
                        self.in_flight.remove(&id);
                    }
                    if self.write_host(&line).await.is_err() {
                        return 1;
                    }
                }
                Ok(Ok(None)) | Ok(Err(_)) | Err(_) => break,
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_lines_by_id_and_method() {
        let kind = |line: &str| match classify(line.as_bytes()).0 {
            Kind::Request(id) => format!("request {id}"),
            Kind::Notification => "notification".into(),
            Kind::Response(id) => format!("response {id}"),
            Kind::Other => "other".into(),
        };
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#), "request 1");
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":"a b","method":"x"}"#), "request \"a b\"");
        assert_eq!(kind(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), "notification");
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#), "response 7");
        assert_eq!(kind("garbage"), "other");
        let (_, _, cancelled) =
            classify(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#);
        assert_eq!(cancelled.as_deref(), Some("4"));
    }

    use parley_protocol::hello::HelloReply;
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
    use tokio::net::UnixStream;

    /// Hands out connections whose daemon ends the test holds.
    struct Daemons(Vec<UnixStream>);

    impl Connector for Daemons {
        async fn connect(&mut self) -> Result<HubConnection, ConnectError> {
            let stream = self.0.pop().ok_or_else(|| ConnectError::HelloBroken("no daemon left".into()))?;
            let (read, writer) = stream.into_split();
            let reply = HelloReply {
                protocol: parley_protocol::PROTOCOL_VERSION,
                version: "test".into(),
                pid: 1,
                connection_id: 1,
                seq: 0,
                instance: "test".into(),
                executable: None,
                build: None,
            };
            Ok(HubConnection { reader: LineReader::new(BufReader::new(read)), writer, reply })
        }
    }

    /// Reads one line byte by byte, so nothing after it is taken from the socket.
    async fn read_exactly_one_line(daemon: &mut UnixStream) -> String {
        let mut line = Vec::new();
        loop {
            let byte = daemon.read_u8().await.expect("a line from the relay");
            if byte == b'\n' {
                return String::from_utf8(line).expect("UTF-8");
            }
            line.push(byte);
        }
    }

    /// The relay on a host (stdin, stdout) and two daemon connections, the
    /// first of which reads request 1, leaves `then` unread and dies. Returns
    /// what the host is told and the lines the second daemon gets.
    async fn first_daemon_dies_with(then: &str) -> (Vec<String>, Vec<String>) {
        let (mut host_in, relay_in) = UnixStream::pair().expect("pair");
        let (relay_out, host_out) = UnixStream::pair().expect("pair");
        let (mut first, first_shim) = UnixStream::pair().expect("pair");
        let (second, second_shim) = UnixStream::pair().expect("pair");
        let relay = tokio::spawn(run(BufReader::new(relay_in), relay_out, Daemons(vec![second_shim, first_shim])));
        let call = |id: u32| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\"}}\n");
        host_in.write_all(call(1).as_bytes()).await.expect("write");
        assert_eq!(read_exactly_one_line(&mut first).await + "\n", call(1));
        host_in.write_all(then.as_bytes()).await.expect("write");
        // Die with the next line queued, unread: the relay sees a reset.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while rustix::io::ioctl_fionread(&first).expect("FIONREAD") == 0 {
            assert!(tokio::time::Instant::now() < deadline, "the relay never wrote the next line");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(first);
        let mut host = BufReader::new(host_out).lines();
        let mut told = vec![host.next_line().await.expect("read").expect("the host is told about request 1")];
        let mut second = BufReader::new(second).lines();
        drop(host_in);
        let mut resent = Vec::new();
        while let Some(line) = second.next_line().await.expect("read") {
            resent.push(line);
        }
        relay.await.expect("the relay ends at end of input");
        while let Some(line) = host.next_line().await.expect("read") {
            told.push(line);
        }
        (told, resent)
    }

    #[tokio::test]
    async fn a_reset_sends_the_unread_last_request_again_and_fails_the_one_read() {
        let (told, resent) = first_daemon_dies_with("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}\n").await;
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(told[0].contains("\"id\":1") && told[0].contains("not retried"), "{told:?}");
        assert_eq!(resent, ["{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}"], "only request 2 runs again");
    }

    #[tokio::test]
    async fn after_a_reset_nothing_is_sent_again_when_a_notification_came_last() {
        // The notification was unread; request 1 may have been read, and runs only once.
        let cancel = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n";
        let (told, resent) = first_daemon_dies_with(cancel).await;
        assert!(told.len() == 1 && told[0].contains("\"id\":1"), "{told:?}");
        assert!(resent.is_empty(), "{resent:?}");
    }

    /// An answer too long to relay fails the request with advice to ask for
    /// less, not to call again (the same call would fail the same way), and
    /// the next call is relayed as usual.
    #[tokio::test]
    async fn an_answer_over_the_line_limit_fails_its_request_saying_to_ask_for_less() {
        let (mut host_in, relay_in) = UnixStream::pair().expect("pair");
        let (relay_out, host_out) = UnixStream::pair().expect("pair");
        let (first, first_shim) = UnixStream::pair().expect("pair");
        let (second, second_shim) = UnixStream::pair().expect("pair");
        let relay = tokio::spawn(run(BufReader::new(relay_in), relay_out, Daemons(vec![second_shim, first_shim])));
        let call = |id: u32| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\"}}\n");
        host_in.write_all(call(1).as_bytes()).await.expect("write");
        let (first_read, mut first_write) = first.into_split();
        let mut first_lines = BufReader::new(first_read).lines();
        assert!(first_lines.next_line().await.expect("read").is_some_and(|l| l.contains("\"id\":1")));
        let huge = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"{}\"}}\n", "x".repeat(17 << 20));
        first_write.write_all(huge.as_bytes()).await.expect("write the long answer");
        let mut host = BufReader::new(host_out).lines();
        let told = host.next_line().await.expect("read").expect("the host is told");
        assert!(told.contains("\"id\":1") && told.contains("16 MiB") && told.contains("Ask for less"), "{told}");
        assert!(!told.contains("restarted"), "{told}");

        host_in.write_all(call(2).as_bytes()).await.expect("write");
        let (second_read, mut second_write) = second.into_split();
        let mut second_lines = BufReader::new(second_read).lines();
        assert!(second_lines.next_line().await.expect("read").is_some_and(|l| l.contains("\"id\":2")));
        second_write.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n").await.expect("answer");
        let answered = host.next_line().await.expect("read").expect("the next call is answered");
        assert!(answered.contains("\"id\":2") && answered.contains("result"), "{answered}");
        drop(host_in);
        relay.await.expect("the relay ends at end of input");
    }

    #[test]
    fn lines_the_daemon_cannot_read_are_told_apart() {
        let check = |line: &[u8], want: Option<&str>| {
            let got = unreadable(line);
            match (&got, want) {
                (None, None) => {}
                (Some(why), Some(part)) => assert!(why.contains(part), "{:?}: {why}", String::from_utf8_lossy(line)),
                _ => panic!("{:?}: got {got:?}, want {want:?}", String::from_utf8_lossy(line)),
            }
        };
        let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes();
        check(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, None);
        // A batch, an odd id or a wrong version is JSON: the daemon answers it.
        check(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, None);
        check(br#"{"jsonrpc":"1.0","id":[1],"method":5}"#, None);
        check(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", None);
        check(&deep(MAX_DEPTH), None);
        check(&deep(MAX_DEPTH + 1), Some("more than 127 deep"));
        check(&deep(100_000), Some("more than 127 deep"));
        check(b"not json", Some("not JSON"));
        check(br#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#, Some("not JSON"));
        check(br#"{"jsonrpc":"2.0","id":1,"#, Some("ends before"));
        check(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\xff\"}", Some("not UTF-8 (byte 39 "));
        // Bad bytes inside a member the relay itself never reads.
        check(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"\xc3\"}}", Some("not UTF-8"));
        check(br#"{"x":"\ud800"}"#, Some("not JSON"));
        check(b"1e999", Some("not JSON"));
    }

    #[test]
    fn an_unreadable_request_is_answered_under_its_id_when_it_can_be_read() {
        assert_eq!(id_of_unreadable(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\xff\"}"), "2");
        assert_eq!(id_of_unreadable(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"m\",\"x\":[[[["), "null");
        let deep =
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"m","params":{}{}}}"#, "[".repeat(200), "]".repeat(200));
        assert_eq!(id_of_unreadable(deep.as_bytes()), "3");
        assert_eq!(id_of_unreadable(b"not json"), "null");
    }

    #[test]
    fn error_lines_keep_the_raw_id() {
        let line = error_line("\"x\"", -32000, "gone \"now\"");
        assert_eq!(
            String::from_utf8(line).expect("utf-8"),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":"gone \"now\""}}"#
        );
    }
}
