//! Which pull request a workspace's branch is: given as `OWNER/REPO#N` (or
//! the pull request's URL), or found with `gh pr view` on the branch.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::auth::gh;

/// A pull request by its repository and number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PullRequestRef {
    pub owner: String,
    pub repo: String,
    pub number: u64,
}

impl fmt::Display for PullRequestRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}#{}", self.owner, self.repo, self.number)
    }
}

const FORMS: &str =
    "give it as OWNER/REPO#NUMBER or as the pull request's URL (https://github.com/OWNER/REPO/pull/NUMBER)";

impl FromStr for PullRequestRef {
    type Err = String;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let given = given.trim();
        let bad = |why: &str| format!("`{given}` is not a pull request: {why}; {FORMS}");
        let (repository, number) = if let Some((_, rest)) = given.split_once("://") {
            // https://HOST/OWNER/REPO/pull/N[/files…]
            let mut parts = rest.split('/').skip(1);
            let (owner, repo, pull, number) = (parts.next(), parts.next(), parts.next(), parts.next());
            match (owner, repo, pull, number) {
                (Some(owner), Some(repo), Some("pull" | "pulls"), Some(number)) => {
                    (format!("{owner}/{repo}"), number.split(['?', '#']).next().unwrap_or(number).to_owned())
                }
                _ => return Err(bad("the URL is not a pull request's")),
            }
        } else {
            let (repository, number) = given.split_once('#').ok_or_else(|| bad("no `#NUMBER`"))?;
            (repository.to_owned(), number.to_owned())
        };
        let (owner, repo) = repository.split_once('/').ok_or_else(|| bad("no `OWNER/`"))?;
        let valid = |name: &str| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        if !valid(owner) || !valid(repo) || repo.contains('/') {
            return Err(bad("the owner or repository name is not one GitHub allows"));
        }
        let number = number.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| bad("the number is not a number"))?;
        Ok(PullRequestRef { owner: owner.to_owned(), repo: repo.trim_end_matches(".git").to_owned(), number })
    }
}

/// What `gh pr view` says of the branch checked out in `workspace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundByGh {
    pub pull_request: PullRequestRef,
    pub url: String,
    pub head_oid: String,
}

/// The pull request of the branch checked out in `workspace`, by `gh pr
/// view --json number,url,headRefOid`; why not, when `gh` is missing, not
/// logged in or finds none.
pub async fn find_with_gh(workspace: &Path) -> Result<FoundByGh, String> {
    let output = gh(&["pr", "view", "--json", "number,url,headRefOid"], Some(workspace)).await?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return Err(format!("gh found no pull request for this branch ({said})"));
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct View {
        number: u64,
        url: String,
        head_ref_oid: String,
    }
    let view: View = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("gh pr view answered something Parley cannot read: {e}"))?;
    let pull_request: PullRequestRef = view.url.parse()?;
    if pull_request.number != view.number {
        return Err(format!("gh pr view gave number {} for {}", view.number, view.url));
    }
    Ok(FoundByGh { pull_request, url: view.url, head_oid: view.head_ref_oid })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(given: &str) -> Result<String, String> {
        given.parse::<PullRequestRef>().map(|r| r.to_string())
    }

    #[test]
    fn the_forms_a_person_copies_are_read() {
        assert_eq!(parsed("octo/hello-world#12"), Ok("octo/hello-world#12".into()));
        assert_eq!(parsed(" octo/hello.rs#3 "), Ok("octo/hello.rs#3".into()));
        assert_eq!(parsed("https://github.com/octo/hello/pull/7"), Ok("octo/hello#7".into()));
        assert_eq!(parsed("https://github.com/octo/hello/pull/7/files?w=1"), Ok("octo/hello#7".into()));
        assert_eq!(parsed("https://ghe.example/team/app/pull/41#discussion_r1"), Ok("team/app#41".into()));
    }

    #[test]
    fn anything_else_says_which_forms_work() {
        for bad in ["octo/hello", "hello#3", "octo/hello#x", "octo/hello#0", "a/b/c#1", "https://github.com/octo/hello"]
        {
            let error = parsed(bad).expect_err(bad);
            assert!(error.contains("OWNER/REPO#NUMBER"), "{bad}: {error}");
        }
    }
}
