//! The `present_walkthrough` tool: an agent guides a person through its
//! change, and learns at once which comments were placed and which were
//! not (with why, and the candidates of an ambiguous location), so it can
//! fix them in the same turn.

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Serialize};

use super::{ParleyMcp, author_of, errors};
use crate::usecases::walkthroughs::{self, Presenting};

/// Arguments of `present_walkthrough`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PresentWalkthroughArgs {
    /// Markdown with fenced blocks (info string, `key: value` header, blank line, body): mermaid; comment (location: path:line[-line], lines(p,a,b), search(p,regex), findDefinition(name), findReferences(name); icon:); gitdiff (range: A..B, working or staged); action (button:; body = the message you get on click).
    pub content: String,
    /// Folder paths are relative to; default: your workspace.
    #[serde(rename = "baseUri")]
    pub base_uri: Option<String>,
    /// Same title again = next revision (unanswered comments replaced). Default: first heading.
    pub title: Option<String>,
}

/// What `present_walkthrough` reports back.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PresentWalkthroughResult {
    #[serde(rename = "walkthroughId")]
    pub walkthrough_id: String,
    pub revision: u64,
    /// How many comments were placed (each a feedback thread on its lines).
    pub placed: usize,
    /// The comments that were not placed: fix their locations and present again.
    pub unplaced: Vec<UnplacedComment>,
    /// Other blocks' problems (a gitdiff range git does not know, an action without a button) and references that do not resolve.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct UnplacedComment {
    /// The block's index among the walkthrough's fenced blocks, from 0.
    pub index: usize,
    pub location: String,
    pub reason: String,
    /// For an ambiguous location, the places it could mean (path:line, 1-based).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
}

#[tool_router(router = walkthrough_tools, vis = "pub(super)")]
impl ParleyMcp {
    #[tool(
        description = "Walk the person through your change in their editor: diagrams, comments placed on the code as threads, the diff, buttons that message you. Answers with the comments not placed (why, candidates): fix and present again.",
        title = "Present walkthrough",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn present_walkthrough(
        &self,
        Parameters(args): Parameters<PresentWalkthroughArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<PresentWalkthroughResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let base = self.base_dir(args.base_uri.as_deref())?;
        let workspace = self.workspace().unwrap_or_else(|| crate::workspace::root_of(&base));
        let author = author_of(&context);
        let agent = self.agent.name.get().cloned().unwrap_or_else(|| author.clone());
        let presenting = Presenting { content: args.content, base, workspace, title: args.title, agent, author };
        let presented = walkthroughs::present(&self.context, presenting).await.map_err(|e| e.to_string())?;
        let unplaced = presented
            .unplaced
            .into_iter()
            .map(|u| UnplacedComment {
                index: u.index,
                location: u.location,
                reason: u.reason,
                candidates: u
                    .candidates
                    .iter()
                    .map(|c| match c.start_line == c.end_line {
                        true => format!("{}:{}", c.path, c.start_line + 1),
                        false => format!("{}:{}-{}", c.path, c.start_line + 1, c.end_line + 1),
                    })
                    .collect(),
            })
            .collect();
        Ok(Json(PresentWalkthroughResult {
            walkthrough_id: presented.walkthrough.id,
            revision: presented.walkthrough.revision,
            placed: presented.placed,
            unplaced,
            problems: presented.problems,
        }))
    }
}
