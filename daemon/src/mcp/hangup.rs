//! Telling a client that went away from one that cancelled a call: rmcp
//! cancels every call in flight when the connection ends, just as it
//! cancels one call on `notifications/cancelled`. A review round must stop
//! on the second (a person interrupted the agent) but not on the first (a
//! host that timed out or died), so the connection's reader marks its end
//! of input, which comes before rmcp cancels anything.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// A reader that cancels `hung_up` when its input ends (or fails).
#[derive(Debug)]
pub struct HangupReader<R> {
    inner: R,
    hung_up: CancellationToken,
}

impl<R> HangupReader<R> {
    pub fn new(inner: R, hung_up: CancellationToken) -> Self {
        Self { inner, hung_up }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for HangupReader<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let asked = buf.remaining() > 0;
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if asked && buf.filled().len() == before => self.hung_up.cancel(),
            Poll::Ready(Err(_)) => self.hung_up.cancel(),
            _ => {}
        }
        polled
    }
}

impl<R: AsyncBufRead + Unpin> AsyncBufRead for HangupReader<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<&[u8]>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_fill_buf(cx);
        match &polled {
            Poll::Ready(Ok([])) => this.hung_up.cancel(),
            Poll::Ready(Err(_)) => this.hung_up.cancel(),
            _ => {}
        }
        polled
    }

    fn consume(self: Pin<&mut Self>, amount: usize) {
        Pin::new(&mut self.get_mut().inner).consume(amount);
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    #[tokio::test]
    async fn the_end_of_input_is_marked_and_data_before_it_is_not() {
        let (client, server) = tokio::io::duplex(64);
        let hung_up = CancellationToken::new();
        let mut reader = HangupReader::new(BufReader::new(server), hung_up.clone());
        let mut client = client;
        client.write_all(b"{\"jsonrpc\":\"2.0\"}\n").await.expect("in-memory io");
        let mut line = String::new();
        reader.read_line(&mut line).await.expect("in-memory io");
        assert!(!hung_up.is_cancelled(), "a line read is not a hang-up");
        drop(client);
        line.clear();
        assert_eq!(reader.read_line(&mut line).await.expect("in-memory io"), 0);
        assert!(hung_up.is_cancelled());
    }
}
