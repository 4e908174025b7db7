//! The `present_review` tool: its arguments and result, and what it tells
//! the agent about where the review was shown and which references did not
//! resolve.

use std::path::PathBuf;

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Serialize};

use super::{ParleyMcp, errors};
use crate::reviews::{Presentation, Review};
use crate::usecases::reviews;
use crate::workspace;

/// Arguments of `present_review`.
// Field docs are the schema descriptions agents read, written in the review
// reference format itself (`[`path:line`][]`), which rustdoc takes for links.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PresentReviewArgs {
    /// The review in markdown: a summary fit for a commit message, findings with file references ([`src/auth.rs:45`][]), and specific suggestions.
    #[schemars(required)]
    pub content: Option<String>,
    /// The folder references are relative to (a path or file:// URI); default: your workspace root.
    #[serde(rename = "baseUri")]
    pub base_uri: Option<String>,
    /// replace (default: the whole review), update-section (one section) or append (at the end).
    #[schemars(extend("enum" = ["replace", "update-section", "append"], "default" = "replace"))]
    pub mode: Option<String>,
    /// Section heading for update-section mode (e.g. "Summary", "Security Issues", "Performance").
    pub section: Option<String>,
}

impl PresentReviewArgs {
    /// What the agent asks to show, as the use case reads it.
    pub fn presentation(&mut self) -> Result<Presentation, reviews::PresentError> {
        reviews::presentation(self.content.take(), self.mode.as_deref(), self.section.take())
    }
}

/// What `present_review` reports back.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PresentReviewResult {
    /// Whether the review was stored and shown (or queued for windows that open later).
    pub success: bool,
    pub message: String,
    /// The folder the review belongs to and references resolve against.
    #[serde(rename = "baseUri")]
    pub base_uri: String,
    /// Counts this review's changes.
    pub revision: u64,
    /// The editor windows now showing it.
    pub delivered_to: Vec<DeliveredTo>,
    pub references: ReferenceReport,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DeliveredTo {
    pub editor: String,
    #[serde(rename = "editorId", skip_serializing_if = "Option::is_none")]
    pub editor_id: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReferenceReport {
    /// How many references resolved to an existing file and line.
    pub resolved: usize,
    /// References that point nowhere, with the reason.
    pub unresolved: Vec<UnresolvedReference>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct UnresolvedReference {
    /// The reference as written.
    pub reference: String,
    pub problem: String,
}

#[tool_router(router = review_tools, vis = "pub(super)")]
impl ParleyMcp {
    #[tool(
        description = "Show a markdown review in the review panel of every editor window on its folder (and of windows that open later). Write clear sections and actionable points; reference code as [`filename:line`][] (rustdoc-style): the result lists references that do not resolve.",
        title = "Present review",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn present_review(
        &self,
        Parameters(mut args): Parameters<PresentReviewArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<PresentReviewResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let presentation = args.presentation()?;
        let base = self.base_dir(args.base_uri.as_deref())?;
        let client = context.client_info().map(|info| info.name).filter(|name| !name.trim().is_empty());
        let source = crate::reviews::Source::Agent { client };
        let committed = reviews::present(&self.context, &base, &presentation, source).await?;
        Ok(Json(present_result(committed.review, committed.delivered_to)))
    }
}

impl ParleyMcp {
    /// The folder references resolve against: `baseUri` when given (relative
    /// to the agent's working directory), else the agent's workspace.
    pub(super) fn base_dir(&self, base_uri: Option<&str>) -> Result<PathBuf, String> {
        let base = match base_uri.filter(|b| !b.trim().is_empty()) {
            Some(uri) => {
                let path = workspace::path_from_uri(uri.trim());
                let cwd = self.agent.cwd.clone().unwrap_or_else(|| PathBuf::from("/"));
                workspace::real(&path, &cwd)
            }
            None => self.workspace().ok_or(
                "baseUri is required here: this agent's working directory is unknown. Pass the absolute folder your references are relative to",
            )?,
        };
        if !base.is_dir() {
            return Err(format!(
                "baseUri {} is not a directory; pass the folder your file references are relative to",
                base.display()
            ));
        }
        Ok(base)
    }
}

fn present_result(review: Review, delivered: Vec<crate::state::Delivery>) -> PresentReviewResult {
    let unresolved: Vec<UnresolvedReference> = review
        .references
        .iter()
        .filter_map(|r| {
            r.problem
                .as_ref()
                .map(|problem| UnresolvedReference { reference: r.found.text.clone(), problem: problem.clone() })
        })
        .collect();
    let resolved = review.references.len() - unresolved.len();
    let shown = match delivered.len() {
        0 => format!(
            "Review stored for {}, but no editor window on that folder is connected, so nobody is looking at it yet; it appears when one connects (or run `parley watch`).",
            review.base.display()
        ),
        1 => "Review displayed in 1 editor window.".to_owned(),
        n => format!("Review displayed in {n} editor windows."),
    };
    let message = match unresolved.len() {
        0 => shown,
        n => format!("{shown} {n} reference(s) did not resolve; see references.unresolved."),
    };
    PresentReviewResult {
        success: true,
        message,
        base_uri: review.base.display().to_string(),
        revision: review.revision,
        delivered_to: delivered.into_iter().map(|d| DeliveredTo { editor: d.name, editor_id: d.editor_id }).collect(),
        references: ReferenceReport { resolved, unresolved },
    }
}
