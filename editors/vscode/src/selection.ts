// Answers the daemon's selection/get with what the user has selected: the active editor's selection, or the text selected in the review panel when that is the active view. Also pushes the selection (selection/changed) after it has been still for a moment, for the daemon to fall back on.

import * as vscode from 'vscode';
import { HubClient } from './hub/client';
import { Selection, SelectionChangedParams } from './hub/types';
import { ReviewPanel } from './review/panel';

const PUSH_DELAY_MS = 200;

/** The selection of a text editor, or null when nothing is selected. */
export function editorSelection(editor: vscode.TextEditor | undefined): Selection | null {
  if (!editor) return null;
  const selection = editor.selection;
  const text = editor.document.getText(selection);
  if (text === '') return null;
  return {
    path: editor.document.uri.scheme === 'file' ? editor.document.uri.fsPath : editor.document.uri.toString(),
    text,
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
    language_id: editor.document.languageId,
  };
}

export class SelectionReporter implements vscode.Disposable {
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly hub: HubClient,
    private readonly panel: ReviewPanel,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeTextEditorSelection(() => this.schedulePush()),
      vscode.window.onDidChangeActiveTextEditor(() => this.schedulePush()),
    );
  }

  /** The selection an agent means: the review panel's when it is the active view, else the active editor's. */
  current(): Selection | null {
    const inPanel = this.panel.selection;
    const review = this.panel.displayed;
    if (this.panel.active && inPanel && review) {
      return {
        path: `${review.base_uri} (Parley review, revision ${review.revision})`,
        text: inPanel.text,
        start: { line: inPanel.startLine, character: 0 },
        end: { line: inPanel.endLine, character: 0 },
        language_id: 'markdown',
      };
    }
    return editorSelection(vscode.window.activeTextEditor);
  }

  /** Sends the current selection now (after each hello, as docs/protocol.md §8 asks). */
  push(): void {
    this.hub.notify('selection/changed', { selection: this.current() } satisfies SelectionChangedParams);
  }

  private schedulePush(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.push(), PUSH_DELAY_MS);
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
