//! The shim on every kind of stdin and stdout a host may hand it: pipes (Python
//! and Rust hosts, shells), Unix socketpairs (Node hosts), a terminal, a file
//! and `/dev/null`, in every pairing, with a pause in the input (the moment a
//! non-blocking stream has nothing to read) and a clean exit at end of input.
//!
//! An editor window on the workspace sees each `present_review` the agent
//! makes, which is how a test knows a request went through even when the
//! shim's answers go to `/dev/null`.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::thread::JoinHandle;

use parley_tests::{DEADLINE, Editor, RawShim, Sandbox};
use serde_json::{Value, json};

/// What the shim's stdin is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum In {
    Pipe,
    Socket,
    Tty,
    /// A terminal another process sharing it made non-blocking.
    NonBlockingTty,
    File,
    Null,
}

/// What the shim's stdout is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Out {
    Pipe,
    Socket,
    Tty,
    NonBlockingTty,
    File,
    Null,
}

/// The test's end of the shim's stdin.
enum Writer {
    Stream(Box<dyn Write + Send>),
    /// A terminal: end of input is `^D` at the start of a line.
    Tty(File),
    /// Nothing to write: the input was prepared in full.
    None,
}

/// The test's end of the shim's stdout.
enum Reader {
    /// Collected by a thread until end of output.
    Thread(JoinHandle<Vec<u8>>),
    File(PathBuf),
    None,
}

fn line(value: Value) -> String {
    format!("{value}\n")
}

fn present(id: u64, content: &str) -> String {
    line(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "present_review", "arguments": {"content": content}}}))
}

fn collect(mut from: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut chunk = [0u8; 8192];
        // A terminal's master side ends in EIO once the shim has closed it.
        while let Ok(n @ 1..) = from.read(&mut chunk) {
            all.extend_from_slice(&chunk[..n]);
        }
        all
    })
}

/// Starts the shim with stdin and stdout of the given kinds; `input_file` is
/// the whole input when stdin is a file. Both `Tty` means one terminal for
/// both, as in a terminal window.
fn start(
    sandbox: &Sandbox,
    repo: &Path,
    input: In,
    output: Out,
    input_file: &str,
) -> (tokio::process::Child, Writer, Reader, PathBuf) {
    let dir = sandbox.dir.path();
    let name = format!("{input:?}-{output:?}").to_lowercase();
    let stderr = dir.join(format!("{name}.stderr"));
    let mut command = tokio::process::Command::from(sandbox.command("parley-mcp"));
    command.current_dir(repo).stderr(File::create(&stderr).expect("stderr file")).kill_on_drop(true);

    let mut terminal = None;
    let mut tty = || terminal.get_or_insert_with(|| parley_tests::pty(None)).clone_pair();
    let (stdin, writer): (Stdio, Writer) = match input {
        In::Pipe => {
            let (r, w) = std::io::pipe().expect("pipe");
            (r.into(), Writer::Stream(Box::new(w)))
        }
        In::Socket => {
            let (ours, theirs) = UnixStream::pair().expect("socketpair");
            (OwnedFd::from(theirs).into(), Writer::Stream(Box::new(ours)))
        }
        In::Tty => {
            let (master, slave) = tty();
            (slave.into(), Writer::Tty(master))
        }
        In::NonBlockingTty => {
            let (master, slave) = parley_tests::pty(None);
            set_nonblocking(&slave);
            (slave.into(), Writer::Tty(master))
        }
        In::File => {
            let path = dir.join(format!("{name}.in"));
            std::fs::write(&path, input_file).expect("input file");
            (File::open(&path).expect("open input").into(), Writer::None)
        }
        In::Null => (Stdio::null(), Writer::None),
    };
    let (stdout, reader): (Stdio, Reader) = match output {
        Out::Pipe => {
            let (r, w) = std::io::pipe().expect("pipe");
            (w.into(), Reader::Thread(collect(r)))
        }
        Out::Socket => {
            let (ours, theirs) = UnixStream::pair().expect("socketpair");
            (OwnedFd::from(theirs).into(), Reader::Thread(collect(ours)))
        }
        Out::Tty => {
            let (master, slave) = tty();
            (slave.into(), Reader::Thread(collect(master)))
        }
        Out::NonBlockingTty => {
            let (master, slave) = parley_tests::pty(None);
            set_nonblocking(&slave);
            (slave.into(), Reader::Thread(collect(master)))
        }
        Out::File => {
            let path = dir.join(format!("{name}.out"));
            (File::create(&path).expect("output file").into(), Reader::File(path))
        }
        Out::Null => (Stdio::null(), Reader::None),
    };
    command.stdin(stdin).stdout(stdout);
    let child = command.spawn().expect("start parley-mcp");
    // The command holds the parent's copies of the child's stdio; dropping it
    // closes them, so end of input and end of output are the shim's alone.
    drop(command);
    drop(terminal);
    (child, writer, reader, stderr)
}

