// Finding the daemon's socket and starting a daemon when none answers, the way the shim and the CLI do (docs/protocol.md §1). Imports nothing from vscode.

import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The environment variables every Parley client agrees on. */
export interface Env {
  [name: string]: string | undefined;
}

/**
 * The socket path computed as `protocol::socket::socket_path` does, for when the
 * `parley` command line is not installed where the extension runs.
 */
export function computeSocketPath(env: Env, uid: number, isPrivateDir: (dir: string) => boolean): string {
  const fromEnv = env.PARLEY_SOCKET;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!path.isAbsolute(fromEnv)) {
      throw new Error(`PARLEY_SOCKET must be an absolute path, got ${fromEnv}`);
    }
    return fromEnv;
  }
  const runtime = `/run/user/${uid}`;
  if (process.platform === 'linux' && isPrivateDir(runtime)) {
    return path.join(runtime, 'parley', 'parley-v1.sock');
  }
  return path.join('/tmp', `parley-${uid}`, 'parley-v1.sock');
}

/** A real directory (not a link) owned by the user with mode 0700, as the daemon requires of /run/user/<uid>. */
export function isPrivateDir(dir: string): boolean {
  try {
    const stat = fs.lstatSync(dir);
    return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o777) === 0o700;
  } catch {
    return false;
  }
}

/**
 * The socket path: the setting when given; on Linux or with PARLEY_SOCKET set, the
 * computation of `protocol::socket::socket_path` done here; elsewhere what
 * `parley socket-path` prints, or the same computation when it is not installed.
 */
export async function resolveSocketPath(setting: string, executable: string, env: Env, log: (line: string) => void): Promise<string> {
  if (setting.trim() !== '') return setting.trim();
  // On Linux the rule is simple enough to follow here, which saves starting a process at activation;
  // elsewhere (macOS asks confstr for its temp directory) the command line decides.
  if (process.platform === 'linux' || (env.PARLEY_SOCKET !== undefined && env.PARLEY_SOCKET !== '')) {
    return computeSocketPath(env, process.getuid?.() ?? 0, isPrivateDir);
  }
  try {
    const printed = await new Promise<string>((resolve, reject) => {
      execFile(executable, ['socket-path'], { env: env as NodeJS.ProcessEnv, timeout: 5000 }, (error, stdout, stderr) => {
        if (error) reject(Object.assign(new Error(stderr.trim() || error.message), { code: (error as NodeJS.ErrnoException).code }));
        else resolve(stdout.trim());
      });
    });
    if (printed !== '') return printed;
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    if (failure.code !== 'ENOENT') {
      throw new Error(`\`${executable} socket-path\` failed: ${failure.message}`);
    }
    log(`\`${executable}\` is not on PATH; computing the socket path as Parley does`);
  }
  return computeSocketPath(env, process.getuid?.() ?? 0, isPrivateDir);
}

/** Whether $PARLEY_NO_SPAWN forbids starting a daemon, as it does for the shim. */
export function spawnForbidden(env: Env): boolean {
  const value = env.PARLEY_NO_SPAWN;
  return value !== undefined && value !== '' && value !== '0';
}

/**
 * Starts `parley daemon` detached (its own session, no terminal, stdin and stdout
 * on /dev/null, stderr appended to the log beside the socket), as docs/protocol.md §1
 * allows an editor to. A second daemon on the same socket refuses to start, so racing
 * an agent's shim is harmless. Resolves false when the executable cannot be run.
 */
export function startDaemon(executable: string, socket: string, env: Env): Promise<boolean> {
  const logPath = socket.replace(/\.sock$/, '') + '.log';
  let logFd: number | 'ignore' = 'ignore';
  try {
    fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
    // Only into a folder of the user's alone: the daemon refuses any other (and says why), and a
    // shared folder such as /tmp could hold a planted link where the log would go.
    if (isPrivateDir(path.dirname(socket))) logFd = fs.openSync(logPath, 'a', 0o600);
  } catch {
    logFd = 'ignore';
  }
  return new Promise((resolve) => {
    const child = spawn(executable, ['daemon'], {
      cwd: os.homedir() || '/',
      detached: true,
      // Detached on Windows means a console of its own; hidden, no window flashes up.
      windowsHide: true,
      stdio: ['ignore', 'ignore', logFd],
      // The daemon commits memory on demand, as every Parley client starts it.
      env: { ...(env as NodeJS.ProcessEnv), MIMALLOC_ARENA_EAGER_COMMIT: '0' },
    });
    if (typeof logFd === 'number') fs.closeSync(logFd);
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
