// A review round longer than a host's patience, driven by the official MCP
// TypeScript SDK with its default request timeout (60 s), as the MCP
// Inspector and many hosts use it. tests/tests/sessions.rs runs it against a
// daemon whose reviewer takes ROUND_SECONDS; it must not start, stop or
// configure a daemon itself.
//
// Usage: node ts_long_round.mjs SHIM WORKSPACE
// Environment: PARLEY_SOCKET, PARLEY_DATA_DIR and PARLEY_DAEMON for the shim;
// PARLEY_TEST_NODE_MODULES overrides where the SDK is installed.
//
// Prints one line per check, then `N passed, N failed`; exits 1 on any failure.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { scenarioSetup, tally } from "./scenario.mjs";

const { workspace, sdk, shimLaunch } = scenarioSetup("ts_long_round.mjs");
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { check, finish } = tally(240_000);

const show = (value) => JSON.stringify(value);
const record = join(workspace, ".fake-reviewer");
const reviewerPid = () => (existsSync(join(record, "pid")) ? readFileSync(join(record, "pid"), "utf8").trim() : null);
const alive = (pid) => {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
};

const transport = new StdioClientTransport(shimLaunch);
const client = new Client({ name: "parley-long-round-test", version: "0.0.0" });
await client.connect(transport);

try {
  // No timeout option: the SDK's default, after which it cancels the call.
  const progress = [];
  const started = Date.now();
  const first = await client.callTool(
    { name: "request_review", arguments: { summary: "A change the reviewer takes its time over" } },
    undefined,
    { onprogress: (p) => progress.push(p.message) },
  );
  const waited = (Date.now() - started) / 1000;
  const pending = first.structuredContent ?? {};
  check("request_review answers pending before the SDK's 60 s timeout", pending.status === "pending" && !first.isError, show(first));
  check("it answered after about its 45 s wait", waited >= 40 && waited < 60, `${waited} s`);
  check("the pending answer says to call await_review", (pending.message ?? "").includes("await_review"), show(pending));
  check("progress reached the agent while it waited", progress.some((m) => /reviewer/.test(m ?? "")), show(progress));
  const pid = reviewerPid();
  check("the reviewer is running after the call returned", pid !== null && alive(pid), `pid ${pid}`);

  let finished = null;
  for (let attempt = 0; attempt < 5 && !finished; attempt++) {
    const next = await client.callTool({ name: "await_review", arguments: { review_id: pending.review_id } });
    const answer = next.structuredContent ?? {};
    if (next.isError) {
      check("await_review succeeds", false, show(next));
      break;
    }
    if (answer.status !== "pending") finished = { answer, text: next.content?.[0]?.text ?? "" };
  }
  check("await_review returns the finished round", finished !== null);
  if (finished) {
    const { answer, text } = finished;
    check("the round is the one request_review started", answer.review_id === pending.review_id && answer.round === 1, show(answer));
    check("the round carries the reviewer's review", answer.comments?.[0]?.comment === "Name the constant", show(answer));
    check("the text is the rendered review", text.includes("Name the constant"), text);
  }
  const prompts = readdirSync(record).filter((name) => name.startsWith("prompt-"));
  check("the reviewer ran once, to its end (nothing was killed and restarted)", prompts.length === 1 && reviewerPid() === pid, show(prompts));
} catch (error) {
  check("the scenario runs", false, error?.stack ?? String(error));
}
await client.close();
finish();
