// A person asks a chosen agent about code, and reviews an agent's plans, in a real VS Code (code-server in headless Chromium). Two agents (the official MCP TypeScript SDK on two real parley-mcp, `alpha-1` and `beta-1`) work on one repository: the status bar counts them; Ask Agent About This… on selected lines offers both and asks beta-1; the thread says "waiting for beta-1", then "delivered" when beta-1's next tool answer carries the question, "read" once it lists the thread, "answered" once it replies. A question to alpha-1, which then leaves, says so and goes to beta-1 with Send to Another Agent…. Then Claude Code's plan hook (the real `parley hook claude-plan`, fed the fixture JSON) waits on the person: the plan is told as a plan, commented on with a suggestion and sent back (the hook denies it with the comment), its revision shows what changed with the earlier comment and is approved with comments (the hook allows it, its input echoed), and a third plan answered in the host (its hook killed) leaves the window saying so. Prints `ok`/`FAIL` per step and `N passed, N failed`; exits 1 on a failure.
//
// Usage: node test/e2e/agents.mjs   (tests/tests/vscode.rs runs it; scripts/test installs what it needs)
// PARLEY_E2E_KEEP=1 keeps the temp directory (screenshots, logs) after a passing run too.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, Sandbox, agent, hubClient, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const RUN_TIMEOUT_MS = 300_000;
const LIB = ['//! Logging in.', '', 'pub fn login(user: &str) -> bool {', '    let token = read_token();', '    let again = read_token();', '    check(user, &token, &again)', '}', '', 'fn read_token() -> String {', '    String::new()', '}', ''].join('\n');
const QUESTION = 'Why is the token read twice here?';
const SECOND = 'Can this ever fail?';

