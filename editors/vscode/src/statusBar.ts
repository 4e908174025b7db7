// The status bar item: whether the window is connected to the daemon, how many open threads it shows, and whether a review is waiting to be read. Clicking it shows the review, or the log when disconnected.

import * as vscode from 'vscode';
import { ConnectionState } from './hub/client';
import { countLabel } from './threads/model';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private state: ConnectionState = 'connecting';
  private detail = '';
  private threads = 0;
  private reviewWaiting = false;

  constructor() {
    this.item = vscode.window.createStatusBarItem('parley.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Parley';
    this.render();
    this.item.show();
  }

  setConnection(state: ConnectionState, detail: string): void {
    this.state = state;
    this.detail = detail;
    this.render();
  }

  setThreads(open: number): void {
    this.threads = open;
    this.render();
  }

  setReviewWaiting(waiting: boolean): void {
    this.reviewWaiting = waiting;
    void vscode.commands.executeCommand('setContext', 'parley.reviewWaiting', waiting);
    this.render();
  }

  private render(): void {
    const item = this.item;
    if (this.state === 'connected') {
      const review = this.reviewWaiting ? ' $(preview) review waiting' : '';
      item.text = `$(comment-discussion) Parley: ${countLabel(this.threads)}${review}`;
      item.tooltip = `Parley: ${this.detail}. ${countLabel(this.threads)} open${this.reviewWaiting ? '; a review is waiting: click to read it' : ''}.`;
      item.command = 'parley.showReview';
      item.backgroundColor = undefined;
    } else if (this.state === 'stopped') {
      item.text = '$(debug-disconnect) Parley: off';
      item.tooltip = 'Parley is not connected. Click for the log; "Parley: Reconnect to the Daemon" connects again.';
      item.command = 'parley.showLog';
      item.backgroundColor = undefined;
    } else {
      item.text = this.state === 'connecting' ? '$(sync~spin) Parley: connecting' : '$(debug-disconnect) Parley: disconnected';
      item.tooltip = `Parley: ${this.detail}. Retrying in the background; click for the log.`;
      item.command = 'parley.showLog';
      item.backgroundColor = this.state === 'disconnected' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
