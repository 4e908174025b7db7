// Drives the real parley-mcp shim with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk 1.32, legacy `initialize` at 2025-11-25) as an
// agent in a conversation with a human: what a host learns from the
// capabilities, the tools' titles and annotations, the prompts it shows as
// slash commands, a resource subscription that hears of a human's comment
// without polling, and a thread the agent opens with add_feedback.
// tests/tests/agent_threads.rs runs it against a daemon in a sandbox with an
// editor connected, and checks that the editor saw both threads made.
//
// Usage: node ts_threads.mjs SHIM WORKSPACE
//   SHIM       path of the parley-mcp binary
//   WORKSPACE  a git repository holding src/main.rs of 3 lines; the shim runs there
// Environment: PARLEY_SOCKET, PARLEY_DATA_DIR and PARLEY_DAEMON (the parley
// binary, which is also the CLI the human comments with).
// PARLEY_TEST_NODE_MODULES overrides where the SDK is installed.
//
// Prints one line per check, then `N passed, N failed`; exits 1 on any failure.

import { execFileSync } from "node:child_process";
import { pinnedTools, scenarioSetup, tally } from "./scenario.mjs";

/** How long any one request, or the wait for a notification, may take. */
const CALL_TIMEOUT_MS = 10_000;
/** How long the whole scenario may take: a hang fails loudly instead of blocking CI. */
const SCENARIO_TIMEOUT_MS = 90_000;
const CLIENT_NAME = "parley-ts-sdk-test";
/** The four hints every tool states, each a boolean. */
const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];

const { workspace, sdk, shimLaunch } = scenarioSetup("ts_threads.mjs");
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { ResourceUpdatedNotificationSchema } = await sdk("types.js");
const { check, step, finish } = tally(SCENARIO_TIMEOUT_MS);

const textOf = (result) => result?.content?.find((c) => c.type === "text")?.text ?? "";
const show = (value) => JSON.stringify(value);
const options = { timeout: CALL_TIMEOUT_MS };

