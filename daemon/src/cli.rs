//! The `parley` command line: argument parsing and the small commands; the
//! longer ones live in `cli/`.

mod agents;
mod attach;
pub mod client;
mod feedback;
mod hooks;
mod mcp_config;
mod pull_request;
mod review;
mod reviewing;
mod round_page;
mod screen;
mod service;
mod sessions;
mod settings_file;
mod setup;
mod shown;
mod trust;
mod walkthrough;
mod watch;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Parser, Subcommand};
use parley_protocol::hello::Role;
use parley_protocol::methods as wire;
use parley_protocol::socket;
use serde_json::json;

use crate::workspace;
use client::{HubClient, Opening};

/// Parley: where AI coding agents and the humans who work with them talk about code.
#[derive(Debug, Parser)]
#[command(name = "parley", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon in the foreground (agents' shims start it on demand).
    Daemon {
        /// As Windows starts it at logon (`parley service install`): the saved environment, no console, the log
        /// in a file beside the pipe.
        #[arg(long)]
        logon: bool,
    },
    /// Show whether the daemon runs, its version, connections and workspaces.
    Status {
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Stop the daemon cleanly.
    Stop,
    /// Print the socket path clients connect to.
    SocketPath,
    /// Relay one hub connection over stdin and stdout, for an editor that cannot reach the socket (WSL, remote).
    ///
    /// Starts the daemon when none runs. The client speaks the hub protocol
    /// exactly as over the socket, its own `hello` first; the relay ends when
    /// stdin closes or the daemon closes the connection.
    Attach {
        /// Relay over standard input and output (the only way there is).
        #[arg(long)]
        stdio: bool,
    },
    /// Reviews presented by agents.
    Review {
        #[command(subcommand)]
        command: ReviewCommand,
    },
    /// Feedback threads on code: add, list, reply, resolve.
    Feedback {
        #[command(subcommand)]
        command: FeedbackCommand,
    },
    /// What waits on you: review rounds agents asked of a person, and threads
    /// waiting for your answer, newest first, across every repository.
    Inbox {
        /// Only what concerns the repository holding this folder.
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// An agent's walkthroughs of its change: `show` one, `list` them all, `act` on a button, `resend` a click to
    /// another agent, `export` one as a CodeTour.
    Walkthrough {
        #[command(subcommand)]
        command: WalkthroughCommand,
    },
    /// The workspace's GitHub pull request: `link` it, see its `status`, `pull` its review threads in.
    Pr {
        #[command(subcommand)]
        command: PrCommand,
    },
    /// The agents at work: their names, hosts, workspaces, and whether they wait in a Parley call.
    Agents {
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Ask an agent at work about lines of a file: `parley ask src/auth.rs:14-21 "Why is this retried?"`.
    ///
    /// The question becomes a thread on those lines, addressed to the agent,
    /// and reaches it by the first way that does: the end of its next Parley
    /// tool answer, the answer of a call it waits in, its host's channel or
    /// a host hook. `parley feedback list` shows where it stands and the
    /// agent's answer. Without --agent, the only agent at work on the file's
    /// repository is asked.
    #[command(group(clap::ArgGroup::new("what").required(true).args(["location", "resend"])))]
    Ask {
        /// The agent's name, as `parley agents` lists it.
        #[arg(long)]
        agent: Option<String>,
        /// Send this thread's unanswered message to the agent named by --agent instead.
        #[arg(long, value_name = "THREAD", conflicts_with_all = ["location", "message"], requires = "agent")]
        resend: Option<String>,
        /// FILE:LINE or FILE:FIRST-LAST (1-based).
        #[arg(requires = "message")]
        location: Option<String>,
        /// The question.
        message: Option<String>,
        /// Print the thread and the question's delivery as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Review sessions: list them, read a round's review, mark one complete.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Write every review and thread as JSON (to FILE, or stdout).
    Export { file: Option<PathBuf> },
    /// Restore reviews and threads from a JSON export.
    Import { file: PathBuf },
    /// Print the config that connects an agent host to Parley, or merge it into the host's file with --write.
    McpConfig {
        #[arg(value_enum)]
        host: mcp_config::Host,
        /// Add Parley's entry to the host's config file (created if missing; the old one is backed up beside it).
        #[arg(long)]
        write: bool,
        /// The config file to write, instead of the host's usual one (with --write).
        #[arg(long, requires = "write")]
        file: Option<PathBuf>,
        /// Put this shell's PARLEY_SOCKET in a project's entry too (claude-code, vscode: their files are shared, so
        /// they name only the command by default; the other hosts' files are yours and always carry it).
        #[arg(long)]
        socket: bool,
        /// How the host starts the shim: `path` (the parley-mcp installed beside this parley), `npx` (`npx -y
        /// parley-mcp`) or `uvx` (`uvx parley-mcp`); npx and uvx fetch the prebuilt binaries on first use.
        #[arg(long, value_enum, default_value_t)]
        via: mcp_config::Via,
    },
    /// Run the daemon at login: a systemd user service (Linux), a launchd agent (macOS) or the Run key (Windows).
    Service {
        #[command(subcommand)]
        command: service::ServiceCommand,
    },
    /// Check that everything Parley needs is in place, and say how to fix what is not.
    Doctor {
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Trust this repository's .parley.toml, so the commands it names run on review rounds.
    ///
    /// A repository's config can name the reviewer and the test command and
    /// loosen checks; Parley ignores those settings until you trust the file's
    /// exact content, and trust ends when the file changes. Read it first with
    /// `--show`.
    Trust {
        /// Show the file, what it would run and whether you trust it; change nothing.
        #[arg(long, conflicts_with = "revoke")]
        show: bool,
        /// Withdraw your trust in this repository's config.
        #[arg(long)]
        revoke: bool,
        /// The repository (default: the git root holding the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Run one of the hooks agent hosts call (they pass their JSON on stdin): plans reviewed in Parley.
    ///
    /// `parley hooks install` registers them. Input that is not what the host
    /// sends exits 1 with a message on stderr and nothing on stdout, so the
    /// host goes on as if no hook ran.
    Hook {
        #[command(subcommand)]
        hook: hooks::Hook,
    },
    /// Install the hooks that send an agent host's plans to Parley for review.
    Hooks {
        #[command(subcommand)]
        command: HooksCommand,
    },
    /// Print reviews as agents present them (a terminal stand-in for an editor).
    Watch {
        /// The folder to watch (default: the git root holding the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum HooksCommand {
    /// Print Parley's hook entries for a host, or merge them into its settings with --write.
    ///
    /// Claude Code: PermissionRequest and PostToolUse for ExitPlanMode, in
    /// ~/.claude/settings.json (.claude/settings.json at the repository root
    /// with --project). Codex: Stop, in ~/.codex/hooks.json.
    Install {
        #[arg(value_enum)]
        host: hooks::install::HookHost,
        /// The project's shared settings instead of yours (Claude Code only); the command is named, not pathed.
        #[arg(long)]
        project: bool,
        /// Merge the hooks into the settings file (created if missing; the old one is backed up beside it).
        #[arg(long)]
        write: bool,
        /// The settings file to write, instead of the host's usual one (with --write).
        #[arg(long, requires = "write")]
        file: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum FeedbackCommand {
    /// Comment on lines of a file: `parley feedback add src/auth.rs:14-21 "Handle expired tokens"`.
    ///
    /// The thread goes to the workspace holding the current directory (its
    /// git root), and the file must be inside it; to comment on a file
    /// elsewhere, name its workspace with --workspace.
    Add {
        /// FILE:LINE or FILE:FIRST-LAST (1-based).
        location: String,
        /// What you have to say.
        message: String,
        /// Who the comment is from (default: your login name).
        #[arg(long)]
        author: Option<String>,
        /// The workspace the thread goes to, which must hold the file
        /// (default: the git root holding the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print the new thread as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the open threads of the workspace, or of one file.
    List {
        file: Option<PathBuf>,
        /// The folder (default: the git root holding the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Include resolved threads.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Answer a thread.
    Reply {
        #[arg(help = crate::ids::THREAD_ID_HELP)]
        id: String,
        message: String,
        #[arg(long)]
        author: Option<String>,
    },
    /// Mark a thread addressed.
    Resolve {
        #[arg(help = crate::ids::THREAD_ID_HELP)]
        id: String,
    },
    /// Bring a resolved thread back.
    Reopen {
        #[arg(help = crate::ids::THREAD_ID_HELP)]
        id: String,
    },
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// List the review sessions of the repository.
    List {
        /// A folder in the repository (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Show one session with its rounds, or one round's review.
    Show {
        #[arg(help = crate::ids::SESSION_ID_HELP)]
        id: String,
        /// Print this round's review as markdown, as an editor shows it.
        #[arg(long, value_name = "N")]
        round: Option<u32>,
        /// Print JSON for scripts (the session, or the round with --round).
        #[arg(long)]
        json: bool,
    },
    /// Mark a session done: approved, abandoned or merged.
    ///
    /// A session is completed once, and takes no more rounds after.
    #[command(group(clap::ArgGroup::new("final_status").required(true).args(["approved", "abandoned", "merged"])))]
    Complete {
        #[arg(help = crate::ids::SESSION_ID_HELP)]
        id: String,
        /// The change was approved.
        #[arg(long)]
        approved: bool,
        /// The change was given up.
        #[arg(long)]
        abandoned: bool,
        /// The change was merged.
        #[arg(long)]
        merged: bool,
        /// Why, or anything worth keeping with the session.
        #[arg(long, value_name = "TEXT")]
        notes: Option<String>,
        /// Print the completed session as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum WalkthroughCommand {
    /// A walkthrough: its text, each comment with the lines it is on (or why it is not placed), its diffs and buttons.
    Show {
        /// Whole, or a unique beginning of at least 4 characters; without it, the latest of the folder.
        id: Option<String>,
        /// The folder whose latest walkthrough to show (default: the git root holding the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Every walkthrough, newest first.
    List {
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Click a walkthrough's button: its message goes to the agent that presented it.
    Act {
        /// Whole, or a unique beginning of at least 4 characters.
        id: String,
        /// The action block's index, as `parley walkthrough show` prints it in brackets.
        index: usize,
        /// Print the walkthrough and the click as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Send a button's click waiting for an agent (one that has gone) to another agent at work.
    Resend {
        /// Whole, or a unique beginning of at least 4 characters.
        id: String,
        /// The agent at work to send it to, as `parley agents` lists them.
        #[arg(long = "to", value_name = "AGENT")]
        to: String,
        /// The click to send (its id, or a unique beginning of at least 4 characters, as `--json` shows it);
        /// by default the newest click still waiting.
        #[arg(long = "click", value_name = "CLICK_ID")]
        click: Option<String>,
        /// Print the walkthrough and the click as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a walkthrough as a CodeTour `.tour` file: each placed comment a step on its lines.
    Export {
        /// Whole, or a unique beginning of at least 4 characters.
        id: String,
        /// The file to write (such as .tours/login.tour); standard output without it.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum PrCommand {
    /// Link the workspace to its pull request: the one given, or the one `gh pr view` finds for the branch.
    Link {
        /// OWNER/REPO#NUMBER or the pull request's URL; without it, `gh` finds it.
        pull_request: Option<String>,
        /// A folder of the workspace (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// What is linked, what the last sync brought, what it could not place, and the pull request's conversation.
    Status {
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Bring the pull request's review threads in as threads: new ones, replies, resolution, outdated lines.
    Pull {
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Send the threads made here as one review (left pending unless --event), replies, and resolutions;
    /// or, with --review, a review round's verdict and findings as a submitted review.
    Push {
        /// Print what would be sent, and send nothing.
        #[arg(long)]
        dry_run: bool,
        /// Submit the review: comment, approve or request-changes (without it, it is left pending on GitHub;
        /// with --review, it is the person's verdict, or comment for a reviewer command's round).
        #[arg(long, value_parser = ["comment", "approve", "request-changes"])]
        event: Option<String>,
        /// Push this review session's round (its id, number or a unique beginning) as a review: its findings
        /// on their lines, its summary as the body; once per round.
        #[arg(long, value_name = "ID")]
        review: Option<String>,
        /// With --review: this round instead of the last.
        #[arg(long, value_name = "N", requires = "review")]
        round: Option<u32>,
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ReviewCommand {
    /// Ask the configured reviewer to review your changes: the same pipeline
    /// agents run. Exits 0 when approved, 3 when changes are needed, 1 on
    /// errors (2 on bad arguments).
    Request {
        /// What you set out to do and what you did.
        #[arg(long)]
        summary: String,
        /// A design doc the change must follow (repeatable).
        #[arg(long = "doc")]
        docs: Vec<String>,
        /// An area to focus on (repeatable).
        #[arg(long = "focus")]
        focus: Vec<String>,
        /// Continue this session with a new round: its id (2026-11-21-001), its number (001) or a unique
        /// beginning of at least 4 characters.
        #[arg(long, value_name = "ID")]
        previous: Option<String>,
        /// all (default), staged, unstaged, or a base ref / range.
        #[arg(long)]
        scope: Option<String>,
        /// A folder in the repository (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Wait for a review round started elsewhere (by an agent's request_review,
    /// or another terminal) and print it when it is done. Ctrl-C ends only the
    /// wait. Exits as `review request` does.
    Await {
        #[arg(help = crate::ids::SESSION_ID_HELP)]
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Stop the running round of a review session (the reviewer is killed;
    /// nothing of the round is stored).
    Cancel {
        #[arg(help = crate::ids::SESSION_ID_HELP)]
        id: String,
    },
    /// Show a round asked of a person: its diff, numbered on both sides, with
    /// your draft comments (and their severity) and earlier rounds' comments
    /// inline. When no round waits, the last one you answered, to read again.
    ///
    /// On a terminal the diff is coloured and, when taller than the screen,
    /// shown through $PARLEY_PAGER, $PAGER or `less` (with LESS=FRX).
    Diff {
        #[arg(help = crate::ids::SESSION_ID_HELP)]
        id: String,
        /// This round instead: the waiting one, or one a person answered.
        #[arg(long, value_name = "N")]
        round: Option<u32>,
        /// Only what changed since the previous round.
        #[arg(long)]
        since: bool,
        /// Colour: auto (on a terminal, unless NO_COLOR is set), always or never.
        #[arg(long, value_enum, value_name = "WHEN", default_value_t = screen::ColorChoice::Auto)]
        color: screen::ColorChoice,
        #[arg(long)]
        json: bool,
    },
    /// Comment on a line (or lines) of a round asked of a person. The comment
    /// is a draft until you submit the review.
    Comment {
        #[arg(help = crate::ids::SESSION_ID_HELP)]
        id: String,
        /// FILE:LINE or FILE:START-END, as `parley review diff` numbers them.
        place: String,
        /// The comment.
        message: String,
        /// `new` (default) or `old`: the base version's numbering, for removed lines.
        #[arg(long, default_value = "new", value_parser = ["old", "new"])]
        side: String,
        /// Replacement text for those lines.
        #[arg(long = "suggest", value_name = "TEXT")]
        suggestion: Option<String>,
        /// critical, major, minor or suggestion (default: from your verdict).
        #[arg(long, value_parser = ["critical", "major", "minor", "suggestion"])]
        severity: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove one of your draft comments.
    Uncomment {
        #[arg(help = crate::ids::SESSION_ID_HELP)]
        id: String,
        /// The draft's id, such as d2 (`parley review diff` lists them).
        draft: String,
    },
    /// Send your review of a round to the agent waiting for it.
    #[command(group(clap::ArgGroup::new("verdict").required(true).args(["approve", "request_changes", "comment"])))]
    Submit {
        #[arg(help = crate::ids::SESSION_ID_HELP)]
        id: String,
        #[arg(long)]
        approve: bool,
        #[arg(long)]
        request_changes: bool,
        /// Comments without a verdict: the agent is asked to address them.
        #[arg(long)]
        comment: bool,
        /// What you think overall.
        #[arg(short = 'm', long = "message", value_name = "SUMMARY")]
        summary: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Print the current review of a workspace, an older revision, or the list of kept revisions.
    ///
    /// Every revision says who made it: an agent's presented walkthrough, or a
    /// review round's rendered review. The last 100 revisions of each review are kept.
    Show {
        /// The folder (default: the git root holding the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Print this kept revision instead of the current one.
        #[arg(long, value_name = "N", conflicts_with = "history")]
        revision: Option<u64>,
        /// List the kept revisions, newest first, with who made each.
        #[arg(long)]
        history: bool,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
}

/// Parses the arguments, runs the command, returns the exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    if let Command::Daemon { logon } = cli.command {
        if logon && let Err(e) = service::prepare_logon_daemon() {
            return report(Err(e));
        }
        return report(crate::server::run());
    }
    exit_quietly_when_output_closes();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return report(Err(e.into())),
    };
    match runtime.block_on(run(cli.command)) {
        Ok(code) => code,
        Err(e) => report(Err(e)),
    }
}

/// Every command ends quietly, with exit code 0, when its reader goes away
/// (`parley feedback list | head -1`, `parley sessions list | true`).
///
/// Rust ignores SIGPIPE, so `println!` into a pipe nobody reads panics with
/// "failed printing to stdout: Broken pipe". Restoring SIGPIPE's default
/// would end the command silently with 141, but would also kill it without a
/// word when the daemon's socket breaks mid-write (sockets are written with
/// write(2), which raises the signal), so the one panic a closed output
/// raises is caught here instead, for every command at once. Exit code 0, as
/// ripgrep and fd do: the reader stopped because it had what it wanted, and a
/// script under `set -o pipefail` that pipes into `head` keeps working.
fn exit_quietly_when_output_closes() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload.downcast_ref::<String>().map(String::as_str).or(payload.downcast_ref::<&str>().copied());
        if message.is_some_and(is_closed_output) {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Whether a panic message is `print!`'s or `eprint!`'s on a closed pipe.
fn is_closed_output(message: &str) -> bool {
    (message.starts_with("failed printing to stdout") || message.starts_with("failed printing to stderr"))
        && CLOSED_PIPE_CODES.iter().any(|code| message.ends_with(&format!("(os error {code})")))
}

/// The error codes of a write into a pipe closed at the other end.
#[cfg(unix)]
const CLOSED_PIPE_CODES: &[i32] = &[rustix::io::Errno::PIPE.raw_os_error()];
/// `ERROR_BROKEN_PIPE`, `ERROR_NO_DATA` (the pipe is being closed) and
/// `ERROR_PIPE_NOT_CONNECTED` (no process at the other end, as Wine reports
/// a closed Unix pipe).
#[cfg(windows)]
const CLOSED_PIPE_CODES: &[i32] = &[109, 232, 233];

fn report(result: anyhow::Result<()>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(e) => {
            // The daemon's words can quote what agents and repositories said.
            eprintln!("parley: {}", shown::visible(&format!("{e:#}")));
            1
        }
    }
}

async fn run(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Daemon { .. } => unreachable!("handled before the runtime starts"),
        Command::Status { json } => status(json).await,
        Command::Stop => stop().await,
        Command::Attach { stdio } => attach::run(stdio).await,
        Command::SocketPath => {
            println!("{}", socket::socket_path()?.display());
            Ok(0)
        }
        Command::Review { command: ReviewCommand::Show { workspace, revision, history, json } } => {
            let folder = workspace_or_cwd(workspace)?;
            match (revision, history) {
                (_, true) => review::history(&folder, json).await,
                (Some(revision), false) => review::show_revision(&folder, revision, json).await,
                (None, false) => review::show(&folder, json).await,
            }
        }
        Command::Review {
            command: ReviewCommand::Request { summary, docs, focus, previous, scope, workspace, json },
        } => {
            let params = serde_json::json!({
                "workspace": workspace_or_cwd(workspace)?,
                "summary": summary,
                "relevant_docs": docs,
                "focus_areas": focus,
                "scope": scope,
            });
            sessions::request(params, previous, json).await
        }
        Command::Review { command: ReviewCommand::Await { id, json } } => sessions::await_round(&id, json).await,
        Command::Review { command: ReviewCommand::Cancel { id } } => sessions::cancel(&id).await,
        Command::Review { command: ReviewCommand::Diff { id, round, since, color, json } } => {
            reviewing::diff(&id, round, since, json, color).await
        }
        Command::Review {
            command: ReviewCommand::Comment { id, place, message, side, suggestion, severity, json },
        } => reviewing::comment(&id, &place, &side, suggestion, severity, &message, json).await,
        Command::Review { command: ReviewCommand::Uncomment { id, draft } } => reviewing::uncomment(&id, &draft).await,
        Command::Review {
            command: ReviewCommand::Submit { id, approve, request_changes, comment: _, summary, json },
        } => {
            let verdict = if approve {
                "approve"
            } else if request_changes {
                "request_changes"
            } else {
                "comment"
            };
            reviewing::submit(&id, verdict, summary, json).await
        }
        Command::Inbox { workspace, json } => {
            let folder = match workspace {
                Some(folder) => Some(std::path::absolute(&folder)?),
                None => None,
            };
            reviewing::inbox(folder.as_deref(), json).await
        }
        Command::Sessions { command: SessionsCommand::List { workspace, limit, json } } => {
            sessions::list(&workspace_or_cwd(workspace)?, limit, json).await
        }
        Command::Sessions { command: SessionsCommand::Show { id, round, json } } => {
            sessions::show(&id, round, json).await
        }
        Command::Sessions {
            command: SessionsCommand::Complete { id, approved, abandoned, merged: _, notes, json },
        } => {
            let final_status = match (approved, abandoned) {
                (true, _) => "approved",
                (_, true) => "abandoned",
                // clap requires exactly one of the three.
                _ => "merged",
            };
            sessions::complete(&id, final_status, notes, json).await
        }
        Command::Watch { workspace } => watch::run(workspace_or_cwd(workspace)?).await,
        Command::Hook { hook } => hooks::run(hook).await,
        Command::Hooks { command: HooksCommand::Install { host, project, write, file } } => {
            hooks::install::run(host, project, write, file)
        }
        Command::Agents { json } => agents::list(json).await,
        Command::Pr { command: PrCommand::Link { pull_request, workspace, json } } => {
            pull_request::link(pull_request.as_deref(), &workspace_or_cwd(workspace)?, json).await
        }
        Command::Pr { command: PrCommand::Status { workspace, json } } => {
            pull_request::status(&workspace_or_cwd(workspace)?, json).await
        }
        Command::Pr { command: PrCommand::Pull { workspace, json } } => {
            pull_request::pull(&workspace_or_cwd(workspace)?, json).await
        }
        Command::Pr { command: PrCommand::Push { dry_run, event, review, round, workspace, json } } => {
            let folder = workspace_or_cwd(workspace)?;
            pull_request::push(&folder, dry_run, event.as_deref(), review.as_deref().map(|r| (r, round)), json).await
        }
        Command::Walkthrough { command: WalkthroughCommand::Show { id, workspace, json } } => {
            walkthrough::show(id.as_deref(), &workspace_or_cwd(workspace)?, json).await
        }
        Command::Walkthrough { command: WalkthroughCommand::List { json } } => walkthrough::list(json).await,
        Command::Walkthrough { command: WalkthroughCommand::Act { id, index, json } } => {
            walkthrough::act(&id, index, json).await
        }
        Command::Walkthrough { command: WalkthroughCommand::Resend { id, to, click, json } } => {
            walkthrough::resend(&id, &to, click.as_deref(), json).await
        }
        Command::Walkthrough { command: WalkthroughCommand::Export { id, out } } => {
            walkthrough::export(&id, out.as_deref()).await
        }
        Command::Ask { agent, resend: Some(thread), json, .. } => {
            agents::resend(&thread, agent.as_deref().unwrap_or_default(), json).await
        }
        Command::Ask { agent, resend: None, location, message, json } => {
            agents::ask(agent, location.as_deref().unwrap_or_default(), message.as_deref().unwrap_or_default(), json)
                .await
        }
        Command::Trust { show, revoke, workspace, json } => {
            let action = match (show, revoke) {
                (true, _) => trust::Action::Show,
                (_, true) => trust::Action::Revoke,
                _ => trust::Action::Trust,
            };
            trust::run(&workspace_or_cwd(workspace)?, action, json)
        }
        Command::Feedback { command } => match command {
            FeedbackCommand::Add { location, message, author, workspace, json } => {
                let named = workspace.is_some();
                feedback::add(&location, &message, author, &workspace_or_cwd(workspace)?, named, json).await
            }
            FeedbackCommand::List { file, workspace, all, json } => {
                feedback::list(file, &workspace_or_cwd(workspace)?, all, json).await
            }
            FeedbackCommand::Reply { id, message, author } => feedback::reply(&id, &message, author).await,
            FeedbackCommand::Resolve { id } => feedback::set_resolved(&id, true).await,
            FeedbackCommand::Reopen { id } => feedback::set_resolved(&id, false).await,
        },
        Command::McpConfig { host, write, file, socket, via } => mcp_config::mcp_config(host, write, file, socket, via),
        Command::Doctor { json } => setup::doctor(json).await,
        Command::Service { command } => service::run(command).await,
        Command::Export { file } => feedback::export(file).await,
        Command::Import { file } => feedback::import(&file).await,
    }
}

/// The folder a command works on: the one given, else the git root (or
/// folder) holding the current directory.
fn workspace_or_cwd(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    Ok(match given {
        Some(dir) => workspace::absolute(&dir, &cwd),
        None => workspace::root_of(&cwd),
    })
}

fn cli_opening(spawn: bool) -> Opening {
    Opening { role: Role::Cli, name: "parley", workspaces: Vec::new(), spawn }
}

async fn status(json: bool) -> anyhow::Result<i32> {
    let socket_path = socket::socket_path()?;
    let Some(mut client) = HubClient::open(&cli_opening(false)).await? else {
        if json {
            println!("{}", json!({ "running": false, "socket": socket_path }));
        } else {
            println!("Parley daemon is not running (socket {}).", socket_path.display());
            println!("Start it with `parley daemon`, or let an agent's parley-mcp start it.");
        }
        return Ok(3);
    };
    let status: wire::Status = client.call(wire::STATUS, json!({})).await?;
    if json {
        let mut value = serde_json::to_value(&status)?;
        value["running"] = json!(true);
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(0);
    }
    let c = &status.connections;
    shown::say!(
        "Parley daemon {} (hub protocol {}), pid {}, up {}",
        status.version,
        status.protocol,
        status.pid,
        uptime(status.uptime_secs)
    );
    shown::say!("socket:      {}", status.socket.display());
    shown::say!("data:        {}", status.data_dir.display());
    if let Some(log) = &status.log {
        shown::say!("log:         {}", log_words(log));
    }
    shown::say!("connections: {} agent(s), {} editor(s), {} cli (this one included)", c.mcp, c.editor, c.cli);
    for editor in &status.editors {
        let folders: Vec<String> = editor.workspaces.iter().map(|w| w.display().to_string()).collect();
        shown::say!("editor:      #{} {} [{}]", editor.connection_id, editor.name, folders.join(", "));
    }
    for folder in &status.workspaces {
        shown::say!("workspace:   {}", folder.display());
    }
    shown::say!("reviews:     {}", status.reviews);
    shown::say!("threads:     {} open", status.threads);
    if let Some(notice) = &status.store_notice {
        shown::say!("WARNING:     {notice}");
    }
    Ok(0)
}

/// Where the daemon's log goes, for a person.
fn log_words(log: &wire::LogDestination) -> String {
    match log {
        wire::LogDestination::File { path } => path.display().to_string(),
        wire::LogDestination::Journal => "the systemd journal (journalctl --user -u parley)".into(),
        wire::LogDestination::Terminal => "the terminal `parley daemon` runs in".into(),
        wire::LogDestination::Elsewhere => "not a file (its stderr is a pipe or /dev/null)".into(),
    }
}

fn uptime(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {}s", s / 60, s % 60),
        s => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

async fn stop() -> anyhow::Result<i32> {
    let Some(pid) = stop_daemon("parley stop").await? else {
        println!("Parley daemon is not running.");
        return Ok(0);
    };
    // Clients are told the daemon stopped on purpose and wait for it rather
    // than start another; one that does not (an older editor plugin, an
    // agent's next call) would make "stopped" untrue, so look once more.
    tokio::time::sleep(Duration::from_millis(300)).await;
    match HubClient::open(&cli_opening(false)).await {
        Ok(Some(client)) if client.hello().pid != pid => {
            eprintln!(
                "Parley daemon pid {pid} stopped, but another one (pid {}) is already running: a client started it again. \
                 `parley status` shows who is connected; stop that client, then run `parley stop` again.",
                client.hello().pid
            );
            Ok(1)
        }
        _ => {
            println!("Parley daemon stopped (pid {pid}).");
            Ok(0)
        }
    }
}

/// Stops the running daemon, if any, and waits until it has exited; its pid.
async fn stop_daemon(reason: &str) -> anyhow::Result<Option<u32>> {
    let socket_path = socket::socket_path()?;
    let Some(mut client) = HubClient::open(&cli_opening(false)).await? else {
        return Ok(None);
    };
    let pid = client.hello().pid;
    let _: serde_json::Value = client.call(wire::SHUTDOWN, json!({ "reason": reason })).await?;
    drop(client);
    wait_until_gone(&socket_path).await?;
    Ok(Some(pid))
}

/// Waits until the daemon has let go of its lock, which it holds until the
/// very end of its shutdown.
async fn wait_until_gone(socket_path: &Path) -> anyhow::Result<()> {
    let lock_path = socket::daemon_lock_path(socket_path);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let free = match std::fs::File::open(&lock_path) {
            Ok(file) => file.try_lock().is_ok(),
            Err(_) => true,
        };
        if free {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!("the daemon did not stop within 15 s; its lock {} is still held", lock_path.display());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
