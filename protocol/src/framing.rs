//! Newline-delimited framing with a hard cap on the length of one line.
//!
//! Every connection to the daemon, and the shim's stdio, carries one JSON-RPC
//! message per line. A peer that never sends a newline must not make a reader
//! buffer without bound, so lines longer than [`MAX_LINE_BYTES`] are discarded
//! as they stream past and reported as [`LineError::TooLong`].

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line (one JSON-RPC message) any Parley peer accepts: 16 MiB.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Why a line could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The line was longer than the cap; it has been consumed and dropped, so
    /// the reader can go on with the next line.
    #[error("a message was longer than the {} MiB limit and was dropped", MAX_LINE_BYTES / (1024 * 1024))]
    TooLong,
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads lines of bytes with a cap, and is safe to use inside `select!`: a read
/// cancelled half-way keeps its partial line for the next call.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    line: Vec<u8>,
    max: usize,
    /// Set while the rest of an over-long line is being skipped.
    discarding: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_max(inner, MAX_LINE_BYTES)
    }

    pub fn with_max(inner: R, max: usize) -> Self {
        Self { inner, line: Vec::new(), max, discarding: false }
    }

    /// The next line without its `\n` (and without a trailing `\r`), or `None`
    /// at end of input. A final line without a newline is still returned.
    pub async fn next_line(&mut self) -> Result<Option<Vec<u8>>, LineError> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                if self.discarding {
                    self.discarding = false;
                    return Err(LineError::TooLong);
                }
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(self.take_line()));
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            if !self.discarding {
                let body = newline.unwrap_or(available.len());
                if self.line.len() + body > self.max {
                    self.discarding = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(&available[..body]);
                }
            }
            self.inner.consume(take);
            if newline.is_some() {
                if self.discarding {
                    self.discarding = false;
                    return Err(LineError::TooLong);
                }
                return Ok(Some(self.take_line()));
            }
        }
    }

    /// The underlying reader, with any bytes it has buffered still in it.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Gives back the underlying reader. Bytes of a partly read line are lost,
    /// so call this only between lines.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn take_line(&mut self) -> Vec<u8> {
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn lines(input: &[u8], max: usize) -> Vec<Result<String, String>> {
        let mut reader = LineReader::with_max(BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        loop {
            match reader.next_line().await {
                Ok(Some(line)) => out.push(Ok(String::from_utf8_lossy(&line).into_owned())),
                Ok(None) => return out,
                Err(e) => out.push(Err(e.to_string())),
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_and_keeps_a_final_unterminated_one() {
        let got = lines(b"one\r\ntwo\n\nthree", 100).await;
        let want: Vec<Result<String, String>> =
            vec![Ok("one".into()), Ok("two".into()), Ok("".into()), Ok("three".into())];
        assert_eq!(got, want);
    }

    #[tokio::test]
    async fn drops_an_over_long_line_and_goes_on() {
        let got = lines(b"short\nthis line is too long\nafter\n", 10).await;
        assert_eq!(got[0], Ok("short".to_string()));
        assert!(got[1].as_ref().is_err_and(|e| e.contains("limit")), "{got:?}");
        assert_eq!(got[2], Ok("after".to_string()));
        assert_eq!(got.len(), 3);
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_cap_passes() {
        let got = lines(b"0123456789\n", 10).await;
        assert_eq!(got, vec![Ok("0123456789".to_string())]);
    }
    proptest::proptest! {
        /// Whatever the lines and however the bytes arrive, each line comes
        /// out whole (or as `TooLong` past the cap) and the next one follows.
        #[test]
        fn any_lines_in_any_chunks_come_out_whole(
            lines_in in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40), 0..12),
            chunk in 1usize..64,
            max in 1usize..32,
            final_newline in proptest::prelude::any::<bool>(),
        ) {
            let lines_in: Vec<Vec<u8>> =
                lines_in.into_iter().map(|l| l.into_iter().filter(|&b| b != b'\n').collect()).collect();
            let mut input = lines_in.join(&b'\n');
            if final_newline && !lines_in.is_empty() {
                input.push(b'\n');
            }
            let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
            let got = runtime.block_on(async {
                let mut reader = LineReader::with_max(BufReader::with_capacity(chunk, &input[..]), max);
                let mut out = Vec::new();
                while let Some(next) = reader.next_line().await.transpose() {
                    out.push(next.map_err(|e| matches!(e, LineError::TooLong)));
                }
                out
            });
            // A lone empty final line without a newline is end of input.
            let expected_count = if !final_newline && lines_in.last().is_some_and(Vec::is_empty) {
                lines_in.len() - 1
            } else {
                lines_in.len()
            };
            let want: Vec<Result<Vec<u8>, bool>> = lines_in[..expected_count]
                .iter()
                .map(|line| {
                    let mut line = line.clone();
                    if line.len() > max {
                        return Err(true);
                    }
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    Ok(line)
                })
                .collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
