//! The hub methods of walkthroughs: `walkthrough/list`, `walkthrough/get`
//! and `walkthrough/act` (a person clicks an action).

use parley_protocol::jsonrpc::ErrorObject;
use parley_protocol::methods as wire;

use super::{Peer, errors};

pub async fn list(
    _peer: &Peer<'_>,
    _p: wire::WalkthroughListParams,
) -> Result<wire::WalkthroughListResult, ErrorObject> {
    Err(errors::invalid("walkthroughs are not stored by this build yet"))
}

pub async fn get(_peer: &Peer<'_>, _p: wire::WalkthroughGetParams) -> Result<wire::WalkthroughGetResult, ErrorObject> {
    Err(errors::invalid("walkthroughs are not stored by this build yet"))
}

pub async fn act(_peer: &Peer<'_>, _p: wire::WalkthroughActParams) -> Result<wire::WalkthroughActResult, ErrorObject> {
    Err(errors::invalid("walkthroughs are not stored by this build yet"))
}
