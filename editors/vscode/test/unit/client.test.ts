// The hub client against a scripted daemon on a real Unix socket: hello, requests and answers, the daemon's own requests, reconnection and catching up through events/replay.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, test } from 'node:test';
import { LineDecoder, Message, encode } from '../../src/hub/codec';
import { HubClient, HubClientOptions, withoutSpawning } from '../../src/hub/client';
import { HelloParams } from '../../src/hub/types';

const DEADLINE_MS = 5000;

/** Waits for `predicate`, failing loudly after the deadline. */
async function until(what: string, predicate: () => boolean): Promise<void> {
  const end = Date.now() + DEADLINE_MS;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A daemon stand-in: records what it receives and answers through `respond`. */
class FakeDaemon {
  readonly received: Message[] = [];
  readonly sockets: net.Socket[] = [];
  server: net.Server | undefined;
  respond: (message: Message, socket: net.Socket) => void = () => {};

  constructor(readonly socketPath: string) {}

  async listen(): Promise<void> {
    this.server = net.createServer((socket) => {
      this.sockets.push(socket);
      const decoder = new LineDecoder();
      socket.on('data', (chunk) => {
        for (const line of decoder.push(chunk)) {
          const message = JSON.parse(line) as Message;
          this.received.push(message);
          this.respond(message, socket);
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => this.server?.listen(this.socketPath, resolve));
  }

  send(socket: net.Socket, message: Message): void {
    socket.write(encode(message));
  }

  last(): net.Socket {
    const socket = this.sockets[this.sockets.length - 1];
    assert.ok(socket, 'a client connected');
    return socket;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}

const hello: HelloParams = {
  protocol: 1,
  role: 'editor',
  client: { name: 'vscode', version: '0.1.0' },
  pid: 1,
  workspaces: ['/w'],
  editor_id: 'vscode-1',
  position_encoding: 'utf-16',
};

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

function setup(overrides: Partial<HubClientOptions> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pvt-'));
  const socketPath = path.join(dir, 'p.sock');
  const daemon = new FakeDaemon(socketPath);
  const notifications: [string, unknown][] = [];
  const connected: boolean[] = [];
  const client = new HubClient({
    resolveSocket: async () => socketPath,
    hello: () => hello,
    log: () => {},
    onNotification: (method, params) => notifications.push([method, params]),
    onRequest: async (method) => (method === 'selection/get' ? { path: '/w/a.rs', text: 'x' } : Promise.reject(new Error('nope'))),
    onConnected: async (_hello, fresh) => {
      connected.push(fresh);
    },
    minDelayMs: 10,
    maxDelayMs: 50,
    ...overrides,
  });
  cleanup.push(async () => {
    client.stop();
    await daemon.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { daemon, client, notifications, connected, socketPath };
}

/** Answers hello with `instance` and `seq`, and events/replay with `replay`. */
function standardDaemon(daemon: FakeDaemon, instance: string, seq: number, replay?: (m: Message) => unknown): void {
  daemon.respond = (m, socket) => {
    if (m.method === 'hello') daemon.send(socket, { id: m.id, result: { protocol: 1, version: '0.1.0', pid: 9, connection_id: 1, seq, instance } });
    else if (m.method === 'events/replay' && replay) daemon.send(socket, { id: m.id, result: replay(m) });
    else if (m.method === 'status') daemon.send(socket, { id: m.id, result: { ok: true } });
    else if (m.method === 'feedback/reply') daemon.send(socket, { id: m.id, error: { code: -32005, message: 'Thread not found' } });
  };
}

test('says hello as an editor, then answers requests by id and delivers notifications', async () => {
  const { daemon, client, notifications, connected } = setup();
  await daemon.listen();
  standardDaemon(daemon, 'run-1', 0);
  client.start();
  await until('the first connection', () => connected.length === 1);
  assert.deepEqual(daemon.received[0].params, hello);
  assert.equal(connected[0], true, 'a first connection fetches the whole state');
  assert.deepEqual(await client.request('status'), { ok: true });
  await assert.rejects(client.request('feedback/reply', { thread_id: 'x' }), /Thread not found/);
  daemon.send(daemon.last(), { method: 'feedback/changed', params: { seq: 1, change: 'created' } });
  await until('the notification', () => notifications.length === 1);
  assert.equal(notifications[0][0], 'feedback/changed');
});

test('answers the daemon\'s selection/get, and refuses what it does not know with an error', async () => {
  const { daemon, client, connected } = setup();
  await daemon.listen();
  standardDaemon(daemon, 'run-1', 0);
  client.start();
  await until('the connection', () => connected.length === 1);
  daemon.send(daemon.last(), { id: 1, method: 'selection/get', params: {} });
  daemon.send(daemon.last(), { id: 2, method: 'unknown/thing', params: {} });
  await until('both answers', () => daemon.received.filter((m) => m.id === 1 || m.id === 2).length >= 2);
  const answers = daemon.received.filter((m) => m.method === undefined);
  assert.deepEqual(answers.find((m) => m.id === 1)?.result, { path: '/w/a.rs', text: 'x' });
  assert.equal(answers.find((m) => m.id === 2)?.error?.code, -32601);
});

test('reconnects after the daemon goes away and replays what it missed, once each', async () => {
  const { daemon, client, notifications, connected } = setup();
  await daemon.listen();
  standardDaemon(daemon, 'run-1', 3);
  client.start();
  await until('the first connection', () => connected.length === 1);
  daemon.send(daemon.last(), { method: 'review/updated', params: { seq: 4 } });
  await until('seq 4', () => notifications.length === 1);
  // The daemon drops the connection; events 5 and 6 happen meanwhile.
  standardDaemon(daemon, 'run-1', 6, (m) => {
    assert.deepEqual(m.params, { after: 4, instance: 'run-1' });
    // An event also pushed as a notification before the replay's answer must not be applied twice.
    daemon.send(daemon.last(), { method: 'feedback/changed', params: { seq: 6 } });
    daemon.send(daemon.last(), { method: 'feedback/changed', params: { seq: 7 } });
    return {
      complete: true,
      seq: 6,
      instance: 'run-1',
      events: [
        { seq: 5, method: 'feedback/changed', params: { seq: 5 } },
        { seq: 6, method: 'feedback/changed', params: { seq: 6 } },
      ],
    };
  });
  daemon.last().destroy();
  await until('the reconnection', () => connected.length === 2);
  await until('the replayed and held events', () => notifications.length === 4);
  assert.equal(connected[1], false, 'a complete replay needs no full fetch');
  assert.deepEqual(notifications.map(([, p]) => (p as { seq: number }).seq), [4, 5, 6, 7]);
});

test('fetches the whole state when the daemon restarted', async () => {
  const { daemon, client, connected } = setup();
  await daemon.listen();
  standardDaemon(daemon, 'run-1', 10);
  client.start();
  await until('the first connection', () => connected.length === 1);
  standardDaemon(daemon, 'run-2', 0, () => ({ complete: false, seq: 0, instance: 'run-2', events: [] }));
  daemon.last().destroy();
  await until('the reconnection', () => connected.length === 2);
  assert.equal(connected[1], true);
});

test('starts a daemon once when none answers, and connects when it is up', async () => {
  let starts = 0;
  let daemonRef: FakeDaemon | undefined;
  const { daemon, client, connected } = setup({
    startDaemon: async () => {
      starts++;
      setTimeout(() => void daemonRef?.listen(), 100);
      return true;
    },
  });
  daemonRef = daemon;
  standardDaemon(daemon, 'run-1', 0);
  client.start();
  await until('the connection to the started daemon', () => connected.length === 1);
  assert.equal(starts, 1);
});

test('refuses a socket path Node would silently truncate', async () => {
  const states: string[] = [];
  const long = '/tmp/' + 'x'.repeat(120) + '.sock';
  const { client } = setup({ resolveSocket: async () => long, onState: (_s, detail) => states.push(detail) });
  client.start();
  await until('the refusal', () => states.some((s) => s.includes('PARLEY_SOCKET')));
  assert.match(states.find((s) => s.includes('PARLEY_SOCKET')) ?? '', /longer than 107 bytes/);
});

test('a requests fails at once when not connected', async () => {
  const { client } = setup({ resolveSocket: async () => '/nonexistent/p.sock' });
  await assert.rejects(client.request('status'), /not connected/);
});

test('lines split anywhere, even inside a UTF-8 character, come out whole', () => {
  const decoder = new LineDecoder();
  const bytes = Buffer.from('{"a":"café 🦀"}\r\n\n{"b":1}\n', 'utf8');
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i += 3) lines.push(...decoder.push(bytes.subarray(i, i + 3)));
  assert.deepEqual(lines, ['{"a":"café 🦀"}', '{"b":1}']);
});

/** A stand-in for `parley attach --stdio`: relays its stdio to the socket, and says on stderr whether it may start a daemon. */
const RELAY = [
  "const net = require('node:net');",
  "process.stderr.write(`spawn ${process.env.PARLEY_NO_SPAWN === '1' ? 'forbidden' : 'allowed'}\\n`);",
  'const socket = net.createConnection(process.argv[1]);',
  'process.stdin.pipe(socket);',
  'socket.pipe(process.stdout);',
  "socket.on('close', () => { process.stderr.write('the daemon closed the connection\\n'); process.exit(1); });",
  "process.stdin.on('end', () => socket.end());",
].join('\n');

test('through a child process: the same hello, requests and replay, and only the first child may start a daemon', async () => {
  const logged: string[] = [];
  const { daemon, client, connected, notifications, socketPath } = setup({
    attach: () => ({ argv: [process.execPath, '-e', RELAY, socketPath], why: 'a test' }),
    attachEnv: () => {
      const env: NodeJS.ProcessEnv = { ...process.env, WSLENV: 'USERPROFILE/p' };
      delete env.PARLEY_NO_SPAWN;
      return env;
    },
    resolveSocket: async () => {
      throw new Error('the socket is not looked up when attaching');
    },
    log: (line) => logged.push(line),
  });
  await daemon.listen();
  standardDaemon(daemon, 'run-1', 3, () => ({ seq: 5, complete: true, events: [{ method: 'review/updated', params: { seq: 5 } }] }));
  client.start();
  await until('the first connection', () => connected.length === 1);
  assert.deepEqual(daemon.received[0].params, hello);
  assert.deepEqual(await client.request('status'), { ok: true });
  await until('the child to say whether it may start a daemon', () => logged.some((l) => l.endsWith('spawn allowed')));

  // The daemon goes away: the child ends saying why, and a new one reconnects and replays.
  daemon.last().destroy();
  await until('the second connection', () => connected.length === 2);
  assert.deepEqual(daemon.received.find((m) => m.method === 'events/replay')?.params, { after: 3, instance: 'run-1' });
  await until('the replayed event', () => notifications.some(([method]) => method === 'review/updated'));
  assert.ok(logged.some((l) => /exited with code 1: the daemon closed the connection/.test(l)), logged.join('\n'));
  assert.ok(logged.some((l) => l.endsWith('spawn forbidden')), `a reconnecting child may start a daemon:\n${logged.join('\n')}`);
  assert.equal(client.connectionState, 'connected');
});

test('a child that cannot be run is reported and retried, never thrown', async () => {
  const logged: string[] = [];
  const { client } = setup({
    attach: () => ({ argv: ['/no/such/parley', 'attach', '--stdio'], why: 'a test' }),
    log: (line) => logged.push(line),
  });
  client.start();
  await until('two tries', () => logged.filter((l) => l.includes('cannot run /no/such/parley')).length >= 2);
  assert.equal(client.connectionState === 'connected', false);
});

test('without spawning, wsl.exe is told to pass the variable on', () => {
  const env: NodeJS.ProcessEnv = { WSLENV: 'USERPROFILE/p' };
  withoutSpawning(env);
  withoutSpawning(env);
  assert.equal(env.PARLEY_NO_SPAWN, '1');
  assert.equal(env.WSLENV, 'USERPROFILE/p:PARLEY_NO_SPAWN');
});

test('through wsl.exe, the window speaks of \\\\wsl.localhost paths and the daemon of WSL ones', async () => {
  const share = '\\\\wsl.localhost\\Ubuntu\\home\\me\\app';
  const { daemon, client, connected, notifications, socketPath } = setup({
    attach: () => ({ argv: [process.execPath, '-e', RELAY, socketPath], why: 'a test', wslDistro: 'Ubuntu' }),
    hello: () => ({ ...hello, workspaces: [share] }),
  });
  await daemon.listen();
  standardDaemon(daemon, 'run-1', 0);
  client.start();
  await until('the connection', () => connected.length === 1);
  assert.deepEqual((daemon.received[0].params as HelloParams).workspaces, ['/home/me/app']);
  client.notify('buffer/closed', { path: `${share}\\src\\lib.rs` });
  await until('the notification', () => daemon.received.some((m) => m.method === 'buffer/closed'));
  assert.deepEqual(daemon.received.find((m) => m.method === 'buffer/closed')?.params, { path: '/home/me/app/src/lib.rs' });
  daemon.send(daemon.last(), { method: 'feedback/changed', params: { seq: 1, thread: { file: '/home/me/app/src/lib.rs', path: 'src/lib.rs' } } });
  await until('the thread', () => notifications.length === 1);
  assert.deepEqual(notifications[0][1], { seq: 1, thread: { file: `${share}\\src\\lib.rs`, path: 'src/lib.rs' } });
});
