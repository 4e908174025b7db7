//! Serving the daemon's named pipe on Windows: one pipe instance per client
//! (a new one is created as each client connects), each created with a
//! security descriptor that lets only this user in and refusing remote
//! clients. One daemon per pipe is guaranteed by the lock file in local app
//! data, not by the pipe: `FILE_FLAG_FIRST_PIPE_INSTANCE` is asked for too,
//! but not every Windows implementation enforces it.

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
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// Whether the client runs as this user: the pipe's security descriptor
/// admits no one else, so every connected client does.
pub fn same_user(_stream: &Stream) -> anyhow::Result<bool> {
    Ok(true)
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
#[allow(unsafe_code)] // The token and SID are read through the Win32 API.
fn current_user_sid() -> io::Result<String> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo-handle of this process is always valid; `token` is closed below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buffer = vec![0u64; 128];
    let mut needed = 0u32;
    // SAFETY: `buffer` holds 1 KB, aligned for TOKEN_USER; `needed` receives the size used.
    let ok = unsafe {
        GetTokenInformation(token, TokenUser, buffer.as_mut_ptr().cast(), (buffer.len() * 8) as u32, &mut needed)
    };
    let read = if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(()) };
    // SAFETY: `token` was opened above.
    unsafe { CloseHandle(token) };
    read?;
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
