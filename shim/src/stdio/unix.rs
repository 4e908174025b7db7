//! The shim's stdin and stdout, each driven the way its kind allows.
//!
//! Hosts hand a stdio server different things: pipes (Python and Rust hosts,
//! shells), Unix socketpairs (every Node-based host: Claude Code, VS Code,
//! Cursor, the MCP Inspector, the TypeScript SDK), a terminal, a file,
//! `/dev/null`. Pipes and sockets are read and written when the runtime's
//! poller says they are ready, which needs them non-blocking; tokio's own
//! `Stdin` and `Stdout` instead hand every read and write to a blocking
//! thread, several thread hand-offs per message.
//!
//! `O_NONBLOCK` belongs to the open file description, which other processes
//! may share (a shell's pipeline, a terminal). So the kind of each stream is
//! decided first, from `fstat`, and the flag is set only on a stream that is
//! then driven by the poller for the rest of the shim's life; the original
//! flags are put back when the stream is dropped. A stream of any other kind
//! keeps its flags, and is read on a blocking thread and written directly; if
//! someone else made it non-blocking, `EAGAIN` is waited out, never taken for
//! an error.

use std::fs::File;
use std::future::Future;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use rustix::fs::{FileType, OFlags};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;
use tokio::time::Sleep;

/// How long a stream someone else made non-blocking is left before the next try.
const PAUSE: Duration = Duration::from_millis(5);

/// What a standard stream is, as far as driving it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A pipe or FIFO: driven by the poller.
    Pipe,
    /// A stream socket (a socketpair from a Node host): driven by the poller.
    Socket,
    /// A terminal, a file, `/dev/null`, or anything else: left as it is.
    Other,
}

/// The kind of an open file, from `fstat`; never changes anything.
pub fn kind_of(fd: BorrowedFd<'_>) -> Kind {
    match rustix::fs::fstat(fd).map(|stat| FileType::from_raw_mode(stat.st_mode)) {
        Ok(FileType::Fifo) => Kind::Pipe,
        Ok(FileType::Socket) => Kind::Socket,
        _ => Kind::Other,
    }
}

/// Puts a file's original flags back when dropped.
struct Restore {
    /// A duplicate of the stream's descriptor: the flags live in the shared
    /// description, so setting them through the duplicate sets them for all.
    fd: OwnedFd,
    flags: OFlags,
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = rustix::fs::fcntl_setfl(&self.fd, self.flags);
    }
}

/// Makes `fd`'s description non-blocking; the guard undoes it (and is `None`
/// when it already was non-blocking, so nothing needs undoing).
fn set_nonblocking(fd: &OwnedFd) -> io::Result<Option<Restore>> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    if flags.contains(OFlags::NONBLOCK) {
        return Ok(None);
    }
    let restore = Restore { fd: fd.try_clone()?, flags };
    rustix::fs::fcntl_setfl(fd, flags | OFlags::NONBLOCK)?;
    Ok(Some(restore))
}

/// The shim's stdin.
pub struct Input {
    inner: InputKind,
    /// Dropped after `inner` (fields drop in order), once the poller has let go.
    _restore: Option<Restore>,
}

enum InputKind {
    Pipe(pipe::Receiver),
    Socket(UnixStream),
    Blocking(Patient<tokio::io::Stdin>),
}

impl Input {
    /// This process's stdin, driven by the poller when it is a pipe or a socket.
    /// Must be called inside the runtime.
    pub fn stdin() -> Input {
        let stdin = io::stdin();
        let kind = kind_of(stdin.as_fd());
        match polled(stdin.as_fd(), kind, |fd, kind| match kind {
            Kind::Pipe => pipe::Receiver::from_owned_fd_unchecked(fd).map(InputKind::Pipe),
            _ => UnixStream::from_std(std::os::unix::net::UnixStream::from(fd)).map(InputKind::Socket),
        }) {
            Some((inner, restore)) => Input { inner, _restore: restore },
            None => Input { inner: InputKind::Blocking(Patient::new(tokio::io::stdin())), _restore: None },
        }
    }
}

/// The shim's stdout.
pub struct Output {
    inner: OutputKind,
    _restore: Option<Restore>,
}

enum OutputKind {
    Pipe(pipe::Sender),
    Socket(UnixStream),
    /// Written directly: a file or `/dev/null` takes a write at once, and a
    /// terminal's short wait is the same wait a blocking thread would make,
    /// since the relay waits for each write before reading on.
    Direct(Patient<File>),
}

impl Output {
    /// This process's stdout, driven by the poller when it is a pipe or a
    /// socket. Must be called inside the runtime.
    pub fn stdout() -> io::Result<Output> {
        let stdout = io::stdout();
        let kind = kind_of(stdout.as_fd());
        match polled(stdout.as_fd(), kind, |fd, kind| match kind {
            Kind::Pipe => pipe::Sender::from_owned_fd_unchecked(fd).map(OutputKind::Pipe),
            _ => UnixStream::from_std(std::os::unix::net::UnixStream::from(fd)).map(OutputKind::Socket),
        }) {
            Some((inner, restore)) => Ok(Output { inner, _restore: restore }),
            None => {
                let file = File::from(stdout.as_fd().try_clone_to_owned()?);
                Ok(Output { inner: OutputKind::Direct(Patient::new(file)), _restore: None })
            }
        }
    }
}

