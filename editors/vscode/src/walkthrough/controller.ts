// Walkthroughs in this window: the newest one of its folders (walkthrough/get after each hello, walkthrough/updated live), shown by the review panel; its steps to move through (Parley: Next/Previous Walkthrough Step, each revealing its place and its thread); its buttons (walkthrough/act); and its gitdiff blocks as lists of changed files, each opening VS Code's diff of that range with git's texts (served under `parley-git:`).

import { execFile } from 'node:child_process';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { HubClient } from '../hub/client';
import { Walkthrough, WalkthroughActParams, WalkthroughActResult, WalkthroughGetParams, WalkthroughGetResult, WalkthroughPlace, WalkthroughUpdated } from '../hub/types';
import { Log } from '../log';
import { DiffListing, renderWalkthrough } from '../review/walkthroughRender';
import { ThreadsController } from '../threads/controller';
import { ChangedFile, DiffSpec, Side, Step, describePlace, diffSpec, move, parseNameStatus, steps } from './model';
import { authorName } from '../author';

export const GIT_SCHEME = 'parley-git';
/** How long git may take to list a range's files or give a file's text. */
const GIT_TIMEOUT_MS = 10_000;

/** Runs git in `cwd`; resolves with its standard output. */
function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, timeout: GIT_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(stderr.trim().split('\n')[0] || error.message));
      else resolve(stdout);
    });
  });
}

/** What a `parley-git:` document holds: `path` at a commit, in the index, or nothing (a side where the file is not). */
interface GitText {
  root: string;
  commit?: string;
  index?: boolean;
}

/** A gitdiff block's files and what they compare. */
interface Listing {
  root: string;
  spec: DiffSpec;
  /** The left side's commit once a merge base is found. */
  left: Side;
  files: ChangedFile[];
}

