// How a daemon thread looks in VS Code's Comments UI: its label, its contextValue (which drives the thread's actions in package.json's menus), whether it sits on a range or on the whole file, and its comments. Imports nothing from vscode.

import { Delivery, Thread } from '../hub/types';
import { threadLabel } from '../walkthrough/model';

export interface CommentView {
  author: string;
  body: string;
  timestamp: Date;
  /** Where the comment stands as a message to an agent: `waiting for claude-1`. */
  label?: string;
}

export interface ThreadView {
  /**
   * `open…` threads have Reply and Resolve; `resolved` has Reopen; `…-gone` (a message waits for
   * an agent no longer at work) has Send to Another Agent; `…-typeable` (a message waits for an agent that runs in one of
   * this window's terminals) has Type into the Agent's Terminal; `…-github…` (synced with a pull request) has Open on GitHub.
   * Matched by regex in package.json.
   */
  contextValue: string;
  label: string;
  resolved: boolean;
  /** Shown on the whole file, not on a range: its text is gone or unreadable. */
  fileLevel: boolean;
  comments: CommentView[];
}

/** 1-based lines, as people count them: `L40` or `L40-L44`. */
export function lineSpan(thread: Thread): string {
  const first = thread.range.start.line + 1;
  // A range ending at column 0 ends on the line before.
  const lastLine = thread.range.end.character === 0 && thread.range.end.line > thread.range.start.line ? thread.range.end.line : thread.range.end.line + 1;
  return lastLine > first ? `L${first}-L${lastLine}` : `L${first}`;
}

function quoteBlock(text: string): string {
  const fence = text.includes('```') ? '~~~~' : '```';
  return `${fence}\n${text}\n${fence}`;
}

/**
 * How `thread` shows; `atWork` tells whether an agent (by its short name) is at work now, so that a
 * message waiting for one that has gone says so (undefined: not known, nothing said); `typeable`, whether it runs in
 * one of this window's terminals, so that a message waiting for it can be typed there.
 */
export function threadView(thread: Thread, atWork?: (agent: string) => boolean, typeable?: (agent: string) => boolean): ThreadView {
  const deliveries = new Map((thread.deliveries ?? []).map((d) => [d.comment_id, d]));
  const comments: CommentView[] = thread.comments.map((comment) => {
    const view: CommentView = { author: comment.author, body: comment.body, timestamp: new Date(comment.created_at) };
    const delivery = deliveries.get(comment.id);
    if (delivery) view.label = deliveryLabel(delivery, atWork);
    return view;
  });
  const fileLevel = thread.state === 'orphaned' || thread.state === 'unreadable';
  let label: string;
  let contextValue: string;
  switch (thread.state) {
    case 'moved':
      label = `Moved (${lineSpan(thread)})`;
      contextValue = 'open-moved';
      break;
    case 'modified':
      label = `Text changed (${Math.round(thread.confidence * 100)}% similar)`;
      contextValue = 'open-modified';
      break;
    case 'orphaned':
      label = `Orphaned (was ${lineSpan(thread)})`;
      contextValue = 'open-orphaned';
      break;
    case 'unreadable':
      label = `File unreadable (was ${lineSpan(thread)})`;
      contextValue = 'open-unreadable';
      break;
    default:
      label = 'Feedback';
      contextValue = 'open';
  }
  if (thread.finding) {
    // A reviewer's finding: say so, with its weight, where people look first.
    const { severity, category, round } = thread.finding;
    label = `${label === 'Feedback' ? 'Finding' : label} · ${severity} ${category} (round ${round})`;
  }
  if (thread.walkthrough) {
    // A comment an agent placed with its walkthrough: say whose, where people look first.
    const walkthrough = threadLabel(thread.walkthrough.title);
    label = label === 'Feedback' ? walkthrough : `${walkthrough} · ${label}`;
  }
  if (thread.github) {
    // Brought in from a pull request: say where it lives, and how GitHub sees its lines.
    const { pull_request, side, outdated } = thread.github;
    const where = `GitHub ${pull_request}${side === 'LEFT' ? ' (removed lines)' : ''}${outdated ? ' (outdated)' : ''}`;
    label = label === 'Feedback' ? where : `${where} · ${label}`;
  }
  if (fileLevel || thread.state === 'modified') {
    // Say what the thread was about, since the text it was on is gone or changed. After the
    // conversation, so the Comments panel still names the thread by its first comment.
    comments.push({
      author: 'Parley',
      body:
        thread.state === 'modified'
          ? `The text changed. It was:\n\n${quoteBlock(thread.original_quote)}`
          : `The text this thread was on is gone from the file. It was at ${lineSpan(thread)}:\n\n${quoteBlock(thread.original_quote)}`,
      timestamp: new Date(thread.updated_at),
    });
  }
  // A walkthrough's comment nobody has answered is "seen" by the agent that wrote it: not news.
  const unanswered = thread.comments.every((c) => c.author === thread.comments[0]?.author);
  const standing = thread.walkthrough && unanswered && thread.standing === 'seen' ? undefined : standingLabel(thread);
  const newest = newestDelivery(thread);
  if (thread.resolved) {
    label = `${standing ?? 'Resolved'} · ${label}`;
    contextValue = 'resolved';
  } else if (newest) {
    // A message to an agent says more than the standing: who has it, and how far it got.
    label = `${label} · ${deliveryLabel(newest, atWork)}`;
    if (agentGone(newest, atWork)) contextValue = `${contextValue}-gone`;
    else if (newest.state === 'waiting' && typeable?.(newest.agent)) contextValue = `${contextValue}-typeable`;
  } else if (standing) {
    label = `${label} · ${standing}`;
  }
  // `…-github` threads have Open on GitHub; inserted after the base so the other menus' matches hold.
  if (thread.github) contextValue = contextValue.replace(/^(open|resolved)/, '$1-github');
  return { contextValue, label, resolved: thread.resolved, fileLevel, comments };
}