/** A person comments from the terminal, as `parley feedback add` does. */
function humanComments(location, body) {
  execFileSync(process.env.PARLEY_DAEMON, ["feedback", "add", location, body, "--author", "ana"], {
    cwd: workspace,
    env: { ...process.env },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

const transport = new StdioClientTransport(shimLaunch);
const client = new Client({ name: CLIENT_NAME, version: "0.0.0" });

// Every resources/updated the server sends, in order; waiters take them.
const updates = [];
const waiting = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
  updates.push(notification.params.uri);
  while (waiting.length > 0 && updates.length > 0) waiting.shift()(updates.shift());
});
/** The next resource the server says changed, or null after the timeout. */
function nextUpdate() {
  if (updates.length > 0) return Promise.resolve(updates.shift());
  return new Promise((resolveUpdate) => {
    const timer = setTimeout(() => {
      const at = waiting.indexOf(take);
      if (at >= 0) waiting.splice(at, 1);
      resolveUpdate(null);
    }, CALL_TIMEOUT_MS);
    const take = (uri) => {
      clearTimeout(timer);
      resolveUpdate(uri);
    };
    waiting.push(take);
  });
}

let connected = false;
await step("connect", async () => {
  await client.connect(transport, options);
  connected = true;
  const capabilities = client.getServerCapabilities() ?? {};
  check("connect: resources can be subscribed to", capabilities.resources?.subscribe === true, show(capabilities));
  check(
    "connect: no resources listChanged (the set never changes)",
    capabilities.resources?.listChanged === undefined,
    show(capabilities.resources),
  );
  check("connect: prompts are offered", capabilities.prompts !== undefined, show(capabilities));
  const instructions = client.getInstructions() ?? "";
  check(
    "connect: the instructions say when to read feedback",
    instructions.includes("before you start a task") && instructions.includes("before you say your work is done"),
    show(instructions),
  );
  check(
    "connect: the instructions explain stale and unreadable threads",
    instructions.includes("stale (") && instructions.includes("unreadable ("),
    show(instructions),
  );
});
if (!connected) finish();

await step("tools/list", async () => {
  const { tools } = await client.listTools(undefined, options);
  for (const tool of tools) {
    check(`tools/list: ${tool.name} has a title`, typeof tool.title === "string" && tool.title.length > 0, show(tool.title));
    const annotations = tool.annotations ?? {};
    check(
      `tools/list: ${tool.name} states all four hints`,
      HINTS.every((hint) => typeof annotations[hint] === "boolean"),
      show(annotations),
    );
  }
  const hints = (name) => {
    const annotations = tools.find((t) => t.name === name)?.annotations ?? {};
    return HINTS.map((hint) => annotations[hint]);
  };
  // Each tool's hints as pinned in tests/snapshots/tools.json.
  const pinned = pinnedTools();
  check("tools/list: every pinned tool is listed", show(tools.map((t) => t.name).sort()) === show(pinned.map((t) => t.name).sort()));
  const expected = Object.fromEntries(pinned.map((t) => [t.name, HINTS.map((hint) => t.annotations?.[hint])]));
  for (const [name, want] of Object.entries(expected)) {
    check(`tools/list: ${name}'s hints`, show(hints(name)) === show(want), show(hints(name)));
  }
  const add = tools.find((t) => t.name === "add_feedback");
  check(
    "tools/list: add_feedback takes filePath, startLine, endLine and body",
    show(Object.keys(add?.inputSchema?.properties ?? {}).sort()) === show(["body", "endLine", "filePath", "startLine"]) &&
      show([...(add?.inputSchema?.required ?? [])].sort()) === show(["body", "filePath", "startLine"]),
    show(add?.inputSchema),
  );
});

await step("prompts", async () => {
  const { prompts } = await client.listPrompts(undefined, options);
  const names = prompts.map((p) => p.name).sort();
  check("prompts/list: address-feedback and review-loop", show(names) === show(["address-feedback", "review-loop"]), show(names));
  for (const prompt of prompts) {
    check(`prompts/list: ${prompt.name} has a title and a description`, Boolean(prompt.title && prompt.description), show(prompt));
  }
  const address = await client.getPrompt({ name: "address-feedback", arguments: { file: "src/main.rs" } }, options);
  const addressText = address.messages[0]?.content?.text ?? "";
  check(
    "prompts/get address-feedback: read, fix, reply, resolve, on the file asked for",
    address.messages[0]?.role === "user" &&
      ["get_feedback with filePath \"src/main.rs\"", "reply_feedback", "resolve_feedback"].every((s) => addressText.includes(s)),
    addressText,
  );
  const loop = await client.getPrompt({ name: "review-loop", arguments: { summary: "Added a greeting" } }, options);
  const loopText = loop.messages[0]?.content?.text ?? "";
  check(
    "prompts/get review-loop: request, await pending rounds, address, repeat, complete",
    ["request_review", "Added a greeting", "await_review", "previous_review_id", "mark_review_complete"].every((s) =>
      loopText.includes(s),
    ),
    loopText,
  );
  let refused = "";
  try {
    await client.getPrompt({ name: "fix-everything" }, options);
  } catch (error) {
    refused = String(error?.message ?? error);
  }
  check("prompts/get of an unknown prompt names the ones offered", refused.includes("address-feedback and review-loop"), refused);
});

await step("subscribe", async () => {
  await client.subscribeResource({ uri: "parley://feedback" }, options);
  humanComments("src/main.rs:1", "Name the function after what it does");
  const uri = await nextUpdate();
  check("subscribe: a human's comment is told without polling", uri === "parley://feedback", show(uri));
  const read = await client.readResource({ uri: "parley://feedback" }, options);
  const text = read.contents[0]?.text ?? "";
  check("subscribe: reading the resource shows the comment", text.includes("Name the function after what it does"), text);
});

await step("add_feedback", async () => {
  const call = (args) => client.callTool({ name: "add_feedback", arguments: args }, undefined, options);
  const result = await call({ filePath: "src/main.rs", startLine: 2, body: "Should this go to stderr?" });
  const structured = result.structuredContent ?? {};
  check("add_feedback: succeeds", result.isError !== true && structured.created === true, show(result));
  check(
    "add_feedback: quotes the line and signs with the client's name",
    structured.thread?.selectedText === '    println!("hi");' && structured.thread?.comments?.[0]?.author === CLIENT_NAME,
    show(structured.thread),
  );
  // The agent's own thread changes the resource it subscribed to.
  const uri = await nextUpdate();
  check("add_feedback: the subscribed resource is told of it", uri === "parley://feedback", show(uri));
  const past = await call({ filePath: "src/main.rs", startLine: 9, body: "?" });
  check(
    "add_feedback past the end: a tool error saying which lines exist",
    past.isError === true && textOf(past).includes("give lines between 1 and 3"),
    show(past),
  );
});

await step("close", async () => {
  await client.close();
  check("close", true);
});

finish();
