//! `parley hooks install claude|codex [--project] [--write] [--file PATH]`:
//! Parley's hook entries, printed, or merged into the host's settings
//! (`~/.claude/settings.json`, `.claude/settings.json` at the repository
//! root with `--project`, `~/.codex/hooks.json`) with the care
//! `mcp-config --write` takes: comments and layout kept, everything else
//! kept, a backup beside the file, a file that does not parse refused with
//! the line at fault, and a file already holding the entries left alone.
//! `parley doctor` asks [`installed`] whether they are there.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};

use crate::cli::settings_file::{backup_path, lenient_json, replace};
use crate::workspace;

/// The hosts whose hooks Parley installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookHost {
    /// Claude Code: `~/.claude/settings.json` (`.claude/settings.json` in the project with --project).
    Claude,
    /// Codex: `~/.codex/hooks.json` (`$CODEX_HOME/hooks.json`).
    Codex,
}

/// How long a host lets a plan hook wait for the person: four days.
pub const PLAN_TIMEOUT_SECONDS: u64 = 4 * 24 * 60 * 60;
/// How long a hook that only reads what waits (a plan's notes, a person's
/// messages) may take.
const NOTES_TIMEOUT_SECONDS: u64 = 60;

/// One hook entry: under `event`, for `matcher` (every tool when `None`),
/// running `parley hook NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    event: &'static str,
    matcher: Option<&'static str>,
    hook: &'static str,
    timeout: u64,
}

impl HookHost {
    fn name(self) -> &'static str {
        match self {
            HookHost::Claude => "claude",
            HookHost::Codex => "codex",
        }
    }

    fn entries(self) -> Vec<Entry> {
        match self {
            HookHost::Claude => vec![
                Entry {
                    event: "PermissionRequest",
                    matcher: Some("ExitPlanMode"),
                    hook: "claude-plan",
                    timeout: PLAN_TIMEOUT_SECONDS,
                },
                Entry {
                    event: "PostToolUse",
                    matcher: Some("ExitPlanMode"),
                    hook: "claude-post-plan",
                    timeout: NOTES_TIMEOUT_SECONDS,
                },
                Entry { event: "PostToolUse", matcher: None, hook: "claude-post-tool", timeout: NOTES_TIMEOUT_SECONDS },
                Entry { event: "Stop", matcher: None, hook: "claude-stop", timeout: NOTES_TIMEOUT_SECONDS },
                Entry {
                    event: "UserPromptSubmit",
                    matcher: None,
                    hook: "claude-prompt",
                    timeout: NOTES_TIMEOUT_SECONDS,
                },
            ],
            HookHost::Codex => {
                vec![
                    Entry { event: "Stop", matcher: None, hook: "codex-stop", timeout: PLAN_TIMEOUT_SECONDS },
                    Entry {
                        event: "UserPromptSubmit",
                        matcher: None,
                        hook: "codex-prompt",
                        timeout: NOTES_TIMEOUT_SECONDS,
                    },
                ]
            }
        }
    }

    /// The user's settings file for this host.
    fn user_file(self) -> anyhow::Result<PathBuf> {
        let home = || {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .context("HOME is not set: say which file to write with --file")
        };
        Ok(match self {
            HookHost::Claude => home()?.join(".claude/settings.json"),
            HookHost::Codex => match std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
                Some(dir) => PathBuf::from(dir).join("hooks.json"),
                None => home()?.join(".codex/hooks.json"),
            },
        })
    }
}

/// The command a hook entry runs: this `parley` by its absolute path in the
/// user's own file; by name in a project's file, which others share.
fn command(hook: &str, by_name: bool) -> String {
    let program = match std::env::current_exe() {
        Ok(exe) if !by_name => dunce::canonicalize(&exe).unwrap_or(exe).to_string_lossy().into_owned(),
        _ => "parley".to_owned(),
    };
    let program = shlex::try_quote(&program).map_or(program.clone(), |q| q.into_owned());
    format!("{program} hook {hook}")
}

fn hook_value(entry: &Entry, by_name: bool) -> serde_json::Value {
    serde_json::json!({ "type": "command", "command": command(entry.hook, by_name), "timeout": entry.timeout })
}

fn hook_cst(entry: &Entry, by_name: bool) -> CstInputValue {
    CstInputValue::Object(vec![
        ("type".to_owned(), CstInputValue::from("command")),
        ("command".to_owned(), CstInputValue::from(command(entry.hook, by_name))),
        ("timeout".to_owned(), CstInputValue::Number(entry.timeout.to_string())),
    ])
}

