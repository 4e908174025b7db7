// Reviewing an agent's round: suggestions in a comment's text, which sides and lines of a diff take comments, drafts mapped to threads, and what the person is told.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Draft, RoundDetail, RoundFile, WaitingRound } from '../../src/hub/types';
import {
  clampLine,
  commentableLines,
  composeComment,
  diffSides,
  diffTitle,
  draftKey,
  earlierLabel,
  endedText,
  groupFiles,
  lineCount,
  parseComment,
  parseRoundPath,
  reconcile,
  renderDraft,
  requestText,
  reviewHeading,
  roundPath,
  sideOf,
  sortWaiting,
  submittedText,
  textOf,
  verdictChoices,
  waitingLabel,
} from '../../src/rounds/model';

function file(overrides: Partial<RoundFile>): RoundFile {
  return {
    path: 'src/lib.rs',
    old_path: 'src/lib.rs',
    status: 'modified',
    before: 'a\nb\nc\n',
    after: 'a\nB\nc\nd\n',
    previous: null,
    changed_since_previous: true,
    binary: false,
    too_large: false,
    ...overrides,
  };
}

function draft(overrides: Partial<Draft>): Draft {
  return { id: 'd1', path: 'src/lib.rs', side: 'new', start_line: 1, end_line: 1, body: 'Name it', suggestion: null, severity: null, at: '2026-11-24T01:00:00Z', ...overrides };
}

test('a ```suggestion block is the suggestion, the rest the body', () => {
  assert.deepEqual(parseComment('Use the vault.\n\n```suggestion\n    let token = vault::token();\n```\n'), {
    body: 'Use the vault.',
    suggestion: '    let token = vault::token();',
    severity: null,
  });
  assert.deepEqual(parseComment('Before\n```suggestion\nx\ny\n```\nAfter'), { body: 'Before\n\nAfter', suggestion: 'x\ny', severity: null });
});

test('a comment without a block has no suggestion, and keeps other code blocks', () => {
  assert.deepEqual(parseComment('  Why?  '), { body: 'Why?', suggestion: null, severity: null });
  assert.deepEqual(parseComment('See\n```rust\nfn x() {}\n```'), { body: 'See\n```rust\nfn x() {}\n```', suggestion: null, severity: null });
});

test('a suggestion alone gets a body; an empty block suggests deleting the lines; an unclosed one runs to the end', () => {
  assert.deepEqual(parseComment('```suggestion\nfoo\n```'), { body: 'Suggested change.', suggestion: 'foo', severity: null });
  assert.deepEqual(parseComment('Drop these\n```suggestion\n```'), { body: 'Drop these', suggestion: '', severity: null });
  assert.deepEqual(parseComment('Try\n~~~~ suggestion\nbar\r\nbaz'), { body: 'Try', suggestion: 'bar\nbaz', severity: null });
});

test('a longer fence lets the suggestion hold ``` itself, and composing then parsing gives the draft back', () => {
  const suggestion = '/// ```\n/// x\n/// ```';
  const text = composeComment('Doc it', suggestion);
  assert.match(text, /^Doc it\n\n````suggestion\n/);
  assert.deepEqual(parseComment(text), { body: 'Doc it', suggestion, severity: null });
  assert.equal(composeComment('Plain', null), 'Plain');
  assert.deepEqual(parseComment(composeComment('Doc it', suggestion, 'major')), { body: 'Doc it', suggestion, severity: 'major' });
});

test('a leading [severity] sets the severity, as in Neovim; other brackets are text', () => {
  assert.deepEqual(parseComment('[Major] Check the length'), { body: 'Check the length', suggestion: null, severity: 'major' });
  assert.deepEqual(parseComment('[critical]\n```suggestion\nx\n```'), { body: 'Suggested change.', suggestion: 'x', severity: 'critical' });
  assert.deepEqual(parseComment('[wip] not a severity'), { body: '[wip] not a severity', suggestion: null, severity: null });
  // A tag alone is the comment, not an empty one.
  assert.deepEqual(parseComment('[minor]'), { body: '[minor]', suggestion: null, severity: null });
});

test('lines are counted as git counts them', () => {
  assert.equal(lineCount(''), 0);
  assert.equal(lineCount('a'), 1);
  assert.equal(lineCount('a\n'), 1);
  assert.equal(lineCount('a\nb'), 2);
  assert.equal(lineCount('a\n\n'), 2);
});

test('both sides of a modified file take comments on every line', () => {
  const f = file({});
  assert.equal(sideOf(f, 'before'), 'old');
  assert.equal(sideOf(f, 'after'), 'new');
  assert.deepEqual(commentableLines(f, 'before'), { start: 0, end: 2 });
  assert.deepEqual(commentableLines(f, 'after'), { start: 0, end: 3 });
});

