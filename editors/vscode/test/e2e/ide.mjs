// What the window's language servers know, asked by an agent, in a real VS Code (code-server in headless Chromium) with its built-in TypeScript server, against the real daemon and the real parley-mcp driven by the official MCP TypeScript SDK: a walkthrough's findDefinition placed on the whole declaration TypeScript reports (a search of the workspace finds one line), findReferences on the definition and each use; get_diagnostics with TypeScript's error in the agent's terms (1-based, the document version, not differing from the disk), stale (not clean) for a file no tab shows, and fresh after the agent fixes or breaks the file on disk (the window waits for the new text's problems rather than answering the old ones). Prints `ok`/`FAIL` per step and `N passed, N failed`; exits 1 on a failure.
//
// Usage: node test/e2e/ide.mjs   (tests/tests/vscode.rs runs it; scripts/test installs what it needs)
// PARLEY_E2E_KEEP=1 keeps the temp directory (screenshots, logs) after a passing run too.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sandbox, agent, hubClient, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { StepRun, expect } from './steps.mjs';
import { Workbench } from './workbench.mjs';

const RUN_TIMEOUT_MS = 240_000;
const TOKEN = ['export function readToken(): string {', "  return 'secret';", '}', '', 'export function readTokenCached(): string {', '  return readToken();', '}', ''].join('\n');
const APP = ["import { readToken } from './token';", '', 'const first = readToken();', 'const count: number = first;', 'export const second = readToken() + count;', ''].join('\n');
const BROKEN = ["export const broken: string = 42;", ''].join('\n');
const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, target: 'es2022', module: 'commonjs' }, include: ['src'] });

const tools = findTools();
const sandbox = new Sandbox(tools, 'ide');
let workbench;
const run = new StepRun(sandbox, RUN_TIMEOUT_MS, 'code-server.log, trace.jsonl, shots/');
const step = (name, body) => run.step(name, body);

const workspace = makeWorkspace(path.join(sandbox.dir, 'web'), { 'src/token.ts': TOKEN, 'src/app.ts': APP, 'src/broken.ts': BROKEN, 'tsconfig.json': TSCONFIG });
let mcp;

/** The places of the latest walkthrough's one comment, as `path:start-end` (0-based). */
async function places() {
  const hub = await hubClient(sandbox.socket);
  const { walkthrough } = await hub.call('walkthrough/get', { workspace });
  hub.close();
  return (walkthrough?.blocks?.[0]?.places ?? []).map((p) => `${p.path}:${p.start_line}-${p.end_line}`);
}

const comment = (location) => ({ content: `# Tokens\n\n\`\`\`comment\nlocation: ${location}\n\nHere.\n\`\`\`\n`, title: 'Tokens' });

await step('code-server starts with the extension; TypeScript loads the project of the open file', async () => {
  const url = await sandbox.startCodeServer(workspace, { 'parley.executable': tools.parley });
  workbench = run.workbench = new Workbench(await sandbox.browser());
  await workbench.open(url);
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
  await workbench.openFile('app.ts');
  mcp = await agent(tools, sandbox, workspace);
});

await step('findDefinition is placed on the declaration TypeScript reports, not on a searched line', async () => {
  // TypeScript answers once its server has loaded the project: until then the window finds nothing and the search stands in (line 0 alone).
  let last = [];
  await until('TypeScript to report readToken\'s declaration (lines 0-2)', async () => {
    const answer = await mcp.call('present_walkthrough', comment('findDefinition(readToken)'));
    last = await places();
    return answer.placed === 1 && last.join() === 'src/token.ts:0-2';
  }, 60_000).catch((error) => {
    throw new Error(`${error.message}; placed on ${last}`);
  });
});

await step('findReferences places one comment on the definition and on each use', async () => {
  const answer = await mcp.call('present_walkthrough', comment('findReferences(readToken)'));
  const got = await places();
  expect(answer.placed === 1 && got.length === 5, `placed ${answer.placed}: ${JSON.stringify(answer)} on ${got}`);
  expect(got[0] === 'src/token.ts:0-0', `the definition comes first: ${got}`);
  for (const want of ['src/app.ts:0-0', 'src/app.ts:2-2', 'src/app.ts:4-4', 'src/token.ts:5-5']) expect(got.includes(want), `${want} is one of ${got}`);
});

await step("get_diagnostics gives TypeScript's error in the agent's terms, on the text on disk", async () => {
  const got = await mcp.call('get_diagnostics', { filePath: 'src/app.ts' });
  const file = got.files[0];
  expect(got.files.length === 1 && file.filePath === path.join(workspace, 'src/app.ts'), JSON.stringify(got));
  const error = file.diagnostics.find((d) => d.code === '2322');
  expect(error && error.severity === 'error' && error.source === 'ts' && error.line === 4 && error.column === 7, JSON.stringify(file));
  expect(file.differsFromDisk === false && file.dirty === false && file.stale === false && file.version >= 1, JSON.stringify(file));
});

await step('a file no editor tab shows, which TypeScript does not analyse, is answered stale, not clean', async () => {
  const got = await mcp.call('get_diagnostics', { filePath: 'src/broken.ts' });
  const file = got.files[0];
  expect(file && file.stale === true && file.diagnostics.length === 0, JSON.stringify(got));
  expect(/STALE/.test(got.message) && !/No problems in/.test(got.message), got.message);
});

await step('after the agent fixes the file on disk, the problems are of the new text, not the old', async () => {
  fs.writeFileSync(path.join(workspace, 'src/app.ts'), APP.replace('const count: number = first;', 'const count: string = first;'));
  const got = await mcp.call('get_diagnostics', { filePath: 'src/app.ts' });
  const file = got.files[0];
  expect(file.diagnostics.length === 0 && file.stale === false && file.differsFromDisk === false, JSON.stringify(got));
  expect(/No problems in/.test(got.message), got.message);
});

await step('the whole workspace: the files with problems, after the agent breaks app.ts again on disk', async () => {
  fs.writeFileSync(path.join(workspace, 'src/app.ts'), APP.replace('const count: number = first;', 'const count: boolean = first;'));
  const got = await mcp.call('get_diagnostics', {});
  const app = got.files.find((f) => f.filePath === path.join(workspace, 'src/app.ts'));
  expect(app && app.diagnostics.some((d) => d.line === 4 && /boolean/.test(d.message)) && app.stale === false, JSON.stringify(got));
});

await run.finish();
