//! The steps of one review round, run by the round use cases
//! (`usecases::rounds`): capture the diff, run the secret scan before
//! anything leaves the machine, run the tests, ask the reviewer, store the
//! round, write the audit trail and show the review in the editor.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{RoundError, findings};
use crate::config::{self, CommandLine, ReviewSettings};
use crate::git::{self, Changes, Scope};
use crate::reviewer::{self, RunError};
use crate::reviews::{Mode, Presentation};
use crate::sessions::{self, FileVersions, Round, Session, SessionRequest};
use crate::structured_review::{self, PromptInput, TestResults};
use crate::usecases::Context;
use crate::usecases::reviews as shown;
use crate::{audit, secrets};

/// Documents larger than this are cut before they go into the prompt.
const MAX_DOC_BYTES: usize = 256 * 1024;
/// How many steps progress reports count.
pub const STEPS: f64 = 6.0;

/// What an agent (or a human at the terminal) asks to have reviewed.
#[derive(Debug, Clone)]
pub struct ReviewAsk {
    pub summary: String,
    pub relevant_docs: Vec<String>,
    pub focus_areas: Vec<String>,
    pub previous_review_id: Option<String>,
    pub scope: Option<String>,
    /// Where the asker works: the repository is the one holding it.
    pub folder: PathBuf,
    /// The asker's environment, which the reviewer and the test command run
    /// with (over the daemon's own).
    pub env: std::sync::Arc<std::collections::BTreeMap<String, String>>,
    /// `human` to ask a person, `command` for the configured reviewer
    /// command; by default whatever the config names.
    pub reviewer: Option<String>,
    /// Who asks: the agent's MCP client name, or `parley` at a terminal.
    pub asked_by: String,
}

/// Who answers a round.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Reviewer {
    Command(CommandLine),
    Person,
}

/// What a finished round gives back.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub session: Session,
    pub round: Round,
    /// The review rendered for people (and shown in the editor).
    pub markdown: String,
    /// How many editor windows show it.
    pub shown_in: usize,
    /// The round's audit folder, when the audit trail is on.
    pub audit: Option<PathBuf>,
    /// Things that went wrong after the review was stored.
    pub warnings: Vec<String>,
}

/// Receives progress: (step so far, of [`STEPS`], what is happening).
pub type Progress<'a> = &'a (dyn Fn(f64, String) + Send + Sync);

/// A round that passed the quick checks and has its session (a new one,
/// or the one it continues): what remains is to capture and scan its diff,
/// then the slow part. Everything up to here is quick, so a refusal here is
/// answered at once; from here on the round has an id to wait for.
#[derive(Debug, Clone)]
pub(super) struct Opened {
    pub ask: ReviewAsk,
    pub root: PathBuf,
    settings: ReviewSettings,
    pub reviewer: Reviewer,
    pub scope: Scope,
    pub session: Session,
}

/// A round whose diff is captured and passed the secret scan: what remains
/// is the slow part (tests and the reviewer, or the person).
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    pub ask: ReviewAsk,
    pub root: PathBuf,
    settings: ReviewSettings,
    pub reviewer: Reviewer,
    pub scope: Scope,
    /// With every secret on its removed and context lines redacted: the
    /// diff the reviewer, the audit tree and the stored round get.
    pub changes: Changes,
    /// What the scan redacted in `changes`.
    pub redacted: Vec<secrets::Finding>,
    docs: Vec<(String, String)>,
    pub session: Session,
}

impl Prepared {
    /// The globs of files the secret scan skips.
    pub(super) fn secret_allow_paths(&self) -> &[String] {
        &self.settings.secret_allow_paths
    }
}

