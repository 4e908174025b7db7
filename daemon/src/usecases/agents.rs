//! Agents at work and a person's word delivered to one: the registry's use
//! cases (an agent's MCP connection comes, says who its host is, calls
//! tools, waits, goes), the listing, asking a chosen agent about lines of a
//! file, sending a thread's message to another agent, and handing an agent
//! its waiting messages (at the end of a tool answer, in the answer of a
//! call it waits in, on its host's push channel, or to a host hook), with
//! each message's receipt kept on its thread.

use std::path::{Path, PathBuf};

use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::{AgentInfo, AgentsListResult, Position, Range};

use super::Context;
use super::feedback::{self as threads, NewThread};
use crate::feedback::{Delivery, DeliveryState, FeedbackError, Thread};
use crate::state::{HostFacts, NewAgent, Stopped, ThreadEdit};
use crate::{limits, workspace};

/// How a message reached its agent, as its receipt says.
pub const VIA_TOOL_ANSWER: &str = "tool-answer";
pub const VIA_WAIT: &str = "wait";
pub const VIA_CHANNEL: &str = "channel";
pub const VIA_HOOK: &str = "hook";
/// Typed into the terminal the agent runs in, as the person confirmed.
pub const VIA_TERMINAL: &str = "terminal";
/// The agent found the thread itself, listing feedback.
pub const VIA_FEEDBACK: &str = "feedback";

/// The longest question a note repeats; the thread holds the whole text.
const NOTE_QUESTION_CHARS: usize = 600;

/// Registers an agent's MCP connection, with its host's ancestry (so an
/// editor can tell which of its terminals runs it).
pub async fn connected(cx: &Context, mut agent: NewAgent) {
    if let Some(host) = agent.host_pid {
        agent.host_ancestors = tokio::task::spawn_blocking(move || crate::ancestry::of(host)).await.unwrap_or_default();
    }
    cx.state.agent_connected(agent).await;
}

/// The host of connection `id` said who it is: answers the agent's name.
pub async fn host_known(cx: &Context, id: u64, host: HostFacts) -> Option<String> {
    cx.state.agent_host(id, host).await.ok().flatten()
}

/// Agent `id`'s workspace is `workspace` (its host's first root).
pub async fn workspace_known(cx: &Context, id: u64, workspace: PathBuf) {
    cx.state.agent_workspace(id, workspace).await;
}

/// Agent `id` started Parley tool `tool`; `waiting` for a call that waits
/// (a review round, a person's verdict).
pub async fn call_started(cx: &Context, id: u64, tool: &str, waiting: bool) {
    cx.state.agent_call(id, Some(tool.to_owned()), waiting).await;
}

/// Agent `id` is no longer waiting in a call.
pub async fn call_ended(cx: &Context, id: u64) {
    cx.state.agent_call(id, None, false).await;
}

/// Agent `id`'s connection ended.
pub async fn left(cx: &Context, id: u64) {
    let stopping = cx.shutdown.stop.is_cancelled() || cx.shutdown.close.is_cancelled();
    cx.state.agent_left(id, stopping).await;
}

/// The agents at work, of the repository holding `folder` only when given.
pub async fn list(cx: &Context, folder: Option<&Path>) -> Result<Vec<AgentInfo>, Stopped> {
    Ok(cx.state.agents(folder.map(Path::to_owned), None).await?.agents)
}

/// [`list`] for a client connection, which is kept up to date from now on
/// (`agents/changed`).
/// Answers the agents absent with messages still waiting for them too.
pub async fn list_and_follow(
    cx: &Context,
    folder: Option<&Path>,
    connection: u64,
) -> Result<AgentsListResult, Stopped> {
    cx.state.agents(folder.map(Path::to_owned), Some(connection)).await
}

/// A person's question about lines of a file, for an agent.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The agent's name; by default the only one on the file's repository.
    pub agent: Option<String>,
    /// The absolute file.
    pub file: PathBuf,
    /// Zero-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub message: String,
    pub author: String,
}

