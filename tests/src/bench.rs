//! The toolkit the bench binaries (`benches/*.rs`) share: timing
//! statistics, the report of DESIGN §9's targets, the watchdog that ends a
//! stalled run, and raw line-protocol clients (MCP and hub) for the release
//! binaries.
//!
//! Everything here blocks: a bench drives each client from its own thread, and
//! the watchdog is what ends a run whose server stops answering.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::jsonrpc::{Id, Request, to_line};
use serde_json::{Value, json};

use crate::{DaemonProcess, Sandbox};

// --- processes ---------------------------------------------------------------

/// Starts `parley daemon` in `sandbox` at its default log level (the harness's
/// is `debug`), as a user's daemon runs, and puts it under the watchdog.
pub fn start_daemon(sandbox: &Sandbox) -> DaemonProcess {
    let daemon = sandbox.start_daemon_with(|command| {
        command.env_remove("PARLEY_LOG");
    });
    watchdog::guard(daemon.pid());
    daemon
}

/// A command for the `parley-mcp` shim of `sandbox`, started in `cwd`.
pub fn shim_command(sandbox: &Sandbox, cwd: &Path) -> Command {
    let mut command = sandbox.command("parley-mcp");
    // A daemon the shim starts logs at its default level, as a user's would.
    command.env_remove("PARLEY_LOG").current_dir(cwd);
    command
}

/// The MCP `initialize` request line (newline included) with request id `id`.
pub fn initialize_line(id: u64) -> String {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "parley-bench", "version": "1"}}});
    format!("{message}\n")
}

/// A prepared `tools/call` request; the id is spliced in per call.
#[derive(Clone)]
pub struct Call {
    /// Everything after the id: the method and the params.
    after_id: String,
}

impl Call {
    /// A call of `tool` with `arguments` (a JSON object).
    pub fn new(tool: &str, arguments: Value) -> Call {
        let params = json!({ "name": tool, "arguments": arguments });
        Call { after_id: format!(r#","method":"tools/call","params":{params}}}"#) }
    }

    /// The request line (newline included) with request id `id`.
    pub fn line(&self, id: u64) -> String {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id}{}\n", self.after_id)
    }
}

/// How a server child's stdin and stdout are connected, as hosts do it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wiring {
    /// A pipe each: Python and Rust hosts, shells.
    Pipes,
    /// A Unix socketpair each: what Node-based hosts give a child (libuv's
    /// `spawn`): Claude Code, VS Code, Cursor, the MCP Inspector, the
    /// TypeScript SDK.
    Socketpairs,
}

impl Wiring {
    /// A short name for the report.
    pub fn label(self) -> &'static str {
        match self {
            Wiring::Pipes => "pipes",
            Wiring::Socketpairs => "Node-style socketpairs",
        }
    }
}

/// A server child driven by newline-delimited JSON-RPC over its stdin and
/// stdout; killed if it still runs when dropped.
pub struct LineChild {
    child: Child,
    /// `None` once closed.
    stdin: Option<Box<dyn Write + Send>>,
    stdout: BufReader<Box<dyn Read + Send>>,
    /// The line last read.
    line: String,
    last_id: u64,
}

impl LineChild {
    /// Spawns `command` with piped stdin and stdout (stderr discarded).
    pub fn spawn(command: Command) -> LineChild {
        LineChild::spawn_wired(command, Wiring::Pipes)
    }

    /// Spawns `command` with stdin and stdout wired as `wiring` says (stderr
    /// discarded).
    pub fn spawn_wired(mut command: Command, wiring: Wiring) -> LineChild {
        command.stderr(Stdio::null());
        match wiring {
            Wiring::Pipes => {
                command.stdin(Stdio::piped()).stdout(Stdio::piped());
                LineChild::from_child(command.spawn().expect("spawn server"))
            }
            Wiring::Socketpairs => {
                let (stdin, child_stdin) = UnixStream::pair().expect("socketpair for stdin");
                let (stdout, child_stdout) = UnixStream::pair().expect("socketpair for stdout");
                command.stdin(OwnedFd::from(child_stdin)).stdout(OwnedFd::from(child_stdout));
                let child = command.spawn().expect("spawn server");
                // The child's ends are closed here with the command, so end of
                // input and end of output are the child's alone.
                drop(command);
                LineChild::new(child, Box::new(stdin), Box::new(stdout))
            }
        }
    }

