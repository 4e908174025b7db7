//! Setting Parley up from the command line: `parley mcp-config` gives each
//! host a config that really starts Parley, `parley doctor` finds what is
//! wrong and says how to fix it, and `parley service` installs the daemon as
//! a systemd user service (through a stand-in for `systemctl`, which needs a
//! user session bus this machine does not have).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use parley_tests::{DEADLINE, RawShim, Sandbox, bin};
use serde_json::Value;

/// Runs a command to its end, failing the test if it takes over twice the deadline.
async fn run(command: Command) -> (i32, String, String) {
    let mut command = tokio::process::Command::from(command);
    command.kill_on_drop(true);
    let output = tokio::time::timeout(DEADLINE * 2, command.output()).await;
    let Output { status, stdout, stderr } = output.expect("the command finished in time").expect("run it");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

async fn parley(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let mut command = sandbox.command("parley");
    command.args(args);
    run(command).await
}

#[tokio::test]
async fn mcp_config_gives_each_host_a_config_that_starts_parley() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\n")]);
    let shim = std::fs::canonicalize(bin("parley-mcp")).expect("shim path");
    // A user's own file names this build's shim and socket; a project's
    // (shared, often committed) names the command only, unless asked.
    let socket = sandbox.socket.to_string_lossy().into_owned();
    // (arguments, where the entry is, its command by name (else the absolute shim), its socket)
    type Case<'a> = (&'a [&'a str], &'a str, Option<&'a str>, Option<&'a str>);
    let cases: [Case<'_>; 5] = [
        (&["cursor"], "/mcpServers/parley", None, Some(&socket)),
        (&["claude-code"], "/mcpServers/parley", Some("parley-mcp"), None),
        (&["vscode"], "/servers/parley", Some("parley-mcp"), None),
        (&["claude-code", "--socket"], "/mcpServers/parley", Some("parley-mcp"), Some(&socket)),
        (&["vscode", "--socket"], "/servers/parley", Some("parley-mcp"), Some(&socket)),
    ];
    for (args, server, command, env) in cases {
        let (code, out, err) = parley(&sandbox, &[&["mcp-config"][..], args].concat()).await;
        assert_eq!(code, 0, "{args:?}: {err}");
        let config: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"));
        let entry = config.pointer(server).unwrap_or_else(|| panic!("{args:?}: no {server} in {config}"));
        match command {
            Some(name) => assert_eq!(entry["command"].as_str(), Some(name), "{args:?}"),
            None => assert_eq!(PathBuf::from(entry["command"].as_str().expect("command")), shim, "{args:?}"),
        }
        assert_eq!(entry["args"], serde_json::json!([]), "{args:?}");
        assert_eq!(entry["env"]["PARLEY_SOCKET"].as_str(), env, "{args:?}: {entry}");
        assert!(err.contains("put this in"), "{args:?}: {err}");
        if args[0] == "claude-code" {
            // The `claude mcp add` line adds the same entry as the JSON.
            let add = match env {
                Some(socket) => format!("claude mcp add parley -e 'PARLEY_SOCKET={socket}' -- parley-mcp"),
                None => "claude mcp add parley -- parley-mcp".to_owned(),
            };
            assert!(err.contains(&add), "{args:?}: {err}");
        }
        if env.is_none() {
            assert!(err.contains("PARLEY_SOCKET is set in this shell but left out"), "{args:?}: {err}");
        }
    }
    let (code, out, err) = parley(&sandbox, &["mcp-config", "codex"]).await;
    assert_eq!(code, 0, "{err}");
    // The sandbox names its socket in PARLEY_SOCKET, so the entry carries it.
    assert_eq!(
        out,
        format!(
            "[mcp_servers.parley]\ncommand = \"{}\"\nargs = []\n\n[mcp_servers.parley.env]\nPARLEY_SOCKET = \"{}\"\n",
            shim.display(),
            sandbox.socket.display()
        )
    );
    assert!(err.contains("claude mcp add") || err.contains("config.toml"), "{err}");
    let (code, _, err) = parley(&sandbox, &["mcp-config", "emacs"]).await;
    assert_eq!(code, 2, "an unknown host is a usage error");
    assert!(err.contains("claude-code") && err.contains("codex"), "the error lists the hosts: {err}");

    // The configured command, started bare as a host starts it, serves MCP.
    let mut agent = RawShim::start(&sandbox, &repo, &[]);
    agent.send(&RawShim::initialize(1)).await;
    assert_eq!(agent.recv().await["result"]["serverInfo"]["name"], serde_json::json!("parley"));
    let (code, out, _) = run({
        let mut c = Command::new(&shim);
        c.arg("--version");
        c
    })
    .await;
    assert_eq!((code, out.trim()), (0, format!("parley-mcp {}", parley_protocol::BUILD_VERSION).as_str()));
}