/** Where the thread stands with the agents, as the human reads it in the label: `Open`, `Seen by claude`, `Addressed by claude`, `Resolved by you`, `Resolved by claude`. Undefined from a daemon that does not say. */
export function standingLabel(thread: Thread): string | undefined {
  switch (thread.standing) {
    case 'open':
      return 'Open';
    case 'seen':
      return `Seen by ${thread.seen_by ?? 'an agent'}`;
    case 'addressed':
      return `Addressed by ${thread.addressed_by ?? 'an agent'}`;
    case 'resolved':
      return thread.resolved_by === 'agent' ? `Resolved by ${thread.addressed_by ?? 'an agent'}` : 'Resolved by you';
    default:
      return undefined;
  }
}

/** How a message reached its agent, in the words of `delivered to claude-1 (…)`. */
const VIA_WORDS: Record<string, string> = {
  'tool-answer': 'in its next tool answer',
  wait: 'in the call it was waiting in',
  channel: 'pushed to its session',
  hook: "through its host's hook",
  terminal: 'typed into its terminal',
  feedback: 'found in its feedback',
};

/** Whether a message still waits for an agent no longer at work. */
export function agentGone(delivery: Delivery, atWork?: (agent: string) => boolean): boolean {
  return delivery.state === 'waiting' && atWork !== undefined && !atWork(delivery.agent);
}

/** Where a person's message to an agent stands: `waiting for claude-1`, `delivered to claude-1 (in its next tool answer)`, `read by claude-1`, `answered by claude-1`. */
export function deliveryLabel(delivery: Delivery, atWork?: (agent: string) => boolean): string {
  const agent = delivery.agent;
  switch (delivery.state) {
    case 'waiting':
      return agentGone(delivery, atWork) ? `waiting for ${agent}, which is no longer at work` : `waiting for ${agent}`;
    case 'delivered': {
      const via = delivery.via ? VIA_WORDS[delivery.via] ?? `by ${delivery.via}` : undefined;
      return via ? `delivered to ${agent} (${via})` : `delivered to ${agent}`;
    }
    case 'read':
      return `read by ${agent}`;
    case 'answered':
      return `answered by ${agent}`;
    default:
      return `${String(delivery.state)} (${agent})`;
  }
}

/** The thread's newest message to an agent, the one its label tells about. */
export function newestDelivery(thread: Thread): Delivery | undefined {
  const deliveries = thread.deliveries ?? [];
  if (deliveries.length === 0) return undefined;
  const order = new Map(thread.comments.map((c, i) => [c.id, i]));
  return [...deliveries].sort((a, b) => (order.get(a.comment_id) ?? -1) - (order.get(b.comment_id) ?? -1)).at(-1);
}

/** The status bar's words for the open threads. */
export function countLabel(open: number): string {
  return open === 1 ? '1 thread' : `${open} threads`;
}
