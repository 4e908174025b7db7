// The pure part of reviewing an agent's round: where each text of a round lives (the `parley-round:` paths), which side and lines of a diff a person can comment on, suggestions in a comment's text (a ```suggestion block, as GitHub writes them), how a draft looks in a comment thread and which threads to add, update or remove when the drafts change, and the words the notifications and pickers use. Imports nothing from vscode.

import { Draft, DraftSide, EarlierComment, RoundDetail, RoundFile, SubmitResult, Verdict, WaitingRound } from '../hub/types';

export const SCHEME = 'parley-round';

/** Which text of a round file a `parley-round:` document holds; `empty` stands for the missing side of an added or deleted file. */
export type Version = 'before' | 'after' | 'previous' | 'empty';
const VERSIONS: readonly Version[] = ['before', 'after', 'previous', 'empty'];

/** Whole change (before → after), or the changes since the previous round (previous → after). */
export type DiffMode = 'whole' | 'since';

export interface RoundRef {
  reviewId: string;
  round: number;
  version: Version;
  /** The file's path in the repository, with `/`. */
  path: string;
}

/**
 * The path of a round text's URI: `/<review>/<round>/<version>/<file path>`. The file's own
 * path comes last so that the tab shows its name and VS Code picks its language; the round is
 * in it because VS Code keeps a document's text per URI, and a new round has new texts.
 */
export function roundPath(ref: RoundRef): string {
  return `/${encodeURIComponent(ref.reviewId)}/${ref.round}/${ref.version}/${ref.path}`;
}

export function parseRoundPath(path: string): RoundRef | undefined {
  const match = /^\/([^/]+)\/(\d+)\/([a-z]+)\/(.+)$/.exec(path);
  if (!match) return undefined;
  const version = match[3] as Version;
  if (!VERSIONS.includes(version)) return undefined;
  return { reviewId: decodeURIComponent(match[1]), round: Number(match[2]), version, path: match[4] };
}

/** The text a version of `file` shows ("" for a side the file does not have). */
export function textOf(file: RoundFile, version: Version): string {
  switch (version) {
    case 'before':
      return file.before ?? '';
    case 'after':
      return file.after ?? '';
    case 'previous':
      return file.previous ?? file.before ?? '';
    default:
      return '';
  }
}

/** The two documents of a file's diff in `mode`. The previous round's text, when the file was not in that round, is the base's. */
export function diffSides(file: RoundFile, mode: DiffMode): { left: Version; right: Version } {
  const right: Version = file.after === null ? 'empty' : 'after';
  if (mode === 'since' && file.previous !== null) return { left: 'previous', right };
  return { left: file.before === null ? 'empty' : 'before', right };
}

/**
 * The side of the review a document's comments go to: the base's text is the old side, the
 * agent's the new one. The previous round's text is neither (the daemon anchors comments on
 * the base or the change), nor is the missing side of an added or deleted file.
 */
export function sideOf(file: RoundFile, version: Version): DraftSide | undefined {
  if (version === 'before' && file.before !== null && file.status !== 'added') return 'old';
  if (version === 'after' && file.after !== null && file.status !== 'deleted') return 'new';
  return undefined;
}

/** The version whose document holds comments of `side`. */
export function versionOf(side: DraftSide): Version {
  return side === 'old' ? 'before' : 'after';
}

/** How many lines `text` has as git counts them: a final newline ends the last line, it does not start another. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** The lines (0-based, inclusive) of `version` a person can comment on; undefined: none. */
export function commentableLines(file: RoundFile, version: Version): { start: number; end: number } | undefined {
  const side = sideOf(file, version);
  if (!side) return undefined;
  const count = lineCount(textOf(file, version));
  return count === 0 ? undefined : { start: 0, end: count - 1 };
}

