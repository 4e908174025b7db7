//! Parley installed the way MCP hosts start servers and editors install
//! extensions, from the local files `scripts/package` writes, per platform:
//! linux-x64 run natively (npx, uvx, the extension in code-server),
//! win32-x64 under Wine, linux-arm64 under qemu-user. Each package holds
//! its platform's binaries with the right platform metadata, and the
//! `parley-mcp` taken out of each answers `tools/list`.
//!
//! To keep the test command quick, the packages hold the debug binaries this
//! test run uses (`scripts/package --binaries target/debug`, and the Windows
//! and arm64 builds scripts/test cross-builds once), stripped, not a release
//! build; the wheel's shim is compiled by maturin in the dev profile in its
//! own `target/wheel`. Needs npm, maturin and uv from `.test-deps/py`, and
//! vsce, code-server and Chromium, as scripts/test installs them.

mod linux_arm64;
mod linux_x64;
mod win32;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use parley_tests::{RawShim, bin_dir, repo_root, test_dep};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// One `scripts/package` at a time: each run packs the extension from the
/// same `editors/vscode` (its `bin/` and bundle), and the builds share two
/// cores.
static PACKAGING: Mutex<()> = Mutex::new(());

/// Runs `scripts/package --only PLATFORM --binaries BINARIES` (every kind
/// of package unless `kinds` names some) into a folder of its own under
/// `target/debug`, and returns that folder.
fn package(platform: &str, binaries: &Path, kinds: Option<&str>) -> PathBuf {
    let _one_at_a_time = PACKAGING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dist = bin_dir().join(format!("package-tests-{platform}"));
    let _ = std::fs::remove_dir_all(&dist);
    let py = test_dep("py/bin");
    let path = format!("{}:{}", py.display(), std::env::var("PATH").unwrap_or_default());
    let mut command = Command::new(repo_root().join("scripts/package"));
    command.args(["--only", platform]);
    if let Some(kinds) = kinds {
        command.args(["--kinds", kinds]);
    }
    let out = command
        .arg("--binaries")
        .arg(binaries)
        .arg("--out")
        .arg(&dist)
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .expect("run scripts/package");
    assert!(
        out.status.success(),
        "scripts/package --only {platform} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    dist
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
fn file_in(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("read dist").path())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(found.len(), 1, "one {prefix}…{suffix} in {}: {found:?}", dir.display());
    found.into_iter().next().expect("one file")
}

/// The crates' version, which every package carries.
fn version() -> String {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).expect("read Cargo.toml");
    let manifest: toml::Table = manifest.parse().expect("Cargo.toml is TOML");
    manifest["workspace"]["package"]["version"].as_str().expect("a workspace version").to_owned()
}