#[tokio::test]
async fn doctor_says_what_is_missing_and_how_to_fix_it() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\n")]);
    let doctor = |args: &[&str]| {
        let mut command = sandbox.command("parley");
        // A home of its own: the user's installed editors must not leak in.
        command.current_dir(&repo).env("HOME", sandbox.dir.path().join("empty-home")).arg("doctor").args(args);
        run(command)
    };
    let (code, out, _) = doctor(&[]).await;
    assert_eq!(code, 0, "warnings alone do not fail: {out}");
    assert!(out.contains("not running"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("warn") && l.contains("no Parley editor client found")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("warn") && l.contains("reviewer") && l.contains("[review]")), "{out}");

    std::fs::write(repo.join(".parley.toml"), "[review]\nreviewer = \"no-such-reviewer-9f2 -p\"\n").expect("config");
    // A repository's reviewer is ignored until the user trusts the file.
    let (code, out, _) = doctor(&[]).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("warn") && l.contains("review.reviewer") && l.contains("parley trust")),
        "{out}"
    );
    let trust = |sandbox: &Sandbox| {
        let out = sandbox.command("parley").current_dir(&repo).arg("trust").output().expect("parley trust");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    trust(&sandbox);
    let (code, out, _) = doctor(&[]).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.lines().any(|l| l.starts_with("FAIL") && l.contains("no-such-reviewer-9f2 is not on PATH")), "{out}");

    std::fs::write(repo.join(".parley.toml"), "[review]\nreviewr = \"claude -p\"\n").expect("config");
    let (code, out, _) = doctor(&[]).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.lines().any(|l| l.starts_with("FAIL") && l.contains(".parley.toml") && l.contains("reviewr")), "{out}");

    std::fs::write(repo.join(".parley.toml"), "[review]\nreviewer = [\"python3\", \"-c\", \"print(1)\"]\n")
        .expect("config");
    trust(&sandbox);
    let daemon = sandbox.start_daemon();
    let _window = sandbox.editor("nvim", &[&repo]).await;
    let home = sandbox.dir.path().join("home");
    std::fs::create_dir_all(home.join(".cursor/extensions/parley.parley-0.1.0")).expect("mkdir");
    let (code, out, _) = {
        let mut command = sandbox.command("parley");
        command.current_dir(&repo).env("HOME", &home).args(["doctor", "--json"]);
        run(command).await
    };
    assert_eq!(code, 0, "{out}");
    let report: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(report["ok"], serde_json::json!(true), "{report:#}");
    let checks = report["checks"].as_array().expect("checks");
    let check = |name: &str| checks.iter().find(|c| c["name"] == name).cloned().unwrap_or_default();
    assert_eq!(check("daemon")["outcome"], "ok", "{report:#}");
    assert!(check("daemon")["detail"].as_str().is_some_and(|d| d.contains(&format!("pid {}", daemon.pid()))));
    assert_eq!(check("reviewer")["outcome"], "ok", "{report:#}");
    assert_eq!(check("parley-mcp")["outcome"], "ok", "{report:#}");
    let editors = check("editors");
    assert_eq!(editors["outcome"], "ok", "{report:#}");
    let detail = editors["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("Cursor extension 0.1.0") && detail.contains("nvim connected"), "{detail}");
}

#[tokio::test]
async fn doctor_tells_an_installed_neovim_plugin_from_a_connected_one() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\n")]);
    let home = sandbox.dir.path().join("home");
    // Loaded by path from the config, as the plugin's README shows.
    let nvim_config = sandbox.dir.path().join("config/nvim");
    std::fs::create_dir_all(&nvim_config).expect("mkdir");
    std::fs::write(
        nvim_config.join("init.lua"),
        "vim.opt.runtimepath:append(\"/src/parley/editors/nvim\")\nrequire(\"parley\").setup({})\n",
    )
    .expect("init.lua");
    let editors = || {
        let mut command = sandbox.command("parley");
        command
            .current_dir(&repo)
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .args(["doctor", "--json"]);
        async move {
            let (_, out, _) = run(command).await;
            let report: Value = serde_json::from_str(&out).expect("doctor --json");
            let checks = report["checks"].as_array().expect("checks").clone();
            checks.into_iter().find(|c| c["name"] == "editors").expect("an editors check")
        }
    };
    let _daemon = sandbox.start_daemon();
    let check = editors().await;
    let detail = check["detail"].as_str().unwrap_or_default().to_owned();
    assert_eq!(check["outcome"], "ok", "{check:#}");
    assert!(detail.contains("Neovim plugin installed") && detail.contains("nvim/init.lua"), "{detail}");
    assert!(detail.contains("no Neovim is connected now") && detail.contains(":ParleyConnect"), "{detail}");
    assert!(!detail.contains("install the VS Code extension"), "{detail}");

    let _window = sandbox.editor("nvim", &[&repo]).await;
    let detail = editors().await["detail"].as_str().unwrap_or_default().to_owned();
    assert!(detail.contains("Neovim plugin (") && detail.contains("nvim connected"), "{detail}");
    assert!(!detail.contains("not connected") && !detail.contains("no Neovim"), "{detail}");

    // A plugin manager's copy is found as well.
    std::fs::remove_file(nvim_config.join("init.lua")).expect("rm");
    let lazy = home.join(".local/share/nvim/lazy/parley.nvim");
    std::fs::create_dir_all(lazy.join("lua/parley")).expect("mkdir");
    std::fs::write(lazy.join("lua/parley/init.lua"), "return {}\n").expect("init.lua");
    let detail = editors().await["detail"].as_str().unwrap_or_default().to_owned();
    assert!(detail.contains(&format!("Neovim plugin ({})", lazy.display())), "{detail}");
}

