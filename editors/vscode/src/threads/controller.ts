// Feedback threads in VS Code's Comments API: one comment controller for the window, a CommentThread per daemon thread, the gutter "+" and the thread actions (reply, resolve, reopen) sending hub requests, ranges tracked while the user types, and unsaved text sent to the daemon (buffer/changed) so threads stay on their text before a save.

import * as vscode from 'vscode';
import { HubClient } from '../hub/client';
import { BufferChangedParams, FeedbackChanged, FeedbackCreateParams, FeedbackListParams, FeedbackReplyParams, Thread, ThreadIdParams } from '../hub/types';
import { Log } from '../log';
import { threadView } from './model';
import { TextChange, applyChanges } from './tracking';
import { ALL_SHOWN_UP_TO, KEEP_WITHIN_SCREENS, LineSpan, SHOW_WITHIN_SCREENS, TOP_LINES, wanted } from './window';
import { authorName } from '../author';
import { inertImages } from '../inertMarkdown';
import { isWebAddress } from '../webAddress';

export const CONTROLLER_ID = 'parley';
/** How long typing must pause before the buffer goes to the daemon. */
const BUFFER_DEBOUNCE_MS = 300;

interface Entry {
  data: Thread;
  /** Where the thread is in the window's text (tracked while the user types); undefined: on the whole file. */
  range: vscode.Range | undefined;
  /** The thread as VS Code shows it, when it is shown (window.ts decides which are). */
  vs?: vscode.CommentThread;
  /** What was last given to `vs`, so that unchanged properties are not set again (each set re-renders the thread). */
  given?: Given;
  /** Made or opened by the user in this window: shown wherever it is. */
  pinned: boolean;
  /** Shown without its reply box for now (see showAround). */
  replyLater?: boolean;
}

interface Given {
  label: string;
  contextValue: string;
  resolved: boolean;
  canReply: boolean;
  comments: string;
}

class ParleyComment implements vscode.Comment {
  mode = vscode.CommentMode.Preview;
  constructor(
    public body: string | vscode.MarkdownString,
    public author: vscode.CommentAuthorInformation,
    public timestamp: Date,
    public contextValue?: string,
    /** Shown beside the author: where a message to an agent stands. */
    public label?: string,
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

function sameRange(a: vscode.Range | undefined, b: vscode.Range | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.isEqual(b));
}

/** Where a file's threads are shown (see ThreadsController.spansOf). */
interface Spans {
  spans: LineSpan[];
  onScreen: boolean;
  showWithin: number;
  keepWithin: number;
}

/** How long scrolling must pause before the threads around the new screen are shown. */
const WINDOW_DEBOUNCE_MS = 50;
/** How long after a file with many threads appears the threads around its screen, and the reply boxes, follow the threads on it. */
const AFTER_OPEN_MS = 1000;

export class ThreadsController implements vscode.Disposable {
  readonly controller: vscode.CommentController;
  private readonly entries = new Map<string, Entry>();
  /** Thread ids by document URI, for tracking edits. */
  private readonly byUri = new Map<string, Set<string>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly windowTimers = new Map<string, NodeJS.Timeout>();
  /** The spans of each file editors showed last. */
  private readonly lastSeen = new Map<string, LineSpan[]>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly countChanged = new vscode.EventEmitter<number>();
  readonly onDidChangeCount = this.countChanged.event;
  /** The agents at work (agents/changed); undefined until the daemon has said. */
  private agentsAtWork: Set<string> | undefined;
  /** The agents that run in one of this window's terminals. */
  private agentsTypeable = new Set<string>();

