//! The integration-test harness: a sandbox per test (its own socket and data
//! directory under a short `/tmp` path), the real `parley` daemon and
//! `parley-mcp` shim binaries, a raw hub client standing in for an editor
//! window, and real git repositories.
//!
//! Tests wait on events with deadlines that fail loudly; they never sleep to
//! synchronise. [`bench`](mod@bench) is the toolkit the bench binaries share.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use parley_protocol::hello::{ClientInfo, Hello, HelloReply, PositionEncoding, Role};
use parley_protocol::jsonrpc::{Id, Message, Notification, Request, Response, to_line};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

pub mod bench;
pub mod fake_github;

/// How long any awaited event may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// The directory holding the built binaries (`target/debug`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    // target/debug/deps/<test> → target/debug
    exe.parent().and_then(Path::parent).expect("tests run from target/<profile>/deps").to_owned()
}

/// The path of a built binary; fails with advice when it was not built.
pub fn bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(
        path.exists(),
        "{} is missing: build it first with `cargo build --workspace` (scripts/test does)",
        path.display()
    );
    path
}

/// Everything one test needs, removed when dropped.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub data: PathBuf,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A fresh sandbox under `/tmp` (short, so the socket path stays well
    /// under the platform limit).
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new().prefix("pz").tempdir_in("/tmp").expect("create sandbox");
        let socket = dir.path().join("run/parley.sock");
        let data = dir.path().join("data");
        Sandbox { dir, socket, data }
    }

    /// A command for one of Parley's binaries with this sandbox's environment.
    pub fn command(&self, binary: &str) -> Command {
        let mut command = Command::new(bin(binary));
        command
            .env("PARLEY_SOCKET", &self.socket)
            .env("PARLEY_DATA_DIR", &self.data)
            .env("PARLEY_DAEMON", bin("parley"))
            .env("PARLEY_LOG", "debug")
            // The user's own config file must not leak into tests.
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env_remove("PARLEY_EDITOR_ID")
            .env_remove("PARLEY_NO_SPAWN");
        command
    }

    /// Starts `parley daemon` and waits until it answers.
    pub fn start_daemon(&self) -> DaemonProcess {
        self.start_daemon_with(|_| {})
    }

    /// Like [`Sandbox::start_daemon`], with `adjust` applied to the daemon's
    /// command first (to change its environment, say).
    pub fn start_daemon_with(&self, adjust: impl FnOnce(&mut Command)) -> DaemonProcess {
        let log = std::fs::File::create(self.dir.path().join(format!("daemon-{}.log", unique()))).expect("log file");
        let mut command = self.command("parley");
        adjust(&mut command);
        let child = command
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start parley daemon");
        let daemon = DaemonProcess { child };
        self.wait_for_socket();
        daemon
    }

    /// Waits until something accepts connections on the socket.
    pub fn wait_for_socket(&self) {
        let deadline = std::time::Instant::now() + DEADLINE;
        while std::os::unix::net::UnixStream::connect(&self.socket).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the daemon did not listen on {} in time",
                self.socket.display()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Runs the `parley` CLI and returns (exit code, stdout, stderr).
    pub fn cli(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.command("parley").args(args).stdin(Stdio::null()).output().expect("run parley");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `parley status --json`, parsed.
    pub fn status(&self) -> Value {
        let (code, out, err) = self.cli(&["status", "--json"]);
        assert_eq!(code, 0, "parley status failed: {out}{err}");
        serde_json::from_str(&out).expect("status prints JSON")
    }

    /// An MCP client (rmcp) driving the real `parley-mcp` shim started in `cwd`.
    pub async fn agent(&self, cwd: &Path) -> Agent {
        self.agent_with(cwd, &[]).await
    }

    /// Like [`Sandbox::agent`] with extra environment variables for the shim.
    pub async fn agent_with(&self, cwd: &Path, env: &[(&str, &str)]) -> Agent {
        let mut command = tokio::process::Command::from(self.command("parley-mcp"));
        command.current_dir(cwd);
        for (key, value) in env {
            command.env(key, value);
        }
        let (transport, _) =
            TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().expect("start parley-mcp");
        let service = tokio::time::timeout(DEADLINE, rmcp::ServiceExt::serve((), transport))
            .await
            .expect("MCP handshake within the deadline")
            .expect("MCP handshake");
        Agent { service }
    }

    /// A raw hub client saying hello as an editor open on `workspaces`.
    pub async fn editor(&self, name: &str, workspaces: &[&Path]) -> Editor {
        self.editor_with(name, None, workspaces).await
    }

    pub async fn editor_with(&self, name: &str, editor_id: Option<&str>, workspaces: &[&Path]) -> Editor {
        Editor::connect(&self.socket, &editor_hello(name, editor_id, workspaces)).await
    }

    /// A git repository under the sandbox with the given files.
    pub fn repo(&self, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root = self.dir.path().join(name);
        std::fs::create_dir_all(&root).expect("create repo dir");
        let status = Command::new("git").args(["init", "-q"]).current_dir(&root).status().expect("run git init");
        assert!(status.success(), "git init failed");
        for (path, content) in files {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().expect("file has a parent")).expect("mkdir");
            std::fs::write(&file, content).expect("write file");
        }
        root
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Runs `git` in `repo` as a test user (no signing), failing the test on an error.
pub fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(repo)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The repository root: `tests/` is this package's manifest directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the repository root").to_owned()
}

/// Where the MCP tool list is pinned: every tool as the daemon's `tools/list`
/// gives it (name, title, description, schemas, annotations). `mcp_tools.rs`
/// checks the live list against it (`PARLEY_UPDATE_SNAPSHOTS=1` rewrites it);
/// every test and SDK client script that needs the list reads it from here.
pub fn tools_snapshot_path() -> PathBuf {
    repo_root().join("tests/snapshots/tools.json")
}

/// The pinned MCP tool list (see [`tools_snapshot_path`]).
pub fn tools_snapshot() -> Vec<Value> {
    let path = tools_snapshot_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not a JSON list of tools: {e}", path.display()))
}

/// The names of the pinned MCP tools, in the order `tools/list` gives them.
pub fn tool_names() -> Vec<String> {
    tools_snapshot().iter().map(|t| t["name"].as_str().expect("every tool has a name").to_owned()).collect()
}

/// A path under `.test-deps/` that scripts/test creates; fails with advice when it is missing.
pub fn test_dep(relative: &str) -> PathBuf {
    let path = repo_root().join(".test-deps").join(relative);
    assert!(path.exists(), "{} is missing: run scripts/test (it installs the test tools)", path.display());
    path
}

/// A daemon started by a test; killed when dropped.
pub struct DaemonProcess {
    pub child: Child,
}

impl DaemonProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `kill -9`: no chance to clean up.
    pub fn kill_hard(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits for the exit; returns the exit code.
    pub fn terminate(&mut self) -> Option<i32> {
        let status = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().expect("run kill");
        assert!(status.success());
        let deadline = std::time::Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for daemon") {
                return status.code();
            }
            assert!(std::time::Instant::now() < deadline, "the daemon did not exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        self.kill_hard();
    }
}

/// Stops any daemon a shim started in this sandbox.
impl Drop for Sandbox {
    fn drop(&mut self) {
        if self.socket.exists() {
            let _ = self.command("parley").arg("stop").stdout(Stdio::null()).stderr(Stdio::null()).status();
        }
    }
}

/// An MCP client on the real shim.
pub struct Agent {
    pub service: RunningService<RoleClient, ()>,
}

impl Agent {
    /// Calls a tool and returns its result. The tool must be one of the
    /// pinned list (`tests/snapshots/tools.json`), so a test calling a tool
    /// by a name the list no longer has says so.
    pub async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        static PINNED: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let pinned = PINNED.get_or_init(tool_names);
        assert!(pinned.iter().any(|t| t == tool), "{tool} is not in tests/snapshots/tools.json, which has {pinned:?}");
        let Value::Object(arguments) = arguments else { panic!("tool arguments must be an object") };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        tokio::time::timeout(DEADLINE, self.service.call_tool(params))
            .await
            .expect("tool call within the deadline")
            .expect("tool call succeeds at the protocol level")
    }

    /// Asks for a person's review (`request_review` with `arguments`,
    /// reviewer `human`, not waiting), and waits until the round reaches the
    /// person: the call answers at once, the round moments later, once its
    /// diff is captured. The review id.
    pub async fn ask_a_person(&self, mut arguments: Value) -> String {
        arguments["reviewer"] = json!("human");
        arguments["wait_seconds"] = json!(0);
        let pending = self.call_ok("request_review", arguments).await;
        assert_eq!(pending["status"], "pending", "{pending:#}");
        assert!(pending["message"].as_str().unwrap_or("").contains("to review it"), "{pending:#}");
        let id = pending["review_id"].as_str().expect("review id").to_owned();
        let deadline = tokio::time::Instant::now() + DEADLINE;
        let mut step = pending["step"].clone();
        while !step.as_str().is_some_and(|s| s.starts_with("waiting for")) {
            assert!(tokio::time::Instant::now() < deadline, "round of review {id} never reached the person: {step}");
            tokio::time::sleep(Duration::from_millis(20)).await;
            step = self.call_ok("await_review", json!({ "review_id": id, "wait_seconds": 0 })).await["step"].clone();
        }
        id
    }

    /// Calls a tool that must succeed and returns its structured content.
    pub async fn call_ok(&self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text_of(&result));
        let structured = result.structured_content.clone().expect("structured content");
        // request_review's and get_feedback's texts are renderings; every
        // other tool's is the JSON.
        if let Ok(text) = serde_json::from_str::<Value>(&text_of(&result)) {
            assert_eq!(&text, &structured, "the text copy matches structuredContent");
        }
        structured
    }

    /// Calls a tool that must fail and returns its error text.
    pub async fn call_err(&self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await;
        assert_eq!(result.is_error, Some(true), "{tool} should have failed: {}", text_of(&result));
        text_of(&result)
    }
}

