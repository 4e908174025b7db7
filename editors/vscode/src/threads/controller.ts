// Feedback threads in VS Code's Comments API: one comment controller for the window, a CommentThread per daemon thread, the gutter "+" and the thread actions (reply, resolve, reopen) sending hub requests, ranges tracked while the user types, and unsaved text sent to the daemon (buffer/changed) so threads stay on their text before a save.

import * as os from 'node:os';
import * as vscode from 'vscode';
import { HubClient } from '../hub/client';
import { FeedbackChanged, Thread } from '../hub/types';
import { Log } from '../log';
import { threadView } from './model';
import { TextChange, applyChanges } from './tracking';

export const CONTROLLER_ID = 'parley';
/** How long typing must pause before the buffer goes to the daemon. */
const BUFFER_DEBOUNCE_MS = 300;

interface Entry {
  data: Thread;
  vs: vscode.CommentThread;
}

class ParleyComment implements vscode.Comment {
  mode = vscode.CommentMode.Preview;
  constructor(
    public body: string | vscode.MarkdownString,
    public author: vscode.CommentAuthorInformation,
    public timestamp: Date,
    public contextValue?: string,
  ) {}
}

function toRange(range: Thread['range']): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

function fromRange(range: vscode.Range): Thread['range'] {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

export class ThreadsController implements vscode.Disposable {
  readonly controller: vscode.CommentController;
  private readonly entries = new Map<string, Entry>();
  /** Thread ids by document URI, for tracking edits. */
  private readonly byUri = new Map<string, Set<string>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly countChanged = new vscode.EventEmitter<number>();
  readonly onDidChangeCount = this.countChanged.event;

  constructor(
    private readonly hub: HubClient,
    private readonly log: Log,
  ) {
    this.controller = vscode.comments.createCommentController(CONTROLLER_ID, 'Parley');
    this.controller.options = { prompt: 'Comment for your agents…', placeHolder: 'Say what should change' };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (document: vscode.TextDocument) => {
        if (document.uri.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(document.uri)) return [];
        // File-level threads hold orphans: threads whose text is gone.
        return { enableFileComments: true, ranges: [new vscode.Range(0, 0, Math.max(document.lineCount - 1, 0), 0)] };
      },
    };
    this.disposables.push(
      this.controller,
      vscode.workspace.onDidChangeTextDocument((event) => this.track(event)),
      vscode.workspace.onDidSaveTextDocument((document) => void this.refreshFile(document.uri)),
    );
  }

  /** The author comments are signed with. */
  author(): string {
    const configured = vscode.workspace.getConfiguration('parley').get<string>('author', '');
    if (configured.trim() !== '') return configured.trim();
    try {
      return os.userInfo().username;
    } catch {
      return process.env.USER ?? 'vscode';
    }
  }

  openCount(): number {
    let open = 0;
    for (const entry of this.entries.values()) if (!entry.data.resolved) open++;
    return open;
  }

  all(): Thread[] {
    return [...this.entries.values()].map((e) => e.data);
  }

  /**
   * Replaces every thread with the daemon's listing (first connection, or after a daemon restart).
   * Resolved threads are left out, as windows hide them (docs/protocol.md); one resolved while the
   * window is open stays, folded, so that it can be reopened from its own header.
   */
  async resync(): Promise<void> {
    const { threads } = await this.hub.request<{ threads: Thread[] }>('feedback/list', {});
    const keep = new Set(threads.map((t) => t.id));
    for (const id of [...this.entries.keys()]) if (!keep.has(id)) this.remove(id);
    const started = performance.now();
    for (const thread of threads) this.apply(thread);
    this.log.trace('threads-listed', { count: threads.length, applyMs: performance.now() - started });
    this.log.info(`${threads.length} thread(s) in this window's folders, ${this.openCount()} open`);
    // Threads in files with unsaved edits are positioned in the buffer, not on disk.
    for (const document of vscode.workspace.textDocuments) if (document.isDirty) this.scheduleBuffer(document);
  }

  onChanged(params: FeedbackChanged): void {
    this.apply(params.thread);
  }

  /** Shows `thread` as the daemon sent it. Positions on disk are used only when the document has no unsaved edits. */
  apply(thread: Thread, inBuffer = false): void {
    const uri = vscode.Uri.file(thread.file);
    const view = threadView(thread);
    let entry = this.entries.get(thread.id);
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const dirty = document?.isDirty ?? false;
    const range = toRange(thread.range);
    let wasExpanded = false;
    if (entry && (entry.vs.range === undefined) !== view.fileLevel) {
      wasExpanded = entry.vs.collapsibleState === vscode.CommentThreadCollapsibleState.Expanded;
      // VS Code does not move an open thread between a range and the whole file: make it anew.
      entry.vs.dispose();
      this.entries.delete(thread.id);
      entry = undefined;
    }
    const isNew = !entry;
    const comments = view.comments.map(
      (c) => new ParleyComment(new vscode.MarkdownString(c.body), { name: c.author }, c.timestamp, c.author === 'Parley' ? 'note' : 'comment'),
    );
    if (!entry) {
      // Created with its comments: a thread created empty counts as a draft, which the Comments panel leaves out.
      // A file-level thread is created without a range (VS Code takes `undefined` there although its types do not say so).
      const where = view.fileLevel ? (undefined as unknown as vscode.Range) : range;
      entry = { data: thread, vs: this.controller.createCommentThread(uri, where, comments) };
      if (wasExpanded) entry.vs.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
      this.entries.set(thread.id, entry);
      const key = uri.toString();
      if (!this.byUri.has(key)) this.byUri.set(key, new Set());
      this.byUri.get(key)?.add(thread.id);
    }
    const vs = entry.vs;
    if (view.fileLevel) {
      vs.range = undefined;
    } else if (isNew || !dirty || inBuffer || !vs.range) {
      // In a buffer with unsaved edits, positions on disk are wrong: keep the tracked range until buffer/changed answers.
      if (!vs.range || !vs.range.isEqual(range)) vs.range = range;
    }
    const wasResolved = !isNew && entry.data.resolved;
    entry.data = thread;
    vs.label = view.label;
    vs.contextValue = view.contextValue;
    vs.state = view.resolved ? vscode.CommentThreadState.Resolved : vscode.CommentThreadState.Unresolved;
    vs.canReply = !view.resolved;
    vs.comments = comments;
    // Fold a thread away when it becomes resolved, but leave it as the user put it on later updates.
    if (view.resolved && !wasResolved) vs.collapsibleState = vscode.CommentThreadCollapsibleState.Collapsed;
    if (document && dirty && !inBuffer) this.scheduleBuffer(document);
    this.countChanged.fire(this.openCount());
  }

  private remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.vs.dispose();
    this.entries.delete(id);
    this.byUri.get(entry.vs.uri.toString())?.delete(id);
    this.countChanged.fire(this.openCount());
  }

  /** Moves the threads of an edited document with the edit, then asks the daemon to place them in the new text. */
  private track(event: vscode.TextDocumentChangeEvent): void {
    const ids = this.byUri.get(event.document.uri.toString());
    if (!ids || ids.size === 0 || event.contentChanges.length === 0) return;
    const started = performance.now();
    const changes: TextChange[] = event.contentChanges.map((c) => ({ range: fromRange(c.range), text: c.text }));
    for (const id of ids) {
      const entry = this.entries.get(id);
      const current = entry?.vs.range;
      if (!entry || !current) continue;
      const moved = toRange(applyChanges(fromRange(current), changes));
      if (!moved.isEqual(current)) entry.vs.range = moved;
    }
    this.log.trace('tracked', { threads: ids.size, trackMs: performance.now() - started });
    if (event.document.isDirty) this.scheduleBuffer(event.document);
    else void this.refreshFile(event.document.uri);
  }

  private scheduleBuffer(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    if (!this.byUri.get(key)?.size) return;
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        void this.sendBuffer(document);
      }, BUFFER_DEBOUNCE_MS),
    );
  }

  /** Sends the unsaved text; the answer positions the file's open threads in it. */
  private async sendBuffer(document: vscode.TextDocument): Promise<void> {
    if (document.isClosed || !document.isDirty) return;
    const version = document.version;
    try {
      const { threads } = await this.hub.request<{ threads: Thread[] }>('buffer/changed', { path: document.uri.fsPath, text: document.getText() });
      // Typing went on meanwhile: the answer is for older text, and another request follows.
      if (document.version !== version) return;
      for (const thread of threads) this.apply(thread, true);
    } catch (error) {
      this.log.info(`buffer/changed for ${document.uri.fsPath} failed: ${(error as Error).message}`);
    }
  }

  /** After a save (or a revert), the file on disk is the reference again. */
  private async refreshFile(uri: vscode.Uri): Promise<void> {
    if (!this.byUri.get(uri.toString())?.size) return;
    try {
      const { threads } = await this.hub.request<{ threads: Thread[] }>('feedback/list', { path: uri.fsPath });
      for (const thread of threads) this.apply(thread);
    } catch (error) {
      this.log.info(`refreshing threads of ${uri.fsPath} failed: ${(error as Error).message}`);
    }
  }

  private entryFor(thread: vscode.CommentThread | undefined): Entry | undefined {
    if (!thread) return undefined;
    for (const entry of this.entries.values()) if (entry.vs === thread) return entry;
    return undefined;
  }

  /** The thread under the cursor of the active editor, for commands run from the palette. */
  private threadAtCursor(): Entry | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return undefined;
    const ids = this.byUri.get(editor.document.uri.toString()) ?? new Set<string>();
    const line = editor.selection.active.line;
    for (const id of ids) {
      const entry = this.entries.get(id);
      const range = entry?.vs.range;
      if (entry && range && range.start.line <= line && line <= range.end.line) return entry;
    }
    return undefined;
  }

  private async pickThread(args: unknown, wantResolved: boolean): Promise<Entry | undefined> {
    const fromArgs = this.entryFor((args as vscode.CommentReply | undefined)?.thread ?? (args as vscode.CommentThread | undefined));
    if (fromArgs) return fromArgs;
    const atCursor = this.threadAtCursor();
    if (atCursor && atCursor.data.resolved === wantResolved) return atCursor;
    const candidates = [...this.entries.values()].filter((e) => e.data.resolved === wantResolved);
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage(`Parley: no ${wantResolved ? 'resolved' : 'open'} threads`);
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      candidates.map((e) => ({ label: `${e.data.path}:${e.data.range.start.line + 1}`, description: e.data.comments[0]?.body ?? '', entry: e })),
      { placeHolder: wantResolved ? 'Reopen which thread?' : 'Which thread?' },
    );
    return picked?.entry;
  }

  private fail(what: string, error: unknown): void {
    void vscode.window.showErrorMessage(`Parley: ${what} failed: ${(error as Error).message}`);
  }

  /** The "Add Comment" button of a new thread (the gutter "+"). */
  async createFromReply(reply: vscode.CommentReply): Promise<void> {
    const temp = reply.thread;
    const body = reply.text.trim();
    if (body === '') return;
    const document = await vscode.workspace.openTextDocument(temp.uri);
    let range = temp.range ?? new vscode.Range(0, 0, 0, 0);
    // The gutter gives whole lines, sometimes as an empty range: comment on the lines' text.
    if (range.isEmpty || (range.start.character === 0 && range.end.character === 0)) {
      const lastLine = range.end.line > range.start.line && range.end.character === 0 ? range.end.line - 1 : range.end.line;
      range = new vscode.Range(range.start.line, 0, lastLine, document.lineAt(lastLine).text.length);
    }
    const created = await this.create(document, range, body);
    if (created) temp.dispose();
  }

  /** parley.addComment: a comment on the active editor's selection (or line). */
  async addComment(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file') {
      void vscode.window.showWarningMessage('Parley: open a file and select the text to comment on');
      return;
    }
    let range: vscode.Range = editor.selection;
    if (range.isEmpty) range = editor.document.lineAt(range.start.line).range;
    const body = await vscode.window.showInputBox({ title: 'Parley: comment for your agents', prompt: `On ${vscode.workspace.asRelativePath(editor.document.uri)}:${range.start.line + 1}`, placeHolder: 'Say what should change' });
    if (body === undefined || body.trim() === '') return;
    await this.create(editor.document, range, body.trim());
  }

  private async create(document: vscode.TextDocument, range: vscode.Range, body: string): Promise<Thread | undefined> {
    try {
      const { thread } = await this.hub.request<{ thread: Thread }>('feedback/create', {
        path: document.uri.fsPath,
        range: fromRange(range),
        text: document.getText(range),
        body,
        author: this.author(),
      });
      this.apply(thread);
      const entry = this.entries.get(thread.id);
      if (entry) {
        // The user is looking at it: keep it open, where they put it (in a dirty buffer the daemon's range is on disk).
        entry.vs.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
        if (document.isDirty) entry.vs.range = range;
      }
      this.log.info(`created thread ${thread.id} on ${thread.path}:${thread.range.start.line + 1}`);
      return thread;
    } catch (error) {
      this.fail('adding the comment', error);
      return undefined;
    }
  }

  async reply(reply: vscode.CommentReply): Promise<void> {
    const entry = this.entryFor(reply.thread);
    if (!entry) return;
    const body = reply.text.trim();
    if (body === '') return;
    try {
      const { thread } = await this.hub.request<{ thread: Thread }>('feedback/reply', { thread_id: entry.data.id, body, author: this.author() });
      this.apply(thread);
    } catch (error) {
      this.fail('replying', error);
    }
  }

  /** parley.reply from the palette: asks for the text. */
  async replyPrompt(args: unknown): Promise<void> {
    if ((args as vscode.CommentReply | undefined)?.text !== undefined) return this.reply(args as vscode.CommentReply);
    const entry = await this.pickThread(args, false);
    if (!entry) return;
    const body = await vscode.window.showInputBox({ title: 'Parley: reply', prompt: entry.data.comments[0]?.body });
    if (body === undefined || body.trim() === '') return;
    return this.reply({ thread: entry.vs, text: body });
  }

  async resolve(args: unknown): Promise<void> {
    const entry = await this.pickThread(args, false);
    if (!entry) return;
    try {
      const { thread } = await this.hub.request<{ thread: Thread }>('feedback/resolve', { thread_id: entry.data.id });
      this.apply(thread);
    } catch (error) {
      this.fail('resolving', error);
    }
  }

  async reopen(args: unknown): Promise<void> {
    const entry = await this.pickThread(args, true);
    if (!entry) return;
    try {
      const { thread } = await this.hub.request<{ thread: Thread }>('feedback/reopen', { thread_id: entry.data.id });
      this.apply(thread);
    } catch (error) {
      this.fail('reopening', error);
    }
  }

  /** parley.showThreads: every open thread in a quick pick; choosing one opens it. */
  async showThreads(): Promise<void> {
    const open = this.all().filter((t) => !t.resolved);
    if (open.length === 0) {
      void vscode.window.showInformationMessage('Parley: no open feedback threads in this window');
      return;
    }
    const picked = await vscode.window.showQuickPick(
      open.map((t) => ({
        label: `${t.path}:${t.range.start.line + 1}`,
        description: t.state === 'anchored' ? '' : t.state,
        detail: t.comments.map((c) => `${c.author}: ${c.body}`).join(' · '),
        thread: t,
      })),
      { placeHolder: 'Open a feedback thread', matchOnDetail: true },
    );
    if (!picked) return;
    const entry = this.entries.get(picked.thread.id);
    const range = entry?.vs.range ?? toRange(picked.thread.range);
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(picked.thread.file), { selection: new vscode.Range(range.start, range.start) });
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    if (entry) entry.vs.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
  }

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    for (const entry of this.entries.values()) entry.vs.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