/// The quick part of a round: find the repository and its config, choose
/// the reviewer, check the previous session and what the asker wrote (a
/// secret in it is never stored), and open (or continue) the session.
pub(super) async fn open(cx: &Context, ask: ReviewAsk, progress: Progress<'_>) -> Result<Opened, RoundError> {
    if ask.summary.trim().is_empty() {
        return Err(RoundError::Invalid("summary is required: say what you were asked to do and what you did".into()));
    }
    progress(0.0, "finding the repository".into());
    let folder = ask.folder.clone();
    let (root, settings) = blocking(move || {
        let root = git::repo_root(&folder)?;
        let settings = config::review_settings(&root).map_err(|e| RoundError::Config(e.to_string()))?;
        Ok((root, settings))
    })
    .await?;
    if let Some(note) = settings.ignored_note() {
        progress(0.5, note);
    }
    let reviewer = choose_reviewer(ask.reviewer.as_deref(), &settings)?;
    let previous = match ask.previous_review_id.as_deref().map(str::trim).filter(|id| !id.is_empty()) {
        Some(id) => Some(check_previous(cx, &root, id, settings.max_rounds).await?),
        None => None,
    };
    // The summary and focus areas leave the machine with the diff, and a
    // new session keeps them.
    let allow = &settings.secret_allow_paths;
    let mut findings = secrets::scan_text("(summary)", &ask.summary, allow);
    for (index, area) in ask.focus_areas.iter().enumerate() {
        findings.extend(secrets::scan_text(&format!("(focus area {})", index + 1), area, allow));
    }
    if !findings.is_empty() {
        return Err(RoundError::Secrets(secrets::describe(&findings)));
    }
    let scope = Scope::parse(ask.scope.as_deref());
    let session = match previous {
        Some(session) => session,
        None => {
            let request = SessionRequest {
                summary: ask.summary.clone(),
                relevant_docs: ask.relevant_docs.clone(),
                focus_areas: ask.focus_areas.clone(),
                scope: scope.name(),
            };
            cx.state.start_session(root.clone(), request).await?
        }
    };
    Ok(Opened { ask, root, settings, reviewer, scope, session })
}

/// Captures the round's diff and scans it, and the docs, for secrets: a
/// secret on an added line stops the round; one on a removed or context
/// line is already in the repository (removing it is the fix), so it is
/// redacted from everything that leaves the machine instead. This can be
/// slow on a large repository, so it runs in the round's background part.
pub(super) async fn capture(
    opened: Opened,
    progress: Progress<'_>,
    cancel: &CancellationToken,
) -> Result<Prepared, RoundError> {
    let Opened { ask, root, settings, reviewer, scope, session } = opened;
    progress(1.0, "capturing the diff".into());
    still_wanted(cancel)?;
    let changes = {
        let mut ignored = settings.ignored_files.clone();
        // The audit trail of earlier rounds is not part of the change under review.
        if let Ok(audit) = settings.audit_dir.strip_prefix(&root) {
            ignored.push(format!("/{}/", audit.to_string_lossy().trim_end_matches('/')));
        }
        // Nor is Parley's own config, unless the user asks for it.
        if !settings.review_config {
            ignored.push(format!("/{}", config::REPO_CONFIG));
        }
        let (root, scope) = (root.clone(), scope.clone());
        blocking(move || Ok(git::capture(&root, &scope, &ignored)?)).await?
    };
    still_wanted(cancel)?;

    progress(2.0, "scanning for secrets".into());
    let docs = read_docs(&root, &ask.relevant_docs).await?;
    let allow = &settings.secret_allow_paths;
    let scanned = secrets::redact_diff(&changes.diff, allow);
    let mut findings = scanned.findings;
    let redacted = scanned.redacted;
    let changes = Changes { diff: scanned.diff, ..changes };
    for (name, text) in &docs {
        findings.extend(secrets::scan_text(name, text, allow));
    }
    if !findings.is_empty() {
        return Err(RoundError::Secrets(secrets::describe(&findings)));
    }
    still_wanted(cancel)?;
    Ok(Prepared { ask, root, settings, reviewer, scope, changes, redacted, docs, session })
}

