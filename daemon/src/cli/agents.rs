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
    say!("{:<12} {:<24} {:<26} {:<20} WORKSPACE", "NAME", "HOST", "DOING", "SINCE");
    for agent in agents {
        let host = format!("{} {}", agent.host, agent.host_version);
        let doing = match (&agent.waiting_in, &agent.last_call) {
            (Some(tool), _) => format!("waiting in {tool}"),
            (None, Some(tool)) => format!("last called {tool}"),
            (None, None) => "idle".into(),
        };
        let since = agent.since.get(..19).unwrap_or(&agent.since).replace('T', " ");
        let workspace = agent.workspace.as_ref().map_or("?".into(), |w| w.display().to_string());
        say!("{:<12} {:<24} {:<26} {:<20} {workspace}", agent.name, host, doing, since);
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
        say!("{:<12} {}", "", notes.join("; "));
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
            let choose =
                if agent.is_none() { " (choose one with --agent NAME; `parley agents` lists them)" } else { "" };
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
    say!(
        "Asked {} about {}:{}-{} in thread {} ({}).",
        asked.agent,
        t.path,
        t.range.start.line + 1,
        t.range.end.line + 1,
        t.id,
        delivery_words(&asked.delivery)
    );
    say!("Its answer arrives in the thread: `parley feedback list` shows it.");
    Ok(0)
}
