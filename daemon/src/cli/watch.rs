//! `parley watch`: a terminal that follows a folder — it prints reviews as
//! agents present them and threads as they change, and reconnects when the
//! daemon restarts. It connects as a subscribed `cli` client, not as an
//! editor window: it has no selection, so `get_selection` never asks it.

use std::path::PathBuf;
use std::time::Duration;

use parley_protocol::hello::Role;
use parley_protocol::jsonrpc::{Message, Response};
use parley_protocol::methods as wire;
use serde_json::{Value, json};

use super::client::{HubClient, Opening};
use super::review::print_review;
use super::shown::{say, visible};

pub async fn run(folder: PathBuf) -> anyhow::Result<i32> {
    let mut opening = Opening { role: Role::Cli, name: "parley watch", workspaces: vec![folder.clone()], spawn: true };
    let mut last_seq: Option<(u64, String)> = None;
    let mut backoff = Duration::from_millis(100);
    loop {
        let mut client = match HubClient::open(&opening).await {
            Ok(Some(client)) => client,
            // Stopped on purpose: wait for a daemon to come back.
            Ok(None) => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
            Err(e) => {
                eprintln!("parley watch: {}; retrying in {backoff:?}", visible(&format!("{e:#}")));
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        backoff = Duration::from_millis(100);
        // Subscribed before reading what is there, so nothing falls between.
        let _: wire::SubscribeResult = client.call(wire::SUBSCRIBE, json!({ "workspaces": [&folder] })).await?;
        eprintln!("parley watch: watching {} (daemon pid {})", folder.display(), client.hello().pid);
        catch_up(&mut client, &folder, last_seq.take()).await?;
        last_seq = Some((client.hello().seq, client.hello().instance.clone()));
        match follow(&mut client, &mut last_seq).await {
            Ok(Some(reason)) => {
                // A daemon stopped on purpose is not started again from here:
                // `parley stop` means stop. Whoever starts one next (an
                // agent's call, `parley daemon`, the service) is reconnected to.
                eprintln!("parley watch: the daemon stopped ({}); waiting for it to come back", visible(&reason));
                opening.spawn = false;
            }
            Ok(None) => eprintln!("parley watch: the daemon went away; reconnecting"),
            Err(e) => eprintln!("parley watch: {}; reconnecting", visible(&format!("{e:#}"))),
        }
    }
}

/// On first connect, prints the current review; after a reconnect, prints
/// what was missed (or the current review when too much was missed).
async fn catch_up(
    client: &mut HubClient,
    folder: &std::path::Path,
    last_seq: Option<(u64, String)>,
) -> anyhow::Result<()> {
    if let Some((after, instance)) = last_seq {
        let params = json!({ "after": after, "instance": instance });
        let replay: wire::EventsReplayResult = client.call(wire::EVENTS_REPLAY, params).await?;
        if replay.complete {
            for event in replay.events {
                print_event(&event.method, event.params);
            }
            return Ok(());
        }
    }
    let current: wire::ReviewGetResult = client.call(wire::REVIEW_GET, json!({ "workspace": folder })).await?;
    match current.reviews.first() {
        Some(review) => print_review(review),
        None => say!("No review for {} yet; waiting for an agent to present one.", folder.display()),
    }
    Ok(())
}

/// Prints events until the connection ends; the daemon's stopping reason
/// when it said it was stopping on purpose.
async fn follow(client: &mut HubClient, last_seq: &mut Option<(u64, String)>) -> anyhow::Result<Option<String>> {
    let mut stopping = None;
    while let Some(message) = client.next_message().await? {
        match message {
            Message::Notification(n) if n.method == wire::DAEMON_STOPPING => {
                stopping = serde_json::from_value::<wire::DaemonStopping>(n.params).ok().map(|s| s.reason);
            }
            Message::Notification(n) => {
                if let (Some(seq), Some((last, _))) = (n.params.get("seq").and_then(Value::as_u64), last_seq.as_mut()) {
                    *last = seq;
                }
                print_event(&n.method, n.params);
            }
            Message::Request(request) => {
                let error = parley_protocol::jsonrpc::ErrorObject::new(
                    parley_protocol::jsonrpc::code::METHOD_NOT_FOUND,
                    format!("parley watch does not handle {}", request.method),
                );
                client.respond(Response::err(Some(request.id), error)).await?;
            }
            Message::Response(_) => {}
        }
    }
    Ok(stopping)
}

fn print_event(method: &str, params: Value) {
    match method {
        wire::REVIEW_UPDATED => {
            if let Ok(update) = serde_json::from_value::<wire::ReviewUpdated>(params) {
                print_review(&update.review);
            }
        }
        wire::FEEDBACK_CHANGED => {
            if let Ok(changed) = serde_json::from_value::<wire::FeedbackChanged>(params) {
                let t = &changed.thread;
                let last = t.comments.last().map(|c| format!(" — {}: {}", c.author, c.body)).unwrap_or_default();
                say!("thread {} {} on {}:{} [{}]{last}", t.id, changed.change, t.path, t.range.start.line + 1, t.state);
            }
        }
        _ => {}
    }
}
