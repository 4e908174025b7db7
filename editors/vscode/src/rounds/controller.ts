// A person reviewing an agent's round: the rounds waiting for this window's folders (told by round/requested, and asked with `inbox` after each hello), a notification with a "Review" button and a status bar item for them, the round's texts served read-only under `parley-round:`, its diffs (whole change or changes since the previous round), and submitting the verdict with round/submit. The review closes when round/changed says it was submitted or cancelled, from here or elsewhere.

import * as vscode from 'vscode';
import { HubClient } from '../hub/client';
import { InboxParams, RoundChanged, RoundDetail, RoundGetParams, RoundSubmitParams, SubmitResult, WaitingRound } from '../hub/types';
import { Log } from '../log';
import { ROUND_CONTROLLER_ID, RoundComments, roundUri } from './comments';
import { DiffMode, SCHEME, agentName, diffSides, diffTitle, endedText, isPlan, parseRoundPath, planTitle, requestText, shortSummary, sortWaiting, submittedText, textOf, verdictChoices, waitingLabel } from './model';
import { RoundTree, VIEW_ID } from './tree';
import { authorName } from '../author';

export { ROUND_CONTROLLER_ID };

export class RoundsController implements vscode.Disposable, vscode.TextDocumentContentProvider {
  private readonly waiting = new Map<string, WaitingRound>();
  /** Rounds this window has told the person about (review id and round), so a hello's repeat does not tell again. */
  private readonly told = new Set<string>();
  private open: RoundDetail | undefined;
  /** The review this window is submitting: its round/changed can come before the answer, and is no news here. */
  private submitting: string | undefined;
  private mode: DiffMode = 'whole';
  /** Rounds fetched for their texts (documents of a round outlive the review: tabs restored, say). */
  private readonly held = new Map<string, RoundDetail>();
  private readonly status: vscode.StatusBarItem;
  readonly comments: RoundComments;
  private readonly tree: RoundTree;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly hub: HubClient,
    private readonly log: Log,
    author: () => string,
    private readonly folders: () => string[],
  ) {
    this.comments = new RoundComments(hub, log, author);
    this.tree = new RoundTree();
    this.status = vscode.window.createStatusBarItem('parley.rounds', vscode.StatusBarAlignment.Left, 49);
    this.status.name = 'Parley reviews waiting';
    this.status.command = 'parley.reviewAgentChanges';
    this.disposables.push(
      this.comments,
      this.tree,
      this.status,
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
      this.comments.onDidChangeDrafts((drafts) => {
        this.tree.setDrafts(drafts);
        if (this.open) {
          const waiting = this.waiting.get(this.open.review_id);
          if (waiting) waiting.drafts = drafts.length;
        }
      }),
    );
    void this.setContext();
  }

  /** The text of a `parley-round:` document. */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = parseRoundPath(uri.path);
    if (!ref) return '';
    if (ref.version === 'empty') return '';
    const key = `${ref.reviewId}#${ref.round}`;
    let detail = this.held.get(key);
    if (!detail) {
      try {
        const fetched = await this.hub.request<RoundDetail>('round/get', { review_id: ref.reviewId } satisfies RoundGetParams);
        this.hold(fetched);
        detail = this.held.get(key);
      } catch (error) {
        return `(Parley could not read round ${ref.round} of review ${ref.reviewId}: ${(error as Error).message})`;
      }
    }
    const file = detail?.files.find((f) => f.path === ref.path);
    if (!file) return `(${ref.path} is not in round ${ref.round} of review ${ref.reviewId})`;
    return textOf(file, ref.version);
  }

  private hold(detail: RoundDetail): void {
    this.held.set(`${detail.review_id}#${detail.round}`, detail);
  }

  /** round/requested: an agent asks this window's person for a review. */
  onRequested(round: WaitingRound): void {
    const folders = this.folders();
    if (folders.length > 0 && !folders.some((f) => round.workspace === f || round.workspace.startsWith(`${f}/`) || f.startsWith(`${round.workspace}/`))) return;
    this.waiting.set(round.review_id, round);
    this.renderStatus();
    this.tell(round);
  }

  /** Shows the notification for `round`, once per round in this window. */
  private tell(round: WaitingRound): void {
    const key = `${round.review_id}#${round.round}`;
    if (this.told.has(key)) return;
    this.told.add(key);
    if (this.open?.review_id === round.review_id && this.open.round === round.round) return;
    this.log.info(`review ${round.review_id} round ${round.round} asked by ${round.asked_by}: ${shortSummary(round.summary)}`);
    this.log.trace('round-requested', { review_id: round.review_id, round: round.round });
    void vscode.window.showInformationMessage(requestText(round), 'Review').then((choice) => {
      if (choice === 'Review') void this.openRound(round.review_id);
    });
  }

  /** round/changed: drafts changed somewhere, or the round was submitted or cancelled. */
  onChanged(change: RoundChanged): void {
    const open = this.open;
    const ours = open?.review_id === change.review_id && open.round === change.round;
    if (change.state === 'drafts') {
      const waiting = this.waiting.get(change.review_id);
      if (waiting && waiting.round === change.round) waiting.drafts = change.drafts.length;
      if (ours) this.comments.setDrafts(change.drafts);
      return;
    }
    const waiting = this.waiting.get(change.review_id);
    const listed = waiting !== undefined && waiting.round <= change.round;
    if (listed) this.waiting.delete(change.review_id);
    this.renderStatus();
    if (ours) this.close();
    if (this.submitting === change.review_id) return;
    // The review being read, or a plan the person was told of: say where it went (a plan answered in the host leaves the list).
    if (ours || (listed && change.state === 'answered_elsewhere')) {
      const round = ours && open ? { ...open, plan: isPlan(open) } : { ...change, ...waiting };
      this.log.trace('round-ended', { review_id: change.review_id, round: change.round, state: change.state });
      void vscode.window.showInformationMessage(endedText(round, change.state, change.verdict));
    }
  }

  /** After each hello: the rounds waiting for this window's folders, told as if just asked; the open review read again. */
  async onConnected(): Promise<void> {
    const folders = this.folders();
    const found = new Map<string, WaitingRound>();
    for (const workspace of folders) {
      const { rounds } = await this.hub.request<{ rounds: WaitingRound[] }>('inbox', { workspace } satisfies InboxParams);
      for (const round of rounds) found.set(round.review_id, round);
    }
    this.waiting.clear();
    for (const round of sortWaiting([...found.values()])) this.waiting.set(round.review_id, round);
    this.renderStatus();
    for (const round of [...this.waiting.values()].reverse()) this.tell(round);
    if (this.open) {
      const open = this.open;
      try {
        const detail = await this.hub.request<RoundDetail>('round/get', { review_id: open.review_id } satisfies RoundGetParams);
        if (detail.round !== open.round || !this.waiting.has(open.review_id)) this.close();
        else this.show(detail);
      } catch {
        this.close();
      }
    }
  }

  private renderStatus(): void {
    const count = this.waiting.size;
    if (count === 0) {
      this.status.hide();
      return;
    }
    const newest = sortWaiting([...this.waiting.values()])[0];
    const plans = [...this.waiting.values()].filter((r) => isPlan(r)).length;
    this.status.text = `$(git-pull-request) ${waitingLabel(count, plans)}`;
    this.status.tooltip = count === 1 && newest ? `${requestText(newest)}\nClick to review.` : `Agents wait for your review of ${count} ${plans === count ? 'plans' : 'changes'}. Click to pick one.`;
    this.status.show();
  }

  waitingRounds(): WaitingRound[] {
    return sortWaiting([...this.waiting.values()]);
  }

  /** Parley: Review Agent Changes: the one waiting round, or a pick among several. */
  async reviewAgentChanges(): Promise<void> {
    const rounds = this.waitingRounds();
    if (rounds.length === 0) {
      void vscode.window.showInformationMessage('Parley: no agent is waiting for your review in this window\'s folders.');
      return;
    }
    const round = rounds.length === 1 ? rounds[0] : await this.pick(rounds, 'Pick the change to review');
    if (round) await this.openRound(round.review_id);
  }

  private async pick(rounds: WaitingRound[], placeHolder: string): Promise<WaitingRound | undefined> {
    const picked = await vscode.window.showQuickPick(
      rounds.map((round) => ({
        label: isPlan(round) ? `${agentName(round.asked_by)}'s plan: ${planTitle(round.summary, 80)}` : `${agentName(round.asked_by)}: ${shortSummary(round.summary, 80)}`,
        description: `${round.review_id} · round ${round.round}`,
        detail: `${round.files.length === 1 ? '1 file' : `${round.files.length} files`}${round.drafts > 0 ? ` · ${round.drafts} draft(s)` : ''} · asked ${new Date(round.requested_at).toLocaleString()}`,
        round,
      })),
      { placeHolder, matchOnDescription: true, matchOnDetail: true },
    );
    return picked?.round;
  }

  /** Opens round `reviewId` for review: the tree of its files and the first file's diff. */
  async openRound(reviewId: string): Promise<void> {
    // A notification outlives its round: its Review button may come after the round was submitted or cancelled.
    if (!this.waiting.has(reviewId)) {
      void vscode.window.showInformationMessage(`Parley: review ${reviewId} is no longer waiting for you (it was submitted or cancelled).`);
      return;
    }
    let detail: RoundDetail;
    try {
      detail = await this.hub.request<RoundDetail>('round/get', { review_id: reviewId } satisfies RoundGetParams);
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley could not open review ${reviewId}: ${(error as Error).message}`);
      return;
    }
    // From the second round on, what changed since the person's last look comes first.
    this.mode = detail.previous_round !== null ? 'since' : 'whole';
    this.show(detail);
    this.log.info(`reviewing ${detail.review_id} round ${detail.round}: ${detail.files.length} file(s), ${detail.drafts.length} draft(s)`);
    this.log.trace('round-opened', { review_id: detail.review_id, round: detail.round });
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    const first = detail.files.find((f) => f.changed_since_previous || detail.previous_round === null) ?? detail.files[0];
    if (first) await this.openFile(first.path);
  }

  private show(detail: RoundDetail): void {
    this.open = detail;
    this.hold(detail);
    this.comments.show(detail);
    this.tree.set(detail, this.mode, detail.drafts);
    void this.setContext();
  }

  private async setContext(): Promise<void> {
    const open = this.open;
    await vscode.commands.executeCommand('setContext', 'parley.reviewing', open !== undefined);
    await vscode.commands.executeCommand('setContext', 'parley.round.hasPrevious', open?.previous_round != null);
    await vscode.commands.executeCommand('setContext', 'parley.round.since', open !== undefined && this.mode === 'since');
  }

  /** Opens the diff of `path` in the open round, in the current mode. */
  async openFile(path: unknown): Promise<void> {
    const detail = this.open;
    const file = detail?.files.find((f) => f.path === path);
    if (!detail || !file) return;
    if (file.binary || file.too_large) {
      void vscode.window.showInformationMessage(`Parley: ${file.path} is ${file.binary ? 'a binary file' : 'too large to show'}; its change is not shown here.`);
      return;
    }
    const { left, right } = diffSides(file, this.mode);
    const title = diffTitle(detail, file.path, this.mode === 'since' && left === 'previous');
    await vscode.commands.executeCommand('vscode.diff', roundUri(detail, left, file.path), roundUri(detail, right, file.path), title, { preview: false });
  }

  /** Switches between the whole change and the changes since the previous round, reopening the diffs shown. */
  async setMode(mode: DiffMode): Promise<void> {
    const detail = this.open;
    if (!detail || (mode === 'since' && detail.previous_round === null) || mode === this.mode) return;
    this.mode = mode;
    this.tree.set(detail, mode, this.comments.current());
    await this.setContext();
    const shown = this.roundTabs(detail.review_id);
    const paths = [...new Set(shown.map((t) => parseRoundPath((t.input as vscode.TabInputTextDiff).modified.path)?.path).filter((p): p is string => p !== undefined))];
    const active = vscode.window.tabGroups.activeTabGroup.activeTab;
    const activePath = active?.input instanceof vscode.TabInputTextDiff && active.input.modified.scheme === SCHEME ? parseRoundPath(active.input.modified.path)?.path : undefined;
    await vscode.window.tabGroups.close(shown);
    for (const path of paths.filter((p) => p !== activePath)) await this.openFile(path);
    if (activePath) await this.openFile(activePath);
    else if (paths.length === 0) {
      const first = detail.files.find((f) => mode === 'whole' || f.changed_since_previous);
      if (first) await this.openFile(first.path);
    }
  }

  /** The diff tabs of a review. */
  private roundTabs(reviewId: string): vscode.Tab[] {
    const tabs: vscode.Tab[] = [];
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        if (!(tab.input instanceof vscode.TabInputTextDiff) || tab.input.modified.scheme !== SCHEME) continue;
        if (parseRoundPath(tab.input.modified.path)?.reviewId === reviewId) tabs.push(tab);
      }
    }
    return tabs;
  }

  /** Parley: Submit Review: the verdict, a summary, then round/submit. */
  async submit(): Promise<void> {
    let detail = this.open;
    if (!detail) {
      const rounds = this.waitingRounds();
      const round = rounds.length === 1 ? rounds[0] : rounds.length > 1 ? await this.pick(rounds, 'Pick the review to submit') : undefined;
      if (!round) {
        if (rounds.length === 0) void vscode.window.showInformationMessage('Parley: no review is waiting for you in this window\'s folders.');
        return;
      }
      await this.openRound(round.review_id);
      detail = this.open;
      if (!detail) return;
    }
    const drafts = this.comments.current().length;
    const plan = isPlan(detail);
    const what = plan ? `${agentName(detail.asked_by)}'s plan` : `round ${detail.round}`;
    const choice = await vscode.window.showQuickPick(
      verdictChoices(drafts, plan).map((c) => ({ label: c.label, detail: c.detail, verdict: c.verdict })),
      { title: `Submit your review of ${what} (${drafts === 1 ? '1 comment' : `${drafts} comments`})`, placeHolder: 'Your verdict', ignoreFocusOut: true },
    );
    if (!choice) return;
    const summary = await vscode.window.showInputBox({
      title: `${choice.label}: summary for ${agentName(detail.asked_by)}`,
      prompt: 'What the agent should know beyond your comments (optional)',
      placeHolder: choice.verdict === 'approve' ? 'Looks good' : 'What must change',
      ignoreFocusOut: true,
    });
    if (summary === undefined) return;
    const params: RoundSubmitParams = { review_id: detail.review_id, verdict: choice.verdict };
    if (summary.trim() !== '') params.summary = summary.trim();
    params.author = authorName();
    let result: SubmitResult;
    this.submitting = detail.review_id;
    try {
      result = await this.hub.request<SubmitResult>('round/submit', params);
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley could not submit the review: ${(error as Error).message}`);
      return;
    } finally {
      this.submitting = undefined;
    }
    this.log.info(`submitted review ${result.review_id} round ${result.round}: ${result.verdict}`);
    this.log.trace('round-submitted', { review_id: result.review_id, round: result.round, verdict: result.verdict });
    this.waiting.delete(detail.review_id);
    this.renderStatus();
    if (this.open?.review_id === detail.review_id) this.close();
    const warnings = (result.warnings ?? []).length > 0 ? ` Warnings: ${(result.warnings ?? []).join('; ')}` : '';
    void vscode.window.showInformationMessage(`${submittedText(result, detail.asked_by, drafts, plan)}${warnings}`);
  }

  /** Closes the review: its threads, its tree and its diff tabs. */
  close(): void {
    const open = this.open;
    this.open = undefined;
    this.comments.clear();
    this.tree.set(undefined, 'whole', []);
    void this.setContext();
    if (open) void vscode.window.tabGroups.close(this.roundTabs(open.review_id));
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
