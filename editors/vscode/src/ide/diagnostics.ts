// Answers the daemon's diagnostics/get with the problems this window's language servers and linters report, for one file (opened if it is not, so its servers analyse it) or every file of the workspace they have problems for. It waits for them to settle first: until no problem or text of the files asked about has changed for a moment (SETTLE_MS), and an open document that is not dirty holds what is on disk. A file that has not settled by CAP_MS is answered `stale`, so an agent never reads old problems as clean: among them a file no editor tab shows, which some servers (TypeScript's) never analyse. Each file says what it was computed on: the document's version, whether it is dirty, and the SHA-256 of its text (the daemon compares it with the disk).

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { DiagnosticsGetParams, DiagnosticsGetResult, FileDiagnostics, WireDiagnostic } from '../hub/types';
import { inside } from './symbols';

/** How long the problems and texts must be still to count as settled. */
const SETTLE_MS = 750;
/** The longest the window waits before it answers `stale`. */
const CAP_MS = 5000;
/** A change this recent with no problems published since leaves a file unsettled. */
const RECENT_MS = CAP_MS;
const POLL_MS = 50;

const SEVERITIES: Record<vscode.DiagnosticSeverity, WireDiagnostic['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'information',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** When each file's text and problems last changed, to tell settled problems from ones still coming. */
export class DiagnosticsWatch implements vscode.Disposable {
  private readonly textChanged = new Map<string, number>();
  private readonly problemsChanged = new Map<string, number>();
  private readonly disposables: vscode.Disposable[];

  constructor() {
    const text = (uri: vscode.Uri) => this.textChanged.set(uri.toString(), Date.now());
    this.disposables = [
      vscode.workspace.onDidChangeTextDocument((e) => e.contentChanges.length > 0 && text(e.document.uri)),
      vscode.workspace.onDidOpenTextDocument((d) => text(d.uri)),
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) this.problemsChanged.set(uri.toString(), Date.now());
      }),
    ];
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** Whether `uri`'s problems may still be on their way: its text changed lately (before `asked`, the question) and no problems came since, or it is older than the disk's. */
  private unsettled(uri: vscode.Uri, now: number, asked: number): boolean {
    const key = uri.toString();
    const text = this.textChanged.get(key) ?? 0;
    const problems = this.problemsChanged.get(key) ?? 0;
    if (now - Math.max(text, problems) < SETTLE_MS) return true;
    // Opened or edited shortly before the question, and analysed since? (A document no editor tab shows may never be.)
    if (text > problems && text > asked - RECENT_MS) return true;
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    return document !== undefined && !document.isDirty && !matchesDisk(document);
  }

  /** Waits until none of `uris()` is unsettled, or the cap; the ones still unsettled then. */
  async settle(uris: () => vscode.Uri[]): Promise<Set<string>> {
    const started = Date.now();
    for (;;) {
      const now = Date.now();
      const pending = uris().filter((u) => this.unsettled(u, now, started));
      if (pending.length === 0 || now - started >= CAP_MS) return new Set(pending.map((u) => u.toString()));
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async answer(params: DiagnosticsGetParams): Promise<DiagnosticsGetResult> {
    const ours = (uri: vscode.Uri) => uri.scheme === 'file' && inside(params.workspace, uri.fsPath);
    let uris: () => vscode.Uri[];
    if (params.path !== undefined) {
      const uri = vscode.Uri.file(params.path);
      // Opening it makes its language servers analyse it; it is not shown.
      await vscode.workspace.openTextDocument(uri);
      uris = () => [uri];
    } else {
      uris = () => {
        const seen = new Map<string, vscode.Uri>();
        for (const [uri] of vscode.languages.getDiagnostics()) if (ours(uri)) seen.set(uri.toString(), uri);
        for (const d of vscode.workspace.textDocuments) if (ours(d.uri) && !d.isClosed) seen.set(d.uri.toString(), d.uri);
        return [...seen.values()];
      };
    }
    const stale = await this.settle(uris);
    const files: FileDiagnostics[] = [];
    for (const uri of uris()) {
      const problems = vscode.languages.getDiagnostics(uri);
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      // Every file asked about by name is answered; of the rest, those with problems.
      if (problems.length === 0 && params.path === undefined) continue;
      files.push({
        path: uri.fsPath,
        version: document?.version ?? 0,
        dirty: document?.isDirty ?? false,
        ...(document ? { sha256: sha256(document.getText()) } : {}),
        ...(stale.has(uri.toString()) ? { stale: true } : {}),
        diagnostics: problems.map(toWire),
      });
    }
    return { files };
  }
}

function matchesDisk(document: vscode.TextDocument): boolean {
  try {
    const disk = fs.readFileSync(document.uri.fsPath, 'utf8').replace(/^\uFEFF/, '');
    const text = document.getText();
    return disk === text || disk.replace(/\r\n/g, '\n') === text.replace(/\r\n/g, '\n');
  } catch {
    return true;
  }
}

function toWire(d: vscode.Diagnostic): WireDiagnostic {
  const code = typeof d.code === 'object' ? d.code.value : d.code;
  return {
    severity: SEVERITIES[d.severity] ?? 'error',
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined ? { code: String(code) } : {}),
    message: d.message,
    range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
  };
}