fn group_cst(entry: &Entry, by_name: bool) -> CstInputValue {
    let mut group = Vec::new();
    if let Some(matcher) = entry.matcher {
        group.push(("matcher".to_owned(), CstInputValue::from(matcher)));
    }
    group.push(("hooks".to_owned(), CstInputValue::Array(vec![hook_cst(entry, by_name)])));
    CstInputValue::Object(group)
}

/// Whether a hook's command runs `parley hook NAME` (by any path).
fn runs_hook(command: &str, hook: &str) -> bool {
    let words = shlex::split(command).unwrap_or_else(|| command.split_whitespace().map(str::to_owned).collect());
    match words.as_slice() {
        [program, verb, name, ..] => {
            Path::new(program).file_name().is_some_and(|n| n == "parley") && verb == "hook" && name == hook
        }
        _ => false,
    }
}

/// Prints the entries, or, with `write`, merges them into the host's file.
pub fn run(host: HookHost, project: bool, write: bool, file: Option<PathBuf>) -> anyhow::Result<i32> {
    let by_name = project;
    if !write {
        print!("{}", document(host, by_name));
        let place = match (host, project) {
            (HookHost::Claude, true) => ".claude/settings.json at your repository's root",
            (HookHost::Claude, false) => "~/.claude/settings.json",
            (HookHost::Codex, _) => "~/.codex/hooks.json",
        };
        eprintln!(
            "parley: put these hooks in {place}, or let `parley hooks install {}{} --write` merge them in",
            host.name(),
            if project { " --project" } else { "" }
        );
        return Ok(0);
    }
    let path = match (file, project) {
        (Some(file), _) => file,
        (None, true) => {
            if host == HookHost::Codex {
                anyhow::bail!("Codex reads its hooks from ~/.codex/hooks.json only: leave out --project");
            }
            let cwd = std::env::current_dir()?;
            let root = workspace::root_of(&cwd);
            if !root.join(".git").exists() {
                anyhow::bail!(
                    "{} is not inside a git repository, so there is no project to install into: run this from your \
                     project's folder, leave out --project to install for you alone, or name the file with --file",
                    cwd.display()
                );
            }
            root.join(".claude/settings.json")
        }
        (None, false) => host.user_file()?,
    };
    // Write through a symbolic link (dotfiles kept in a repository), not over it.
    let path = dunce::canonicalize(&path).unwrap_or(path);
    let old = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let Some(old) = old.filter(|text| !text.trim().is_empty()) else {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        replace(&path, &document(host, by_name), None)?;
        println!("Created {} with Parley's {} hooks.", path.display(), host.name());
        return Ok(0);
    };
    let new = merge(&old, host, by_name).map_err(|why| {
        anyhow::anyhow!(
            "{} was left as it is: {why}. Fix it, or add Parley's hooks by hand (`parley hooks install {}` without \
             --write prints them)",
            path.display(),
            host.name()
        )
    })?;
    if new == old {
        println!("{} already has Parley's {} hooks; left as it is.", path.display(), host.name());
        return Ok(0);
    }
    let backup = backup_path(&path);
    std::fs::copy(&path, &backup).with_context(|| format!("backing up {} to {}", path.display(), backup.display()))?;
    replace(&path, &new, Some(&path))?;
    println!("Added Parley's {} hooks to {} (the old file is in {}).", host.name(), path.display(), backup.display());
    Ok(0)
}

/// The whole file of hooks, as printed and as a new file holds it.
fn document(host: HookHost, by_name: bool) -> String {
    merge("{}\n", host, by_name).expect("an empty object takes the hooks")
}

/// The new text of a settings file with Parley's hooks set.
fn merge(old: &str, host: HookHost, by_name: bool) -> Result<String, String> {
    let root = CstRootNode::parse(old, &lenient_json()).map_err(|e| format!("it is not valid JSON ({e})"))?;
    let object = root.object_value().ok_or("its top level is not a JSON object")?;
    let hooks = match object.get("hooks") {
        Some(prop) => prop.object_value().ok_or("its \"hooks\" is not a JSON object")?,
        None => object.object_value_or_set("hooks"),
    };
    let mut changed = false;
    for entry in host.entries() {
        changed |= set_entry(&hooks, &entry, by_name)?;
    }
    Ok(if changed { root.to_string() } else { old.to_owned() })
}

