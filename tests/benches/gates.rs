//! Plan gates and asking agents (issue 20 item 9), on the real release
//! binaries. Two measurements, each against a plain round trip to the daemon
//! taken in the same run:
//!
//! - **A person's verdict → the waiting plan hook's output.** A real
//!   `parley hook claude-plan` process is fed the JSON Claude Code sends
//!   (`tests/fixtures/hooks/claude-plan-{1,2}.json`) and waits; the person,
//!   a hub connection, submits; the time runs from sending `round/submit` to
//!   the hook's stdout line. Each Claude session sends two plans: the first
//!   gets a comment and "request changes" (the hook denies), the second, the
//!   next round of the same review, is approved (the hook allows). Against a
//!   hub `status` round trip and the submit's own answer.
//! - **A question → the chosen agent's next tool answer.** Two agents (real
//!   shims, raw MCP lines) on one repository; the person asks the second
//!   with `agent/ask`; the time runs from the ask's answer to the end of that
//!   agent's next `get_feedback_summary` answer, which carries the note.
//!   Against the same call with nothing waiting, made just before. Every
//!   other question, the call is made 20 ms after the ask instead and timed
//!   on its own against a plain call made after 20 ms idle too, which
//!   separates what the note costs the call from the daemon's work right
//!   after the ask. Then the
//!   same agent waiting in `await_review`: from sending the ask to that
//!   call's answer carrying the question, against the ask's own answer.
//!
//! ```sh
//! cargo build --release --workspace
//! cargo bench -p parley-tests --bench gates
//! ```
//!
//! It prints a report and asserts nothing about timings; it checks what a
//! person would notice (the hook's decision, the note reaching only the
//! agent asked). Every loop is bounded, and a watchdog ends a stalled run.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use parley_tests::bench::{
    Call, HubClient, LineChild, Report, Stats, fmt_duration, shim_command, start_daemon, watchdog,
};
use parley_tests::{Sandbox, bin, git, repo_root};
use serde_json::{Value, json};

/// The whole run, whatever happens.
const RUN_LIMIT: Duration = Duration::from_secs(600);
/// Claude sessions, each sending two plans (so twice as many verdicts).
const SESSIONS: usize = 50;
/// `status` round trips per plan, while its hook waits.
const STATUS_PER_PLAN: usize = 10;
/// How long the hook is left waiting before the person submits: it asks
/// for the verdict right after the plan is in the inbox, so this puts its
/// wait in the daemon before the submit, as a person's reading time would.
const SETTLE: Duration = Duration::from_millis(100);
/// Questions whose next tool answer is timed: half of them right after the
/// ask's answer, half once the daemon has had [`QUIET`] to finish with it.
const ASKS: usize = 100;
/// The pause that separates the note's own cost in a tool answer from the
/// daemon's work right after an ask (telling the agent's connection, the
/// thread's notifications).
const QUIET: Duration = Duration::from_millis(20);
/// Questions to an agent waiting in `await_review`.
const WAITING_ASKS: usize = 50;
/// How long any one step may take before the bench gives up on it.
const STEP: Duration = Duration::from_secs(15);
/// The session id in the plan fixtures, replaced by one per bench session.
const FIXTURE_SESSION: &str = "6c0e2a4f-8d1b-4e37-9a55-0f3b7c2d1e90";
/// The plan's file, as the fixtures name it.
const PLAN_FILE: &str = "tax-in-cart-totals.md";

fn main() {
    watchdog::start(RUN_LIMIT);
    let mut report = Report::new("gates");
    println!("using {} and {}", bin("parley").display(), bin("parley-mcp").display());
    plan_verdicts(&mut report);
    questions(&mut report);
    report.print();
}

// --- a person's verdict → the waiting plan hook ---------------------------------

/// A running `parley hook claude-plan`, its stdout read on a thread of its own
/// that stamps the moment its line arrives.
struct PlanHook {
    child: Child,
    line: mpsc::Receiver<(String, Instant)>,
}

