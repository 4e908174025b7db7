//! The daemon's transports (issue 21 item 8): a hub round trip over the Unix
//! socket on Linux and over the named pipe on Windows (under Wine), each
//! against a plain pipe echo between two processes of the same OS, timed in
//! the same run by the same program, `transport-probe`
//! (`tests/transport-probe/`), built for each OS.
//!
//! The round trip is a `status` request and its answer on one connection
//! (the cheapest request: it reads counters); the echo sends a line of the
//! request's size to a child on anonymous pipes, which answers a line of the
//! answer's size. Their ratio is what the daemon and its transport add to
//! the cheapest round trip the OS offers. Wine's pipes and named pipes are
//! wineserver's emulation, so the Windows figures are Wine's, not Windows's:
//! the report says so.
//!
//! ```sh
//! cargo build --release --workspace
//! cargo build --release --target x86_64-pc-windows-gnu       # parley.exe and transport-probe.exe
//! PARLEY_WINDOWS_BIN=target/x86_64-pc-windows-gnu/release WINEPREFIX=… cargo bench -p parley-tests --bench transport
//! ```
//!
//! Without `PARLEY_WINDOWS_BIN` the bench fails, saying how to build it (the
//! debug folder scripts/test builds works too; the report names which was
//! used). Each probe alternates three times between the round trip and the
//! echo. It asserts nothing about timings; every process is bounded by the
//! watchdog.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use parley_tests::bench::{Report, fmt_duration, start_daemon, watchdog};
use parley_tests::{Sandbox, bin};
use serde_json::Value;

/// The whole run, whatever happens.
const RUN_LIMIT: Duration = Duration::from_secs(600);
/// Round trips per sample set on Linux.
const LINUX_ROUNDS: usize = 5000;
/// Round trips per sample set under Wine, where each costs far more.
const WINE_ROUNDS: usize = 1000;
/// Sample sets of each kind, alternating.
const ALTERNATIONS: usize = 3;

/// One sample set as `transport-probe` prints it.
#[derive(Clone, Copy)]
struct Probe {
    p50: Duration,
    p99: Duration,
    request_bytes: usize,
    answer_bytes: usize,
}

/// Both kinds of sample set of one OS, and the median of each figure.
struct Pair {
    hub: Vec<Probe>,
    echo: Vec<Probe>,
}

impl Pair {
    fn median(sets: &[Probe], figure: fn(&Probe) -> Duration) -> Duration {
        let mut values: Vec<Duration> = sets.iter().map(figure).collect();
        values.sort();
        values[values.len() / 2]
    }

    fn ratio(&self, figure: fn(&Probe) -> Duration) -> f64 {
        Pair::median(&self.hub, figure).as_secs_f64() / Pair::median(&self.echo, figure).as_secs_f64()
    }
}

fn main() {
    watchdog::start(RUN_LIMIT);
    let windows = windows_bin();
    let mut report = Report::new("transport");

    watchdog::phase("unix socket");
    let sandbox = Sandbox::new();
    let _daemon = start_daemon(&sandbox);
    let probe = bin("transport-probe");
    let socket = sandbox.socket.to_str().expect("the sandbox's socket path is text").to_owned();
    let linux = alternate(|| Command::new(&probe), &socket, LINUX_ROUNDS);

    watchdog::phase("named pipe under wine");
    let wine = under_wine(&windows);

    println!("\n### Round trips (median of {ALTERNATIONS} sets; each set's p50 and p99)\n");
    println!("| transport | rounds per set | p50 | p99 | plain pipe echo p50 | p99 | ratio p50 | ratio p99 |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (name, pair, rounds) in
        [("Unix socket (Linux)", &linux, LINUX_ROUNDS), ("named pipe (Windows build under Wine)", &wine, WINE_ROUNDS)]
    {
        println!(
            "| {name} | {rounds} | {} | {} | {} | {} | {:.1}× | {:.1}× |",
            fmt_duration(Pair::median(&pair.hub, |p| p.p50)),
            fmt_duration(Pair::median(&pair.hub, |p| p.p99)),
            fmt_duration(Pair::median(&pair.echo, |p| p.p50)),
            fmt_duration(Pair::median(&pair.echo, |p| p.p99)),
            pair.ratio(|p| p.p50),
            pair.ratio(|p| p.p99),
        );
    }
    let sizes = linux.hub[0];
    report.info(
        "a `status` request and its answer",
        format!("{} and {} bytes (echoed at the same sizes)", sizes.request_bytes, sizes.answer_bytes),
    );
    report.info(
        "hub round trip over the Unix socket ÷ a plain pipe echo on Linux (p50)",
        format!("{:.1}×", linux.ratio(|p| p.p50)),
    );
    report.info(
        "hub round trip over the named pipe ÷ a plain pipe echo, both under Wine (p50)",
        format!("{:.1}×", wine.ratio(|p| p.p50)),
    );
    report.info(
        "hub round trip over the named pipe under Wine ÷ over the Unix socket (p50)",
        format!(
            "{:.1}× (the daemon's own work included; the builds named below)",
            Pair::median(&wine.hub, |p| p.p50).as_secs_f64() / Pair::median(&linux.hub, |p| p.p50).as_secs_f64()
        ),
    );
    report.info(
        "the named pipe's ratio ÷ the Unix socket's (p50)",
        format!(
            "{:.2}× (Wine's emulated pipes, not a Windows measurement)",
            wine.ratio(|p| p.p50) / linux.ratio(|p| p.p50)
        ),
    );
    report.info("Linux binaries", probe.parent().map_or_else(String::new, |dir| dir.display().to_string()));
    report.info("Windows binaries", windows.display().to_string());
    report.print();
}

/// The folder of `parley.exe` and `transport-probe.exe`, or the run ends
/// saying how to build them.
fn windows_bin() -> PathBuf {
    let dir =
        std::env::var_os("PARLEY_WINDOWS_BIN").filter(|v| !v.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
            panic!(
                "PARLEY_WINDOWS_BIN is not set: build the Windows binaries with \
             `cargo build --release --target x86_64-pc-windows-gnu` and set \
             PARLEY_WINDOWS_BIN=target/x86_64-pc-windows-gnu/release (and WINEPREFIX to a prepared prefix, \
             such as .test-deps/wine after scripts/test)"
            )
        });
    for exe in ["parley.exe", "transport-probe.exe"] {
        assert!(
            dir.join(exe).is_file(),
            "{} has no {exe}: build it with `cargo build --target x86_64-pc-windows-gnu` (add --release for the release folder)",
            dir.display()
        );
    }
    dir
}

