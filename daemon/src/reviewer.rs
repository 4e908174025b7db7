//! Running the reviewer and test commands: the prompt on stdin, output
//! captured, a timeout, and cancellation. The command leads a process group
//! of its own (a Job Object on Windows), killed whole after every run
//! (finished, timed out or cancelled), so whatever it started dies with it; and a command is done
//! when it exits, even if something it left running holds its output open.

use std::path::Path;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::config::CommandLine;

#[cfg(unix)]
#[path = "reviewer/unix.rs"]
mod group;
#[cfg(windows)]
#[path = "reviewer/windows.rs"]
mod group;

/// More output than this is cut (a reviewer printing without end).
const MAX_OUTPUT: usize = 16 * 1024 * 1024;
/// How often the caller hears that the command is still running.
const TICK: Duration = Duration::from_secs(2);
/// How long output is still read once the command has exited: what it
/// left running (a dev server a test command started, say) may hold its
/// output open, and is not waited for.
const GRACE: Duration = Duration::from_secs(2);

/// What a finished command printed.
#[derive(Debug, Clone)]
pub struct Finished {
    pub success: bool,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Why a command did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot start `{command}`: {source}; check `reviewer` (or `test_command`) under [review] in your config")]
    Spawn { command: String, source: std::io::Error },
    #[error("`{command}` did not finish within {:.1} s and was stopped{}", timeout.as_secs_f32(), excerpt(partial))]
    Timeout { command: String, timeout: Duration, partial: String },
    #[error("cancelled: `{command}` was stopped")]
    Cancelled { command: String },
}

/// The first ~400 characters of some output, for error messages.
pub fn excerpt(output: &str) -> String {
    let trimmed = output.trim();
    if trimmed.is_empty() {
        return String::new();
    }
    let mut cut: String = trimmed.chars().take(400).collect();
    if cut.len() < trimmed.len() {
        cut.push('…');
    }
    format!("; it printed: {cut}")
}

/// Runs `command` in `cwd` with `input` on stdin. `tick` is called every
/// couple of seconds with the time so far.
pub async fn run(
    command: &CommandLine,
    env: &std::collections::BTreeMap<String, String>,
    cwd: &Path,
    input: &str,
    timeout: Duration,
    cancel: &CancellationToken,
    mut tick: impl FnMut(Duration),
) -> Result<Finished, RunError> {
    let shown = command.to_string();
    let mut process = match command {
        CommandLine::Shell(line) => group::shell(line),
        CommandLine::Argv(argv) => {
            let mut c = tokio::process::Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
    };
    // Exactly the environment built for it (`config::command_env`): nothing
    // of the daemon's own, which may hold whatever its starter had.
    process
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    group::lead_own_group(&mut process);
    let mut child = process.spawn().map_err(|source| RunError::Spawn { command: shown.clone(), source })?;
    let group = group::led_by(&child);
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let input = input.as_bytes().to_vec();
    // A reviewer may exit without reading all of its input; that is its business.
    let feed = async move {
        if let Some(stdin) = stdin.as_mut() {
            let _ = stdin.write_all(&input).await;
        }
        drop(stdin);
    };
    // Output is gathered as it arrives so a timeout can quote what came.
    let out = Mutex::new(Vec::new());
    let err = Mutex::new(Vec::new());
    let read_out = collect(&mut stdout, &out);
    let read_err = collect(&mut stderr, &err);
    let started = Instant::now();
    let work = async {
        let reading = async {
            tokio::join!(feed, read_out, read_err);
        };
        tokio::pin!(reading);
        let mut read = false;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status,
                () = &mut reading, if !read => read = true,
            }
        };
        if !read {
            let _ = tokio::time::timeout(GRACE, &mut reading).await;
        }
        status
    };
    tokio::pin!(work);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + TICK, TICK);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let outcome = loop {
        tokio::select! {
            status = &mut work => {
                break status.map_err(|source| RunError::Spawn { command: shown.clone(), source }).map(|status| Finished {
                    success: status.success(),
                    code: status.code(),
                    stdout: String::from_utf8_lossy(&lock(&out)).into_owned(),
                    stderr: String::from_utf8_lossy(&lock(&err)).into_owned(),
                    elapsed: started.elapsed(),
                });
            }
            _ = ticker.tick() => tick(started.elapsed()),
            _ = &mut deadline => {
                let printed = if lock(&out).iter().any(|b| !b.is_ascii_whitespace()) { &out } else { &err };
                let partial = String::from_utf8_lossy(&lock(printed)).into_owned();
                break Err(RunError::Timeout { command: shown, timeout, partial });
            }
            _ = cancel.cancelled() => break Err(RunError::Cancelled { command: shown }),
        }
    };
    // Whatever it started (and left running) ends with the run.
    group::kill(group);
    outcome
}

