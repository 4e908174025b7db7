// Drives the real parley-mcp shim with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk 1.32, legacy `initialize` handshake at
// 2025-11-25), the way Claude Code, Cursor and the MCP Inspector connect.
// tests/tests/sdk_clients.rs runs it against a daemon in a sandbox; it must
// not start, stop or configure a daemon itself.
//
// Usage: node ts_client.mjs SHIM WORKSPACE
//   SHIM       path of the parley-mcp binary
//   WORKSPACE  a git repository holding src/main.rs of 3 lines; the shim runs there
// Environment: PARLEY_SOCKET, PARLEY_DATA_DIR and PARLEY_DAEMON are handed to
// the shim (the SDK passes only HOME, LOGNAME, PATH, SHELL, TERM and USER
// plus what it is given). PARLEY_TEST_NODE_MODULES overrides where the SDK is
// installed (default: .test-deps/node/node_modules at the repository root).
//
// Prints one line per check, then `N passed, N failed`; exits 1 on any failure.

import { pinnedTools, scenarioSetup, tally } from "./scenario.mjs";
import { isDeepStrictEqual } from "node:util";

const SDK_VERSION = "1.32.2";
/** How long any one request may take before its check fails. */
const CALL_TIMEOUT_MS = 10_000;
/** How long the whole scenario may take: a hang fails loudly instead of blocking CI. */
const SCENARIO_TIMEOUT_MS = 90_000;
const SEED_MODE_ERROR = "Mode must be 'replace', 'update-section', or 'append'";

const { workspace, sdkVersion: installed, sdk, shimLaunch } = scenarioSetup("ts_client.mjs");
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { check, step, finish } = tally(SCENARIO_TIMEOUT_MS);

const textOf = (result) => result?.content?.find((c) => c.type === "text")?.text ?? "";
const show = (value) => JSON.stringify(value);

check(`the pinned SDK is installed (${SDK_VERSION})`, installed === SDK_VERSION, `found ${installed}`);

const transport = new StdioClientTransport(shimLaunch);
// The client hands the negotiated version to transports that want it (HTTP
// does); stdio does not, so catch it here.
let negotiated;
transport.setProtocolVersion = (version) => {
  negotiated = version;
};
const client = new Client({ name: "parley-ts-sdk-test", version: "0.0.0" });

let connected = false;
await step("connect", async () => {
  await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  connected = true;
  check("connect: initialize negotiates 2025-11-25", negotiated === "2025-11-25", `negotiated ${negotiated}`);
  const server = client.getServerVersion();
  check("connect: the server is parley", server?.name === "parley", show(server));
  check("connect: the server offers tools", client.getServerCapabilities()?.tools !== undefined);
  check(
    "connect: the instructions explain references",
    (client.getInstructions() ?? "").includes("[`path:line`][]"),
    show(client.getInstructions()),
  );
});
if (!connected) finish();

await step("tools/list", async () => {
  const { tools } = await client.listTools(undefined, { timeout: CALL_TIMEOUT_MS });
  const names = tools.map((t) => t.name).sort();
  const expected = pinnedTools().map((t) => t.name).sort();
  check("tools/list: every Parley tool", show(names) === show(expected), show(names));
  for (const tool of tools) {
    check(`tools/list: ${tool.name} has an object inputSchema`, tool.inputSchema?.type === "object", show(tool.inputSchema));
    check(`tools/list: ${tool.name} has an object outputSchema`, tool.outputSchema?.type === "object", show(tool.outputSchema));
  }
});

// callTool validates structuredContent against the tool's outputSchema
// (fetched by listTools above) and throws when it does not conform, so a
// result that arrives at all has passed the SDK's own validation.
await step("present_review", async () => {
  const content = "# Review from the TypeScript SDK\n\nGood: [`src/main.rs:1`][]\nBroken: [`src/main.rs:99`][]\n";
  const result = await client.callTool({ name: "present_review", arguments: { content } }, undefined, {
    timeout: CALL_TIMEOUT_MS,
  });
  const structured = result.structuredContent;
  check("present_review: succeeds", result.isError !== true && structured?.success === true, show(result));
  check("present_review: baseUri defaults to the workspace", structured?.baseUri === workspace, show(structured?.baseUri));
  check("present_review: one reference resolved", structured?.references?.resolved === 1, show(structured?.references));
  const unresolved = structured?.references?.unresolved ?? [];
  check(
    "present_review: the broken reference is reported",
    unresolved.length === 1 &&
      unresolved[0].reference.includes("src/main.rs:99") &&
      unresolved[0].problem.includes("line 99 is past the end of src/main.rs (3 lines)"),
    show(unresolved),
  );
  let copy;
  try {
    copy = JSON.parse(textOf(result));
  } catch {
    copy = undefined;
  }
  check("present_review: the text block is the same JSON", isDeepStrictEqual(copy, structured), textOf(result));
});

