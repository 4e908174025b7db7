//! DESIGN §9's MCP targets, measured on the real release binaries: the
//! `parley-mcp` shim relaying to a warm `parley daemon`, against a plain rmcp
//! stdio server (`echo_server`, one `echo` tool) spawned and driven the same
//! way in the same run, since absolute times drift from run to run.
//!
//! ```sh
//! cargo build --release --workspace
//! cargo bench -p parley-tests --bench mcp
//! ```
//!
//! Every server is driven by the same raw client: newline-delimited JSON-RPC
//! over the child's stdin and stdout, one blocking thread per client. It
//! prints a report and asserts nothing about timings; every loop is bounded in
//! count and time, and a watchdog ends the run if anything stalls.

use std::io::{BufRead, BufReader, Read as _, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::jsonrpc::{Id, Request, to_line};
use parley_tests::{DaemonProcess, Sandbox, bin};
use serde_json::{Value, json};

/// The whole run may take this long before the watchdog stops it.
const RUN_LIMIT: Duration = Duration::from_secs(300);

const STARTS: usize = 30;
const ROUND_TRIPS: usize = 10_000;
const ROUND_TRIP_BLOCK: usize = 500;
const WARM_UP_CALLS: usize = 500;
const AGENTS: usize = 32;
const CALLS_PER_AGENT: usize = 2_000;
const WINDOWS: usize = 16;
const REVIEW_ROUNDS: usize = 200;
const COLD_STARTS: usize = 10;

fn main() {
    watchdog::start(RUN_LIMIT);
    let mut report = Report::default();
    for name in ["parley", "parley-mcp", "echo_server"] {
        let path = bin(name);
        println!("using {}", path.display());
    }
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")]);
    let mut daemon = start_daemon(&sandbox);
    // Let start-up work (store open, watcher) settle before calling it idle.
    std::thread::sleep(Duration::from_millis(500));
    let idle_fresh = rss_kib(daemon.pid());

    start_up(&mut report, &sandbox, &repo);
    round_trips(&mut report, &sandbox, &repo, daemon.pid());
    many_agents(&mut report, &sandbox, &repo, daemon.pid());
    review_fan_out(&mut report, &sandbox, &repo);
    memory(&mut report, &sandbox, &repo, &daemon, idle_fresh);
    watchdog::phase("stopping the warm daemon");
    daemon.terminate();
    cold_start(&mut report);

    report.print();
}

/// Spawn → `initialize` answer, warm daemon, against the plain rmcp server.
fn start_up(report: &mut Report, sandbox: &Sandbox, repo: &Path) {
    watchdog::phase("start-up");
    let budget = Instant::now() + Duration::from_secs(30);
    let (mut shim, mut echo, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    // Interleaved, so that drift hits both alike; one of each first, unmeasured.
    first_answer(shim_command(sandbox, repo));
    first_answer(echo_command(repo));
    for _ in 0..STARTS {
        if Instant::now() > budget {
            break;
        }
        shim.push(first_answer(shim_command(sandbox, repo)));
        echo.push(first_answer(echo_command(repo)));
        floor.push(spawn_true());
    }
    let (shim, echo, floor) = (Stats::of(shim), Stats::of(echo), Stats::of(floor));
    println!("\n## start-up: process start → `initialize` answer ({} spawns each)", shim.n);
    println!("{}", Stats::header());
    println!("{}", shim.row("parley-mcp → warm daemon"));
    println!("{}", echo.row("plain rmcp echo server"));
    println!("{}", floor.row("floor: spawn + wait /bin/true"));
    let ratio = shim.median.as_secs_f64() / echo.median.as_secs_f64();
    let ratio90 = shim.p90.as_secs_f64() / echo.p90.as_secs_f64();
    report.row(
        "shim: process start → first MCP answer, daemon warm (median)",
        "≤ 1.5× plain rmcp",
        format!("{:.2}× ({} vs {}; p90 {:.2}×)", ratio, fmt(shim.median), fmt(echo.median), ratio90),
        ratio <= 1.5,
    );
}

/// Sequential `tools/call`s from one client: Parley's `get_selection` (no
/// editor connected) through shim + daemon, against the plain server's `echo`.
fn round_trips(report: &mut Report, sandbox: &Sandbox, repo: &Path, daemon_pid: u32) {
    watchdog::phase("round trips");
    let mut shim = LineChild::spawn(shim_command(sandbox, repo));
    let mut echo = LineChild::spawn(echo_command(repo));
    shim.handshake();
    echo.handshake();
    let selection = Call::new("get_selection", json!({}));
    let summary = Call::new("get_feedback_summary", json!({}));
    let echo_call = Call::new("echo", json!({"text": "hello"}));
    for _ in 0..WARM_UP_CALLS {
        shim.call(&selection).expect("warm-up get_selection");
        echo.call(&echo_call).expect("warm-up echo");
    }
    let budget = Instant::now() + Duration::from_secs(40);
    let (mut parley, mut plain, mut errors) = (Vec::new(), Vec::new(), 0usize);
    let cpu_before = [cpu_ticks(shim.pid()), cpu_ticks(daemon_pid), cpu_ticks(echo.pid())];
    // Alternating blocks, so that drift hits both alike.
    while parley.len() < ROUND_TRIPS && Instant::now() < budget {
        for _ in 0..ROUND_TRIP_BLOCK {
            let (took, ok) = shim.call(&selection).expect("get_selection answered");
            parley.push(took);
            errors += usize::from(!ok);
        }
        for _ in 0..ROUND_TRIP_BLOCK {
            let (took, ok) = echo.call(&echo_call).expect("echo answered");
            plain.push(took);
            errors += usize::from(!ok);
        }
    }
    let cpu_after = [cpu_ticks(shim.pid()), cpu_ticks(daemon_pid), cpu_ticks(echo.pid())];
    let mut summaries = Vec::new();
    for _ in 0..2_000 {
        if Instant::now() > budget {
            break;
        }
        let (took, ok) = shim.call(&summary).expect("get_feedback_summary answered");
        summaries.push(took);
        errors += usize::from(!ok);
    }
    let sample = shim.call_value(&selection);
    shim.close();
    echo.close();
    let (parley, plain, summaries) = (Stats::of(parley), Stats::of(plain), Stats::of(summaries));
    println!("\n## tools/call round trip, one client, sequential ({} calls each, {errors} errors)", parley.n);
    println!("{}", Stats::header());
    println!("{}", parley.row("parley get_selection (no editor connected)"));
    println!("{}", summaries.row("parley get_feedback_summary (empty workspace)"));
    println!("{}", plain.row("plain rmcp echo"));
    let message = sample["result"]["structuredContent"]["message"].as_str().unwrap_or("?").to_owned();
    println!("get_selection answered: {message:?}");
    let per_call = |i: usize, calls: usize| ticks_to_micros(cpu_after[i] - cpu_before[i]) / calls as f64;
    println!(
        "CPU per call: parley-mcp {:.1} µs + daemon {:.1} µs; plain rmcp server {:.1} µs",
        per_call(0, parley.n),
        per_call(1, parley.n),
        per_call(2, plain.n)
    );
    let p50 = parley.median.as_secs_f64() / plain.median.as_secs_f64();
    let p99 = parley.p99.as_secs_f64() / plain.p99.as_secs_f64();
    report.row(
        "tools/call round trip p50 (get_selection vs echo)",
        "≤ 2× plain rmcp",
        format!("{p50:.2}× ({} vs {})", fmt(parley.median), fmt(plain.median)),
        p50 <= 2.0 && errors == 0,
    );
    report.row(
        "tools/call round trip p99 (get_selection vs echo)",
        "≤ 4× plain rmcp",
        format!("{p99:.2}× ({} vs {})", fmt(parley.p99), fmt(plain.p99)),
        p99 <= 4.0 && errors == 0,
    );
}

/// Many agents at once, each calling sequentially.
fn many_agents(report: &mut Report, sandbox: &Sandbox, repo: &Path, daemon_pid: u32) {
    watchdog::phase("32 agents");
    let parley = load(|| shim_command(sandbox, repo), &Call::new("get_selection", json!({})), Some(daemon_pid));
    let plain = load(|| echo_command(repo), &Call::new("echo", json!({"text": "hello"})), None);
    println!("\n## {AGENTS} agents × {CALLS_PER_AGENT} calls at once");
    println!("| server | calls done | errors | wall | calls/s | p50 | p99 | CPU per call: client / servers / daemon |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (name, load) in [("parley get_selection", &parley), ("plain rmcp echo (32 servers)", &plain)] {
        let per_call = |ticks: u64| ticks_to_micros(ticks) / load.done as f64;
        println!(
            "| {name} | {} | {} | {:.2} s | {:.0} | {} | {} | {:.1} / {:.1} / {:.1} µs |",
            load.done,
            load.errors,
            load.wall.as_secs_f64(),
            load.rate(),
            fmt(load.latency.median),
            fmt(load.latency.p99),
            per_call(load.client_ticks),
            per_call(load.server_ticks),
            per_call(load.daemon_ticks),
        );
    }
    let complete = parley.done == AGENTS * CALLS_PER_AGENT;
    report.row(
        "32 agents × 2,000 calls at once: errors",
        "0",
        format!("{} ({} of {} calls done)", parley.errors, parley.done, AGENTS * CALLS_PER_AGENT),
        parley.errors == 0 && complete,
    );
    report.row(
        "32 agents × 2,000 calls at once: throughput",
        "≥ 20,000 calls/s",
        format!("{:.0} calls/s (plain rmcp: {:.0})", parley.rate(), plain.rate()),
        parley.rate() >= 20_000.0,
    );
}

struct Load {
    done: usize,
    errors: usize,
    wall: Duration,
    latency: Stats,
    /// CPU time (clock ticks) of this process (the clients), of the server
    /// processes (shims or echo servers), and of the daemon.
    client_ticks: u64,
    server_ticks: u64,
    daemon_ticks: u64,
}

impl Load {
    fn rate(&self) -> f64 {
        self.done as f64 / self.wall.as_secs_f64()
    }
}

fn load(command: impl Fn() -> Command, call: &Call, daemon: Option<u32>) -> Load {
    let mut clients = Vec::new();
    for _ in 0..AGENTS {
        let mut client = LineChild::spawn(command());
        client.handshake();
        clients.push(client);
    }
    let start = Arc::new(Barrier::new(AGENTS + 1));
    let server_ticks_before: u64 = clients.iter().map(|c| cpu_ticks(c.pid())).sum();
    let threads: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            let start = start.clone();
            let call = call.clone();
            std::thread::spawn(move || {
                let mut latencies = Vec::with_capacity(CALLS_PER_AGENT);
                let mut errors = 0usize;
                start.wait();
                let began = Instant::now();
                for _ in 0..CALLS_PER_AGENT {
                    if began.elapsed() > Duration::from_secs(60) {
                        break;
                    }
                    match client.call(&call) {
                        Some((took, ok)) => {
                            latencies.push(took);
                            errors += usize::from(!ok);
                        }
                        None => {
                            errors += 1;
                            break;
                        }
                    }
                }
                let ended = Instant::now();
                let ticks = cpu_ticks(client.pid());
                client.close();
                (latencies, errors, began, ended, ticks)
            })
        })
        .collect();
    let daemon_before = daemon.map_or(0, cpu_ticks);
    let client_before = cpu_ticks(std::process::id());
    start.wait();
    let (mut all, mut errors, mut server_ticks) = (Vec::new(), 0, 0);
    let (mut first, mut last) = (None::<Instant>, None::<Instant>);
    for thread in threads {
        let (latencies, e, began, ended, ticks) = thread.join().expect("client thread");
        all.extend(latencies);
        errors += e;
        server_ticks += ticks;
        first = Some(first.map_or(began, |f| f.min(began)));
        last = Some(last.map_or(ended, |l| l.max(ended)));
    }
    let client_ticks = cpu_ticks(std::process::id()) - client_before;
    let daemon_ticks = daemon.map_or(0, |pid| cpu_ticks(pid) - daemon_before);
    let wall = last.expect("clients ran") - first.expect("clients ran");
    Load {
        done: all.len(),
        errors,
        wall,
        latency: Stats::of(all),
        client_ticks,
        server_ticks: server_ticks - server_ticks_before,
        daemon_ticks,
    }
}