/// The versions of the changed files a round keeps, with every secret in
/// them redacted as the diff's removed lines are, and the warning that says
/// what was redacted in the diff (`in_diff`) and in them together: a
/// secret the diff already reported is not listed twice.
pub(super) fn redact_versions(
    files: Vec<FileVersions>,
    allow: &[String],
    in_diff: &[secrets::Finding],
) -> (Vec<FileVersions>, Option<String>) {
    use secrets::Place;
    let mut all = in_diff.to_vec();
    let files = files
        .into_iter()
        .map(|file| {
            let mut redact = |text: Option<String>, place: Place| {
                let text = text?;
                let (text, found) = secrets::redact_text(&file.path, &text, allow, place);
                let reported = |f: &secrets::Finding| {
                    in_diff.iter().any(|d| {
                        d.file == f.file
                            && d.rule == f.rule
                            && match (f.place, d.place) {
                                (Place::Before, Place::Removed) => d.line == f.line,
                                (Place::Before, Place::Context { old_line }) => old_line == f.line,
                                (Place::After, Place::Context { .. }) => d.line == f.line,
                                _ => false,
                            }
                    })
                };
                all.extend(found.into_iter().filter(|f| !reported(f)));
                Some(text)
            };
            let before = redact(file.before.clone(), Place::Before);
            let after = redact(file.after.clone(), Place::After);
            FileVersions { before, after, ..file }
        })
        .collect();
    (files, secrets::describe_redacted(&all))
}

