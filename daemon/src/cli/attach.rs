//! `parley attach --stdio`: one hub connection relayed over standard input and
//! output, for a client that cannot reach the socket itself (a Windows editor
//! whose daemon runs in WSL, through `wsl.exe parley attach --stdio`).
//!
//! It is a line relay, like the shim: it connects (starting the daemon when
//! none runs, through the shim's `connect`), then passes lines both ways byte
//! for byte, reading only their `id` and `method` (`pending`). The client
//! sends its own `hello` first, exactly as over the socket. It ends when stdin
//! closes, once the daemon has answered every request relayed (at most
//! `DRAIN`; on a Unix socket the daemon also closes its side then, but a
//! Windows named pipe cannot say that its input ended), or when the daemon
//! closes the connection, which it says on stderr.

mod pending;

use std::cell::{Cell, RefCell};
use std::io::IsTerminal as _;
use std::time::Duration;

use anyhow::Context as _;
use parley_protocol::socket;
use parley_shim::{connect, stdio};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

use pending::Pending;

/// How long the daemon's last answers are waited for once stdin has closed.
const DRAIN: Duration = Duration::from_secs(5);

/// What a person typing `parley attach` is told.
const USE: &str = "`parley attach --stdio` relays one hub connection over standard input and output, \
     for a program that speaks the hub protocol (an editor reaching the daemon from elsewhere, such as \
     `wsl.exe parley attach --stdio`); docs/protocol.md describes the protocol";

/// Runs the relay; returns the exit code.
pub async fn run(stdio: bool) -> anyhow::Result<i32> {
    if !stdio {
        anyhow::bail!("attach needs --stdio: {USE}");
    }
    if std::io::stdin().is_terminal() {
        anyhow::bail!("standard input is a terminal: {USE}");
    }
    let socket_path = socket::socket_path()?;
    let stream = connect::connect_or_start(&socket_path, connect::spawn_allowed())
        .await
        .context("reaching the Parley daemon")?;
    let (mut from_daemon, mut to_daemon) = parley_shim::transport::split(stream);
    let mut input = stdio::Input::stdin();
    let mut output = stdio::Output::stdout().context("using standard output")?;

    let pending = RefCell::new(Pending::default());
    let input_ended = Cell::new(false);
    let answered_all = || input_ended.get() && pending.borrow().is_empty();
    let upstream = async {
        let mut input = BufReader::new(&mut input);
        let mut line = Vec::new();
        loop {
            line.clear();
            if input.read_until(b'\n', &mut line).await? == 0 {
                break;
            }
            pending.borrow_mut().sent(&line);
            to_daemon.write_all(&line).await?;
        }
        // On a Unix socket the daemon reads the end of the connection once
        // it has answered every line before it, then closes its side.
        let _ = to_daemon.shutdown().await;
        input_ended.set(true);
        Ok::<(), std::io::Error>(())
    };
    let downstream = async {
        let mut from_daemon = BufReader::new(&mut from_daemon);
        let mut line = Vec::new();
        loop {
            line.clear();
            if from_daemon.read_until(b'\n', &mut line).await? == 0 {
                break;
            }
            output.write_all(&line).await?;
            output.flush().await?;
            pending.borrow_mut().received(&line);
            if answered_all() {
                break;
            }
        }
        output.flush().await
    };
    tokio::pin!(upstream, downstream);
    tokio::select! {
        up = &mut upstream => {
            if let Err(e) = up {
                // The client's end failed: what the daemon still sends has nowhere to go.
                eprintln!("parley attach: reading standard input: {e}");
                return Ok(1);
            }
            if answered_all() {
                return Ok(0);
            }
            match tokio::time::timeout(DRAIN, &mut downstream).await {
                Ok(Ok(_)) => Ok(0),
                // The client stopped reading: it closed its end on purpose.
                Ok(Err(_)) => Ok(0),
                Err(_) => {
                    eprintln!(
                        "parley attach: the daemon did not close the connection within {} s of standard input closing",
                        DRAIN.as_secs()
                    );
                    Ok(1)
                }
            }
        }
        down = &mut downstream => match down {
            Ok(_) => {
                eprintln!(
                    "parley attach: the Parley daemon closed the connection (it stopped or restarted); \
                     start `parley attach --stdio` again to reconnect"
                );
                Ok(1)
            }
            // Standard output closed: the client went away.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
            Err(e) => {
                eprintln!("parley attach: relaying the daemon's messages: {e}");
                Ok(1)
            }
        },
    }
}
