//! Every message the hub carries, from the protocol crate's one list of
//! methods and notifications plus the requests outside it (`hello`, and
//! `selection/get`, `symbols/find` and `diagnostics/get` from the daemon to
//! an editor): its name, its kind, and
//! how to check a value of each of its types.

use std::fmt::Debug;

use parley_protocol::hello::{HELLO, Hello, HelloReply};
use parley_protocol::methods::{
    DIAGNOSTICS_GET, DiagnosticsGetParams, DiagnosticsGetResult, Method, NoParams, NotificationMethod, SELECTION_GET,
    SYMBOLS_FIND, Selection, SymbolsFindParams, SymbolsFindResult,
};
use parley_protocol::{for_each_method, for_each_notification};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::examples::Example;

/// One of the hub's types: its name and how to read a value of it.
#[derive(Clone, Copy)]
pub struct WireType {
    /// The type's name, which is also its snapshot's file name.
    pub name: &'static str,
    /// Decodes a JSON value as this type and encodes it again.
    pub round_trip: fn(&Value) -> Result<Value, String>,
    /// The example, encoded.
    pub example: fn() -> Value,
    /// Decodes `types/<name>.json`'s text and compares it with the example.
    pub matches_example: fn(&str) -> Result<(), String>,
}

fn round_trip<T: Serialize + DeserializeOwned>(value: &Value) -> Result<Value, String> {
    let decoded: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(decoded).map_err(|e| e.to_string())
}

fn example<T: Example + Serialize>() -> Value {
    serde_json::to_value(T::example()).expect("every example encodes")
}

fn matches_example<T: Example + DeserializeOwned + PartialEq + Debug>(text: &str) -> Result<(), String> {
    let decoded: T = serde_json::from_str(text).map_err(|e| format!("does not decode: {e}"))?;
    let example = T::example();
    if decoded == example { Ok(()) } else { Err(format!("decodes to {decoded:?}, not the example {example:?}")) }
}

impl WireType {
    pub fn of<T: Example + Serialize + DeserializeOwned + PartialEq + Debug>() -> WireType {
        WireType {
            name: T::NAME,
            round_trip: round_trip::<T>,
            example: example::<T>,
            matches_example: matches_example::<T>,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A client → daemon request.
    Request,
    /// A daemon → editor request.
    DaemonRequest,
    Notification,
}

/// A method or notification.
#[derive(Clone, Copy)]
pub struct Message {
    pub name: &'static str,
    pub kind: Kind,
    pub params: WireType,
    /// Requests only.
    pub result: Option<WireType>,
    /// Which roles may call a request.
    pub editors: bool,
    pub cli: bool,
}

impl Message {
    fn request<M: Method>() -> Message
    where
        M::Params: Example + PartialEq + Debug,
        M::Result: Example + PartialEq + Debug,
    {
        Message {
            name: M::NAME,
            kind: Kind::Request,
            params: WireType::of::<M::Params>(),
            result: Some(WireType::of::<M::Result>()),
            editors: M::FOR_EDITORS,
            cli: M::FOR_CLI,
        }
    }

    fn notification<N: NotificationMethod>() -> Message
    where
        N::Params: Example + PartialEq + Debug,
    {
        Message {
            name: N::NAME,
            kind: Kind::Notification,
            params: WireType::of::<N::Params>(),
            result: None,
            editors: true,
            cli: true,
        }
    }
}

macro_rules! requests {
    ($($method:path),* $(,)?) => {
        vec![$(Message::request::<$method>()),*]
    };
}

macro_rules! notifications {
    ($($notification:path),* $(,)?) => {
        vec![$(Message::notification::<$notification>()),*]
    };
}

/// Every message: `hello`, the listed methods, the daemon's requests to
/// editors, the listed notifications.
pub fn messages() -> Vec<Message> {
    let hello = Message {
        name: HELLO,
        kind: Kind::Request,
        params: WireType::of::<Hello>(),
        result: Some(WireType::of::<HelloReply>()),
        editors: true,
        cli: true,
    };
    let selection_get = Message {
        name: SELECTION_GET,
        kind: Kind::DaemonRequest,
        params: WireType::of::<NoParams>(),
        result: Some(WireType::of::<Option<Selection>>()),
        editors: true,
        cli: false,
    };
    let symbols_find = Message {
        name: SYMBOLS_FIND,
        kind: Kind::DaemonRequest,
        params: WireType::of::<SymbolsFindParams>(),
        result: Some(WireType::of::<SymbolsFindResult>()),
        editors: true,
        cli: false,
    };
    let diagnostics_get = Message {
        name: DIAGNOSTICS_GET,
        kind: Kind::DaemonRequest,
        params: WireType::of::<DiagnosticsGetParams>(),
        result: Some(WireType::of::<DiagnosticsGetResult>()),
        editors: true,
        cli: false,
    };
    let mut all = vec![hello];
    all.extend(for_each_method!(requests));
    all.extend([selection_get, symbols_find, diagnostics_get]);
    all.extend(for_each_notification!(notifications));
    all
}

/// The message named `name`.
pub fn message(name: &str) -> Option<Message> {
    messages().into_iter().find(|m| m.name == name)
}

/// Every type of every message, each once, in the order first met.
pub fn types() -> Vec<WireType> {
    let mut all: Vec<WireType> = Vec::new();
    for message in messages() {
        for wire in std::iter::once(message.params).chain(message.result) {
            if !all.iter().any(|t| t.name == wire.name) {
                all.push(wire);
            }
        }
    }
    all
}
