// A person types a question into the terminal an agent runs in, in a real VS Code (code-server in headless Chromium). An agent's host stand-in (tests/fixtures/terminal_host.sh: a shell that runs the real parley-mcp as its child, says initialize as Claude Code, and records each line typed into it) is started from a shell in the window's integrated terminal, so it is `claude-1` with this window's PARLEY_EDITOR_ID; another agent (the official MCP TypeScript SDK on a real parley-mcp, `alpha-1`) runs outside the window. Each is asked a question. Only claude-1's thread offers Type into the Agent's Terminal…; a modal shows exactly the line, Cancel types nothing, confirming types it into that terminal with Enter: the host got that very line, and the thread says "delivered to claude-1 (typed into its terminal)". Prints `ok`/`FAIL` per step and `N passed, N failed`; exits 1 on a failure.
//
// Usage: node test/e2e/terminal.mjs   (tests/tests/vscode.rs runs it; scripts/test installs what it needs)
// PARLEY_E2E_KEEP=1 keeps the temp directory (screenshots, logs) after a passing run too.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, Sandbox, agent, hubClient, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const RUN_TIMEOUT_MS = 240_000;
const LIB = ['//! Logging in.', '', 'pub fn login(user: &str) -> bool {', '    let token = read_token();', '    check(user, &token)', '}', '', 'fn read_token() -> String {', '    String::new()', '}', ''].join('\n');
const QUESTION = 'Why is the token read here?';
const ELSEWHERE = 'Who calls read_token?';
const TYPE_BUTTON = "Type into the Agent's Terminal…";

