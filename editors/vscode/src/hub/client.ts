// The hub client: one connection to the daemon as an editor window, over its socket or through a child process (`parley attach --stdio`, src/hub/transport.ts), with hello, requests, the daemon's own requests and notifications, reconnection with back-off and catching up through events/replay (docs/protocol.md §3, §8). Imports nothing from vscode, so node --test drives it against a socket of its own.

import { LineDecoder, Message, decode, encode } from './codec';
import { Transport, TransportEvents, openChild, openSocket } from './transport';
import { PathMapping, wslMapping } from './wslPaths';
import { EventsReplayParams, HelloParams, HelloResult, ReplayResult } from './types';

/** Linux keeps 107 bytes of a socket path; Node truncates longer ones silently. */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'darwin' ? 103 : 107;

export type ConnectionState = 'connecting' | 'connected' | 'disconnected' | 'stopped';

/** An error answer from the daemon, or the connection going away under a request. */
export class HubError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'HubError';
  }
}

/** The connection went away before the answer came. */
export const DISCONNECTED = -32000;

export interface HubClientOptions {
  /** Finds the socket path; throws an Error saying what to do when it cannot. */
  resolveSocket(): Promise<string>;
  /**
   * The child process to reach the daemon through instead of the socket (`parley attach --stdio`), read at each
   * connection; undefined for the socket. Throws an Error saying what to fix when its setting is wrong.
   */
  attach?(): { argv: string[]; why: string; wslDistro?: string } | undefined;
  /** The environment a child of `attach` runs with (PARLEY_NO_SPAWN=1 in it when the user does not want a daemon started). */
  attachEnv?(): NodeJS.ProcessEnv;
  /** The hello parameters, read at each connection (workspace folders change). */
  hello(): HelloParams;
  /** Starts a daemon when none answers; returns whether it started one. */
  startDaemon?(socket: string): Promise<boolean>;
  log(line: string): void;
  onState?(state: ConnectionState, detail: string): void;
  /** A notification, in order; during catch-up only those the state does not hold yet. */
  onNotification(method: string, params: unknown): void;
  /** A request from the daemon (selection/get); the value is the result. */
  onRequest(method: string, params: unknown): Promise<unknown>;
  /** Called after each hello, before notifications flow again. `fresh`: fetch the whole state and replace what is shown. */
  onConnected(hello: HelloResult, fresh: boolean): Promise<void>;
  minDelayMs?: number;
  maxDelayMs?: number;
  /** How long to wait for the hello answer. */
  helloTimeoutMs?: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** Whether a connect error means nobody is listening (so a daemon may be started). */
function nobodyListening(error: NodeJS.ErrnoException): boolean {
  return error.code === 'ENOENT' || error.code === 'ECONNREFUSED';
}

/** Tells a child `parley attach` not to start a daemon; WSLENV makes wsl.exe pass the variable on into WSL. */
export function withoutSpawning(env: NodeJS.ProcessEnv): void {
  env.PARLEY_NO_SPAWN = '1';
  const shared = (env.WSLENV ?? '').split(':').filter((name) => name !== '');
  if (!shared.includes('PARLEY_NO_SPAWN')) env.WSLENV = [...shared, 'PARLEY_NO_SPAWN'].join(':');
}

export class HubClient {
  private socket: Transport | undefined;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private state: ConnectionState = 'stopped';
  private delay: number;
  private timer: NodeJS.Timeout | undefined;
  /** The daemon run the last seen `seq` belongs to (hello's `instance`). */
  private instance: string | undefined;
  private seq = 0;
  /** Notifications that arrive while catching up, applied after it. */
  private held: Message[] | undefined;
  private socketPath: string | undefined;
  /** How paths are rewritten on this connection (a Windows window on a daemon in WSL); undefined: as they are. */
  private paths: PathMapping | undefined;
  private startedDaemon = false;
  private connections = 0;
  /** The hello answer of the live connection. */
  helloResult: HelloResult | undefined;

  constructor(private readonly options: HubClientOptions) {
    this.delay = options.minDelayMs ?? 100;
  }

  get connectionState(): ConnectionState {
    return this.state;
  }

  get path(): string | undefined {
    return this.socketPath;
  }

  /** Starts connecting, and keeps reconnecting until stop(). */
  start(): void {
    if (this.state !== 'stopped') return;
    this.setState('connecting', 'connecting');
    void this.connect();
  }

  /** Drops the connection and connects again at once, looking the socket up again and allowing one more daemon start. */
  restart(): void {
    this.stop();
    this.socketPath = undefined;
    this.startedDaemon = false;
    this.delay = this.options.minDelayMs ?? 100;
    this.start();
  }