/// `present_review` through the shim to 16 editor windows on the workspace:
/// from sending the call to the last window having `review/updated`.
fn review_fan_out(report: &mut Report, sandbox: &Sandbox, repo: &Path) {
    watchdog::phase("present_review fan-out");
    let (tx, rx) = mpsc::channel::<(usize, u64, Instant)>();
    let mut windows = Vec::new();
    let mut streams = Vec::new();
    for i in 0..WINDOWS {
        let (stream, reader) = editor_window(&sandbox.socket, repo, i);
        streams.push(stream);
        let tx = tx.clone();
        windows.push(std::thread::spawn(move || window_reader(reader, i, tx)));
    }
    drop(tx);
    let mut agent = LineChild::spawn(shim_command(sandbox, repo));
    agent.handshake();
    let budget = Instant::now() + Duration::from_secs(60);
    let (mut fan_out, mut answered, mut first_window, mut missing) = (Vec::new(), Vec::new(), Vec::new(), 0usize);
    let mut delivered_counts = Vec::new();
    let warm_up = 10;
    for round in 0..warm_up + REVIEW_ROUNDS {
        if Instant::now() > budget {
            break;
        }
        let content = format!(
            "# Review round {round}\n\nThe answer is in [`src/lib.rs:1`][]; see [the body](src/lib.rs#L1-L3).\n\n## Notes\n\nNothing else changed.\n"
        );
        let call = Call::new("present_review", json!({ "content": content }));
        let sent = Instant::now();
        let answer = agent.call_value(&call);
        let answer_took = sent.elapsed();
        let result = &answer["result"]["structuredContent"];
        let revision = result["revision"].as_u64().expect("present_review returns a revision");
        delivered_counts.push(result["delivered_to"].as_array().map_or(0, Vec::len));
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while seen.len() < WINDOWS {
            let wait = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok((_, rev, at)) if rev == revision => seen.push(at),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        if round < warm_up {
            continue;
        }
        missing += WINDOWS - seen.len();
        if let (Some(last), Some(first)) = (seen.iter().max(), seen.iter().min()) {
            fan_out.push(last.saturating_duration_since(sent));
            first_window.push(first.saturating_duration_since(sent));
        }
        answered.push(answer_took);
    }
    agent.close();
    for stream in &streams {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
    for window in windows {
        let _ = window.join();
    }
    let (fan_out, first_window, answered) = (Stats::of(fan_out), Stats::of(first_window), Stats::of(answered));
    let delivered = delivered_counts.iter().min().copied().unwrap_or(0);
    println!(
        "\n## present_review to {WINDOWS} editor windows ({} rounds; every answer delivered to ≥ {delivered} windows; {missing} notifications missing)",
        fan_out.n
    );
    println!("{}", Stats::header());
    println!("{}", first_window.row("call sent → first window has review/updated"));
    println!("{}", fan_out.row("call sent → last window has review/updated"));
    println!("{}", answered.row("call sent → agent has the answer (review on disk)"));
    report.row(
        "present_review to 16 windows: last window has it (p99)",
        "≤ 2 ms",
        format!("{} (p50 {})", fmt(fan_out.p99), fmt(fan_out.median)),
        fan_out.p99 <= Duration::from_millis(2) && missing == 0,
    );
}

/// Connects a raw hub client as an editor window open on `repo`.
fn editor_window(socket: &Path, repo: &Path, i: usize) -> (UnixStream, BufReader<UnixStream>) {
    let hello = Hello {
        protocol: parley_protocol::PROTOCOL_VERSION,
        role: Role::Editor,
        client: ClientInfo { name: format!("bench-window-{i}"), version: "bench".into() },
        pid: Some(std::process::id()),
        cwd: None,
        workspaces: vec![repo.to_owned()],
        editor_id: Some(format!("bench-window-{i}")),
        position_encoding: PositionEncoding::Utf16,
    };
    let mut stream = UnixStream::connect(socket).expect("connect a window to the daemon");
    let request = Request::new(Id::Number(0), "hello", serde_json::to_value(&hello).expect("hello serializes"));
    stream.write_all(&to_line(&request)).expect("send hello");
    let mut reader = BufReader::new(stream.try_clone().expect("clone the window's socket"));
    let mut line = String::new();
    reader.read_line(&mut line).expect("read the hello answer");
    let answer: Value = serde_json::from_str(&line).expect("the hello answer is JSON");
    assert!(answer.get("result").is_some(), "the window's hello failed: {line}");
    (stream, reader)
}

/// Timestamps each `review/updated` as soon as its line is read, then parses it.
fn window_reader(mut reader: BufReader<UnixStream>, i: usize, tx: mpsc::Sender<(usize, u64, Instant)>) {
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let at = Instant::now();
        if !line.contains("\"review/updated\"") {
            continue;
        }
        let message: Value = serde_json::from_str(&line).expect("review/updated is JSON");
        let revision = message["params"]["review"]["revision"].as_u64().unwrap_or(0);
        if tx.send((i, revision, at)).is_err() {
            return;
        }
    }
}

fn memory(report: &mut Report, sandbox: &Sandbox, repo: &Path, daemon: &DaemonProcess, idle_fresh: u64) {
    watchdog::phase("memory");
    // After the load above, every client is gone: idle again.
    std::thread::sleep(Duration::from_secs(1));
    let idle_after = rss_kib(daemon.pid());
    let mut shim = LineChild::spawn(shim_command(sandbox, repo));
    let mut echo = LineChild::spawn(echo_command(repo));
    shim.handshake();
    echo.handshake();
    for _ in 0..100 {
        shim.call(&Call::new("get_selection", json!({}))).expect("get_selection answered");
        echo.call(&Call::new("echo", json!({"text": "hello"}))).expect("echo answered");
    }
    let shim_rss = rss_kib(shim.pid());
    let shim_hwm = status_kib(shim.pid(), "VmHWM:");
    let echo_rss = rss_kib(echo.pid());
    shim.close();
    echo.close();
    let binary = bin("parley-mcp");
    let size = std::fs::metadata(&binary).expect("shim binary").len();
    let stripped = stripped_size(&binary);
    println!("\n## memory and size");
    println!("| what | value |");
    println!("| --- | --- |");
    println!("| daemon VmRSS, idle after start | {} |", kib(idle_fresh));
    println!("| daemon VmRSS, idle after the runs above | {} |", kib(idle_after));
    println!("| shim VmRSS while connected (VmHWM) | {} ({}) |", kib(shim_rss), kib(shim_hwm));
    println!("| plain rmcp echo server VmRSS | {} |", kib(echo_rss));
    println!("| target/release/parley-mcp on disk | {size} bytes |");
    match stripped {
        Some(s) => println!("| target/release/parley-mcp after `strip` | {s} bytes |"),
        None => println!("| `strip` | not available |"),
    }
    report.row(
        "daemon idle RSS (after start / after the runs)",
        "≤ 20 MB",
        format!("{} / {}", kib(idle_fresh), kib(idle_after)),
        idle_fresh <= 20 * 1024 && idle_after <= 20 * 1024,
    );
    report.row("shim RSS while connected", "≤ 4 MB", kib(shim_rss), shim_rss <= 4 * 1024);
    let size = stripped.unwrap_or(size);
    report.row(
        "shim binary, stripped",
        "≤ 1 MB",
        format!("{:.2} MiB ({size} bytes)", size as f64 / 1_048_576.0),
        size <= 1_048_576,
    );
}

/// No daemon yet: the shim starts one, then the first answer.
fn cold_start(report: &mut Report) {
    watchdog::phase("cold start");
    let budget = Instant::now() + Duration::from_secs(40);
    let mut fresh = Vec::new();
    for _ in 0..COLD_STARTS {
        if Instant::now() > budget {
            break;
        }
        let sandbox = Sandbox::new();
        let repo = sandbox.repo("app", &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")]);
        assert!(!sandbox.socket.exists());
        fresh.push(first_answer(shim_command(&sandbox, &repo)));
        stop_daemon(&sandbox);
    }
    // The same data directory each time: the daily first call after login.
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")]);
    first_answer(shim_command(&sandbox, &repo));
    stop_daemon(&sandbox);
    let mut existing = Vec::new();
    for _ in 0..COLD_STARTS {
        if Instant::now() > budget {
            break;
        }
        existing.push(first_answer(shim_command(&sandbox, &repo)));
        stop_daemon(&sandbox);
    }
    let (fresh, existing) = (Stats::of(fresh), Stats::of(existing));
    println!("\n## cold start: no daemon running; the shim starts it → `initialize` answer");
    println!("{}", Stats::header());
    println!("{}", fresh.row("new data directory (first use)"));
    println!("{}", existing.row("existing store (daemon restarted)"));
    report.row(
        "cold start (no daemon) → first answer (median, new / existing store)",
        "≤ 100 ms",
        format!("{} / {} (p90 {} / {})", fmt(fresh.median), fmt(existing.median), fmt(fresh.p90), fmt(existing.p90)),
        fresh.median <= Duration::from_millis(100) && existing.median <= Duration::from_millis(100),
    );
}

fn stop_daemon(sandbox: &Sandbox) {
    let (code, out, err) = sandbox.cli(&["stop"]);
    assert_eq!(code, 0, "parley stop: {out}{err}");
}

// --- processes ---------------------------------------------------------------

/// Starts the daemon with its default log level (the harness's is `debug`).
fn start_daemon(sandbox: &Sandbox) -> DaemonProcess {
    let log = std::fs::File::create(sandbox.dir.path().join("daemon.log")).expect("daemon log file");
    let child = sandbox
        .command("parley")
        .env_remove("PARLEY_LOG")
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start parley daemon");
    watchdog::guard(child.id());
    let daemon = DaemonProcess { child };
    sandbox.wait_for_socket();
    daemon
}

fn shim_command(sandbox: &Sandbox, cwd: &Path) -> Command {
    let mut command = sandbox.command("parley-mcp");
    // A daemon the shim starts logs at its default level, as a user's would.
    command.env_remove("PARLEY_LOG").current_dir(cwd);
    command
}

fn echo_command(cwd: &Path) -> Command {
    let mut command = Command::new(bin("echo_server"));
    command.current_dir(cwd);
    command
}

/// Spawns `command`, sends `initialize` at once, and returns the time from
/// just before the spawn to the answer's arrival.
fn first_answer(mut command: Command) -> Duration {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let started = Instant::now();
    let mut child = LineChild::from_child(command.spawn().expect("spawn server"));
    child.send(&initialize_line(1));
    let line = child.recv().expect("an answer to initialize").to_owned();
    let took = started.elapsed();
    assert!(line.contains("\"protocolVersion\""), "initialize failed: {line}");
    child.close();
    took
}

fn spawn_true() -> Duration {
    let started = Instant::now();
    let status = Command::new("/bin/true").status().expect("run /bin/true");
    assert!(status.success());
    started.elapsed()
}

fn initialize_line(id: u64) -> String {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "parley-bench", "version": "1"}}});
    format!("{message}\n")
}

