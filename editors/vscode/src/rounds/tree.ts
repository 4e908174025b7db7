// The "Parley Review" view in the Explorer: the files of the round being reviewed with their status and drafts; clicking one opens its diff. Files the agent did not change since the previous round are folded under a group of their own.

import * as vscode from 'vscode';
import { Draft, RoundDetail, RoundFile } from '../hub/types';
import { DiffMode, fileDescription, groupFiles, isPlan, reviewHeading } from './model';

export const VIEW_ID = 'parley.roundReview';

type Node = { kind: 'file'; file: RoundFile; unchanged: boolean } | { kind: 'unchanged'; files: RoundFile[]; since: number };

export class RoundTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private detail: RoundDetail | undefined;
  private mode: DiffMode = 'whole';
  private drafts: Draft[] = [];
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<Node>;

  constructor() {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: false });
    this.view.message = 'No review open. Parley: Review Agent Changes opens one an agent asked for.';
  }

  set(detail: RoundDetail | undefined, mode: DiffMode, drafts: Draft[]): void {
    this.detail = detail;
    this.mode = mode;
    this.drafts = drafts;
    if (detail) {
      const heading = reviewHeading(detail, mode);
      this.view.description = heading.description;
      this.view.message = heading.message;
    } else {
      this.view.description = undefined;
      this.view.message = 'No review open. Parley: Review Agent Changes opens one an agent asked for.';
    }
    this.changed.fire(undefined);
  }

  setDrafts(drafts: Draft[]): void {
    this.drafts = drafts;
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    const detail = this.detail;
    if (!detail) return [];
    if (node?.kind === 'unchanged') return node.files.map((file) => ({ kind: 'file', file, unchanged: true }));
    if (node) return [];
    const { changed, unchanged } = groupFiles(detail);
    const nodes: Node[] = changed.map((file) => ({ kind: 'file', file, unchanged: false }));
    if (unchanged.length > 0 && detail.previous_round !== null) nodes.push({ kind: 'unchanged', files: unchanged, since: detail.previous_round });
    return nodes;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'unchanged') {
      const item = new vscode.TreeItem(`Unchanged since ${this.detail && isPlan(this.detail) ? 'plan' : 'round'} ${node.since}`, vscode.TreeItemCollapsibleState.Collapsed);
      item.description = `${node.files.length}`;
      item.tooltip = 'Files the agent did not change since you last reviewed them';
      item.iconPath = new vscode.ThemeIcon('fold');
      item.contextValue = 'round-unchanged';
      return item;
    }
    const file = node.file;
    const slash = file.path.lastIndexOf('/');
    const item = new vscode.TreeItem(file.path.slice(slash + 1), vscode.TreeItemCollapsibleState.None);
    const drafts = this.drafts.filter((d) => d.path === file.path).length;
    const plan = this.detail !== undefined && isPlan(this.detail);
    const status = plan ? (file.status === 'added' ? 'the plan' : 'the plan, revised') : fileDescription(file);
    const parts = [slash > 0 ? file.path.slice(0, slash) : '', node.unchanged ? 'unchanged' : status, drafts > 0 ? (drafts === 1 ? '1 draft' : `${drafts} drafts`) : ''];
    item.description = parts.filter((p) => p !== '').join(' · ');
    item.tooltip = `${file.path}: ${status}${this.mode === 'since' && !file.changed_since_previous ? ', unchanged since the previous round' : ''}`;
    item.iconPath = new vscode.ThemeIcon(
      plan ? 'checklist' : file.status === 'added' ? 'diff-added' : file.status === 'deleted' ? 'diff-removed' : file.status === 'renamed' ? 'diff-renamed' : 'diff-modified',
      node.unchanged ? new vscode.ThemeColor('disabledForeground') : undefined,
    );
    item.contextValue = 'round-file';
    item.command = { command: 'parley.round.openFile', title: 'Open Diff', arguments: [file.path] };
    return item;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
