//! The reviewer's process tree on Windows, under Wine: the daemon's own
//! unit tests of `reviewer::run` (real `cmd` scripts; a command started
//! suspended, put in its Job Object and resumed; a child it leaves behind
//! killed after a run that finished, timed out or was cancelled), cross-built
//! and run by `wine`. A review round cannot run here (no Git for Windows
//! under Wine), so the module is tested directly.
//!
//! scripts/test builds the test executable after the Windows cross-build and
//! names it in `PARLEY_WINDOWS_DAEMON_TESTS`.

use std::process::{Command, Stdio};
use std::time::Duration;

use super::{text, windows_bin, windows_bin_or_fail};

/// The Windows tests of the reviewer module, each of which must run and pass.
const EXPECTED: [&str; 6] = [
    "reviewer::tests::a_command_started_suspended_runs_and_answers",
    "reviewer::tests::a_command_written_as_one_line_runs_through_cmd",
    "reviewer::tests::a_command_gets_what_windows_programs_need_and_the_askers_path",
    "reviewer::tests::what_a_finished_command_left_running_is_killed",
    "reviewer::tests::a_timeout_kills_the_whole_tree",
    "reviewer::tests::cancelling_kills_the_whole_tree",
];

/// Longer than the six tests take (about 20 s under Wine); a tree that
/// escaped its job can keep them from ending.
const BOUND: Duration = Duration::from_secs(300);

#[test]
fn the_reviewer_s_job_object_kills_the_whole_tree_under_wine() {
    windows_bin_or_fail!("the reviewer's process tree");
    let Some(exe) = std::env::var_os("PARLEY_WINDOWS_DAEMON_TESTS").filter(|v| !v.is_empty()) else {
        panic!(
            "cannot check the reviewer's process tree under Wine: PARLEY_WINDOWS_DAEMON_TESTS does not name the \
             daemon's unit-test executable for Windows; run scripts/test, which cross-builds it"
        );
    };
    let child = Command::new("wine")
        .arg(&exe)
        .arg("reviewer::")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wine runs the daemon's unit tests");
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = done.send(());
        output
    });
    if finished.recv_timeout(BOUND).is_err() {
        let _ = Command::new("kill").arg(pid.to_string()).status();
        panic!("the reviewer's unit tests under Wine did not end within {} s", BOUND.as_secs());
    }
    let output = waiter.join().expect("the waiter ends").expect("the unit tests ran");
    let printed = text(&output);
    assert!(output.status.success(), "the reviewer's unit tests failed under Wine:\n{printed}");
    for name in EXPECTED {
        assert!(printed.contains(&format!("test {name} ... ok")), "{name} did not run and pass under Wine:\n{printed}");
    }
    assert!(
        printed.contains(&format!("test result: ok. {} passed", EXPECTED.len())),
        "other tests than the expected ones ran:\n{printed}"
    );
}