/// A prepared `tools/call`; the id is spliced in per call.
#[derive(Clone)]
struct Call {
    head: String,
    tail: String,
}

impl Call {
    fn new(tool: &str, arguments: Value) -> Call {
        let params = json!({ "name": tool, "arguments": arguments });
        Call {
            head: r#"{"jsonrpc":"2.0","id":"#.to_owned(),
            tail: format!(r#","method":"tools/call","params":{params}}}"#),
        }
    }

    fn line(&self, id: u64) -> String {
        format!("{}{id}{}\n", self.head, self.tail)
    }
}

/// A server child driven by newline-delimited JSON-RPC over its stdio.
struct LineChild {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    buf: String,
    next_id: u64,
}

impl LineChild {
    fn spawn(mut command: Command) -> LineChild {
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        LineChild::from_child(command.spawn().expect("spawn server"))
    }

    fn from_child(mut child: Child) -> LineChild {
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        LineChild { child, stdin, stdout, buf: String::new(), next_id: 1 }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, line: &str) {
        self.stdin.as_mut().expect("stdin open").write_all(line.as_bytes()).expect("write to server");
    }

    /// The next line, or `None` at end of output.
    fn recv(&mut self) -> Option<&str> {
        self.buf.clear();
        match self.stdout.read_line(&mut self.buf) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(&self.buf),
        }
    }