    /// Takes over a child spawned with piped stdin and stdout.
    pub fn from_child(mut child: Child) -> LineChild {
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        LineChild::new(child, Box::new(stdin), Box::new(stdout))
    }

    fn new(child: Child, stdin: Box<dyn Write + Send>, stdout: Box<dyn Read + Send>) -> LineChild {
        LineChild { child, stdin: Some(stdin), stdout: BufReader::new(stdout), line: String::new(), last_id: 1 }
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes `line` (which must end in a newline) to the child's stdin.
    pub fn send(&mut self, line: &str) {
        self.stdin.as_mut().expect("stdin open").write_all(line.as_bytes()).expect("write to server");
    }

    /// The next line, or `None` at end of output.
    pub fn recv(&mut self) -> Option<&str> {
        self.line.clear();
        match self.stdout.read_line(&mut self.line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(&self.line),
        }
    }

    /// The MCP handshake: `initialize`, its answer, then
    /// `notifications/initialized`.
    pub fn handshake(&mut self) {
        let id = self.next_id();
        self.send(&initialize_line(id));
        let line = self.recv().expect("an answer to initialize");
        assert!(line.contains("\"protocolVersion\""), "initialize failed: {line}");
        self.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    }

    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// One call: its round-trip time and whether it succeeded (neither a JSON-RPC
    /// error nor a tool error); `None` when the server closed its output.
    pub fn call(&mut self, call: &Call) -> Option<(Duration, bool)> {
        let id = self.next_id();
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

    /// One call that must succeed; its round-trip time.
    pub fn call_ok(&mut self, call: &Call) -> Duration {
        let (took, ok) = self.call(call).expect("the server answers");
        assert!(ok, "the call failed: {}", self.line);
        took
    }

    /// One call that must succeed, its answer parsed.
    pub fn call_value(&mut self, call: &Call) -> Value {
        self.call_ok(call);
        let value: Value = serde_json::from_str(&self.line).expect("the answer is JSON");
        assert!(value.get("error").is_none(), "the call failed: {value}");
        assert_ne!(value["result"]["isError"], json!(true), "the tool failed: {value}");
        value
    }

    /// Closes stdin and waits (boundedly) for the server to exit; kills it if it
    /// does not.
    pub fn close(mut self) {
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

/// The top-level numeric id of a response line (the first `"id":` in it: rmcp
/// and the shim both write `{"jsonrpc":"2.0","id":…`).
pub fn response_id(line: &str) -> Option<u64> {
    let digits = &line[line.find("\"id\":")? + 5..];
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits[..end].parse().ok()
}

// --- measurements --------------------------------------------------------------

/// A process's resident set size (`VmRSS`), in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// A KiB figure of a process's `/proc/<pid>/status`, by its field name (colon
/// included: `"VmHWM:"`).
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/<pid>/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} is in /proc/{pid}/status"))
}

/// Percentiles of a set of timings.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    /// How many samples.
    pub n: usize,
    /// The 50th percentile.
    pub median: Duration,
    /// The 90th percentile.
    pub p90: Duration,
    /// The 99th percentile.
    pub p99: Duration,
    /// The slowest sample.
    pub max: Duration,
}

impl Stats {
    /// The statistics of `samples`, which must not be empty (nearest-rank
    /// percentiles).
    pub fn of(mut samples: Vec<Duration>) -> Stats {
        assert!(!samples.is_empty(), "no samples were taken");
        samples.sort_unstable();
        let at = |p: f64| samples[((p / 100.0 * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
        Stats { n: samples.len(), median: at(50.0), p90: at(90.0), p99: at(99.0), max: at(100.0) }
    }

    /// Prints a markdown table of timings: a header, then a row of percentiles per
    /// labelled set.
    pub fn print_table(rows: &[(&str, Stats)]) {
        println!("| what | n | p50 | p90 | p99 | max |");
        println!("| --- | --- | --- | --- | --- | --- |");
        for (what, stats) in rows {
            println!(
                "| {what} | {} | {} | {} | {} | {} |",
                stats.n,
                fmt_duration(stats.median),
                fmt_duration(stats.p90),
                fmt_duration(stats.p99),
                fmt_duration(stats.max)
            );
        }
    }
}

/// A duration for the report: microseconds below a millisecond, else
/// milliseconds.
pub fn fmt_duration(d: Duration) -> String {
    let micros = d.as_secs_f64() * 1e6;
    if micros < 1000.0 { format!("{micros:.1} µs") } else { format!("{:.2} ms", micros / 1000.0) }
}

/// A size in KiB for the report, in MiB.
pub fn fmt_kib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

// --- the report --------------------------------------------------------------

/// The table of DESIGN §9's targets a bench prints last: what, target,
/// measured, verdict.
pub struct Report {
    bench: &'static str,
    rows: Vec<[String; 4]>,
}

impl Report {
    /// An empty report of the bench called `bench` (`mcp`, `feedback`).
    pub fn new(bench: &'static str) -> Report {
        Report { bench, rows: Vec::new() }
    }

    /// A figure measured against its target; `met` gives the verdict.
    pub fn row(&mut self, what: &str, target: &str, measured: String, met: bool) {
        let verdict = if met { "met" } else { "**not met**" };
        self.rows.push([what.to_owned(), target.to_owned(), measured, verdict.to_owned()]);
    }

    /// A figure without a target of its own.
    pub fn info(&mut self, what: &str, measured: String) {
        self.rows.push([what.to_owned(), "—".to_owned(), measured, "—".to_owned()]);
    }

    /// Prints the table under a heading naming the bench, with the machine it ran
    /// on.
    pub fn print(&self) {
        println!("\n## {} bench: DESIGN §9 targets", self.bench);
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
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("machine: {cpus} CPUs ({model}); {date}\n")
}

/// Ends the run, and the processes it guards (the daemons the bench started),
/// if it overruns its time limit: the raw clients block on reads, so a stalled
/// server would hang the run.
pub mod watchdog {
    use std::process::Command;
    use std::sync::Mutex;
    use std::time::Duration;

    static PHASE: Mutex<&'static str> = Mutex::new("setup");
    static PIDS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

    /// Starts the watchdog: after `limit`, it names the phase that stalled, kills
    /// the guarded processes and exits with status 2.
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

    /// Names the phase the run is in (for the watchdog's message) and prints it.
    pub fn phase(name: &'static str) {
        *PHASE.lock().unwrap_or_else(|e| e.into_inner()) = name;
        println!("\n… {name}");
    }

    /// A process to kill if the watchdog fires.
    pub fn guard(pid: u32) {
        PIDS.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
    }

    /// A guarded process that has ended (and been waited for): its id may be
    /// reused by another process, which the watchdog must not kill.
    pub fn release(pid: u32) {
        PIDS.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| *p != pid);
    }
}

// --- the hub --------------------------------------------------------------------

/// A blocking hub client with role `cli`.
pub struct HubClient {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: i64,
}

impl HubClient {
    pub fn connect(socket: &Path, cwd: &Path) -> HubClient {
        let hello = Hello {
            protocol: parley_protocol::PROTOCOL_VERSION,
            role: Role::Cli,
            client: ClientInfo { name: "parley-bench".into(), version: "bench".into() },
            pid: Some(std::process::id()),
            cwd: Some(cwd.to_owned()),
            workspaces: vec![cwd.to_owned()],
            editor_id: None,
            position_encoding: PositionEncoding::Utf8,
            parent_pid: None,
            agent_name: None,
            env: Default::default(),
        };
        let stream = UnixStream::connect(socket).expect("connect to the daemon");
        let reader = BufReader::new(stream.try_clone().expect("clone the socket"));
        let mut client = HubClient { stream, reader, next_id: 0 };
        client.call("hello", serde_json::to_value(&hello).expect("hello serializes"));
        client
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.stream.write_all(&to_line(&Request::new(Id::Number(id), method, params))).expect("send to the daemon");
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).expect("read from the daemon");
            assert!(n > 0, "the daemon closed the connection during {method}");
            let message: Value = serde_json::from_str(&line).expect("the daemon sends JSON");
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{method} failed: {line}");
                return message["result"].clone();
            }
        }
    }
}
