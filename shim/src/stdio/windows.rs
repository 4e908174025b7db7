//! The shim's stdin and stdout on Windows: tokio's own, which read and write
//! on a blocking thread (a Windows pipe handle from the host cannot be
//! registered with the poller after the fact).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The shim's stdin.
pub struct Input(tokio::io::Stdin);

impl Input {
    /// This process's stdin. Must be called inside the runtime.
    pub fn stdin() -> Input {
        Input(tokio::io::stdin())
    }
}

/// The shim's stdout.
pub struct Output(tokio::io::Stdout);

impl Output {
    /// This process's stdout. Must be called inside the runtime.
    pub fn stdout() -> io::Result<Output> {
        Ok(Output(tokio::io::stdout()))
    }
}

impl AsyncRead for Input {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Output {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