await step("present_review with an unknown argument", async () => {
  const result = await client.callTool(
    { name: "present_review", arguments: { content: "x", mesage: "typo" } },
    undefined,
    { timeout: CALL_TIMEOUT_MS },
  );
  check(
    "present_review with an unknown argument: a tool error naming the field",
    result.isError === true && textOf(result).includes("unknown field `mesage`"),
    show(result),
  );
});

await step("present_review with mode merge", async () => {
  const result = await client.callTool(
    { name: "present_review", arguments: { content: "x", mode: "merge" } },
    undefined,
    { timeout: CALL_TIMEOUT_MS },
  );
  check(
    "present_review with mode merge: the seed error text",
    result.isError === true && textOf(result).includes(SEED_MODE_ERROR),
    show(result),
  );
});

// The Rust test added one thread ("Print something kinder" on src/main.rs:2).
await step("feedback", async () => {
  const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
  const summary = await call("get_feedback_summary", {});
  check(
    "get_feedback_summary: one thread on src/main.rs",
    summary.structuredContent?.totalThreads === 1 && summary.structuredContent?.files?.[0]?.path === "src/main.rs",
    show(summary.structuredContent),
  );
  const listed = await call("get_feedback", { filePath: "src/main.rs" });
  const threads = listed.structuredContent?.threads ?? [];
  check("get_feedback: one thread", threads.length === 1, show(listed.structuredContent));
  check(
    "get_feedback: the text copy names the place, the thread and the comment",
    textOf(listed).includes(`src/main.rs:2 ${threads[0]?.id} (seen by parley-ts-sdk-test)`) &&
      textOf(listed).includes(": Print something kinder\n"),
    textOf(listed),
  );
  check(
    "get_feedback: the comment and its range",
    threads[0]?.comments?.[0]?.body === "Print something kinder" && threads[0]?.range?.startLine === 2,
    show(threads[0]),
  );
  check(
    "get_feedback: reading the thread marks it seen by this client",
    threads[0]?.standing === "seen" && threads[0]?.seenBy === "parley-ts-sdk-test",
    show(threads[0]),
  );
  const id = threads[0]?.id;
  const reply = await call("reply_feedback", { threadId: id, body: "Done" });
  check("reply_feedback: replied", reply.structuredContent?.replied === true, show(reply));
  const addressed = (await call("get_feedback", { filePath: "src/main.rs" })).structuredContent?.threads ?? [];
  check("get_feedback: a replied thread is addressed", addressed[0]?.standing === "addressed", show(addressed[0]));
  const resolved = await call("resolve_feedback", { threadId: id, note: "Kinder now" });
  check("resolve_feedback: resolved", resolved.structuredContent?.resolved === true, show(resolved));
  const again = await call("resolve_feedback", { threadId: id });
  check("resolve_feedback again: no error, already resolved", again.isError !== true && again.structuredContent?.alreadyResolved === true, show(again));
});

await step("get_selection", async () => {
  const result = await client.callTool({ name: "get_selection", arguments: {} }, undefined, {
    timeout: CALL_TIMEOUT_MS,
  });
  const structured = result.structuredContent;
  check("get_selection: succeeds", result.isError !== true, show(result));
  check("get_selection: nothing selected", structured?.selectedText === null, show(structured));
  check(
    "get_selection: says no editor is connected",
    (structured?.message ?? "").includes("No editor window is connected"),
    show(structured?.message),
  );
});

await step("ping", async () => {
  const result = await client.ping({ timeout: CALL_TIMEOUT_MS });
  check("ping", result !== undefined, show(result));
});

await step("close", async () => {
  // The SDK closes stdin and waits 2 s before it sends SIGTERM: a shim that
  // exits on end of input is gone well before that.
  const started = Date.now();
  await client.close();
  const took = Date.now() - started;
  check("close: the shim exits when its stdin closes", took < 1900, `close took ${took} ms`);
});

finish();