  constructor(
    private readonly hub: HubClient,
    private readonly log: Log,
  ) {
    this.controller = vscode.comments.createCommentController(CONTROLLER_ID, 'Parley');
    this.controller.options = { prompt: 'Comment for your agents…', placeHolder: 'Say what should change' };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (document: vscode.TextDocument) => {
        // VS Code asks before it shows a file's threads: the benchmark times the question.
        this.log.trace('commenting-ranges', { lines: document.lineCount, threads: this.byUri.get(document.uri.toString())?.size ?? 0 });
        if (document.uri.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(document.uri)) return [];
        // File-level threads hold orphans: threads whose text is gone.
        return { enableFileComments: true, ranges: [new vscode.Range(0, 0, Math.max(document.lineCount - 1, 0), 0)] };
      },
    };
    this.disposables.push(
      this.controller,
      vscode.workspace.onDidChangeTextDocument((event) => this.track(event)),
      vscode.workspace.onDidSaveTextDocument((document) => void this.refreshFile(document.uri)),
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        const keys = new Set([...this.byUri.keys()].filter((key) => (this.byUri.get(key)?.size ?? 0) > ALL_SHOWN_UP_TO));
        // Files that appeared get their threads at once; files that went away drop theirs.
        for (const editor of editors) keys.add(editor.document.uri.toString());
        for (const key of keys) {
          // The screen first, at once; the screens around it a moment later.
          this.showAround(key, false, 0);
          this.scheduleWindow(key, AFTER_OPEN_MS);
        }
      }),
      vscode.window.onDidChangeTextEditorVisibleRanges((event) => this.scheduleWindow(event.textEditor.document.uri.toString())),
    );
  }

  /** Whether `agent` is at work, as far as this window knows (undefined: not known yet). */
  private atWork(): ((agent: string) => boolean) | undefined {
    const names = this.agentsAtWork;
    return names ? (agent) => names.has(agent) : undefined;
  }

  /** The agents at work changed: threads whose messages wait for one that came or went show it. */
  setAgentsAtWork(names: string[]): void {
    const before = this.agentsAtWork;
    this.agentsAtWork = new Set(names);
    for (const entry of this.entries.values()) {
      const agents = (entry.data.deliveries ?? []).filter((d) => d.state === 'waiting').map((d) => d.agent);
      if (entry.vs && agents.some((a) => before?.has(a) !== this.agentsAtWork?.has(a))) this.show(entry);
    }
  }

  /** The agents running in this window's terminals changed: threads whose messages wait for one offer to type them there. */
  setAgentsTypeable(names: string[]): void {
    const before = this.agentsTypeable;
    this.agentsTypeable = new Set(names);
    for (const entry of this.entries.values()) {
      const agents = (entry.data.deliveries ?? []).filter((d) => d.state === 'waiting').map((d) => d.agent);
      if (entry.vs && agents.some((a) => before.has(a) !== this.agentsTypeable.has(a))) this.show(entry);
    }
  }

  private typeable(): (agent: string) => boolean {
    const names = this.agentsTypeable;
    return (agent) => names.has(agent);
  }

  /** The thread `id`, as this window has it. */
  thread(id: string): Thread | undefined {
    return this.entries.get(id)?.data;
  }

  /** A thread the person just made or changed here (asking an agent): shown, open, wherever they scroll. */
  showMine(thread: Thread, range?: vscode.Range): void {
    this.apply(thread);
    const entry = this.entries.get(thread.id);
    if (!entry) return;
    entry.pinned = true;
    if (range) entry.range = range;
    this.show(entry);
    if (entry.vs) entry.vs.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
  }

  /** Shows thread `id` open, wherever the user scrolls (a walkthrough's step revealed it). */
  open(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.pinned = true;
    this.show(entry);
    if (entry.vs) entry.vs.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
  }

  /** The thread under the cursor, or the one a thread action was run on. */
  threadFor(args: unknown): Thread | undefined {
    return (this.entryFor((args as vscode.CommentReply | undefined)?.thread ?? (args as vscode.CommentThread | undefined)) ?? this.threadAtCursor())?.data;
  }

  /** The author comments are signed with. */
  author(): string {
    return authorName();
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
    const { threads } = await this.hub.request<{ threads: Thread[] }>('feedback/list', {} satisfies FeedbackListParams);
    const keep = new Set(threads.map((t) => t.id));
    for (const id of [...this.entries.keys()]) if (!keep.has(id)) this.remove(id);
    const started = performance.now();
    const files = new Set<string>();
    for (const thread of threads) {
      this.apply(thread, false, false, false);
      files.add(vscode.Uri.file(thread.file).toString());
    }
    for (const key of files) this.showAround(key, true);
    this.countChanged.fire(this.openCount());
    this.log.trace('threads-listed', { count: threads.length, applyMs: performance.now() - started, shown: this.shownCount() });
    this.log.info(`${threads.length} thread(s) in this window's folders, ${this.openCount()} open`);
    // Threads in files with unsaved edits are positioned in the buffer, not on disk.
    for (const document of vscode.workspace.textDocuments) if (document.isDirty) this.scheduleBuffer(document);
  }

  private shownCount(): number {
    let shown = 0;
    for (const entry of this.entries.values()) if (entry.vs) shown++;
    return shown;
  }

  onChanged(params: FeedbackChanged): void {
    this.apply(params.thread);
  }

  /** Takes `thread` as the daemon sent it. Positions on disk are used only when the document has no unsaved edits. */
  apply(thread: Thread, inBuffer = false, notify = true, placeNow = true): void {
    const uri = vscode.Uri.file(thread.file);
    const key = uri.toString();
    const fileLevel = threadView(thread, this.atWork()).fileLevel;
    const range = fileLevel ? undefined : toRange(thread.range);
    let entry = this.entries.get(thread.id);
    const isNew = !entry;
    if (!entry) {
      entry = { data: thread, range, pinned: false };
      this.entries.set(thread.id, entry);
      if (!this.byUri.has(key)) this.byUri.set(key, new Set());
      this.byUri.get(key)?.add(thread.id);
    } else {
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
      const dirty = document?.isDirty ?? false;
      // In a buffer with unsaved edits, positions on disk are wrong: keep the tracked range until buffer/changed answers.
      if (fileLevel || !dirty || inBuffer || !entry.range) entry.range = range;
      if (document && dirty && !inBuffer) this.scheduleBuffer(document);
    }
    entry.data = thread;
    const count = this.byUri.get(key)?.size ?? 0;
    if (!placeNow) {
      // The caller places the file's threads once they are all in.
    } else if (isNew && count === ALL_SHOWN_UP_TO + 1) {
      // The file just went over the limit: its threads off screen go.
      this.showAround(key, false);
    } else {
      this.place(entry, count, this.spansOf(key, SHOW_WITHIN_SCREENS), true);
    }
    if (notify) this.countChanged.fire(this.openCount());
  }

  /**
   * Where the threads of the document `key` are shown: the spans editors show, and when none
   * does, the spans last seen (the top of the file if never), where VS Code opens it again.
   */
  private spansOf(key: string, showWithin: number): Spans {
    const spans: LineSpan[] = [];
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() !== key) continue;
      for (const range of editor.visibleRanges) spans.push({ start: range.start.line, end: range.end.line });
    }
    if (spans.length > 0) {
      this.lastSeen.set(key, spans);
      return { spans, onScreen: true, showWithin, keepWithin: KEEP_WITHIN_SCREENS };
    }
    // Off screen, only those threads: all VS Code is given of a file, it shows when the file opens.
    return { spans: this.lastSeen.get(key) ?? [{ start: 0, end: TOP_LINES - 1 }], onScreen: false, showWithin: 0, keepWithin: 0 };
  }

  /** Shows or hides `entry` as window.ts says; with `refresh`, brings a shown thread up to date with its data. */
  private place(entry: Entry, threadsInFile: number, where: Spans, refresh: boolean): void {
    const lines = entry.range ? { start: entry.range.start.line, end: entry.range.end.line } : { start: 0, end: 0 };
    if (!wanted({ lines, shown: entry.vs !== undefined, pinned: entry.pinned }, threadsInFile, where.spans, where.showWithin, where.keepWithin)) {
      this.hide(entry);
      return;
    }
    if (!entry.vs) {
      // A reply box is a whole editor inside the thread, the most costly part of a thread for
      // VS Code. Threads given off screen, or on the screen of a file just opened, are folded:
      // their boxes come with the screens around, once the file is on screen.
      entry.replyLater = threadsInFile > ALL_SHOWN_UP_TO && !entry.pinned && where.showWithin === 0;
    } else if (entry.replyLater && where.onScreen && where.showWithin > 0) {
      entry.replyLater = false;
      refresh = true;
    }
    if (refresh || !entry.vs) this.show(entry);
  }

  /**
   * Shows the threads of `key` around the screen and hides those far from it; with `refresh`,
   * brings the shown ones up to date. `showWithin` 0 fills the screen alone (a file just opened).
   */
  private showAround(key: string, refresh = false, showWithin = SHOW_WITHIN_SCREENS): void {
    const ids = this.byUri.get(key);
    if (!ids) return;
    const where = this.spansOf(key, showWithin);
    const started = performance.now();
    const before = this.shownCount();
    for (const id of ids) {
      const entry = this.entries.get(id);
      if (entry) this.place(entry, ids.size, where, refresh);
    }
    if (ids.size > ALL_SHOWN_UP_TO) {
      this.log.trace('window', { threads: ids.size, onScreen: where.onScreen, showWithin, shownBefore: before, shown: this.shownCount(), ms: performance.now() - started });
    }
  }

  private scheduleWindow(key: string, delay = WINDOW_DEBOUNCE_MS): void {
    if ((this.byUri.get(key)?.size ?? 0) <= ALL_SHOWN_UP_TO) return;
    clearTimeout(this.windowTimers.get(key));
    this.windowTimers.set(
      key,
      setTimeout(() => {
        this.windowTimers.delete(key);
        this.showAround(key);
      }, delay),
    );
  }

  private hide(entry: Entry): void {
    if (!entry.vs) return;
    entry.vs.dispose();
    entry.vs = undefined;
    entry.given = undefined;
  }

  /** Creates or updates `entry`'s VS Code thread, setting only what changed: each set makes VS Code render the thread again. */
  private show(entry: Entry): void {
    const view = threadView(entry.data, this.atWork(), this.typeable());
    const commentsKey = JSON.stringify(view.comments);
    const canReply = !view.resolved && !entry.replyLater;
    const comments = () =>
      view.comments.map((c) => new ParleyComment(new vscode.MarkdownString(inertImages(c.body)), { name: c.author }, c.timestamp, c.author === 'Parley' ? 'note' : 'comment', c.label));
    let wasExpanded = false;
    if (entry.vs && (entry.vs.range === undefined) !== (entry.range === undefined)) {
      // VS Code does not move a thread between a range and the whole file: make it anew.
      wasExpanded = entry.vs.collapsibleState === vscode.CommentThreadCollapsibleState.Expanded;
      this.hide(entry);
    }
    const uri = vscode.Uri.file(entry.data.file);
    if (!entry.vs) {
      // Created with its comments: a thread created empty counts as a draft, which the Comments panel leaves out.
      // A file-level thread is created without a range (VS Code takes `undefined` there although its types do not say so).
      const vs = this.controller.createCommentThread(uri, entry.range ?? (undefined as unknown as vscode.Range), comments());
      vs.label = view.label;
      vs.contextValue = view.contextValue;
      vs.state = view.resolved ? vscode.CommentThreadState.Resolved : vscode.CommentThreadState.Unresolved;
      vs.canReply = canReply;
      if (wasExpanded) vs.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
      entry.vs = vs;
      entry.given = { label: view.label, contextValue: view.contextValue, resolved: view.resolved, canReply, comments: commentsKey };
      // The walkthrough benchmark waits for each of a walkthrough's comments to be given to VS Code.
      const walkthrough = entry.data.walkthrough;
      if (walkthrough) this.log.trace('walkthrough-thread-shown', { walkthrough: walkthrough.id, block: walkthrough.block_index, thread: entry.data.id });
      return;
    }
    const vs = entry.vs;
    const given = entry.given ?? { label: '', contextValue: '', resolved: !view.resolved, canReply: !canReply, comments: '' };
    if (!sameRange(vs.range, entry.range)) vs.range = entry.range;
    if (given.label !== view.label) vs.label = view.label;
    if (given.contextValue !== view.contextValue) vs.contextValue = view.contextValue;
    if (given.canReply !== canReply) vs.canReply = canReply;
    if (given.resolved !== view.resolved) {
      vs.state = view.resolved ? vscode.CommentThreadState.Resolved : vscode.CommentThreadState.Unresolved;
      // Fold a thread away when it becomes resolved, but leave it as the user put it on later updates.
      if (view.resolved) vs.collapsibleState = vscode.CommentThreadCollapsibleState.Collapsed;
    }
    if (given.comments !== commentsKey) vs.comments = comments();
    entry.given = { label: view.label, contextValue: view.contextValue, resolved: view.resolved, canReply, comments: commentsKey };
  }

  private remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.hide(entry);
    this.entries.delete(id);
    const key = vscode.Uri.file(entry.data.file).toString();
    const ids = this.byUri.get(key);
    ids?.delete(id);
    // Back under the limit: the file's threads off screen come back.
    if (ids?.size === ALL_SHOWN_UP_TO) this.showAround(key);
    this.countChanged.fire(this.openCount());
  }

  /** Moves the threads of an edited document with the edit, then asks the daemon to place them in the new text. */
  private track(event: vscode.TextDocumentChangeEvent): void {
    const key = event.document.uri.toString();
    const ids = this.byUri.get(key);
    if (!ids || ids.size === 0 || event.contentChanges.length === 0) return;
    const started = performance.now();
    const changes: TextChange[] = event.contentChanges.map((c) => ({ range: fromRange(c.range), text: c.text }));
    for (const id of ids) {
      const entry = this.entries.get(id);
      const current = entry?.range;
      if (!entry || !current) continue;
      const moved = toRange(applyChanges(fromRange(current), changes));
      if (moved.isEqual(current)) continue;
      entry.range = moved;
      if (entry.vs) entry.vs.range = moved;
    }
    this.log.trace('tracked', { threads: ids.size, trackMs: performance.now() - started });
    this.scheduleWindow(key);
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
      const { threads } = await this.hub.request<{ threads: Thread[] }>('buffer/changed', { path: document.uri.fsPath, text: document.getText() } satisfies BufferChangedParams);
      // Typing went on meanwhile: the answer is for older text, and another request follows.
      if (document.version !== version) return;
      for (const thread of threads) this.apply(thread, true, false);
      this.countChanged.fire(this.openCount());
    } catch (error) {
      this.log.info(`buffer/changed for ${document.uri.fsPath} failed: ${(error as Error).message}`);
    }
  }

  /** After a save (or a revert), the file on disk is the reference again. */
  private async refreshFile(uri: vscode.Uri): Promise<void> {
    if (!this.byUri.get(uri.toString())?.size) return;
    try {
      const { threads } = await this.hub.request<{ threads: Thread[] }>('feedback/list', { path: uri.fsPath } satisfies FeedbackListParams);
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
      const range = entry?.range;
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
      } satisfies FeedbackCreateParams);
      this.apply(thread);
      const entry = this.entries.get(thread.id);
      if (entry) {
        // The user is looking at it: shown wherever they scroll, and open, where they put it
        // (in a dirty buffer the daemon's range is on disk).
        entry.pinned = true;
        if (document.isDirty) entry.range = range;
        this.show(entry);
        if (entry.vs) entry.vs.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
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
    if (entry) await this.send(entry, reply.text);
  }

  private async send(entry: Entry, text: string): Promise<void> {
    const body = text.trim();
    if (body === '') return;
    try {
      const { thread } = await this.hub.request<{ thread: Thread }>('feedback/reply', { thread_id: entry.data.id, body, author: this.author() } satisfies FeedbackReplyParams);
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
    return this.send(entry, body);
  }

  async resolve(args: unknown): Promise<void> {
    const entry = await this.pickThread(args, false);
    if (!entry) return;
    try {
      const { thread } = await this.hub.request<{ thread: Thread }>('feedback/resolve', { thread_id: entry.data.id } satisfies ThreadIdParams);
      this.apply(thread);
    } catch (error) {
      this.fail('resolving', error);
    }
  }

  async reopen(args: unknown): Promise<void> {
    const entry = await this.pickThread(args, true);
    if (!entry) return;
    try {
      const { thread } = await this.hub.request<{ thread: Thread }>('feedback/reopen', { thread_id: entry.data.id } satisfies ThreadIdParams);
      this.apply(thread);
    } catch (error) {
      this.fail('reopening', error);
    }
  }

  /** parley.openOnGitHub: the pull request's review thread a synced thread is, in the browser. */
  async openOnGitHub(args: unknown): Promise<void> {
    const entry = this.entryFor((args as vscode.CommentReply | undefined)?.thread ?? (args as vscode.CommentThread | undefined)) ?? this.threadAtCursor();
    const url = entry?.data.github?.url;
    if (!url) {
      void vscode.window.showInformationMessage('Parley: this thread is not synced with a pull request (`parley pr pull` brings its review threads in)');
      return;
    }
    if (!isWebAddress(url)) {
      void vscode.window.showWarningMessage(`Parley: this thread's link is not a web address, so it was not opened: ${url}`);
      return;
    }
    await vscode.env.openExternal(vscode.Uri.parse(url));
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
    const range = entry?.range ?? toRange(picked.thread.range);
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(picked.thread.file), { selection: new vscode.Range(range.start, range.start) });
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    if (!entry) return;
    // Opened on purpose: shown, and kept open, wherever the user scrolls.
    entry.pinned = true;
    this.apply(entry.data);
    if (entry.vs) entry.vs.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
  }

  dispose(): void {
    for (const timer of [...this.timers.values(), ...this.windowTimers.values()]) clearTimeout(timer);
    for (const entry of this.entries.values()) this.hide(entry);
    for (const d of this.disposables) d.dispose();
  }
}