  stop(): void {
    this.state = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    socket?.destroy();
    this.failPending('the connection was closed');
    this.options.onState?.('stopped', 'stopped');
  }

  /** Sends a request; resolves with its result, rejects with a HubError. */
  request<T>(method: string, params?: unknown): Promise<T> {
    const socket = this.socket;
    if (!socket || this.state !== 'connected') {
      return Promise.reject(new HubError(DISCONNECTED, 'not connected to the Parley daemon'));
    }
    return this.send<T>(socket, method, params);
  }

  /** Sends a notification; dropped when not connected (the state is re-sent after each hello). */
  notify(method: string, params: unknown): void {
    if (this.socket && this.state === 'connected') this.socket.write(encode({ method, params: this.toDaemon(params) }));
  }

  private send<T>(socket: Transport, method: string, params?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      socket.write(encode({ id, method, params: this.toDaemon(params ?? null) }));
    });
  }

  private setState(state: ConnectionState, detail: string): void {
    this.state = state;
    this.options.onState?.(state, detail);
  }

  private failPending(why: string): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new HubError(DISCONNECTED, why));
  }

  private async connect(): Promise<void> {
    if (this.state === 'stopped') return;
    let attach: { argv: string[]; why: string; wslDistro?: string } | undefined;
    try {
      attach = this.options.attach?.();
    } catch (error) {
      this.lost(error instanceof Error ? error.message : String(error));
      return;
    }
    if (attach) {
      const where = attach.argv.join(' ');
      this.paths = attach.wslDistro ? wslMapping(attach.wslDistro) : undefined;
      if (attach.wslDistro) this.options.log(`paths are rewritten between \\\\wsl.localhost\\${attach.wslDistro}\\… and WSL's /…`);
      this.socketPath = undefined;
      this.options.log(`reaching the daemon through ${where}, chosen by ${attach.why}`);
      // As over the socket, a daemon is started once (until restart()): the first child may start one, later ones
      // only reconnect, so a daemon stopped on purpose stays stopped until something else starts it.
      const env = { ...(this.options.attachEnv?.() ?? process.env) };
      if (this.startedDaemon) withoutSpawning(env);
      this.startedDaemon = true;
      this.open(where, (events) => openChild(attach.argv, env, events, this.options.log), undefined);
      return;
    }
    let path: string;
    try {
      path = this.socketPath ?? (await this.options.resolveSocket());
    } catch (error) {
      this.lost(error instanceof Error ? error.message : String(error));
      return;
    }
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
      this.lost(`the socket path ${path} is longer than ${MAX_SOCKET_PATH_BYTES} bytes; set PARLEY_SOCKET (or the parley.socketPath setting) to a shorter path`);
      return;
    }
    this.socketPath = path;
    this.paths = undefined;
    this.open(path, (events) => openSocket(path, events), path);
  }

  /** Opens one connection: `socketPath` is set for the socket, where nobody listening may start a daemon. */
  private open(where: string, openTransport: (events: TransportEvents) => Transport, socketPath: string | undefined): void {
    const decoder = new LineDecoder();
    let helloDone = false;
    // Node emits a socket's and a child's events asynchronously, never before openTransport returns.
    const socket: Transport = openTransport({
      onOpen: () => {
        this.options.log(`connected to ${where}; saying hello`);
        void this.hello(socket).then(
          () => {
            helloDone = true;
          },
          (error: Error) => {
            this.options.log(`hello failed: ${error.message}`);
            this.drop(socket, `the daemon refused hello: ${error.message}`);
          },
        );
      },
      onData: (chunk) => {
        let lines: string[];
        try {
          lines = decoder.push(chunk);
        } catch (error) {
          this.drop(socket, (error as Error).message);
          return;
        }
        for (const line of lines) this.receive(socket, line);
      },
      onError: (error) => {
        if (this.socket !== socket) return;
        if (!helloDone && socketPath !== undefined && nobodyListening(error)) {
          void this.noDaemon(socket, socketPath, error);
          return;
        }
        this.drop(socket, error.message);
      },
      onClose: (why) => {
        if (this.socket === socket) this.drop(socket, why);
      },
    });
    this.socket = socket;
  }

  /** Nobody listens: start a daemon (once) and try again soon, else wait with back-off. */
  private async noDaemon(socket: Transport, path: string, error: NodeJS.ErrnoException): Promise<void> {
    this.socket = undefined;
    socket.destroy();
    this.failPending('the daemon went away');
    if (!this.startedDaemon && this.options.startDaemon) {
      this.startedDaemon = true;
      let started = false;
      try {
        started = await this.options.startDaemon(path);
      } catch (startError) {
        this.options.log(`could not start the daemon: ${(startError as Error).message}`);
      }
      if (started) {
        this.options.log(`no daemon answered at ${path}; started one`);
        this.delay = this.options.minDelayMs ?? 100;
      }
    }
    this.lost(`no Parley daemon is running at ${path} (${error.code ?? error.message})`);
  }

  private async hello(socket: Transport): Promise<void> {
    const params = this.options.hello();
    const timeoutMs = this.options.helloTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    // Notifications can follow the hello answer at once: hold them until caught up.
    this.held = [];
    let result: HelloResult;
    try {
      result = await Promise.race([this.send<HelloResult>(socket, 'hello', params), timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (this.socket !== socket) return;
    this.helloResult = result;
    this.connections += 1;
    this.delay = this.options.minDelayMs ?? 100;
    this.state = 'connected';
    this.options.log(
      `hello: daemon ${result.version} (pid ${result.pid}, connection ${result.connection_id}, instance ${result.instance}, seq ${result.seq})`,
    );
    let cutoff = result.seq;
    try {
      if (this.instance !== undefined) {
        const replay = await this.send<ReplayResult>(socket, 'events/replay', { after: this.seq, instance: this.instance } satisfies EventsReplayParams);
        cutoff = replay.seq;
        if (replay.complete) {
          this.options.log(`replaying ${replay.events.length} event(s) missed since seq ${this.seq}`);
          await this.options.onConnected(result, false);
          for (const event of replay.events) this.dispatch(event.method, event.params);
        } else {
          this.options.log('the daemon restarted or forgot what was missed: fetching the whole state');
          await this.options.onConnected(result, true);
        }
      } else {
        await this.options.onConnected(result, true);
      }
    } finally {
      this.instance = result.instance;
      this.seq = Math.max(cutoff, this.instance === result.instance ? this.seq : 0);
      const held = this.held ?? [];
      this.held = undefined;
      for (const message of held) {
        const seq = (message.params as { seq?: number } | undefined)?.seq ?? Infinity;
        if (seq > cutoff) this.dispatch(message.method ?? '', message.params);
      }
    }
    this.setState('connected', `connected to daemon ${result.version} (pid ${result.pid})`);
  }

  private dispatch(method: string, params: unknown): void {
    const seq = (params as { seq?: number } | undefined)?.seq;
    if (typeof seq === 'number' && seq > this.seq) this.seq = seq;
    try {
      this.options.onNotification(method, params);
    } catch (error) {
      this.options.log(`handling ${method} failed: ${(error as Error).stack ?? error}`);
    }
  }

  private toDaemon(value: unknown): unknown {
    return this.paths ? this.paths.toDaemon(value) : value;
  }

  private receive(socket: Transport, line: string): void {
    const decoded = decode(line);
    const message = decoded && this.paths ? { ...decoded, params: this.paths.toWindow(decoded.params), result: this.paths.toWindow(decoded.result) } : decoded;
    if (!message) {
      this.options.log(`ignoring a line that is not JSON-RPC: ${line.slice(0, 200)}`);
      return;
    }
    if (message.method !== undefined && message.id !== undefined && message.id !== null) {
      void this.answer(socket, message);
    } else if (message.method !== undefined) {
      if (this.held) this.held.push(message);
      else this.dispatch(message.method, message.params);
    } else if (typeof message.id === 'number') {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.error) pending.reject(new HubError(message.error.code, message.error.message));
      else pending.resolve(message.result);
    } else if (message.error) {
      this.options.log(`the daemon reported an error: ${message.error.message}`);
    }
  }

  private async answer(socket: Transport, message: Message): Promise<void> {
    let reply: Message;
    try {
      const result = await this.options.onRequest(message.method ?? '', message.params);
      reply = { id: message.id, result: this.toDaemon(result ?? null) };
    } catch (error) {
      reply = { id: message.id, error: { code: -32601, message: (error as Error).message } };
    }
    if (this.socket === socket) socket.write(encode(reply));
  }

  private drop(socket: Transport, why: string): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    socket.destroy();
    this.helloResult = undefined;
    this.held = undefined;
    this.failPending('the daemon went away');
    this.lost(why);
  }

  /** Waits with back-off (100 ms doubling to 5 s) and tries again. */
  private lost(why: string): void {
    if (this.state === 'stopped') return;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.options.maxDelayMs ?? 5000);
    this.options.log(`${why}; retrying in ${wait} ms`);
    this.setState('disconnected', why);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state === 'stopped') return;
      this.state = 'connecting';
      void this.connect();
    }, wait);
  }

  /** How many times a hello has succeeded (for the log and tests). */
  get connectedTimes(): number {
    return this.connections;
  }
}
