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
//! over the child's stdin and stdout, one blocking thread per client (the
//! `LineChild` of `parley_tests::bench`, the toolkit the benches share). The
//! round trips and the 32 agents run twice: over pipes, as Python and Rust
//! hosts connect a child, and over a Unix socketpair each for stdin and
//! stdout, as Node-based hosts (libuv) do. It
//! prints a report and asserts nothing about timings; every loop is bounded in
//! count and time, and a watchdog ends the run if anything stalls. It also
//! reports what an agent pays in tokens: the bytes of `tools/list` and of a
//! `get_feedback` answer per thread, against the figures before they were
//! cut (`cargo bench -p parley-tests --bench mcp -- sizes` measures only
//! those, on whatever build the bench finds).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::jsonrpc::{Id, Request, to_line};
use parley_tests::bench::{
    Call, LineChild, Report, Stats, Wiring, fmt_duration, fmt_kib, initialize_line, rss_kib, shim_command,
    start_daemon, status_kib, watchdog,
};
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
/// The `tools/list` answer and a `get_feedback` answer per thread (for the
/// threads `payload_sizes` makes), in bytes, as Parley sent them before they
/// were cut (commit 447a200): the baseline the report's ratios are against.
const TOOLS_LIST_BYTES_BEFORE: usize = 42_923;
const GET_FEEDBACK_BYTES_PER_THREAD_BEFORE: usize = 1_044;
/// Threads `payload_sizes` reads back in one `get_feedback`.
const SIZE_THREADS: usize = 20;

fn main() {
    watchdog::start(RUN_LIMIT);
    let mut report = Report::new("mcp");
    for name in ["parley", "parley-mcp", "echo_server"] {
        let path = bin(name);
        println!("using {}", path.display());
    }
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")]);
    let mut daemon = start_daemon(&sandbox);
    if std::env::args().any(|a| a == "sizes") {
        payload_sizes(&mut report, &sandbox);
        report.print();
        return;
    }
    // Let start-up work (store open, watcher) settle before calling it idle.
    std::thread::sleep(Duration::from_millis(500));
    let idle_fresh = rss_kib(daemon.pid());

    start_up(&mut report, &sandbox, &repo);
    for wiring in [Wiring::Pipes, Wiring::Socketpairs] {
        round_trips(&mut report, &sandbox, &repo, daemon.pid(), wiring);
        many_agents(&mut report, &sandbox, &repo, daemon.pid(), wiring);
    }
    review_fan_out(&mut report, &sandbox, &repo);
    payload_sizes(&mut report, &sandbox);
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
    Stats::print_table(&[
        ("parley-mcp → warm daemon", shim),
        ("plain rmcp echo server", echo),
        ("floor: spawn + wait /bin/true", floor),
    ]);
    let ratio = shim.median.as_secs_f64() / echo.median.as_secs_f64();
    let ratio90 = shim.p90.as_secs_f64() / echo.p90.as_secs_f64();
    report.row(
        "shim: process start → first MCP answer, daemon warm (median)",
        "≤ 1.5× plain rmcp",
        format!("{:.2}× ({} vs {}; p90 {:.2}×)", ratio, fmt_duration(shim.median), fmt_duration(echo.median), ratio90),
        ratio <= 1.5,
    );
}

