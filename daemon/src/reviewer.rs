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
        CommandLine::Shell(line) => {
            let mut c = tokio::process::Command::new("sh");
            c.arg("-c").arg(line);
            c
        }
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
