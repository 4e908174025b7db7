// How threads show in VS Code: labels, actions (contextValue) and where orphans go.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Thread } from '../../src/hub/types';
import { countLabel, deliveryLabel, lineSpan, threadView } from '../../src/threads/model';

function thread(overrides: Partial<Thread>): Thread {
  return {
    id: '573dda29-f9f8-42f0-bf44-eb5690b0f283',
    workspace: '/w',
    path: 'src/auth.rs',
    file: '/w/src/auth.rs',
    range: { start: { line: 39, character: 0 }, end: { line: 43, character: 1 } },
    quote: 'fn x() {}',
    original_quote: 'fn x() {}',
    state: 'anchored',
    confidence: 1,
    resolved: false,
    comments: [{ id: 'c1', body: 'Use a real token', author: 'ana', created_at: '2026-11-21T06:28:26.631Z' }],
    created_at: '2026-11-21T06:28:26.631Z',
    updated_at: '2026-11-21T06:28:26.631Z',
    ...overrides,
  };
}

test('an anchored thread is open on its range with its comments', () => {
  const view = threadView(thread({}));
  assert.equal(view.contextValue, 'open');
  assert.equal(view.fileLevel, false);
  assert.deepEqual(view.comments.map((c) => [c.author, c.body]), [['ana', 'Use a real token']]);
  assert.equal(view.comments[0].timestamp.toISOString(), '2026-11-21T06:28:26.631Z');
});

test('an orphaned thread sits on the file, says where it was and quotes its text', () => {
  const view = threadView(thread({ state: 'orphaned', confidence: 0, original_quote: 'let a = 1;' }));
  assert.equal(view.fileLevel, true);
  assert.equal(view.label, 'Orphaned (was L40-L44)');
  assert.equal(view.contextValue, 'open-orphaned');
  assert.equal(view.comments[0].body, 'Use a real token');
  assert.match(view.comments[1].body, /gone from the file.*L40-L44[\s\S]*let a = 1;/);
  assert.equal(view.comments[1].author, 'Parley');
});

test('a modified thread shows its similarity and its original text', () => {
  const view = threadView(thread({ state: 'modified', confidence: 0.8799999952316284, original_quote: 'tax_rate' }));
  assert.equal(view.label, 'Text changed (88% similar)');
  assert.equal(view.contextValue, 'open-modified');
  assert.match(view.comments[1].body, /tax_rate/);
});

test('a moved thread says so', () => {
  assert.equal(threadView(thread({ state: 'moved' })).label, 'Moved (L40-L44)');
});

test('a resolved thread offers reopen, not reply or resolve', () => {
  const view = threadView(thread({ resolved: true }));
  assert.equal(view.contextValue, 'resolved');
  assert.ok(view.resolved);
  // package.json shows Reply and Resolve for contextValues matching /^open/ only.
  assert.ok(!/^open/.test(view.contextValue));
});

test('line spans count from 1 and ignore a final column 0', () => {
  assert.equal(lineSpan(thread({ range: { start: { line: 2, character: 4 }, end: { line: 2, character: 9 } } })), 'L3');
  assert.equal(lineSpan(thread({ range: { start: { line: 2, character: 0 }, end: { line: 4, character: 0 } } })), 'L3-L4');
  assert.equal(countLabel(1), '1 thread');
  assert.equal(countLabel(0), '0 threads');
});

test('the label says where the thread stands with the agents', () => {
  assert.equal(threadView(thread({ standing: 'open' })).label, 'Feedback · Open');
  const finding = { review_id: '2026-11-23-001', round: 2, severity: 'major', category: 'bug' };
  assert.equal(threadView(thread({ finding, standing: 'open' })).label, 'Finding · major bug (round 2) · Open');
  assert.equal(threadView(thread({ state: 'moved', finding })).label, 'Moved (L40-L44) · major bug (round 2)');
  assert.equal(threadView(thread({ standing: 'seen', seen_by: 'claude' })).label, 'Feedback · Seen by claude');
  assert.equal(threadView(thread({ standing: 'addressed', addressed_by: 'claude' })).label, 'Feedback · Addressed by claude');
  assert.equal(threadView(thread({ state: 'moved', standing: 'seen', seen_by: 'codex' })).label, 'Moved (L40-L44) · Seen by codex');
  const byAgent = threadView(thread({ resolved: true, standing: 'resolved', resolved_by: 'agent', addressed_by: 'claude' }));
  assert.equal(byAgent.label, 'Resolved by claude · Feedback');
  assert.equal(byAgent.contextValue, 'resolved');
  assert.equal(threadView(thread({ resolved: true, standing: 'resolved', resolved_by: 'human' })).label, 'Resolved by you · Feedback');
  // A daemon that does not keep standings: the labels as before.
  assert.equal(threadView(thread({ resolved: true })).label, 'Resolved · Feedback');
  assert.equal(threadView(thread({})).label, 'Feedback');
});