const FENCE_OPEN = /^\s*(`{3,}|~{3,})\s*suggestion\s*$/;
const SEVERITIES = ['critical', 'major', 'minor', 'suggestion'];

/** A comment may start with its severity in brackets, as in Neovim: `[major] Check the length`. Without one, the daemon takes it from the verdict. */
export function splitSeverity(text: string): { severity: string | null; rest: string } {
  const match = /^\s*\[([A-Za-z]+)\]\s*([\s\S]*)$/.exec(text);
  if (match && SEVERITIES.includes(match[1].toLowerCase()) && match[2].trim() !== '') return { severity: match[1].toLowerCase(), rest: match[2] };
  return { severity: null, rest: text };
}

/**
 * Splits a comment as a person writes it into its text, a suggested replacement for the
 * lines and a severity: a fenced block whose info string is `suggestion`, as on GitHub, and a
 * leading `[major]`. The rest of the text is the comment; a suggestion alone gets a body
 * saying so (the daemon refuses an empty body). An empty block suggests deleting the lines.
 * Only the first block is a suggestion.
 */
export function parseComment(text: string): { body: string; suggestion: string | null; severity: string | null } {
  const { severity, rest } = splitSeverity(text);
  const lines = rest.replace(/\r\n/g, '\n').split('\n');
  const open = lines.findIndex((line) => FENCE_OPEN.test(line));
  if (open < 0) return { body: rest.trim(), suggestion: null, severity };
  const fence = (FENCE_OPEN.exec(lines[open]) ?? ['', '```'])[1];
  let close = -1;
  for (let i = open + 1; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    if (trimmed.length >= fence.length && trimmed[0] === fence[0] && /^(`+|~+)$/.test(trimmed)) {
      close = i;
      break;
    }
  }
  // An unclosed block runs to the end, as markdown reads it.
  const end = close < 0 ? lines.length : close;
  const suggestion = lines.slice(open + 1, end).join('\n');
  // Text before and after the block stay separate paragraphs.
  const body = [lines.slice(0, open).join('\n').trim(), lines.slice(end + 1).join('\n').trim()].filter((part) => part !== '').join('\n\n');
  return { body: body === '' ? 'Suggested change.' : body, suggestion, severity };
}

function fenceFor(text: string): string {
  let fence = '```';
  while (text.includes(fence)) fence += '`';
  return fence;
}

/** A draft's text as the person edits it again: its severity tag, the body, then its suggestion as a ```suggestion block. */
export function composeComment(body: string, suggestion: string | null, severity: string | null = null): string {
  const text = severity ? `[${severity}] ${body}` : body;
  if (suggestion === null) return text;
  const fence = fenceFor(suggestion);
  return `${text}\n\n${fence}suggestion\n${suggestion}\n${fence}`;
}

/** 1-based lines for people: `line 4` or `lines 4-6`. */
export function linesLabel(start: number, end: number): string {
  return end > start ? `lines ${start + 1}-${end + 1}` : `line ${start + 1}`;
}

/** How a draft reads in its comment thread: its text, then the suggested replacement as code. */
export function renderDraft(draft: Draft): string {
  const severity = draft.severity ? `**${draft.severity}** · ` : '';
  if (draft.suggestion === null) return `${severity}${draft.body}`;
  const fence = fenceFor(draft.suggestion);
  const replacement = draft.suggestion === '' ? '_(delete these lines)_' : `${fence}\n${draft.suggestion}\n${fence}`;
  return `${severity}${draft.body}\n\n**Suggested change** (${linesLabel(draft.start_line, draft.end_line)}):\n\n${replacement}`;
}

/** A draft's label: it is not sent yet, and which side it is on (the removed lines' side is easy to miss). */
export function draftLabel(draft: Draft): string {
  return draft.side === 'old' ? 'Draft · on the old text' : 'Draft';
}

/** What a shown draft thread depends on: when it changes, the thread is shown again. */
export function draftKey(draft: Draft): string {
  return JSON.stringify([draft.path, draft.side, draft.start_line, draft.end_line, draft.body, draft.suggestion, draft.severity]);
}

export interface Reconciled {
  add: Draft[];
  update: Draft[];
  remove: string[];
}

/** Which draft threads to create, show again or dispose, given those shown (id → draftKey) and the daemon's drafts. */
export function reconcile(shown: ReadonlyMap<string, string>, drafts: readonly Draft[]): Reconciled {
  const add: Draft[] = [];
  const update: Draft[] = [];
  const keep = new Set<string>();
  for (const draft of drafts) {
    keep.add(draft.id);
    const key = shown.get(draft.id);
    if (key === undefined) add.push(draft);
    else if (key !== draftKey(draft)) update.push(draft);
  }
  const remove = [...shown.keys()].filter((id) => !keep.has(id));
  return { add, update, remove };
}

const STATE_WORDS: Record<EarlierComment['state'], string> = {
  open: 'open',
  seen: 'seen by the agent',
  addressed: 'addressed by the agent',
  resolved: 'resolved',
};

/** An earlier round's comment's label: `Round 1 · addressed by the agent` (`Plan 1 · …` on a plan). */
export function earlierLabel(comment: EarlierComment, plan = false): string {
  return `${plan ? 'Plan' : 'Round'} ${comment.round} · ${STATE_WORDS[comment.state] ?? comment.state}`;
}

/** The line an earlier comment is shown on in a text of `lines` lines (its line may be past the end now). */
export function clampLine(line: number, lines: number): number {
  return Math.max(0, Math.min(line, Math.max(lines - 1, 0)));
}

/** The agent, as people name it: `Claude` for claude-code, else the client's own name. */
export function agentName(askedBy: string): string {
  const known: Record<string, string> = { 'claude-code': 'Claude', 'claude-ai': 'Claude', codex: 'Codex', 'codex-mcp-client': 'Codex', cursor: 'Cursor', 'gemini-cli': 'Gemini' };
  return known[askedBy] ?? (askedBy === '' ? 'An agent' : askedBy);
}

/** The first line of a summary, cut to `max` characters. */
export function shortSummary(summary: string, max = 120): string {
  const first = summary.trim().split('\n')[0] ?? '';
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

/** Whether a round reviews an agent's plan rather than a change (`plan` in the inbox, `scope: "plan"` in round/get). */
export function isPlan(round: { plan?: boolean; scope?: string }): boolean {
  return round.plan === true || round.scope === 'plan';
}

/** A plan's title: its summary without the `Plan: ` the daemon puts before it. */
export function planTitle(summary: string, max = 120): string {
  return shortSummary(summary.replace(/^\s*Plan:\s*/, ''), max);
}

/** The notification: `Claude asks you to review: <summary>` (with the round after the first); for a plan, `Claude asks you to review its plan: <title>`. */
export function requestText(round: WaitingRound): string {
  if (isPlan(round)) {
    const again = round.round > 1 ? ` (revised, plan ${round.round})` : '';
    return `${agentName(round.asked_by)} asks you to review its plan${again}: ${planTitle(round.summary)}`;
  }
  const again = round.round > 1 ? ` (round ${round.round})` : '';
  return `${agentName(round.asked_by)} asks you to review${again}: ${shortSummary(round.summary)}`;
}

/** The status bar's words for the waiting rounds: plans are named so when all are plans. */
export function waitingLabel(count: number, plans = 0): string {
  if (plans === count && count > 0) return count === 1 ? '1 plan waiting' : `${count} plans waiting`;
  return count === 1 ? '1 review waiting' : `${count} reviews waiting`;
}

/** The Parley Review view's message and description for the open round. */
export function reviewHeading(detail: RoundDetail, mode: DiffMode): { message: string; description: string } {
  const since = detail.previous_round !== null && mode === 'since';
  if (isPlan(detail)) {
    return {
      message: `${agentName(detail.asked_by)}'s plan: ${planTitle(detail.summary, 200)}`,
      description: `plan ${detail.round} · ${since ? `changes since plan ${detail.previous_round}` : 'whole plan'}`,
    };
  }
  return {
    message: `${agentName(detail.asked_by)} asks: ${shortSummary(detail.summary, 200)}`,
    description: `round ${detail.round} · ${since ? `changes since round ${detail.previous_round}` : 'whole change'}`,
  };
}

/** A diff tab's title: `lib.rs (round 2: since round 1)`, or for a plan `plan.md (plan 2: since plan 1)`. */
export function diffTitle(detail: RoundDetail, path: string, since: boolean): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const word = isPlan(detail) ? 'plan' : 'round';
  return `${name} (${word} ${detail.round}: ${since ? `since ${word} ${detail.previous_round}` : isPlan(detail) ? 'whole plan' : 'whole change'})`;
}

/** Newest first, as the inbox lists them. */
export function sortWaiting(rounds: readonly WaitingRound[]): WaitingRound[] {
  return [...rounds].sort((a, b) => b.requested_at.localeCompare(a.requested_at) || b.review_id.localeCompare(a.review_id));
}

/** The round's files: those changed since the previous round, and those the same as then (shown folded). */
export function groupFiles(detail: RoundDetail): { changed: RoundFile[]; unchanged: RoundFile[] } {
  if (detail.previous_round === null) return { changed: [...detail.files], unchanged: [] };
  return { changed: detail.files.filter((f) => f.changed_since_previous), unchanged: detail.files.filter((f) => !f.changed_since_previous) };
}

/** A file's description in the review tree: its status, and where it came from when renamed. */
export function fileDescription(file: RoundFile): string {
  const what = file.binary ? `${file.status}, binary` : file.too_large ? `${file.status}, too large to show` : file.status;
  return file.status === 'renamed' && file.old_path ? `${what} from ${file.old_path}` : what;
}

export interface VerdictChoice {
  verdict: Verdict;
  label: string;
  detail: string;
}

/** The verdicts offered on submit, with what the agent will get; a plan's are approve (with comments, when there are) and request changes. */
export function verdictChoices(drafts: number, plan = false): VerdictChoice[] {
  const comments = drafts === 1 ? '1 comment' : `${drafts} comments`;
  if (plan) {
    return [
      drafts > 0
        ? { verdict: 'approve', label: 'Approve with comments', detail: `The agent goes ahead with the plan; your ${comments} reach it as notes` }
        : { verdict: 'approve', label: 'Approve', detail: 'The agent goes ahead with the plan' },
      { verdict: 'request_changes', label: 'Request changes', detail: drafts > 0 ? `The agent revises the plan, with your ${comments} and summary` : 'The agent revises the plan, with your summary' },
    ];
  }
  return [
    { verdict: 'approve', label: 'Approve', detail: drafts > 0 ? `The agent may go on; your ${comments} are suggestions (lgtm_with_suggestions)` : 'The agent may go on (lgtm)' },
    { verdict: 'request_changes', label: 'Request changes', detail: `The agent must change its work and ask again (needs_changes, with your ${comments})` },
    { verdict: 'comment', label: 'Comment', detail: drafts > 0 ? `Send your ${comments} without approving (needs_changes)` : 'Send only your summary (lgtm_with_suggestions)' },
  ];
}

/** What the person is told once the review is sent, with the number of comments they wrote (the review the agent gets may add the summary as one). */
export function submittedText(result: SubmitResult, askedBy: string, comments: number, plan = false): string {
  const count = comments === 0 ? 'no comments' : comments === 1 ? '1 comment' : `${comments} comments`;
  if (plan) {
    const verdict = result.verdict === 'needs_changes' ? 'changes requested' : comments > 0 ? 'approved with comments' : 'approved';
    return `Your verdict on ${agentName(askedBy)}'s plan ${result.round} is sent: ${verdict}, ${count}.`;
  }
  const verdict = result.verdict.replace(/_/g, ' ');
  const threads = result.threads.length > 0 ? `; ${result.threads.length === 1 ? '1 comment is' : `${result.threads.length} comments are`} now a thread on the code` : '';
  return `Review of round ${result.round} sent to ${agentName(askedBy)}: ${verdict}, ${count}${threads}.`;
}

/** What a window says when a round it listed ends elsewhere: cancelled, submitted from elsewhere, or a plan answered in the agent's host. */
export function endedText(round: { review_id: string; round: number; summary?: string; asked_by?: string; plan?: boolean; scope?: string }, state: string, verdict?: string): string {
  const agent = agentName(round.asked_by ?? '');
  const what = isPlan(round) ? `${agent}'s plan${round.summary ? ` "${planTitle(round.summary, 80)}"` : ''}` : `Round ${round.round} of review ${round.review_id}`;
  const hosts: Record<string, string> = { 'claude-code': 'Claude Code', codex: 'Codex' };
  if (state === 'answered_elsewhere') return `Parley: ${what} was answered in ${hosts[round.asked_by ?? ''] ?? "the agent's host"}; it no longer waits for you.`;
  if (state === 'cancelled') return `Parley: ${what} was cancelled by the agent.`;
  return `Parley: ${what} was submitted elsewhere${verdict ? ` (${verdict.replace(/_/g, ' ')})` : ''}.`;
}
