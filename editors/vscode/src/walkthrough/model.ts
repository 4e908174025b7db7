// A walkthrough as this window shows it: its steps (the comment blocks in order, each placed comment's places, or why it was not placed), where each action's click stands, the icons comments name, and what a gitdiff block's range compares, as git reads it. Imports nothing from vscode.

import { ActionClick, Walkthrough, WalkthroughBlock, WalkthroughPlace } from '../hub/types';

type CommentBlock = Extract<WalkthroughBlock, { kind: 'comment' }>;

/** One step of a walkthrough: a comment block at one of its places, or a comment that was not placed. */
export interface Step {
  /** The comment block's index. */
  block: number;
  /** Where it is; undefined for a comment that was not placed. */
  place?: WalkthroughPlace;
  /** Why it was not placed. */
  problem?: string;
  /** The comment's body, first line, for lists. */
  summary: string;
  location: string;
}

/** The comments in document order, one step per place (a comment on several references is several steps), and one for each comment not placed. */
export function steps(walkthrough: Walkthrough): Step[] {
  const byIndex = new Map(walkthrough.blocks.map((b) => [b.index, b]));
  const out: Step[] = [];
  const seen = new Set<number>();
  const order = walkthrough.parts.filter((p) => p.kind === 'block').map((p) => (p as { index: number }).index);
  // Blocks the parts do not name (an older daemon) follow in index order.
  for (const block of walkthrough.blocks) if (!order.includes(block.index)) order.push(block.index);
  for (const index of order) {
    const block = byIndex.get(index);
    if (!block || block.kind !== 'comment' || seen.has(index)) continue;
    seen.add(index);
    const summary = firstLine(block.body);
    if (block.places.length === 0) {
      out.push({ block: index, problem: block.problem ?? 'not placed', summary, location: block.location });
      continue;
    }
    for (const place of block.places) out.push({ block: index, place, summary, location: block.location });
  }
  return out;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  const plain = line.replace(/^#+\s*/, '').trim();
  return plain.length > 80 ? `${plain.slice(0, 79)}…` : plain;
}

/** `src/a.rs:3` or `src/a.rs:3-5` (1-based lines, as people count). */
export function describePlace(place: WalkthroughPlace): string {
  const first = place.start_line + 1;
  const last = place.end_line + 1;
  return last > first ? `${place.path}:${first}-${last}` : `${place.path}:${first}`;
}

/** The step after (`+1`) or before (`-1`) `current` (undefined: none yet), wrapping around; undefined when there are none. */
export function move(count: number, current: number | undefined, by: 1 | -1): number | undefined {
  if (count === 0) return undefined;
  if (current === undefined || current >= count) return by === 1 ? 0 : count - 1;
  return (current + by + count) % count;
}

/** How a message reached the agent, in the words of `delivered to claude-1 (…)` (as for threads). */
const VIA_WORDS: Record<string, string> = {
  'tool-answer': 'in its next tool answer',
  wait: 'in the call it was waiting in',
  channel: 'pushed to its session',
  hook: "through its host's hook",
};

/** Where a click's message stands: `waiting for claude-1`, `delivered to claude-1 (in its next tool answer)`, `read by claude-1`. */
export function clickLabel(click: ActionClick, agent: string): string {
  switch (click.state) {
    case 'waiting':
      return `waiting for ${agent}`;
    case 'delivered': {
      const via = click.via ? VIA_WORDS[click.via] ?? `by ${click.via}` : undefined;
      return via ? `delivered to ${agent} (${via})` : `delivered to ${agent}`;
    }
    case 'read':
      return `read by ${agent}`;
    default:
      return `${click.state} (${agent})`;
  }
}

/**
 * A comment's `icon:` as the name of a VS Code codicon (Symposium's agents write codicon names:
 * `lightbulb`, `warning`, `bug`…), which the panel draws from the codicon font the extension ships;
 * the speech balloon when there is none or it is not a name. (A name the font lacks shows the
 * balloon too: review.css draws it under every icon.)
 */
export function iconName(icon: string | undefined): string {
  const name = icon?.trim().toLowerCase() ?? '';
  return /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name) ? name : 'comment';
}

