//! Rounds a person answers (issue 12 item 10), on the real release
//! binaries: how long the person's submit takes to reach an agent waiting in
//! `await_review` (p50, p99), against the submit's own answer to the person
//! in the same round; and the inbox with 1,000 rounds waiting, against the
//! inbox of a daemon with one.
//!
//! ```sh
//! cargo build --release --workspace
//! cargo bench -p parley-tests --bench person
//! ```
//!
//! It prints a report and asserts nothing about timings.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use parley_tests::bench::{
    Call, HubClient, LineChild, Report, Stats, fmt_duration, shim_command, start_daemon, watchdog,
};
use parley_tests::{Sandbox, bin, git};
use serde_json::{Value, json};

/// The whole run, whatever happens.
const RUN_LIMIT: Duration = Duration::from_secs(900);
/// Rounds whose submit is timed.
const SUBMITS: usize = 40;
/// Rounds waiting in the big inbox.
const WAITING: usize = 1000;
/// Inbox reads per daemon.
const READS: usize = 30;

/// A repository with a committed file and an uncommitted change to it.
fn project(sandbox: &Sandbox) -> PathBuf {
    let text: String = (1..=200).map(|n| format!("let x{n} = {n};\n")).collect();
    let repo = sandbox.repo("proj", &[("src/lib.rs", &text)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join(".gitignore"), ".reviews/\n").expect("gitignore");
    std::fs::write(repo.join("src/lib.rs"), text.replace("let x7 = 7;", "let x7 = 7 * 1;")).expect("edit");
    repo
}

fn structured(answer: &Value) -> &Value {
    &answer["result"]["structuredContent"]
}

/// Asks for a human review in a new session, and waits until the round
/// reaches the person (the call answers at once, the round once its diff is
/// captured); its id.
fn ask(agent: &mut LineChild) -> String {
    let args = json!({ "summary": "bench", "reviewer": "human", "wait_seconds": 0 });
    let pending = agent.call_value(&Call::new("request_review", args));
    assert_eq!(structured(&pending)["status"], json!("pending"), "{pending}");
    let id = structured(&pending)["review_id"].as_str().expect("an id").to_owned();
    let mut step = structured(&pending)["step"].clone();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while !step.as_str().is_some_and(|s| s.starts_with("waiting for")) {
        assert!(std::time::Instant::now() < deadline, "round of review {id} never reached the person: {step}");
        std::thread::sleep(Duration::from_millis(5));
        let args = json!({ "review_id": id, "wait_seconds": 0 });
        step = structured(&agent.call_value(&Call::new("await_review", args)))["step"].clone();
    }
    id
}

fn main() {
    watchdog::start(RUN_LIMIT);
    let mut report = Report::new("person");
    println!("using {} and {}", bin("parley").display(), bin("parley-mcp").display());

    watchdog::phase("the person's submit reaching an awaiting agent");
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let daemon = start_daemon(&sandbox);
    let mut agent = LineChild::spawn(shim_command(&sandbox, &repo));
    agent.handshake();
    let mut person = HubClient::connect(&sandbox.socket, &repo);
    let (mut reached, mut answered) = (Vec::new(), Vec::new());
    for _ in 0..SUBMITS {
        let id = ask(&mut agent);
        person.call(
            "round/comment",
            json!({ "review_id": id, "path": "src/lib.rs", "start_line": 6, "body": "Why times one?" }),
        );
        let waiting_id = id.clone();
        let waiter = std::thread::spawn(move || {
            let done =
                agent.call_value(&Call::new("await_review", json!({ "review_id": waiting_id, "wait_seconds": 50 })));
            (agent, done, Instant::now())
        });
        // The agent's call is waiting in the daemon before the person submits.
        std::thread::sleep(Duration::from_millis(100));
        let submitted = Instant::now();
        person.call("round/submit", json!({ "review_id": id, "verdict": "request_changes" }));
        answered.push(submitted.elapsed());
        let (back, done, at) = waiter.join().expect("the waiting agent");
        agent = back;
        assert_eq!(structured(&done)["verdict"], json!("needs_changes"), "{done}");
        reached.push(at.duration_since(submitted));
    }
    let (reached, answered) = (Stats::of(reached), Stats::of(answered));
    Stats::print_table(&[
        ("submit → the agent's await_review answered", reached),
        ("submit → the person's own answer", answered),
    ]);
    let ratio = reached.median.as_secs_f64() / answered.median.as_secs_f64().max(1e-9);
    report.row(
        "the person's submit → the awaiting agent's result (p50 / p99), vs the submit's own answer (p50)",
        "≈ 1×",
        format!(
            "{} / {} vs {} ({ratio:.2}×)",
            fmt_duration(reached.median),
            fmt_duration(reached.p99),
            fmt_duration(answered.median)
        ),
        ratio < 1.5,
    );
    agent.close();
    drop(daemon);

    watchdog::phase("the inbox with 1,000 rounds waiting");
    let big = inbox_reads(WAITING);
    let small = inbox_reads(1);
    Stats::print_table(&[("inbox, 1,000 rounds waiting", big.0), ("inbox, 1 round waiting", small.0)]);
    Stats::print_table(&[("parley inbox, 1,000 rounds", big.1), ("parley inbox, 1 round", small.1)]);
    report.row(
        "the inbox (hub) with 1,000 rounds waiting vs with 1 (p50)",
        "—",
        format!(
            "{} vs {} ({:.1}×)",
            fmt_duration(big.0.median),
            fmt_duration(small.0.median),
            big.0.median.as_secs_f64() / small.0.median.as_secs_f64().max(1e-9)
        ),
        true,
    );
    report.row(
        "`parley inbox` with 1,000 rounds waiting vs with 1 (p50, the whole command)",
        "—",
        format!(
            "{} vs {} ({:.1}×)",
            fmt_duration(big.1.median),
            fmt_duration(small.1.median),
            big.1.median.as_secs_f64() / small.1.median.as_secs_f64().max(1e-9)
        ),
        true,
    );
    report.print();
}

/// A fresh daemon with `waiting` rounds asked of a person: the hub's inbox
/// read and the `parley inbox` command, timed.
fn inbox_reads(waiting: usize) -> (Stats, Stats) {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let daemon = start_daemon(&sandbox);
    let mut agent = LineChild::spawn(shim_command(&sandbox, &repo));
    agent.handshake();
    for _ in 0..waiting {
        ask(&mut agent);
    }
    let mut hub = HubClient::connect(&sandbox.socket, &repo);
    let mut reads = Vec::new();
    for _ in 0..READS {
        let started = Instant::now();
        let inbox = hub.call("inbox", json!({}));
        reads.push(started.elapsed());
        assert_eq!(inbox["rounds"].as_array().map(Vec::len), Some(waiting));
    }
    let mut commands = Vec::new();
    for _ in 0..READS / 3 {
        let started = Instant::now();
        let (code, out, _) = sandbox.cli(&["inbox"]);
        commands.push(started.elapsed());
        assert!(code == 0 && out.contains("Reviews asked of you"), "{out}");
    }
    agent.close();
    drop(daemon);
    (Stats::of(reads), Stats::of(commands))
}
