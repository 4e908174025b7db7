// A window's pull request: the status bar item's words, the push preview a dry run gives, and what a pull or a push says it did.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LinkedPr, PrPushSummary } from '../../src/hub/types';
import { PUSH_CHOICES, firstLine, pulledMessage, pushPlan, pushedMessage, prStatus, waitingCount } from '../../src/pullRequest/model';

const NOW = new Date('2026-11-26T09:30:00.000Z');

function linked(overrides: Partial<LinkedPr> = {}): LinkedPr {
  return { pull_request: 'octo/app#7', url: 'https://github.com/octo/app/pull/7', api: 'https://api.github.com', found_by: 'gh', linked_at: '2026-11-26T09:00:00Z', ...overrides };
}

const PULL = { at: '2026-11-26T09:27:00Z', new_threads: 2, replies: 1, resolved: 0, reopened: 0, outdated: 0, gone: 0 };

test('the status item names the pull request, and counts what waits to be pushed', () => {
  assert.equal(prStatus(linked(), NOW).text, '$(git-pull-request) octo/app#7');
  const waiting = linked({ waiting: { threads: 1, replies: 2, resolutions: 1 }, last_pull: PULL });
  assert.equal(waitingCount(waiting), 4);
  const { text, tooltip } = prStatus(waiting, NOW);
  assert.equal(text, '$(git-pull-request) octo/app#7 · 4 to push');
  assert.match(tooltip, /^Parley: linked to octo\/app#7$/m);
  assert.match(tooltip, /^Last pull 3 min ago: 2 new threads, 1 reply$/m);
  assert.match(tooltip, /^Waiting to be pushed: 1 new thread, 2 replies, 1 resolution$/m);
  assert.equal(prStatus(linked({ waiting: { threads: 0, replies: 0, resolutions: 0 } }), NOW).text, '$(git-pull-request) octo/app#7');
});

test('the tooltip says the last push, a merged pull request and a failed sync', () => {
  const { text, tooltip } = prStatus(
    linked({
      state: 'MERGED',
      last_push: { at: '2026-11-26T08:30:00Z', threads: 3, replies: 1, resolutions: 0, not_sent: 1, review: 'submitted', event: 'comment' },
      last_error: 'GitHub refused the token (401): run `gh auth login`',
    }),
    NOW,
  );
  assert.equal(text, '$(git-pull-request) octo/app#7 $(warning)');
  assert.match(tooltip, /linked to octo\/app#7 \(merged\)/);
  assert.match(tooltip, /^Not pulled yet$/m);
  assert.match(tooltip, /^Last push 1 h ago: 3 threads, 1 reply, 0 resolutions, submitted \(comment\), 1 not sent$/m);
  assert.match(tooltip, /^The last sync failed: GitHub refused the token \(401\): run `gh auth login`$/m);
});

const DRY: PrPushSummary = {
  at: '2026-11-26T09:20:13Z',
  dry_run: true,
  threads: [
    { path: 'src/cart.rs', side: 'RIGHT', start_line: 2, line: 3, body: 'two and three need docs\nand an example' },
    { path: 'src/lib.rs', side: 'RIGHT', start_line: 5, line: 5, body: 'five needs a test' },
  ],
  replies: [{ path: 'src/cart.rs', body: 'and it has no test' }],
  resolutions: [{ path: 'src/legacy.rs', resolved: true }, { path: 'src/old.rs', resolved: false }],
  not_sent: [{ path: 'src/auth.rs', line: 3, url: '', reason: "its lines were changed here and are not in the pull request's head (commit and push them first)" }],
};

test('the push preview lists each thread on its lines with its first line, the replies, the resolutions and what is not sent with why', () => {
  assert.equal(
    pushPlan(DRY),
    [
      'New threads:',
      '  src/cart.rs:2-3: two and three need docs',
      '  src/lib.rs:5: five needs a test',
      '',
      'Replies:',
      '  src/cart.rs: and it has no test',
      '',
      'Resolutions:',
      '  resolve src/legacy.rs',
      '  reopen src/old.rs',
      '',
      'Not sent:',
      "  src/auth.rs:3: its lines were changed here and are not in the pull request's head (commit and push them first)",
    ].join('\n'),
  );
  assert.equal(pushPlan({ at: DRY.at, dry_run: true }), 'Nothing new to push.');
  assert.match(pushPlan({ at: DRY.at, dry_run: true, not_sent: DRY.not_sent }), /^Nothing new to push\.\n\nNot sent:\n {2}src\/auth\.rs:3: /);
  assert.equal(firstLine(`${'x'.repeat(100)}\nmore`), `${'x'.repeat(79)}…`);
  assert.deepEqual(PUSH_CHOICES.map((c) => [c.label, c.event]), [
    ['Push (leave pending)', undefined],
    ['Push and comment', 'comment'],
    ['Approve', 'approve'],
    ['Request changes', 'request-changes'],
  ]);
});

test('a push and a pull say what they did', () => {
  const sent = { ...DRY, dry_run: false, review: 'submitted', event: 'comment', review_url: 'https://github.com/octo/app/pull/7#pullrequestreview-1', not_sent: undefined };
  assert.equal(pushedMessage('octo/app#7', sent), 'Pushed to octo/app#7: 2 threads, 1 reply, 2 resolutions; review submitted (comment).');
  assert.equal(pushedMessage('octo/app#7', { at: DRY.at, dry_run: false, threads: DRY.threads?.slice(1), review: 'pending' }), 'Pushed to octo/app#7: 1 thread; the review is pending on GitHub: submit it there.');
  assert.match(pushedMessage('octo/app#7', { at: DRY.at, dry_run: false, not_sent: DRY.not_sent }), /^Nothing new pushed to octo\/app#7\. Not sent: src\/auth\.rs:3: its lines/);
  const unplaced = [{ path: 'src/legacy.rs', line: 12, url: 'https://github.com/octo/app/pull/7#discussion_r1', reason: 'src/legacy.rs is not in this checkout' }];
  assert.equal(pulledMessage(linked({ unplaced }), PULL), 'Pulled octo/app#7: 2 new threads, 1 reply. Not placed: src/legacy.rs:12: src/legacy.rs is not in this checkout.');
  assert.equal(pulledMessage(linked({ state: 'CLOSED' }), { ...PULL, new_threads: 0, replies: 0 }), 'Pulled octo/app#7: nothing new. octo/app#7 is closed: its threads stay here.');
});
