// How a daemon thread looks in VS Code's Comments UI: its label, its contextValue (which drives the thread's actions in package.json's menus), whether it sits on a range or on the whole file, and its comments. Imports nothing from vscode.

import { Thread } from '../hub/types';

export interface CommentView {
  author: string;
  body: string;
  timestamp: Date;
}

export interface ThreadView {
  /** `open…` threads have Reply and Resolve; `resolved` has Reopen. Matched by regex in package.json. */
  contextValue: 'open' | 'open-moved' | 'open-modified' | 'open-orphaned' | 'open-unreadable' | 'resolved';
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

export function threadView(thread: Thread): ThreadView {
  const comments: CommentView[] = thread.comments.map((comment) => ({
    author: comment.author,
    body: comment.body,
    timestamp: new Date(comment.created_at),
  }));
  const fileLevel = thread.state === 'orphaned' || thread.state === 'unreadable';
  let label: string;
  let contextValue: ThreadView['contextValue'];
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
  const standing = standingLabel(thread);
  if (thread.resolved) {
    label = `${standing ?? 'Resolved'} · ${label}`;
    contextValue = 'resolved';
  } else if (standing) {
    label = `${label} · ${standing}`;
  }
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

/** The status bar's words for the open threads. */
export function countLabel(open: number): string {
  return open === 1 ? '1 thread' : `${open} threads`;
}
