//! Serving the daemon's named pipe on Windows: one pipe instance per client
//! (a new one is created as each client connects), each created with a
//! security descriptor that lets only this user in and refusing remote
//! clients. One daemon per pipe is guaranteed by the lock file in local app
//! data, not by the pipe: `FILE_FLAG_FIRST_PIPE_INSTANCE` is asked for too,
//! but not every Windows implementation enforces it.
//!
//! The descriptor is not the only guard: after accepting, the daemon asks
//! which process is on the other end (`GetNamedPipeClientProcessId`), reads
//! the user of that process's token and refuses, with a logged reason, a
//! client that does not run as the daemon's user or cannot be told. Wine
//! enforces neither the descriptor nor remote rejection, and runs every
//! process as the same user, so under Wine only the admitting path is
//! exercised: that a client of the same user is let in.

use std::ffi::c_void;
use std::io;
use std::path::Path;

use anyhow::Context;
use parley_protocol::socket;

use crate::stream::Stream;
use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{GetTokenInformation, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER, TokenUser};
use windows_sys::Win32::System::Pipes::GetNamedPipeClientProcessId;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// Whether the client runs as this user: the user of the client process's
/// token, compared with the daemon's own. A refusal is logged with why.
pub fn same_user(stream: &Stream) -> anyhow::Result<bool> {
    let ours = current_user_sid().context("finding your user's SID")?;
    let pid = client_process_id(stream);
    let theirs = match &pid {
        Ok(pid) => process_user_sid(*pid),
        Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
    };
    match super::admit(&ours, theirs) {
        Ok(()) => Ok(true),
        Err(why) => {
            let pid = pid.map_or_else(|_| "unknown".to_owned(), |pid| pid.to_string());
            tracing::warn!(client_pid = %pid, "refused a pipe client: {why}");
            Ok(false)
        }
    }
}

/// The id of the process on the client end of the pipe.
#[allow(unsafe_code)] // GetNamedPipeClientProcessId reads the pipe's handle.
fn client_process_id(stream: &Stream) -> io::Result<u32> {
    use std::os::windows::io::AsRawHandle;
    let mut pid = 0u32;
    // SAFETY: the handle is the connected pipe instance, alive for this call.
    let ok = unsafe { GetNamedPipeClientProcessId(stream.as_raw_handle(), &mut pid) };
    if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(pid) }
}

/// The SID of the user process `pid` runs as.
#[allow(unsafe_code)] // The process and its token are opened through the Win32 API.
fn process_user_sid(pid: u32) -> io::Result<String> {
    // SAFETY: plain call; the handle is closed below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: `process` is open; `token` is closed by `token_user_sid`'s caller below.
    let opened = unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) };
    let opened = if opened == 0 { Err(io::Error::last_os_error()) } else { Ok(()) };
    // SAFETY: `process` was opened above and is not used again.
    unsafe { CloseHandle(process) };
    opened?;
    let sid = token_user_sid(token);
    // SAFETY: `token` was opened above and is not used again.
    unsafe { CloseHandle(token) };
    sid
}

/// The pipe, with the instance the next client will connect to.
#[derive(Debug)]
pub struct Listener {
    path: std::path::PathBuf,
    sddl: String,
    next: NamedPipeServer,
}

impl Listener {
    /// The next client's connection; a fresh instance waits for the one after.
    pub async fn accept(&mut self) -> io::Result<Stream> {
        self.next.connect().await?;
        let fresh = create_instance(&self.path, &self.sddl, false)?;
        Ok(std::mem::replace(&mut self.next, fresh))
    }
}

/// The bound pipe and the lock that makes this daemon the only one on it.
#[derive(Debug)]
pub struct BoundSocket {
    listener: Listener,
    guard: SocketGuard,
}

/// Holds the daemon lock for the daemon's whole life.
#[derive(Debug)]
pub struct SocketGuard {
    _lock: std::fs::File,
}

impl BoundSocket {
    pub fn into_parts(self) -> (Listener, SocketGuard) {
        (self.listener, self.guard)
    }
}

impl SocketGuard {
    /// A pipe disappears with its last handle: nothing to remove.
    pub fn remove(&self) {}
}

/// Takes the daemon lock and creates the pipe's first instance.
pub async fn bind(path: &Path, _activated: Option<std::convert::Infallible>) -> anyhow::Result<BoundSocket> {
    socket::prepare_socket_dir(path)?;
    let lock = super::take_lock(&socket::daemon_lock_path(path)).await?;
    let sddl = format!("D:P(A;;GA;;;{})", current_user_sid().context("finding your user's SID")?);
    let first = create_instance(path, &sddl, true).with_context(|| {
        format!(
            "creating the pipe {}: is another program using that name? set PARLEY_SOCKET to another",
            path.display()
        )
    })?;
    Ok(BoundSocket {
        listener: Listener { path: path.to_owned(), sddl, next: first },
        guard: SocketGuard { _lock: lock },
    })
}

/// One pipe instance, created with the security descriptor `sddl`.
#[allow(unsafe_code)] // CreateNamedPipe takes the security descriptor as a raw pointer.
fn create_instance(path: &Path, sddl: &str, first: bool) -> io::Result<NamedPipeServer> {
    let wide: Vec<u16> = sddl.encode_utf16().chain(Some(0)).collect();
    let mut descriptor: *mut c_void = std::ptr::null_mut();
    // SAFETY: `wide` is NUL-terminated; the descriptor is freed below with LocalFree.
    let ok = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            wide.as_ptr(),
            SDDL_REVISION_1,
            &mut descriptor,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut attributes = SECURITY_ATTRIBUTES {
        nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: descriptor,
        bInheritHandle: 0,
    };
    let mut options = ServerOptions::new();
    options.first_pipe_instance(first).reject_remote_clients(true);
    // SAFETY: `attributes` points at a valid descriptor for the whole call;
    // the system copies it into the pipe.
    let created = unsafe { options.create_with_security_attributes_raw(path, (&raw mut attributes).cast()) };
    // SAFETY: `descriptor` came from the conversion above and is not used again.
    unsafe { LocalFree(descriptor) };
    created
}

/// This process's user's SID, as a string such as `S-1-5-21-…`.
#[allow(unsafe_code)] // The token is opened through the Win32 API.
fn current_user_sid() -> io::Result<String> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo-handle of this process is always valid; `token` is closed below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let sid = token_user_sid(token);
    // SAFETY: `token` was opened above and is not used again.
    unsafe { CloseHandle(token) };
    sid
}

/// The SID of a token's user, as a string; the caller closes the token.
#[allow(unsafe_code)] // The SID is read through the Win32 API.
fn token_user_sid(token: HANDLE) -> io::Result<String> {
    let mut buffer = vec![0u64; 128];
    let mut needed = 0u32;
    // SAFETY: `buffer` holds 1 KB, aligned for TOKEN_USER; `needed` receives the size used.
    let ok = unsafe {
        GetTokenInformation(token, TokenUser, buffer.as_mut_ptr().cast(), (buffer.len() * 8) as u32, &mut needed)
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: GetTokenInformation filled the buffer with a TOKEN_USER.
    let sid = unsafe { (*buffer.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` points into `buffer`, alive here; `text` is freed below.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `text` is a NUL-terminated UTF-16 string from the system.
    let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: `text` holds `len` units before its NUL.
    let sid_text = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) });
    // SAFETY: `text` came from ConvertSidToStringSidW and is not used again.
    unsafe { LocalFree(text.cast()) };
    Ok(sid_text)
}
