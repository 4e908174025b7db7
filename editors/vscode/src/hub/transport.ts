// The byte stream one hub connection runs over: the daemon's socket, or a child process (`parley attach --stdio`, docs/protocol.md §1) whose stdin and stdout carry the same lines. The hub client sees the same four events either way. Imports nothing from vscode.

import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import * as net from 'node:net';

/** What a transport tells the hub client. */
export interface TransportEvents {
  /** The stream is open: say hello. */
  onOpen(): void;
  onData(chunk: Buffer): void;
  /** It could not open or broke; `code` is Node's (ENOENT, ECONNREFUSED, …). */
  onError(error: NodeJS.ErrnoException): void;
  /** It ended; `why` says how, for the log. */
  onClose(why: string): void;
}

/** One open hub connection's byte stream. */
export interface Transport {
  write(data: string): void;
  destroy(): void;
}

/** A connection to the daemon's socket. */
export function openSocket(path: string, events: TransportEvents): Transport {
  const socket = net.createConnection(path);
  socket.on('connect', () => events.onOpen());
  socket.on('data', (chunk: Buffer) => events.onData(chunk));
  socket.on('error', (error: NodeJS.ErrnoException) => events.onError(error));
  socket.on('close', () => events.onClose('the daemon closed the connection'));
  return { write: (data) => void socket.write(data), destroy: () => socket.destroy() };
}

/** How many characters of the child's stderr are kept to say why it ended. */
const STDERR_KEPT = 2000;

/**
 * A connection through a child process: `argv[0]` run with the rest as its arguments, no shell.
 * Its stderr goes to `log` line by line; its last words say why it ended.
 */
export function openChild(argv: readonly string[], env: NodeJS.ProcessEnv, events: TransportEvents, log: (line: string) => void): Transport {
  const [program, ...args] = argv;
  let stderr = '';
  let ended = false;
  const end = (why: string): void => {
    if (ended) return;
    ended = true;
    events.onClose(why);
  };
  const child: ChildProcessWithoutNullStreams = spawn(program, args, { env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
  child.on('spawn', () => events.onOpen());
  child.on('error', (error: NodeJS.ErrnoException) => {
    if (ended) return;
    ended = true;
    events.onError(Object.assign(new Error(`cannot run ${program}: ${error.message}`), { code: error.code }));
  });
  child.stdout.on('data', (chunk: Buffer) => events.onData(chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
    for (const line of chunk.toString('utf8').split(/\r?\n/)) if (line.trim() !== '') log(`${program}: ${line}`);
  });
  // A write after the child exited fails with EPIPE; its exit says why.
  child.stdin.on('error', () => {});
  child.on('close', (code, signal) => {
    const last = stderr.trim().split(/\r?\n/).pop();
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    end(`${argv.join(' ')} ${how}${last ? `: ${last}` : ''}`);
  });
  return {
    write: (data) => void child.stdin.write(data),
    destroy: () => {
      ended = true;
      child.stdin.end();
      child.kill();
    },
  };
}