/// The text of a tool result's first content block.
pub fn text_of(result: &CallToolResult) -> String {
    result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default()
}

/// What a raw hub client reads from: the socket, or a relay's stdout.
type HubReader = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
/// What a raw hub client writes to: the socket, or a relay's stdin.
type HubWriter = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

/// The hello a raw hub client sends as an editor window open on `workspaces`.
pub fn editor_hello(name: &str, editor_id: Option<&str>, workspaces: &[&Path]) -> Hello {
    Hello {
        protocol: parley_protocol::PROTOCOL_VERSION,
        role: Role::Editor,
        client: ClientInfo { name: name.into(), version: "test".into() },
        pid: Some(std::process::id()),
        cwd: None,
        workspaces: workspaces.iter().map(|w| w.to_path_buf()).collect(),
        editor_id: editor_id.map(Into::into),
        position_encoding: PositionEncoding::Utf16,
        parent_pid: None,
        agent_name: None,
        env: Default::default(),
    }
}

/// A raw hub client acting as an editor window.
pub struct Editor {
    pub reply: HelloReply,
    lines: tokio::io::Lines<BufReader<HubReader>>,
    writer: HubWriter,
    next_id: i64,
    /// Messages read while waiting for something else.
    backlog: VecDeque<Message>,
    /// What this editor answers to `selection/get`.
    pub selection: Value,
    /// What it answers to the daemon's other requests (`symbols/find`,
    /// `diagnostics/get`), by method; any other is answered "not supported",
    /// as a window without the feature does.
    pub answers: std::collections::HashMap<String, Value>,
    /// The params of each such request, in the order they came.
    pub asked: Vec<(String, Value)>,
}