export class WalkthroughController implements vscode.Disposable {
  /** Every walkthrough of the window's folders this window has, newest revision of each. */
  private readonly byId = new Map<string, Walkthrough>();
  /** Gitdiff listings by walkthrough id, revision and block. */
  private readonly listings = new Map<string, Listing | { error: string }>();
  private readonly listing = new Set<string>();
  /** The step shown last, in the newest walkthrough's steps. */
  private current: number | undefined;
  private currentOf: string | undefined;
  private readonly changed = new vscode.EventEmitter<{ walkthrough: Walkthrough; live: boolean }>();
  /** A walkthrough arrived or changed (`live`: presented or clicked now), or its diff listings came in. */
  readonly onDidChange = this.changed.event;
  private readonly stepped = new vscode.EventEmitter<{ label: string; block: number }>();
  /** The person moved to a step: the panel marks it. */
  readonly onDidStep = this.stepped.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly hub: HubClient,
    private readonly log: Log,
    private readonly threads: ThreadsController,
    private readonly folders: () => string[],
    /** Where files open (beside the panel), and the panel told of each, so that it does not take the focus back. */
    private readonly panel: { fileColumn(): vscode.ViewColumn; keepFocus(editor: vscode.TextEditor): void },
  ) {
    this.disposables.push(this.changed, this.stepped, vscode.workspace.registerTextDocumentContentProvider(GIT_SCHEME, { provideTextDocumentContent: (uri) => this.gitText(uri) }));
  }

  /** The newest walkthrough of the window's folders. */
  latest(): Walkthrough | undefined {
    let best: Walkthrough | undefined;
    for (const w of this.byId.values()) if (!best || w.updated_at > best.updated_at) best = w;
    return best;
  }

  /** Keeps `walkthrough` unless a newer revision of it is held. */
  apply(walkthrough: Walkthrough, live: boolean): void {
    const held = this.byId.get(walkthrough.id);
    // The same revision comes again when a click moves on: take it, it is newer.
    if (held && (held.revision > walkthrough.revision || (held.revision === walkthrough.revision && held.updated_at > walkthrough.updated_at && !live))) return;
    this.byId.set(walkthrough.id, walkthrough);
    if (held?.revision !== walkthrough.revision && this.currentOf === walkthrough.id) this.current = undefined;
    this.log.trace('walkthrough-received', { id: walkthrough.id, revision: walkthrough.revision, blocks: walkthrough.blocks.length });
    this.changed.fire({ walkthrough, live });
  }

  onUpdated(params: WalkthroughUpdated): void {
    this.apply(params.walkthrough, true);
  }

  /** After each hello: the latest walkthrough of each folder. */
  async onConnected(): Promise<void> {
    for (const workspace of this.folders()) {
      const { walkthrough } = await this.hub.request<WalkthroughGetResult>('walkthrough/get', { workspace } satisfies WalkthroughGetParams);
      if (walkthrough) this.apply(walkthrough, false);
    }
  }

  /** The walkthrough as the panel shows it, its gitdiff blocks listed (those not listed yet are, and the panel is told when they are). */
  html(walkthrough: Walkthrough): string {
    const diffs = new Map<number, DiffListing>();
    for (const block of walkthrough.blocks) {
      if (block.kind !== 'gitdiff' || block.problem) continue;
      const key = this.listingKey(walkthrough, block.index);
      const found = this.listings.get(key);
      if (found) diffs.set(block.index, 'error' in found ? found : { files: found.files });
      else void this.list(walkthrough, block.index, block.range, block.exclude_staged, block.exclude_unstaged);
    }
    return renderWalkthrough(walkthrough, diffs);
  }

  private listingKey(walkthrough: Walkthrough, block: number): string {
    return `${walkthrough.id}#${walkthrough.revision}#${block}`;
  }

  /** Lists the files a gitdiff block changes, with git in the walkthrough's repository. */
  private async list(walkthrough: Walkthrough, block: number, range: string, excludeStaged: boolean, excludeUnstaged: boolean): Promise<void> {
    const key = this.listingKey(walkthrough, block);
    if (this.listing.has(key)) return;
    this.listing.add(key);
    const spec = diffSpec(range, excludeStaged, excludeUnstaged);
    try {
      if ('error' in spec) throw new Error(spec.error);
      const root = (await git(walkthrough.base_uri, ['rev-parse', '--show-toplevel'])).trim();
      let left = spec.left;
      if (spec.mergeBase) left = { commit: (await git(root, ['merge-base', ...spec.mergeBase])).trim() };
      const files = parseNameStatus(await git(root, ['diff', '--name-status', '-z', '-M', ...spec.args, '--']));
      this.listings.set(key, { root, spec, left, files });
    } catch (error) {
      this.listings.set(key, { error: `git cannot list the changes of ${range}: ${(error as Error).message}` });
    }
    this.listing.delete(key);
    const now = this.byId.get(walkthrough.id);
    if (now?.revision === walkthrough.revision) this.changed.fire({ walkthrough: now, live: false });
  }

  /** A `parley-git:` document's text: a file at a commit or in the index. */
  private async gitText(uri: vscode.Uri): Promise<string> {
    let which: GitText;
    try {
      which = JSON.parse(uri.query) as GitText;
    } catch {
      return '';
    }
    const file = uri.path.replace(/^\//, '');
    if (!which.commit && !which.index) return '';
    try {
      return await git(which.root, ['show', `${which.index ? '' : which.commit}:${file}`]);
    } catch (error) {
      return `(git cannot show ${file}: ${(error as Error).message})`;
    }
  }

  private sideUri(root: string, file: string | undefined, side: Side): vscode.Uri {
    if (file !== undefined && 'working' in side) return vscode.Uri.file(path.join(root, file));
    const text: GitText = file === undefined || 'working' in side ? { root } : 'index' in side ? { root, index: true } : { root, commit: side.commit };
    return vscode.Uri.from({ scheme: GIT_SCHEME, path: `/${file ?? 'nothing'}`, query: JSON.stringify(text) });
  }

  /** Opens the diff of file `n` of gitdiff block `block` of the walkthrough shown. */
  async openDiffFile(id: string, block: number, n: number): Promise<void> {
    const walkthrough = this.byId.get(id);
    const found = walkthrough ? this.listings.get(this.listingKey(walkthrough, block)) : undefined;
    if (!walkthrough || !found || 'error' in found) return;
    const file = found.files[n];
    if (!file) return;
    const left = this.sideUri(found.root, file.status === 'added' ? undefined : file.oldPath, found.left);
    const right = this.sideUri(found.root, file.status === 'deleted' ? undefined : file.path, found.spec.right);
    const range = walkthrough.blocks.find((b) => b.index === block && b.kind === 'gitdiff');
    const title = `${path.basename(file.path)} (${range && range.kind === 'gitdiff' ? range.range : 'change'})`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { viewColumn: this.panel.fileColumn(), preview: true });
    this.log.info(`opened the diff of ${file.path} from walkthrough "${walkthrough.title}"`);
  }

  /** A button was clicked: its message goes to the presenting agent. */
  async act(id: string, block: number): Promise<void> {
    try {
      const result = await this.hub.request<WalkthroughActResult>('walkthrough/act', { id, block_index: block, author: authorName() } satisfies WalkthroughActParams);
      const action = result.walkthrough.blocks.find((b) => b.index === block);
      this.log.info(`clicked "${action?.kind === 'action' ? action.button : block}" of walkthrough "${result.walkthrough.title}": ${result.click.state}`);
      this.apply(result.walkthrough, true);
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley: the button's message could not be sent: ${(error as Error).message}`);
    }
  }

  /** The newest walkthrough's steps. */
  steps(): Step[] {
    const walkthrough = this.latest();
    return walkthrough ? steps(walkthrough) : [];
  }

  /** The step shown, for the panel: `Step 2 of 7: src/a.rs:3`. */
  stepShown(): { label: string; block: number } | undefined {
    const all = this.steps();
    const walkthrough = this.latest();
    if (this.current === undefined || !walkthrough || this.currentOf !== walkthrough.id) return undefined;
    const step = all[this.current];
    return step ? { label: this.stepLabel(step, this.current, all.length), block: step.block } : undefined;
  }

  private stepLabel(step: Step, n: number, count: number): string {
    return `Step ${n + 1} of ${count}: ${step.place ? describePlace(step.place) : 'not placed'}`;
  }

  /** Moves to the next (`1`) or previous (`-1`) step and reveals it. */
  async stepBy(by: 1 | -1): Promise<void> {
    const walkthrough = this.latest();
    const all = this.steps();
    if (!walkthrough || all.length === 0) {
      void vscode.window.showInformationMessage('Parley: no walkthrough with comments in this window');
      return;
    }
    const next = move(all.length, this.currentOf === walkthrough.id ? this.current : undefined, by);
    if (next !== undefined) await this.goTo(walkthrough, all, next);
  }

  /** Parley: Walkthrough Steps: every step in a quick pick; the one chosen is revealed. */
  async pickStep(): Promise<void> {
    const walkthrough = this.latest();
    const all = this.steps();
    if (!walkthrough || all.length === 0) {
      void vscode.window.showInformationMessage('Parley: no walkthrough with comments in this window');
      return;
    }
    const picked = await vscode.window.showQuickPick(
      all.map((step, n) => ({
        label: `${n + 1}. ${step.place ? describePlace(step.place) : `not placed: ${step.location}`}`,
        description: step.summary,
        detail: step.problem,
        n,
      })),
      { placeHolder: `The steps of "${walkthrough.title}"`, matchOnDescription: true },
    );
    if (picked) await this.goTo(walkthrough, all, picked.n);
  }

  private async goTo(walkthrough: Walkthrough, all: Step[], n: number): Promise<void> {
    this.current = n;
    this.currentOf = walkthrough.id;
    const step = all[n];
    const label = this.stepLabel(step, n, all.length);
    this.stepped.fire({ label, block: step.block });
    this.log.trace('walkthrough-step', { id: walkthrough.id, step: n, block: step.block });
    if (step.place) await this.reveal(walkthrough, step.place);
    else vscode.window.setStatusBarMessage(`Parley: step ${n + 1} was not placed: ${step.problem}`, 8000);
  }

  /** Opens a comment's place (`place`) or an unplaced comment's candidate (`candidate`). */
  async openPlace(id: string, block: number, place?: number, candidate?: number): Promise<void> {
    const walkthrough = this.byId.get(id);
    const found = walkthrough?.blocks.find((b) => b.index === block);
    if (!walkthrough || found?.kind !== 'comment') return;
    const where = place !== undefined ? found.places[place] : candidate !== undefined ? found.candidates?.[candidate] : undefined;
    if (!where) return;
    if (place !== undefined) {
      const all = steps(walkthrough);
      const n = all.findIndex((s) => s.block === block && s.place === where);
      if (n >= 0 && walkthrough.id === this.latest()?.id) {
        await this.goTo(walkthrough, all, n);
        return;
      }
    }
    await this.reveal(walkthrough, where);
  }

  /** Opens `place`'s file with its lines in view and its thread open (where the thread is now, if it moved). */
  private async reveal(walkthrough: Walkthrough, place: WalkthroughPlace): Promise<void> {
    const thread = place.thread_id ? this.threads.thread(place.thread_id) : undefined;
    const file = thread?.file ?? path.join(walkthrough.workspace, ...place.path.split('/'));
    try {
      const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
      const last = Math.min(thread ? thread.range.end.line : place.end_line, document.lineCount - 1);
      const first = Math.min(thread ? thread.range.start.line : place.start_line, last);
      const editor = await vscode.window.showTextDocument(document, { viewColumn: this.panel.fileColumn(), selection: new vscode.Range(first, 0, first, 0) });
      editor.revealRange(new vscode.Range(first, 0, last, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      this.panel.keepFocus(editor);
      if (place.thread_id) this.threads.open(place.thread_id);
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley: cannot open ${place.path}: ${(error as Error).message}`);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