impl PlanHook {
    fn start(sandbox: &Sandbox, input: &str) -> PlanHook {
        let mut command = sandbox.command("parley");
        command.env_remove("PARLEY_LOG").args(["hook", "claude-plan"]);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start parley hook claude-plan");
        watchdog::guard(child.id());
        let mut stdin = child.stdin.take().expect("piped stdin");
        stdin.write_all(input.as_bytes()).expect("write the hook's input");
        drop(stdin);
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, line) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(stdout).read_line(&mut text);
            let _ = sender.send((text, Instant::now()));
        });
        PlanHook { child, line }
    }

    /// The hook's output line and when it arrived; then its exit, which must
    /// be a success.
    fn output(mut self) -> (String, Instant) {
        let (line, at) = self.line.recv_timeout(STEP).expect("the hook prints its decision in time");
        let deadline = Instant::now() + STEP;
        loop {
            match self.child.try_wait().expect("the hook's status") {
                Some(status) => {
                    watchdog::release(self.child.id());
                    assert!(status.success(), "the hook failed ({status}) after printing {line:?}");
                    return (line, at);
                }
                None => {
                    assert!(Instant::now() < deadline, "the hook printed {line:?} but did not exit");
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }
}

impl Drop for PlanHook {
    /// A hook still waiting when the bench gives up would wait (and start
    /// daemons) for days: it is ended with the bench.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
            watchdog::release(self.child.id());
        }
    }
}

/// A plan fixture for `cwd`, as Claude session `session` sends it.
fn plan_input(fixture: &str, cwd: &Path, session: &str) -> String {
    let text = std::fs::read_to_string(repo_root().join("tests/fixtures/hooks").join(fixture)).expect("a plan fixture");
    text.replace("@CWD@", &cwd.to_string_lossy()).replace(FIXTURE_SESSION, session)
}

