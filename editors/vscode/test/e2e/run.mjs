// The extension in a real VS Code (code-server in headless Chromium) against the real daemon and the real parley-mcp driven by the official MCP TypeScript SDK, the way a person and an agent use them together. Each step is something a user would notice; the first failure stops the run with a screenshot. Prints `ok`/`FAIL` per step and `N passed, N failed`; exits 1 on a failure.
//
// Usage: node test/e2e/run.mjs   (from anywhere; tests/tests/vscode.rs runs it, scripts/test installs what it needs)
// PARLEY_E2E_KEEP=1 keeps the temp directory (screenshots, logs) after a passing run too.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sandbox, agent, hubClient, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const RUN_TIMEOUT_MS = 300_000;
const LIB_RS = [
  '//! A small library.',
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

const tools = findTools();
const sandbox = new Sandbox(tools, 'e2e');
let workbench;
const run = new StepRun(sandbox, RUN_TIMEOUT_MS, 'code-server.log, p.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);
const finish = () => run.finish();

const workspace = makeWorkspace(path.join(sandbox.dir, 'shop'), { 'src/lib.rs': LIB_RS, 'README.md': '# Shop\n' });
let editorId;
let mcp;
let threadId;

await step('code-server starts with the extension installed from the .vsix', async () => {
  // The extension host's PATH comes from a login shell, which resets it: name the binary in the settings, as a user with parley outside PATH would.
  const url = await sandbox.startCodeServer(workspace, { 'parley.executable': tools.parley });
  workbench = run.workbench = new Workbench(await sandbox.browser());
  await workbench.open(url);
});

await step('the extension starts the daemon, connects, and shows it in the status bar', async () => {
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
  const status = JSON.parse(sandbox.parley('status', '--json').stdout);
  const window = status.editors.find((e) => e.name === 'vscode');
  expect(window, `the daemon lists no vscode window: ${JSON.stringify(status.editors)}`);
  expect(window.workspaces.includes(workspace), `the window's hello names ${window.workspaces}, not ${workspace}`);
  expect(/^vscode-\d+$/.test(window.editor_id), `editor id ${window.editor_id}`);
  editorId = window.editor_id;
  expect(sandbox.daemonPid() !== undefined, 'no daemon lock file: the extension did not start the daemon');
});

await step('a review presented through MCP appears in the panel, unresolved references with their reason', async () => {
  mcp = await agent(tools, sandbox, workspace);
  const result = await mcp.call('present_review', {
    content: '# Login review\n\nThe entry point is [`src/lib.rs:3`][]; the check is [here](src/lib.rs#L8-L10).\n\nAnd [`src/gone.rs:1`][] was removed.\n\n<script>document.title = "pwned"</script>\n',
  });
  expect(result.delivered_to?.some((d) => d.editorId === editorId), `not delivered to this window: ${JSON.stringify(result)}`);
  const review = workbench.review();
  await review.locator('a.parley-ref[data-line="3"]').waitFor({ timeout: 30_000 });
  const problem = await review.locator('.ref-problem').textContent();
  expect(/src\/gone\.rs does not exist/.test(problem ?? ''), `unresolved reference shown as ${problem}`);
  const text = await review.locator('#content').textContent();
  expect(text?.includes('<script>'), 'the script tag is shown as text');
  expect(!(await workbench.page.title()).includes('pwned'), 'the review ran script');
});

await step('clicking a reference opens the file at that line', async () => {
  await workbench.review().locator('a.parley-ref[data-line="3"]').click();
  await until('lib.rs to be the active tab', async () => /lib\.rs/.test(await workbench.activeTab()));
  await until('the cursor on line 3', async () => /Ln 3, Col 1/.test(await workbench.cursorStatus()));
});

await step("a selection made in the editor is what the agent's get_selection returns", async () => {
  await workbench.page.keyboard.press('Home');
  await workbench.page.keyboard.press('Shift+End');
  await until('the selection in the status bar', async () => /selected/.test(await workbench.cursorStatus()));
  // The extension host hears of the selection a moment after the status bar shows it.
  let selection;
  await until('get_selection to return the selected line', async () => {
    selection = await mcp.call('get_selection');
    return selection.selectedText === 'pub fn login(user: &str) -> bool {';
  }, 10_000).catch((error) => {
    throw new Error(`${error.message}; last answer ${JSON.stringify(selection)}`);
  });
  expect(selection.filePath?.endsWith('src/lib.rs') && selection.startLine === 3, `where: ${JSON.stringify(selection)}`);
  expect(selection.documentLanguage === 'rust', `language ${selection.documentLanguage}`);
});

await step('a comment added from the gutter is read by the agent through MCP', async () => {
  await workbench.page.keyboard.press('Escape');
  await workbench.clickCommentGutter(4);
  await workbench.submitComment('Use a real token here', 'Add Comment');
  await workbench.waitForStatus(/Parley: 1 thread\b/);
  const { threads } = await mcp.call('get_feedback');
  expect(threads.length === 1, `the agent sees ${threads.length} threads`);
  expect(threads[0].comments[0].body === 'Use a real token here', `body ${JSON.stringify(threads[0].comments)}`);
  expect(threads[0].range.startLine === 4, `line ${JSON.stringify(threads[0].range)}`);
  expect(threads[0].selectedText.includes('let token = "naïve";'), `text ${threads[0].selectedText}`);
  threadId = threads[0].id;
});

await step("the agent's reply appears in the thread, and its resolve updates the window", async () => {
  await mcp.call('reply_feedback', { threadId, body: 'Done: the token comes from the vault now' });
  await until('the reply in the thread widget', async () => (await workbench.threadWidgets().allTextContents()).some((t) => t.includes('Done: the token comes from the vault now')));
  const widgets = (await workbench.threadWidgets().allTextContents()).join(' ');
  expect(widgets.includes('test-agent'), `the reply's author is not shown: ${widgets}`);
  await workbench.runCommand('Comments: Focus on Comments View');
  await until('the thread in the Comments panel', async () => /Use a real token here/.test((await workbench.commentsPanel()) ?? ''));
  await mcp.call('resolve_feedback', { threadId });
  await workbench.waitForStatus(/Parley: 0 threads/);
});

await step("reopen and resolve from the thread's own actions reach the agent", async () => {
  await workbench.threadAction(4, 'Reopen');
  await workbench.waitForStatus(/Parley: 1 thread\b/);
  expect((await mcp.call('get_feedback')).threads.length === 1, 'the agent does not see the reopened thread');
  await workbench.threadAction(4, 'Resolve');
  await workbench.waitForStatus(/Parley: 0 threads/);
  expect((await mcp.call('get_feedback')).threads.length === 0, 'the agent still sees the resolved thread');
  await workbench.threadAction(4, 'Reopen');
  await workbench.waitForStatus(/Parley: 1 thread\b/);
});

await step('a thread follows typing above it, and lands there on disk after a save', async () => {
  await until('the thread glyph on line 4', async () => (await workbench.threadGlyphLines()).includes(4));
  await workbench.page.locator('.editor-group-container.active .view-lines').first().click();
  await workbench.page.keyboard.press('Control+Home');
  // Two new lines typed above the thread. Plain statements, not comments:
  // Enter after a `//` line may continue the comment on its own, once the
  // language's rules have loaded, which would type other text than meant.
  await workbench.page.keyboard.type('use one;');
  await workbench.page.keyboard.press('Enter');
  await workbench.page.keyboard.press('Home');
  await workbench.page.keyboard.type('use two;');
  await workbench.page.keyboard.press('Enter');
  await until('the thread glyph to move to line 6', async () => {
    const lines = await workbench.threadGlyphLines();
    return lines.includes(6) && !lines.includes(4);
  });
  // Unsaved: the agent still sees the file on disk.
  expect((await mcp.call('get_feedback')).threads[0].range.startLine === 4, 'the agent saw unsaved text');
  await workbench.page.keyboard.press('Control+s');
  await until('the agent to see the thread on line 6', async () => (await mcp.call('get_feedback')).threads[0]?.range.startLine === 6);
  // The gutter is redrawn after a save; the glyph is read once it has settled.
  await until('the thread glyph to be on line 6 after the save', async () => {
    const lines = await workbench.threadGlyphLines();
    return lines.includes(6) && !lines.includes(4);
  }, 5_000);
});

await step("an agent's edit on disk moves the thread live, and deleting its text orphans it", async () => {
  const file = path.join(workspace, 'src/lib.rs');
  fs.writeFileSync(file, '// from the agent\n' + fs.readFileSync(file, 'utf8'));
  await until('the thread glyph to move to line 7', async () => (await workbench.threadGlyphLines()).includes(7), 20_000);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('    let token = "naïve";\n', ''));
  await until('the thread to show as orphaned on the file', async () => {
    const text = (await workbench.threadWidgets().allTextContents()).join(' ');
    return text.includes('Orphaned (was L7)') && text.includes('let token = "naïve";');
  }, 20_000);
  expect((await mcp.call('get_feedback')).threads[0].orphaned === true, 'the agent does not see the thread orphaned');
  await until('the orphan to leave its line for the whole file', async () => (await workbench.threadGlyphLines()).length === 0, 10_000);
});

await step('the review changes live, and earlier revisions stay reachable', async () => {
  await mcp.call('present_review', { content: '## Follow-up\n\nThe orphaned thread is about [`src/lib.rs:4`][].\n', mode: 'append' });
  const review = workbench.review();
  await review.locator('h2', { hasText: 'Follow-up' }).waitFor({ timeout: 20_000 });
  expect((await review.locator('#history option').count()) === 2, 'the history does not list two revisions');
  // Each revision says who made it: the daemon keeps the source with the revision.
  const first = (await review.locator('#history option[value="1"]').textContent()) ?? '';
  expect(first.includes('presented by test-agent'), `revision 1 in the history does not name its agent: ${first}`);
  expect(((await review.locator('#title').textContent()) ?? '').includes('presented by test-agent'), 'the header does not name who presented the review');
  await review.locator('#history').selectOption('1');
  await review.locator('#banner', { hasText: 'earlier revision (presented by test-agent)' }).waitFor({ state: 'visible', timeout: 10_000 });
  expect((await review.locator('h2', { hasText: 'Follow-up' }).count()) === 0, 'revision 1 still shows the appended section');
  await review.locator('#latest').click();
  await review.locator('h2', { hasText: 'Follow-up' }).waitFor({ timeout: 10_000 });
});

await step("text selected in the review panel is what the agent's get_selection returns", async () => {
  const heading = workbench.review().locator('h2', { hasText: 'Follow-up' });
  await heading.click({ clickCount: 3 });
  await until('the panel selection to reach the agent', async () => {
    const selection = await mcp.call('get_selection');
    return selection.selectedText?.includes('Follow-up') && /Parley review/.test(selection.filePath ?? '');
  }, 10_000);
});

await step('a terminal opened in the window has PARLEY_EDITOR_ID', async () => {
  const out = path.join(sandbox.dir, 'editor-id.txt');
  await workbench.runCommand('Terminal: Create New Terminal');
  const terminal = workbench.page.locator('.terminal-wrapper.active .xterm, .xterm').first();
  await terminal.waitFor({ timeout: 20_000 });
  await terminal.click();
  await until('the shell prompt', async () => ((await terminal.textContent()) ?? '').trim().length > 0, 20_000);
  await workbench.page.keyboard.type(`echo "$PARLEY_EDITOR_ID" > ${out}\n`);
  const written = await until('the terminal to write the id', () => fs.existsSync(out) && fs.readFileSync(out, 'utf8').trim());
  expect(written === editorId, `the terminal has PARLEY_EDITOR_ID=${written}, the window ${editorId}`);
});

await step('a daemon killed and restarted is reconnected to without a reload', async () => {
  const pid = sandbox.daemonPid();
  process.kill(pid, 'SIGKILL');
  await workbench.waitForStatus(/disconnected|connecting/);
  // The agent's next call starts a new daemon (the shim does); the window finds it by itself.
  await mcp.call('present_review', { content: '# Second look\n\nAfter the restart: [`src/lib.rs:8`][].\n' });
  expect(sandbox.daemonPid() !== pid, 'the daemon was not restarted');
  await workbench.review().locator('h1', { hasText: 'Second look' }).waitFor({ timeout: 30_000 });
  // The orphaned thread is still open, fetched again from the new daemon.
  await workbench.waitForStatus(/Parley: 1 thread\b/);
  expect(await workbench.stillTheSameLoad(), 'the page was reloaded');
});

await step('a file with many threads shows the threads on screen, and those further down once scrolled to', async () => {
  // Over 50 threads: the extension gives VS Code only the threads around the screen (src/threads/window.ts).
  const file = path.join(workspace, 'src/big.rs');
  fs.writeFileSync(file, Array.from({ length: 600 }, (_, i) => `pub fn big_${i}() {}`).join('\n') + '\n');
  const hub = await hubClient(sandbox.socket);
  for (let i = 0; i < 120; i++) {
    await hub.call('feedback/create', { path: file, range: { start: { line: i * 5, character: 0 }, end: { line: i * 5, character: 6 } }, body: `note ${i}`, author: 'ana' });
  }
  hub.close();
  await workbench.waitForStatus(/Parley: 121 threads/);
  await workbench.openFile('src/big.rs');
  await until('thread glyphs on the first screen, every fifth line', async () => {
    const lines = await workbench.threadGlyphLines();
    return lines.includes(1) && lines.includes(6) && lines.includes(11);
  }, 10_000);
  await workbench.goToLine(500);
  let lines = [];
  await until('thread glyphs around line 500', async () => {
    lines = await workbench.threadGlyphLines();
    return lines.includes(496) && lines.includes(501);
  }, 10_000).catch((error) => {
    throw new Error(`${error.message}; glyphs on lines ${lines}`);
  });
  expect(lines.every((line) => line % 5 === 1), `glyphs on lines without threads: ${lines}`);
  // Opened, a thread shown this way has its comment and a reply box, like any other.
  const widget = workbench.threadWidgets().filter({ hasText: 'note 100' }).first();
  // The gutter is redrawn as the threads around the screen arrive: click again until the thread opens.
  await until('the thread on line 501 to open', async () => {
    if (await widget.isVisible()) return true;
    await workbench.toggleThreadAt(501).catch(() => {});
    await widget.waitFor({ timeout: 2000 }).catch(() => {});
    return widget.isVisible();
  }, 20_000);
  await widget.locator('.comment-form').first().waitFor({ state: 'visible', timeout: 10_000 });
});

await mcp?.close().catch(() => {});
await finish();