    fn handshake(&mut self) {
        let id = self.take_id();
        self.send(&initialize_line(id));
        let line = self.recv().expect("an answer to initialize");
        assert!(line.contains("\"protocolVersion\""), "initialize failed: {line}");
        self.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    }

    fn take_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// One call: its round-trip time and whether it succeeded; `None` when
    /// the server closed its output.
    fn call(&mut self, call: &Call) -> Option<(Duration, bool)> {
        let id = self.take_id();
        let line = call.line(id);
        let sent = Instant::now();
        self.send(&line);
        loop {
            let answer = self.recv()?;
            if response_id(answer) == Some(id) {
                let took = sent.elapsed();
                let ok = !answer.contains("\"error\":{") && !answer.contains("\"isError\":true");
                return Some((took, ok));
            }
        }
    }

    /// One call, its answer parsed.
    fn call_value(&mut self, call: &Call) -> Value {
        let id = self.take_id();
        self.send(&call.line(id));
        loop {
            let answer = self.recv().expect("the server answers");
            if response_id(answer) == Some(id) {
                let value: Value = serde_json::from_str(answer).expect("the answer is JSON");
                assert!(value.get("error").is_none(), "the call failed: {value}");
                return value;
            }
        }
    }

    /// Closes stdin and waits (boundedly) for the server to exit.
    fn close(mut self) {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LineChild {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The top-level numeric id of a response line (the first `"id":` in it:
/// rmcp and the shim both write `{"jsonrpc":"2.0","id":…`).
fn response_id(line: &str) -> Option<u64> {
    let at = line.find("\"id\":")? + 5;
    let digits: &str = &line[at..];
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits[..end].parse().ok()
}

// --- measurements --------------------------------------------------------------

fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/<pid>/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("the field is in /proc/<pid>/status")
}

/// User + system CPU time of a process, in clock ticks (its threads included).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/<pid>/stat");
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a stat line") + 2..].split_whitespace().collect();
    let field = |i: usize| fields[i].parse::<u64>().expect("a tick count");
    field(11) + field(12)
}

fn ticks_to_micros(ticks: u64) -> f64 {
    static TICKS_PER_SECOND: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let hz = *TICKS_PER_SECOND.get_or_init(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output().ok();
        out.and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok()).unwrap_or(100.0)
    });
    ticks as f64 * 1e6 / hz
}

