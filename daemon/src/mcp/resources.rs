//! The resources: the workspace's current review (`parley://review`), its
//! feedback threads (`parley://feedback`), the review's kept revisions
//! (`parley://review/history`) and one of them (`parley://review/{revision}`).
//! Subscribing to the first two is `subscriptions.rs`'s.

use rmcp::ErrorData;
use rmcp::model::{ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use rmcp::service::{RequestContext, RoleServer};

use super::subscriptions::{self, FEEDBACK_RESOURCE, REVIEW_RESOURCE};
use super::{ParleyMcp, author_of, errors, feedback};
use crate::usecases::{feedback as threads, reviews};

/// The kept revisions of the workspace's review, newest first, as JSON.
const REVIEW_HISTORY_RESOURCE: &str = "parley://review/history";
/// One kept revision of the workspace's review, as markdown.
const REVIEW_REVISION_TEMPLATE: &str = "parley://review/{revision}";

/// The resources `resources/list` shows.
pub(super) fn list() -> Vec<Resource> {
    vec![
        Resource::new(REVIEW_RESOURCE, "review")
            .with_title("Current review")
            .with_description("The review presented for this workspace, as markdown")
            .with_mime_type("text/markdown"),
        Resource::new(FEEDBACK_RESOURCE, "feedback")
            .with_title("Feedback threads")
            .with_description("The open feedback threads of this workspace, as get_feedback returns them")
            .with_mime_type("application/json"),
        Resource::new(REVIEW_HISTORY_RESOURCE, "review-history")
            .with_title("Review history")
            .with_description(
                "The kept revisions of this workspace's review (the last 100), newest first: each one's revision, \
                 time, title and who made it (an agent's present_review, or a review round). Read one as \
                 parley://review/{revision}.",
            )
            .with_mime_type("application/json"),
    ]
}

/// The resource templates `resources/templates/list` shows.
pub(super) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(REVIEW_REVISION_TEMPLATE, "review-revision")
            .with_title("Review revision")
            .with_description(
                "One kept revision of this workspace's review, as markdown, e.g. an agent's walkthrough that a \
                 review round's review replaced; parley://review/history lists them",
            )
            .with_mime_type("text/markdown"),
    ]
}

/// The resource `uri` names, or an error listing those Parley offers.
pub(super) fn offered(uri: &str) -> Result<&'static str, ErrorData> {
    subscriptions::resource(uri).ok_or_else(|| {
        ErrorData::resource_not_found(
            format!("no resource {uri}; Parley offers {REVIEW_RESOURCE} and {FEEDBACK_RESOURCE}"),
            None,
        )
    })
}

impl ParleyMcp {
    /// What `resources/read` answers for `uri`.
    pub(super) async fn resource_contents(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let scope = self.scope().map_err(|e| ErrorData::internal_error(e, None))?;
        let text = match uri {
            REVIEW_RESOURCE => {
                let found = reviews::list(&self.context, Some(vec![scope.clone()]))
                    .await
                    .map_err(|e| ErrorData::internal_error(errors::present(e), None))?;
                let review = found.into_iter().next();
                let markdown =
                    review.map_or_else(|| "No review has been presented for this workspace.".to_owned(), |r| r.content);
                ResourceContents::text(markdown, REVIEW_RESOURCE).with_mime_type("text/markdown")
            }
            FEEDBACK_RESOURCE => {
                let found = threads::list_for_agent(&self.context, &scope, None, &author_of(context))
                    .await
                    .map_err(|e| ErrorData::internal_error(errors::feedback(e), None))?;
                // The agent has read the threads: a person's messages in them too.
                if let Some(name) = self.agent.name.get() {
                    let ids = found.iter().map(|t| t.id.clone()).collect();
                    crate::usecases::agents::read(&self.context, name, ids).await;
                }
                let items: Vec<_> = found.into_iter().map(|t| feedback::item(t, &scope)).collect();
                let json = serde_json::to_string_pretty(&items).expect("feedback items always serialize");
                ResourceContents::text(json, FEEDBACK_RESOURCE).with_mime_type("application/json")
            }
            REVIEW_HISTORY_RESOURCE => {
                let found = reviews::history(&self.context, Some(vec![scope.clone()]))
                    .await
                    .map_err(|e| ErrorData::internal_error(errors::present(e), None))?;
                let revisions: Vec<_> = found.iter().map(crate::views::review_revision).collect();
                let json = serde_json::to_string_pretty(&revisions).map_err(|e| {
                    ErrorData::internal_error(format!("the review history did not serialize: {e}"), None)
                })?;
                ResourceContents::text(json, REVIEW_HISTORY_RESOURCE).with_mime_type("application/json")
            }
            other => {
                let Some(revision) = other.strip_prefix("parley://review/").and_then(|n| n.parse::<u64>().ok()) else {
                    return Err(ErrorData::resource_not_found(
                        format!(
                            "no resource {other}; Parley offers {REVIEW_RESOURCE}, {FEEDBACK_RESOURCE}, \
                             {REVIEW_HISTORY_RESOURCE} and {REVIEW_REVISION_TEMPLATE}"
                        ),
                        None,
                    ));
                };
                let review = reviews::revision(&self.context, &scope, revision).await.map_err(|e| match e {
                    reviews::PresentError::NotFound(text) => ErrorData::resource_not_found(text, None),
                    e => ErrorData::internal_error(errors::present(e), None),
                })?;
                ResourceContents::text(review.content, other.to_owned()).with_mime_type("text/markdown")
            }
        };
        Ok(ReadResourceResult::new(vec![text]).into())
    }
}