/// The slow part of a round: run the tests, ask the reviewer, store the
/// round, write the audit trail and show the review.
pub(super) async fn review(
    cx: &Context,
    prepared: Prepared,
    progress: Progress<'_>,
    cancel: &CancellationToken,
) -> Result<Outcome, RoundError> {
    let Prepared { ask, root, settings, reviewer, scope, changes, redacted, docs, session } = prepared;
    let Reviewer::Command(reviewer) = reviewer else {
        return Err(RoundError::Internal("a round for a person has no reviewer command to run".into()));
    };
    progress(3.0, "running the tests".into());
    still_wanted(cancel)?;
    // Built for the commands, not the asker's whole environment: an agent
    // host's keys reach them only when the user's own config passes them on.
    let env = config::command_env(&ask.env, &settings.pass_env);
    let tests = match &settings.test_command {
        Some(command) => Some(run_tests(command, &env, &root, settings.test_timeout, cancel).await?),
        None => None,
    };
    if let Some((_, output)) = &tests {
        let findings = secrets::scan_text("(test output)", output, &settings.secret_allow_paths);
        if !findings.is_empty() {
            return Err(RoundError::Secrets(secrets::describe(&findings)));
        }
    }
    let reviewer_name = settings.reviewer_name.clone().unwrap_or_else(|| reviewer.program_name());
    let discussion = findings::discussion(cx, &root, &session.id, &changes.files, &reviewer_name).await;
    for thread in discussion.findings.iter().chain(&discussion.open) {
        for (author, body) in &thread.comments {
            let name = format!("(comment by {author} at {})", thread.place);
            let found = secrets::scan_text(&name, body, &settings.secret_allow_paths);
            if !found.is_empty() {
                return Err(RoundError::Secrets(secrets::describe(&found)));
            }
        }
    }
    let prompt = structured_review::build_prompt(&PromptInput {
        summary: ask.summary.clone(),
        docs,
        changed_files: changes.files.clone(),
        focus_areas: ask.focus_areas.clone(),
        previous_rounds: session.rounds.iter().map(|r| (r.round, r.review.clone())).collect(),
        finding_threads: discussion.findings,
        open_threads: discussion.open,
        diff: changes.diff.clone(),
        test_output: tests.as_ref().map(|(_, output)| output.clone()),
    });

    progress(4.0, format!("asking the reviewer ({reviewer})"));
    still_wanted(cancel)?;
    let timeout = settings.timeout;
    let tick = |elapsed: Duration| {
        let fraction = (elapsed.as_secs_f64() / timeout.as_secs_f64()).min(0.99);
        progress(4.0 + fraction, format!("waiting for the reviewer ({} s)", elapsed.as_secs()));
    };
    let finished =
        reviewer::run(&reviewer, &env, &root, &prompt, timeout, cancel, tick).await.map_err(|e| match e {
            RunError::Cancelled { .. } => RoundError::Cancelled("the reviewer was stopped".into()),
            other => RoundError::Reviewer(format!("the reviewer failed: {other}")),
        })?;
    if !finished.success {
        let code = finished.code.map_or_else(|| "a signal".to_owned(), |c| c.to_string());
        let said = if finished.stderr.trim().is_empty() { &finished.stdout } else { &finished.stderr };
        return Err(RoundError::Reviewer(format!(
            "the reviewer `{reviewer}` failed (exit {code}){}",
            reviewer::excerpt(said)
        )));
    }
    let mut review = structured_review::parse_reviewer_output(&finished.stdout)
        .map_err(|e| RoundError::Reviewer(format!("the reviewer's output is not a review: {e}")))?;
    // What Parley measured beats what the reviewer says about the tests.
    if let Some((results, _)) = tests {
        review.test_results = Some(results);
    }

    progress(5.0, "storing the review".into());
    // The version reviewed, so that a person reviewing the next round can
    // see what changed since (the base is not kept: the next round has it).
    let reviewed = {
        let changes = changes.clone();
        blocking(move || Ok(git::versions(&changes)?)).await.unwrap_or_default()
    };
    let reviewed = reviewed.into_iter().map(|f| FileVersions { before: None, ..f }).collect();
    let (files, redaction) = redact_versions(reviewed, &settings.secret_allow_paths, &redacted);
    let round = Round {
        round: 0,
        at: crate::clock::now_rfc3339(),
        summary: ask.summary.clone(),
        focus_areas: ask.focus_areas.clone(),
        scope: scope.name(),
        changed_files: changes.files.clone(),
        verdict: structured_review::verdict(&review, &settings.thresholds),
        review,
        reviewer: reviewer.to_string(),
        elapsed_ms: finished.elapsed.as_millis() as u64,
        files,
        person_verdict: None,
    };
    let session = cx.state.add_round(session.id.clone(), round, settings.max_rounds).await?;
    let round = session.rounds.last().cloned().ok_or_else(|| RoundError::Internal("a round was just added".into()))?;
    let mut warnings: Vec<String> = redaction.into_iter().collect();
    warnings.extend(findings::open_threads(cx, &root, &session.id, &round, &reviewer_name).await);
    Ok(finish(cx, &settings, session, round, &changes, warnings).await)
}

/// After the round is stored: the audit trail and the editor. Failures here
/// are warnings; the review itself is safe.
pub(super) async fn finish(
    cx: &Context,
    settings: &ReviewSettings,
    session: Session,
    round: Round,
    changes: &Changes,
    mut warnings: Vec<String>,
) -> Outcome {
    let ignored = settings.ignored_note();
    warnings.extend(ignored.clone());
    let first_audit = settings.audit && !settings.audit_dir.join("sessions").exists();
    let audit = if settings.audit {
        let (dir, s, r, diff) = (settings.audit_dir.clone(), session.clone(), round.clone(), changes.diff.clone());
        match blocking(move || {
            audit::record_round(&dir, &s, &r, &diff).map_err(|e| RoundError::Internal(e.to_string()))
        })
        .await
        {
            Ok(path) => Some(path),
            Err(e) => {
                warnings.push(format!("the audit trail was not written: {e}"));
                None
            }
        }
    } else {
        None
    };
    if first_audit && audit.is_some() {
        let shown = settings.audit_dir.strip_prefix(&changes.root).unwrap_or(&settings.audit_dir);
        warnings.push(format!(
            "this is the repository's first review: its audit tree is in {}/ (request, diff and review of every round). \
             Commit it to keep the review history with the code, or add it to .gitignore (or set audit = false under [review]) to keep it out",
            shown.display()
        ));
    }
    let markdown = round.markdown(&session.id);
    // The editors show which settings were ignored, beside the review itself.
    let shown_markdown = match &ignored {
        Some(note) => format!("> **Note:** {note}.\n\n{markdown}"),
        None => markdown.clone(),
    };
    let presentation = Presentation { content: shown_markdown, mode: Mode::Replace, section: None };
    let source = crate::reviews::Source::Round { review_id: session.id.clone(), round: round.round };
    let shown_in = match shown::present(cx, &changes.root, &presentation, source).await {
        Ok(committed) => committed.delivered_to.len(),
        Err(e) => {
            warnings.push(format!("the review was not shown in the editor: {e}"));
            0
        }
    };
    Outcome { session, round, markdown, shown_in, audit, warnings }
}