/// Runs a command that unpacks something, failing the test with its output.
fn run(command: &mut Command) {
    let out = command.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Unpacks a zip (a `.vsix`, a wheel, a `.zip` archive) into a new folder
/// `into` with Python's zipfile, as an installer would, keeping the
/// programs' executable bits.
fn unzip(archive: &Path, into: &Path) -> PathBuf {
    const EXTRACT: &str = r#"
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    for entry in archive.infolist():
        path = archive.extract(entry, sys.argv[2])
        if (entry.external_attr >> 16) & 0o111:
            os.chmod(path, 0o755)
"#;
    run(Command::new("python3").args(["-c", EXTRACT]).arg(archive).arg(into));
    into.to_owned()
}

/// Unpacks a `.tgz` or `.tar.gz` into a new folder `into`.
fn untar(archive: &Path, into: &Path) -> PathBuf {
    std::fs::create_dir_all(into).expect("create the folder to unpack into");
    run(Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(into));
    into.to_owned()
}

/// What a program file was built for, read from its header: `x86-64 ELF`,
/// `aarch64 ELF`, `x86-64 PE` (Windows), or what else it is.
fn machine(program: &Path) -> String {
    let bytes = std::fs::read(program).unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let u16_at = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    if bytes.starts_with(b"\x7fELF") {
        return match u16_at(18) {
            Some(62) => "x86-64 ELF".to_owned(),
            Some(183) => "aarch64 ELF".to_owned(),
            other => format!("ELF for machine {other:?}"),
        };
    }
    if bytes.starts_with(b"MZ") {
        let pe = bytes.get(0x3c..0x40).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        if let Some(pe) = pe.filter(|&pe| bytes.get(pe..pe + 4) == Some(b"PE\0\0")) {
            return match u16_at(pe + 4) {
                Some(0x8664) => "x86-64 PE".to_owned(),
                other => format!("PE for machine {other:?}"),
            };
        }
    }
    format!("not a program ({} bytes)", bytes.len())
}

/// Checks `dist/SHA256SUMS` with `sha256sum -c`, as a user checks a
/// download, and that it lists `files` (relative to `dist`).
fn sums_check(dist: &Path, files: &[&Path]) {
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).expect("dist/SHA256SUMS");
    for file in files {
        let name = file.strip_prefix(dist).expect("a file in dist").to_str().expect("a UTF-8 name");
        assert!(sums.lines().any(|line| line.ends_with(&format!("  {name}"))), "SHA256SUMS lists {name}:\n{sums}");
    }
    run(Command::new("sha256sum").args(["-c", "--strict", "SHA256SUMS"]).current_dir(dist));
}

/// A manifest read from a file (`package.json`).
fn json_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// An MCP server on a child's standard input and output, as a host starts
/// one: `initialize`, then `tools/list`.
struct StdioServer {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// How long each answer may take: npx and uvx unpack the package first,
    /// and Wine and qemu start slowly.
    deadline: Duration,
}

impl StdioServer {
    fn start(mut command: tokio::process::Command, deadline: Duration) -> StdioServer {
        // Its stderr is the caller's choice (this test's own by default).
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        let mut child = command.spawn().unwrap_or_else(|e| panic!("start {command:?}: {e}"));
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        StdioServer { child, stdin, lines, deadline }
    }

    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write to the server");
    }

    async fn recv(&mut self) -> Value {
        let answer = tokio::time::timeout(self.deadline, self.lines.next_line())
            .await
            .expect("the packaged shim answered in time")
            .expect("read the shim")
            .expect("the shim's stdout is open");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}"))
    }

    /// Says `initialize` and `notifications/initialized`, then returns the
    /// names `tools/list` answers.
    async fn tools(&mut self) -> Vec<String> {
        self.send(&RawShim::initialize(1)).await;
        let hello = self.recv().await;
        assert_eq!(hello["result"]["serverInfo"]["name"], json!("parley"), "{hello}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()).await;
        self.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string()).await;
        let listed = self.recv().await;
        listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools in {listed}"))
            .iter()
            .map(|tool| tool["name"].as_str().expect("a tool's name").to_owned())
            .collect()
    }

    /// Closes its stdin, as a host does when done, and waits for it to end
    /// and for its stdout to end with it: a host that reads to the end (as
    /// Node's `close` event and Python's `communicate` do) must not wait on
    /// a daemon the shim started.
    async fn finish(mut self) {
        self.stdin = None;
        loop {
            let line = tokio::time::timeout(self.deadline, self.lines.next_line())
                .await
                .expect("the shim's stdout ends in time once its host is done, whatever it started")
                .expect("read the shim");
            match line {
                Some(line) => assert!(line.trim().is_empty(), "nothing more was asked, yet the shim said {line}"),
                None => break,
            }
        }
        let status = tokio::time::timeout(self.deadline, self.child.wait()).await.expect("the shim ends in time");
        assert!(status.expect("wait for the shim").success(), "the shim ends cleanly when its host is done");
    }
}

/// Starts `command` and returns the tools it lists, then lets it end.
async fn tools_listed_by(command: tokio::process::Command, deadline: Duration) -> Vec<String> {
    let mut server = StdioServer::start(command, deadline);
    let tools = server.tools().await;
    server.finish().await;
    tools
}
