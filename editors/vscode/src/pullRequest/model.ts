// The pure part of a window's pull request: the status bar item's words (the pull request, what waits to be pushed, when it was last pulled and pushed), the push's preview (what a dry run says would go, and what would not, with why), the choices it offers, and what a pull or a push brought. Imports nothing from vscode.

import { LinkedPr, PrEvent, PrPullSummary, PrPushSummary, PrUnplaced } from '../hub/types';
import { ago } from '../asking/model';

/** How many things wait to be pushed (new threads, replies, resolutions), as pr/status counts them. */
export function waitingCount(linked: LinkedPr): number {
  const w = linked.waiting;
  return w ? w.threads + w.replies + w.resolutions : 0;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** What a pull brought, as a person reads it: `2 new threads, 1 reply`, or `nothing new`. */
export function brought(pulled: PrPullSummary): string {
  const parts = [
    pulled.new_threads > 0 ? plural(pulled.new_threads, 'new thread', 'new threads') : '',
    pulled.replies > 0 ? plural(pulled.replies, 'reply', 'replies') : '',
    pulled.resolved > 0 ? `${pulled.resolved} resolved` : '',
    pulled.reopened > 0 ? `${pulled.reopened} reopened` : '',
    pulled.outdated > 0 ? `${pulled.outdated} outdated` : '',
    pulled.gone > 0 ? `${pulled.gone} deleted on GitHub (kept here)` : '',
  ].filter((p) => p !== '');
  return parts.length > 0 ? parts.join(', ') : 'nothing new';
}

/** What waits, as a person reads it: `1 new thread, 2 replies`. */
function waitingWords(linked: LinkedPr): string {
  const w = linked.waiting;
  if (!w) return '';
  return [
    w.threads > 0 ? plural(w.threads, 'new thread', 'new threads') : '',
    w.replies > 0 ? plural(w.replies, 'reply', 'replies') : '',
    w.resolutions > 0 ? plural(w.resolutions, 'resolution', 'resolutions') : '',
  ]
    .filter((p) => p !== '')
    .join(', ');
}

/** The status bar item of a linked workspace: `$(git-pull-request) octo/app#7 · 2 to push`, and its tooltip. */
export function prStatus(linked: LinkedPr, now: Date): { text: string; tooltip: string } {
  const count = waitingCount(linked);
  const failed = linked.last_error !== undefined ? ' $(warning)' : '';
  const text = `$(git-pull-request) ${linked.pull_request}${count > 0 ? ` · ${count} to push` : ''}${failed}`;
  const state = linked.state && linked.state !== 'OPEN' ? ` (${linked.state.toLowerCase()})` : '';
  const lines = [`Parley: linked to ${linked.pull_request}${state}`];
  if (linked.last_pull) lines.push(`Last pull ${ago(linked.last_pull.at, now)}: ${brought(linked.last_pull)}`);
  else lines.push('Not pulled yet');
  if (linked.last_push) {
    const p = linked.last_push;
    const sent = [plural(p.threads, 'thread', 'threads'), plural(p.replies, 'reply', 'replies'), plural(p.resolutions, 'resolution', 'resolutions')].join(', ');
    const review = p.review === 'submitted' ? `, submitted (${p.event ?? 'comment'})` : p.review === 'pending' ? ', review pending on GitHub' : '';
    lines.push(`Last push ${ago(p.at, now)}: ${sent}${review}${p.not_sent > 0 ? `, ${p.not_sent} not sent` : ''}`);
  }
  if (count > 0) lines.push(`Waiting to be pushed: ${waitingWords(linked)}`);
  if (linked.last_error !== undefined) lines.push(`The last sync failed: ${linked.last_error}`);
  lines.push('Click to pull, push or open it on GitHub');
  return { text, tooltip: lines.join('\n') };
}

/** `12` or `12-14`. */
function lines(start: number, end: number): string {
  return start < end ? `${start}-${end}` : String(end);
}

/** A comment's first line, cut at 80 characters. */
export function firstLine(body: string): string {
  const first = body.split('\n', 1)[0].trim();
  return first.length > 80 ? `${first.slice(0, 79)}…` : first;
}

function unplacedLine(u: PrUnplaced): string {
  return `${u.path}${u.line !== undefined ? `:${u.line}` : ''}: ${u.reason}`;
}

/** Whether a push (or its dry run) sends anything. */
export function sendsAnything(pushed: PrPushSummary): boolean {
  return (pushed.threads?.length ?? 0) + (pushed.replies?.length ?? 0) + (pushed.resolutions?.length ?? 0) > 0;
}

/**
 * What a push sends (or, dry, would send), one item a line, under headings: the new threads with their place on the
 * head and their first line, the replies, the resolutions, then what is not sent with why, the threads left open for
 * their author and the notes.
 */
export function pushPlan(pushed: PrPushSummary): string {
  const out: string[] = [];
  const section = (title: string, items: string[]) => {
    if (items.length === 0) return;
    if (out.length > 0) out.push('');
    out.push(title, ...items.map((i) => `  ${i}`));
  };
  section('New threads:', (pushed.threads ?? []).map((t) => `${t.path}:${lines(t.start_line, t.line)}${t.side === 'LEFT' ? ' (removed lines)' : ''}: ${firstLine(t.body)}`));
  section('Replies:', (pushed.replies ?? []).map((r) => `${r.path}: ${firstLine(r.body)}`));
  section('Resolutions:', (pushed.resolutions ?? []).map((r) => `${r.resolved ? 'resolve' : 'reopen'} ${r.path}`));
  section('Not sent:', (pushed.not_sent ?? []).map(unplacedLine));
  section('Left open on GitHub for their author:', (pushed.left_open ?? []).map((l) => `${l.path} (resolved here by ${l.agent})`));
  section('Notes:', pushed.notes ?? []);
  if (!sendsAnything(pushed)) out.unshift(out.length > 0 ? 'Nothing new to push.\n' : 'Nothing new to push.');
  return out.join('\n');
}

/** The choices the push preview offers, in order, and the event each submits with (none: left pending). */
export const PUSH_CHOICES: readonly { label: string; event?: PrEvent }[] = [
  { label: 'Push (leave pending)' },
  { label: 'Push and comment', event: 'comment' },
  { label: 'Approve', event: 'approve' },
  { label: 'Request changes', event: 'request-changes' },
];

/** What a push did, in one sentence: `Pushed to octo/app#7: 1 thread, 1 reply; review submitted (comment).` */
export function pushedMessage(pullRequest: string, pushed: PrPushSummary): string {
  const parts = [
    (pushed.threads?.length ?? 0) > 0 ? plural(pushed.threads?.length ?? 0, 'thread', 'threads') : '',
    (pushed.replies?.length ?? 0) > 0 ? plural(pushed.replies?.length ?? 0, 'reply', 'replies') : '',
    (pushed.resolutions?.length ?? 0) > 0 ? plural(pushed.resolutions?.length ?? 0, 'resolution', 'resolutions') : '',
  ].filter((p) => p !== '');
  const what = parts.length > 0 ? `Pushed to ${pullRequest}: ${parts.join(', ')}` : `Nothing new pushed to ${pullRequest}`;
  const review =
    pushed.review === 'submitted'
      ? `; review submitted (${pushed.event ?? 'comment'})`
      : pushed.review === 'pending'
        ? '; the review is pending on GitHub: submit it there'
        : pushed.event !== undefined
          ? '; no review to submit'
          : '';
  const notSent = (pushed.not_sent?.length ?? 0) > 0 ? `. Not sent: ${(pushed.not_sent ?? []).map(unplacedLine).join('; ')}` : '';
  return `${what}${review}${notSent}.`;
}

/** What a pull did, in one sentence, with what could not be placed. */
export function pulledMessage(linked: LinkedPr, pulled: PrPullSummary): string {
  const closed = linked.state === 'MERGED' || linked.state === 'CLOSED' ? ` ${linked.pull_request} is ${linked.state.toLowerCase()}: its threads stay here.` : '';
  const unplaced = (linked.unplaced ?? []).length > 0 ? ` Not placed: ${(linked.unplaced ?? []).map(unplacedLine).join('; ')}.` : '';
  return `Pulled ${linked.pull_request}: ${brought(pulled)}.${closed}${unplaced}`;
}