fn lock(buf: &Mutex<Vec<u8>>) -> std::sync::MutexGuard<'_, Vec<u8>> {
    buf.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads `from` to its end (or the output cap) into `into`, a chunk at a
/// time; the buffer is never locked across an await.
async fn collect(from: &mut (impl tokio::io::AsyncRead + Unpin), into: &Mutex<Vec<u8>>) {
    let mut chunk = [0u8; 8192];
    loop {
        match from.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut buf = lock(into);
                let room = MAX_OUTPUT.saturating_sub(buf.len());
                buf.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    fn shell(line: &str) -> CommandLine {
        CommandLine::Shell(line.into())
    }

    #[tokio::test]
    async fn passes_the_input_and_captures_the_output() {
        let cancel = CancellationToken::new();
        let done = run(
            &shell("tr a-z A-Z; echo oops >&2; exit 3"),
            &Default::default(),
            Path::new("/"),
            "hello",
            Duration::from_secs(10),
            &cancel,
            |_| {},
        )
        .await
        .expect("runs");
        assert_eq!(
            (done.stdout.as_str(), done.stderr.as_str(), done.code, done.success),
            ("HELLO", "oops\n", Some(3), false)
        );
    }

    /// Whether a process is gone (or a zombie waiting to be reaped).
    fn gone(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
            Err(_) => true,
        }
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("child.pid");
        // The reviewer starts a child of its own, which records its pid.
        let line = format!("echo thinking hard; sh -c 'echo $$ > {}; exec sleep 30' & wait", pidfile.display());
        let cancel = CancellationToken::new();
        let started = Instant::now();
        let err = run(&shell(&line), &Default::default(), dir.path(), "", Duration::from_millis(500), &cancel, |_| {})
            .await
            .expect_err("times out");
        assert!(err.to_string().contains("did not finish within 0.5 s"), "{err}");
        assert!(err.to_string().ends_with("it printed: thinking hard"), "the timeout quotes what came: {err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let pid = std::fs::read_to_string(&pidfile).expect("the child started").trim().to_owned();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(&pid) {
            assert!(Instant::now() < deadline, "the reviewer's child {pid} outlived the timeout");
            std::thread::yield_now();
        }
    }

    /// Waits (failing loudly) until process `pid` is gone.
    fn wait_until_gone(pid: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(pid) {
            assert!(Instant::now() < deadline, "{what} {pid} outlived the run");
            std::thread::yield_now();
        }
    }

    /// A command line starting a background `sleep` (redirected as
    /// `redirect` says) that records its pid, waiting until it has, then
    /// printing `done` and exiting.
    fn leaves_a_child(pidfile: &Path, redirect: &str) -> CommandLine {
        let pid = pidfile.display();
        shell(&format!(
            "cat >/dev/null; sh -c 'echo $$ > {pid}; exec sleep 300' {redirect} & \
             while [ ! -s {pid} ]; do sleep 0.01; done; echo done"
        ))
    }

    #[tokio::test]
    async fn a_command_is_done_when_it_exits_though_its_child_holds_its_output() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("child.pid");
        let cancel = CancellationToken::new();
        // Before, the run waited for the end of output, which the child
        // holds for 300 s: the timeout struck instead.
        let done = run(
            &leaves_a_child(&pidfile, ""),
            &Default::default(),
            dir.path(),
            "the prompt",
            Duration::from_secs(30),
            &cancel,
            |_| {},
        )
        .await
        .expect("finishes once the command exits");
        assert_eq!((done.stdout.as_str(), done.success), ("done\n", true));
        let pid = std::fs::read_to_string(&pidfile).expect("the child started").trim().to_owned();
        wait_until_gone(&pid, "the child holding the output");
    }

    #[tokio::test]
    async fn what_a_finished_command_left_running_is_killed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("child.pid");
        let cancel = CancellationToken::new();
        let done = run(
            &leaves_a_child(&pidfile, ">/dev/null 2>&1 </dev/null"),
            &Default::default(),
            dir.path(),
            "",
            Duration::from_secs(30),
            &cancel,
            |_| {},
        )
        .await
        .expect("runs");
        assert_eq!(done.stdout, "done\n");
        let pid = std::fs::read_to_string(&pidfile).expect("the child started").trim().to_owned();
        wait_until_gone(&pid, "the background child");
    }

    #[tokio::test]
    async fn cancellation_stops_it() {
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            trigger.cancel();
        });
        let started = Instant::now();
        let err =
            run(&shell("sleep 30"), &Default::default(), Path::new("/"), "", Duration::from_secs(60), &cancel, |_| {})
                .await
                .expect_err("cancelled");
        assert!(matches!(err, RunError::Cancelled { .. }));
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