/// Waits until round `round` of a plan is in the person's inbox (of review
/// `review`, when known); its review id.
fn in_inbox(person: &mut HubClient, round: u64, review: Option<&str>) -> String {
    let deadline = Instant::now() + STEP;
    loop {
        let inbox = person.call("inbox", json!({}));
        let found = inbox["rounds"].as_array().into_iter().flatten().find(|r| {
            r["round"].as_u64() == Some(round) && review.is_none_or(|id| r["review_id"].as_str() == Some(id))
        });
        if let Some(found) = found {
            return found["review_id"].as_str().expect("a review id").to_owned();
        }
        assert!(Instant::now() < deadline, "round {round} of the plan never reached the inbox: {inbox}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn plan_verdicts(report: &mut Report) {
    watchdog::phase("a person's verdict reaching the waiting plan hook");
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("shop", &[("README.md", "shop\n")]);
    let daemon = start_daemon(&sandbox);
    let mut person = HubClient::connect(&sandbox.socket, &repo);
    let (mut reached, mut answered, mut status, mut opened) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut after_answer = Vec::new();
    let (mut denied, mut allowed) = (Vec::new(), Vec::new());
    for session in 0..SESSIONS {
        let session_id = format!("bench-{session:04}-{}", std::process::id());
        let mut review: Option<String> = None;
        for (round, fixture) in [(1, "claude-plan-1.json"), (2, "claude-plan-2.json")] {
            let started = Instant::now();
            let hook = PlanHook::start(&sandbox, &plan_input(fixture, &repo, &session_id));
            let id = in_inbox(&mut person, round, review.as_deref());
            opened.push(started.elapsed());
            let approve = round == 2;
            if !approve {
                person.call(
                    "round/comment",
                    json!({ "review_id": id, "path": PLAN_FILE, "start_line": 3,
                            "body": "Keep the rounding: invoices depend on it",
                            "suggestion": "2. Round once, in `total`" }),
                );
            }
            for _ in 0..STATUS_PER_PLAN {
                let sent = Instant::now();
                let state = person.call("status", Value::Null);
                status.push(sent.elapsed());
                assert!(state["connections"].is_object(), "{state}");
            }
            std::thread::sleep(SETTLE);

            let verdict = if approve { "approve" } else { "request_changes" };
            let submitted = Instant::now();
            person.call("round/submit", json!({ "review_id": id, "verdict": verdict }));
            let own = submitted.elapsed();
            answered.push(own);
            let (line, at) = hook.output();
            let took = at.duration_since(submitted);
            reached.push(took);
            after_answer.push(took.saturating_sub(own));
            let decision: Value = serde_json::from_str(&line).expect("the hook prints JSON");
            let behavior = &decision["hookSpecificOutput"]["decision"]["behavior"];
            if approve {
                assert_eq!(behavior, "allow", "{line}");
                allowed.push(took);
            } else {
                assert_eq!(behavior, "deny", "{line}");
                let message = decision["hookSpecificOutput"]["decision"]["message"].as_str().unwrap_or_default();
                assert!(message.contains("Keep the rounding"), "the comment reaches the model: {message}");
                denied.push(took);
            }
            review = Some(id);
        }
    }
    let (reached, answered, status, opened) =
        (Stats::of(reached), Stats::of(answered), Stats::of(status), Stats::of(opened));
    let after_answer = Stats::of(after_answer);
    println!("\n## a person's verdict → the waiting `parley hook claude-plan` ({SESSIONS} sessions, two plans each)");
    Stats::print_table(&[
        ("submit sent → the hook's stdout line", reached),
        ("… request changes (the hook denies, with the comment)", Stats::of(denied)),
        ("… approve (the hook allows, tool_input echoed)", Stats::of(allowed)),
        ("submit sent → the person's own answer", answered),
        ("the person's answer → the hook's line (0 when the line came first)", after_answer),
        ("`status` round trip over the hub, while the hook waits", status),
        ("hook started → its plan in the person's inbox", opened),
    ]);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    report.row(
        "a person's verdict → the waiting plan hook's output (p50 / p99), vs a `status` round trip (p50 / p99)",
        "p99 ≤ 10 ms (a person's verdict → the awaiting agent)",
        format!(
            "{} / {} vs {} / {} ({:.1}× / {:.1}×)",
            fmt_duration(reached.median),
            fmt_duration(reached.p99),
            fmt_duration(status.median),
            fmt_duration(status.p99),
            ratio(reached.median, status.median),
            ratio(reached.p99, status.p99)
        ),
        reached.p99 <= Duration::from_millis(10),
    );
    report.info(
        "the same, vs the submit's own answer to the person (p50)",
        format!(
            "{} vs {} ({:.2}×)",
            fmt_duration(reached.median),
            fmt_duration(answered.median),
            ratio(reached.median, answered.median)
        ),
    );
    report.info(
        "the person's own answer → the hook's line, per plan (p50 / p99)",
        format!("{} / {}", fmt_duration(after_answer.median), fmt_duration(after_answer.p99)),
    );
    report.info(
        "hook started → its plan in the person's inbox (p50 / p99)",
        format!("{} / {}", fmt_duration(opened.median), fmt_duration(opened.p99)),
    );
    drop(daemon);
}

// --- a question → the chosen agent's next tool answer ------------------------------

const SOURCE: &str = "fn login() {\n    let token = read_token();\n    let again = read_token();\n}\n";

/// A repository with `src/auth.rs` committed, then changed (so an agent can
/// ask a person to review the change).
fn project(sandbox: &Sandbox) -> PathBuf {
    let repo = sandbox.repo("shop", &[("src/auth.rs", SOURCE)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join(".gitignore"), ".reviews/\n").expect("gitignore");
    std::fs::write(repo.join("src/auth.rs"), SOURCE.replace("again", "twice")).expect("edit");
    repo
}

/// Whether a tool answer's text carries `question`.
fn carries(answer: &Value, question: &str) -> bool {
    answer["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|block| block["text"].as_str().is_some_and(|t| t.contains(question)))
}

/// An agent on the shim, registered with the daemon (it has made a call).
fn agent(sandbox: &Sandbox, repo: &Path, summary: &Call) -> LineChild {
    let mut agent = LineChild::spawn(shim_command(sandbox, repo));
    agent.handshake();
    agent.call_value(summary);
    agent
}

/// The name the daemon gave the agent whose shim is `shim_pid`.
fn name_of(person: &mut HubClient, shim_pid: u32) -> String {
    let listed = person.call("agents/list", json!({}));
    let found = listed["agents"].as_array().into_iter().flatten().find(|a| a["shim_pid"] == json!(shim_pid));
    found
        .and_then(|a| a["name"].as_str())
        .unwrap_or_else(|| panic!("shim {shim_pid} is not listed: {listed}"))
        .to_owned()
}

fn questions(report: &mut Report) {
    watchdog::phase("a question reaching the chosen agent's next tool answer");
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let daemon = start_daemon(&sandbox);
    let summary = Call::new("get_feedback_summary", json!({}));
    let mut first = agent(&sandbox, &repo, &summary);
    let mut second = agent(&sandbox, &repo, &summary);
    let mut person = HubClient::connect(&sandbox.socket, &repo);
    let chosen = name_of(&mut person, second.pid());
    let other = name_of(&mut person, first.pid());
    println!("asking {chosen}, with {other} on the same repository");
    let file = repo.join("src/auth.rs");

    let (mut noted, mut noted_quiet, mut plain, mut plain_quiet) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut status, mut asks) = (Vec::new(), Vec::new());
    let mut missed = 0;
    for n in 0..ASKS {
        // In the quiet half, the plain call also comes after a pause, so that
        // both pay the same wake-up of idle threads.
        let quiet = n % 2 == 1;
        if quiet {
            std::thread::sleep(QUIET);
        }
        let sent = Instant::now();
        let answer = second.call_value(&summary);
        if quiet { &mut plain_quiet } else { &mut plain }.push(sent.elapsed());
        let sent = Instant::now();
        person.call("status", Value::Null);
        status.push(sent.elapsed());

        let question = format!("Why is the token read twice? (question {n})");
        assert!(!carries(&answer, "Why is the token read twice?"), "nothing waits yet: {answer}");
        let sent = Instant::now();
        let asked = person.call(
            "agent/ask",
            json!({ "agent": chosen, "path": file, "start_line": 1, "end_line": 2, "message": question }),
        );
        let asked_at = Instant::now();
        asks.push(asked_at.duration_since(sent));
        assert_eq!(asked["agent"], json!(chosen), "{asked}");
        if quiet {
            std::thread::sleep(QUIET);
        }
        let called = Instant::now();
        // The note rides on the first answer after the ask; a later one
        // counts, and says so in the report, if the first came without it.
        let mut tries = 0;
        while !carries(&second.call_value(&summary), &question) {
            tries += 1;
            assert!(tries < 20, "{chosen} was never told of question {n}");
        }
        if quiet {
            noted_quiet.push(called.elapsed());
        } else {
            noted.push(asked_at.elapsed());
        }
        missed += usize::from(tries > 0);
        assert!(!carries(&first.call_value(&summary), &question), "{other} was told of a question to {chosen}");
    }
    let (noted, noted_quiet, plain, plain_quiet) =
        (Stats::of(noted), Stats::of(noted_quiet), Stats::of(plain), Stats::of(plain_quiet));
    let (status, asks) = (Stats::of(status), Stats::of(asks));

    watchdog::phase("a question reaching the chosen agent waiting in await_review");
    let pending = second.call_value(&Call::new(
        "request_review",
        json!({ "summary": "Renamed the second read", "reviewer": "human", "wait_seconds": 0 }),
    ));
    let review = pending["result"]["structuredContent"]["review_id"].as_str().expect("a review id").to_owned();
    let (mut woken, mut asked_while_waiting) = (Vec::new(), Vec::new());
    for n in 0..WAITING_ASKS {
        let call = Call::new("await_review", json!({ "review_id": review, "wait_seconds": 50 }));
        let waiter = std::thread::spawn(move || {
            let answer = second.call_value(&call);
            (second, answer, Instant::now())
        });
        wait_until_waiting(&mut person, &chosen);
        let question = format!("Is twice right? (waiting question {n})");
        let sent = Instant::now();
        person.call("agent/ask", json!({ "agent": chosen, "path": file, "start_line": 2, "message": question }));
        asked_while_waiting.push(sent.elapsed());
        let (back, answer, at) = waiter.join().expect("the waiting agent");
        second = back;
        assert!(carries(&answer, &question), "the wait's answer carries the question: {answer}");
        woken.push(at.duration_since(sent));
    }
    let (woken, asked_while_waiting) = (Stats::of(woken), Stats::of(asked_while_waiting));

    println!(
        "\n## a question → the chosen agent ({ASKS} questions, half of them called 20 ms after the ask; {WAITING_ASKS} to the agent waiting)"
    );
    Stats::print_table(&[
        ("ask answered → the agent's next get_feedback_summary answer, with the note", noted),
        ("the same call carrying the note, made 20 ms after the ask (sent → answer)", noted_quiet),
        ("get_feedback_summary with nothing waiting", plain),
        ("get_feedback_summary with nothing waiting, made after 20 ms idle", plain_quiet),
        ("`status` round trip over the hub", status),
        ("agent/ask sent → its own answer", asks),
        ("agent/ask sent → the waiting agent's await_review answer, with the question", woken),
        ("agent/ask sent → its own answer (the agent waiting)", asked_while_waiting),
    ]);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    report.info(
        "a question (the ask answered) → the chosen agent's next tool answer carrying it (p50 / p99), \
         vs the same call with nothing waiting (p50 / p99)",
        format!(
            "{} / {} vs {} / {} ({:.2}× / {:.2}×); the first answer after the ask lacked the note {missed} of {ASKS} times",
            fmt_duration(noted.median),
            fmt_duration(noted.p99),
            fmt_duration(plain.median),
            fmt_duration(plain.p99),
            ratio(noted.median, plain.median),
            ratio(noted.p99, plain.p99)
        ),
    );
    report.info(
        "the note's own cost: the call carrying it, made 20 ms after the ask, vs the same call with nothing waiting \
         after 20 ms idle (p50)",
        format!(
            "{} vs {} ({:.2}×)",
            fmt_duration(noted_quiet.median),
            fmt_duration(plain_quiet.median),
            ratio(noted_quiet.median, plain_quiet.median)
        ),
    );
    report.info(
        "a question → the next tool answer carrying it, vs a `status` round trip over the hub (p50)",
        format!("{:.1}× ({})", ratio(noted.median, status.median), fmt_duration(status.median)),
    );
    report.info(
        "a question → the chosen agent waiting in `await_review` has it (p50 / p99, from sending the ask), \
         vs the ask's own answer (p50)",
        format!(
            "{} / {} vs {} ({:.2}×)",
            fmt_duration(woken.median),
            fmt_duration(woken.p99),
            fmt_duration(asked_while_waiting.median),
            ratio(woken.median, asked_while_waiting.median)
        ),
    );
    first.close();
    second.close();
    drop(daemon);
}

/// Waits until the daemon lists agent `name` as waiting in `await_review`.
fn wait_until_waiting(person: &mut HubClient, name: &str) {
    let deadline = Instant::now() + STEP;
    loop {
        let listed = person.call("agents/list", json!({}));
        let agent = listed["agents"].as_array().into_iter().flatten().find(|a| a["name"] == json!(name));
        if agent.is_some_and(|a| a["waiting_in"] == json!("await_review")) {
            return;
        }
        assert!(Instant::now() < deadline, "{name} never waited in await_review: {listed}");
        std::thread::sleep(Duration::from_millis(1));
    }
}
