// The walkthrough benchmark (BENCHMARKS.md, "VS Code: a 50-comment walkthrough"): an agent's present_walkthrough with 50 comments on distinct lines of five files and 10 mermaid diagrams, from the call until every comment is a thread given to VS Code, the thread glyphs of the open file are on screen and every diagram is drawn as an SVG in the panel; against present_review of the same markdown size with 50 references, from the call until the panel has painted all of it. Rounds alternate the two in one window. Prints a report; asserts nothing about timings.
//
// Usage: node test/e2e/bench-walkthrough.mjs   (after scripts/test has installed code-server and packaged the extension; PARLEY_BIN and PARLEY_MCP_BIN choose the binaries, e.g. target/release; PARLEY_BENCH_RUNS the rounds, 5 by default; PARLEY_BENCH_SHOT=FILE.png keeps a screenshot of the last walkthrough at its first step; PARLEY_BENCH_PROFILE=FILE.cpuprofile the workbench's CPU profile of the last walkthrough round; PARLEY_BENCH_SETTINGS='{"comments.openView":"never"}' VS Code settings of the run)

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sandbox, agent, makeWorkspace, tools as findTools, until } from './sandbox.mjs';
import { Workbench } from './workbench.mjs';

const RUNS = Number(process.env.PARLEY_BENCH_RUNS ?? 5);
const COMMENTS = 50;
const FILES = 5;
const DIAGRAMS = 10;
const PER_FILE = COMMENTS / FILES;
/** A file to write the workbench's CPU profile of the last walkthrough round to (Chrome's .cpuprofile). */
const PROFILE = process.env.PARLEY_BENCH_PROFILE;
/** VS Code settings over the bench's own, as JSON (e.g. {"comments.openView":"never"}: the Comments panel left closed). */
const SETTINGS = JSON.parse(process.env.PARLEY_BENCH_SETTINGS ?? '{}');
const tools = findTools();
const sandbox = new Sandbox(tools, 'wbench');
const watchdog = setTimeout(() => {
  console.error('the benchmark did not finish within 15 minutes');
  void sandbox.close({ keep: true }).then(() => process.exit(1));
}, 15 * 60_000);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const ms = (x) => `${Math.round(x)} ms`;
const rows = [];
function row(what, measured, baseline, note = '') {
  rows.push(`| ${what} | ${measured} | ${baseline} | ${note} |`);
  console.error(rows.at(-1));
}

// Rounds 0 (the first walkthrough and review in the window, reported apart) to RUNS: each its own five files,
// so that no file gathers the threads of several rounds.
const fileOf = (round, f) => `src/r${round}_${f}.rs`;
/** The 1-based lines a file's comments are on: all on its first screen. */
const lineOf = (k) => 2 + 2 * k;
const files = {};
for (let round = 0; round <= RUNS; round++) {
  for (let f = 0; f < FILES; f++) {
    files[fileOf(round, f)] = Array.from({ length: 60 }, (_, i) => `pub fn r${round}_${f}_${i}(x: usize) -> usize { x + ${i} }`).join('\n') + '\n';
  }
}
const workspace = makeWorkspace(path.join(sandbox.dir, 'ws'), files);

const commentBody = (round, n) => `Step ${n + 1} of round ${round}: this function now **adds** its index, so callers that relied on\nthe old value must change; see the test below.`;
/** A flowchart of six nodes, its labels its own (the panel does not draw a diagram it drew before again). */
const diagram = (round, d) => ['flowchart TD', `  a${d}[request ${round}.${d}] --> b${d}[parse]`, `  b${d} --> c${d}{valid?}`, `  c${d} -->|yes| e${d}[store]`, `  c${d} -->|no| f${d}[reject]`, `  e${d} --> g${d}[(database)]`].join('\n');

/** The walkthrough of `round`: prose, 10 diagrams and 50 comments interleaved. */
function walkthrough(round) {
  const out = [`# Walkthrough ${round}`, '', 'How a request goes through the service after this change, part by part.', ''];
  for (let n = 0; n < COMMENTS; n++) {
    if (n % (COMMENTS / DIAGRAMS) === 0) {
      const d = n / (COMMENTS / DIAGRAMS);
      out.push(`## Part ${d + 1}`, '', `What part ${d + 1} does:`, '', '```mermaid', diagram(round, d), '```', '');
    }
    const f = n % FILES;
    const k = Math.floor(n / FILES);
    out.push('```comment', `location: ${fileOf(round, f)}:${lineOf(k)}`, 'icon: lightbulb', '', commentBody(round, n), '```', '');
  }
  return out.join('\n');
}