/// Stops a round between steps once its caller has cancelled it.
fn still_wanted(cancel: &CancellationToken) -> Result<(), RoundError> {
    if cancel.is_cancelled() { Err(RoundError::Cancelled("the round was cancelled".into())) } else { Ok(()) }
}

/// Who answers: a person when the asker or the config says `human`, else
/// the configured reviewer command.
fn choose_reviewer(asked: Option<&str>, settings: &ReviewSettings) -> Result<Reviewer, RoundError> {
    let configured = settings.reviewer.as_ref();
    let is_person = |c: &CommandLine| c.to_string().trim() == "human";
    match asked.map(str::trim).filter(|a| !a.is_empty()) {
        Some("human") => Ok(Reviewer::Person),
        Some("command") => match configured {
            Some(command) if !is_person(command) => Ok(Reviewer::Command(command.clone())),
            _ => Err(no_reviewer(settings)),
        },
        Some(other) => Err(RoundError::Invalid(format!(
            "reviewer must be \"human\" (a person reviews in their editor) or \"command\" (the configured reviewer command), not {other:?}"
        ))),
        None => match configured {
            Some(command) if is_person(command) => Ok(Reviewer::Person),
            Some(command) => Ok(Reviewer::Command(command.clone())),
            None => Err(no_reviewer(settings)),
        },
    }
}

fn no_reviewer(settings: &ReviewSettings) -> RoundError {
    // The repository names one, but the user has not trusted it.
    let untrusted = settings.repo_config.as_ref().and_then(|repo| {
        let (_, command) = repo.guarded.iter().find(|(key, _)| *key == "review.reviewer")?;
        repo.ignored.contains(&"review.reviewer").then_some((repo, command))
    });
    if let Some((repo, command)) = untrusted {
        let root = repo.path.parent().unwrap_or(&repo.path);
        return RoundError::Config(format!(
            "no reviewer runs: {} names the reviewer `{command}`, but you have not trusted that file (a cloned repository's \
             config can run any command as you). Read it with `parley trust --show` in {}, and if you agree, run `parley trust` there; \
             or name your own reviewer under [review] in {}",
            repo.path.display(),
            root.display(),
            config::user_config_file().map_or_else(|| "your config.toml".into(), |f| f.display().to_string())
        ));
    }
    RoundError::Config("no reviewer is configured. Add one to .parley.toml in the repository (or to ~/.config/parley/config.toml):\n\
     [review]\n\
     reviewer = \"claude -p --output-format json\"   # or \"codex exec\", or any command that reads the prompt on stdin and prints the review as JSON,\n\
     # or \"human\" to have a person review in their editor (or pass reviewer: \"human\" to request_review)"
        .into(),
    )
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, RoundError> + Send + 'static,
) -> Result<T, RoundError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| RoundError::Internal(e.to_string()))?
}

