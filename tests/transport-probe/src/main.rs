//! `transport-probe`: times round trips on one OS, for `benches/transport.rs`.
//!
//! It is built for Linux and for Windows (and run there under Wine) so that
//! the same code measures both transports:
//!
//! - `transport-probe hub ENDPOINT ROUNDS` connects to a daemon's hub (a Unix
//!   socket path, or a named pipe such as `\\.\pipe\parley-…` on Windows),
//!   says `hello` as a CLI, then times `ROUNDS` `status` requests, each sent
//!   once the previous answer is in.
//! - `transport-probe echo ROUNDS REQUEST_BYTES ANSWER_BYTES` starts itself as
//!   a child (`transport-probe cat ANSWER_BYTES`) on anonymous pipes and times
//!   `ROUNDS` lines of `REQUEST_BYTES` answered by lines of `ANSWER_BYTES`:
//!   the cheapest round trip the OS offers between two processes, the
//!   yardstick for the hub's.
//!
//! Each mode prints one JSON line: the median, 99th percentile and mean in
//! nanoseconds, and the sizes of a request and its answer.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::jsonrpc::{Id, Request, to_line};
use serde_json::json;

mod endpoint;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let outcome = match args.as_slice() {
        ["hub", endpoint, rounds] => number(rounds).and_then(|rounds| hub(endpoint, rounds)),
        ["echo", rounds, request, answer] => {
            number(rounds).and_then(|r| Ok((r, number(request)?, number(answer)?))).and_then(|(r, q, a)| echo(r, q, a))
        }
        ["cat", answer] => number(answer).and_then(cat),
        _ => Err("usage: transport-probe hub ENDPOINT ROUNDS | echo ROUNDS REQUEST_BYTES ANSWER_BYTES".into()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("transport-probe: {why}");
            ExitCode::FAILURE
        }
    }
}

fn number(text: &str) -> Result<usize, String> {
    text.parse().map_err(|_| format!("`{text}` is not a whole number"))
}

/// `status` round trips on one hub connection.
fn hub(endpoint: &str, rounds: usize) -> Result<(), String> {
    let stream = endpoint::connect(endpoint).map_err(|e| format!("cannot connect to {endpoint}: {e}"))?;
    let mut writer = stream.try_clone().map_err(|e| format!("cannot share the connection: {e}"))?;
    let mut reader = BufReader::new(stream);
    let cwd = std::env::current_dir().map_err(|e| format!("no current folder: {e}"))?;
    let hello = Hello {
        protocol: parley_protocol::PROTOCOL_VERSION,
        role: Role::Cli,
        client: ClientInfo { name: "transport-probe".into(), version: env!("CARGO_PKG_VERSION").into() },
        pid: Some(std::process::id()),
        cwd: Some(cwd.clone()),
        workspaces: vec![cwd],
        editor_id: None,
        position_encoding: PositionEncoding::Utf8,
        parent_pid: None,
        agent_name: None,
        env: Default::default(),
    };
    let hello = serde_json::to_value(&hello).map_err(|e| format!("hello: {e}"))?;
    let mut answer = String::new();
    let mut call = |id: usize, method: &str, params: serde_json::Value| -> Result<(usize, usize), String> {
        let line = to_line(&Request::new(Id::Number(id as i64), method, params));
        writer.write_all(&line).map_err(|e| format!("send {method}: {e}"))?;
        // Notifications may come between; the answer is the line with our id.
        loop {
            answer.clear();
            if reader.read_line(&mut answer).map_err(|e| format!("read {method}: {e}"))? == 0 {
                return Err(format!("the daemon closed the connection during {method}"));
            }
            if answer.contains(&format!("\"id\":{id},")) || answer.contains(&format!("\"id\":{id}}}")) {
                if answer.contains("\"error\"") {
                    return Err(format!("{method} failed: {}", answer.trim()));
                }
                return Ok((line.len(), answer.len()));
            }
        }
    };
    call(0, "hello", hello)?;
    let mut samples = Vec::with_capacity(rounds);
    let mut sizes = (0, 0);
    for id in 1..=rounds {
        let started = Instant::now();
        sizes = call(id, "status", json!({}))?;
        samples.push(started.elapsed());
    }
    report(samples, sizes);
    Ok(())
}

/// Lines through a child that answers each with `answer` bytes.
fn echo(rounds: usize, request: usize, answer: usize) -> Result<(), String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut child = Command::new(me)
        .args(["cat", &answer.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the echo child: {e}"))?;
    let mut to_child = child.stdin.take().ok_or("the child has no stdin")?;
    let mut from_child = BufReader::new(child.stdout.take().ok_or("the child has no stdout")?);
    let line = format!("{}\n", "q".repeat(request.saturating_sub(1)));
    let mut got = String::new();
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        to_child.write_all(line.as_bytes()).map_err(|e| format!("write to the echo child: {e}"))?;
        got.clear();
        if from_child.read_line(&mut got).map_err(|e| format!("read from the echo child: {e}"))? == 0 {
            return Err("the echo child ended".into());
        }
        samples.push(started.elapsed());
    }
    drop(to_child);
    let _ = child.wait();
    report(samples, (line.len(), got.len()));
    Ok(())
}

/// The echo child: a line of `answer` bytes for each line read.
fn cat(answer: usize) -> Result<(), String> {
    let reply = format!("{}\n", "a".repeat(answer.saturating_sub(1)));
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.by_ref().read_until(b'\n', &mut line).map_err(|e| format!("read: {e}"))? == 0 {
            return Ok(());
        }
        output.write_all(reply.as_bytes()).and_then(|()| output.flush()).map_err(|e| format!("write: {e}"))?;
    }
}

fn report(mut samples: Vec<Duration>, (request_bytes, answer_bytes): (usize, usize)) {
    samples.sort();
    let at = |q: f64| samples.get(((samples.len() as f64 * q) as usize).min(samples.len().saturating_sub(1)));
    let nanos = |d: Option<&Duration>| d.map_or(0, |d| d.as_nanos());
    let mean = samples.iter().sum::<Duration>().checked_div(samples.len().max(1) as u32).unwrap_or_default();
    println!(
        "{}",
        json!({
            "rounds": samples.len(),
            "p50_ns": nanos(at(0.5)),
            "p99_ns": nanos(at(0.99)),
            "mean_ns": mean.as_nanos(),
            "request_bytes": request_bytes,
            "answer_bytes": answer_bytes,
        })
    );
}