#[tokio::test]
async fn without_a_reachable_service_manager_nothing_changes_and_a_half_installed_service_is_reported() {
    let sandbox = Sandbox::new();
    let (fake_bin, log) = fake_systemctl(&sandbox);
    let with_fake = format!("{}:{}", fake_bin.display(), std::env::var("PATH").unwrap_or_default());
    let no_systemctl = sandbox.dir.path().join("no-bin");
    std::fs::create_dir_all(&no_systemctl).expect("mkdir");
    let unit = sandbox.dir.path().join("config/systemd/user/parley.service");
    let parley_with = |args: &[&str], path: &str, env: &[(&str, &str)]| {
        let mut command = sandbox.command("parley");
        command.args(args).env("PATH", path).env("FAKE_SYSTEMCTL_LOG", &log);
        for name in
            ["FAKE_SYSTEMCTL_UNREACHABLE", "FAKE_SYSTEMCTL_FAIL_ON", "FAKE_SYSTEMCTL_ENABLED", "FAKE_SYSTEMCTL_ACTIVE"]
        {
            command.env_remove(name);
        }
        command.envs(env.iter().copied());
        run(command)
    };
    let unreachable = [("FAKE_SYSTEMCTL_UNREACHABLE", "1")];
    let by_hand = sandbox.start_daemon();
    let still_running = |sandbox: &Sandbox| {
        assert_eq!(sandbox.status()["pid"], serde_json::json!(by_hand.pid()), "the running daemon was left alone");
    };

    // No user bus (a container, WSL, SSH without lingering): nothing is
    // written or stopped, and the error says what to do instead.
    let (code, out, err) = parley_with(&["service", "install"], &with_fake, &unreachable).await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("not reachable") && err.contains("Failed to connect to bus"), "{err}");
    assert!(err.contains("nothing was changed"), "{err}");
    assert!(
        err.contains("loginctl enable-linger") && err.contains("`parley daemon &` from your shell profile"),
        "{err}"
    );
    assert!(!unit.exists(), "no unit is written");
    let calls = std::fs::read_to_string(&log).expect("systemctl was asked");
    assert_eq!(calls.lines().collect::<Vec<_>>(), ["--user show-environment"], "only the probe ran");
    still_running(&sandbox);

    // No systemctl at all: the same.
    let (code, _, err) = parley_with(&["service", "install"], &no_systemctl.to_string_lossy(), &[]).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("cannot run `systemctl --user show-environment`") && err.contains("nothing was changed"),
        "{err}"
    );
    assert!(!unit.exists(), "no unit is written");
    still_running(&sandbox);

    // A unit written while the manager answered, which is gone since:
    // doctor and status say the service never starts, and uninstall removes
    // the file all the same.
    let (code, out, err) = parley_with(&["service", "install", "--no-start"], &with_fake, &[]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(unit.exists());
    let service_check = |out: &str| {
        let report: Value = serde_json::from_str(out).expect("doctor --json");
        let checks = report["checks"].as_array().expect("checks").clone();
        checks.into_iter().find(|c| c["name"] == "service").unwrap_or_default()
    };
    let (_, out, _) = parley_with(&["doctor", "--json"], &with_fake, &unreachable).await;
    let check = service_check(&out);
    assert_eq!(check["outcome"], "warn", "{out}");
    let detail = check["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("not reachable") && detail.contains("never starts"), "{detail}");
    assert!(detail.contains("loginctl enable-linger") && detail.contains("parley service uninstall"), "{detail}");
    let (code, out, _) = parley_with(&["service", "status"], &with_fake, &unreachable).await;
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("not reachable") && out.contains("does not start"), "{out}");

    // The manager answers, but the unit is neither enabled nor running.
    let idle = [("FAKE_SYSTEMCTL_ENABLED", "disabled"), ("FAKE_SYSTEMCTL_ACTIVE", "inactive")];
    let (_, out, _) = parley_with(&["doctor", "--json"], &with_fake, &idle).await;
    let check = service_check(&out);
    assert_eq!(check["outcome"], "warn", "{out}");
    let detail = check["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("disabled, inactive") && detail.contains("systemctl --user enable --now parley.service"),
        "{detail}"
    );
    let (_, out, _) = parley_with(&["doctor", "--json"], &with_fake, &[]).await;
    assert_eq!(service_check(&out)["outcome"], "ok", "{out}");

    let (code, out, err) = parley_with(&["service", "uninstall"], &with_fake, &unreachable).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("nothing to stop or disable") && out.contains("Removed the systemd user service"), "{out}");
    assert!(!unit.exists(), "uninstall removes what install wrote");
    let (_, out, _) = parley_with(&["doctor", "--json"], &with_fake, &[]).await;
    assert_eq!(service_check(&out), Value::Null, "no service line once nothing is installed: {out}");
    still_running(&sandbox);
}

