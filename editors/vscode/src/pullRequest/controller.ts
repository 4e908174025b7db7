// The window's GitHub pull request: a status bar item while one of its folders is linked (pr/status after each hello, when the window gets focus, and after threads change), "Pull Review Comments from GitHub" (pr/pull), "Push to GitHub Pull Request" (a dry run of pr/push shown for the person to choose how it goes, then pr/push with that event), and the item's menu (pull, push, open on GitHub). The window's GITHUB_TOKEN goes with a pull or a push, as the CLI's does, for a daemon that has no token of its own.

import * as vscode from 'vscode';
import { HubClient } from '../hub/client';
import { LinkedPr, PrPullParams, PrPushParams, PrStatusParams, PrStatusResult } from '../hub/types';
import { Log } from '../log';
import { isWebAddress } from '../webAddress';
import { PUSH_CHOICES, pulledMessage, pushPlan, pushedMessage, prStatus, sendsAnything } from './model';

/** A linked workspace: its git root and its pull request, as last read. */
interface Linked {
  workspace: string;
  linked: LinkedPr;
}

/** The window's GITHUB_TOKEN, when it has one. */
function windowToken(): string | undefined {
  const token = process.env.GITHUB_TOKEN;
  return token !== undefined && token.trim() !== '' ? token : undefined;
}

