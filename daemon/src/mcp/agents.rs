//! This agent in the registry of agents at work, and a person's messages
//! delivered to it: the host named once it says who it is, every tool call
//! noted (and a waiting one marked so), and messages waiting for the agent
//! handed over by the first path that reaches it:
//!
//! - at the end of its next tool answer, as a note after the tool's own
//!   content (`tool-answer`);
//! - in the answer of a call it is waiting in (`wait`): `await_review` ends
//!   its wait at once and answers `pending` with the note, since that wait
//!   changes nothing and the agent calls again; `request_review` keeps
//!   waiting (ending it early would cancel the round it started) and its
//!   answer, within its `wait_seconds`, carries the note;
//! - pushed to a Claude Code host that declared channels
//!   (`notifications/claude/channel`), at once (`channel`).
//!
//! Reading a thread (get_feedback; the resource, in `resources`) marks its
//! messages read; replying to it or resolving it marks them answered.

use rmcp::ErrorData;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ContentBlock, CustomNotification, Implementation,
    ServerNotification,
};
use rmcp::service::{Peer, RequestContext, RoleServer};

use super::ParleyMcp;
use crate::state::HostFacts;
use crate::usecases::agents;

/// Claude Code's push channel: the capability both sides declare, and its
/// notification.
pub const CHANNEL: &str = "claude/channel";
const CHANNEL_NOTIFICATION: &str = "notifications/claude/channel";

/// The tools that wait (for a round, for a person's verdict): the agent is
/// listed as waiting in them.
fn waits(tool: &str) -> bool {
    matches!(tool, "await_review" | "request_review")
}

impl ParleyMcp {
    /// The host said who it is (its `initialize`, or a request's `_meta`):
    /// the agent gets its name and, when the host takes channels, its
    /// messages are pushed from now on.
    pub(super) async fn host_known(
        &self,
        client: &Implementation,
        capabilities: Option<&ClientCapabilities>,
        peer: &Peer<RoleServer>,
    ) {
        if self.agent.name.get().is_some() {
            return;
        }
        let channel = capabilities.and_then(|c| c.experimental.as_ref()).is_some_and(|e| e.contains_key(CHANNEL));
        let host = HostFacts {
            name: client.name.clone(),
            version: client.version.clone(),
            channel,
            workspace: self.workspace(),
        };
        let Some(name) = agents::host_known(&self.context, self.agent.connection_id, host).await else { return };
        if self.agent.name.set(name.clone()).is_err() || !channel {
            return;
        }
        let (cx, agent, peer) = (self.context.clone(), self.agent.clone(), peer.clone());
        tokio::spawn(async move {
            let mut waiting = agent.waiting.clone();
            loop {
                if *waiting.borrow_and_update() > 0 {
                    for message in agents::take(&cx, &name, agents::VIA_CHANNEL).await {
                        let mut meta = serde_json::json!({ "source": "parley" });
                        if let Some(thread) = &message.thread_id {
                            meta["thread_id"] = thread.clone().into();
                        }
                        if let Some(walkthrough) = &message.walkthrough_id {
                            meta["walkthrough_id"] = walkthrough.clone().into();
                        }
                        let params = serde_json::json!({ "content": message.text, "meta": meta });
                        let notification = CustomNotification::new(CHANNEL_NOTIFICATION, Some(params));
                        if peer.send_notification(ServerNotification::CustomNotification(notification)).await.is_err() {
                            return;
                        }
                    }
                }
                tokio::select! {
                    () = agent.closed.cancelled() => return,
                    changed = waiting.changed() => if changed.is_err() { return },
                }
            }
        });
    }

    /// Runs a tool call, noting it in the registry, and ends its answer
    /// with the messages waiting for the agent.
    pub(super) async fn call_tool_delivering(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.agent.name.get().is_none()
            && let Some(client) = context.client_info()
        {
            self.host_known(&client, context.client_capabilities().as_ref(), &context.peer).await;
        }
        let name = self.agent.name.get().cloned();
        let tool = request.name.to_string();
        let thread_id =
            request.arguments.as_ref().and_then(|a| a.get("threadId")).and_then(|v| v.as_str()).map(str::to_owned);
        let waiting_call = waits(&tool);
        let id = self.agent.connection_id;
        agents::call_started(&self.context, id, &tool, waiting_call).await;
        let mut waiting = self.agent.waiting.clone();
        waiting.mark_unchanged();
        // await_review's wait ends early when a message arrives: its own
        // token, so the request itself is not cancelled.
        let ends_early = (tool == "await_review").then(|| context.ct.child_token());
        if let Some(token) = &ends_early {
            context.ct = token.clone();
        }
        // A message already waiting when a wait starts ends it at once.
        let waiting_already = waiting_call && *waiting.borrow() > 0;
        if let (true, Some(token)) = (waiting_already, &ends_early) {
            token.cancel();
        }
        let call = self.tool_router.call(ToolCallContext::new(self, request, context));
        let (answer, arrived_while_waiting) = if waiting_call {
            tokio::pin!(call);
            let mut arrived = waiting_already;
            loop {
                tokio::select! {
                    answer = &mut call => break (answer, arrived),
                    changed = waiting.changed(), if !arrived => {
                        if changed.is_err() || *waiting.borrow_and_update() > 0 {
                            arrived = true;
                            if let Some(token) = &ends_early {
                                token.cancel();
                            }
                        }
                    }
                }
            }
        } else {
            (call.await, false)
        };
        if waiting_call {
            agents::call_ended(&self.context, id).await;
        }
        let mut answer = answer?;
        let (Some(name), CallToolResponse::Complete(result)) = (name, &mut answer) else { return Ok(answer) };
        if result.is_error != Some(true) {
            match tool.as_str() {
                "get_feedback" => {
                    agents::read(&self.context, &name, listed_threads(result.structured_content.as_ref())).await
                }
                "reply_feedback" | "resolve_feedback" => {
                    if let Some(thread) = &thread_id {
                        agents::answered(&self.context, &name, thread).await;
                    }
                }
                _ => {}
            }
        }
        if *self.agent.waiting.borrow() > 0 {
            let via = if arrived_while_waiting { agents::VIA_WAIT } else { agents::VIA_TOOL_ANSWER };
            let messages = agents::take(&self.context, &name, via).await;
            if !messages.is_empty() {
                let notes: Vec<String> = messages.into_iter().map(|m| m.text).collect();
                let heading = "A person wrote to you through Parley while you worked:";
                result.content.push(ContentBlock::text(format!("{heading}\n{}", notes.join("\n"))));
            }
        }
        Ok(answer)
    }
}

/// The ids of the threads a get_feedback answer lists.
fn listed_threads(structured: Option<&serde_json::Value>) -> Vec<String> {
    structured
        .and_then(|s| s.get("threads"))
        .and_then(|t| t.as_array())
        .map(|threads| threads.iter().filter_map(|t| t.get("id")?.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}