async fn check_previous(cx: &Context, root: &Path, given: &str, max_rounds: u32) -> Result<Session, RoundError> {
    // By the one id rule, among this repository's sessions.
    let id = crate::usecases::ids::session(cx, given, Some(root)).await.map_err(|e| match RoundError::from(e) {
        RoundError::Invalid(why) => RoundError::Invalid(format!("previous_review_id: {why}")),
        other => other,
    })?;
    let id = id.as_str();
    let session = cx.state.check_session(id.to_owned(), max_rounds).await?;
    if session.workspace != root {
        return Err(sessions::SessionError::NotFound(id.to_owned()).into());
    }
    if let Some(waiting) = &session.awaiting {
        return Err(RoundError::Conflict(format!(
            "round {} of review {id} is waiting for a person's review: wait for it with await_review \
             (or cancel it with cancel_review) before asking for the next round",
            waiting.round
        )));
    }
    Ok(session)
}

/// Reads the documents the reviewer should follow, relative to the root:
/// each must really lie in the repository (symlinks resolved) and outside
/// `.git`, be a regular file (a FIFO or a device is refused at once, never
/// waited on or drained), and is cut at [`MAX_DOC_BYTES`].
async fn read_docs(root: &Path, docs: &[String]) -> Result<Vec<(String, String)>, RoundError> {
    use crate::regular_file::{self, RegularFileError};
    use crate::workspace::{self, Reach};
    let (root, docs) = (root.to_owned(), docs.to_vec());
    blocking(move || {
        docs.iter()
            .map(|doc| {
                let shown = root.display();
                let invalid = |why: String| RoundError::Invalid(format!("relevant_docs entry {doc} {why}"));
                let path = workspace::absolute(Path::new(doc), &root);
                if !workspace::holds(&root, &path) {
                    return Err(invalid(format!("is outside the repository {shown}")));
                }
                // A mistyped path must not cost a minutes-long review that
                // checks against nothing: refuse before anything runs.
                let path = match workspace::reach(&root, &path) {
                    Reach::Inside(real) => real,
                    Reach::Missing => {
                        return Err(invalid(format!(
                            "does not exist in {shown}: give a file path relative to the repository root"
                        )));
                    }
                    Reach::Outside => {
                        return Err(invalid(format!(
                            "is a link that leads outside the repository {shown}: give a document inside it"
                        )));
                    }
                    Reach::Git => {
                        return Err(invalid(
                            "is inside .git, git's own data (its config can hold credentials): \
                             give a document of the repository"
                                .into(),
                        ));
                    }
                };
                let read = regular_file::read_capped(&path, MAX_DOC_BYTES as u64).map_err(|e| match e {
                    RegularFileError::NotRegular(_) => {
                        invalid(format!("is not a file in {shown}: give a file path relative to the repository root"))
                    }
                    other => invalid(format!("cannot be read: {other}")),
                })?;
                let mut text = String::from_utf8_lossy(&read.bytes).into_owned();
                if read.cut {
                    text.push_str("\n[… cut: the document is longer than 256 KiB]");
                }
                Ok((doc.clone(), text))
            })
            .collect()
    })
    .await
}

/// Runs the configured test command; its outcome joins the review.
async fn run_tests(
    command: &CommandLine,
    env: &std::collections::BTreeMap<String, String>,
    root: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<(TestResults, String), RoundError> {
    match reviewer::run(command, env, root, "", timeout, cancel, |_| {}).await {
        Ok(done) => {
            let output = format!("{}{}", done.stdout, done.stderr);
            let tail: Vec<&str> = output.lines().rev().take(20).collect();
            let summary = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
            let results = TestResults { passed: done.success, summary, failing_tests: Vec::new(), coverage: None };
            Ok((results, output))
        }
        Err(RunError::Cancelled { .. }) => Err(RoundError::Cancelled("the test command was stopped".into())),
        Err(e) => Err(RoundError::Reviewer(format!("the test command failed to run: {e}"))),
    }
}