const tools = findTools();
const sandbox = new Sandbox(tools, 'agents');
let workbench;
const run = new StepRun(sandbox, RUN_TIMEOUT_MS, 'code-server.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);

/** Monaco renders spaces as no-break spaces. */
const plain = (text) => (text ?? '').replace(/\u00a0/g, ' ');

const workspace = makeWorkspace(path.join(sandbox.dir, 'shop'), { 'src/lib.rs': LIB, 'README.md': '# Shop\n' });
let alpha;
let beta;
let threadId;

/** The text of a status bar item by its id's end ('' when hidden). */
async function statusItem(id) {
  const item = workbench.page.locator(`.statusbar-item[id$="${id}"]`).first();
  return plain((await item.textContent({ timeout: 500 }).catch(() => '')) ?? '').trim();
}

/** The comment thread widget showing `text`. */
const widget = (text) => workbench.threadWidgets().filter({ hasText: text }).first();

async function widgetSays(text, pattern, what) {
  let last = '';
  await until(what, async () => {
    last = plain(await widget(text).textContent({ timeout: 1000 }));
    return pattern.test(last);
  }, 20_000).catch((error) => {
    throw new Error(`${error.message}; the thread reads: ${last}`);
  });
}

/** Selects lines `from`-`to` (1-based) of the active editor. */
async function selectLines(from, to) {
  await workbench.goToLine(from);
  await workbench.page.keyboard.press('Home');
  for (let i = from; i < to; i++) await workbench.page.keyboard.press('Shift+ArrowDown');
  await workbench.page.keyboard.press('Shift+End');
}

/** The rows of the open quick pick, as text. */
async function pickRows() {
  return (await workbench.page.locator('.quick-input-widget .quick-input-list .monaco-list-row').allTextContents()).map(plain);
}

/** `parley hook claude-plan` as Claude Code runs it: the fixture's JSON on stdin, in the repository. */
function planHook(fixture, edit = (text) => text) {
  const input = edit(fs.readFileSync(path.join(ROOT, 'tests/fixtures/hooks', fixture), 'utf8').replaceAll('@CWD@', workspace));
  const child = spawn(tools.parley, ['hook', 'claude-plan'], { cwd: workspace, env: sandbox.env(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  child.stdin.end(input);
  return { child, exited, input: JSON.parse(input) };
}

async function hookOutput(hook) {
  const result = await Promise.race([hook.exited, new Promise((resolve) => setTimeout(() => resolve(undefined), 20_000))]);
  expect(result !== undefined, 'the plan hook did not answer within 20 s of the verdict');
  expect(result.code === 0, `the plan hook exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

await step('code-server starts with the extension; two agents at work on the repository show in the status bar', async () => {
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
  alpha = await agent(tools, sandbox, workspace, 'alpha-agent');
  beta = await agent(tools, sandbox, workspace, 'beta-agent');
  await until('the status bar to count 2 agents', async () => /^2 agents$/.test(await statusItem('parley.agents')));
});

await step('Ask Agent About This… on selected lines offers both agents; beta-1 is asked, and the thread says "waiting for beta-1"', async () => {
  await workbench.openFile('src/lib.rs');
  await selectLines(4, 5);
  await workbench.runCommand('Parley: Ask Agent About This');
  await until('the pick to offer both agents', async () => {
    const rows = (await pickRows()).join(' | ');
    return rows.includes('alpha-1') && rows.includes('beta-1') && rows.includes('beta-agent');
  }, 10_000);
  await workbench.screenshot(path.join(sandbox.shots, 'ask-pick-of-agents.png'));
  await workbench.pick('beta-1');
  await workbench.answer(QUESTION);
  await widgetSays(QUESTION, /waiting for beta-1/, 'the thread to say it waits for beta-1');
  const asked = sandbox.marks('asked').at(-1);
  expect(asked?.agent === 'beta-1', `the extension asked ${JSON.stringify(asked)}`);
  threadId = asked.thread;
  const hub = await hubClient(sandbox.socket);
  const { threads } = await hub.call('feedback/list', { workspace });
  hub.close();
  const thread = threads.find((t) => t.id === threadId);
  expect(thread && thread.range.start.line === 3 && thread.deliveries?.[0]?.agent === 'beta-1', `the daemon holds ${JSON.stringify(thread)}`);
});

await step("alpha-1's tool answers say nothing of it; beta-1's next tool answer carries the question, and the thread says delivered", async () => {
  const other = await alpha.text('get_review_history');
  expect(!other.includes(QUESTION), `alpha-1 was told: ${other}`);
  const told = await beta.text('get_review_history');
  expect(told.includes(QUESTION) && told.includes('reply_feedback'), `beta-1's tool answer does not carry the question: ${told}`);
  await widgetSays(QUESTION, /delivered to beta-1 \(in its next tool answer\)/, 'the thread to say it was delivered');
});

await step('beta-1 lists the thread (read), then replies (answered), each seen in the thread', async () => {
  const { threads } = await beta.call('get_feedback');
  expect(threads.some((t) => t.id === threadId), 'get_feedback does not list the thread');
  await widgetSays(QUESTION, /read by beta-1/, 'the thread to say beta-1 read it');
  await beta.call('reply_feedback', { threadId, body: 'The second read refreshes an expired token' });
  await widgetSays(QUESTION, /answered by beta-1/, 'the thread to say beta-1 answered');
  await widgetSays(QUESTION, /The second read refreshes an expired token/, "the thread to show beta-1's reply");
});

await step('a question to alpha-1, which then leaves, says so; Send to Another Agent… gives it to beta-1', async () => {
  await selectLines(10, 10);
  await workbench.runCommand('Parley: Ask Agent About This');
  await workbench.pick('alpha-1');
  await workbench.answer(SECOND);
  await widgetSays(SECOND, /waiting for alpha-1/, 'the thread to say it waits for alpha-1');
  await alpha.close();
  await until('the status bar to count 1 agent', async () => /^1 agent$/.test(await statusItem('parley.agents')));
  await widgetSays(SECOND, /waiting for alpha-1, which is no longer at work/, 'the thread to say alpha-1 has gone');
  await widget(SECOND).locator('.head a.action-label[aria-label="Send to Another Agent…"]').click();
  const rows = await until('the pick of the agents at work', async () => {
    const found = await pickRows();
    return found.length > 0 && found;
  }, 10_000);
  expect(rows.length === 1 && rows[0].includes('beta-1'), `the pick offers ${JSON.stringify(rows)}`);
  await workbench.pick('beta-1');
  await widgetSays(SECOND, /waiting for beta-1$|waiting for beta-1[^,]/, 'the thread to wait for beta-1');
});

let hook;

await step("Claude Code's plan is told as a plan; Review opens it as one file in the Parley Review view", async () => {
  hook = planHook('claude-plan-1.json');
  await workbench.toast('Claude asks you to review its plan: Tax in cart totals').waitFor({ timeout: 20_000 });
  await until('the status bar to show the waiting plan', async () => /^1 plan waiting$/.test(await statusItem('parley.rounds')));
  await workbench.toast('asks you to review its plan').getByRole('button', { name: 'Review' }).click();
  await until('the plan diff tab', async () => /tax-in-cart-totals\.md \(plan 1: whole plan\)/.test(await workbench.activeTab()));
  const pane = workbench.pane('Parley Review');
  await until("the view to name Claude's plan", async () => /Claude's plan: Tax in cart totals/.test(plain(await pane.textContent())), 10_000);
  await until('the plan as the one file', async () => /tax-in-cart-totals\.md.*the plan/.test(plain(await pane.textContent())), 10_000);
  await until('the plan on the right', async () => plain(await workbench.editor('modified').locator('.view-lines').textContent()).includes('2. Drop the rounding in `total`'));
});

await step('a comment with a suggestion on a line of the plan, then Request changes: the hook denies the plan with the comment', async () => {
  await workbench.clickCommentGutter(4, 'modified');
  await workbench.submitComment('Keep the rounding: invoices depend on it\n\n```suggestion\n2. Round once, in `total`\n```', 'Add Review Comment');
  await widgetSays('Keep the rounding', /Draft/, 'the draft on the plan');
  await workbench.runCommand('Parley: Submit Review');
  const rows = await until('the plan verdicts', async () => {
    const found = await pickRows();
    return found.some((r) => r.startsWith('Request changes')) && found;
  }, 10_000);
  expect(rows.some((r) => r.startsWith('Request changes')) && !rows.some((r) => r.startsWith('Comment')), `the verdicts offered: ${JSON.stringify(rows)}`);
  await workbench.pick('Request changes');
  await workbench.answer('Close, but keep the rounding');
  await workbench.toast("Your verdict on Claude's plan 1 is sent: changes requested, 1 comment").waitFor({ timeout: 20_000 });
  const out = await hookOutput(hook);
  const decision = out.hookSpecificOutput?.decision;
  expect(decision?.behavior === 'deny' && decision.message.includes('Keep the rounding: invoices depend on it') && decision.message.includes('Round once, in `total`'), `the hook printed ${JSON.stringify(out)}`);
});

await step('the revised plan shows what changed since the first, with the earlier comment; approved with comments, the hook allows it', async () => {
  hook = planHook('claude-plan-2.json');
  await workbench.toast('asks you to review its plan (revised, plan 2)').getByRole('button', { name: 'Review' }).click();
  await until('the diff since plan 1', async () => /tax-in-cart-totals\.md \(plan 2: since plan 1\)/.test(await workbench.activeTab()));
  await until('plan 1 on the left and plan 2 on the right', async () => {
    const left = plain(await workbench.editor('original').locator('.view-lines').textContent());
    const right = plain(await workbench.editor('modified').locator('.view-lines').textContent());
    return left.includes('Drop the rounding') && right.includes('4. Test with the fixtures');
  });
  await widgetSays('Keep the rounding', /Plan 1 ·/, "the first plan's comment with how it stands");
  await workbench.clickCommentGutter(6, 'modified');
  await workbench.submitComment('Run them in CI too', 'Add Review Comment');
  await widgetSays('Run them in CI too', /Draft/, 'the draft on plan 2');
  await workbench.runCommand('Parley: Submit Review');
  await workbench.pick('Approve with comments');
  await workbench.answer('');
  await workbench.toast("Your verdict on Claude's plan 2 is sent: approved with comments, 1 comment").waitFor({ timeout: 20_000 });
  const out = await hookOutput(hook);
  const decision = out.hookSpecificOutput?.decision;
  expect(decision?.behavior === 'allow' && JSON.stringify(decision.updatedInput) === JSON.stringify(hook.input.tool_input), `the hook printed ${JSON.stringify(out)}`);
});

await step('a plan answered in Claude Code (its hook killed) leaves the window saying so', async () => {
  hook = planHook('claude-plan-2.json', (text) => text.replace('4. Test with the fixtures', '4. Ship it, then test with the fixtures'));
  await workbench.toast('asks you to review its plan (revised, plan 3)').waitFor({ timeout: 20_000 });
  await until('the status bar to show the waiting plan', async () => /^1 plan waiting$/.test(await statusItem('parley.rounds')));
  hook.child.kill('SIGTERM');
  await workbench.toast('was answered in Claude Code; it no longer waits for you').waitFor({ timeout: 20_000 });
  await until('the status bar to drop the plan', async () => (await statusItem('parley.rounds')) === '', 10_000);
});

await beta?.close().catch(() => {});
await run.finish();