const asked = { comment_id: 'c1', agent: 'claude-1', asked_at: '2026-11-21T06:28:26.631Z', updated_at: '2026-11-21T06:28:26.631Z' };

test('a message to an agent says where it stands, on its comment and in the thread label', () => {
  const waiting = threadView(thread({ standing: 'open', deliveries: [{ ...asked, state: 'waiting' }] }), () => true);
  assert.equal(waiting.label, 'Feedback · waiting for claude-1');
  assert.equal(waiting.comments[0].label, 'waiting for claude-1');
  assert.equal(waiting.contextValue, 'open');
  assert.equal(deliveryLabel({ ...asked, state: 'delivered', via: 'tool-answer' }), 'delivered to claude-1 (in its next tool answer)');
  assert.equal(deliveryLabel({ ...asked, state: 'delivered', via: 'wait' }), 'delivered to claude-1 (in the call it was waiting in)');
  assert.equal(deliveryLabel({ ...asked, state: 'delivered', via: 'channel' }), 'delivered to claude-1 (pushed to its session)');
  assert.equal(deliveryLabel({ ...asked, state: 'delivered', via: 'hook' }), "delivered to claude-1 (through its host's hook)");
  assert.equal(deliveryLabel({ ...asked, state: 'read', via: 'tool-answer' }), 'read by claude-1');
  assert.equal(deliveryLabel({ ...asked, state: 'answered' }), 'answered by claude-1');
});

test('a message waiting for an agent that has gone says so and can be sent to another', () => {
  const view = threadView(thread({ deliveries: [{ ...asked, state: 'waiting' }] }), (name) => name === 'codex-1');
  assert.equal(view.label, 'Feedback · waiting for claude-1, which is no longer at work');
  assert.equal(view.contextValue, 'open-gone');
  // Not known yet whether it is at work: nothing said.
  assert.equal(threadView(thread({ deliveries: [{ ...asked, state: 'waiting' }] })).contextValue, 'open');
  // Delivered already: nothing to send again.
  assert.equal(threadView(thread({ deliveries: [{ ...asked, state: 'delivered', via: 'hook' }] }), () => false).contextValue, 'open');
});

test("a message waiting for an agent in one of this window's terminals can be typed there, and only then", () => {
  const waiting = thread({ deliveries: [{ ...asked, state: 'waiting' }] });
  const inTerminal = (name: string) => name === 'claude-1';
  assert.equal(threadView(waiting, () => true, inTerminal).contextValue, 'open-typeable');
  assert.equal(threadView(waiting, () => true, () => false).contextValue, 'open', 'no terminal of this window runs it');
  assert.equal(threadView(waiting, () => true).contextValue, 'open');
  assert.equal(threadView(waiting, () => false, inTerminal).contextValue, 'open-gone', 'an agent that has gone is sent elsewhere, not typed to');
  const typed = thread({ deliveries: [{ ...asked, state: 'delivered', via: 'terminal' }] });
  assert.equal(threadView(typed, () => true, inTerminal).contextValue, 'open', 'delivered already: nothing to type');
  assert.equal(deliveryLabel({ ...asked, state: 'delivered', via: 'terminal' }), 'delivered to claude-1 (typed into its terminal)');
});

test('the newest message is the one the label tells about', () => {
  const comments = [
    { id: 'c1', body: 'Why?', author: 'ana', created_at: '2026-11-21T06:28:26.631Z' },
    { id: 'c2', body: 'Because.', author: 'claude-1', created_at: '2026-11-21T06:29:26.631Z' },
    { id: 'c3', body: 'And here?', author: 'ana', created_at: '2026-11-21T06:30:26.631Z' },
  ];
  const view = threadView(thread({ comments, deliveries: [{ ...asked, comment_id: 'c3', state: 'waiting' }, { ...asked, state: 'answered' }] }), () => true);
  assert.equal(view.label, 'Feedback · waiting for claude-1');
  assert.deepEqual(view.comments.map((c) => c.label), ['answered by claude-1', undefined, 'waiting for claude-1']);
});

test("a thread from a pull request says so, on which side, and offers Open on GitHub beside the other actions", () => {
  const github = { pull_request: 'octo/app#7', url: 'https://github.com/octo/app/pull/7#discussion_r1', side: 'RIGHT', start_line: 3, end_line: 4, outdated: false };
  const open = threadView(thread({ github }));
  assert.equal(open.label, 'GitHub octo/app#7');
  assert.equal(open.contextValue, 'open-github');
  assert.match(open.contextValue, /^open/, 'reply and resolve still match');
  const removed = threadView(thread({ github: { ...github, side: 'LEFT', outdated: true }, resolved: true, standing: 'resolved', resolved_by: 'human' }));
  assert.match(removed.label, /GitHub octo\/app#7 \(removed lines\) \(outdated\)/);
  assert.equal(removed.contextValue, 'resolved-github');
  assert.match(removed.contextValue, /^resolved/, 'reopen still matches');
  assert.equal(threadView(thread({})).contextValue.includes('github'), false);
});