/// Asks an agent about lines of a file: picks the agent, opens a thread on
/// the lines addressed to it, and leaves the question waiting for it (its
/// connection is told at once, and takes it by the first path that reaches
/// it). Answers the thread, the agent and the question's delivery.
pub async fn ask(cx: &Context, ask: Ask) -> Result<(Thread, String, Delivery), FeedbackError> {
    if ask.message.trim().is_empty() {
        return Err(FeedbackError::Invalid("the question is empty: say what you want to ask the agent".into()));
    }
    limits::check("the question", &ask.message).map_err(FeedbackError::Invalid)?;
    if ask.end_line < ask.start_line {
        return Err(FeedbackError::Invalid(format!(
            "line {} is before line {}: give the first line, then the last",
            ask.end_line + 1,
            ask.start_line + 1
        )));
    }
    if !tokio::fs::metadata(&ask.file).await.is_ok_and(|m| m.is_file()) {
        return Err(FeedbackError::Invalid(format!(
            "{} is not a file: give the path of an existing file",
            ask.file.display()
        )));
    }
    let agents = list(cx, None).await?;
    let agent = choose(&agents, ask.agent.as_deref(), &ask.file)?;
    let scope = agent.workspace.clone().unwrap_or_else(|| repository_of(&ask.file));
    if !workspace::holds(&scope, &ask.file) {
        return Err(FeedbackError::Invalid(format!(
            "{} is outside {}'s workspace {}: ask about a file inside it",
            ask.file.display(),
            agent.name,
            scope.display()
        )));
    }
    let new = NewThread {
        file: ask.file,
        workspace: Some(scope),
        range: Range {
            start: Position { line: ask.start_line, character: 0 },
            // Past the end of the line: creating clamps it to the line's end.
            end: Position { line: ask.end_line, character: u32::MAX },
        },
        encoding: PositionEncoding::Utf8,
        expected_text: None,
        body: ask.message,
        author: ask.author,
        finding: None,
        ask: Some(agent.name.clone()),
        opened_by: None,
        walkthrough: None,
        synced: None,
    };
    let thread = threads::create(cx, new).await?;
    let delivery = thread.standing.deliveries.last().cloned().ok_or(FeedbackError::NotFound)?;
    Ok((thread, agent.name.clone(), delivery))
}

/// The agent a question goes to: the one named (which must be at work),
/// else the only one working on the repository holding `file`.
fn choose<'a>(agents: &'a [AgentInfo], named: Option<&str>, file: &Path) -> Result<&'a AgentInfo, FeedbackError> {
    let names =
        |agents: &mut dyn Iterator<Item = &AgentInfo>| agents.map(|a| a.name.as_str()).collect::<Vec<_>>().join(", ");
    if let Some(named) = named {
        return agents.iter().find(|a| a.name == named).ok_or_else(|| {
            FeedbackError::UnknownId(match agents.is_empty() {
                true => format!("no agent named {named} is at work, nor any other: start the agent first"),
                false => {
                    format!("no agent named {named} is at work; the agents at work are {}", names(&mut agents.iter()))
                }
            })
        });
    }
    let repository = repository_of(file);
    let on_it: Vec<&AgentInfo> = agents
        .iter()
        .filter(|a| a.workspace.as_ref().is_some_and(|w| workspace::holds(w, file) || workspace::holds(&repository, w)))
        .collect();
    match on_it.as_slice() {
        [one] => Ok(one),
        [] if agents.is_empty() => Err(FeedbackError::Invalid(format!(
            "no agent is at work: start one in {} (an agent appears once its host starts parley-mcp)",
            repository.display()
        ))),
        [] => Err(FeedbackError::Invalid(format!(
            "no agent is at work on {}; the agents at work elsewhere are {}: name one of them",
            repository.display(),
            names(&mut agents.iter())
        ))),
        several => Err(FeedbackError::Invalid(format!(
            "{} agents are at work on {}: {}; name one to ask",
            several.len(),
            repository.display(),
            names(&mut several.iter().copied())
        ))),
    }
}

/// The git root (or folder) holding `file`.
fn repository_of(file: &Path) -> PathBuf {
    workspace::root_of(file.parent().unwrap_or(Path::new("/")))
}

/// Sends thread `thread_id`'s newest unanswered message to `agent` instead
/// (an agent that has gone, say): it waits for the new one.
pub async fn resend(cx: &Context, thread_id: &str, agent: &str) -> Result<(Thread, Delivery), FeedbackError> {
    let agents = list(cx, None).await?;
    let chosen = choose(&agents, Some(agent), Path::new("/"))?;
    let id = super::ids::thread(cx, thread_id, None).await?;
    let thread = cx.state.edit_thread(id, ThreadEdit::Resend { agent: chosen.name.clone() }).await?;
    let delivery = thread
        .standing
        .deliveries
        .iter()
        .rev()
        .find(|d| d.agent == chosen.name)
        .cloned()
        .ok_or(FeedbackError::NotFound)?;
    Ok((thread, delivery))
}

