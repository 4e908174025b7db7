// The extension reaching its daemon through a child process, as a Windows VS Code reaches a daemon in WSL (`wsl.exe parley attach --stdio`), in a real VS Code (code-server in headless Chromium). The extension's own PARLEY_SOCKET points where nothing listens and its parley.executable does not exist, so the socket is out of its reach; `parley.attach` runs the real `parley attach --stdio` with the sandbox's socket in its environment. The window connects (the attach child starts the daemon), shows a review an agent presents, and after the daemon stops, reconnects through a new child and shows the next one. Prints `ok`/`FAIL` per step and `N passed, N failed`; exits 1 on a failure.
//
// Usage: node test/e2e/attach.mjs   (tests/tests/vscode.rs runs it; scripts/test installs what it needs)
// PARLEY_E2E_KEEP=1 keeps the temp directory (screenshots, logs) after a passing run too.

import * as path from 'node:path';
import { Sandbox, agent, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const RUN_TIMEOUT_MS = 240_000;
const tools = findTools();
const sandbox = new Sandbox(tools, 'attach');
let workbench;
const run = new StepRun(sandbox, RUN_TIMEOUT_MS, 'code-server.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);

const workspace = makeWorkspace(path.join(sandbox.dir, 'shop'), { 'src/lib.rs': 'pub fn login() {}\n\nfn check() {}\n' });
const unreachable = path.join(sandbox.dir, 'nowhere', 'p.sock');
let mcp;

/** The window as the daemon lists it. */
function vscodeWindow() {
  const status = JSON.parse(sandbox.parley('status', '--json').stdout || '{}');
  return (status.editors ?? []).find((e) => e.name === 'vscode');
}

await step('with parley.attach set, the window connects through parley attach --stdio, which starts the daemon', async () => {
  const url = await sandbox.startCodeServer(
    workspace,
    {
      'parley.attach': ['env', `PARLEY_SOCKET=${sandbox.socket}`, tools.parley, 'attach', '--stdio'],
      'parley.executable': path.join(sandbox.dir, 'no-such-parley'),
    },
    { env: { PARLEY_SOCKET: unreachable } },
  );
  workbench = run.workbench = new Workbench(await sandbox.browser());
  await workbench.open(url);
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
  expect(sandbox.daemonPid() !== undefined, 'no daemon lock file: parley attach did not start the daemon');
  const window = vscodeWindow();
  expect(window?.workspaces.includes(workspace), `the daemon lists no vscode window on ${workspace}: ${JSON.stringify(window)}`);
});

await step('a review an agent presents appears in the panel', async () => {
  mcp = await agent(tools, sandbox, workspace);
  const editorId = vscodeWindow()?.editor_id;
  const result = await mcp.call('present_review', { content: '# Through attach\n\nThe entry point is [`src/lib.rs:1`][].\n' });
  expect(result.delivered_to?.some((d) => d.editorId === editorId), `not delivered to the window ${editorId}: ${JSON.stringify(result)}`);
  await workbench.review().locator('a.parley-ref[data-line="1"]').waitFor({ timeout: 30_000 });
});

await step('the daemon stops; the window reconnects through a new attach child and shows the next review', async () => {
  const pid = sandbox.daemonPid();
  const stopped = sandbox.parley('stop');
  expect(stopped.status === 0, `parley stop failed: ${stopped.stdout}${stopped.stderr}`);
  await workbench.waitForStatus(/disconnected|connecting/);
  await mcp.call('present_review', { content: '# After the restart\n\nSee [`src/lib.rs:3`][].\n' });
  await until('a new daemon', async () => sandbox.daemonPid() !== undefined && sandbox.daemonPid() !== pid, 30_000);
  await workbench.review().locator('h1', { hasText: 'After the restart' }).waitFor({ timeout: 30_000 });
  await until('the window to be listed again', async () => vscodeWindow() !== undefined, 30_000);
  expect(await workbench.stillTheSameLoad(), 'the page was reloaded');
});

await mcp?.close().catch(() => {});
await run.finish();
