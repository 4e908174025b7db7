// A person reviews an agent's change in a real VS Code (code-server in headless Chromium) while the agent (the official MCP TypeScript SDK on the real parley-mcp) waits for the verdict: the agent asks for a human review and gets `pending`; the person is told, opens the round's diff, comments on a removed line and, with a suggestion, on an added one, and requests changes; the agent's await_review returns needs_changes with both comments; the agent fixes, answers, and asks again; the person sees the changes since round 1 with the first round's comments and their state, and approves; the agent gets lgtm and completes the session. Prints `ok`/`FAIL` per step and `N passed, N failed`; exits 1 on a failure.
//
// Usage: node test/e2e/human.mjs   (tests/tests/vscode.rs runs it; scripts/test installs what it needs)
// PARLEY_E2E_KEEP=1 keeps the temp directory (screenshots, logs) after a passing run too.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sandbox, agent, hubClient, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const RUN_TIMEOUT_MS = 240_000;
const BASE = [
  '//! Logging in.',
  '',
  'pub fn login(user: &str) -> bool {',
  '    let token = "naïve";',
  '    check_token(user, token)',
  '}',
  '',
  'fn check_token(user: &str, token: &str) -> bool {',
  '    !user.is_empty() && token.len() > 3',
  '}',
  '',
].join('\n');
// Round 1: the token comes from the vault (line 4 removed, lines 4 and 5 added).
const ROUND_1 = BASE.replace('    let token = "naïve";\n    check_token(user, token)', '    let token = vault::token().unwrap();\n    check_token(user, &token)');
// Round 2: the agent takes the suggestion.
const ROUND_2 = ROUND_1.replace('vault::token().unwrap();', 'vault::token().unwrap_or_default();');
const SUGGESTION = '    let token = vault::token().unwrap_or_default();';