/// What an agent pays at every start and per thread it reads: the bytes of
/// the `tools/list` answer, and of a `get_feedback` answer (both copies, the
/// structured content and its text) divided by its threads, each against the
/// figure before they were cut, as a ratio.
fn payload_sizes(report: &mut Report, sandbox: &Sandbox) {
    watchdog::phase("payload sizes");
    let source: String = (0..2 * SIZE_THREADS).map(|i| format!("pub fn f{i}() -> u32 {{\n    {i}\n}}\n")).collect();
    let repo = sandbox.repo("sizes", &[("src/lib.rs", &source)]);
    let mut agent = LineChild::spawn(shim_command(sandbox, &repo));
    agent.handshake();
    agent.send("{\"jsonrpc\":\"2.0\",\"id\":\"tools\",\"method\":\"tools/list\",\"params\":{}}\n");
    let tools_list = loop {
        let line = agent.recv().expect("an answer to tools/list");
        if line.contains("\"id\":\"tools\"") {
            break line.trim_end().len();
        }
    };
    for k in 0..SIZE_THREADS {
        let body = format!("Should f{k} return a u64? Callers multiply it by the item count.");
        let args = json!({"filePath": "src/lib.rs", "startLine": 3 * k + 2, "body": body});
        agent.call_ok(&Call::new("add_feedback", args));
    }
    let listed = agent.call_value(&Call::new("get_feedback", json!({})));
    let threads = listed["result"]["structuredContent"]["threads"].as_array().map_or(0, Vec::len);
    assert_eq!(threads, SIZE_THREADS, "get_feedback lists every thread: {listed}");
    let per_thread = serde_json::to_string(&listed).expect("JSON").len() / SIZE_THREADS;
    agent.close();
    println!("\n## payload sizes: tools/list {tools_list} bytes; get_feedback {per_thread} bytes a thread");
    let ratio = |now: usize, before: usize| now as f64 / before as f64;
    let tools_ratio = ratio(tools_list, TOOLS_LIST_BYTES_BEFORE);
    report.row(
        "tools/list answer, bytes (paid at every agent start)",
        "≤ 0.5× before",
        format!("{:.2}× ({tools_list} vs {TOOLS_LIST_BYTES_BEFORE})", tools_ratio),
        tools_ratio <= 0.5,
    );
    let thread_ratio = ratio(per_thread, GET_FEEDBACK_BYTES_PER_THREAD_BEFORE);
    report.row(
        "get_feedback answer per thread, bytes",
        "≤ 0.5× before",
        format!("{:.2}× ({per_thread} vs {GET_FEEDBACK_BYTES_PER_THREAD_BEFORE})", thread_ratio),
        thread_ratio <= 0.5,
    );
}

/// A report row's name, marked when the children were wired as Node does.
fn row_name(what: &str, wiring: Wiring) -> String {
    match wiring {
        Wiring::Pipes => what.to_owned(),
        Wiring::Socketpairs => format!("{what}, {}", wiring.label()),
    }
}

/// Sequential `tools/call`s from one client: Parley's `get_selection` (no
/// editor connected) through shim + daemon, against the plain server's `echo`.
fn round_trips(report: &mut Report, sandbox: &Sandbox, repo: &Path, daemon_pid: u32, wiring: Wiring) {
    watchdog::phase(match wiring {
        Wiring::Pipes => "round trips (pipes)",
        Wiring::Socketpairs => "round trips (socketpairs)",
    });
    let mut shim = LineChild::spawn_wired(shim_command(sandbox, repo), wiring);
    let mut echo = LineChild::spawn_wired(echo_command(repo), wiring);
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
    println!(
        "\n## tools/call round trip, one client, sequential, {} ({} calls each, {errors} errors)",
        wiring.label(),
        parley.n
    );
    Stats::print_table(&[
        ("parley get_selection (no editor connected)", parley),
        ("parley get_feedback_summary (empty workspace)", summaries),
        ("plain rmcp echo", plain),
    ]);
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
        &row_name("tools/call round trip p50 (get_selection vs echo)", wiring),
        "≤ 2× plain rmcp",
        format!("{p50:.2}× ({} vs {})", fmt_duration(parley.median), fmt_duration(plain.median)),
        p50 <= 2.0 && errors == 0,
    );
    report.row(
        &row_name("tools/call round trip p99 (get_selection vs echo)", wiring),
        "≤ 4× plain rmcp",
        format!("{p99:.2}× ({} vs {})", fmt_duration(parley.p99), fmt_duration(plain.p99)),
        p99 <= 4.0 && errors == 0,
    );
}