/** A review of `round` as long as its walkthrough: the same prose and diagrams' sources as code, 50 references in place of the comments. */
function review(round, size) {
  const out = [`# Review ${round}`, '', 'How a request goes through the service after this change, part by part.', ''];
  for (let n = 0; n < COMMENTS; n++) {
    if (n % (COMMENTS / DIAGRAMS) === 0) {
      const d = n / (COMMENTS / DIAGRAMS);
      out.push(`## Part ${d + 1}`, '', `What part ${d + 1} does:`, '', '```text', diagram(round, d), '```', '');
    }
    const f = n % FILES;
    const k = Math.floor(n / FILES);
    out.push(`- [\`${fileOf(round, f)}:${lineOf(k)}\`][]: ${commentBody(round, n)}`, '');
  }
  let text = out.join('\n');
  while (text.length < size) text += `\nMore on this change, to make the review as long as the walkthrough (${size - text.length} characters to go).\n`;
  return text;
}

/** In the page: the time once `count` thread glyphs show (the file of a walkthrough's first comments is open), else false. */
function glyphsShown(count) {
  const glyphs = document.querySelectorAll('.editor-group-container .comment-range-glyph.comment-thread, .editor-group-container .comment-range-glyph.comment-thread-unresolved');
  return glyphs.length >= count ? Date.now() : false;
}