test('an added file has no old side, a deleted one no new side, and the previous round is neither', () => {
  const added = file({ status: 'added', before: null, old_path: null });
  assert.equal(commentableLines(added, 'before'), undefined);
  assert.equal(commentableLines(added, 'empty'), undefined);
  assert.deepEqual(commentableLines(added, 'after'), { start: 0, end: 3 });
  const deleted = file({ status: 'deleted', after: null });
  assert.equal(commentableLines(deleted, 'after'), undefined);
  assert.deepEqual(commentableLines(deleted, 'before'), { start: 0, end: 2 });
  const again = file({ previous: 'a\nb\n' });
  assert.equal(commentableLines(again, 'previous'), undefined);
  assert.equal(commentableLines(file({ after: '' }), 'after'), undefined);
});

test('the diff shows before → after, or previous → after since the last round', () => {
  assert.deepEqual(diffSides(file({}), 'whole'), { left: 'before', right: 'after' });
  assert.deepEqual(diffSides(file({ previous: 'a\n' }), 'since'), { left: 'previous', right: 'after' });
  // Not in the previous round: it was the base's text then.
  assert.deepEqual(diffSides(file({ previous: null }), 'since'), { left: 'before', right: 'after' });
  assert.deepEqual(diffSides(file({ status: 'added', before: null }), 'whole'), { left: 'empty', right: 'after' });
  assert.deepEqual(diffSides(file({ status: 'deleted', after: null }), 'whole'), { left: 'before', right: 'empty' });
  assert.equal(textOf(file({ previous: null }), 'previous'), 'a\nb\nc\n');
});

test('a round text URI path names the review, round, version and file, and reads back', () => {
  const ref = { reviewId: '2026-11-24-001', round: 2, version: 'before' as const, path: 'src/deep/lib.rs' };
  const path = roundPath(ref);
  assert.equal(path, '/2026-11-24-001/2/before/src/deep/lib.rs');
  assert.deepEqual(parseRoundPath(path), ref);
  assert.equal(parseRoundPath('/2026-11-24-001/2/sideways/x'), undefined);
  assert.equal(parseRoundPath('/src/lib.rs'), undefined);
});

test('drafts map to threads: new ones are added, changed ones shown again, gone ones removed', () => {
  const kept = draft({ id: 'd1' });
  const edited = draft({ id: 'd2', body: 'old text' });
  const shown = new Map([
    ['d1', draftKey(kept)],
    ['d2', draftKey(edited)],
    ['d3', draftKey(draft({ id: 'd3' }))],
  ]);
  const now = [kept, { ...edited, body: 'new text' }, draft({ id: 'd4', side: 'old' })];
  const result = reconcile(shown, now);
  assert.deepEqual(result.add.map((d) => d.id), ['d4']);
  assert.deepEqual(result.update.map((d) => d.id), ['d2']);
  assert.deepEqual(result.remove, ['d3']);
  // Only what shows counts: the time of a re-sent draft does not make it change.
  assert.deepEqual(reconcile(new Map([['d1', draftKey(kept)]]), [{ ...kept, at: '2026-11-25T00:00:00Z' }]), { add: [], update: [], remove: [] });
});

test('a draft with a suggestion shows the replacement as code, with the lines it replaces', () => {
  const text = renderDraft(draft({ start_line: 3, end_line: 4, suggestion: 'let x = 1;' }));
  assert.match(text, /^Name it\n\n\*\*Suggested change\*\* \(lines 4-5\):\n\n```\nlet x = 1;\n```$/);
  assert.match(renderDraft(draft({ suggestion: '' })), /delete these lines/);
  assert.equal(renderDraft(draft({ severity: 'major' })), '**major** · Name it');
});

test("an earlier comment past the text's end is shown on its last line", () => {
  assert.equal(clampLine(10, 4), 3);
  assert.equal(clampLine(2, 4), 2);
  assert.equal(clampLine(3, 0), 0);
});

const waiting = (overrides: Partial<WaitingRound>): WaitingRound => ({
  review_id: '2026-11-24-001',
  round: 1,
  workspace: '/w',
  summary: 'Token from the vault\n\nDetails follow',
  focus_areas: [],
  asked_by: 'claude-code',
  requested_at: '2026-11-24T01:00:00Z',
  files: ['src/lib.rs'],
  drafts: 0,
  ...overrides,
});

test('the notification names the agent and the first line of its summary', () => {
  assert.equal(requestText(waiting({})), 'Claude asks you to review: Token from the vault');
  assert.equal(requestText(waiting({ asked_by: 'test-agent', round: 2 })), 'test-agent asks you to review (round 2): Token from the vault');
  assert.ok(requestText(waiting({ summary: 'x'.repeat(300) })).endsWith('…'));
});

test('waiting rounds are newest first', () => {
  const sorted = sortWaiting([waiting({ review_id: 'a', requested_at: '2026-11-24T01:00:00Z' }), waiting({ review_id: 'b', requested_at: '2026-11-24T02:00:00Z' })]);
  assert.deepEqual(sorted.map((r) => r.review_id), ['b', 'a']);
});

test('files unchanged since the previous round are set apart, only after the first round', () => {
  const detail = (previous: number | null): RoundDetail => ({
    review_id: 'r',
    round: previous === null ? 1 : 2,
    workspace: '/w',
    summary: '',
    focus_areas: [],
    asked_by: 'x',
    requested_at: '',
    scope: 'all',
    previous_round: previous,
    files: [file({ path: 'a' }), file({ path: 'b', changed_since_previous: false })],
    drafts: [],
    earlier: [],
  });
  assert.deepEqual(groupFiles(detail(1)).unchanged.map((f) => f.path), ['b']);
  assert.deepEqual(groupFiles(detail(null)).unchanged, []);
});

