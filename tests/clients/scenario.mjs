// What the TypeScript SDK scenarios share: reading their arguments (SHIM
// and WORKSPACE) and the sandbox's environment, loading the official MCP
// TypeScript SDK from where scripts/test installs it, and the tally of
// checks each prints (one line per check, then `N passed, N failed`, exit 1
// on any failure, and a failure when the scenario hangs).

import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The shim and workspace from the command line, checked, and the SDK's loader. */
export function scenarioSetup(script) {
  const [shimArg, workspaceArg] = process.argv.slice(2);
  if (!shimArg || !workspaceArg) {
    console.error(`usage: node ${script} SHIM WORKSPACE`);
    process.exit(2);
  }
  for (const name of ["PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON"]) {
    if (!process.env[name]) {
      console.error(`${name} is not set: the test passes the sandbox's daemon to the shim through it`);
      process.exit(2);
    }
  }
  const nodeModules = process.env.PARLEY_TEST_NODE_MODULES ?? resolve(here, "../../.test-deps/node/node_modules");
  const sdkRoot = join(nodeModules, "@modelcontextprotocol/sdk");
  if (!existsSync(join(sdkRoot, "package.json"))) {
    console.error(`the MCP TypeScript SDK is not installed in ${nodeModules}: run scripts/test (it installs the SDK clients)`);
    process.exit(2);
  }
  // The shim is spawned in the workspace, so a relative path must not be read from there.
  const shim = resolve(shimArg);
  const workspace = realpathSync(workspaceArg);
  return {
    shim,
    workspace,
    // How to start the shim with StdioClientTransport: in the workspace, with the
    // sandbox's daemon (the SDK hands a child only HOME, PATH and a few others).
    shimLaunch: {
      command: shim,
      args: [],
      env: {
        PARLEY_SOCKET: process.env.PARLEY_SOCKET,
        PARLEY_DATA_DIR: process.env.PARLEY_DATA_DIR,
        PARLEY_DAEMON: process.env.PARLEY_DAEMON,
        ...(process.env.PARLEY_LOG ? { PARLEY_LOG: process.env.PARLEY_LOG } : {}),
      },
      cwd: workspace,
      stderr: "inherit",
    },
    sdkVersion: JSON.parse(readFileSync(join(sdkRoot, "package.json"), "utf8")).version,
    // The SDK lives outside this directory, so a bare `import "@modelcontextprotocol/sdk/..."`
    // would not find it; load the files its export map names for `import` instead.
    sdk: (file) => import(pathToFileURL(join(sdkRoot, "dist/esm", file)).href),
  };
}

/**
 * The MCP tool list as the daemon's `tools/list` gives it, pinned in
 * tests/snapshots/tools.json (tests/tests/mcp_tools.rs checks the live list
 * against it): what the scenarios expect of the list.
 */
export function pinnedTools() {
  return JSON.parse(readFileSync(resolve(here, "../snapshots/tools.json"), "utf8"));
}

/** The checks' tally; the scenario fails if it has not finished within `timeoutMs`. */
export function tally(timeoutMs) {
  let passed = 0;
  let failed = 0;
  /** Records one check; `detail` says what was seen when it fails. */
  const check = (name, ok, detail = "") => {
    if (ok) {
      passed += 1;
      console.log(`ok   ${name}`);
    } else {
      failed += 1;
      console.log(`FAIL ${name}${detail ? `: ${detail}` : ""}`);
    }
    return ok;
  };
  const finish = () => {
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed === 0 ? 0 : 1);
  };
  /** Runs one step; an exception fails it instead of ending the scenario. */
  const step = async (name, body) => {
    try {
      await body();
    } catch (error) {
      check(name, false, `threw ${error?.stack ?? error}`);
    }
  };
  setTimeout(() => {
    check(`the scenario finishes within ${timeoutMs / 1000} s`, false, "it hung");
    finish();
  }, timeoutMs).unref();
  return { check, step, finish };
}
