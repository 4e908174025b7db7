"""Drives the real parley-mcp shim with the official MCP Python SDK (`mcp` 2.3.0)
as an agent working on a branch whose pull request is on GitHub (a local fake):
it brings the team's comments in with sync_pull_request, reads them with
get_feedback, answers one by resolving it with a note, and pushes that back.

tests/tests/pull_requests.rs runs it against a daemon in a sandbox, with the
workspace already linked, and checks on the fake what arrived; it must not
start, stop or configure a daemon itself.

Usage: python py_pull_request.py SHIM WORKSPACE COMMENT LEFT_OPEN
  SHIM       path of the parley-mcp binary
  WORKSPACE  the linked git repository; the shim runs there
  COMMENT    the body of the review thread to find, answer and resolve
  LEFT_OPEN  `left-open` when the push must leave it open on GitHub (agents
             may not resolve there), `resolved` when it must resolve it
Environment: PARLEY_SOCKET, PARLEY_DATA_DIR, PARLEY_DAEMON, and GITHUB_TOKEN,
which the shim hands to the daemon as `parley pr pull` does.

Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation

from sdk_checks import Checks, text_of

CALL_TIMEOUT_S = 10.0
SCENARIO_TIMEOUT_S = 90.0
CLIENT_NAME = "parley-py-sdk-test"
NOTE = "Covered both cases with tests in the last commit."
ENV = ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON", "GITHUB_TOKEN")


async def scenario(checks: Checks, shim: str, workspace: str, comment: str, left_open: bool) -> None:
    check = checks.check
    env = {name: os.environ[name] for name in ENV}
    server = StdioServerParameters(command=shim, args=[], env=env, cwd=workspace)
    info = Implementation(name=CLIENT_NAME, version="0.0.0")
    async with Client(server, mode="auto", read_timeout_seconds=CALL_TIMEOUT_S, client_info=info) as client:
        instructions = client.instructions or ""
        check("instructions: say when to sync", "sync_pull_request before you start" in instructions, instructions)

        pulled = await client.call_tool("sync_pull_request", {"direction": "pull"})
        answer = pulled.structured_content or {}
        check("sync pull: no error", not pulled.is_error, text_of(pulled))
        check("sync pull: one new thread", (answer.get("pulled") or {}).get("newThreads") == 1, answer)
        check("sync pull: nothing pushed", "pushed" not in answer, answer)
        conversation = answer.get("conversation") or []
        check(
            "sync pull: the conversation, with its author",
            any(c.get("author") == "mona" and "Thanks" in c.get("body", "") for c in conversation),
            conversation,
        )

        listed = await client.call_tool("get_feedback", {})
        threads = (listed.structured_content or {}).get("threads") or []
        found = [t for t in threads if t["comments"][0]["body"] == comment]
        check("get_feedback: the pulled thread", len(found) == 1, threads)
        if not found:
            return
        thread_id = found[0]["id"]

        resolved = await client.call_tool("resolve_feedback", {"threadId": thread_id, "note": NOTE})
        check("resolve_feedback: resolved here with a note", not resolved.is_error, text_of(resolved))

        pushed = await client.call_tool("sync_pull_request", {"direction": "push"})
        answer = pushed.structured_content or {}
        check("sync push: no error", not pushed.is_error, text_of(pushed))
        sent = answer.get("pushed") or {}
        check("sync push: one reply", sent.get("replies") == 1, answer)
        if left_open:
            check(
                "sync push: left open on GitHub, said so",
                sent.get("resolutions") == 0 and len(sent.get("leftOpen") or []) == 1
                and "open on GitHub" in answer.get("message", ""),
                answer,
            )
        else:
            check(
                "sync push: resolved on GitHub",
                sent.get("resolutions", 0) >= 1 and not sent.get("leftOpen"),
                answer,
            )
        print("message: " + json.dumps(answer.get("message", "")), flush=True)


async def main() -> int:
    if len(sys.argv) != 5 or sys.argv[4] not in ("left-open", "resolved"):
        print("usage: python py_pull_request.py SHIM WORKSPACE COMMENT left-open|resolved", file=sys.stderr)
        return 2
    for name in ENV:
        if name not in os.environ:
            print(f"{name} is not set: the test passes it to the shim through it", file=sys.stderr)
            return 2
    shim, workspace = os.path.abspath(sys.argv[1]), os.path.realpath(sys.argv[2])
    checks = Checks()
    try:
        with anyio.fail_after(SCENARIO_TIMEOUT_S):
            await scenario(checks, shim, workspace, sys.argv[3], sys.argv[4] == "left-open")
    except Exception:  # the failure is reported as a check, with its traceback
        checks.check("scenario", False, "threw " + traceback.format_exc())
    print(f"{checks.passed} passed, {checks.failed} failed", flush=True)
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