/// A thread's waiting message, about to be typed into the terminal its
/// agent runs in (the person confirmed it in the editor): marks it
/// delivered by `terminal` and answers the thread, the agent and the one
/// line to type. With `preview`, only answers them, marking nothing (what
/// the person is shown to confirm). Refused when no message of the thread
/// waits, or its agent is not at work (it has no terminal to type into).
pub async fn typed(cx: &Context, thread_id: &str, preview: bool) -> Result<(Thread, String, String), FeedbackError> {
    let id = super::ids::thread(cx, thread_id, None).await?;
    let thread = cx.state.thread(id.clone()).await?.ok_or(FeedbackError::NotFound)?;
    let Some(waiting) = thread.standing.deliveries.iter().rev().find(|d| d.state == DeliveryState::Waiting) else {
        return Err(FeedbackError::Invalid(format!(
            "no message in thread {} waits for an agent: ask the agent first, or reply in the thread",
            thread.id
        )));
    };
    let agent = waiting.agent.clone();
    let agents = list(cx, None).await?;
    if !agents.iter().any(|a| a.name == agent) {
        return Err(FeedbackError::Invalid(format!(
            "{agent} is not at work, so it has no terminal to type into: send the message to another agent"
        )));
    }
    if preview {
        let waiting: Vec<(Thread, String)> = thread
            .standing
            .deliveries
            .iter()
            .filter(|d| d.agent == agent && d.state == DeliveryState::Waiting)
            .map(|d| (thread.clone(), d.comment_id.clone()))
            .collect();
        let text =
            waiting.iter().map(|(thread, comment)| one_line(&note(thread, comment))).collect::<Vec<_>>().join(" ");
        return Ok((thread, agent, text));
    }
    let taken = cx.state.take_thread_messages(agent.clone(), id, VIA_TERMINAL).await?;
    let Some((thread, _)) = taken.first().cloned() else {
        return Err(FeedbackError::Invalid(format!(
            "no message in thread {} waits for {agent} any more: it was delivered meanwhile",
            thread.id
        )));
    };
    let text = taken.iter().map(|(thread, comment)| one_line(&note(thread, comment))).collect::<Vec<_>>().join(" ");
    Ok((thread, agent, text))
}

/// `text` made safe to type into a terminal as one line: every run of
/// whitespace (a newline would submit it early) and every control
/// character (an escape sequence, a Ctrl-C) becomes one space.
pub fn one_line(text: &str) -> String {
    let spaced: String = text.chars().map(|c| if c.is_control() || c.is_whitespace() { ' ' } else { c }).collect();
    spaced.split(' ').filter(|word| !word.is_empty()).collect::<Vec<_>>().join(" ")
}

/// A message handed to an agent: a person's word in a thread, or a click
/// of one of its walkthroughs' actions.
#[derive(Debug, Clone)]
pub struct Message {
    pub thread_id: Option<String>,
    pub comment_id: Option<String>,
    pub walkthrough_id: Option<String>,
    pub click_id: Option<String>,
    /// The note the agent reads.
    pub text: String,
}

/// Hands `agent` every message waiting for it, marked delivered `via`.
pub async fn take(cx: &Context, agent: &str, via: &'static str) -> Vec<Message> {
    let taken = cx.state.take_messages(agent.to_owned(), via).await.unwrap_or_default();
    let comments = taken.comments.iter().map(|(thread, comment)| Message {
        thread_id: Some(thread.id.clone()),
        comment_id: Some(comment.clone()),
        walkthrough_id: None,
        click_id: None,
        text: note(thread, comment),
    });
    let clicks = taken.clicks.iter().map(|(walkthrough, click)| Message {
        thread_id: None,
        comment_id: None,
        walkthrough_id: Some(walkthrough.id.clone()),
        click_id: Some(click.clone()),
        text: click_note(walkthrough, click),
    });
    comments.chain(clicks).collect()
}

