// The extension's entry point: connects this window to the Parley daemon as an editor client and wires the surfaces (status bar, review panel, comment threads, selection, terminals, MCP) to the hub client. Activation does no work beyond starting the connection; everything else waits for the daemon's answer.

import * as vscode from 'vscode';
import { exportToTerminals, offerMcpServer } from './agents';
import { bundledProgram, versionNotice } from './bundled';
import { AskingController } from './asking/controller';
import { chooseAttach } from './hub/attachCommand';
import { HubClient, withoutSpawning } from './hub/client';
import { resolveSocketPath, spawnForbidden, startDaemon } from './hub/socketPath';
import { IdeRequests } from './ide/requests';
import { AgentsChanged, FeedbackChanged, FocusParams, HelloParams, Review, ReviewUpdated, RoundChanged, Thread, WaitingRound, WalkthroughUpdated } from './hub/types';
import { Log } from './log';
import { ignoredWorkspaceValue, programSetting } from './programSettings';
import { PullRequestController } from './pullRequest/controller';
import { ReviewPanel, ReviewStore } from './review/panel';
import { RoundsController } from './rounds/controller';
import { SelectionReporter } from './selection';
import { StatusBar } from './statusBar';
import { ThreadsController } from './threads/controller';
import { WalkthroughController } from './walkthrough/controller';

/** The folders of this window that the daemon can see: local files only. */
function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

function settings(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('parley');
}

/** The `parley` command line: the user's setting, never a workspace's (src/programSettings.ts), else the one this extension carries (src/bundled.ts), else `parley` on PATH. */
function executable(log: Log, extensionPath: string): string {
  const inspected = settings().inspect<string>('executable');
  const ignored = ignoredWorkspaceValue(inspected);
  if (ignored !== undefined) log.info(`ignoring parley.executable = ${JSON.stringify(ignored)} from the workspace's settings: set it in your user settings`);
  return programSetting(inspected, bundledProgram(extensionPath, 'parley') ?? 'parley');
}

