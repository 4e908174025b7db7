// Comments on a round's diff: a comment controller of its own whose commenting ranges are every line of both sides of the `parley-round:` documents (the base's text is the old side, the agent's the new one), the person's drafts as threads labelled "Draft" (added, edited and deleted through round/comment and round/uncomment, and kept in step with round/changed from other windows and the CLI), a suggestion written as a ```suggestion block or started with Parley: Suggest Change, and the earlier rounds' comments, read-only, with their state.

import * as vscode from 'vscode';
import { HubClient } from '../hub/client';
import { Draft, DraftSide, EarlierComment, RoundCommentParams, RoundDetail, RoundFile, RoundUncommentParams } from '../hub/types';
import { Log } from '../log';
import { authorName } from '../author';
import { inertImages } from '../inertMarkdown';
import {
  SCHEME,
  Version,
  clampLine,
  commentableLines,
  composeComment,
  draftKey,
  draftLabel,
  earlierLabel,
  isPlan,
  lineCount,
  parseComment,
  parseRoundPath,
  reconcile,
  renderDraft,
  roundPath,
  sideOf,
  textOf,
} from './model';

export const ROUND_CONTROLLER_ID = 'parley-round';

/** A comment of this controller; `parent` and `draftId` let the comment's own buttons find what they act on. */
export class RoundComment implements vscode.Comment {
  constructor(
    public body: string | vscode.MarkdownString,
    public mode: vscode.CommentMode,
    public author: vscode.CommentAuthorInformation,
    public contextValue: string,
    /** Set once the thread exists: a thread is created with its comments (one created empty counts as unfinished, which the Comments panel leaves out). */
    public parent: vscode.CommentThread | undefined,
    public draftId?: string,
    public label?: string,
    public timestamp?: Date,
  ) {}
}

interface Shown {
  draft: Draft;
  key: string;
  thread: vscode.CommentThread;
}

/** The URI of a text of the open round. */
export function roundUri(detail: RoundDetail, version: Version, path: string): vscode.Uri {
  return vscode.Uri.from({ scheme: SCHEME, path: roundPath({ reviewId: detail.review_id, round: detail.round, version, path }) });
}

function bodyText(body: string | vscode.MarkdownString): string {
  return typeof body === 'string' ? body : body.value;
}

export class RoundComments implements vscode.Disposable {
  readonly controller: vscode.CommentController;
  private detail: RoundDetail | undefined;
  private readonly drafts = new Map<string, Shown>();
  private earlier: vscode.CommentThread[] = [];
  private readonly changed = new vscode.EventEmitter<Draft[]>();
  /** The drafts changed (added, edited or removed, here or elsewhere). */
  readonly onDidChangeDrafts = this.changed.event;