/// The same runs on Windows, with real `cmd` scripts (scripts/test runs
/// them under Wine): the command starts suspended and runs once it is in
/// its Job Object, and what it started ends with the run, whether the run
/// finished, timed out or was cancelled.
#[cfg(test)]
#[cfg(windows)]
mod tests {
    use super::*;

    /// How long the left-behind child waits (a `ping` of this many
    /// seconds) before it writes `late.txt`: longer than a run takes.
    const LATE_AFTER_SECS: u64 = 6;

    /// Writes the script `name` into `dir` (with CRLF lines, as `cmd`
    /// expects) and gives the reviewer command that runs it.
    fn script(dir: &Path, name: &str, lines: &[&str]) -> CommandLine {
        let path = dir.join(name);
        std::fs::write(&path, lines.join("\r\n") + "\r\n").expect("write the script");
        CommandLine::Argv(vec!["cmd".into(), "/d".into(), "/c".into(), path.display().to_string()])
    }

    /// The environment a real run gets.
    fn env() -> std::collections::BTreeMap<String, String> {
        crate::config::command_env(&Default::default(), &[])
    }

    /// A reviewer that starts a child in the background which would
    /// outlive it, waits until that child has started, prints `ready`,
    /// then (when `then` says so) keeps running. The child writes
    /// `started.txt`, and `late.txt` [`LATE_AFTER_SECS`] later.
    fn leaves_a_child(dir: &Path, then: &str) -> CommandLine {
        let late = dir.join("late.txt");
        let started = dir.join("started.txt");
        let ping = format!("ping -n {} 127.0.0.1 >nul", LATE_AFTER_SECS + 1);
        script(
            dir,
            "child.cmd",
            &[
                "@echo off",
                &format!("echo started>\"{}\"", started.display()),
                &ping,
                &format!("echo late>\"{}\"", late.display()),
            ],
        );
        let child = dir.join("child.cmd");
        script(
            dir,
            "reviewer.cmd",
            &[
                "@echo off",
                "echo thinking hard",
                &format!("start \"\" /b cmd /d /c \"{}\"", child.display()),
                ":wait",
                &format!("if not exist \"{}\" goto wait", started.display()),
                "echo ready",
                then,
            ],
        )
    }