/// The daemon under Wine on a pipe of its own, and the probe's sets there.
fn under_wine(windows: &Path) -> Pair {
    let quiet = |args: &[&str]| {
        let _ = Command::new(args[0])
            .args(&args[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    };
    // Wine's server must not inherit a pipe of ours (see tests/tests/windows/mod.rs).
    quiet(&["wineserver", "-p"]);
    quiet(&["wine", "cmd", "/c", "exit"]);
    let pipe = format!(r"\\.\pipe\parley-bench-{}", std::process::id());
    let data = format!(r"C:\users\parley-bench\{}", std::process::id());
    let parley = |args: &[&str]| {
        let mut command = Command::new("wine");
        command.arg(windows.join("parley.exe")).args(args).env("PARLEY_SOCKET", &pipe).env("PARLEY_DATA_DIR", &data);
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        command
    };
    let mut daemon = parley(&["daemon"]).spawn().expect("wine starts parley.exe daemon");
    watchdog::guard(daemon.id());
    let up = (0..300).any(|_| parley(&["status"]).env("PARLEY_NO_SPAWN", "1").status().is_ok_and(|s| s.success()));
    assert!(up, "the daemon under Wine did not answer on {pipe}");
    let probe = windows.join("transport-probe.exe");
    let pair = alternate(
        || {
            let mut command = Command::new("wine");
            command.arg(&probe);
            command
        },
        &pipe,
        WINE_ROUNDS,
    );
    let _ = parley(&["stop"]).env("PARLEY_NO_SPAWN", "1").status();
    let _ = daemon.wait();
    watchdog::release(daemon.id());
    pair
}

/// Alternates the hub's sets with the echo's, the echo at the hub's sizes.
fn alternate(probe: impl Fn() -> Command, endpoint: &str, rounds: usize) -> Pair {
    let mut pair = Pair { hub: Vec::new(), echo: Vec::new() };
    for _ in 0..ALTERNATIONS {
        let hub = run(probe().args(["hub", endpoint, &rounds.to_string()]));
        let sizes = [hub.request_bytes.to_string(), hub.answer_bytes.to_string()];
        pair.hub.push(hub);
        pair.echo.push(run(probe().args(["echo", &rounds.to_string(), &sizes[0], &sizes[1]])));
    }
    pair
}

fn run(command: &mut Command) -> Probe {
    let out = command.stdin(Stdio::null()).stderr(Stdio::inherit()).output().expect("start transport-probe");
    assert!(out.status.success(), "transport-probe failed: {:?}", command);
    let line: Value = serde_json::from_slice(&out.stdout).expect("transport-probe prints one JSON line");
    let nanos = |key: &str| Duration::from_nanos(line[key].as_u64().unwrap_or_else(|| panic!("{key} in {line}")));
    let bytes = |key: &str| line[key].as_u64().unwrap_or_else(|| panic!("{key} in {line}")) as usize;
    Probe {
        p50: nanos("p50_ns"),
        p99: nanos("p99_ns"),
        request_bytes: bytes("request_bytes"),
        answer_bytes: bytes("answer_bytes"),
    }
}
