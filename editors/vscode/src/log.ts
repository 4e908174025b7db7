// The "Parley" output channel (parley.showLog) with the connection log, and timing marks for the benchmark and the end-to-end tests when PARLEY_VSCODE_TRACE names a file.

import * as fs from 'node:fs';
import * as vscode from 'vscode';

export class Log implements vscode.Disposable {
  private readonly channel: vscode.OutputChannel;
  private readonly traceFile: string | undefined;
  private readonly origin = performance.now();

  constructor() {
    this.channel = vscode.window.createOutputChannel('Parley');
    const trace = process.env.PARLEY_VSCODE_TRACE;
    this.traceFile = trace !== undefined && trace !== '' ? trace : undefined;
  }

  info(line: string): void {
    this.channel.appendLine(`${new Date().toISOString()} ${line}`);
    this.trace('log', { line });
  }

  show(): void {
    this.channel.show(true);
  }

  /**
   * Records a timing mark (milliseconds since activation began) when tracing is on.
   * Appends one JSON line per mark, which the tests and the benchmark read.
   */
  trace(mark: string, data: Record<string, unknown> = {}): void {
    if (!this.traceFile) return;
    const line = JSON.stringify({ mark, ms: performance.now() - this.origin, at: Date.now(), pid: process.pid, ...data }) + '\n';
    try {
      fs.appendFileSync(this.traceFile, line);
    } catch {
      // Tracing must never break the extension.
    }
  }

  dispose(): void {
    this.channel.dispose();
  }
}