/// A folder holding `systemctl`: the stand-in, recording into `log`.
fn fake_systemctl(sandbox: &Sandbox) -> (PathBuf, PathBuf) {
    let dir = sandbox.dir.path().join("fake-bin");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake_systemctl.sh");
    std::os::unix::fs::symlink(script, dir.join("systemctl")).expect("link systemctl");
    (dir, sandbox.dir.path().join("systemctl.log"))
}

#[tokio::test]
async fn the_service_takes_over_from_a_running_daemon_and_goes_away_cleanly() {
    let sandbox = Sandbox::new();
    let (fake_bin, log) = fake_systemctl(&sandbox);
    let path = format!("{}:{}", fake_bin.display(), std::env::var("PATH").unwrap_or_default());
    let service = |args: &[&str], fail: Option<&str>| {
        let mut command = sandbox.command("parley");
        command.arg("service").args(args).env("PATH", &path).env("FAKE_SYSTEMCTL_LOG", &log);
        command.env_remove("FAKE_SYSTEMCTL_UNREACHABLE");
        match fail {
            Some(verb) => command.env("FAKE_SYSTEMCTL_FAIL_ON", verb),
            None => command.env_remove("FAKE_SYSTEMCTL_FAIL_ON"),
        };
        run(command)
    };
    let unit = sandbox.dir.path().join("config/systemd/user/parley.service");

    let (code, out, _) = service(&["status"], None).await;
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("not installed"), "{out}");

    let by_hand = sandbox.start_daemon();
    let (code, out, err) = service(&["install"], None).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("Stopped the daemon that was running (pid {})", by_hand.pid())), "{out}");
    let text = std::fs::read_to_string(&unit).expect("the unit is written");
    let parley_bin = std::fs::canonicalize(bin("parley")).expect("parley path");
    assert!(text.contains(&format!("ExecStart=\"{}\" daemon", parley_bin.display())), "{text}");
    assert!(text.contains(&format!("Environment=\"PARLEY_SOCKET={}\"", sandbox.socket.display())), "{text}");
    let calls = std::fs::read_to_string(&log).expect("systemctl was called");
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        ["--user show-environment", "--user daemon-reload", "--user enable --now parley.service"]
    );
    // The daemon now running is the one the unit's ExecStart started.
    let status: Value = serde_json::from_str(&parley(&sandbox, &["status", "--json"]).await.1).expect("status JSON");
    let pid = status["pid"].as_u64().expect("a daemon runs");
    assert_ne!(pid, u64::from(by_hand.pid()));
    assert!(out.contains(&format!("runs as a systemd user service (pid {pid})")), "{out}");

    let (code, out, _) = service(&["status"], None).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("enabled, active"), "{out}");

    let (code, out, err) = service(&["uninstall"], None).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(!unit.exists(), "the unit is removed");
    let calls = std::fs::read_to_string(&log).expect("log");
    assert!(calls.contains("--user disable --now parley.service"), "{calls}");
    assert_eq!(parley(&sandbox, &["status"]).await.0, 3, "the service's daemon was stopped");

    // The manager answers but refuses the unit after the running daemon was
    // stopped: the file is put back as it was, and the error says so.
    let by_hand = sandbox.start_daemon();
    let (code, _, err) = service(&["install"], Some("enable")).await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("could not be enabled") && err.contains("put back as it was"), "{err}");
    assert!(err.contains(&format!("(pid {}) was stopped", by_hand.pid())) && err.contains("parley daemon"), "{err}");
    assert!(err.contains("Unit file parley.service is not valid"), "{err}");
    assert!(!unit.exists(), "the unit it wrote is gone again");
}