impl Editor {
    pub async fn connect(socket: &Path, hello: &Hello) -> Editor {
        let stream = UnixStream::connect(socket).await.expect("connect to the daemon");
        let (read, writer) = stream.into_split();
        Editor::over(Box::new(read), Box::new(writer), hello).await
    }

    /// Says hello over any byte stream to the daemon (a relay's stdout and
    /// stdin, say) and reads the answer.
    pub async fn over(read: HubReader, mut writer: HubWriter, hello: &Hello) -> Editor {
        let mut lines = BufReader::new(read).lines();
        let request = Request::new(Id::Number(0), "hello", serde_json::to_value(hello).expect("hello serializes"));
        writer.write_all(&to_line(&request)).await.expect("send hello");
        let line = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("hello answered in time")
            .expect("read hello answer")
            .expect("daemon answered hello");
        let response: Response = serde_json::from_str(&line).expect("hello answer is a response");
        let reply = serde_json::from_value(response.result.expect("hello succeeded")).expect("hello reply shape");
        Editor {
            reply,
            lines,
            writer,
            next_id: 0,
            backlog: VecDeque::new(),
            selection: Value::Null,
            answers: Default::default(),
            asked: Vec::new(),
        }
    }

    pub async fn send_line(&mut self, line: &[u8]) {
        self.writer.write_all(line).await.expect("write to daemon");
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send_line(&to_line(&Notification::new(method, params))).await;
    }

