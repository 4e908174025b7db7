// A walkthrough as the window shows it: its steps in document order (one per place, one per comment not placed), where a click stands, what a gitdiff range compares as git reads it, the files git lists, and the panel's HTML (parts in order, the unplaced with their reason, nothing from the agent run as markup).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Walkthrough } from '../../src/hub/types';
import { renderWalkthrough } from '../../src/review/walkthroughRender';
import { clickLabel, diffSpec, iconName, move, parseNameStatus, steps } from '../../src/walkthrough/model';
import { threadView } from '../../src/threads/model';

const walkthrough: Walkthrough = {
  id: 'w1',
  workspace: '/w',
  title: 'Login refactor',
  base_uri: '/w',
  content: '',
  revision: 2,
  updated_at: '2026-11-21T07:01:12.500Z',
  presented_by: 'claude-1',
  parts: [
    { kind: 'markdown', text: '# Login <b>refactor</b>\n\nSee [`src/auth.rs:2`][].\n\n' },
    { kind: 'block', index: 0 },
    { kind: 'block', index: 2 },
    { kind: 'block', index: 1 },
    { kind: 'block', index: 3 },
    { kind: 'block', index: 4 },
  ],
  blocks: [
    { kind: 'mermaid', index: 0, source: 'flowchart TD\n  a["<script>x</script>"] --> b\n' },
    { kind: 'comment', index: 1, location: 'findReferences(`read`)', icon: 'lightbulb', body: 'Each read.', places: [{ path: 'src/a.rs', start_line: 0, end_line: 0, thread_id: 't1' }, { path: 'src/b.rs', start_line: 4, end_line: 6, thread_id: 't2' }] },
    { kind: 'comment', index: 2, location: 'search("src", "token")', body: '<img src=x onerror=alert(1)> Every use.', places: [], problem: 'the location matches 2 places: name one with path:line', candidates: [{ path: 'src/a.rs', start_line: 1, end_line: 1 }, { path: 'src/c.rs', start_line: 13, end_line: 13 }] },
    { kind: 'gitdiff', index: 3, range: 'HEAD~1..HEAD', exclude_staged: false, exclude_unstaged: false },
    { kind: 'action', index: 4, button: 'Run the tests', message: 'Please run them.', clicks: [{ id: 'c1', author: 'ana', clicked_at: '2026-11-21T07:02:40.118Z', state: 'delivered', via: 'tool-answer', updated_at: '2026-11-21T07:03:05.911Z' }] },
  ],
  references: [{ line: 2, path: 'src/auth.rs', resolved_path: '/w/src/auth.rs', text: '[`src/auth.rs:2`][]' }],
};

test('the steps follow the document: the unplaced comment where it stands, a comment on two places twice', () => {
  const all = steps(walkthrough);
  assert.deepEqual(
    all.map((s) => [s.block, s.place?.path ?? null, s.problem ?? null]),
    [
      [2, null, 'the location matches 2 places: name one with path:line'],
      [1, 'src/a.rs', null],
      [1, 'src/b.rs', null],
    ],
  );
  assert.equal(all[1].summary, 'Each read.');
});

test('moving through the steps wraps around, and starts at the first or the last', () => {
  assert.equal(move(3, undefined, 1), 0);
  assert.equal(move(3, undefined, -1), 2);
  assert.equal(move(3, 2, 1), 0);
  assert.equal(move(3, 0, -1), 2);
  assert.equal(move(0, undefined, 1), undefined);
});

test("a click says where its message stands, in the person's words", () => {
  const click = { id: 'c', author: 'ana', clicked_at: '', updated_at: '', state: 'waiting' };
  assert.equal(clickLabel(click, 'claude-1'), 'waiting for claude-1');
  assert.equal(clickLabel({ ...click, state: 'delivered', via: 'tool-answer' }, 'claude-1'), 'delivered to claude-1 (in its next tool answer)');
  assert.equal(clickLabel({ ...click, state: 'read' }, 'claude-1'), 'read by claude-1');
});

test('a gitdiff range compares what git diff compares, the flags applying to the working tree', () => {
  assert.deepEqual(diffSpec('HEAD~2..HEAD', false, false), { left: { commit: 'HEAD~2' }, right: { commit: 'HEAD' }, args: ['HEAD~2', 'HEAD'] });
  assert.deepEqual(diffSpec('main...', false, false), { left: { commit: 'main' }, right: { commit: 'HEAD' }, args: ['main...HEAD'], mergeBase: ['main', 'HEAD'] });
  assert.deepEqual(diffSpec('abc123', false, false), { left: { commit: 'abc123' }, right: { working: true }, args: ['abc123'] });
  assert.deepEqual(diffSpec('staged', false, false), { left: { commit: 'HEAD' }, right: { index: true }, args: ['--cached', 'HEAD'] });
  assert.deepEqual(diffSpec('working', false, false), { left: { commit: 'HEAD' }, right: { working: true }, args: ['HEAD'] });
  assert.deepEqual(diffSpec('working', true, false), { left: { index: true }, right: { working: true }, args: [] });
  assert.deepEqual(diffSpec('working', false, true), { left: { commit: 'HEAD' }, right: { index: true }, args: ['--cached', 'HEAD'] });
  assert.ok('error' in diffSpec('working', true, true));
  // Never an option git would take: a range is not a flag.
  assert.ok('error' in diffSpec('--output=/tmp/x', false, false));
  assert.ok('error' in diffSpec('HEAD HEAD~1', false, false));
});

