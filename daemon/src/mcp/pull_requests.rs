//! The `sync_pull_request` tool: an agent brings its workspace's linked pull
//! request's review threads and conversation in before it starts, and pushes
//! its answers (replies under its name, resolutions as the person's settings
//! allow) when it is done, through the same use cases as `parley pr pull` and
//! `parley pr push`.

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Serialize};

use super::{ParleyMcp, errors};
use crate::github::linked::{LinkedPullRequest, PullSummary};
use crate::usecases::pull_requests::{self, PullRequestError, pushing::PushOutcome};

/// The conversation comments a result carries, the most recent.
const CONVERSATION_SHOWN: usize = 10;
/// How much of each conversation comment a result carries.
const COMMENT_CHARS: usize = 2_000;

// Which way to sync (no doc comment: it would be sent in tools/list).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Pull,
    Push,
    #[default]
    Both,
}

/// Arguments of `sync_pull_request`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncArgs {
    /// Default both: pull, then push.
    #[serde(default)]
    pub direction: Direction,
}

/// What `sync_pull_request` did.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncResult {
    pub pull_request: String,
    pub url: String,
    /// OPEN, MERGED or CLOSED.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pulled: Option<Pulled>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushed: Option<Pushed>,
    /// The pull request's conversation, the most recent comments, oldest first.
    pub conversation: Vec<ConversationComment>,
    /// What it means, in a few sentences.
    pub message: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pulled {
    pub new_threads: usize,
    pub replies: usize,
    pub resolved: usize,
    pub reopened: usize,
    /// Threads that could not be put on a file here: `path:line: why`.
    pub not_placed: Vec<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pushed {
    pub threads: usize,
    pub replies: usize,
    pub resolutions: usize,
    /// Threads resolved here but left open on GitHub for their author.
    pub left_open: Vec<String>,
    /// Threads not sent: `path:line: why`.
    pub not_sent: Vec<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationComment {
    pub author: String,
    pub created_at: String,
    pub body: String,
}

#[tool_router(router = pull_request_tools, vis = "pub(super)")]
impl ParleyMcp {
    #[tool(
        description = "Sync your workspace's linked GitHub pull request: pull its review threads (then read them with get_feedback) and conversation, push your replies and resolutions.",
        title = "Sync pull request",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    async fn sync_pull_request(
        &self,
        Parameters(args): Parameters<SyncArgs>,
    ) -> Result<Json<SyncResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let workspace = self
            .workspace()
            .or_else(|| self.agent.cwd.clone())
            .ok_or("this agent's workspace is unknown: start the agent inside the project folder")?;
        // The host's GITHUB_TOKEN, as `parley pr pull` hands over the shell's:
        // used only when neither `gh` nor the daemon has a token.
        let token = self.agent.env.get("GITHUB_TOKEN").cloned();
        let mut pulled = None;
        let mut linked = None;
        if args.direction != Direction::Push {
            let (l, summary) =
                pull_requests::pull(&self.context, &workspace, token.clone()).await.map_err(failed("pull", None))?;
            pulled = Some(summary);
            linked = Some(l);
        }
        let mut pushed = None;
        if args.direction != Direction::Pull {
            let done = pulled.as_ref().map(|p| format!("pulled ({}), ", brought(p)));
            let (l, outcome) = pull_requests::push(&self.context, &workspace, token, false, None)
                .await
                .map_err(failed("push", done.as_deref()))?;
            pushed = Some(outcome);
            linked = Some(l);
        }
        let linked = linked.ok_or("nothing was synced")?;
        Ok(Json(result(&linked, pulled.as_ref(), pushed.as_ref())))
    }
}

/// A failed sync as the agent reads it: what was done before it, and what
/// to do in the use case's own words (`parley pr link`, `gh auth login`,
/// when the rate limit resets).
fn failed<'a>(what: &'static str, done: Option<&'a str>) -> impl FnOnce(PullRequestError) -> errors::ToolError + 'a {
    move |error: PullRequestError| format!("{}the {what} failed: {error}", done.unwrap_or("")).into()
}

fn brought(p: &PullSummary) -> String {
    format!(
        "{}, {}, {} resolved, {} reopened",
        count(p.new_threads, "new thread", "new threads"),
        count(p.replies, "reply", "replies"),
        p.resolved,
        p.reopened
    )
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn result(linked: &LinkedPullRequest, pulled: Option<&PullSummary>, pushed: Option<&PushOutcome>) -> SyncResult {
    let mut message = Vec::new();
    let pulled = pulled.map(|p| {
        message.push(format!("Pulled: {}; read the threads with get_feedback.", brought(p)));
        Pulled {
            new_threads: p.new_threads,
            replies: p.replies,
            resolved: p.resolved,
            reopened: p.reopened,
            not_placed: linked
                .unplaced
                .iter()
                .map(|u| format!("{}:{}: {}", u.path, u.line.unwrap_or(0), u.reason))
                .collect(),
        }
    });
    let pushed = pushed.map(|o| {
        let plan = &o.plan;
        let replies = plan.replies.len() + plan.threads.iter().map(|t| t.later.len()).sum::<usize>();
        message.push(format!(
            "Pushed: {}, {}, {}.",
            count(plan.threads.len(), "new thread", "new threads"),
            count(replies, "reply", "replies"),
            count(plan.resolutions.len(), "resolution", "resolutions")
        ));
        if !plan.left_open.is_empty() {
            message.push(
                "Threads you resolved stay open on GitHub for their author to close: your note went as a reply.".into(),
            );
        }
        if o.review == Some("pending") {
            message.push("New threads are in a pending review: the person submits it on GitHub.".into());
        }
        message.extend(o.settings_note.clone());
        Pushed {
            threads: plan.threads.len(),
            replies,
            resolutions: plan.resolutions.len(),
            left_open: plan.left_open.iter().map(|l| format!("{} ({})", l.path, l.url)).collect(),
            not_sent: plan.not_sent.iter().map(|n| format!("{}:{}: {}", n.path, n.line, n.reason)).collect(),
        }
    });
    if let Some(state @ ("MERGED" | "CLOSED")) = linked.state.as_deref() {
        message.push(format!("The pull request is {}.", state.to_lowercase()));
    }
    let skip = linked.conversation.len().saturating_sub(CONVERSATION_SHOWN);
    let conversation = linked
        .conversation
        .iter()
        .skip(skip)
        .map(|c| ConversationComment {
            author: c.author.clone(),
            created_at: c.created_at.clone(),
            body: shortened(&c.body),
        })
        .collect();
    if skip > 0 {
        message.push(format!("The conversation's {skip} earlier comments are on GitHub."));
    }
    SyncResult {
        pull_request: linked.pull_request.to_string(),
        url: linked.url.clone(),
        state: linked.state.clone(),
        pulled,
        pushed,
        conversation,
        message: message.join(" "),
    }
}

fn shortened(body: &str) -> String {
    match body.char_indices().nth(COMMENT_CHARS) {
        Some((at, _)) => format!("{}… (cut; the rest is on GitHub)", &body[..at]),
        None => body.to_owned(),
    }
}