export function activate(context: vscode.ExtensionContext): void {
  const log = new Log();
  log.trace('activate');
  const version = String((context.extension.packageJSON as { version?: string }).version ?? '0.0.0');
  // One id per window: each window has its own extension host, so its pid tells windows apart.
  const editorId = `vscode-${process.pid}`;
  const status = new StatusBar();
  const store = new ReviewStore();
  const ide = new IdeRequests(log);
  context.subscriptions.push(log, status, ide);

  let panel: ReviewPanel | undefined;
  let threads: ThreadsController | undefined;
  let selection: SelectionReporter | undefined;
  let rounds: RoundsController | undefined;
  let asking: AskingController | undefined;
  let walkthroughs: WalkthroughController | undefined;
  let pullRequests: PullRequestController | undefined;

  const hub = new HubClient({
    attach: () => {
      const inspected = settings().inspect<unknown>('attach');
      const ignored = inspected?.workspaceFolderValue ?? inspected?.workspaceValue;
      if (ignored !== undefined) log.info(`ignoring parley.attach = ${JSON.stringify(ignored)} from the workspace's settings: set it in your user settings`);
      const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
      return chooseAttach(inspected, process.platform, folders);
    },
    attachEnv: () => {
      const env = { ...process.env };
      if (!settings().get<boolean>('startDaemon', true)) withoutSpawning(env);
      return env;
    },
    resolveSocket: () => resolveSocketPath(settings().get<string>('socketPath', ''), executable(log, context.extensionPath), process.env, (line) => log.info(line)),
    startDaemon: async (socket) => {
      if (!settings().get<boolean>('startDaemon', true) || spawnForbidden(process.env)) return false;
      return startDaemon(executable(log, context.extensionPath), socket, process.env);
    },
    hello: (): HelloParams => {
      const folders = workspaceFolders();
      return {
        protocol: 1,
        role: 'editor',
        client: { name: 'vscode', version },
        pid: process.pid,
        cwd: folders[0],
        workspaces: folders,
        editor_id: editorId,
        position_encoding: 'utf-16',
      };
    },
    log: (line) => log.info(line),
    onState: (state, detail) => status.setConnection(state, detail),
    onNotification: (method, params) => {
      if (method === 'review/updated') store.apply((params as ReviewUpdated).review, true);
      else if (method === 'feedback/changed') {
        threads?.onChanged(params as FeedbackChanged);
        // What waits to be pushed, and a pull's threads, change with the threads.
        pullRequests?.refreshSoon();
      }
      else if (method === 'round/requested') rounds?.onRequested(params as WaitingRound);
      else if (method === 'round/changed') rounds?.onChanged(params as RoundChanged);
      else if (method === 'agents/changed') asking?.onChanged(params as AgentsChanged);
      else if (method === 'walkthrough/updated') walkthroughs?.onUpdated(params as WalkthroughUpdated);
    },
    onRequest: async (method, params) => {
      if (method === 'selection/get') {
        const current = selection?.current() ?? null;
        log.info(`an agent asked for the selection: ${current ? `${current.path}:${current.start.line + 1}` : 'nothing selected'}`);
        return current;
      }
      if (ide.handles(method)) return ide.answer(method, params);
      throw new Error(`${method} is not supported by this client`);
    },
    onConnected: async (hello, fresh) => {
      const notice = bundledProgram(context.extensionPath, 'parley') ? versionNotice(hello.version, version, hello.executable) : undefined;
      if (notice !== undefined && hub.connectedTimes <= 1) {
        log.info(notice);
        void vscode.window.showInformationMessage(notice);
      }
      if (vscode.window.state.focused) hub.notify('editor/focus', { focused: true } satisfies FocusParams);
      selection?.push();
      if (fresh) {
        const [reviews] = await Promise.all([
          hub.request<{ reviews: Review[] }>('review/get'),
          threads?.resync(),
        ]);
        store.replace(reviews.reviews);
        if (reviews.reviews.length > 0 && !panel?.visible) status.setReviewWaiting(true);
      }
      // Rounds waiting since before this window connected (or while it was away) are told now.
      await rounds?.onConnected().catch((error: Error) => log.info(`reading the rounds waiting for review failed: ${error.message}`));
      // A daemon older than walkthroughs refuses walkthrough/get: the window works without them.
      await walkthroughs?.onConnected().catch((error: Error) => log.info(`reading the walkthroughs failed: ${error.message}`));
      // A daemon without agents (older than asking them) refuses agents/list: the window works without them.
      await asking?.onConnected().catch((error: Error) => log.info(`listing the agents at work failed: ${error.message}`));
      await pullRequests?.refresh();
      log.trace('connected', { fresh, instance: hello.instance, connections: hub.connectedTimes });
    },
  });

  store.useDaemon((method, params) => hub.request(method, params));
  panel = new ReviewPanel(context.extensionUri, store, log, () => status.setReviewWaiting(false));
  threads = new ThreadsController(hub, log);
  selection = new SelectionReporter(hub, panel);
  const author = threads.author.bind(threads);
  rounds = new RoundsController(hub, log, author, workspaceFolders);
  asking = new AskingController(hub, log, threads, workspaceFolders, editorId);
  walkthroughs = new WalkthroughController(hub, log, threads, workspaceFolders, panel);
  pullRequests = new PullRequestController(hub, log, workspaceFolders);
  panel.useWalkthroughs(walkthroughs);
  context.subscriptions.push(panel, threads, selection, rounds, asking, walkthroughs, pullRequests, { dispose: () => hub.stop() });
  context.subscriptions.push(
    threads.onDidChangeCount((open) => status.setThreads(open)),
    store.onDidChange(({ live }) => {
      if (live && !panel?.visible) status.setReviewWaiting(true);
    }),
    vscode.window.onDidChangeWindowState((state) => {
      hub.notify('editor/focus', { focused: state.focused } satisfies FocusParams);
      // A link made at a terminal shows when the person comes back to the window.
      if (state.focused && hub.connectionState === 'connected') pullRequests?.refreshSoon();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      log.info('the window\'s folders changed: saying hello again with the new ones');
      hub.restart();
    }),
  );

  const command = (id: string, run: (...args: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, run));
  command('parley.showReview', () => panel?.show(false));
  command('parley.addComment', () => threads?.addComment());
  command('parley.createThread', (reply) => threads?.createFromReply(reply as vscode.CommentReply));
  command('parley.reply', (args) => threads?.replyPrompt(args));
  command('parley.resolveThread', (args) => threads?.resolve(args));
  command('parley.reopenThread', (args) => threads?.reopen(args));
  command('parley.openOnGitHub', (args) => threads?.openOnGitHub(args));
  command('parley.showThreads', () => threads?.showThreads());
  command('parley.showLog', () => log.show());
  command('parley.askAgent', () => asking?.ask());
  command('parley.resendToAgent', (args) => asking?.resend(args));
  command('parley.showAgents', () => asking?.showAgents());
  command('parley.typeIntoTerminal', (args) => asking?.typeIntoTerminal(args));
  command('parley.reviewAgentChanges', () => rounds?.reviewAgentChanges());
  command('parley.submitReview', () => rounds?.submit());
  command('parley.suggestChange', () => rounds?.comments.suggestChange());
  command('parley.round.openFile', (path) => rounds?.openFile(path));
  command('parley.round.showSince', () => rounds?.setMode('since'));
  command('parley.round.showWhole', () => rounds?.setMode('whole'));
  command('parley.round.close', () => rounds?.close());
  command('parley.round.addComment', (reply) => rounds?.comments.addFromReply(reply as vscode.CommentReply));
  command('parley.round.deleteDraft', (arg) => rounds?.comments.deleteDraft(arg));
  command('parley.round.editDraft', (arg) => rounds?.comments.editDraft(arg));
  command('parley.round.saveDraft', (arg) => rounds?.comments.saveDraft(arg));
  command('parley.round.cancelEdit', (arg) => rounds?.comments.cancelEdit(arg));
  command('parley.pr.pull', () => pullRequests?.pull());
  command('parley.pr.push', () => pullRequests?.push());
  command('parley.pr.menu', () => pullRequests?.menu());
  command('parley.walkthrough.next', () => walkthroughs?.stepBy(1));
  command('parley.walkthrough.previous', () => walkthroughs?.stepBy(-1));
  command('parley.walkthrough.steps', () => walkthroughs?.pickStep());
  command('parley.reconnect', () => {
    log.info('reconnecting at the user\'s request');
    hub.restart();
  });

  exportToTerminals(context, editorId);
  offerMcpServer(context, editorId, version, log);
  log.info(`Parley ${version} for VS Code ${vscode.version}: editor id ${editorId}, folders ${JSON.stringify(workspaceFolders())}`);
  hub.start();
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}

export type { Thread };