    /// Reads the next message, answering the daemon's requests on the way.
    async fn read(&mut self) -> Option<Message> {
        loop {
            let line = self.lines.next_line().await.expect("read from daemon")?;
            let message = Message::parse(line.as_bytes()).expect("the daemon sends valid JSON-RPC");
            let Message::Request(request) = &message else { return Some(message) };
            let answer = if request.method == "selection/get" {
                Response::ok(request.id.clone(), self.selection.clone())
            } else {
                self.asked.push((request.method.clone(), request.params.clone()));
                match self.answers.get(&request.method) {
                    Some(answer) => Response::ok(request.id.clone(), answer.clone()),
                    None => Response::err(
                        Some(request.id.clone()),
                        parley_protocol::jsonrpc::ErrorObject::new(-32601, "not supported"),
                    ),
                }
            };
            self.writer.write_all(&to_line(&answer)).await.expect("answer the daemon's request");
        }
    }

    /// Calls a hub method and returns the whole response.
    pub async fn request(&mut self, method: &str, params: Value) -> Response {
        self.next_id += 1;
        let id = Id::String(format!("t{}", self.next_id));
        self.send_line(&to_line(&Request::new(id.clone(), method, params))).await;
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let message = tokio::time::timeout_at(deadline, self.read())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method} in time"))
                .unwrap_or_else(|| panic!("the daemon closed the connection before answering {method}"));
            match message {
                Message::Response(response) if response.id.as_ref() == Some(&id) => return response,
                other => self.backlog.push_back(other),
            }
        }
    }

    /// Calls a hub method that must succeed and returns its result.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(response.error.is_none(), "{method} failed: {:?}", response.error);
        response.result.unwrap_or(Value::Null)
    }

    /// The next notification, failing the test if none arrives in time.
    pub async fn next_notification(&mut self) -> Notification {
        self.try_next_notification(DEADLINE).await.expect("a notification arrives in time")
    }

    /// The next notification within `wait`, or `None`.
    pub async fn try_next_notification(&mut self, wait: Duration) -> Option<Notification> {
        while let Some(message) = self.backlog.pop_front() {
            if let Message::Notification(n) = message {
                return Some(n);
            }
        }
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.read()).await {
                Ok(Some(Message::Notification(n))) => return Some(n),
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Waits for the daemon to send a request `method` and returns it
    /// unanswered.
    pub async fn wait_request(&mut self, method: &str) -> Request {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let line = tokio::time::timeout_at(deadline, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no {method} request in time"))
                .expect("read from daemon")
                .unwrap_or_else(|| panic!("the daemon closed the connection before sending {method}"));
            match Message::parse(line.as_bytes()).expect("valid JSON-RPC") {
                Message::Request(request) if request.method == method => return request,
                other => self.backlog.push_back(other),
            }
        }
    }

    /// Answers `selection/get` from a background task for as long as the
    /// connection lasts.
    pub fn answer_in_background(mut self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move { while self.read().await.is_some() {} })
    }

    /// Keeps answering `selection/get` until `until` completes.
    pub async fn serve_while<F: std::future::Future>(&mut self, until: F) -> F::Output {
        tokio::pin!(until);
        loop {
            tokio::select! {
                out = &mut until => return out,
                message = self.read() => match message {
                    Some(message) => self.backlog.push_back(message),
                    None => return until.await,
                },
            }
        }
    }
}

