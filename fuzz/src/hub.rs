//! A hub line, read as the daemon reads it: the JSON-RPC envelope, then the
//! params of the method or notification it names, decoded by the daemon's
//! own dispatch decoder.

use parley_daemon::hub::connection::decode;
use parley_protocol::jsonrpc::{Message, Response, to_line};
use parley_protocol::methods as wire;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Any bytes as one hub line.
///
/// Rules: a line that is refused is answered with a response a client reads
/// back, under the id the refusal names; params the daemon accepts read back
/// the same once written out again, so what a client sends with the
/// protocol's own types is what the daemon reads.
pub fn hub_request(data: &[u8]) {
    match Message::parse(data) {
        Err(invalid) => {
            let line = to_line(&Response::err(invalid.id.clone(), invalid.error.clone()));
            match Message::parse(&line[..line.len() - 1]) {
                Ok(Message::Response(answer)) => {
                    assert_eq!(answer.id, invalid.id, "the answer to a refused line names another id");
                    assert_eq!(answer.error, Some(invalid.error), "the answer to a refused line reads back changed");
                }
                other => panic!("the answer to a refused line does not read back as a response: {other:?}"),
            }
        }
        Ok(Message::Request(request)) => method_params(&request.method, &request.params),
        Ok(Message::Notification(notification)) => notification_params(&notification.method, &notification.params),
        // An editor's answer to `selection/get`, read as the daemon reads it.
        Ok(Message::Response(response)) => {
            if let Some(result) = response.result {
                reads_back::<wire::Selection>(wire::SELECTION_GET, &result);
            }
        }
    }
}

fn method_params(method: &str, params: &Value) {
    fn on<M: Method>(params: &Value) {
        reads_back::<M::Params>(M::NAME, params);
    }
    use wire::*;
    let check: fn(&Value) = match method {
        REVIEW_GET => on::<ReviewGet>,
        REVIEW_HISTORY => on::<ReviewHistory>,
        EVENTS_REPLAY => on::<EventsReplay>,
        STATUS => on::<StatusRequest>,
        SHUTDOWN => on::<Shutdown>,
        FEEDBACK_LIST => on::<FeedbackList>,
        FEEDBACK_CREATE => on::<FeedbackCreate>,
        FEEDBACK_REPLY => on::<FeedbackReply>,
        FEEDBACK_RESOLVE => on::<FeedbackResolve>,
        FEEDBACK_REOPEN => on::<FeedbackReopen>,
        BUFFER_CHANGED => on::<BufferChanged>,
        SUBSCRIBE => on::<Subscribe>,
        STORE_EXPORT => on::<StoreExport>,
        STORE_IMPORT => on::<StoreImport>,
        REVIEW_REQUEST => on::<ReviewRequest>,
        REVIEW_AWAIT => on::<ReviewAwait>,
        REVIEW_CANCEL => on::<ReviewCancel>,
        SESSIONS_LIST => on::<SessionsList>,
        SESSIONS_GET => on::<SessionsGet>,
        SESSIONS_COMPLETE => on::<SessionsComplete>,
        INBOX => on::<Inbox>,
        ROUND_GET => on::<RoundGet>,
        ROUND_COMMENT => on::<RoundComment>,
        ROUND_UNCOMMENT => on::<RoundUncomment>,
        ROUND_SUBMIT => on::<RoundSubmit>,
        _ => return,
    };
    check(params);
}

fn notification_params(method: &str, params: &Value) {
    fn on<N: NotificationMethod>(params: &Value) {
        reads_back::<N::Params>(N::NAME, params);
    }
    use wire::*;
    let check: fn(&Value) = match method {
        EDITOR_FOCUS => on::<EditorFocus>,
        SELECTION_CHANGED => on::<SelectionChangedNotification>,
        REVIEW_UPDATED => on::<ReviewUpdatedNotification>,
        FEEDBACK_CHANGED => on::<FeedbackChangedNotification>,
        REVIEW_PROGRESS => on::<ReviewProgressNotification>,
        DAEMON_STOPPING => on::<DaemonStoppingNotification>,
        ROUND_REQUESTED => on::<RoundRequestedNotification>,
        ROUND_CHANGED => on::<RoundChangedNotification>,
        _ => return,
    };
    check(params);
}

/// Decodes `params` as the daemon does; when it accepts them, writes them out
/// and checks that they read back to the same.
fn reads_back<T: Serialize + DeserializeOwned>(name: &str, params: &Value) {
    let Ok(decoded) = decode::<T>(name, params) else { return };
    let written = serde_json::to_value(&decoded).expect("wire types serialize");
    let again = decode::<T>(name, &written)
        .unwrap_or_else(|e| panic!("{name}: params the daemon read do not read back once written: {e:?}\n{written}"));
    let rewritten = serde_json::to_value(&again).expect("wire types serialize");
    assert_eq!(rewritten, written, "{name}: params change when written and read again");
}