/** What a comment's thread is labelled with in the editor: the walkthrough it is part of. */
export function threadLabel(title: string): string {
  return `Walkthrough "${title}"`;
}

/** One side of a diff: a commit, the index, or the working tree. */
export type Side = { commit: string } | { index: true } | { working: true };

/** What a gitdiff range compares, as `git diff` reads it; the flags apply to `working`. */
export interface DiffSpec {
  left: Side;
  right: Side;
  /** `git diff` arguments naming the comparison (without `--name-status`). */
  args: string[];
  /** Left of a `A...B` range: the merge base of these two, found with `git merge-base`. */
  mergeBase?: [string, string];
}

/**
 * The comparison a gitdiff block shows: `A..B` (A to B), `A...B` (their merge base to B), a commit
 * alone (that commit to the working tree, as `git diff C`), `working` (HEAD to the working tree,
 * only the index's part with `exclude_unstaged`, only the unstaged part with `exclude_staged`) and
 * `staged` (HEAD to the index). An error says what to write instead.
 */
export function diffSpec(range: string, excludeStaged: boolean, excludeUnstaged: boolean): DiffSpec | { error: string } {
  const r = range.trim();
  if (r === '') return { error: 'the range is empty: write one such as HEAD~1..HEAD, working or staged' };
  if (/\s/.test(r) || r.startsWith('-')) return { error: `"${r}" is not a range: write one such as HEAD~1..HEAD, working or staged` };
  if (r === 'staged') return { left: { commit: 'HEAD' }, right: { index: true }, args: ['--cached', 'HEAD'] };
  if (r === 'working') {
    if (excludeStaged && excludeUnstaged) return { error: 'both exclude_staged and exclude_unstaged leave nothing of the working tree to show' };
    if (excludeUnstaged) return { left: { commit: 'HEAD' }, right: { index: true }, args: ['--cached', 'HEAD'] };
    if (excludeStaged) return { left: { index: true }, right: { working: true }, args: [] };
    return { left: { commit: 'HEAD' }, right: { working: true }, args: ['HEAD'] };
  }
  const three = r.indexOf('...');
  if (three >= 0) {
    const from = r.slice(0, three) || 'HEAD';
    const to = r.slice(three + 3) || 'HEAD';
    return { left: { commit: from }, right: { commit: to }, args: [`${from}...${to}`], mergeBase: [from, to] };
  }
  const two = r.indexOf('..');
  if (two >= 0) {
    const from = r.slice(0, two) || 'HEAD';
    const to = r.slice(two + 2) || 'HEAD';
    return { left: { commit: from }, right: { commit: to }, args: [from, to] };
  }
  return { left: { commit: r }, right: { working: true }, args: [r] };
}

/** A file a gitdiff lists: its path now, its path before (renames), and what happened to it. */
export interface ChangedFile {
  status: 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type changed';
  path: string;
  oldPath: string;
}

const STATUS: Record<string, ChangedFile['status']> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed' };

/** The files of `git diff --name-status -z` output, in git's order. */
export function parseNameStatus(output: string): ChangedFile[] {
  const fields = output.split('\0');
  const files: ChangedFile[] = [];
  let i = 0;
  while (i < fields.length) {
    const code = fields[i];
    if (code === '') {
      i++;
      continue;
    }
    const status = STATUS[code[0]] ?? 'modified';
    if (code[0] === 'R' || code[0] === 'C') {
      const oldPath = fields[i + 1] ?? '';
      const path = fields[i + 2] ?? oldPath;
      files.push({ status, path, oldPath });
      i += 3;
    } else {
      const path = fields[i + 1] ?? '';
      files.push({ status, path, oldPath: path });
      i += 2;
    }
  }
  return files;
}

/** The comment blocks of a walkthrough, by index. */
export function commentBlock(walkthrough: Walkthrough, index: number): CommentBlock | undefined {
  const block = walkthrough.blocks.find((b) => b.index === index);
  return block?.kind === 'comment' ? block : undefined;
}
