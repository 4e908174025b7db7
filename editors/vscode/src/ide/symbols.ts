// Answers the daemon's symbols/find with what this window's language servers know: the workspace symbol provider's hits for a definition (as they come, fuzzy ones too: the daemon keeps exact names first), and for references the exact-name definitions first, then the reference provider's hits at each of them.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { SymbolPlace, SymbolsFindParams, SymbolsFindResult } from '../hub/types';

/** The most definitions whose references are asked for: a name defined in more places is ambiguous anyway. */
const MAX_DEFINITIONS_FOLLOWED = 5;

/** A qualified name's last part: `Cart.total` and `Cart::total` are looked for as `total`. */
export function lastPart(name: string): string {
  return name.split(/[.:#]/).filter((part) => part !== '').pop()?.trim() ?? name.trim();
}

/** A symbol's name as a server gives it, without a signature (`total()`) or qualifier. */
export function plainName(given: string): string {
  return lastPart(given.split('(')[0]);
}

export function inside(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function place(uri: vscode.Uri, range: vscode.Range, name: string, container?: string): SymbolPlace {
  return {
    path: uri.fsPath,
    range: { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } },
    name,
    ...(container ? { container } : {}),
  };
}

/** Where `name` is written inside a definition's range (the servers give the whole declaration), for the reference provider. */
async function namePosition(symbol: vscode.SymbolInformation, word: string): Promise<vscode.Position> {
  const range = symbol.location.range;
  try {
    const document = await vscode.workspace.openTextDocument(symbol.location.uri);
    const text = document.getText(range);
    const found = new RegExp(`(?<![\\w$])${word.replace(/[$]/g, '\\$')}(?![\\w$])`).exec(text);
    if (found) return document.positionAt(document.offsetAt(range.start) + found.index);
  } catch {
    // The start of the declaration is the best guess left.
  }
  return range.start;
}

export async function findSymbols(params: SymbolsFindParams): Promise<SymbolsFindResult> {
  const word = lastPart(params.name);
  const symbols = (await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', word)) ?? [];
  const ours = symbols.filter((s) => s.location.uri.scheme === 'file' && inside(params.workspace, s.location.uri.fsPath));
  if (params.kind === 'definition') return { places: ours.map((s) => place(s.location.uri, s.location.range, s.name, s.containerName)) };
  const exact = ours.filter((s) => plainName(s.name) === word).slice(0, MAX_DEFINITIONS_FOLLOWED);
  const places: SymbolPlace[] = [];
  for (const definition of exact) {
    const at = await namePosition(definition, word);
    places.push(place(definition.location.uri, new vscode.Range(at, at.translate(0, word.length)), word, definition.containerName));
    const references = (await vscode.commands.executeCommand<vscode.Location[] | undefined>('vscode.executeReferenceProvider', definition.location.uri, at)) ?? [];
    for (const reference of references) {
      if (reference.uri.scheme === 'file' && inside(params.workspace, reference.uri.fsPath)) places.push(place(reference.uri, reference.range, word));
    }
  }
  return { places };
}