const tools = findTools();
const sandbox = new Sandbox(tools, 'human');
let workbench;
const run = new StepRun(sandbox, RUN_TIMEOUT_MS, 'code-server.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);
const finish = () => run.finish();

/** Monaco renders spaces as no-break spaces. */
const plain = (text) => (text ?? '').replace(/\u00a0/g, ' ');

const workspace = makeWorkspace(path.join(sandbox.dir, 'shop'), { 'src/lib.rs': BASE, 'README.md': '# Shop\n' });
const libRs = path.join(workspace, 'src/lib.rs');
let mcp;
let hub;
let reviewId;

/** The agent waits as it would: await_review until the round is no longer pending. */
async function awaitVerdict() {
  let result;
  await until('await_review to return the verdict', async () => {
    result = await mcp.call('await_review', { review_id: reviewId, wait_seconds: 5 });
    return result.status !== 'pending';
  }, 60_000);
  return result;
}

/** The text of the status bar item counting the rounds waiting for review ('' when hidden). */
async function roundsStatus() {
  // The item leaves the page when hidden, possibly between two looks at it.
  const item = workbench.page.locator('.statusbar-item[id$="parley.rounds"]').first();
  return ((await item.textContent({ timeout: 500 }).catch(() => '')) ?? '').trim();
}

/** The comment thread widget showing `text`. */
const widget = (text) => workbench.threadWidgets().filter({ hasText: text }).first();

await step('code-server starts with the extension, which starts the daemon and connects', async () => {
  const url = await sandbox.startCodeServer(
    workspace,
    {
      'parley.executable': tools.parley,
      'diffEditor.renderSideBySide': true,
      'diffEditor.useInlineViewWhenSpaceIsLimited': false,
      'diffEditor.hideUnchangedRegions.enabled': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
    },
    { toasts: true },
  );
  workbench = run.workbench = new Workbench(await sandbox.browser());
  await workbench.open(url);
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
});

await step('an agent changes a file and asks for a human review: it gets pending', async () => {
  fs.writeFileSync(libRs, ROUND_1);
  mcp = await agent(tools, sandbox, workspace);
  const result = await mcp.call('request_review', { summary: 'Take the login token from the vault\n\nThe hard-coded token is gone.', reviewer: 'human', wait_seconds: 0 });
  expect(result.status === 'pending', `request_review answered ${JSON.stringify(result)}`);
  expect(result.round === 1 && typeof result.review_id === 'string', `no review id: ${JSON.stringify(result)}`);
  reviewId = result.review_id;
});

await step('the person is told: a notification with a Review button, and the status bar counts the waiting round', async () => {
  await workbench.toast('test-agent asks you to review: Take the login token from the vault').waitFor({ timeout: 20_000 });
  await until('the status bar to show the waiting review', async () => /^1 review waiting$/.test(await roundsStatus()));
});

await step('a window opened after the request is told too', async () => {
  // A reload starts a new extension host: a window that was not there when the agent asked.
  await workbench.page.reload();
  await workbench.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
  await workbench.toast('test-agent asks you to review: Take the login token from the vault').waitFor({ timeout: 20_000 });
  await until('the status bar to show the waiting review', async () => /^1 review waiting$/.test(await roundsStatus()));
});

await step("Review opens the round: its files in the Parley Review view, and the file's whole change as a diff", async () => {
  await workbench.toast('asks you to review').getByRole('button', { name: 'Review' }).click();
  await until('the diff tab of round 1', async () => /lib\.rs \(round 1: whole change\)/.test(await workbench.activeTab()));
  const pane = workbench.pane('Parley Review');
  await pane.locator('.monaco-list-row', { hasText: 'lib.rs' }).waitFor({ timeout: 10_000 });
  expect(/modified/.test((await pane.locator('.monaco-list-row', { hasText: 'lib.rs' }).textContent()) ?? ''), 'the file row does not say modified');
  await until("the view to show the agent's summary", async () => /test-agent asks: Take the login token from the vault/.test((await pane.textContent()) ?? ''), 10_000);
  await until('the base on the left and the change on the right', async () => {
    const left = plain(await workbench.editor('original').locator('.view-lines').textContent());
    const right = plain(await workbench.editor('modified').locator('.view-lines').textContent());
    return left.includes('let token = "naïve";') && right.includes('let token = vault::token().unwrap();');
  });
});

await step('a comment on a removed line (the left side), with its severity, becomes a draft on the old side', async () => {
  await workbench.clickCommentGutter(4, 'original');
  await workbench.submitComment('[minor] Keep a fallback for offline logins', 'Add Review Comment');
  // The thread holds the typed text at once; once saved it is labelled as a draft on the old side.
  await until('the draft thread on the old text', async () => /Draft · on the old text/.test((await widget('Keep a fallback for offline logins').textContent()) ?? ''), 10_000);
  hub = await hubClient(sandbox.socket);
  const { drafts } = await hub.call('round/get', { review_id: reviewId });
  expect(drafts.length === 1 && drafts[0].side === 'old' && drafts[0].start_line === 3, `the daemon holds ${JSON.stringify(drafts)}`);
  expect(drafts[0].severity === 'minor' && drafts[0].body === 'Keep a fallback for offline logins', `the [minor] tag is not the severity: ${JSON.stringify(drafts)}`);
});

await step('a comment with a ```suggestion on an added line (the right side) sends the suggestion apart from the text', async () => {
  await workbench.clickCommentGutter(4, 'modified');
  await workbench.submitComment(`Do not panic when the vault is down.\n\n\`\`\`suggestion\n${SUGGESTION}\n\`\`\``, 'Add Review Comment');
  let text = '';
  await until('the draft to show its suggestion', async () => {
    text = plain(await widget('Do not panic when the vault is down.').textContent());
    return text.includes('Suggested change (line 4)') && text.includes('unwrap_or_default()');
  }, 10_000).catch((error) => {
    throw new Error(`${error.message}; the thread reads: ${text}`);
  });
  const { drafts } = await hub.call('round/get', { review_id: reviewId });
  const added = drafts.find((d) => d.side === 'new');
  expect(added?.start_line === 3 && added.body === 'Do not panic when the vault is down.' && added.suggestion === SUGGESTION, `the daemon holds ${JSON.stringify(drafts)}`);
});

await step('a draft written from the terminal appears in the window, and its Delete Draft removes it everywhere', async () => {
  await hub.call('round/comment', { review_id: reviewId, path: 'src/lib.rs', side: 'new', start_line: 4, end_line: 4, body: 'Written from the terminal' });
  const thread = widget('Written from the terminal');
  await thread.waitFor({ timeout: 10_000 });
  await thread.locator('.head a.action-label[aria-label="Delete Draft"]').click();
  await thread.waitFor({ state: 'detached', timeout: 10_000 });
  const { drafts } = await hub.call('round/get', { review_id: reviewId });
  expect(drafts.length === 2, `the daemon still holds ${drafts.length} drafts`);
});

await step('Suggest Change on selected lines opens a comment holding them; saved, edited and deleted, the daemon follows', async () => {
  const line = workbench.editor('modified').locator('.view-line', { hasText: 'check_token(user, &token)' }).first();
  await line.click();
  await workbench.page.keyboard.press('End');
  await workbench.page.keyboard.press('Shift+Home');
  await workbench.runCommand('Parley: Suggest Change');
  const editing = widget('New suggestion');
  await editing.waitFor({ timeout: 10_000 });
  await editing.getByRole('button', { name: 'Save' }).click();
  let drafts = [];
  await until('the suggestion to be a draft', async () => {
    ({ drafts } = await hub.call('round/get', { review_id: reviewId }));
    return drafts.length === 3;
  }, 10_000);
  const made = drafts.find((d) => d.start_line === 4 && d.side === 'new');
  expect(made?.suggestion === '    check_token(user, &token)' && made.body === 'Suggested change.', `the draft: ${JSON.stringify(made)}`);
  // Edit: the text comes back with its suggestion block; what is typed before it becomes the body.
  // Its text, shown and then edited (the other draft's reads "Suggested change (line 4)").
  const thread = widget('Suggested change.');
  await thread.waitFor({ timeout: 10_000 });
  await thread.locator('.comment-body, .review-comment').first().hover();
  await thread.locator('a.action-label[aria-label="Edit"]').first().click();
  const input = thread.locator('.review-comment .monaco-editor').first();
  await input.waitFor({ timeout: 10_000 });
  await input.click();
  await workbench.page.keyboard.press('Control+Home');
  await workbench.page.keyboard.insertText('Borrow it once.');
  await thread.getByRole('button', { name: 'Save' }).click();
  await until('the edit to reach the daemon', async () => {
    ({ drafts } = await hub.call('round/get', { review_id: reviewId }));
    return drafts.find((d) => d.id === made.id)?.body === 'Borrow it once.Suggested change.';
  }, 10_000).catch((error) => {
    throw new Error(`${error.message}; drafts ${JSON.stringify(drafts)}`);
  });
  expect(drafts.find((d) => d.id === made.id)?.suggestion === '    check_token(user, &token)', `the edit lost the suggestion: ${JSON.stringify(drafts)}`);
  await widget('Borrow it once.').locator('.head a.action-label[aria-label="Delete Draft"]').click();
  await until('the draft to go', async () => (await hub.call('round/get', { review_id: reviewId })).drafts.length === 2, 10_000);
  const row = workbench.pane('Parley Review').locator('.monaco-list-row', { hasText: 'lib.rs' });
  await until('the view to count 2 drafts on the file', async () => /2 drafts/.test((await row.textContent()) ?? ''), 10_000);
});

await step('Submit Review with "Request changes": the review closes, the person is told what was sent', async () => {
  await workbench.runCommand('Parley: Submit Review');
  await workbench.pick('Request changes');
  await workbench.answer('Two things before this goes in');
  await workbench.toast('sent to test-agent: needs changes, 2 comments').waitFor({ timeout: 20_000 });
  await until('the diff to close', async () => (await workbench.page.locator('.tab', { hasText: 'round 1' }).count()) === 0);
  await until('the Parley Review view to go', async () => (await workbench.page.locator('.pane-header', { hasText: 'Parley Review' }).count()) === 0);
  await until('the status bar to drop the waiting review', async () => (await roundsStatus()) === '');
});

await step("the agent's await_review returns needs_changes with both comments, the suggestion as the fix", async () => {
  const result = await awaitVerdict();
  expect(result.status === 'needs_changes' && result.overall_assessment === 'needs_changes', `verdict ${result.status} / ${result.overall_assessment}`);
  // The person's two line comments, and their summary as a general comment.
  const comments = (result.comments ?? []).filter((c) => c.type === 'specific');
  expect(comments.length === 2, `${comments.length} line comments: ${JSON.stringify(result.comments)}`);
  expect((result.comments ?? []).some((c) => c.type === 'general' && c.comment === 'Two things before this goes in'), `the summary is not in the review: ${JSON.stringify(result.comments)}`);
  const old = comments.find((c) => c.comment.includes('Keep a fallback for offline logins'));
  const suggested = comments.find((c) => c.comment.includes('Do not panic when the vault is down.'));
  expect(old && old.file === 'src/lib.rs' && old.severity === 'minor', `the removed line's comment: ${JSON.stringify(old)}`);
  expect(suggested && suggested.file === 'src/lib.rs' && suggested.line === 4 && suggested.suggested_fix?.includes('unwrap_or_default()'), `the suggestion's comment: ${JSON.stringify(suggested)}`);
});

await step('the agent fixes the code, answers the thread and asks again with previous_review_id', async () => {
  fs.writeFileSync(libRs, ROUND_2);
  const { threads } = await mcp.call('get_feedback');
  const thread = threads.find((t) => t.comments.some((c) => c.body.includes('Do not panic when the vault is down.')));
  expect(thread, `the suggestion is no thread: ${JSON.stringify(threads.map((t) => t.comments[0]?.body))}`);
  await mcp.call('reply_feedback', { threadId: thread.id, body: 'Took your suggestion' });
  const result = await mcp.call('request_review', { summary: 'Took the suggestion: no panic when the vault is down', reviewer: 'human', previous_review_id: reviewId, wait_seconds: 0 });
  expect(result.status === 'pending' && result.round === 2, `request_review answered ${JSON.stringify(result)}`);
});

await step('the person sees the changes since round 1, and the first round\'s comment with its state', async () => {
  await workbench.toast('asks you to review (round 2)').getByRole('button', { name: 'Review' }).click();
  await until('the diff tab since round 1', async () => /lib\.rs \(round 2: since round 1\)/.test(await workbench.activeTab()));
  await until('round 1 on the left and round 2 on the right', async () => {
    const left = plain(await workbench.editor('original').locator('.view-lines').textContent());
    const right = plain(await workbench.editor('modified').locator('.view-lines').textContent());
    return left.includes('vault::token().unwrap();') && right.includes('vault::token().unwrap_or_default();');
  });
  const earlier = widget('Do not panic when the vault is down.');
  await earlier.waitFor({ timeout: 10_000 });
  const label = plain(await earlier.textContent());
  expect(/Round 1 · addressed by the agent/.test(label), `the earlier comment's thread reads: ${label}`);
});

await step('the toggle shows the whole change again', async () => {
  await workbench.runCommand('Parley: Show the Whole Change');
  await until('the diff tab of the whole change', async () => /lib\.rs \(round 2: whole change\)/.test(await workbench.activeTab()));
  await until('the base on the left', async () => plain(await workbench.editor('original').locator('.view-lines').textContent()).includes('let token = "naïve";'));
});

await step('Approve: the agent gets lgtm, and mark_review_complete finishes the session', async () => {
  await workbench.runCommand('Parley: Submit Review');
  await workbench.pick('Approve');
  await workbench.answer('Good to go');
  await workbench.toast('sent to test-agent: lgtm').waitFor({ timeout: 20_000 });
  // The daemon's round/changed can come before the answer: this window submitted it, so that is no news.
  expect((await workbench.toast('submitted elsewhere').count()) === 0, 'the window says the review it submitted was submitted elsewhere');
  const result = await awaitVerdict();
  expect(result.overall_assessment === 'lgtm' && result.round === 2, `round 2 answered ${result.status} / ${result.overall_assessment}`);
  const done = await mcp.call('mark_review_complete', { review_id: reviewId, final_status: 'approved' });
  expect(done.final_status === 'approved', `mark_review_complete answered ${JSON.stringify(done)}`);
  const inbox = await hub.call('inbox', { workspace });
  expect(inbox.rounds.length === 0, `rounds still waiting: ${JSON.stringify(inbox.rounds)}`);
});

await step("two rounds waiting: the status bar counts both, Review Agent Changes offers a pick, and the agent's cancel closes the review", async () => {
  const second = await mcp.call('request_review', { summary: 'Second change: logging', reviewer: 'human', wait_seconds: 0 });
  const third = await mcp.call('request_review', { summary: 'Third change: metrics', reviewer: 'human', wait_seconds: 0 });
  expect(second.status === 'pending' && third.status === 'pending', `request_review answered ${JSON.stringify([second, third])}`);
  await until('the status bar to count two rounds', async () => (await roundsStatus()) === '2 reviews waiting');
  const rows = workbench.page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  const thirdRow = rows.filter({ hasText: 'test-agent: Third change: metrics' }).first();
  const thirdOpen = async () =>
    /test-agent asks: Third change: metrics/.test((await workbench.pane('Parley Review').textContent({ timeout: 500 }).catch(() => '')) ?? '');
  // A quick pick closes when the workbench takes the focus (the review panel, still loading after the reload, can),
  // even between finding a row and clicking it: open it again then, and choose once both rounds are offered.
  let shown = false;
  await until('the third round chosen from a pick offering both', async () => {
    if (await thirdOpen()) return true;
    if (!(await thirdRow.isVisible())) {
      await workbench.runCommand('Parley: Review Agent Changes');
      await thirdRow.waitFor({ timeout: 3000 }).catch(() => {});
    }
    const text = (await rows.allTextContents()).join(' | ');
    if (!text.includes('test-agent: Second change: logging') || !text.includes('test-agent: Third change: metrics')) return false;
    if (!shown) {
      await workbench.screenshot(path.join(sandbox.shots, 'pick-among-waiting-rounds.png'));
      shown = true;
    }
    await thirdRow.click({ timeout: 2000 }).catch(() => {});
    return false;
  }, 30_000);
  await mcp.call('cancel_review', { review_id: third.review_id });
  await workbench.toast('was cancelled by the agent').waitFor({ timeout: 10_000 });
  await until('the review to close', async () => (await workbench.page.locator('.pane-header', { hasText: 'Parley Review' }).count()) === 0, 10_000);
  await until('the status bar to count one round', async () => (await roundsStatus()) === '1 review waiting');
  await mcp.call('cancel_review', { review_id: second.review_id });
  await until('the status bar to count none', async () => (await roundsStatus()) === '', 10_000);
});

hub?.close();
await mcp?.close().catch(() => {});
await finish();