  constructor(
    private readonly hub: HubClient,
    private readonly log: Log,
    private readonly author: () => string,
  ) {
    this.controller = vscode.comments.createCommentController(ROUND_CONTROLLER_ID, 'Parley review');
    this.controller.options = {
      prompt: 'Comment on this change…',
      placeHolder: 'Say what should change. A ```suggestion block proposes replacement lines; [major] at the start sets the severity.',
    };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (document: vscode.TextDocument) => {
        const found = this.fileOf(document.uri);
        if (!found) return [];
        const lines = commentableLines(found.file, found.version);
        return lines ? [new vscode.Range(lines.start, 0, lines.end, 0)] : [];
      },
    };
  }

  /** The open round's file and version a `parley-round:` URI shows; undefined for other rounds and other documents. */
  fileOf(uri: vscode.Uri): { file: RoundFile; version: Version; detail: RoundDetail } | undefined {
    if (uri.scheme !== SCHEME || !this.detail) return undefined;
    const ref = parseRoundPath(uri.path);
    const detail = this.detail;
    if (!ref || ref.reviewId !== detail.review_id || ref.round !== detail.round) return undefined;
    const file = detail.files.find((f) => f.path === ref.path);
    return file ? { file, version: ref.version, detail } : undefined;
  }

  /** Shows the drafts and earlier comments of `detail` (the round being reviewed). */
  show(detail: RoundDetail): void {
    if (this.detail && (this.detail.review_id !== detail.review_id || this.detail.round !== detail.round)) this.clear();
    this.detail = detail;
    this.setDrafts(detail.drafts);
    this.showEarlier(detail);
  }

  current(): Draft[] {
    return [...this.drafts.values()].map((s) => s.draft);
  }

  /** Brings the draft threads in line with the daemon's drafts. */
  setDrafts(drafts: Draft[]): void {
    const detail = this.detail;
    if (!detail) return;
    const shown = new Map([...this.drafts].map(([id, s]) => [id, s.key]));
    const { add, update, remove } = reconcile(shown, drafts);
    for (const id of remove) {
      this.drafts.get(id)?.thread.dispose();
      this.drafts.delete(id);
    }
    for (const draft of update) {
      const entry = this.drafts.get(draft.id);
      if (!entry) continue;
      // A comment being edited here keeps the person's text; it is saved over the other change.
      if (entry.thread.comments.some((c) => c.mode === vscode.CommentMode.Editing)) continue;
      if (entry.draft.path !== draft.path || entry.draft.side !== draft.side) {
        entry.thread.dispose();
        this.drafts.delete(draft.id);
        add.push(draft);
        continue;
      }
      entry.thread.range = new vscode.Range(draft.start_line, 0, draft.end_line, 0);
      entry.thread.comments = [this.draftComment(draft, entry.thread)];
      entry.draft = draft;
      entry.key = draftKey(draft);
    }
    for (const draft of add) this.addDraft(detail, draft);
    this.changed.fire(this.current());
  }

  private draftComment(draft: Draft, thread: vscode.CommentThread | undefined): RoundComment {
    const body = new vscode.MarkdownString(inertImages(renderDraft(draft)));
    return new RoundComment(body, vscode.CommentMode.Preview, { name: draft.author ?? this.author() }, 'draft', thread, draft.id, 'Draft', new Date(draft.at));
  }

  private addDraft(detail: RoundDetail, draft: Draft): void {
    const uri = roundUri(detail, draft.side === 'old' ? 'before' : 'after', draft.path);
    const comment = this.draftComment(draft, undefined);
    const thread = this.controller.createCommentThread(uri, new vscode.Range(draft.start_line, 0, draft.end_line, 0), [comment]);
    comment.parent = thread;
    thread.label = draftLabel(draft);
    thread.contextValue = 'draft';
    thread.canReply = false;
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    this.drafts.set(draft.id, { draft, key: draftKey(draft), thread });
  }

  private showEarlier(detail: RoundDetail): void {
    for (const thread of this.earlier) thread.dispose();
    this.earlier = [];
    for (const comment of detail.earlier) {
      const file = detail.files.find((f) => f.path === comment.path);
      // A file the agent did not touch again is not in this round: its threads are on the code.
      if (!file) continue;
      const version: Version = file.after !== null ? 'after' : 'before';
      const lines = lineCount(textOf(file, version));
      const start = clampLine(comment.line, lines);
      const end = Math.max(start, clampLine(comment.end_line ?? comment.line, lines));
      const shown = this.earlierComments(comment);
      const thread = this.controller.createCommentThread(roundUri(detail, version, comment.path), new vscode.Range(start, 0, end, 0), shown);
      for (const c of shown) c.parent = thread;
      thread.label = earlierLabel(comment, isPlan(detail));
      thread.contextValue = 'earlier';
      thread.canReply = false;
      const resolved = comment.state === 'resolved';
      thread.state = resolved ? vscode.CommentThreadState.Resolved : vscode.CommentThreadState.Unresolved;
      thread.collapsibleState = resolved ? vscode.CommentThreadCollapsibleState.Collapsed : vscode.CommentThreadCollapsibleState.Expanded;
      this.earlier.push(thread);
    }
  }

  /** The conversation of an earlier round's comment: the person's comment and what the agent answered. */
  private earlierComments(comment: EarlierComment): RoundComment[] {
    const conversation = comment.comments && comment.comments.length > 0 ? comment.comments : [{ author: this.author(), body: comment.body, created_at: '' }];
    // The thread's label says the round and the state.
    return conversation.map(
      (c) => new RoundComment(new vscode.MarkdownString(inertImages(c.body)), vscode.CommentMode.Preview, { name: c.author }, 'earlier', undefined, undefined, undefined, c.created_at ? new Date(c.created_at) : undefined),
    );
  }

  /** The reply box's "Add Review Comment" on a new thread: the text becomes a draft (its ```suggestion block the suggestion). */
  async addFromReply(reply: vscode.CommentReply): Promise<void> {
    const thread = reply.thread;
    const saved = await this.save(thread.uri, thread.range, reply.text, undefined);
    if (saved) thread.dispose();
  }

  /** Sends a draft (new, or `draftId` edited) to the daemon; shows it; returns whether it was kept. */
  private async save(uri: vscode.Uri, range: vscode.Range | undefined, text: string, draftId: string | undefined): Promise<boolean> {
    const found = this.fileOf(uri);
    if (!found) {
      void vscode.window.showErrorMessage('Parley: this review is no longer open; open it again with "Parley: Review Agent Changes".');
      return false;
    }
    const side: DraftSide | undefined = sideOf(found.file, found.version);
    if (!side || !range) {
      void vscode.window.showErrorMessage('Parley: comments go on lines of the base or of the agent\'s change; switch to "whole change" to comment on the base.');
      return false;
    }
    if (text.trim() === '') return false;
    const { body, suggestion, severity } = parseComment(text);
    const params: RoundCommentParams = { review_id: found.detail.review_id, path: found.file.path, side, start_line: range.start.line, end_line: range.end.line, body };
    if (suggestion !== null) params.suggestion = suggestion;
    if (severity !== null) params.severity = severity;
    if (draftId !== undefined) params.draft_id = draftId;
    params.author = authorName();
    try {
      const { draft } = await this.hub.request<{ draft: Draft }>('round/comment', params);
      this.log.info(`draft ${draft.id} on ${draft.path}:${draft.start_line + 1} (${draft.side} side) of review ${found.detail.review_id}`);
      // An edited draft leaves editing here, so that the update below shows it.
      const edited = this.drafts.get(draft.id);
      if (edited) edited.thread.comments = [this.draftComment(draft, edited.thread)];
      this.setDrafts([...this.current().filter((d) => d.id !== draft.id), draft]);
      return true;
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley could not save the comment: ${(error as Error).message}`);
      return false;
    }
  }

  private entryOf(arg: unknown): Shown | undefined {
    const thread = arg instanceof RoundComment ? arg.parent : (arg as vscode.CommentThread | undefined);
    if (!thread) return undefined;
    for (const entry of this.drafts.values()) if (entry.thread === thread) return entry;
    return undefined;
  }

  /** The draft's "Delete Draft" button. */
  async deleteDraft(arg: unknown): Promise<void> {
    const entry = this.entryOf(arg);
    if (!entry || !this.detail) return;
    try {
      await this.hub.request('round/uncomment', { review_id: this.detail.review_id, draft_id: entry.draft.id } satisfies RoundUncommentParams);
      this.setDrafts(this.current().filter((d) => d.id !== entry.draft.id));
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley could not delete the draft: ${(error as Error).message}`);
    }
  }

  /** The draft's "Edit" button: its text, with the suggestion as a ```suggestion block, in an editor. */
  editDraft(arg: unknown): void {
    const entry = this.entryOf(arg);
    if (!entry) return;
    const comment = new RoundComment(
      composeComment(entry.draft.body, entry.draft.suggestion, entry.draft.severity),
      vscode.CommentMode.Editing,
      { name: entry.draft.author ?? this.author() },
      'draft-editing',
      entry.thread,
      entry.draft.id,
      'Draft',
    );
    entry.thread.comments = [comment];
  }

  /** "Save" under a comment being edited: an edited draft, or a new one from Suggest Change. */
  async saveDraft(arg: unknown): Promise<void> {
    if (!(arg instanceof RoundComment) || !arg.parent) return;
    const thread = arg.parent;
    const text = bodyText(arg.body);
    if (arg.draftId !== undefined) {
      await this.save(thread.uri, thread.range, text, arg.draftId);
      return;
    }
    if (await this.save(thread.uri, thread.range, text, undefined)) thread.dispose();
  }

  /** "Cancel" under a comment being edited. */
  cancelEdit(arg: unknown): void {
    if (!(arg instanceof RoundComment)) return;
    const entry = arg.draftId !== undefined ? this.drafts.get(arg.draftId) : undefined;
    if (entry) entry.thread.comments = [this.draftComment(entry.draft, entry.thread)];
    else arg.parent?.dispose();
  }

  /** Parley: Suggest Change: a new comment on the selected lines of the agent's change, its text the lines themselves in a ```suggestion block, to edit. */
  suggestChange(): void {
    const editor = vscode.window.activeTextEditor;
    const found = editor ? this.fileOf(editor.document.uri) : undefined;
    if (!editor || !found || sideOf(found.file, found.version) !== 'new') {
      void vscode.window.showInformationMessage('Parley: select lines on the right side (the agent\'s change) of a review diff, then suggest a change.');
      return;
    }
    const selection = editor.selection;
    const endLine = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line - 1 : selection.end.line;
    const range = new vscode.Range(selection.start.line, 0, endLine, 0);
    const lines: string[] = [];
    for (let line = range.start.line; line <= endLine; line++) lines.push(editor.document.lineAt(line).text);
    const comment = new RoundComment(composeComment('', lines.join('\n')).trimStart(), vscode.CommentMode.Editing, { name: this.author() }, 'new-draft', undefined, undefined, 'Draft');
    const thread = this.controller.createCommentThread(editor.document.uri, range, [comment]);
    comment.parent = thread;
    thread.label = 'New suggestion';
    thread.contextValue = 'new-draft';
    thread.canReply = false;
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
  }

  /** Removes every thread (the review was submitted, cancelled or closed). */
  clear(): void {
    for (const entry of this.drafts.values()) entry.thread.dispose();
    this.drafts.clear();
    for (const thread of this.earlier) thread.dispose();
    this.earlier = [];
    this.detail = undefined;
  }

  dispose(): void {
    this.clear();
    this.controller.dispose();
    this.changed.dispose();
  }
}