fn kib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// The size after `strip`, when `strip` is installed.
fn stripped_size(binary: &Path) -> Option<u64> {
    let out = std::env::temp_dir().join(format!("parley-mcp-stripped-{}", std::process::id()));
    let status = Command::new("strip").arg("-o").arg(&out).arg(binary).stderr(Stdio::null()).status().ok()?;
    let size = status.success().then(|| std::fs::metadata(&out).ok().map(|m| m.len())).flatten();
    let _ = std::fs::remove_file(&out);
    size
}

#[derive(Debug, Clone, Copy)]
struct Stats {
    n: usize,
    median: Duration,
    p90: Duration,
    p99: Duration,
    max: Duration,
}

impl Stats {
    fn of(mut samples: Vec<Duration>) -> Stats {
        assert!(!samples.is_empty(), "no samples were taken");
        samples.sort_unstable();
        let at = |p: f64| samples[((p / 100.0 * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
        Stats { n: samples.len(), median: at(50.0), p90: at(90.0), p99: at(99.0), max: at(100.0) }
    }

    fn header() -> &'static str {
        "| what | n | p50 | p90 | p99 | max |\n| --- | --- | --- | --- | --- | --- |"
    }

    fn row(&self, what: &str) -> String {
        format!(
            "| {what} | {} | {} | {} | {} | {} |",
            self.n,
            fmt(self.median),
            fmt(self.p90),
            fmt(self.p99),
            fmt(self.max)
        )
    }
}

fn fmt(d: Duration) -> String {
    let micros = d.as_secs_f64() * 1e6;
    if micros < 1000.0 { format!("{micros:.1} µs") } else { format!("{:.2} ms", micros / 1000.0) }
}

#[derive(Default)]
struct Report {
    rows: Vec<[String; 4]>,
}

impl Report {
    fn row(&mut self, what: &str, target: &str, measured: String, met: bool) {
        let verdict = if met { "met" } else { "**not met**" };
        self.rows.push([what.to_owned(), target.to_owned(), measured, verdict.to_owned()]);
    }

    fn print(&self) {
        println!("\n## mcp bench: DESIGN §9 targets");
        println!("{}", machine());
        println!("| what | target | measured | verdict |");
        println!("| --- | --- | --- | --- |");
        for [what, target, measured, verdict] in &self.rows {
            println!("| {what} | {target} | {measured} | {verdict} |");
        }
    }
}

/// nproc, CPU model and date, for the report.
fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut cpuinfo = String::new();
    let _ = std::fs::File::open("/proc/cpuinfo").and_then(|mut f| f.read_to_string(&mut cpuinfo));
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned()))
        .unwrap_or_else(|| "unknown".into());
    let date = Command::new("date")
        .arg("-u")
        .arg("+%Y-%m-%d %H:%M UTC")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("machine: {cpus} CPUs ({model}); {date}\n")
}

/// Ends the run, and the daemons it started, if it overruns its time limit:
/// the raw clients block on reads, so a stalled server would hang the run.
mod watchdog {
    use super::*;

    static PHASE: Mutex<&'static str> = Mutex::new("setup");
    static PIDS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

    pub fn start(limit: Duration) {
        std::thread::spawn(move || {
            std::thread::sleep(limit);
            let phase = *PHASE.lock().unwrap_or_else(|e| e.into_inner());
            eprintln!("the bench ran over {limit:?} (stalled during {phase}); stopping");
            for pid in PIDS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
            std::process::exit(2);
        });
    }

    pub fn phase(name: &'static str) {
        *PHASE.lock().unwrap_or_else(|e| e.into_inner()) = name;
        println!("\n… {name}");
    }

    /// A process to kill if the watchdog fires.
    pub fn guard(pid: u32) {
        PIDS.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
    }
}
