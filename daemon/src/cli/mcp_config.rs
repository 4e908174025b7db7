//! `parley mcp-config HOST [--write]`: the entry that connects an agent host
//! to Parley, printed, or merged into the host's own config file.
//!
//! Writing never loses what the user wrote: the file is parsed with a parser
//! that keeps comments and layout (`jsonc-parser`'s concrete syntax tree for
//! the JSON hosts, whose files are often JSON with comments; `toml_edit` for
//! Codex), only Parley's entry is added or replaced, the old file is copied
//! to a timestamped backup beside it first, and the new text replaces the old
//! in one rename. A file that does not parse is refused, naming the line.
//!
//! Project files (Claude Code's `.mcp.json`, VS Code's `.vscode/mcp.json`)
//! are shared: teams commit them. Their entry is portable: the command by
//! name, found on each user's PATH, and no socket unless asked for.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use parley_protocol::socket;

use super::settings_file::{backup_path, lenient_json, replace};
use super::setup::shim_path;
use crate::workspace;

/// The agent hosts `mcp-config` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Claude Code: `.mcp.json` in the project (or `claude mcp add`).
    ClaudeCode,
    /// VS Code: `.vscode/mcp.json` in the workspace.
    Vscode,
    /// Cursor: `~/.cursor/mcp.json` (or `.cursor/mcp.json` in a project).
    Cursor,
    /// Codex: `~/.codex/config.toml` (`$CODEX_HOME/config.toml`).
    Codex,
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json`.
    Windsurf,
    /// Zed: `~/.config/zed/settings.json`, under `context_servers`.
    Zed,
    /// Gemini CLI: `~/.gemini/settings.json`.
    Gemini,
}

/// How a host's file holds its MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// A JSON (or JSON with comments) object, servers under `key`, each entry
    /// starting with `"type": "stdio"` when `typed`.
    Json { key: &'static str, typed: bool },
    /// Codex's TOML: `[mcp_servers.parley]`.
    Toml,
}

impl Host {
    fn format(self) -> Format {
        match self {
            Host::Vscode => Format::Json { key: "servers", typed: true },
            Host::Zed => Format::Json { key: "context_servers", typed: false },
            Host::Codex => Format::Toml,
            Host::ClaudeCode | Host::Cursor | Host::ClaudeDesktop | Host::Windsurf | Host::Gemini => {
                Format::Json { key: "mcpServers", typed: false }
            }
        }
    }

    /// The file `--write` changes when no `--file` is given; `project` is the
    /// git root holding the current directory.
    fn default_file(self, project: &Path) -> anyhow::Result<PathBuf> {
        let home = || std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let home = || home().context("HOME is not set: say which file to write with --file");
        let config_home = || -> anyhow::Result<PathBuf> {
            match std::env::var_os("XDG_CONFIG_HOME").filter(|h| !h.is_empty()) {
                Some(dir) => Ok(PathBuf::from(dir)),
                None => Ok(home()?.join(".config")),
            }
        };
        Ok(match self {
            Host::ClaudeCode => project.join(".mcp.json"),
            Host::Vscode => project.join(".vscode/mcp.json"),
            Host::Cursor => home()?.join(".cursor/mcp.json"),
            Host::Codex => match std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
                Some(dir) => PathBuf::from(dir).join("config.toml"),
                None => home()?.join(".codex/config.toml"),
            },
            Host::ClaudeDesktop if cfg!(target_os = "macos") => {
                home()?.join("Library/Application Support/Claude/claude_desktop_config.json")
            }
            Host::ClaudeDesktop => config_home()?.join("Claude/claude_desktop_config.json"),
            Host::Windsurf => home()?.join(".codeium/windsurf/mcp_config.json"),
            // Zed reads ~/.config/zed on macOS too.
            Host::Zed => match std::env::var_os("XDG_CONFIG_HOME").filter(|h| !h.is_empty()) {
                Some(dir) => PathBuf::from(dir).join("zed/settings.json"),
                None => home()?.join(".config/zed/settings.json"),
            },
            Host::Gemini => home()?.join(".gemini/settings.json"),
        })
    }

    /// Whether the host's file belongs to a project (and is often committed),
    /// not to the user.
    fn is_project(self) -> bool {
        matches!(self, Host::ClaudeCode | Host::Vscode)
    }

    /// Where the printed config goes, for the hint on stderr.
    fn place(self, entry: &Entry) -> String {
        match self {
            Host::ClaudeCode => format!(".mcp.json in your project, or run: {}", entry.claude_mcp_add()),
            Host::Vscode => ".vscode/mcp.json in your workspace".into(),
            Host::Cursor => "~/.cursor/mcp.json for every project, or .cursor/mcp.json in a project".into(),
            Host::Codex => "~/.codex/config.toml".into(),
            Host::ClaudeDesktop => "claude_desktop_config.json (Settings → Developer → Edit Config)".into(),
            Host::Windsurf => "~/.codeium/windsurf/mcp_config.json".into(),
            Host::Zed => "~/.config/zed/settings.json, inside its top-level object".into(),
            Host::Gemini => "~/.gemini/settings.json".into(),
        }
    }
}

/// Parley's entry: the shim, no arguments, and the socket when this shell
/// names one (a host started elsewhere would otherwise look in the default
/// place).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// How the host starts the shim: `parley-mcp` installed with Parley, or the
/// npm or Python package fetched on first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Via {
    /// The `parley-mcp` beside this `parley` (by name in a project's file).
    #[default]
    Path,
    /// `npx -y parley-mcp`: the npm package, which carries the prebuilt binaries.
    Npx,
    /// `uvx parley-mcp`: the Python wheel, which carries the prebuilt binaries.
    Uvx,
}

/// The npm and PyPI package that runs the shim (what `scripts/package` builds).
pub const PACKAGE_NAME: &str = "parley-mcp";

/// `npx -y parley-mcp`, through `cmd /c` on Windows: npx is a batch file
/// there (`npx.cmd`), which a host starting its command without a shell
/// cannot run by the name `npx`.
fn npx_command(windows: bool) -> (Option<String>, Vec<String>) {
    let npx = ["npx", "-y", PACKAGE_NAME].map(str::to_owned);
    if windows {
        (Some("cmd".to_owned()), ["/c".to_owned()].into_iter().chain(npx).collect())
    } else {
        let [command, args @ ..] = npx;
        (Some(command), args.to_vec())
    }
}

/// The name a portable entry runs the shim by.
const SHIM_NAME: &str = "parley-mcp";

impl Entry {
    /// The entry for `host`: for a user's own file, the shim beside this
    /// `parley` by its absolute path and this shell's socket; for a project
    /// file, the shim by name, with the socket only when `with_socket`.
    fn for_host(host: Host, with_socket: bool, via: Via) -> anyhow::Result<Entry> {
        let socket = std::env::var(socket::SOCKET_ENV).ok().filter(|v| !v.is_empty());
        if with_socket && socket.is_none() {
            anyhow::bail!(
                "--socket writes this shell's {} into the entry, but it is not set; set it, or leave --socket out \
                 (the default socket needs no entry)",
                socket::SOCKET_ENV
            );
        }
        let env = |socket: Option<String>| socket.map(|s| vec![(socket::SOCKET_ENV.to_owned(), s)]).unwrap_or_default();
        let (command, args) = match via {
            Via::Path => (None, Vec::new()),
            Via::Npx => npx_command(cfg!(windows)),
            Via::Uvx => (Some("uvx".to_owned()), vec![PACKAGE_NAME.to_owned()]),
        };
        if !host.is_project() {
            let command = command.unwrap_or_else(|| shim_path().0.to_string_lossy().into_owned());
            return Ok(Entry { command, args, env: env(socket) });
        }
        if socket.is_some() && !with_socket {
            eprintln!(
                "parley: {} is set in this shell but left out of this project's entry, which others share: start the \
                 agent host with it set too, or pass --socket to write it in",
                socket::SOCKET_ENV
            );
        }
        let command = command.unwrap_or_else(|| SHIM_NAME.to_owned());
        Ok(Entry { command, args, env: env(socket.filter(|_| with_socket)) })
    }

    /// The `claude mcp add` command that adds this same entry.
    fn claude_mcp_add(&self) -> String {
        let quote = |word: &str| shlex::try_quote(word).map_or_else(|_| format!("{word:?}"), |q| q.into_owned());
        let mut line = "claude mcp add parley".to_owned();
        for (key, value) in &self.env {
            line.push_str(&format!(" -e {}", quote(&format!("{key}={value}"))));
        }
        line.push_str(&format!(" -- {}", quote(&self.command)));
        for arg in &self.args {
            line.push_str(&format!(" {}", quote(arg)));
        }
        line
    }

    fn json(&self, typed: bool) -> serde_json::Value {
        let mut entry = serde_json::Map::new();
        if typed {
            entry.insert("type".into(), "stdio".into());
        }
        entry.insert("command".into(), self.command.clone().into());
        entry.insert("args".into(), self.args.iter().map(|a| serde_json::Value::from(a.clone())).collect());
        if !self.env.is_empty() {
            let env = self.env.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone()))).collect();
            entry.insert("env".into(), serde_json::Value::Object(env));
        }
        serde_json::Value::Object(entry)
    }

    fn cst(&self, typed: bool) -> CstInputValue {
        let mut entry = Vec::new();
        if typed {
            entry.push(("type".to_owned(), CstInputValue::from("stdio")));
        }
        entry.push(("command".to_owned(), CstInputValue::from(self.command.clone())));
        entry.push((
            "args".to_owned(),
            CstInputValue::Array(self.args.iter().map(|a| CstInputValue::from(a.clone())).collect()),
        ));
        if !self.env.is_empty() {
            let env = self.env.iter().map(|(k, v)| (k.clone(), CstInputValue::from(v.clone()))).collect();
            entry.push(("env".to_owned(), CstInputValue::Object(env)));
        }
        CstInputValue::Object(entry)
    }

    fn toml_table(&self) -> toml_edit::Table {
        let mut table = toml_edit::Table::new();
        table.insert("command", toml_edit::value(self.command.clone()));
        table.insert("args", toml_edit::value(self.args.iter().map(String::as_str).collect::<toml_edit::Array>()));
        if !self.env.is_empty() {
            let mut env = toml_edit::Table::new();
            for (key, value) in &self.env {
                env.insert(key, toml_edit::value(value.clone()));
            }
            table.insert("env", toml_edit::Item::Table(env));
        }
        table
    }

    /// The whole config a host needs, as printed (and as a new file holds it).
    fn document(&self, format: Format) -> String {
        match format {
            Format::Json { key, typed } => {
                // Built as --write builds it, so the keys keep their order.
                let root = CstRootNode::parse("{}\n", &ParseOptions::default()).expect("an empty object parses");
                root.object_value_or_set().object_value_or_set(key).append("parley", self.cst(typed));
                root.to_string()
            }
            Format::Toml => {
                let mut servers = toml_edit::Table::new();
                servers.set_implicit(true);
                servers.insert("parley", toml_edit::Item::Table(self.toml_table()));
                let mut document = toml_edit::DocumentMut::new();
                document.insert("mcp_servers", toml_edit::Item::Table(servers));
                document.to_string()
            }
        }
    }
}

/// Prints the host's config on stdout (ready to paste) and where it goes on
/// stderr; with `write`, merges it into the host's file instead. A project
/// host's entry carries the socket only `with_socket`; `via` says how the
/// host starts the shim.
pub fn mcp_config(host: Host, write: bool, file: Option<PathBuf>, with_socket: bool, via: Via) -> anyhow::Result<i32> {
    let entry = Entry::for_host(host, with_socket, via)?;
    let (shim, found) = shim_path();
    if via != Via::Path {
        // npx and uvx fetch the shim themselves: nothing to find here.
    } else if !found {
        eprintln!(
            "parley: no parley-mcp beside {}; the host will look for it on its PATH (install it with `cargo install --locked --path shim`)",
            std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "this parley".into())
        );
    } else if entry.command == SHIM_NAME && !shim_on_path() {
        eprintln!(
            "parley: {SHIM_NAME} is not on your PATH, so the host will not find it by name: add {} to your PATH",
            shim.parent().map(|p| p.display().to_string()).unwrap_or_default()
        );
    }
    let name = {
        use clap::ValueEnum as _;
        host.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default()
    };
    if !write {
        print!("{}", entry.document(host.format()));
        eprintln!("parley: put this in {}, or let `parley mcp-config {name} --write` do it", host.place(&entry));
        return Ok(0);
    }
    let path = match file {
        Some(file) => file,
        None => {
            let cwd = std::env::current_dir()?;
            let root = workspace::root_of(&cwd);
            if host.is_project() && !root.join(".git").exists() {
                anyhow::bail!(
                    "{} is not inside a git repository, and {name}'s config belongs in a project: run \
                     `parley mcp-config {name} --write` from your project's folder, or name the file with --file",
                    cwd.display()
                );
            }
            host.default_file(&root)?
        }
    };
    match write_entry(&path, host.format(), &entry)? {
        Written::Created => println!("Created {} with Parley's entry.", path.display()),
        Written::Unchanged => println!("{} already has Parley's entry; left as it is.", path.display()),
        Written::Merged { backup } => {
            println!("Added Parley's entry to {} (the old file is in {}).", path.display(), backup.display())
        }
    }
    Ok(0)
}

/// Whether `parley-mcp` is found by name on this shell's PATH.
fn shim_on_path() -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(SHIM_NAME).is_file()))
}

/// What `--write` did.
#[derive(Debug, PartialEq, Eq)]
enum Written {
    Created,
    Unchanged,
    Merged { backup: PathBuf },
}

/// Merges `entry` into the file at `path` (created when missing).
fn write_entry(path: &Path, format: Format, entry: &Entry) -> anyhow::Result<Written> {
    // Write through a symbolic link (dotfiles kept in a repository), not over it.
    let path = match dunce::canonicalize(path) {
        Ok(real) => real,
        Err(_) => path.to_owned(),
    };
    let old = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let Some(old) = old.filter(|text| !text.trim().is_empty()) else {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        replace(&path, &entry.document(format), None)?;
        return Ok(Written::Created);
    };
    let new = match format {
        Format::Json { key, typed } => merge_json(&old, key, typed, entry),
        Format::Toml => merge_toml(&old, entry),
    }
    .map_err(|why| {
        anyhow::anyhow!(
            "{} was left as it is: {why}. Fix it, or add Parley's entry by hand (`parley mcp-config` without --write prints it)",
            path.display()
        )
    })?;
    if new == old {
        return Ok(Written::Unchanged);
    }
    let backup = backup_path(&path);
    std::fs::copy(&path, &backup).with_context(|| format!("backing up {} to {}", path.display(), backup.display()))?;
    replace(&path, &new, Some(&path))?;
    Ok(Written::Merged { backup })
}

/// The new text of a JSON (with comments) file with Parley's entry set.
fn merge_json(old: &str, key: &str, typed: bool, entry: &Entry) -> Result<String, String> {
    let root = CstRootNode::parse(old, &lenient_json()).map_err(|e| format!("it is not valid JSON ({e})"))?;
    let object = root.object_value().ok_or("its top level is not a JSON object")?;
    let servers = match object.get(key) {
        Some(prop) => prop.object_value().ok_or_else(|| format!("its \"{key}\" is not a JSON object"))?,
        None => object.object_value_or_set(key),
    };
    let wanted = entry.json(typed);
    match servers.get("parley") {
        Some(existing) if existing.value().and_then(|v| v.to_serde_value()).as_ref() == Some(&wanted) => {
            return Ok(old.to_owned());
        }
        Some(existing) => existing.set_value(entry.cst(typed)),
        None => {
            servers.append("parley", entry.cst(typed));
        }
    }
    Ok(root.to_string())
}

/// The new text of Codex's TOML with `[mcp_servers.parley]` set; comments and
/// layout elsewhere are kept.
fn merge_toml(old: &str, entry: &Entry) -> Result<String, String> {
    let mut document: toml_edit::DocumentMut = old.parse().map_err(|e: toml_edit::TomlError| {
        let line = e.span().map(|span| old[..span.start].lines().count().max(1));
        let what = e.message().trim().to_owned();
        match line {
            Some(line) => format!("it is not valid TOML (line {line}: {what})"),
            None => format!("it is not valid TOML ({what})"),
        }
    })?;
    let servers = document.entry("mcp_servers").or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let servers = servers.as_table_like_mut().ok_or("its mcp_servers is not a table")?;
    let wanted = entry.toml_table();
    if let Some(existing) = servers.get("parley").and_then(toml_edit::Item::as_table_like)
        && same_toml(existing, &wanted)
    {
        return Ok(old.to_owned());
    }
    servers.insert("parley", toml_edit::Item::Table(wanted));
    Ok(document.to_string())
}

/// Whether two tables hold the same values, whatever their layout.
fn same_toml(a: &dyn toml_edit::TableLike, b: &toml_edit::Table) -> bool {
    let values = |t: &dyn toml_edit::TableLike| -> Option<toml::Value> {
        let mut text = String::new();
        for (key, item) in t.iter() {
            match item {
                toml_edit::Item::Value(v) => text.push_str(&format!("{key} = {}\n", v.to_string().trim())),
                toml_edit::Item::Table(table) => {
                    let inline = table.clone().into_inline_table();
                    text.push_str(&format!("{key} = {}\n", inline.to_string().trim()));
                }
                _ => return None,
            }
        }
        toml::from_str(&text).ok()
    };
    values(a).is_some() && values(a) == values(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(env: &[(&str, &str)]) -> Entry {
        Entry {
            command: "/opt/parley/parley-mcp".into(),
            args: Vec::new(),
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        }
    }

    #[test]
    fn npx_runs_through_cmd_on_windows_where_it_is_a_batch_file() {
        let words = |(command, args): (Option<String>, Vec<String>)| {
            std::iter::once(command.expect("a command")).chain(args).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(words(npx_command(false)), "npx -y parley-mcp");
        assert_eq!(words(npx_command(true)), "cmd /c npx -y parley-mcp");
    }

    #[test]
    fn json_merges_keep_comments_order_and_other_servers() {
        let old = "{\n  // my servers\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": { \"command\": \"x\" }, // keep\n  },\n}\n";
        let new = merge_json(old, "mcpServers", false, &entry(&[("PARLEY_SOCKET", "/run/p.sock")])).expect("merge");
        assert!(new.starts_with("{\n  // my servers\n  \"theme\": \"dark\","), "{new}");
        assert!(new.contains("\"other\": { \"command\": \"x\" }, // keep"), "{new}");
        assert!(new.contains("\"command\": \"/opt/parley/parley-mcp\""), "{new}");
        assert!(new.contains("\"PARLEY_SOCKET\": \"/run/p.sock\""), "{new}");
        // Merging again changes nothing.
        let again = merge_json(&new, "mcpServers", false, &entry(&[("PARLEY_SOCKET", "/run/p.sock")])).expect("merge");
        assert_eq!(again, new);
    }

    #[test]
    fn printed_configs_quote_odd_paths() {
        let odd = Entry { command: "/opt/my tools/a\\b\"c".into(), args: Vec::new(), env: Vec::new() };
        let toml: toml::Value = toml::from_str(&odd.document(Format::Toml)).expect("TOML");
        assert_eq!(toml["mcp_servers"]["parley"]["command"].as_str(), Some(odd.command.as_str()));
        let json: serde_json::Value =
            serde_json::from_str(&odd.document(Format::Json { key: "servers", typed: true })).expect("JSON");
        assert_eq!(json["servers"]["parley"]["command"].as_str(), Some(odd.command.as_str()));
        assert_eq!(json["servers"]["parley"]["type"], "stdio");
    }

    #[test]
    fn the_claude_mcp_add_line_carries_the_entrys_command_and_environment() {
        assert_eq!(entry(&[]).claude_mcp_add(), "claude mcp add parley -- /opt/parley/parley-mcp");
        let odd = Entry {
            command: "/opt/my tools/parley-mcp".into(),
            args: Vec::new(),
            env: vec![("PARLEY_SOCKET".into(), "/run/user/1000/my parley.sock".into())],
        };
        assert_eq!(
            odd.claude_mcp_add(),
            "claude mcp add parley -e 'PARLEY_SOCKET=/run/user/1000/my parley.sock' -- '/opt/my tools/parley-mcp'"
        );
    }

    #[test]
    fn json_that_does_not_parse_is_refused_with_its_line() {
        let cases = [
            ("{\n  \"a\": 1\n  \"b\": 2\n}\n", "line 2"),
            ("[1, 2]\n", "top level is not a JSON object"),
            ("{\"mcpServers\": [1]}\n", "\"mcpServers\" is not a JSON object"),
        ];
        for (old, why) in cases {
            let error = merge_json(old, "mcpServers", false, &entry(&[])).expect_err("refused");
            assert!(error.contains(why), "{old:?}: {error}");
        }
    }

    #[test]
    fn toml_merges_keep_comments_and_other_servers() {
        let old = "# my Codex\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n";
        let new = merge_toml(old, &entry(&[])).expect("merge");
        assert!(
            new.starts_with("# my Codex\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n"),
            "{new}"
        );
        assert!(new.contains("[mcp_servers.parley]\ncommand = \"/opt/parley/parley-mcp\"\nargs = []\n"), "{new}");
        assert_eq!(merge_toml(&new, &entry(&[])).expect("merge"), new, "merging again changes nothing");
        let error = merge_toml("model = \"o3\"\n[broken\n", &entry(&[])).expect_err("refused");
        assert!(error.contains("line 2"), "{error}");
    }
}
