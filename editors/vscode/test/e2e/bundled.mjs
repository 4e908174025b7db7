// The per-platform extension package (scripts/package: `vsce package --target linux-x64` with bin/parley and bin/parley-mcp inside) installed into a VS Code with no `parley` on PATH and no `parley.executable`: installing it is all a user does. The extension starts the daemon it carries, connects, and shows a review an agent presents. Prints `ok`/`FAIL` per step and `N passed, N failed`; exits 1 on a failure.
//
// Usage: PARLEY_VSIX=dist/vscode/parley-linux-x64-VERSION.vsix node test/e2e/bundled.mjs   (tests/tests/packaging.rs runs it)

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sandbox, agent, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const tools = findTools();
const sandbox = new Sandbox(tools, 'bundled');
// Node 24 for code-server and the system's folders; no folder holding a parley.
sandbox.path = [tools.node24, ...(process.env.PATH ?? '').split(':').filter((dir) => dir !== '' && !fs.existsSync(path.join(dir, 'parley')))].join(':');
let workbench;
const run = new StepRun(sandbox, 240_000, 'code-server.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);

const workspace = makeWorkspace(path.join(sandbox.dir, 'shop'), { 'src/lib.rs': 'pub fn login() -> bool {\n    true\n}\n' });

await step('code-server starts with the linux-x64 package installed and nothing of Parley on PATH or in the settings', async () => {
  const url = await sandbox.startCodeServer(workspace, {});
  workbench = run.workbench = new Workbench(await sandbox.browser());
  await workbench.open(url);
});

await step('the extension starts the parley it carries and connects', async () => {
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
  const pid = await until('the daemon to write its lock file', () => sandbox.daemonPid());
  const executable = fs.readlinkSync(`/proc/${pid}/exe`);
  const installed = fs.realpathSync(path.join(sandbox.dir, 'ext'));
  expect(executable.startsWith(installed) && executable.endsWith('/bin/parley'), `the daemon runs ${executable}, not the extension's own bin/parley under ${installed}`);
});

await step("VS Code's agent is offered the parley-mcp the extension carries", async () => {
  const installed = fs.realpathSync(path.join(sandbox.dir, 'ext'));
  const offered = await until('the MCP server provider to be registered', () => sandbox.marks('mcp-offered').at(-1));
  expect(offered.command.startsWith(installed) && offered.command.endsWith('/bin/parley-mcp'), `the MCP server offered is ${offered.command}, not the extension's own bin/parley-mcp under ${installed}`);
});

await step('a review presented through MCP appears in the panel', async () => {
  const mcp = await agent(tools, sandbox, workspace);
  await mcp.call('present_review', { content: '# Login review\n\nThe entry point is [`src/lib.rs:1`][].\n' });
  await workbench.review().locator('a.parley-ref[data-line="1"]').waitFor({ timeout: 30_000 });
  await mcp.close();
});

await run.finish();
