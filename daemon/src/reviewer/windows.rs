//! The reviewer command's process tree on Windows: the command starts
//! suspended, is put in a Job Object of its own and only then resumed, so
//! everything it starts is in the job too (a child cannot slip out before
//! the assignment). After every run, finished, timed out or cancelled, the
//! job is terminated, which kills the whole tree; and the job is created
//! with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, so the tree dies with the
//! daemon's handle even if the daemon itself dies first. The command also
//! gets a new process group, so a Ctrl-C in the daemon's console does not
//! reach it.

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

/// The job holding the command and everything it started.
#[derive(Debug)]
pub struct Group {
    job: OwnedHandle,
}

/// A command written as one line, run by `cmd /d /s /c "LINE"`: the line
/// is passed as written (`raw_arg`), since cmd reads its own command line
/// and Rust's quoting for other programs would change it; `/s` strips the
/// outer quotes only, `/d` skips the user's AutoRun.
pub fn shell(line: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("cmd");
    command.raw_arg("/d /s /c \"").raw_arg(line).raw_arg("\"");
    command
}

/// Starts the command suspended, in a new process group; `led_by` puts it
/// in its job and lets it run.
pub fn lead_own_group(command: &mut tokio::process::Command) {
    command.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_SUSPENDED);
}

/// Puts the started (suspended) command in a job of its own, then resumes
/// it. It is resumed whatever happens: without a job, the command alone is
/// killed at the end (`kill_on_drop`), and the failure is logged.
pub fn led_by(child: &tokio::process::Child) -> Option<Group> {
    let pid = child.id()?;
    let group = match child.raw_handle() {
        Some(process) => match job_holding(process as HANDLE) {
            Ok(job) => Some(Group { job }),
            Err(e) => {
                tracing::warn!(pid, "cannot put the command in a job object, so only it is killed at the end: {e}");
                None
            }
        },
        None => None,
    };
    if let Err(e) = resume(pid) {
        tracing::error!(pid, "cannot resume the command started suspended: {e}");
    }
    group
}

/// A new job that kills its processes when closed, holding `process`.
#[allow(unsafe_code)] // The job is created and set up through the Win32 API.
fn job_holding(process: HANDLE) -> std::io::Result<OwnedHandle> {
    // SAFETY: no security attributes and no name: a new, unnamed job.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a new handle owned by nobody else.
    let job = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: all-zero is a valid JOBOBJECT_EXTENDED_LIMIT_INFORMATION (no limits).
    let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: `limits` is the structure the class names, with its size.
    let set = unsafe {
        SetInformationJobObject(
            job.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if set == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both handles are open for this call.
    if unsafe { AssignProcessToJobObject(job.as_raw_handle(), process) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(job)
}

/// Resumes every thread of process `pid` (one, for a process started
/// suspended): the standard library gives no handle to its first thread.
#[allow(unsafe_code)] // The threads are listed and resumed through the Win32 API.
fn resume(pid: u32) -> std::io::Result<()> {
    // SAFETY: a snapshot of every thread; closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: all-zero is a valid THREADENTRY32; its size is set as the API asks.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: `snapshot` is open and `entry` is sized.
    let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: plain call; the handle is closed right after use.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: `thread` is open with the right to resume it.
                if unsafe { ResumeThread(thread) } != u32::MAX {
                    resumed += 1;
                }
                // SAFETY: opened above, not used again.
                unsafe { CloseHandle(thread) };
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
    }
    // SAFETY: opened above, not used again.
    unsafe { CloseHandle(snapshot) };
    if resumed == 0 {
        return Err(std::io::Error::other(format!("no thread of process {pid} could be resumed")));
    }
    Ok(())
}

/// Kills the command and everything it started: the whole job.
#[allow(unsafe_code)] // TerminateJobObject takes the job's raw handle.
pub fn kill(group: Option<Group>) {
    if let Some(group) = group {
        // SAFETY: the job handle is open until `group` drops, after this call.
        unsafe { TerminateJobObject(group.job.as_raw_handle(), 1) };
    }
}
