// Newline-delimited JSON-RPC framing for the hub socket (docs/protocol.md §2): splits the byte stream into lines and encodes messages. Imports nothing from vscode.

/** The daemon's limit on one line; the client holds itself to the same one. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** A JSON-RPC 2.0 message as it travels on the socket. */
export interface Message {
  jsonrpc?: '2.0';
  id?: number | string | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * Collects chunks read from the socket and hands back whole lines.
 * Chunks are bytes: a multi-byte UTF-8 character can be split between two reads,
 * so lines are cut on the byte `\n` and decoded only once complete.
 */
export class LineDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** Adds a chunk; returns the complete lines it finished, without their `\n` (and `\r`). */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      const whole = this.pending.length > 0 ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      let text = whole.toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (text.trim() !== '') lines.push(text);
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > MAX_LINE_BYTES) {
        this.pending = [];
        this.pendingBytes = 0;
        throw new Error(`the daemon sent a line longer than ${MAX_LINE_BYTES} bytes`);
      }
      // Copy: the socket may reuse the chunk's memory.
      this.pending.push(Buffer.from(rest));
    }
    return lines;
  }
}

/** One message as one line, ready to write. */
export function encode(message: Message): string {
  return JSON.stringify({ ...message, jsonrpc: '2.0' }) + '\n';
}

/** Parses one line; `undefined` when it is not a JSON-RPC object (logged by the caller). */
export function decode(line: string): Message | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as Message;
}