test("git's name-status list is read with renames and odd names", () => {
  const out = ['M', 'src/a.rs', 'R087', 'old name.rs', 'new name.rs', 'A', 'src/ünï.rs', 'D', 'gone.rs', ''].join('\0');
  assert.deepEqual(parseNameStatus(out), [
    { status: 'modified', path: 'src/a.rs', oldPath: 'src/a.rs' },
    { status: 'renamed', path: 'new name.rs', oldPath: 'old name.rs' },
    { status: 'added', path: 'src/ünï.rs', oldPath: 'src/ünï.rs' },
    { status: 'deleted', path: 'gone.rs', oldPath: 'gone.rs' },
  ]);
});

test('the panel shows the parts in order, the unplaced comment with its reason and candidates, and nothing as markup', () => {
  const html = renderWalkthrough(walkthrough, new Map([[3, { files: [{ status: 'modified', path: 'src/a.rs', oldPath: 'src/a.rs' }] }]]));
  const order = [...html.matchAll(/<(h1|figure|section|div) [^>]*?class="(wt-[a-z]+)?[^"]*"[^>]*data-block="(\d)"|<h1/g)].map((m) => m[3] ?? 'h1');
  assert.deepEqual(order, ['h1', '0', '2', '1', '3', '4']);
  assert.ok(html.includes('Not placed'));
  assert.ok(html.includes('the location matches 2 places: name one with path:line'));
  assert.ok(html.includes('data-candidate="1"') && html.includes('src/c.rs:14'));
  assert.ok(html.includes('src/b.rs:5-7'));
  assert.ok(html.includes('data-file="0"') && html.includes('>src/a.rs</a>'));
  assert.ok(html.includes('delivered to claude-1 (in its next tool answer)') && html.includes('data-state="delivered"'));
  // The diagram's source is text for mermaid to read, the agent's HTML escaped everywhere.
  assert.ok(html.includes('&lt;script&gt;x&lt;/script&gt;'));
  assert.ok(!html.includes('<script') && !html.includes('<img') && !html.includes('<b>'));
  assert.ok(html.includes('data-ref="0"'));
});

test("a comment's icon is the codicon it names, drawn from the extension's font: no emoji, which shows as a box without an emoji font", () => {
  const html = renderWalkthrough(walkthrough);
  assert.ok(html.includes('<span class="wt-icon codicon codicon-lightbulb" aria-hidden="true"></span>'), html);
  // Without an icon, the speech balloon.
  assert.ok(html.includes('<span class="wt-icon codicon codicon-comment" aria-hidden="true"></span>'), html);
  assert.ok(!/[\u{1F300}-\u{1FAFF}\u{2600}-\u{27BF}]/u.test(html), 'the panel still has an emoji');
  assert.equal(iconName(' Warning '), 'warning');
  assert.equal(iconName('comment-discussion'), 'comment-discussion');
  // Not a codicon name: it cannot reach the class attribute as it is.
  assert.equal(iconName('x" onclick="alert(1)'), 'comment');
  assert.equal(iconName('💡'), 'comment');
  assert.equal(iconName(undefined), 'comment');
});

test("a gitdiff not listed yet says so, and git's refusal is shown", () => {
  assert.ok(renderWalkthrough(walkthrough).includes('Listing the files…'));
  assert.ok(renderWalkthrough(walkthrough, new Map([[3, { error: 'git cannot list the changes of HEAD~1..HEAD: bad revision' }]])).includes('bad revision'));
});

test("a walkthrough's thread is labelled with the walkthrough", () => {
  const thread = {
    id: 't1', workspace: '/w', path: 'src/a.rs', file: '/w/src/a.rs', range: { start: { line: 0, character: 0 }, end: { line: 0, character: 4 } },
    quote: 'x', original_quote: 'x', state: 'anchored' as const, confidence: 1, resolved: false,
    comments: [{ id: 'c', body: 'Each read.', author: 'claude-1', created_at: '2026-11-21T07:01:12.500Z' }],
    created_at: '2026-11-21T07:01:12.500Z', updated_at: '2026-11-21T07:01:12.500Z',
    walkthrough: { id: 'w1', title: 'Login refactor', block_index: 1 },
  };
  assert.equal(threadView(thread).label, 'Walkthrough "Login refactor"');
  assert.equal(threadView({ ...thread, state: 'moved' }).label, 'Walkthrough "Login refactor" · Moved (L1)');
  // The agent that wrote it has seen it, which says nothing; a person's answer makes it worth saying.
  const seen = { ...thread, standing: 'seen' as const, seen_by: 'claude-1' };
  assert.equal(threadView(seen).label, 'Walkthrough "Login refactor"');
  const answered = { ...seen, comments: [...seen.comments, { id: 'd', body: 'Why?', author: 'ana', created_at: '2026-11-21T07:05:00.000Z' }] };
  assert.equal(threadView(answered).label, 'Walkthrough "Login refactor" · Seen by claude-1');
});
