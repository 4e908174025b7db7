// An agent (the official MCP TypeScript SDK on the real parley-mcp) guides a person through its change with present_walkthrough, in a real VS Code (code-server in headless Chromium) against the real daemon: the review panel shows the walkthrough in order, its diagram drawn by the bundled mermaid as an SVG with no request leaving the machine, a comment that could not be placed with its reason, the comments as threads in the editor marked as the walkthrough's and reached step by step, the gitdiff's files opening their diff, and a button whose message reaches the agent while the panel shows where it stands. Prints `ok`/`FAIL` per step and `N passed, N failed`.
//
// Usage: node test/e2e/walkthrough.mjs   (tests/tests/vscode.rs runs it; PARLEY_E2E_KEEP=1 keeps the screenshots)

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sandbox, agent, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const RUN_TIMEOUT_MS = 300_000;
const LIB_RS = ['//! Logging in.', '', 'pub fn login(user: &str) -> bool {', '    check_token(user, "t")', '}', '', 'fn check_token(user: &str, token: &str) -> bool {', '    !user.is_empty() && !token.is_empty()', '}', ''].join('\n');

const tools = findTools();
const sandbox = new Sandbox(tools, 'walk');
let workbench;
const run = new StepRun(sandbox, RUN_TIMEOUT_MS, 'code-server.log, p.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);

const workspace = makeWorkspace(path.join(sandbox.dir, 'shop'), { 'src/lib.rs': LIB_RS, 'README.md': '# Shop\n' });
// The agent's change: one commit that the gitdiff block shows.
const commit = (...args) => execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.com', ...args], { cwd: workspace, stdio: 'pipe' });
fs.writeFileSync(path.join(workspace, 'src/lib.rs'), LIB_RS.replace('!token.is_empty()', 'token.len() > 3'));
fs.writeFileSync(path.join(workspace, 'src/session.rs'), 'pub struct Session;\n');
commit('add', '.');
commit('commit', '-q', '-m', 'check the token length; sessions');

const WALKTHROUGH = [
  '# Token check',
  '',
  'The login path, then the change. The entry point is [`src/lib.rs:3`][].',
  '',
  '```mermaid',
  'flowchart TD',
  '  login[login] --> check[check_token]',
  '  check --> session[(Session)]',
  '```',
  '',
  '```comment',
  'location: src/lib.rs:8',
  'icon: lightbulb',
  '',
  'The token must now be **longer than three** characters.',
  '```',
  '',
  '```comment',
  'location: src/gone.rs:1',
  '',
  'This file was removed.',
  '```',
  '',
  '```comment',
  'location: src/lib.rs:3-5',
  '',
  'Where a login starts.',
  '```',
  '',
  '```gitdiff',
  'range: HEAD~1..HEAD',
  '```',
  '',
  '```action',
  'button: Run the tests',
  '',
  'Please run the whole test suite and tell me what fails.',
  '```',
  '',
].join('\n');

let mcp;
/** Requests the panel made to anywhere but code-server and its own files: it must not reach a CDN for mermaid. */
const outside = [];

await step('code-server starts with the extension, connected to the daemon', async () => {
  const url = await sandbox.startCodeServer(workspace, { 'parley.executable': tools.parley });
  workbench = run.workbench = new Workbench(await sandbox.browser());
  const origin = new URL(url).origin;
  workbench.page.context().on('request', (request) => {
    // The webview's frames only (the workbench itself asks the extension gallery, which is not the panel's doing).
    let frame = '';
    try {
      frame = request.frame().url();
    } catch {
      return;
    }
    if (!frame.includes('/webview/')) return;
    const u = request.url();
    // `*.vscode-resource.vscode-cdn.net` names the extension's own files: the webview's service worker serves them from code-server.
    const own = /^https:\/\/[^/]+\.vscode-resource\.vscode-cdn\.net\//.test(u) && u.includes('/parley.parley-');
    if (!u.startsWith(origin) && !own && !/^(data|blob|vscode-webview):/.test(u)) outside.push(u);
  });
  await workbench.open(url);
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
});

await step('an agent presents a walkthrough: the panel shows it in order, the diagram drawn as an SVG by the bundled mermaid', async () => {
  mcp = await agent(tools, sandbox, workspace);
  const answer = await mcp.call('present_walkthrough', { content: WALKTHROUGH });
  expect(answer.placed === 2, `placed ${JSON.stringify(answer)}`);
  expect(answer.unplaced?.length === 1, `unplaced ${JSON.stringify(answer)}`);
  const panel = workbench.review();
  await panel.locator('h1', { hasText: 'Token check' }).waitFor({ timeout: 30_000 });
  const svg = panel.locator('figure.wt-diagram svg');
  await svg.waitFor({ timeout: 30_000 });
  const labels = (await svg.textContent()) ?? '';
  expect(labels.includes('login') && labels.includes('check_token') && labels.includes('Session'), `the diagram's labels: ${labels}`);
  expect((await panel.locator('figure.wt-diagram svg g.node').count()) === 3, 'the diagram does not have its three nodes');
  // Drawn with mermaid's styles (moved into the CSS object model): a node is not painted black.
  const fill = await panel.locator('figure.wt-diagram svg g.node').first().locator('rect, path, polygon').first().evaluate((e) => getComputedStyle(e).fill);
  expect(fill !== 'rgb(0, 0, 0)', `the diagram's nodes are painted ${fill}: its styles did not apply`);
  expect((await panel.locator('pre.wt-mermaid-source').count()) === 0, "the diagram's source is still shown in place of the drawing");
  // In order: the heading, the diagram, the comments, the diff, the button.
  const order = await panel.locator('#content').evaluate((c) => [...c.querySelectorAll('h1, figure.wt-diagram, .wt-comment, .wt-gitdiff, .wt-action')].map((e) => e.tagName === 'H1' ? 'h1' : e.className.split(' ')[0]));
  expect(JSON.stringify(order) === JSON.stringify(['h1', 'wt-diagram', 'wt-comment', 'wt-comment', 'wt-comment', 'wt-gitdiff', 'wt-action']), `the parts are in this order: ${order}`);
  expect(outside.length === 0, `the page reached outside code-server: ${outside.join(', ')}`);
  // The panel's policy is the strict one: no inline styles or scripts, no eval.
  const csp = await panel.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  expect(csp && !csp.includes('unsafe-inline') && !csp.includes('unsafe-eval') && /script-src 'nonce-/.test(csp), `the panel's policy: ${csp}`);
});

await step("a comment's icon is the codicon it names, drawn from the font the extension ships", async () => {
  const icons = await workbench.review().locator('.wt-comment .wt-icon').evaluateAll(async (spans) => {
    await document.fonts.ready;
    return spans.map((e) => ({ glyph: getComputedStyle(e, '::before').content, font: getComputedStyle(e).fontFamily, text: e.textContent }));
  });
  // lightbulb, then the speech balloon for the two comments without an icon.
  expect(JSON.stringify(icons.map((i) => i.glyph)) === JSON.stringify(['"\uea61"', '"\uea6b"', '"\uea6b"']), `the icons are ${JSON.stringify(icons)}`);
  expect(icons.every((i) => i.font.includes('codicon') && i.text === ''), `the icons are not drawn with the codicon font: ${JSON.stringify(icons)}`);
  expect(await workbench.review().locator('body').evaluate(() => document.fonts.check('16px codicon')), 'the codicon font did not load in the panel');
});

await step('a comment that could not be placed is shown with its reason', async () => {
  const unplaced = workbench.review().locator('.wt-comment.unplaced');
  const text = (await unplaced.textContent()) ?? '';
  expect(text.includes('Not placed') && text.includes('src/gone.rs:1') && /does not exist|no such file|not found/i.test(text) && text.includes('This file was removed.'), `the unplaced comment reads: ${text}`);
});

await step("the placed comments are threads in the editor, marked as the walkthrough's, reached step by step", async () => {
  await workbench.runCommand('Parley: Next Walkthrough Step');
  await until('lib.rs to open at the first step', async () => /lib\.rs/.test(await workbench.activeTab()));
  await until('the cursor on line 8', async () => /Ln 8, Col 1/.test(await workbench.cursorStatus()));
  const widget = workbench.threadWidgets().filter({ hasText: 'longer than three' }).first();
  await widget.waitFor({ timeout: 20_000 });
  const text = (await widget.textContent()) ?? '';
  expect(text.includes('Walkthrough "Token check"'), `the thread is not marked as the walkthrough's: ${text}`);
  expect((await workbench.review().locator('#step-label').textContent())?.includes('Step 1 of 3: src/lib.rs:8'), 'the steps bar does not say step 1');
  expect((await workbench.review().locator('.wt-comment.wt-current').textContent())?.includes('longer than three'), 'the panel does not mark the first step');
  // The second step is the comment that was not placed: the panel marks it, the editor stays.
  await workbench.runCommand('Parley: Next Walkthrough Step');
  await until('the steps bar to say step 2', async () => ((await workbench.review().locator('#step-label').textContent()) ?? '').includes('Step 2 of 3: not placed'));
  await workbench.runCommand('Parley: Next Walkthrough Step');
  await until('the cursor on line 3 at the third step', async () => /Ln 3, Col 1/.test(await workbench.cursorStatus()));
  await workbench.threadWidgets().filter({ hasText: 'Where a login starts.' }).first().waitFor({ timeout: 20_000 });
  expect((await workbench.threadGlyphLines()).includes(8), 'the first comment has no thread glyph on line 8');
});

await step("the gitdiff lists the range's files, and one opens in a diff of that range", async () => {
  const files = workbench.review().locator('.wt-gitdiff a.wt-diff-file');
  await files.first().waitFor({ timeout: 20_000 });
  const names = await files.allTextContents();
  expect(JSON.stringify(names) === JSON.stringify(['src/lib.rs', 'src/session.rs']), `the diff lists ${names}`);
  await workbench.review().locator('.wt-gitdiff a.wt-diff-file', { hasText: 'src/lib.rs' }).click();
  await until('a diff tab for lib.rs', async () => /lib\.rs \(HEAD~1\.\.HEAD\)/.test(await workbench.activeTab()));
  // Side by side or inline (a narrow editor), the diff shows the line as it was and as it is.
  const diff = workbench.page.locator('.editor-group-container.active .monaco-diff-editor').first();
  await until('the two sides of the change', async () => {
    const text = ((await diff.textContent()) ?? '').replace(/\u00a0/g, ' ');
    return text.includes('!token.is_empty()') && text.includes('token.len() > 3');
  });
  expect((await workbench.page.locator('.editor-group-container').count()) === 2, 'the steps and the diff opened more than one column beside the panel');
});

await step("a button's message reaches the agent, and the panel shows it waiting, delivered, then read", async () => {
  const panel = workbench.review();
  await panel.locator('button.wt-act', { hasText: 'Run the tests' }).click();
  const state = panel.locator('.wt-action .wt-click-state');
  await state.waitFor({ timeout: 20_000 });
  await until('the click to show waiting', async () => (await state.getAttribute('data-state')) === 'waiting');
  expect(/waiting for /.test((await state.textContent()) ?? ''), `the click reads ${await state.textContent()}`);
  const told = await mcp.text('get_feedback_summary');
  expect(told.includes('clicked "Run the tests"') && told.includes('Please run the whole test suite and tell me what fails.'), `the agent was told: ${told}`);
  await until('the click to show delivered', async () => (await state.getAttribute('data-state')) === 'delivered');
  expect(/delivered to .* \(in its next tool answer\)/.test((await state.textContent()) ?? ''), `the click reads ${await state.textContent()}`);
  await mcp.text('get_feedback_summary');
  await until('the click to show read', async () => (await state.getAttribute('data-state')) === 'read');
  await panel.locator('figure.wt-diagram svg').waitFor({ timeout: 5_000 });
});

await step('a step taken while the panel shows a review brings the walkthrough back at that step', async () => {
  await mcp.call('present_review', { content: '# A review\n\n' + Array.from({ length: 80 }, (_, i) => `Line ${i} of a long review.\n`).join('\n') });
  const panel = workbench.review();
  await panel.locator('h1', { hasText: 'A review' }).waitFor({ timeout: 20_000 });
  // From the third step back to the second, the comment that was not placed, below the diagram and the first comment.
  await workbench.runCommand('Parley: Previous Walkthrough Step');
  await until('the steps bar to say step 2', async () => ((await panel.locator('#step-label').textContent()) ?? '').includes('Step 2 of 3'));
  const current = panel.locator('.wt-comment.wt-current');
  let where;
  await until('the panel to scroll to the current step', async () => {
    where = await current.evaluate((e) => ({ top: e.getBoundingClientRect().top, bottom: e.getBoundingClientRect().bottom, height: window.innerHeight, scrolled: window.scrollY }));
    return where.top >= 0 && where.bottom <= where.height && where.scrolled > 0;
  }).catch((error) => {
    throw new Error(`${error.message}; the current step is at ${JSON.stringify(where)}`);
  });
  expect((await current.textContent())?.includes('This file was removed.'), 'the panel marks another step');
});

await mcp?.close().catch(() => {});
await run.finish();