/// Many agents at once, each calling sequentially.
fn many_agents(report: &mut Report, sandbox: &Sandbox, repo: &Path, daemon_pid: u32, wiring: Wiring) {
    watchdog::phase(match wiring {
        Wiring::Pipes => "32 agents (pipes)",
        Wiring::Socketpairs => "32 agents (socketpairs)",
    });
    let selection = Call::new("get_selection", json!({}));
    let parley = load(|| shim_command(sandbox, repo), wiring, &selection, Some(daemon_pid));
    let plain = load(|| echo_command(repo), wiring, &Call::new("echo", json!({"text": "hello"})), None);
    println!("\n## {AGENTS} agents × {CALLS_PER_AGENT} calls at once, {}", wiring.label());
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
            fmt_duration(load.latency.median),
            fmt_duration(load.latency.p99),
            per_call(load.client_ticks),
            per_call(load.server_ticks),
            per_call(load.daemon_ticks),
        );
    }
    let complete = parley.done == AGENTS * CALLS_PER_AGENT;
    report.row(
        &row_name("32 agents × 2,000 calls at once: errors", wiring),
        "0",
        format!("{} ({} of {} calls done)", parley.errors, parley.done, AGENTS * CALLS_PER_AGENT),
        parley.errors == 0 && complete,
    );
    report.row(
        &row_name("32 agents × 2,000 calls at once: throughput", wiring),
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

fn load(command: impl Fn() -> Command, wiring: Wiring, call: &Call, daemon: Option<u32>) -> Load {
    let mut clients = Vec::new();
    for _ in 0..AGENTS {
        let mut client = LineChild::spawn_wired(command(), wiring);
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
    Stats::print_table(&[
        ("call sent → first window has review/updated", first_window),
        ("call sent → last window has review/updated", fan_out),
        ("call sent → agent has the answer (review on disk)", answered),
    ]);
    report.row(
        "present_review to 16 windows: last window has it (p99)",
        "≤ 2 ms",
        format!("{} (p50 {})", fmt_duration(fan_out.p99), fmt_duration(fan_out.median)),
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
        parent_pid: None,
        agent_name: None,
        env: Default::default(),
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
    println!("| daemon VmRSS, idle after start | {} |", fmt_kib(idle_fresh));
    println!("| daemon VmRSS, idle after the runs above | {} |", fmt_kib(idle_after));
    println!("| shim VmRSS while connected (VmHWM) | {} ({}) |", fmt_kib(shim_rss), fmt_kib(shim_hwm));
    println!("| plain rmcp echo server VmRSS | {} |", fmt_kib(echo_rss));
    println!("| target/release/parley-mcp on disk | {size} bytes |");
    match stripped {
        Some(s) => println!("| target/release/parley-mcp after `strip` | {s} bytes |"),
        None => println!("| `strip` | not available |"),
    }
    report.row(
        "daemon idle RSS (after start / after the runs)",
        "≤ 20 MB",
        format!("{} / {}", fmt_kib(idle_fresh), fmt_kib(idle_after)),
        idle_fresh <= 20 * 1024 && idle_after <= 20 * 1024,
    );
    report.row("shim RSS while connected", "≤ 4 MB", fmt_kib(shim_rss), shim_rss <= 4 * 1024);
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
    Stats::print_table(&[("new data directory (first use)", fresh), ("existing store (daemon restarted)", existing)]);
    report.row(
        "cold start (no daemon) → first answer (median, new / existing store)",
        "≤ 100 ms",
        format!(
            "{} / {} (p90 {} / {})",
            fmt_duration(fresh.median),
            fmt_duration(existing.median),
            fmt_duration(fresh.p90),
            fmt_duration(existing.p90)
        ),
        fresh.median <= Duration::from_millis(100) && existing.median <= Duration::from_millis(100),
    );
}

fn stop_daemon(sandbox: &Sandbox) {
    let (code, out, err) = sandbox.cli(&["stop"]);
    assert_eq!(code, 0, "parley stop: {out}{err}");
}

// --- processes ---------------------------------------------------------------

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

// --- measurements --------------------------------------------------------------

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

/// The size after `strip`, when `strip` is installed.
fn stripped_size(binary: &Path) -> Option<u64> {
    let out = std::env::temp_dir().join(format!("parley-mcp-stripped-{}", std::process::id()));
    let status = Command::new("strip").arg("-o").arg(&out).arg(binary).stderr(Stdio::null()).status().ok()?;
    let size = status.success().then(|| std::fs::metadata(&out).ok().map(|m| m.len())).flatten();
    let _ = std::fs::remove_file(&out);
    size
}