/// A pipe or socket made non-blocking and registered with the poller, with the
/// guard restoring its flags; `None` (flags as they were) for other kinds, or
/// when any step fails.
fn polled<T>(
    fd: BorrowedFd<'_>,
    kind: Kind,
    register: impl FnOnce(OwnedFd, Kind) -> io::Result<T>,
) -> Option<(T, Option<Restore>)> {
    if kind == Kind::Other {
        return None;
    }
    let fd = fd.try_clone_to_owned().ok()?;
    let restore = set_nonblocking(&fd).ok()?;
    // On failure `restore` is dropped here, which puts the flags back.
    let inner = register(fd, kind).ok()?;
    Some((inner, restore))
}

impl AsyncRead for Input {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match &mut self.inner {
            InputKind::Pipe(pipe) => Pin::new(pipe).poll_read(cx, buf),
            InputKind::Socket(socket) => Pin::new(socket).poll_read(cx, buf),
            InputKind::Blocking(stdin) => stdin.poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        match &mut self.inner {
            OutputKind::Pipe(pipe) => Pin::new(pipe).poll_write(cx, data),
            OutputKind::Socket(socket) => Pin::new(socket).poll_write(cx, data),
            OutputKind::Direct(file) => file.poll_write(cx, data),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.inner {
            OutputKind::Pipe(pipe) => Pin::new(pipe).poll_flush(cx),
            OutputKind::Socket(socket) => Pin::new(socket).poll_flush(cx),
            // Every write went straight to the file.
            OutputKind::Direct(_) => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.inner {
            OutputKind::Pipe(pipe) => Pin::new(pipe).poll_shutdown(cx),
            OutputKind::Socket(socket) => Pin::new(socket).poll_shutdown(cx),
            OutputKind::Direct(_) => Poll::Ready(Ok(())),
        }
    }
}

/// A stream left in whatever mode it came in, which waits out `EAGAIN`: a
/// terminal or pipe description shared with a process that made it
/// non-blocking must not end the shim.
struct Patient<T> {
    inner: T,
    pause: Option<Pin<Box<Sleep>>>,
}

impl<T> Patient<T> {
    fn new(inner: T) -> Patient<T> {
        Patient { inner, pause: None }
    }

    /// Waits out a pause started by an earlier `EAGAIN`.
    fn poll_pause(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(pause) = self.pause.as_mut() {
            ready!(pause.as_mut().poll(cx));
            self.pause = None;
        }
        Poll::Ready(())
    }
}

impl<T: AsyncRead + Unpin> Patient<T> {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_pause(cx));
            match ready!(Pin::new(&mut self.inner).poll_read(cx, buf)) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.pause = Some(Box::pin(tokio::time::sleep(PAUSE)));
                }
                other => return Poll::Ready(other),
            }
        }
    }
}

impl Patient<File> {
    fn poll_write(&mut self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.poll_pause(cx));
            match self.inner.write(data) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.pause = Some(Box::pin(tokio::time::sleep(PAUSE)));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return Poll::Ready(other),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_fstat() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        assert_eq!(kind_of(a.as_fd()), Kind::Socket);
        let (reader, _writer) = std::io::pipe().expect("pipe");
        assert_eq!(kind_of(reader.as_fd()), Kind::Pipe);
        let null = File::open("/dev/null").expect("/dev/null");
        assert_eq!(kind_of(null.as_fd()), Kind::Other);
        let file = tempfile_in_tmp();
        assert_eq!(kind_of(file.as_fd()), Kind::Other);
    }

    #[test]
    fn the_flags_are_put_back_when_the_guard_goes() {
        let (reader, _writer) = std::io::pipe().expect("pipe");
        let fd = OwnedFd::from(reader);
        let before = rustix::fs::fcntl_getfl(&fd).expect("flags");
        assert!(!before.contains(OFlags::NONBLOCK));
        let guard = set_nonblocking(&fd).expect("set");
        assert!(rustix::fs::fcntl_getfl(&fd).expect("flags").contains(OFlags::NONBLOCK));
        drop(guard);
        assert_eq!(rustix::fs::fcntl_getfl(&fd).expect("flags"), before);
        // A description already non-blocking stays so: there is nothing to undo.
        rustix::fs::fcntl_setfl(&fd, before | OFlags::NONBLOCK).expect("set");
        assert!(set_nonblocking(&fd).expect("set").is_none());
    }

    fn tempfile_in_tmp() -> File {
        let path = std::env::temp_dir().join(format!("parley-stdio-kind-{}", std::process::id()));
        let file = File::create(&path).expect("create a file");
        let _ = std::fs::remove_file(&path);
        file
    }
}
