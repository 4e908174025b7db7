//! Connecting to the hub: a Unix socket, or on Windows a named pipe opened
//! as a file, retried while every instance of the pipe is busy.

#[cfg(unix)]
pub fn connect(endpoint: &str) -> std::io::Result<std::os::unix::net::UnixStream> {
    std::os::unix::net::UnixStream::connect(endpoint)
}

#[cfg(windows)]
pub fn connect(endpoint: &str) -> std::io::Result<std::fs::File> {
    /// `ERROR_PIPE_BUSY`: every instance is taken until the server makes another.
    const PIPE_BUSY: i32 = 231;
    let mut tries = 0;
    loop {
        match std::fs::OpenOptions::new().read(true).write(true).open(endpoint) {
            Err(e) if e.raw_os_error() == Some(PIPE_BUSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}
