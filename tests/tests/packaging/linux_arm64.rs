//! linux-arm64, from the arm64 build scripts/test cross-builds once
//! (`PARLEY_LINUX_ARM64_BIN`): the extension package, the npm platform
//! package, the wheel and the `.tar.gz` hold aarch64 programs marked for
//! 64-bit ARM Linux, and under qemu-user the `parley-mcp` out of each
//! answers `tools/list` through a daemon's socket, as does the archive's
//! `parley` command line.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use parley_tests::{Sandbox, tool_names};
use serde_json::json;

use super::{file_in, json_file, machine, package, sums_check, tools_listed_by, untar, unzip, version};

/// qemu-user emulates every instruction of a debug build: slow, and slower on a busy machine.
const UNDER_QEMU: Duration = Duration::from_secs(60);

/// Where Debian's cross toolchain keeps the arm64 C library, for qemu's `-L`.
const ARM64_SYSROOT: &str = "/usr/aarch64-linux-gnu";

/// The folder holding the arm64 `parley` and `parley-mcp` scripts/test built.
fn arm64_bin() -> PathBuf {
    let dir = std::env::var_os("PARLEY_LINUX_ARM64_BIN").filter(|v| !v.is_empty()).map(PathBuf::from);
    match dir.filter(|dir| dir.join("parley").is_file() && dir.join("parley-mcp").is_file()) {
        Some(dir) => dir,
        None => panic!(
            "cannot check the linux-arm64 packages: PARLEY_LINUX_ARM64_BIN does not name a folder with the arm64 \
             parley and parley-mcp; run scripts/test, which cross-builds them and installs qemu-user"
        ),
    }
}

/// The folder `scripts/package --only linux-arm64 --binaries
/// $PARLEY_LINUX_ARM64_BIN` wrote into, packaged once per test run.
fn packaged() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| package("linux-arm64", &arm64_bin(), None))
}

/// `program` run by qemu-aarch64 with the arm64 C library.
fn qemu(program: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("qemu-aarch64");
    command.args(["-L", ARM64_SYSROOT]).arg(program);
    command
}

/// The packages' files, and the folder holding `parley` and `parley-mcp` each unpacks to in `into`.
struct Unpacked {
    vsix: (PathBuf, PathBuf),
    npm: (PathBuf, PathBuf),
    wheel: (PathBuf, PathBuf),
    archive: (PathBuf, PathBuf),
}

fn unpacked(into: &Path) -> Unpacked {
    let dist = packaged();
    let version = version();
    let vsix = file_in(&dist.join("vscode"), &format!("parley-linux-arm64-{version}"), ".vsix");
    let npm = file_in(&dist.join("npm"), "parley-mcp-linux-arm64-", ".tgz");
    let wheel = file_in(&dist.join("wheels"), "parley_mcp-", ".whl");
    let archive = file_in(&dist.join("archives"), "parley-", ".tar.gz");
    let vsix_dir = unzip(&vsix, &into.join("vsix")).join("extension/bin");
    let npm_dir = untar(&npm, &into.join("npm")).join("package/bin");
    let wheel_dir = unzip(&wheel, &into.join("wheel")).join(format!("parley_mcp-{version}.data/scripts"));
    let archive_dir =
        untar(&archive, &into.join("archive")).join(format!("parley-{version}-aarch64-unknown-linux-gnu"));
    Unpacked { vsix: (vsix, vsix_dir), npm: (npm, npm_dir), wheel: (wheel, wheel_dir), archive: (archive, archive_dir) }
}

#[test]
fn the_linux_arm64_packages_hold_aarch64_programs_marked_for_arm64() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = tempfile::tempdir().expect("scratch folder");
    let Unpacked { vsix, npm, wheel, archive } = unpacked(scratch.path());
    let version = version();

    for (what, dir) in [("extension", &vsix.1), ("npm package", &npm.1), ("wheel", &wheel.1), ("archive", &archive.1)] {
        for program in ["parley", "parley-mcp"] {
            let path = dir.join(program);
            assert_eq!(machine(&path), "aarch64 ELF", "the {what}'s {program} is an arm64 program");
            let mode = std::fs::metadata(&path).expect("the program").permissions().mode();
            assert_eq!(mode & 0o111, 0o111, "the {what}'s {program} is executable once unpacked: {mode:o}");
        }
    }

    let manifest = std::fs::read_to_string(scratch.path().join("vsix/extension.vsixmanifest")).expect("manifest");
    assert!(
        manifest.contains(r#"TargetPlatform="linux-arm64""#),
        "VS Code installs it on arm64 Linux only: {manifest}"
    );

    let platform = json_file(&npm.1.join("../package.json"));
    assert_eq!(
        (&platform["name"], &platform["os"], &platform["cpu"]),
        (&json!("parley-mcp-linux-arm64"), &json!(["linux"]), &json!(["arm64"])),
        "npm installs it on arm64 Linux only: {platform}"
    );

    // maturin tags the wheel with the oldest glibc the programs need (manylinux_2_X_aarch64).
    let name = wheel.0.file_name().and_then(|n| n.to_str()).expect("a wheel name");
    assert!(
        name.starts_with(&format!("parley_mcp-{version}-py3-none-manylinux_")) && name.ends_with("_aarch64.whl"),
        "pip and uv install it on arm64 Linux only: {name}"
    );
    let tags = std::fs::read_to_string(wheel.1.join(format!("../../parley_mcp-{version}.dist-info/WHEEL")))
        .expect("the wheel's WHEEL file");
    assert!(
        tags.lines().any(|line| line.starts_with("Tag: py3-none-manylinux_") && line.ends_with("_aarch64")),
        "{tags}"
    );

    assert!(archive.1.join("README.md").is_file(), "the archive carries the README");
    sums_check(packaged(), &[&vsix.0, &npm.0, &wheel.0, &archive.0]);
}

#[tokio::test]
async fn the_parley_mcp_of_each_linux_arm64_package_answers_under_qemu() {
    let scratch = tempfile::tempdir().expect("scratch folder");
    let Unpacked { vsix, npm, wheel, archive } = unpacked(scratch.path());
    // The shim only relays: a daemon of this machine's own build serves it.
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    for (what, dir) in [("archive", &archive.1), ("npm package", &npm.1), ("wheel", &wheel.1), ("extension", &vsix.1)] {
        let mut shim = qemu(&dir.join("parley-mcp"));
        shim.env("PARLEY_SOCKET", &sandbox.socket).env("PARLEY_NO_SPAWN", "1");
        assert_eq!(tools_listed_by(shim, UNDER_QEMU).await, tool_names(), "the {what}'s parley-mcp serves Parley");
    }

    // And the archive's command line talks to the same daemon.
    let status = qemu(&archive.1.join("parley"))
        .args(["status", "--json"])
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_NO_SPAWN", "1")
        .output()
        .await
        .expect("qemu runs the arm64 parley");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).expect("status --json prints JSON");
    assert_eq!(status["pid"], json!(sandbox.status()["pid"]), "the arm64 parley reached the running daemon: {status}");
}