const tools = findTools();
const sandbox = new Sandbox(tools, 'terminal');
let workbench;
const run = new StepRun(sandbox, RUN_TIMEOUT_MS, 'code-server.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);

/** Monaco renders spaces as no-break spaces. */
const plain = (text) => (text ?? '').replace(/\u00a0/g, ' ');

const workspace = makeWorkspace(path.join(sandbox.dir, 'shop'), { 'src/lib.rs': LIB });
const typedFile = path.join(sandbox.dir, 'typed.txt');
const hostScript = path.join(ROOT, 'tests/fixtures/terminal_host.sh');
let alpha;
let claudeThread;

async function statusItem(id) {
  const item = workbench.page.locator(`.statusbar-item[id$="${id}"]`).first();
  return plain((await item.textContent({ timeout: 500 }).catch(() => '')) ?? '').trim();
}

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

/** The Type button in the title of the thread showing `text`. */
const typeButton = (text) => widget(text).locator(`.head a.action-label[aria-label="${TYPE_BUTTON}"]`);

/** `parley ask` at a terminal of the test; the thread's id. */
function ask(name, place, question) {
  const asked = sandbox.parley('ask', '--json', '--agent', name, place, question);
  expect(asked.status === 0, `parley ask failed: ${asked.stdout}${asked.stderr}`);
  return JSON.parse(asked.stdout).thread.id;
}

async function deliveryOf(id) {
  const hub = await hubClient(sandbox.socket);
  const { threads } = await hub.call('feedback/list', { workspace });
  hub.close();
  return threads.find((t) => t.id === id)?.deliveries?.[0];
}

/** The open modal dialog. */
const dialog = () => workbench.page.locator('.monaco-dialog-box').first();

await step('code-server starts with the extension; an agent at work outside the window', async () => {
  const url = await sandbox.startCodeServer(
    workspace,
    {
      'parley.executable': tools.parley,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'terminal.integrated.profiles.linux': { sh: { path: '/bin/sh' } },
      'terminal.integrated.defaultProfile.linux': 'sh',
      'terminal.integrated.enablePersistentSessions': false,
    },
    { toasts: true },
  );
  workbench = run.workbench = new Workbench(await sandbox.browser());
  await workbench.open(url);
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
  alpha = await agent(tools, sandbox, workspace, 'alpha-agent');
  await until('the status bar to count 1 agent', async () => /^1 agent$/.test(await statusItem('parley.agents')));
});

await step("an agent's host started from a shell in the window's terminal is at work as claude-1", async () => {
  await workbench.runCommand('Terminal: Create New Terminal');
  const terminal = workbench.page.locator('.terminal-wrapper .xterm').first();
  await terminal.waitFor({ timeout: 20_000 });
  await terminal.click();
  await workbench.page.keyboard.type(`sh ${hostScript} ${tools.shim} ${typedFile}`);
  await workbench.page.keyboard.press('Enter');
  await until('the status bar to count 2 agents', async () => /^2 agents$/.test(await statusItem('parley.agents')), 30_000);
  const hub = await hubClient(sandbox.socket);
  const { agents } = await hub.call('agents/list', {});
  hub.close();
  const claude = agents.find((a) => a.name === 'claude-1');
  expect(claude && /^vscode-\d+$/.test(claude.editor_id ?? '') && (claude.host_ancestors ?? []).length > 0, `the agents: ${JSON.stringify(agents)}`);
  const outside = agents.find((a) => a.name === 'alpha-1');
  expect(outside && outside.editor_id === undefined, `alpha-1 runs outside the window: ${JSON.stringify(outside)}`);
});

await step("a question to each: only claude-1's thread offers to type it into its terminal", async () => {
  claudeThread = ask('claude-1', path.join(workspace, 'src/lib.rs:4'), QUESTION);
  ask('alpha-1', path.join(workspace, 'src/lib.rs:8'), ELSEWHERE);
  await workbench.openFile('src/lib.rs');
  // Asked from elsewhere, the threads show folded: unfold both.
  await until("both threads' glyphs", async () => {
    const lines = await workbench.threadGlyphLines();
    return lines.includes(4) && lines.includes(8);
  });
  await workbench.toggleThreadAt(4);
  await workbench.toggleThreadAt(8);
  await widgetSays(QUESTION, /waiting for claude-1/, "claude-1's thread to wait");
  await widgetSays(ELSEWHERE, /waiting for alpha-1/, "alpha-1's thread to wait");
  await until('the Type button on claude-1\'s thread', async () => (await typeButton(QUESTION).count()) === 1);
  expect((await typeButton(ELSEWHERE).count()) === 0, "alpha-1's thread offers to type into a terminal");
});

await step('Type into the Agent\'s Terminal… shows exactly the line; Cancel types nothing', async () => {
  await typeButton(QUESTION).click();
  await dialog().waitFor({ timeout: 10_000 });
  const text = plain(await dialog().textContent());
  expect(text.includes("Type this into claude-1's terminal") && text.includes(QUESTION) && text.includes(`reply_feedback (threadId ${claudeThread})`), `the dialog reads: ${text}`);
  expect((await dialog().getByRole('button', { name: "Type into claude-1's Terminal" }).count()) === 1, `the dialog's buttons: ${text}`);
  await workbench.screenshot(path.join(sandbox.shots, 'type-into-terminal-dialog.png'));
  await dialog().getByRole('button', { name: 'Cancel' }).click();
  await dialog().waitFor({ state: 'detached', timeout: 10_000 });
  const delivery = await deliveryOf(claudeThread);
  expect(delivery?.state === 'waiting', `cancelled, yet the message is ${JSON.stringify(delivery)}`);
  expect(!fs.existsSync(typedFile), 'cancelled, yet something was typed');
});

await step('confirmed, the very line shown is typed into the terminal, and the thread says so', async () => {
  await typeButton(QUESTION).click();
  await dialog().waitFor({ timeout: 10_000 });
  const shown = plain(await dialog().textContent());
  await dialog().getByRole('button', { name: "Type into claude-1's Terminal" }).click();
  const typed = await until('the host to get a line', async () => {
    const got = fs.existsSync(typedFile) ? fs.readFileSync(typedFile, 'utf8') : '';
    return got.endsWith('\n') && got;
  });
  const line = typed.slice(0, -1);
  expect(!line.includes('\n') && line.includes(QUESTION), `the host got ${JSON.stringify(typed)}`);
  expect(shown.includes(line), `the dialog showed ${JSON.stringify(shown)}, the host got ${JSON.stringify(line)}`);
  await widgetSays(QUESTION, /delivered to claude-1 \(typed into its terminal\)/, 'the thread to say it was typed into the terminal');
  const delivery = await deliveryOf(claudeThread);
  expect(delivery?.state === 'delivered' && delivery.via === 'terminal', `the daemon holds ${JSON.stringify(delivery)}`);
  await until('the Type button to go', async () => (await typeButton(QUESTION).count()) === 0);
  expect((await deliveryOf(claudeThread))?.via === 'terminal', 'the receipt');
});

await alpha?.close().catch(() => {});
await run.finish();
