//! Reaching the daemon: connect to its socket, start it when nobody answers
//! (under a start lock, so two clients starting at once end with one daemon),
//! and open the connection with `hello`.
//!
//! The `parley` CLI uses this module too, so every client starts the daemon
//! the same way.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use parley_protocol::framing::{LineError, LineReader};
use parley_protocol::hello::{HELLO, Hello, HelloReply};
use parley_protocol::jsonrpc::{Id, Message, Request, to_line};
use parley_protocol::socket;
use tokio::io::{AsyncWriteExt, BufReader};

use crate::daemon_start::{detach, owner_only};
use crate::transport::{self, ReadHalf, Stream, WriteHalf};

/// Set to `1` to forbid clients from starting a daemon.
pub const NO_SPAWN_ENV: &str = "PARLEY_NO_SPAWN";
/// The daemon binary to start, instead of `parley` beside the client's own binary.
pub const DAEMON_ENV: &str = "PARLEY_DAEMON";

/// How long a client waits for a daemon it started to answer.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client waits for another client's start lock.
const START_LOCK_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a full accept queue (`EAGAIN`) is retried before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the daemon has to answer `hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How many times a connection closed before `hello` was answered is tried
/// again: a daemon that has just died may still have accepted it.
const HELLO_CLOSED_RETRIES: u32 = 5;

/// Why no connection to the daemon could be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(transparent)]
    SocketPath(#[from] socket::SocketPathError),
    #[error(transparent)]
    SocketDir(#[from] socket::SocketDirError),
    #[error(
        "no Parley daemon is listening on {0} and {NO_SPAWN_ENV} is set: start one with `parley daemon`, or unset {NO_SPAWN_ENV}"
    )]
    NotRunning(PathBuf),
    #[error("cannot connect to {socket}: {source}")]
    Connect { socket: PathBuf, source: io::Error },
    #[error("cannot start the Parley daemon {binary}: {source}; set {DAEMON_ENV} to the `parley` binary")]
    Spawn { binary: PathBuf, source: io::Error },
    #[error("the Parley daemon exited during start-up ({status}); run `parley daemon` in a terminal to see why")]
    DaemonExited { status: String },
    #[error(
        "the Parley daemon did not answer on {0} within 10 s of starting; run `parley daemon` in a terminal to see why"
    )]
    StartTimeout(PathBuf),
    #[error("another client held the start lock {0} for 15 s; remove it if no Parley process is running")]
    StartLockTimeout(PathBuf),
    #[error("cannot use the start lock {path}: {source}")]
    StartLock { path: PathBuf, source: io::Error },
    #[error("the daemon refused hello: {0}")]
    HelloRefused(String),
    #[error("the daemon did not answer hello properly: {0}")]
    HelloBroken(String),
    #[error("the daemon closed the connection before answering hello: {0}")]
    HelloClosed(String),
}

/// An open connection after a successful hello.
#[derive(Debug)]
pub struct HubConnection {
    /// Lines from the daemon; holds any bytes the daemon sent right after its
    /// hello answer.
    pub reader: LineReader<BufReader<ReadHalf>>,
    pub writer: WriteHalf,
    pub reply: HelloReply,
}

/// Connects to the daemon on `socket_path`, starting one if none answers and
/// `spawn` allows it, then says `hello`. A daemon running an older build of
/// the `parley` this client would start is asked to hand over first.
pub async fn open(socket_path: &Path, spawn: bool, hello: &Hello) -> Result<HubConnection, ConnectError> {
    let connection = connect_and_hello(socket_path, spawn, hello).await?;
    if !spawn || !outdated(&connection.reply) {
        return Ok(connection);
    }
    let pid = connection.reply.pid;
    drop(connection);
    eprintln!("parley-mcp: the running daemon (pid {pid}) is an older build of parley; asking it to hand over");
    hand_over(socket_path).await?;
    connect_and_hello(socket_path, spawn, hello).await
}

/// Connects (starting a daemon if allowed) and says `hello`. A daemon killed
/// a moment ago can still have accepted the connection on its way out, which
/// then closes unanswered: that is tried again, and a new daemon started once
/// the socket is stale.
async fn connect_and_hello(socket_path: &Path, spawn: bool, hello: &Hello) -> Result<HubConnection, ConnectError> {
    let mut attempt = 0;
    loop {
        let stream = connect_or_start(socket_path, spawn).await?;
        match say_hello(stream, hello).await {
            Err(ConnectError::HelloClosed(_)) if attempt < HELLO_CLOSED_RETRIES => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(10 * u64::from(attempt))).await;
            }
            result => return result,
        }
    }
}

/// Whether the daemon runs an older build of the `parley` this client starts:
/// the same executable file, replaced since the daemon started.
fn outdated(reply: &parley_protocol::hello::HelloReply) -> bool {
    let (Some(executable), Some(build)) = (&reply.executable, &reply.build) else {
        return false;
    };
    let ours = daemon_binary();
    let ours = ours.canonicalize().unwrap_or(ours);
    &ours == executable && parley_protocol::hello::executable_identity(&ours).is_some_and(|now| &now != build)
}

/// Asks the running daemon to stop (it finishes in-flight calls first) and
/// waits until it has let go of its lock.
async fn hand_over(socket_path: &Path) -> Result<(), ConnectError> {
    let handing_over =
        |message: String| ConnectError::HelloBroken(format!("asking the old daemon to hand over: {message}"));
    if let Some(stream) = try_connect(socket_path).await? {
        let hello = Hello {
            protocol: parley_protocol::PROTOCOL_VERSION,
            role: parley_protocol::hello::Role::Cli,
            client: parley_protocol::hello::ClientInfo {
                name: "parley-mcp".into(),
                version: parley_protocol::BUILD_VERSION.into(),
            },
            pid: Some(std::process::id()),
            cwd: None,
            workspaces: Vec::new(),
            editor_id: None,
            position_encoding: parley_protocol::hello::PositionEncoding::Utf32,
            parent_pid: None,
            agent_name: None,
            env: Default::default(),
        };
        let mut connection = say_hello(stream, &hello).await?;
        let request = Request::new(
            Id::Number(1),
            parley_protocol::methods::SHUTDOWN,
            serde_json::json!({ "reason": "a newer build of parley takes over" }),
        );
        connection.writer.write_all(&to_line(&request)).await.map_err(|e| handing_over(e.to_string()))?;
        let _ = tokio::time::timeout(HELLO_TIMEOUT, connection.reader.next_line()).await;
    }
    let lock_path = socket::daemon_lock_path(socket_path);
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let free = match File::open(&lock_path) {
            Ok(file) => file.try_lock().is_ok(),
            Err(_) => true,
        };
        if free {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(handing_over("the old daemon did not stop within 10 s; stop it with `parley stop`".into()));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether starting a daemon is allowed by the environment.
pub fn spawn_allowed() -> bool {
    std::env::var_os(NO_SPAWN_ENV).is_none_or(|v| v.is_empty() || v == "0")
}

/// Connects, starting the daemon when nobody listens and `spawn` is true.
pub async fn connect_or_start(socket_path: &Path, spawn: bool) -> Result<Stream, ConnectError> {
    if let Some(stream) = try_connect(socket_path).await? {
        return Ok(stream);
    }
    if !spawn {
        return Err(ConnectError::NotRunning(socket_path.to_owned()));
    }
    socket::prepare_socket_dir(socket_path)?;
    let lock_path = socket::start_lock_path(socket_path);
    let _lock = take_start_lock(&lock_path).await?;
    // Another client may have started the daemon while this one waited.
    if let Some(stream) = try_connect(socket_path).await? {
        return Ok(stream);
    }
    let mut child = spawn_daemon(socket_path)?;
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(stream) = try_connect(socket_path).await? {
            reap_in_background(child);
            return Ok(stream);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(ConnectError::DaemonExited { status: status.to_string() });
        }
        if Instant::now() > deadline {
            reap_in_background(child);
            return Err(ConnectError::StartTimeout(socket_path.to_owned()));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// One connection attempt: `None` means nobody is listening (no socket file,
/// or a stale one). A full accept queue is retried, never taken for "no daemon".
pub async fn try_connect(socket_path: &Path) -> Result<Option<Stream>, ConnectError> {
    let busy_deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match transport::connect(socket_path).await {
            Ok(stream) => return Ok(Some(stream)),
            Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused) => {
                return Ok(None);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < busy_deadline => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(source) => return Err(ConnectError::Connect { socket: socket_path.to_owned(), source }),
        }
    }
}

async fn take_start_lock(path: &Path) -> Result<File, ConnectError> {
    let file = owner_only(OpenOptions::new().create(true).truncate(false).write(true))
        .open(path)
        .map_err(|source| ConnectError::StartLock { path: path.to_owned(), source })?;
    let deadline = Instant::now() + START_LOCK_TIMEOUT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(ConnectError::StartLockTimeout(path.to_owned()));
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(ConnectError::StartLock { path: path.to_owned(), source });
            }
        }
    }
}

/// The daemon binary: `$PARLEY_DAEMON`, else `parley` beside this executable.
pub fn daemon_binary() -> PathBuf {
    if let Some(path) = std::env::var_os(DAEMON_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("parley"));
    if exe.file_stem().is_some_and(|s| s == "parley") {
        return exe;
    }
    exe.with_file_name("parley")
}

/// The log file a started daemon writes to, beside its socket.
pub fn daemon_log_path(socket_path: &Path) -> PathBuf {
    socket::socket_side_file(socket_path, "log")
}

fn spawn_daemon(socket_path: &Path) -> Result<Child, ConnectError> {
    let binary = daemon_binary();
    let spawn_error = |source| ConnectError::Spawn { binary: binary.clone(), source };
    // The daemon must not hold the host's stdio: a host waits for EOF on the
    // shim's stdout, and an inherited copy would keep it open forever.
    let log = owner_only(OpenOptions::new().create(true).append(true))
        .open(daemon_log_path(socket_path))
        .map_err(spawn_error)?;
    detach(&mut Command::new(&binary))
        .arg("daemon")
        // Only what a daemon needs: it outlives this client and serves every
        // other one, so the starter's keys must not stay with it.
        .env_clear()
        .envs(std::env::vars_os().filter(|(name, _)| name.to_str().is_some_and(daemon_needs)))
        .env(socket::SOCKET_ENV, socket_path)
        .envs(parley_protocol::DAEMON_ENV.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(spawn_error)
}

/// The variables a started daemon keeps of its starter's environment: where
/// the user's files and programs are, the locale, and Parley's own settings.
/// Windows names its variables in any case, and programs there need the
/// system's own folders (`SystemRoot`) to start at all.
fn daemon_needs(name: &str) -> bool {
    const KEPT: &[&str] =
        &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TZ", "TMPDIR", "LANG", "LANGUAGE", "RUST_BACKTRACE"];
    const KEPT_ON_WINDOWS: &[&str] = &[
        "SYSTEMROOT",
        "WINDIR",
        "SYSTEMDRIVE",
        "USERPROFILE",
        "USERNAME",
        "USERDOMAIN",
        "LOCALAPPDATA",
        "APPDATA",
        "TEMP",
        "TMP",
        "PATHEXT",
        "COMSPEC",
        "PROGRAMDATA",
        "PROGRAMFILES",
    ];
    const KEPT_PREFIXES: &[&str] = &["LC_", "XDG_", "PARLEY_", "MIMALLOC_"];
    let upper;
    let name = if cfg!(windows) {
        upper = name.to_ascii_uppercase();
        upper.as_str()
    } else {
        name
    };
    let kept = KEPT.contains(&name) || (cfg!(windows) && KEPT_ON_WINDOWS.contains(&name));
    (kept || KEPT_PREFIXES.iter().any(|prefix| name.starts_with(prefix))) && name != "PARLEY_EDITOR_ID"
}

/// The daemon outlives this client; a thread waits for it so it never lingers
/// as a zombie while this client runs.
fn reap_in_background(mut child: Child) {
    std::thread::spawn(move || child.wait());
}

/// A connection that broke during `hello`: closed by the daemon (reset, or a
/// write into a closed socket), or broken some other way.
fn closed_or_broken(e: io::Error) -> ConnectError {
    match e.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => ConnectError::HelloClosed(e.to_string()),
        _ => ConnectError::HelloBroken(e.to_string()),
    }
}

/// Sends `hello` and reads the daemon's answer.
pub async fn say_hello(stream: Stream, hello: &Hello) -> Result<HubConnection, ConnectError> {
    let (read, mut writer) = transport::split(stream);
    let mut reader = LineReader::new(BufReader::new(read));
    let params = serde_json::to_value(hello).map_err(|e| ConnectError::HelloBroken(e.to_string()))?;
    let request = Request::new(Id::Number(0), HELLO, params);
    let exchange = async {
        writer.write_all(&to_line(&request)).await.map_err(closed_or_broken)?;
        match reader.next_line().await {
            Ok(Some(line)) => Ok(line),
            Ok(None) => Err(ConnectError::HelloClosed("end of stream".into())),
            Err(LineError::Io(e)) => Err(closed_or_broken(e)),
            Err(e) => Err(ConnectError::HelloBroken(e.to_string())),
        }
    };
    let line = tokio::time::timeout(HELLO_TIMEOUT, exchange)
        .await
        .map_err(|_| ConnectError::HelloBroken("no answer within 10 s".into()))??;
    let response = match Message::parse(&line) {
        Ok(Message::Response(response)) => response,
        _ => return Err(ConnectError::HelloBroken(String::from_utf8_lossy(&line).into_owned())),
    };
    if let Some(error) = response.error {
        return Err(ConnectError::HelloRefused(error.message));
    }
    let reply = serde_json::from_value(response.result.unwrap_or_default())
        .map_err(|e| ConnectError::HelloBroken(e.to_string()))?;
    Ok(HubConnection { reader, writer, reply })
}