/// A JSON object of a present_review call.
pub fn review_args(content: &str, base: &Path) -> Value {
    json!({ "content": content, "baseUri": base })
}

/// The real shim as a plain child process, for tests that need raw lines.
pub struct RawShim {
    pub child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl RawShim {
    /// Starts `parley-mcp` in `cwd` with extra environment.
    pub fn start(sandbox: &Sandbox, cwd: &Path, env: &[(&str, &str)]) -> RawShim {
        let mut command = tokio::process::Command::from(sandbox.command("parley-mcp"));
        command.current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.kill_on_drop(true).spawn().expect("start parley-mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        RawShim { child, stdin, stdout }
    }

    pub async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(line.as_bytes()).await.expect("write to shim");
        stdin.write_all(b"\n").await.expect("write to shim");
    }

    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.as_mut().expect("stdin still open").write_all(bytes).await.expect("write to shim");
    }

    /// Closes the shim's stdin, as a host does when it is done.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line on the shim's stdout, parsed.
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(DEADLINE, self.stdout.next_line())
            .await
            .expect("the shim answered in time")
            .expect("read shim stdout")
            .expect("the shim's stdout is still open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("the shim wrote a non-JSON line {line:?}: {e}"))
    }

    /// Waits for the shim to exit and returns its code.
    pub async fn exit_code(&mut self) -> Option<i32> {
        let status = tokio::time::timeout(DEADLINE, self.child.wait()).await.expect("the shim exits in time");
        status.expect("wait for shim").code()
    }

    /// Says `initialize` (id 1) and `notifications/initialized`, checking
    /// the daemon answered the first.
    pub async fn handshake(&mut self) {
        self.send(&RawShim::initialize(1)).await;
        let answer = self.recv().await;
        assert!(answer["id"] == json!(1) && answer["result"]["serverInfo"].is_object(), "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    }

    /// The MCP `initialize` request a legacy host sends first.
    pub fn initialize(id: u64) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}}})
        .to_string()
    }
}

/// A pseudo-terminal without echo, `rows` high when given (0: a size it
/// does not know; none: no size set): (master, slave). Output still turns
/// `\n` into `\r\n`, as a terminal does.
pub fn pty(rows: Option<u16>) -> (std::fs::File, std::os::fd::OwnedFd) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("open a pseudo-terminal");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let slave = rustix::fs::open(
        name.as_c_str(),
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY,
        rustix::fs::Mode::empty(),
    )
    .expect("open the terminal's slave side");
    let mut termios = rustix::termios::tcgetattr(&slave).expect("tcgetattr");
    termios.local_modes.remove(rustix::termios::LocalModes::ECHO);
    rustix::termios::tcsetattr(&slave, rustix::termios::OptionalActions::Now, &termios).expect("tcsetattr");
    if let Some(rows) = rows {
        let size = rustix::termios::Winsize { ws_row: rows, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0 };
        rustix::termios::tcsetwinsize(&slave, size).expect("set the terminal's size");
    }
    (std::fs::File::from(master), slave)
}