/// What an agent is told of a click: who clicked which button of which
/// walkthrough (another agent's, when the click was sent on to it), and
/// the action's message.
pub fn click_note(walkthrough: &crate::walkthrough::Walkthrough, click_id: &str) -> String {
    let Some((index, button, message, click)) = walkthrough.clicks().find(|(_, _, _, c)| c.id == click_id) else {
        return format!("a person clicked an action of the walkthrough \"{}\"", walkthrough.title);
    };
    let whose = match walkthrough.agent_of(click) == walkthrough.presented_by {
        true => format!("your walkthrough \"{}\"", walkthrough.title),
        false => {
            format!("the walkthrough \"{}\" {} presented (sent on to you)", walkthrough.title, walkthrough.presented_by)
        }
    };
    format!(
        "{} clicked \"{button}\" in {whose} (walkthrough {}, block {index}): {message}",
        click.author, walkthrough.id
    )
}

/// A hook asks for the messages of its agent: the agent whose host is the
/// first of `hosts` (the hook's parent, then its ancestors) that is any
/// agent's host, else the only agent working on the repository holding
/// `cwd`. Answers the agent found and its messages, marked delivered by
/// `hook`.
pub async fn take_for_hook(
    cx: &Context,
    hosts: &[u32],
    cwd: Option<&Path>,
) -> Result<(Option<String>, Vec<Message>), Stopped> {
    let agents = list(cx, None).await?;
    let host = hosts.iter().find(|pid| agents.iter().any(|a| a.host_pid == Some(**pid)));
    let by_host: Vec<&AgentInfo> = agents.iter().filter(|a| host.is_some() && a.host_pid == host.copied()).collect();
    let found = match (by_host.as_slice(), cwd) {
        ([one], _) => Some(one.name.clone()),
        ([], Some(cwd)) => {
            let repository = workspace::root_of(cwd);
            let there: Vec<&AgentInfo> = agents
                .iter()
                .filter(|a| {
                    a.workspace.as_ref().is_some_and(|w| workspace::holds(w, cwd) || workspace::holds(&repository, w))
                })
                .collect();
            match there.as_slice() {
                [one] => Some(one.name.clone()),
                _ => None,
            }
        }
        _ => None,
    };
    let Some(agent) = found else { return Ok((None, Vec::new())) };
    let messages = take(cx, &agent, VIA_HOOK).await;
    Ok((Some(agent), messages))
}

/// `agent` read threads `ids` (listed them with get_feedback).
pub async fn read(cx: &Context, agent: &str, ids: Vec<String>) {
    if !ids.is_empty() {
        cx.state.advance_deliveries(agent.to_owned(), ids, DeliveryState::Read, Some(VIA_FEEDBACK)).await;
    }
}

/// `agent` replied in thread `id` (or resolved it).
pub async fn answered(cx: &Context, agent: &str, id: &str) {
    let id = match super::ids::thread(cx, id, None).await {
        Ok(id) => id,
        Err(_) => return,
    };
    cx.state.advance_deliveries(agent.to_owned(), vec![id], DeliveryState::Answered, Some(VIA_TOOL_ANSWER)).await;
}

/// What an agent is told of a message: who asks, where, in which thread,
/// the question, and how to answer. The thread holds the text it is on.
pub fn note(thread: &Thread, comment_id: &str) -> String {
    let comment = thread.comments.iter().find(|c| c.id == comment_id);
    let (author, body) = comment.map_or(("a person", ""), |c| (c.author.as_str(), c.body.as_str()));
    let mut question: String = body.chars().take(NOTE_QUESTION_CHARS).collect();
    if question.len() < body.len() {
        question.push_str(" […]");
    }
    let (first, last) = (thread.span.start_line + 1, thread.span.end_line + 1);
    let lines = if first == last { format!("{first}") } else { format!("{first}-{last}") };
    let first_comment = thread.comments.first().is_some_and(|c| c.id == comment_id);
    let what = if first_comment { "asks you about" } else { "wrote in the thread on" };
    format!(
        "{author} {what} {}:{lines} (thread {}): {question}\nAnswer with reply_feedback (threadId {}); get_feedback shows the thread.",
        thread.path, thread.id, thread.id
    )
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn a_line_to_type_has_no_line_breaks_nor_anything_a_terminal_acts_on() {
        assert_eq!(one_line("Why?\nAnswer with reply_feedback."), "Why? Answer with reply_feedback.");
        assert_eq!(one_line("a\r\n\tb \u{1b}[2Jc\u{7}\u{3}d\u{9b}e"), "a b [2Jc d e");
        assert_eq!(one_line("  spaced   out  "), "spaced out");
        assert_eq!(one_line("naïve café"), "naïve café");
    }
}