/// Sets one entry under `hooks`; whether anything changed.
fn set_entry(hooks: &CstObject, entry: &Entry, by_name: bool) -> Result<bool, String> {
    let groups = match hooks.get(entry.event) {
        Some(prop) => prop.array_value().ok_or_else(|| format!("its hooks.{} is not a JSON array", entry.event))?,
        None => hooks.array_value_or_set(entry.event),
    };
    let wanted = hook_value(entry, by_name);
    for group in groups.elements() {
        let Some(group) = group.as_object() else { continue };
        let Some(list) = group.get("hooks").and_then(|p| p.array_value()) else { continue };
        for hook in list.elements() {
            let value = hook.to_serde_value();
            let command = value.as_ref().and_then(|v| v.get("command")).and_then(serde_json::Value::as_str);
            if !command.is_some_and(|c| runs_hook(c, entry.hook)) {
                continue;
            }
            if value.as_ref() == Some(&wanted) {
                return Ok(false);
            }
            // An older path, or another timeout: the entry is brought up to date.
            if let Some(object) = hook.as_object() {
                object.replace_with(hook_cst(entry, by_name));
                return Ok(true);
            }
        }
    }
    groups.append(group_cst(entry, by_name));
    Ok(true)
}

/// Which of the host's hooks a settings file's text holds, by name, and
/// which it lacks; `Err` when it cannot be read as JSON.
fn hooks_in(text: &str, host: HookHost) -> Result<(Vec<&'static str>, Vec<&'static str>), String> {
    let root = CstRootNode::parse(text, &lenient_json()).map_err(|e| format!("not valid JSON ({e})"))?;
    let value = root.value().and_then(|v| v.to_serde_value()).unwrap_or_default();
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for entry in host.entries() {
        let commands =
            value["hooks"][entry.event].as_array().into_iter().flatten().flat_map(|group| {
                group["hooks"].as_array().into_iter().flatten().filter_map(|h| h["command"].as_str())
            });
        let mut commands = commands;
        if commands.any(|c| runs_hook(c, entry.hook)) {
            found.push(entry.hook);
        } else {
            missing.push(entry.hook);
        }
    }
    Ok((found, missing))
}

/// Where the host's hooks are installed (the user's file, and for Claude
/// the project's at `project`), for `parley doctor`: `Ok` with what is there,
/// or `Err` with what is missing and how to install it.
pub fn installed(host: HookHost, project: Option<&Path>) -> Result<String, String> {
    let mut files = Vec::new();
    if let Ok(file) = host.user_file() {
        files.push(file);
    }
    if let (HookHost::Claude, Some(root)) = (host, project) {
        files.push(root.join(".claude/settings.json"));
        files.push(root.join(".claude/settings.local.json"));
    }
    let mut problems = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        match hooks_in(&text, host) {
            Ok((found, missing)) if missing.is_empty() => {
                return Ok(format!("{} runs {}", file.display(), found.join(" and ")));
            }
            Ok((found, missing)) if !found.is_empty() => {
                problems.push(format!("{} lacks {}", file.display(), missing.join(" and ")));
            }
            Ok(_) => {}
            Err(why) => problems.push(format!("{} is {why}", file.display())),
        }
    }
    let fix = format!("`parley hooks install {} --write` installs them", host.name());
    Err(match problems.is_empty() {
        true => format!("not installed (plans are not sent to Parley); {fix}"),
        false => format!("{}; {fix}", problems.join("; ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_commands_are_recognised_by_any_path() {
        assert!(runs_hook("/opt/bin/parley hook claude-plan", "claude-plan"));
        assert!(runs_hook("'/opt/my tools/parley' hook codex-stop", "codex-stop"));
        assert!(runs_hook("parley hook claude-plan", "claude-plan"));
        assert!(!runs_hook("parley hook claude-post-plan", "claude-plan"));
        assert!(!runs_hook("plannotator", "claude-plan"));
    }

    #[test]
    fn merging_keeps_other_hooks_and_is_idempotent() {
        let old = "{\n  // mine\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PostToolUse\": [\n      { \"matcher\": \"Write\", \"hooks\": [{ \"type\": \"command\", \"command\": \"fmt\" }] }\n    ]\n  }\n}\n";
        let new = merge(old, HookHost::Claude, true).expect("merge");
        assert!(new.contains("// mine") && new.contains("\"command\": \"fmt\""), "{new}");
        let (found, missing) = hooks_in(&new, HookHost::Claude).expect("JSON");
        assert_eq!(
            (found, missing),
            (vec!["claude-plan", "claude-post-plan", "claude-post-tool", "claude-stop", "claude-prompt"], vec![])
        );
        assert_eq!(merge(&new, HookHost::Claude, true).expect("merge"), new, "a second merge changes nothing");
        let error = merge("{\n  \"a\": 1\n  \"b\": 2\n}\n", HookHost::Codex, false).expect_err("refused");
        assert!(error.contains("line 2"), "{error}");
    }
}
