//! The daemon under Wine: its pipe's name, two clients at once, one daemon
//! per pipe by its lock file, the shim through the pipe, data under local
//! app data.

use std::process::{Command, Stdio};

use super::{WineDaemon, text, windows_bin, windows_bin_or_fail};

#[test]
fn socket_path_is_a_per_user_pipe() {
    let bin = windows_bin_or_fail!("the default pipe name");
    let out = Command::new("wine")
        .arg(bin.join("parley.exe"))
        .arg("socket-path")
        .env_remove("PARLEY_SOCKET")
        .stdin(Stdio::null())
        .output()
        .expect("wine runs parley.exe");
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(printed.starts_with(r"\\.\pipe\parley-") && printed.ends_with("-v1"), "{}", text(&out));
}

#[test]
fn the_daemon_serves_its_pipe_to_two_clients_at_once() {
    let bin = windows_bin_or_fail!("two clients on the daemon's pipe");
    let daemon = WineDaemon::start(&bin);
    let spawn = || daemon.command("parley.exe").arg("status").stdin(Stdio::null()).stdout(Stdio::piped()).spawn();
    let (first, second) = (spawn().expect("first client"), spawn().expect("second client"));
    for client in [first, second] {
        let out = client.wait_with_output().expect("client ends");
        let shown = text(&out);
        assert!(out.status.success(), "{shown}");
        assert!(shown.contains(&format!("socket:      {}", daemon.pipe)), "{shown}");
        let data = daemon.data.as_deref().expect("given");
        assert!(shown.contains(&format!("data:        {data}")), "{shown}");
    }
}

#[test]
fn a_second_daemon_for_the_same_pipe_is_refused_by_the_lock() {
    let bin = windows_bin_or_fail!("one daemon per pipe");
    let daemon = WineDaemon::start(&bin);
    let out = daemon.command("parley.exe").arg("daemon").stdin(Stdio::null()).output().expect("second daemon");
    assert!(!out.status.success(), "a second daemon must not run: {}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("another Parley daemon") && shown.contains(r"AppData\Local\parley"), "{shown}");
    eprintln!(
        "not checked under Wine: that the pipe admits only this user and refuses remote clients (Wine enforces neither a pipe's DACL nor remote rejection)"
    );
}

#[test]
fn the_shim_answers_tools_list_through_the_pipe() {
    let bin = windows_bin_or_fail!("the shim on the daemon's pipe");
    let daemon = WineDaemon::start(&bin);
    let mut shim = daemon
        .command("parley-mcp.exe")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wine starts parley-mcp.exe");
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wine-test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ];
    let mut stdin = shim.stdin.take().expect("piped");
    let mut stdout = std::io::BufReader::new(shim.stdout.take().expect("piped"));
    use std::io::{BufRead, Write};
    for line in lines {
        writeln!(stdin, "{line}").expect("write to the shim");
    }
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).expect("read from the shim") > 0, "the shim ended: {answers:?}");
        answers.push(line);
    }
    drop(stdin);
    let _ = shim.wait();
    assert!(answers[0].contains(r#""id":1"#) && answers[0].contains("protocolVersion"), "{}", answers[0]);
    assert!(answers[1].contains(r#""id":2"#) && answers[1].contains(r#""name":"present_review""#), "{}", answers[1]);
}

#[test]
fn the_store_and_the_pipes_files_live_under_local_app_data() {
    let bin = windows_bin_or_fail!("data under local app data");
    let daemon = WineDaemon::start_with(&bin, None);
    let out = daemon.parley(&["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    let data = status["data_dir"].as_str().expect("data_dir");
    assert!(data.ends_with(r"\AppData\Local\parley\data"), "{status}");
}

#[test]
fn the_cli_ends_quietly_when_its_reader_has_gone() {
    let bin = windows_bin_or_fail!("the CLI writing into a closed pipe");
    let daemon = WineDaemon::start(&bin);
    // The reading end is closed before the CLI starts, so its first line
    // meets a closed pipe, as `parley status | head -0` would.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = daemon
        .command("parley.exe")
        .arg("status")
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("wine runs parley.exe");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("panicked"), "{:?}: {stderr}", out.status);
}