/// Sets `O_NONBLOCK` on the description the shim will share with this test.
fn set_nonblocking(fd: &OwnedFd) {
    let flags = rustix::fs::fcntl_getfl(fd).expect("get flags");
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK).expect("set flags");
}

trait ClonePair {
    fn clone_pair(&self) -> (File, OwnedFd);
}

impl ClonePair for (File, OwnedFd) {
    fn clone_pair(&self) -> (File, OwnedFd) {
        (self.0.try_clone().expect("dup master"), self.1.try_clone().expect("dup slave"))
    }
}

impl Writer {
    fn send(&mut self, text: &str) {
        match self {
            Writer::Stream(w) => w.write_all(text.as_bytes()).expect("write to the shim"),
            Writer::Tty(master) => master.write_all(text.as_bytes()).expect("write to the terminal"),
            Writer::None => panic!("this input was written in full beforehand"),
        }
    }

    /// Ends the shim's input; what is returned must be kept until the shim
    /// has exited (a terminal's master: closing it would hang the terminal up
    /// instead of ending its input).
    fn close(self) -> Option<File> {
        match self {
            Writer::Tty(mut master) => {
                master.write_all(b"\x04").expect("send end of input to the terminal");
                Some(master)
            }
            _ => None,
        }
    }
}

/// Waits for the window to be shown each review of `contents`, in any order
/// (the daemon serves an agent's calls concurrently).
async fn shown(window: &mut Editor, contents: &[&str], case: &str) {
    let mut missing: Vec<&str> = contents.to_vec();
    while !missing.is_empty() {
        let update = window
            .try_next_notification(DEADLINE)
            .await
            .unwrap_or_else(|| panic!("{case}: the window was never shown {missing:?} (did the shim die?)"));
        if update.method == "review/updated" {
            missing.retain(|content| update.params["review"]["content"] != json!(content));
        }
    }
}

async fn run_case(sandbox: &Sandbox, repo: &Path, window: &mut Editor, input: In, output: Out) {
    let case = format!("stdin {input:?}, stdout {output:?}");
    let first = format!("# {case}: first");
    let second = format!("# {case}: second");
    let opening = [
        RawShim::initialize(1) + "\n",
        line(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        present(2, &first),
    ]
    .concat();
    let whole = opening.clone() + &present(3, &second);
    let (mut child, mut writer, reader, stderr) = start(sandbox, repo, input, output, &whole);
    let mut expected_ids = vec![json!(1), json!(2), json!(3)];
    let mut _terminal = None;
    match input {
        In::Pipe | In::Socket | In::Tty | In::NonBlockingTty => {
            writer.send(&opening);
            shown(window, &[&first], &case).await;
            // The shim has read all there is and waits: the pause that killed it
            // when a non-blocking stdin met a blocking read.
            writer.send(&present(3, &second));
            shown(window, &[&second], &case).await;
            _terminal = writer.close();
        }
        In::File => {
            shown(window, &[&first, &second], &case).await;
        }
        In::Null => expected_ids.clear(),
    }
    let status = tokio::time::timeout(DEADLINE, child.wait())
        .await
        .unwrap_or_else(|_| panic!("{case}: the shim did not exit at end of input"))
        .expect("wait for the shim");
    let errors = std::fs::read_to_string(&stderr).expect("read stderr");
    assert_eq!(status.code(), Some(0), "{case}: {errors}");
    assert_eq!(errors, "", "{case}: the shim complained");
    let written = match reader {
        Reader::Thread(thread) => thread.join().expect("output reader"),
        Reader::File(path) => std::fs::read(path).expect("read the output file"),
        Reader::None => return,
    };
    let written = String::from_utf8(written).expect("UTF-8 output").replace('\r', "");
    let answers: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{case}: not JSON ({e}): {l:?}")))
        .collect();
    // The daemon answers calls concurrently: the second may overtake the first.
    let mut ids: Vec<Value> = answers.iter().map(|a| a["id"].clone()).collect();
    ids.sort_by_key(|id| id.as_u64());
    assert_eq!(ids, expected_ids, "{case}: {written}");
    for answer in &answers {
        assert!(answer.get("result").is_some(), "{case}: {answer}");
    }
}

#[tokio::test]
async fn the_shim_serves_every_kind_of_stdin_and_stdout() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("window", &[&repo]).await;
    for input in [In::Pipe, In::Socket, In::Tty, In::File, In::Null] {
        for output in [Out::Pipe, Out::Socket, Out::Tty, Out::File, Out::Null] {
            run_case(&sandbox, &repo, &mut window, input, output).await;
        }
    }
    // A terminal is left as it is, so one that another process made
    // non-blocking is waited on, not given up on.
    run_case(&sandbox, &repo, &mut window, In::NonBlockingTty, Out::Pipe).await;
    run_case(&sandbox, &repo, &mut window, In::Pipe, Out::NonBlockingTty).await;
}
