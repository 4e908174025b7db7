//! Review rounds (issue 11 item 9), measured on the real release binaries
//! with the stand-in reviewer (`tests/fixtures/fake_reviewer.py`), which
//! notes the moment it prints its review: how long a finished round takes
//! to reach an agent waiting in `await_review` after a `pending` answer,
//! against one waiting in the `request_review` call itself; and how long a
//! round takes from the reviewer's review to the agent's answer when the
//! review has 500 findings on a file (each becoming a thread), against one
//! whose review has none.
//!
//! ```sh
//! cargo build --release --workspace
//! cargo bench -p parley-tests --bench rounds
//! ```
//!
//! It prints a report and asserts nothing about timings.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parley_tests::bench::{Call, LineChild, Report, Stats, fmt_duration, shim_command, start_daemon, watchdog};
use parley_tests::{Sandbox, bin, git};
use serde_json::{Value, json};

/// The whole run, whatever happens.
const RUN_LIMIT: Duration = Duration::from_secs(900);
/// Rounds per way of waiting.
const ROUNDS: usize = 8;
/// Rounds per review size.
const FINDING_RUNS: usize = 3;
const FINDINGS: usize = 500;

fn fake_reviewer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake_reviewer.py")
}

/// A repository with a committed file and an uncommitted change to it, and
/// the stand-in reviewer configured in `mode`.
fn project(sandbox: &Sandbox, mode: &str) -> PathBuf {
    let big: String = (1..=600).map(|n| format!("let x{n} = {n};\n")).collect();
    let repo = sandbox.repo("proj", &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"), ("src/big.rs", &big)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join(".gitignore"), ".fake-reviewer/\n.reviews/\n").expect("gitignore");
    std::fs::write(repo.join("src/lib.rs"), "pub fn answer() -> u32 {\n    41 + 1\n}\n").expect("edit");
    let config = format!(
        "[review]\nreviewer = [\"python3\", {:?}, {mode:?}]\naudit = false\nreviewer_name = \"bench\"\n",
        fake_reviewer().display().to_string()
    );
    let dir = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), config).expect("config");
    repo
}

fn now_secs() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// From the reviewer printing its review to `answered` (seconds since the epoch).
fn since_review(repo: &Path, answered: f64) -> Duration {
    let ended: f64 = std::fs::read_to_string(repo.join(".fake-reviewer/ended"))
        .expect("the reviewer noted when it ended")
        .trim()
        .parse()
        .expect("a time");
    Duration::from_secs_f64((answered - ended).max(0.0))
}

fn structured(answer: &Value) -> &Value {
    &answer["result"]["structuredContent"]
}

fn main() {
    watchdog::start(RUN_LIMIT);
    let mut report = Report::new("rounds");
    println!("using {} and {}", bin("parley").display(), bin("parley-mcp").display());

    watchdog::phase("a finished round reaching an awaiting agent");
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "after:0.3");
    let _daemon = start_daemon(&sandbox);
    let mut agent = LineChild::spawn(shim_command(&sandbox, &repo));
    agent.handshake();
    let (mut awaited, mut waited) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let pending = agent.call_value(&Call::new("request_review", json!({"summary": "bench", "wait_seconds": 0})));
        assert_eq!(structured(&pending)["status"], json!("pending"), "{pending}");
        let id = structured(&pending)["review_id"].clone();
        let done = agent.call_value(&Call::new("await_review", json!({ "review_id": id })));
        awaited.push(since_review(&repo, now_secs()));
        assert_eq!(structured(&done)["round"], json!(1), "{done}");
        let done = agent.call_value(&Call::new("request_review", json!({"summary": "bench"})));
        waited.push(since_review(&repo, now_secs()));
        assert!(structured(&done)["verdict"].is_string(), "{done}");
    }
    let (awaited, waited) = (Stats::of(awaited), Stats::of(waited));
    Stats::print_table(&[
        ("review printed → await_review answered", awaited),
        ("review printed → request_review answered", waited),
    ]);
    let ratio = awaited.median.as_secs_f64() / waited.median.as_secs_f64().max(1e-9);
    report.row(
        "a finished round → the agent in await_review, vs one waiting in request_review (p50)",
        "≈ 1×",
        format!("{} vs {} ({ratio:.2}×)", fmt_duration(awaited.median), fmt_duration(waited.median)),
        ratio < 1.5,
    );
    agent.close();
    drop(_daemon);

    watchdog::phase("a 500-finding review made into threads");
    let (mut many, mut none) = (Vec::new(), Vec::new());
    for _ in 0..FINDING_RUNS {
        for (mode, samples) in [(format!("findings:{FINDINGS}"), &mut many), ("findings:0".to_owned(), &mut none)] {
            let sandbox = Sandbox::new();
            let repo = project(&sandbox, &mode);
            let daemon = start_daemon(&sandbox);
            let mut agent = LineChild::spawn(shim_command(&sandbox, &repo));
            agent.handshake();
            let done = agent.call_value(&Call::new("request_review", json!({"summary": "bench"})));
            samples.push(since_review(&repo, now_secs()));
            assert!(structured(&done)["verdict"].is_string(), "{done}");
            let summary = agent.call_value(&Call::new("get_feedback_summary", json!({})));
            let want = if mode.ends_with(":0") { 0 } else { FINDINGS };
            assert_eq!(structured(&summary)["totalThreads"], json!(want), "{summary}");
            agent.close();
            drop(daemon);
        }
    }
    let (many, none) = (Stats::of(many), Stats::of(none));
    Stats::print_table(&[
        ("500 findings: review printed → answered", many),
        ("no findings: review printed → answered", none),
    ]);
    let per_finding = many.median.saturating_sub(none.median) / FINDINGS as u32;
    report.row(
        "a 500-finding review made into threads, from the review to the answer (p50), vs one with none",
        "—",
        format!(
            "{} vs {} ({:.1}×; {} per finding)",
            fmt_duration(many.median),
            fmt_duration(none.median),
            many.median.as_secs_f64() / none.median.as_secs_f64().max(1e-9),
            fmt_duration(per_finding)
        ),
        true,
    );
    report.print();
}
