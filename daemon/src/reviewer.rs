//! Running the reviewer and test commands: the prompt on stdin, output
//! captured, a timeout, and cancellation — both of which kill the command's
//! whole process group, so a reviewer's own children die with it.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::config::CommandLine;

/// More output than this is cut (a reviewer printing without end).
const MAX_OUTPUT: usize = 16 * 1024 * 1024;
/// How often the caller hears that the command is still running.
const TICK: Duration = Duration::from_secs(2);

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
    process
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = process.spawn().map_err(|source| RunError::Spawn { command: shown.clone(), source })?;
    let group = child.id().and_then(|id| rustix::process::Pid::from_raw(id as i32));
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
    let read_out = async move {
        let mut buf = Vec::new();
        let _ = (&mut stdout).take(MAX_OUTPUT as u64).read_to_end(&mut buf).await;
        buf
    };
    let read_err = async move {
        let mut buf = Vec::new();
        let _ = (&mut stderr).take(MAX_OUTPUT as u64).read_to_end(&mut buf).await;
        buf
    };
    let started = Instant::now();
    let work = async { tokio::join!(feed, read_out, read_err, child.wait()) };
    tokio::pin!(work);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + TICK, TICK);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            (_, out, err, status) = &mut work => {
                let status = status.map_err(|source| RunError::Spawn { command: shown.clone(), source })?;
                return Ok(Finished {
                    success: status.success(),
                    code: status.code(),
                    stdout: String::from_utf8_lossy(&out).into_owned(),
                    stderr: String::from_utf8_lossy(&err).into_owned(),
                    elapsed: started.elapsed(),
                });
            }
            _ = ticker.tick() => tick(started.elapsed()),
            _ = &mut deadline => {
                kill_group(group);
                return Err(RunError::Timeout { command: shown, timeout, partial: String::new() });
            }
            _ = cancel.cancelled() => {
                kill_group(group);
                return Err(RunError::Cancelled { command: shown });
            }
        }
    }
}

/// Kills the command and everything it started (it leads its own group).
fn kill_group(group: Option<rustix::process::Pid>) {
    if let Some(group) = group {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
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
        let line = format!("sh -c 'echo $$ > {}; exec sleep 30' & wait", pidfile.display());
        let cancel = CancellationToken::new();
        let started = Instant::now();
        let err = run(&shell(&line), dir.path(), "", Duration::from_millis(500), &cancel, |_| {})
            .await
            .expect_err("times out");
        assert!(err.to_string().contains("did not finish within 0.5 s"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let pid = std::fs::read_to_string(&pidfile).expect("the child started").trim().to_owned();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(&pid) {
            assert!(Instant::now() < deadline, "the reviewer's child {pid} outlived the timeout");
            std::thread::yield_now();
        }
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
        let err = run(&shell("sleep 30"), Path::new("/"), "", Duration::from_secs(60), &cancel, |_| {})
            .await
            .expect_err("cancelled");
        assert!(matches!(err, RunError::Cancelled { .. }));
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
