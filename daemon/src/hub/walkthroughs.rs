//! The hub methods of walkthroughs: `walkthrough/list`, `walkthrough/get`,
//! `walkthrough/act` (a person clicks an action) and `walkthrough/resend`
//! (a click sent on to another agent).

use std::path::{Path, PathBuf};

use parley_protocol::hello::Role;
use parley_protocol::jsonrpc::{ErrorObject, code};
use parley_protocol::methods as wire;

use super::{Peer, errors};
use crate::usecases::walkthroughs::{self, WalkthroughError};
use crate::views;

impl From<WalkthroughError> for ErrorObject {
    fn from(error: WalkthroughError) -> Self {
        let code = match &error {
            WalkthroughError::Invalid(_) => code::INVALID_PARAMS,
            WalkthroughError::NotFound(_) => code::NOT_FOUND,
            WalkthroughError::Store(_) => code::STORE_FAILED,
            WalkthroughError::Stopped => code::SHUTTING_DOWN,
        };
        ErrorObject::new(code, error.to_string())
    }
}

pub async fn list(peer: &Peer<'_>, p: wire::WalkthroughListParams) -> Result<wire::WalkthroughListResult, ErrorObject> {
    let found = walkthroughs::list(peer.cx, folders(peer, p.workspace)?).await?;
    Ok(wire::WalkthroughListResult { walkthroughs: found.iter().map(views::walkthrough_summary).collect() })
}

pub async fn get(peer: &Peer<'_>, p: wire::WalkthroughGetParams) -> Result<wire::WalkthroughGetResult, ErrorObject> {
    let folders = folders(peer, p.workspace)?;
    let found = walkthroughs::get(peer.cx, p.id.as_deref(), folders, p.revision).await?;
    Ok(wire::WalkthroughGetResult { walkthrough: found.as_ref().map(views::walkthrough) })
}

pub async fn act(peer: &Peer<'_>, p: wire::WalkthroughActParams) -> Result<wire::WalkthroughActResult, ErrorObject> {
    let author = p.author.unwrap_or_else(crate::config::user_name);
    let (walkthrough, click) = walkthroughs::act(peer.cx, &p.id, p.block_index, author).await?;
    Ok(wire::WalkthroughActResult {
        walkthrough: views::walkthrough(&walkthrough),
        click: views::click(&walkthrough, &click),
    })
}

pub async fn resend(
    peer: &Peer<'_>,
    p: wire::WalkthroughResendParams,
) -> Result<wire::WalkthroughActResult, ErrorObject> {
    let (walkthrough, click) = walkthroughs::resend(peer.cx, &p.id, p.click_id.as_deref(), &p.agent).await?;
    Ok(wire::WalkthroughActResult {
        walkthrough: views::walkthrough(&walkthrough),
        click: views::click(&walkthrough, &click),
    })
}

/// The folders a read covers: the one named (absolute), else an editor's
/// workspaces, else (the CLI) every folder.
fn folders(peer: &Peer<'_>, workspace: Option<PathBuf>) -> Result<Option<Vec<PathBuf>>, ErrorObject> {
    Ok(match (workspace, peer.role) {
        (Some(folder), _) if !folder.is_absolute() => {
            return Err(errors::invalid(format!("workspace {} must be an absolute path", folder.display())));
        }
        (Some(folder), _) => Some(vec![crate::workspace::real(&folder, Path::new("/"))]),
        (None, Role::Editor) => Some(peer.facts.workspaces.clone()),
        (None, _) => None,
    })
}