/** Polls the page every few milliseconds until `count` thread glyphs show; resolves with the page's wall clock then. */
async function glyphsAt(workbench, count) {
  const end = Date.now() + 60_000;
  for (;;) {
    const at = await workbench.page.evaluate(glyphsShown, count);
    if (at) return at;
    if (Date.now() > end) throw new Error(`${count} thread glyphs did not show within 60 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const walk = { total: [], answered: [], received: [], threads: [], glyphs: [], diagrams: [], diagramsWebview: [], render: [] };
const plain = { total: [], answered: [], received: [], complete: [] };
let first;

/** One walkthrough round: opens the file of its first comments beside the panel, presents, waits for everything to show. */
async function walkthroughRound(workbench, mcp, round) {
  await workbench.runCommand('View: Focus First Editor Group');
  await workbench.openFile(fileOf(round, 0));
  const content = walkthrough(round);
  let profiler;
  if (PROFILE && round === RUNS) {
    profiler = await workbench.page.context().newCDPSession(workbench.page);
    await profiler.send('Profiler.enable');
    await profiler.send('Profiler.start');
  }
  const started = Date.now();
  const answer = await mcp.call('present_walkthrough', { content, title: `Walkthrough ${round}` });
  const answered = Date.now();
  if (answer.placed !== COMMENTS) throw new Error(`placed ${answer.placed} of ${COMMENTS} comments: ${JSON.stringify(answer.unplaced)}`);
  const id = answer.walkthroughId;
  const glyphs = await glyphsAt(workbench, PER_FILE);
  await until(`the ${COMMENTS} threads of walkthrough ${id} to be given to VS Code`, () => sandbox.marks('walkthrough-thread-shown').filter((m) => m.walkthrough === id).length >= COMMENTS, 60_000);
  const drawn = await until(`the diagrams of walkthrough ${id} to be drawn`, () => sandbox.marks('walkthrough-diagrams').find((m) => m.id === id && m.drawn + m.failed >= DIAGRAMS), 60_000);
  if (drawn.drawn !== DIAGRAMS) throw new Error(`${drawn.failed} of the ${DIAGRAMS} diagrams could not be drawn`);
  const threads = Math.max(...sandbox.marks('walkthrough-thread-shown').filter((m) => m.walkthrough === id).map((m) => m.at));
  const received = sandbox.marks('walkthrough-received').find((m) => m.id === id);
  const render = sandbox.marks('walkthrough-render').find((m) => m.id === id);
  const done = Math.max(glyphs, threads, drawn.at);
  if (profiler) fs.writeFileSync(PROFILE, JSON.stringify((await profiler.send('Profiler.stop')).profile));
  const result = { total: done - started, answered: answered - started, received: received.at - started, threads: threads - started, glyphs: glyphs - started, diagrams: drawn.at - started, diagramsWebview: drawn.webviewMs, render: render.renderMs, size: content.length };
  console.error(`walkthrough ${round}: ${JSON.stringify(result)}`);
  return result;
}

/** One review round: presents a review as long as the walkthrough, waits for the panel to paint all of it. */
async function reviewRound(mcp, round, size) {
  const content = review(round, size);
  const started = Date.now();
  const { revision } = await mcp.call('present_review', { content });
  const answered = Date.now();
  const complete = await until(`review revision ${revision} to be painted whole`, () => sandbox.marks('review-complete').find((m) => m.revision === revision), 60_000);
  const received = sandbox.marks('review-render').find((m) => m.revision === revision);
  const result = { total: complete.at - started, answered: answered - started, received: received.at - started, complete: complete.sinceReceived, size: content.length };
  console.error(`review ${round}: ${JSON.stringify(result)}`);
  return result;
}

let workbench;
try {
  const url = await sandbox.startCodeServer(workspace, { 'parley.executable': tools.parley, 'workbench.editor.enablePreview': false, ...SETTINGS });
  workbench = new Workbench(await sandbox.browser());
  await workbench.open(url);
  await workbench.waitForStatus(/Parley: 0 threads/, 60_000);
  const mcp = await agent(tools, sandbox, workspace);

  // The first of each in the window: the panel opens, mermaid is loaded.
  await workbench.openFile(fileOf(0, 0));
  first = await walkthroughRound(workbench, mcp, 0);
  const firstReview = await reviewRound(mcp, 0, first.size);
  row('the first walkthrough in the window: present_walkthrough called → last comment shown and every diagram drawn', ms(first.total), `the first review after it: ${ms(firstReview.total)}`, 'mermaid (the bundled renderer) is loaded into the panel with the first diagram');

  for (let round = 1; round <= RUNS; round++) {
    // Alternating which goes first, so that neither always follows the other.
    const order = round % 2 === 1 ? ['walkthrough', 'review'] : ['review', 'walkthrough'];
    for (const kind of order) {
      if (kind === 'walkthrough') {
        const r = await walkthroughRound(workbench, mcp, round);
        for (const key of Object.keys(walk)) walk[key].push(r[key]);
      } else {
        const r = await reviewRound(mcp, round, first.size);
        for (const key of Object.keys(plain)) plain[key].push(r[key]);
      }
    }
  }

  const size = `${first.size.toLocaleString('en')} characters`;
  row(`50 comments, 10 diagrams: present_walkthrough called → every comment a thread, the open file's glyphs on screen and every diagram drawn (median of ${RUNS})`, ms(median(walk.total)), `a review of the same size (${size}, 50 references): present_review called → all of it painted: ${ms(median(plain.total))}`, `${(median(walk.total) / median(plain.total)).toFixed(2)}×`);
  row('… the agent has its answer (the daemon placed the 50 comments as threads)', ms(median(walk.answered)), `the review: ${ms(median(plain.answered))}`, `${(median(walk.answered) / median(plain.answered)).toFixed(2)}×`);
  row('… the window has the walkthrough', ms(median(walk.received)), `the review: ${ms(median(plain.received))}`, '');
  row('… the last of the 50 threads given to VS Code', ms(median(walk.threads)), '', '');
  row(`… the ${PER_FILE} thread glyphs of the open file on screen`, ms(median(walk.glyphs)), '', '');
  row('… the 10 diagrams drawn as SVG in the panel', ms(median(walk.diagrams)), `the review painted whole: ${ms(median(plain.total))}`, `drawing took ${ms(median(walk.diagramsWebview))} in the webview; rendering the walkthrough's HTML ${median(walk.render).toFixed(1)} ms in the extension host`);

  if (process.env.PARLEY_BENCH_SHOT) {
    await workbench.runCommand('Parley: Next Walkthrough Step');
    await workbench.page.waitForTimeout(1000);
    await workbench.screenshot(process.env.PARLEY_BENCH_SHOT);
  }
  await mcp.close();

  console.log('| what | measured | baseline in the same run | ratio, note |');
  console.log('| --- | --- | --- | --- |');
  for (const r of rows) console.log(r);
  clearTimeout(watchdog);
  await sandbox.close({ keep: false });
} catch (error) {
  console.error(`the benchmark failed: ${error?.stack ?? error}; files kept in ${sandbox.dir}`);
  await workbench?.screenshot(path.join(sandbox.shots, 'failure.png')).catch(() => {});
  await sandbox.close({ keep: true });
  process.exit(1);
}
