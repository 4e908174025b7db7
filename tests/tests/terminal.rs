//! What the `parley` command line shows a person on a real terminal (a
//! pseudo-terminal): an agent's comment, review and round summary, and a
//! repository's file lines, carrying OSC 52 (clipboard), OSC 0 (window
//! title), `CSI 2K` with a carriage return (a line overwritten), SGR 8
//! (concealed text) and U+202E (right-to-left override), are shown as
//! visible escapes by `feedback list`, `inbox`, `review show`, `review diff`
//! and `watch`, never as raw bytes; `--json` keeps them exact. `review diff`
//! is coloured on a terminal (not in a pipe, not with `NO_COLOR`), goes
//! through the pager only when taller than the screen, shows a draft's
//! severity, and can be read again once the round is answered.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Instant;

use parley_tests::{Agent, DEADLINE, Sandbox, git};
use serde_json::{Value, json};

/// Everything an agent could use to take over a terminal, in one comment.
const HOSTILE: &str =
    "hello \u{1b}]0;PWNED\u{7} \u{1b}]52;c;cHduZWQ=\u{7} \u{1b}[2K\r fake-line \u{1b}[8mhidden\u{1b}[0m abc\u{202e}fed";

/// [`HOSTILE`] as a person sees it.
const SHOWN: &str =
    r"hello \x1b]0;PWNED\x07 \x1b]52;c;cHduZWQ=\x07 \x1b[2K\x0d fake-line \x1b[8mhidden\x1b[0m abc\u{202e}fed";

/// The colours `review diff` itself writes.
const OUR_COLOURS: [&str; 7] = ["\x1b[1m", "\x1b[32m", "\x1b[31m", "\x1b[36m", "\x1b[33m", "\x1b[2m", "\x1b[0m"];

/// A `parley` command whose stdout is a terminal; what it printed arrives,
/// chunk by chunk, on the receiver.
struct OnTerminal {
    child: std::process::Child,
    chunks: mpsc::Receiver<Vec<u8>>,
    seen: Vec<u8>,
}

