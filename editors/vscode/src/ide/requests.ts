// The daemon's questions to this window's language servers (docs/protocol.md: symbols/find, diagnostics/get), answered here for the hub client.

import * as vscode from 'vscode';
import { DiagnosticsGetParams, SymbolsFindParams } from '../hub/types';
import { Log } from '../log';
import { DiagnosticsWatch } from './diagnostics';
import { findSymbols } from './symbols';

export class IdeRequests implements vscode.Disposable {
  private readonly diagnostics = new DiagnosticsWatch();

  constructor(private readonly log: Log) {}

  handles(method: string): boolean {
    return method === 'symbols/find' || method === 'diagnostics/get';
  }

  async answer(method: string, params: unknown): Promise<unknown> {
    if (method === 'symbols/find') {
      const asked = params as SymbolsFindParams;
      const found = await findSymbols(asked);
      this.log.info(`an agent asked where ${asked.name} is (${asked.kind}): ${found.places.length} place(s)`);
      return found;
    }
    const asked = params as DiagnosticsGetParams;
    const answer = await this.diagnostics.answer(asked);
    const stale = answer.files.filter((f) => f.stale).length;
    this.log.info(`an agent asked for the problems of ${asked.path ?? 'the workspace'}: ${answer.files.length} file(s)${stale ? `, ${stale} stale` : ''}`);
    return answer;
  }

  dispose(): void {
    this.diagnostics.dispose();
  }
}
