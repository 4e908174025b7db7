//! `parley agents` and `parley ask`: the agents at work, and a person's
//! question to a chosen one about lines of a file.

use anyhow::{Context as _, bail};
use parley_protocol::methods as wire;
use serde_json::json;

use super::cli_opening;
use super::client::HubClient;
use super::feedback::{at_work, delivery_words, parse_location};
use super::shown::say;
use crate::workspace;

async fn client() -> anyhow::Result<HubClient> {
    HubClient::open(&cli_opening(true)).await?.context("no daemon is running")
}

/// `parley agents [--json]`: every agent at work, wherever it works.
pub async fn list(json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let listed = at_work(&mut client).await.context("cannot list the agents at work")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(0);
    }
    let agents = &listed.agents;
    if agents.is_empty() {
        say!("No agent is at work: an agent appears here once its host starts parley-mcp.");
    } else {
        print_agents(agents);
    }
    for absent in &listed.absent {
        say!(
            "{} is not at work; your message waits for it in thread(s) {}: `parley ask --resend THREAD --agent NAME` sends one to another agent",
            absent.name,
            absent.threads.join(", ")
        );
    }
    Ok(0)
}

fn print_agents(agents: &[parley_protocol::methods::AgentInfo]) {
    let rows: Vec<[String; 5]> = agents
        .iter()
        .map(|agent| {
            let doing = match (&agent.waiting_in, &agent.last_call) {
                (Some(tool), _) => format!("waiting in {tool}"),
                (None, Some(tool)) => format!("last called {tool}"),
                (None, None) => "idle".into(),
            };
            [
                agent.name.clone(),
                format!("{} {}", agent.host, agent.host_version),
                doing,
                agent.since.get(..19).unwrap_or(&agent.since).replace('T', " "),
                agent.workspace.as_ref().map_or("?".into(), |w| w.display().to_string()),
            ]
        })
        .collect();
    let header = ["NAME", "HOST", "DOING", "SINCE", "WORKSPACE"].map(str::to_owned);
    // Each column as wide as its widest cell, so a long host or call name
    // never pushes the columns after it out of line.
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 5]| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        padded.join("  ").trim_end().to_owned()
    };
    say!("{}", line(&header));
    for (agent, row) in agents.iter().zip(&rows) {
        say!("{}", line(row));
        let mut notes = Vec::new();
        if agent.messages_waiting > 0 {
            notes.push(format!("{} message(s) waiting for it", agent.messages_waiting));
        }
        if agent.channel {
            notes.push("its host takes messages at once".to_owned());
        }
        if let Some(pid) = agent.host_pid {
            notes.push(format!("host pid {pid}"));
        }
        say!("{:<width$}  {}", "", notes.join("; "), width = widths[0]);
    }
}

/// `parley ask [--agent NAME] FILE:LINE[-LINE] MESSAGE`.
pub async fn ask(agent: Option<String>, location: &str, message: &str, json: bool) -> anyhow::Result<i32> {
    let (file, first, last) = parse_location(location)?;
    let cwd = std::env::current_dir()?;
    let given = workspace::absolute(&file, &cwd);
    if !given.is_file() {
        bail!("{} is not a file: give FILE:LINE with the path of an existing file", given.display());
    }
    let file = workspace::real(&given, &cwd);
    if message.trim().is_empty() {
        bail!("the question is empty: say what you want to ask, e.g. parley ask {location} \"Why is this retried?\"");
    }
    let mut client = client().await?;
    let params = json!({
        "agent": agent, "path": file, "start_line": first - 1, "end_line": last - 1,
        "message": message, "author": crate::config::user_name(),
    });
    let asked: wire::AgentAskResult = match client.call(wire::AGENT_ASK, params).await {
        Ok(asked) => asked,
        Err(e) => {
            // The daemon says to name an agent when several (or only others)
            // are at work: at the terminal, that is --agent.
            let choose = agent.is_none() && format!("{e:#}").contains("name one");
            let choose = if choose { " (choose one with --agent NAME; `parley agents` lists them)" } else { "" };
            return Err(e.context(format!("cannot ask about {location}{choose}")));
        }
    };
    print_asked(&asked, json)
}

/// `parley ask --resend THREAD --agent NAME`.
pub async fn resend(thread: &str, agent: &str, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let asked: wire::AgentAskResult = client
        .call(wire::AGENT_RESEND, json!({ "thread_id": thread, "agent": agent }))
        .await
        .with_context(|| format!("cannot send thread {thread}'s message to {agent}"))?;
    print_asked(&asked, json)
}

fn print_asked(asked: &wire::AgentAskResult, json: bool) -> anyhow::Result<i32> {
    if json {
        println!("{}", serde_json::to_string_pretty(asked)?);
        return Ok(0);
    }
    let t = &asked.thread;
    let (first, last) = (t.range.start.line + 1, t.range.end.line + 1);
    let lines = if first == last { first.to_string() } else { format!("{first}-{last}") };
    say!("Asked {} about {}:{lines} in thread {} ({}).", asked.agent, t.path, t.id, delivery_words(&asked.delivery));
    say!("Its answer arrives in the thread: `parley feedback list` shows it.");
    Ok(0)
}