impl OnTerminal {
    fn start(sandbox: &Sandbox, cwd: &Path, args: &[&str], env: &[(&str, &str)], rows: u16) -> OnTerminal {
        let (mut master, slave) = parley_tests::pty(Some(rows));
        let mut command = sandbox.command("parley");
        command.args(args).current_dir(cwd).stdin(Stdio::null()).stdout(slave).stderr(Stdio::inherit());
        command.env_remove("NO_COLOR").env_remove("PAGER").env_remove("PARLEY_PAGER").env_remove("LESS");
        command.env("TERM", "xterm-256color");
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command.spawn().expect("start parley");
        // The command held the only other copy of the slave side: once the
        // child exits, reading the master ends (EIO).
        drop(command);
        let (send, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            while let Ok(n @ 1..) = master.read(&mut chunk) {
                if send.send(chunk[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        OnTerminal { child, chunks, seen: Vec::new() }
    }

    /// Everything printed, once the command has exited (with code 0).
    fn finish(mut self) -> String {
        let deadline = Instant::now() + DEADLINE;
        while let Ok(chunk) = self.chunks.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            self.seen.extend(chunk);
        }
        let status = self.child.wait().expect("wait for parley");
        assert!(status.success(), "parley failed ({status}): {}", terminal_text(&self.seen));
        terminal_text(&self.seen)
    }

    /// What was printed by the time `wanted` appears in it.
    fn until(&mut self, wanted: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        while !terminal_text(&self.seen).contains(wanted) {
            match self.chunks.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(chunk) => self.seen.extend(chunk),
                Err(_) => panic!("{wanted:?} never appeared; printed:\n{}", terminal_text(&self.seen)),
            }
        }
        terminal_text(&self.seen)
    }
}

impl Drop for OnTerminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Terminal output as text, its `\r\n` line ends (the terminal's own) made `\n`.
fn terminal_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace("\r\n", "\n")
}

/// Runs `parley ARGS` on a terminal that does not know its size (so never a
/// pager) and returns what it printed.
fn on_terminal(sandbox: &Sandbox, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    OnTerminal::start(sandbox, cwd, args, env, 0).finish()
}

/// Fails unless `out` shows the hostile text visibly and carries none of it raw.
fn assert_shown_not_obeyed(what: &str, out: &str) {
    assert!(out.contains(SHOWN), "{what}: the hostile text is shown visibly:\n{out}");
    for raw in ['\u{1b}', '\u{7}', '\r', '\u{202e}'] {
        assert!(!out.contains(raw), "{what}: {raw:?} reached the terminal raw:\n{out:?}");
    }
}

/// A repository whose committed `notes.txt` then gets a hostile line, with
/// an agent that comments with the hostile text, presents a review of it,
/// and asks a person to review the change with it as the summary. The
/// round's id.
async fn hostile_repo(sandbox: &Sandbox) -> (PathBuf, Agent, String) {
    let repo = sandbox.repo("app", &[("notes.txt", "one\ntwo\nthree\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    // A carriage return would end the line for the diff; the rest stays.
    std::fs::write(repo.join("notes.txt"), format!("one\n{}\nthree\n", HOSTILE.replace('\r', ""))).expect("edit");
    let agent = sandbox.agent(&repo).await;
    agent.call_ok("add_feedback", json!({ "filePath": "notes.txt", "startLine": 1, "body": HOSTILE })).await;
    agent.call_ok("present_review", json!({ "content": format!("# Walkthrough\n\n{HOSTILE}\n") })).await;
    let id = agent.ask_a_person(json!({ "summary": HOSTILE })).await;
    (repo, agent, id)
}

#[tokio::test]
async fn hostile_text_is_shown_on_a_terminal_not_obeyed_and_json_keeps_it_exact() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let (repo, _agent, id) = hostile_repo(&sandbox).await;
    let (code, out, err) = sandbox.cli(&["review", "comment", &id, "notes.txt:2", HOSTILE]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains('\u{1b}'), "the new draft is shown visibly when piped too: {out:?}");

    let plain = [("NO_COLOR", "1")];
    let list = on_terminal(&sandbox, &repo, &["feedback", "list"], &plain);
    assert_shown_not_obeyed("feedback list", &list);
    let inbox = on_terminal(&sandbox, &repo, &["inbox"], &plain);
    assert_shown_not_obeyed("inbox", &inbox);
    let show = on_terminal(&sandbox, &repo, &["review", "show"], &plain);
    assert_shown_not_obeyed("review show", &show);
    let diff = on_terminal(&sandbox, &repo, &["review", "diff", &id], &plain);
    assert_shown_not_obeyed("review diff", &diff);
    let line = format!("        2 │+{}\n", SHOWN.replace(r"\x0d", ""));
    assert!(diff.contains(&line), "the file's line, numbered:\n{diff}");
    assert!(diff.contains(&format!("▸ d1 notes.txt:2: {SHOWN}")), "the draft:\n{diff}");

    // Coloured, the only escapes on the terminal are the diff's own colours.
    let coloured = on_terminal(&sandbox, &repo, &["review", "diff", &id], &[]);
    assert!(coloured.contains("\x1b[32m        2 │+hello"), "added lines are green:\n{coloured:?}");
    let mut without_ours = coloured.clone();
    for colour in OUR_COLOURS {
        without_ours = without_ours.replace(colour, "");
    }
    assert_shown_not_obeyed("review diff in colour", &without_ours);

    let mut watch = OnTerminal::start(&sandbox, &repo, &["watch"], &plain, 0);
    let watched = watch.until("abc\\u{202e}fed");
    assert_shown_not_obeyed("watch", &watched);
    drop(watch);

    // --json: the exact text, for scripts.
    let json = |args: &[&str]| -> Value {
        let out = on_terminal(&sandbox, &repo, args, &plain);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?} prints JSON ({e}): {out}"))
    };
    assert_eq!(json(&["feedback", "list", "--json"])[0]["comments"][0]["body"], HOSTILE);
    assert_eq!(json(&["inbox", "--json"])["rounds"][0]["summary"], HOSTILE);
    assert_eq!(json(&["review", "show", "--json"])["reviews"][0]["content"], format!("# Walkthrough\n\n{HOSTILE}\n"));
    let round = json(&["review", "diff", &id, "--json"]);
    assert_eq!((&round["summary"], &round["drafts"][0]["body"]), (&json!(HOSTILE), &json!(HOSTILE)));
    let after = round["files"][0]["after"].as_str().unwrap_or_default();
    assert!(after.contains(&HOSTILE.replace('\r', "")), "{round:#}");
}

/// A pager that writes what it was given, and its `LESS`, beside `into`.
fn recording_pager(into: &Path) -> String {
    let into = into.display();
    format!("printf '%s' \"$LESS\" > {into}.less; cat > {into}; echo paged-by-the-test")
}

#[tokio::test]
async fn review_diff_is_coloured_and_paged_on_a_terminal_only_and_readable_after_submitting() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let lines: String = (1..=60).map(|n| format!("line {n}\n")).collect();
    let repo = sandbox.repo("long", &[("long.txt", &lines)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("long.txt"), lines.replace("line 10\n", "line ten\n").replace("line 50\n", ""))
        .expect("edit");
    let agent = sandbox.agent(&repo).await;
    let id = agent.ask_a_person(json!({ "summary": "Renamed ten" })).await;
    let (code, out, err) =
        sandbox.cli(&["review", "comment", &id, "long.txt:50", "--side", "old", "--severity", "critical", "Keep 50"]);
    assert_eq!(code, 0, "{out}{err}");

    // Taller than a 10-row terminal: through the pager, in colour, LESS=FRX.
    let paged = sandbox.dir.path().join("paged");
    let pager = recording_pager(&paged);
    let shown = OnTerminal::start(&sandbox, &repo, &["review", "diff", &id], &[("PAGER", &pager)], 10).finish();
    assert!(shown.contains("paged-by-the-test") && !shown.contains("line ten"), "the pager showed it:\n{shown}");
    let through_pager = std::fs::read_to_string(&paged).expect("the pager got the diff");
    assert!(through_pager.contains("\x1b[32m       10 │+line ten\x1b[0m"), "added lines are green: {through_pager:?}");
    assert!(through_pager.contains("\x1b[31m"), "removed lines are red: {through_pager:?}");
    assert!(through_pager.contains("d1 long.txt:50 (old side) [critical]: Keep 50"), "{through_pager}");
    assert_eq!(std::fs::read_to_string(format!("{}.less", paged.display())).expect("LESS recorded"), "FRX");

    // PARLEY_PAGER wins over PAGER; `--color never` keeps it plain.
    std::fs::remove_file(&paged).expect("remove");
    let env = [("PAGER", "false"), ("PARLEY_PAGER", pager.as_str())];
    OnTerminal::start(&sandbox, &repo, &["review", "diff", &id, "--color", "never"], &env, 10).finish();
    let plain = std::fs::read_to_string(&paged).expect("PARLEY_PAGER got the diff");
    assert!(plain.contains("│+line ten") && !plain.contains('\u{1b}'), "{plain:?}");

    // It fits a 200-row terminal: printed straight, no pager.
    std::fs::remove_file(&paged).expect("remove");
    let straight = OnTerminal::start(&sandbox, &repo, &["review", "diff", &id], &[("PAGER", &pager)], 200).finish();
    assert!(straight.contains("│+line ten") && !paged.exists(), "no pager for what fits:\n{straight}");

    // In a pipe: no pager and no colour, unless asked for.
    let (code, piped, err) = sandbox.cli(&["review", "diff", &id]);
    assert_eq!(code, 0, "{err}");
    assert!(piped.contains("│+line ten") && !piped.contains('\u{1b}') && !paged.exists(), "{piped:?}");
    let (_, forced, _) = sandbox.cli(&["review", "diff", &id, "--color", "always"]);
    assert!(forced.contains("\x1b[32m"), "{forced:?}");

    // Once submitted, the round can be read again, with what was sent.
    let (code, out, err) = sandbox.cli(&["review", "submit", &id, "--request-changes", "-m", "One thing"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, again, err) = sandbox.cli(&["review", "diff", &id]);
    assert_eq!(code, 0, "the answered round is shown again: {err}");
    assert!(again.contains("round 1 · answered needs_changes by"), "{again}");
    assert!(again.contains("│+line ten"), "{again}");
    assert!(again.contains("[critical] long.txt:") && again.contains("Keep 50"), "the comment as sent:\n{again}");
    let (code, by_number, _) = sandbox.cli(&["review", "diff", &id, "--round", "1"]);
    assert_eq!((code, by_number), (0, again));
    let (code, _, err) = sandbox.cli(&["review", "diff", &id, "--round", "2"]);
    assert_eq!(code, 1);
    assert!(err.contains("one answered round, round 1"), "{err}");
}
