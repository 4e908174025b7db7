// A person works on a GitHub pull request from a real VS Code (code-server in headless Chromium): the window shows the linked pull request in the status bar, pulls a teammate's review thread into the editor, and pushes the person's new thread as a submitted review after reading the preview. GitHub is the tests' local fake, which tests/tests/vscode.rs starts and seeds, and reads afterwards for what was pushed.
//
// Usage: run by tests/tests/vscode.rs, which sets PARLEY_E2E_WORKSPACE (a repository whose head is the pull request's),
// PARLEY_GITHUB_API (the fake) and GITHUB_TOKEN (the fake's token). The daemon first runs without a token (one a client
// starts keeps none of its starter's keys), and the window's pull fails saying what to do; then it runs again, started by
// hand with GITHUB_TOKEN. (code-server takes GITHUB_TOKEN for itself and removes it from the environment of extensions,
// so here the window has no token of its own to hand over, and the window starts no daemon.)

import { spawn, spawnSync } from 'node:child_process';
import { Sandbox, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const RUN_TIMEOUT_MS = 240_000;
const workspace = process.env.PARLEY_E2E_WORKSPACE;
if (!workspace || !process.env.PARLEY_GITHUB_API || !process.env.GITHUB_TOKEN) {
  console.log('FAIL set PARLEY_E2E_WORKSPACE, PARLEY_GITHUB_API and GITHUB_TOKEN (tests/tests/vscode.rs does)');
  process.exit(1);
}

const tools = findTools();
const sandbox = new Sandbox(tools, 'pr');
let workbench;
const run = new StepRun(sandbox, RUN_TIMEOUT_MS, 'code-server.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);

/** Monaco renders spaces as no-break spaces. */
const plain = (text) => (text ?? '').replace(/\u00a0/g, ' ');

/** The text of a status bar item by its id's end ('' when hidden). */
async function statusItem(id) {
  const item = workbench.page.locator(`.statusbar-item[id$="${id}"]`).first();
  if (!(await item.isVisible().catch(() => false))) return '';
  return plain((await item.textContent({ timeout: 500 }).catch(() => '')) ?? '').trim();
}

/** `parley ARGS` in the workspace, as a person at a terminal with no GitHub token. */
function parleyHere(...args) {
  const env = sandbox.env();
  delete env.GITHUB_TOKEN;
  delete env.GH_TOKEN;
  const result = spawnSync(tools.parley, args, { cwd: workspace, env, encoding: 'utf8', timeout: 20_000 });
  expect(result.status === 0, `parley ${args.join(' ')} exited ${result.status}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

await step('the workspace is linked at a terminal, and the window shows the pull request in the status bar', async () => {
  const said = parleyHere('pr', 'link', 'octo/app#7');
  expect(said.includes('octo/app#7'), `parley pr link said ${said}`);
  const url = await sandbox.startCodeServer(workspace, { 'parley.executable': tools.parley, 'parley.startDaemon': false }, { toasts: true });
  workbench = run.workbench = new Workbench(await sandbox.browser());
  await workbench.open(url);
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
  await until('the pull request in the status bar', async () => (await statusItem('parley.pullRequest')) === 'octo/app#7', 20_000);
});

await step('without a GitHub token, Pull Review Comments says what to do', async () => {
  await workbench.openFile('src/lib.rs');
  await workbench.runCommand('Parley: Pull Review Comments from GitHub');
  await workbench.toast('Parley: pulling failed: no GitHub token for').waitFor({ timeout: 20_000 });
  const said = plain(await workbench.toast('Parley: pulling failed').textContent());
  expect(said.includes('gh auth login') && said.includes('GITHUB_TOKEN'), `the error says ${said}`);
  await workbench.screenshot(`${sandbox.shots}/pull-without-token.png`);
  await workbench.page.keyboard.press('Escape');
});

await step('the daemon runs again with GITHUB_TOKEN, and the window reconnects to it', async () => {
  const before = sandbox.daemonPid();
  parleyHere('stop');
  // By hand, as a service would run it: a daemon a client starts keeps none of its starter's keys.
  const daemon = spawn(tools.parley, ['daemon'], { detached: true, env: sandbox.env(), stdio: 'ignore' });
  sandbox.children.push(daemon);
  await until('the new daemon to run', async () => sandbox.daemonPid() !== undefined && sandbox.daemonPid() !== before);
  await until('the window to connect to the new daemon', async () => {
    const status = JSON.parse(sandbox.parley('status', '--json').stdout);
    return status.editors.some((e) => e.name === 'vscode');
  }, 60_000);
});

await step('Pull Review Comments from GitHub brings the teammate\'s thread onto its line in the editor', async () => {
  await workbench.runCommand('Parley: Pull Review Comments from GitHub');
  await workbench.toast('Pulled octo/app#7: 1 new thread').waitFor({ timeout: 20_000 });
  await until('the thread glyph on line 3', async () => (await workbench.threadGlyphLines()).includes(3));
  await workbench.toggleThreadAt(3);
  const widget = workbench.threadWidgets().filter({ hasText: 'Rename this to login_user' }).first();
  await widget.waitFor({ timeout: 10_000 });
  const text = plain(await widget.textContent());
  expect(text.includes('mona') && text.includes('GitHub octo/app#7'), `the thread shows ${text}`);
});

await step('a thread the person adds waits to be pushed, counted in the status bar', async () => {
  parleyHere('feedback', 'add', 'src/lib.rs:7', 'logout needs a test\nSee the other tests for the pattern', '--author', 'ana');
  await until('the status bar to count 1 to push', async () => (await statusItem('parley.pullRequest')) === 'octo/app#7 · 1 to push', 20_000);
  const tooltip = await workbench.page.locator('.statusbar-item[id$="parley.pullRequest"]').first().getAttribute('aria-label');
  expect(/octo\/app#7/.test(tooltip ?? ''), `the item's label is ${tooltip}`);
  await workbench.screenshot(`${sandbox.shots}/status-bar-pull-request.png`);
});

await step('Push to GitHub Pull Request previews what would go, then pushes it as a commented review', async () => {
  await workbench.runCommand('Parley: Push to GitHub Pull Request');
  const dialog = workbench.page.locator('.monaco-dialog-box').first();
  await dialog.waitFor({ timeout: 20_000 });
  const shown = plain(await dialog.textContent());
  expect(shown.includes('Push to octo/app#7?'), `the preview's title: ${shown}`);
  expect(shown.includes('src/lib.rs:7: logout needs a test'), `the preview lists the thread on its line with its first line: ${shown}`);
  expect(!shown.includes('See the other tests'), `the preview shows only the first line: ${shown}`);
  for (const choice of ['Push (leave pending)', 'Push and comment', 'Approve', 'Request changes', 'Cancel']) {
    expect(shown.includes(choice), `the preview offers ${choice}: ${shown}`);
  }
  await workbench.screenshot(`${sandbox.shots}/push-preview.png`);
  await dialog.getByRole('button', { name: 'Push and comment' }).click();
  const done = workbench.toast('Pushed to octo/app#7: 1 thread; review submitted (comment)');
  await done.waitFor({ timeout: 20_000 });
  expect((await done.getByRole('button', { name: 'Open Review on GitHub' }).count()) === 1, 'the message offers the review on GitHub');
  await until('the status bar to count nothing to push', async () => (await statusItem('parley.pullRequest')) === 'octo/app#7', 20_000);
});

await run.finish();