export class PullRequestController implements vscode.Disposable {
  private readonly status: vscode.StatusBarItem;
  private linked: Linked[] = [];
  /** Counts the refreshes, so that only the newest one sets the item. */
  private refreshes = 0;
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly hub: HubClient,
    private readonly log: Log,
    private readonly folders: () => string[],
  ) {
    this.status = vscode.window.createStatusBarItem('parley.pullRequest', vscode.StatusBarAlignment.Left, 47);
    this.status.name = 'Parley pull request';
    this.status.command = 'parley.pr.menu';
  }

  /** Reads the link of each of the window's folders and shows the first linked one; hides the item when none is. */
  async refresh(): Promise<void> {
    const refresh = ++this.refreshes;
    const found: Linked[] = [];
    for (const folder of this.folders()) {
      try {
        const result = await this.hub.request<PrStatusResult>('pr/status', { workspace: folder } satisfies PrStatusParams);
        if (result.linked && !found.some((f) => f.workspace === result.workspace)) found.push({ workspace: result.workspace, linked: result.linked });
      } catch (error) {
        // A folder that is no git repository has no link; a daemon older than pull requests refuses the method.
        this.log.trace('pr-status-failed', { folder, message: (error as Error).message });
      }
    }
    if (refresh !== this.refreshes) return;
    this.linked = found;
    this.show();
  }

  /** A refresh soon: threads changing in a burst read the status once. */
  refreshSoon(): void {
    if (this.pending !== undefined) clearTimeout(this.pending);
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.refresh();
    }, 300);
  }

  private show(): void {
    const first = this.linked[0];
    if (!first) {
      this.status.hide();
      void vscode.commands.executeCommand('setContext', 'parley.prLinked', false);
      this.log.trace('pr-status', { linked: false });
      return;
    }
    const { text, tooltip } = prStatus(first.linked, new Date());
    this.status.text = text;
    this.status.tooltip = tooltip;
    this.status.show();
    void vscode.commands.executeCommand('setContext', 'parley.prLinked', true);
    this.log.trace('pr-status', { linked: true, text });
  }

  /** The workspace a command acts on: the linked one (a pick when several are), else the window's first folder (the daemon then says it is not linked, and how to link it). */
  private async target(action: string): Promise<string | undefined> {
    if (this.linked.length === 1) return this.linked[0].workspace;
    if (this.linked.length > 1) {
      const picked = await vscode.window.showQuickPick(
        this.linked.map((l) => ({ label: l.linked.pull_request, description: l.workspace, workspace: l.workspace })),
        { title: `${action}: which pull request?`, ignoreFocusOut: true },
      );
      return picked?.workspace;
    }
    const folder = this.folders()[0];
    if (folder === undefined) void vscode.window.showWarningMessage('Parley: open the folder of a repository linked to a pull request (`parley pr link` in it)');
    return folder;
  }

  /** Parley: Pull Review Comments from GitHub. */
  async pull(): Promise<void> {
    const workspace = await this.target('Pull');
    if (workspace === undefined) return;
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Parley: pulling review comments from GitHub…' },
        () => this.hub.request<PrStatusResult>('pr/pull', { workspace, token: windowToken() } satisfies PrPullParams),
      );
      if (result.linked && result.pulled) {
        const message = pulledMessage(result.linked, result.pulled);
        this.log.info(message);
        void vscode.window.showInformationMessage(`Parley: ${message}`);
      }
    } catch (error) {
      this.failed('pulling', error);
    } finally {
      await this.refresh();
    }
  }

  /** Parley: Push to GitHub Pull Request: what would go, how to send it, then what went. */
  async push(): Promise<void> {
    const workspace = await this.target('Push');
    if (workspace === undefined) return;
    const token = windowToken();
    try {
      const dry = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Parley: reading what would go to GitHub…' },
        () => this.hub.request<PrStatusResult>('pr/push', { workspace, dry_run: true, token } satisfies PrPushParams),
      );
      const pushed = dry.pushed;
      const pullRequest = dry.linked?.pull_request ?? 'the pull request';
      if (!pushed) return;
      const plan = pushPlan(pushed);
      this.log.trace('pr-push-preview', { plan });
      const title = sendsAnything(pushed) ? `Push to ${pullRequest}?` : `Nothing new to push to ${pullRequest}`;
      const choices = sendsAnything(pushed) ? PUSH_CHOICES : PUSH_CHOICES.filter((c) => c.event === 'approve');
      const picked = await vscode.window.showInformationMessage(title, { modal: true, detail: plan }, ...choices.map((c) => c.label));
      const choice = choices.find((c) => c.label === picked);
      if (!choice) return;
      const done = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Parley: pushing to ${pullRequest}…` },
        () => this.hub.request<PrStatusResult>('pr/push', { workspace, event: choice.event, token } satisfies PrPushParams),
      );
      if (!done.pushed) return;
      const message = pushedMessage(done.linked?.pull_request ?? pullRequest, done.pushed);
      this.log.info(message);
      const url = done.pushed.review_url;
      const open = url ? 'Open Review on GitHub' : undefined;
      const answer = await vscode.window.showInformationMessage(`Parley: ${message}`, ...(open ? [open] : []));
      if (answer === open && url && isWebAddress(url)) await vscode.env.openExternal(vscode.Uri.parse(url));
    } catch (error) {
      this.failed('pushing', error);
    } finally {
      await this.refresh();
    }
  }

  /** The status bar item's menu. */
  async menu(): Promise<void> {
    const first = this.linked[0];
    const items = [
      { label: '$(cloud-download) Pull Review Comments', description: 'bring the pull request\'s threads in', run: () => this.pull() },
      { label: '$(cloud-upload) Push…', description: 'see what would go, then send it', run: () => this.push() },
      ...this.linked.map((l) => ({ label: `$(github) Open ${l.linked.pull_request} on GitHub`, description: l.linked.url, run: () => (isWebAddress(l.linked.url) ? vscode.env.openExternal(vscode.Uri.parse(l.linked.url)) : undefined) })),
    ];
    const picked = await vscode.window.showQuickPick(items, { title: first ? `Parley: ${first.linked.pull_request}` : 'Parley: pull request' });
    await picked?.run();
  }

  private failed(doing: string, error: unknown): void {
    const message = (error as Error).message;
    this.log.info(`${doing} the pull request failed: ${message}`);
    void vscode.window.showErrorMessage(`Parley: ${doing} failed: ${message}`);
  }

  dispose(): void {
    if (this.pending !== undefined) clearTimeout(this.pending);
    this.status.dispose();
  }
}