test('the verdicts say what the agent gets', () => {
  const [approve, changes] = verdictChoices(2);
  assert.equal(approve.label, 'Approve');
  assert.match(approve.detail, /lgtm_with_suggestions/);
  assert.match(changes.detail, /needs_changes, with your 2 comments/);
  assert.match(verdictChoices(0)[0].detail, /\(lgtm\)/);
});

test('the person is told the verdict, their comments and the threads they became', () => {
  const result = { review_id: 'r', round: 1, verdict: 'needs_changes', status: 'needs_changes', review: { comments: [1, 2, 3] }, markdown: '', threads: ['t1'] };
  assert.equal(submittedText(result, 'claude-code', 2), 'Review of round 1 sent to Claude: needs changes, 2 comments; 1 comment is now a thread on the code.');
  assert.equal(submittedText({ ...result, verdict: 'lgtm', threads: [] }, 'x', 0), 'Review of round 1 sent to x: lgtm, no comments.');
});

const planDetail = (round: number): RoundDetail => ({
  review_id: '2026-11-26-001',
  round,
  workspace: '/w',
  summary: 'Plan: Tax in cart totals',
  focus_areas: [],
  asked_by: 'claude-code',
  requested_at: '',
  scope: 'plan',
  previous_round: round > 1 ? round - 1 : null,
  files: [file({ path: 'tax-in-cart-totals.md', status: round > 1 ? 'modified' : 'added' })],
  drafts: [],
  earlier: [],
});

test("a plan reads as the agent's plan, not as changes", () => {
  const plan = waiting({ summary: 'Plan: Tax in cart totals', plan: true, files: ['tax-in-cart-totals.md'] });
  assert.equal(requestText(plan), 'Claude asks you to review its plan: Tax in cart totals');
  assert.equal(requestText({ ...plan, round: 2 }), 'Claude asks you to review its plan (revised, plan 2): Tax in cart totals');
  assert.equal(waitingLabel(1, 1), '1 plan waiting');
  assert.equal(waitingLabel(2, 1), '2 reviews waiting');
  assert.deepEqual(reviewHeading(planDetail(1), 'whole'), { message: "Claude's plan: Tax in cart totals", description: 'plan 1 · whole plan' });
  assert.deepEqual(reviewHeading(planDetail(2), 'since'), { message: "Claude's plan: Tax in cart totals", description: 'plan 2 · changes since plan 1' });
  assert.equal(diffTitle(planDetail(2), 'tax-in-cart-totals.md', true), 'tax-in-cart-totals.md (plan 2: since plan 1)');
  assert.equal(diffTitle(planDetail(1), 'tax-in-cart-totals.md', false), 'tax-in-cart-totals.md (plan 1: whole plan)');
});

test("a plan's verdicts are approve, approve with comments and request changes", () => {
  assert.deepEqual(verdictChoices(0, true).map((c) => [c.label, c.verdict]), [['Approve', 'approve'], ['Request changes', 'request_changes']]);
  const [approve, changes] = verdictChoices(2, true);
  assert.equal(approve.label, 'Approve with comments');
  assert.match(approve.detail, /your 2 comments reach it as notes/);
  assert.match(changes.detail, /revises the plan/);
  const result = { review_id: 'r', round: 2, verdict: 'lgtm_with_suggestions', status: 'approved', review: {}, markdown: '', threads: ['t1'] };
  assert.equal(submittedText(result, 'claude-code', 1, true), "Your verdict on Claude's plan 2 is sent: approved with comments, 1 comment.");
  assert.equal(submittedText({ ...result, verdict: 'needs_changes' }, 'claude-code', 0, true), "Your verdict on Claude's plan 2 is sent: changes requested, no comments.");
});

test('a plan answered in the host says so; other ends name the round', () => {
  const plan = { review_id: 'r', round: 2, summary: 'Plan: Tax in cart totals', asked_by: 'claude-code', plan: true };
  assert.equal(endedText(plan, 'answered_elsewhere'), 'Parley: Claude\'s plan "Tax in cart totals" was answered in Claude Code; it no longer waits for you.');
  assert.equal(endedText({ review_id: 'r', round: 1 }, 'cancelled'), 'Parley: Round 1 of review r was cancelled by the agent.');
  assert.equal(endedText({ review_id: 'r', round: 1 }, 'submitted', 'needs_changes'), 'Parley: Round 1 of review r was submitted elsewhere (needs changes).');
});

test("an earlier plan's comment is labelled with the plan it was on", () => {
  const comment = { round: 1, path: 'plan.md', line: 3, body: 'Keep it', state: 'open' as const, thread_id: 't' };
  assert.equal(earlierLabel(comment, true), 'Plan 1 · open');
  assert.equal(earlierLabel(comment), 'Round 1 · open');
});