    /// Called once the run is over: fails if `late.txt` appears by the time
    /// the child (started before the run ended) would have written it, with
    /// a second to spare. The child must have been killed with the run.
    fn assert_the_child_never_writes(dir: &Path) {
        assert!(dir.join("started.txt").is_file(), "the reviewer's child never started");
        assert!(!dir.join("late.txt").exists(), "the run took so long that the child wrote late.txt before it ended");
        let window = Instant::now() + Duration::from_secs(LATE_AFTER_SECS + 1);
        while Instant::now() < window {
            assert!(!dir.join("late.txt").exists(), "the reviewer's child outlived the run and wrote late.txt");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    #[tokio::test]
    async fn a_command_started_suspended_runs_and_answers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let reviewer = script(dir.path(), "reviewer.cmd", &["@echo off", "more", "echo oops>&2", "exit /b 3"]);
        let cancel = CancellationToken::new();
        let done = run(&reviewer, &env(), dir.path(), "the prompt\r\n", Duration::from_secs(30), &cancel, |_| {})
            .await
            .expect("runs");
        assert_eq!(
            (done.stdout.trim_end(), done.stderr.trim_end(), done.code, done.success),
            ("the prompt", "oops", Some(3), false)
        );
    }

    #[tokio::test]
    async fn a_command_written_as_one_line_runs_through_cmd() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("in file.txt"), "from a file\r\n").expect("write");
        let line = CommandLine::Shell(r#"type "in file.txt" & echo oops 1>&2 & exit /b 4"#.into());
        let cancel = CancellationToken::new();
        let done = run(&line, &env(), dir.path(), "", Duration::from_secs(30), &cancel, |_| {}).await.expect("runs");
        assert_eq!((done.stdout.trim_end(), done.stderr.trim_end(), done.code), ("from a file", "oops", Some(4)));
    }

    #[tokio::test]
    async fn a_command_gets_what_windows_programs_need_and_the_askers_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let names = ["SystemRoot", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP"];
        let mut lines = vec!["@echo off".to_owned(), "echo PATH=%PATH%".to_owned()];
        lines.extend(names.iter().map(|name| format!("echo {name}=%{name}%")));
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let reviewer = script(dir.path(), "reviewer.cmd", &lines);
        // Windows names it `Path`; the daemon's own (under Wine, `PATH`) gives way.
        let asker = [("Path".to_owned(), r"C:\asker\bin;C:\windows\system32".to_owned())].into();
        let env = crate::config::command_env(&asker, &[]);
        let cancel = CancellationToken::new();
        let done = run(&reviewer, &env, dir.path(), "", Duration::from_secs(30), &cancel, |_| {}).await.expect("runs");
        assert!(done.stdout.contains("PATH=C:\\asker\\bin;C:\\windows\\system32\r\n"), "{}", done.stdout);
        for name in names {
            let own = std::env::var(name).expect("the test runs with the variable set");
            assert!(done.stdout.contains(&format!("{name}={own}\r\n")), "{name} is missing:\n{}", done.stdout);
        }
    }

    #[tokio::test]
    async fn what_a_finished_command_left_running_is_killed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cancel = CancellationToken::new();
        let done = run(
            &leaves_a_child(dir.path(), "exit /b 0"),
            &env(),
            dir.path(),
            "",
            Duration::from_secs(30),
            &cancel,
            |_| {},
        )
        .await
        .expect("finishes once the command exits");
        assert_eq!((done.stdout.replace("\r\n", "\n").as_str(), done.success), ("thinking hard\nready\n", true));
        assert_the_child_never_writes(dir.path());
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_tree() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cancel = CancellationToken::new();
        let reviewer = leaves_a_child(dir.path(), "ping -n 60 127.0.0.1 >nul");
        let err = run(&reviewer, &env(), dir.path(), "", Duration::from_secs(3), &cancel, |_| {})
            .await
            .expect_err("times out");
        assert!(err.to_string().contains("did not finish within 3.0 s"), "{err}");
        assert!(err.to_string().contains("it printed: thinking hard"), "the timeout quotes what came: {err}");
        assert_the_child_never_writes(dir.path());
    }

    #[tokio::test]
    async fn cancelling_kills_the_whole_tree() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        let started = dir.path().join("started.txt");
        // Cancelled once the child runs, as a person would while it works.
        tokio::spawn(async move {
            while !started.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            trigger.cancel();
        });
        let reviewer = leaves_a_child(dir.path(), "ping -n 60 127.0.0.1 >nul");
        let err = run(&reviewer, &env(), dir.path(), "", Duration::from_secs(60), &cancel, |_| {})
            .await
            .expect_err("cancelled");
        assert!(matches!(err, RunError::Cancelled { .. }), "{err}");
        assert_the_child_never_writes(dir.path());
    }
}
