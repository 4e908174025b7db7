"""A person answers a human review round in the agent's host: drives the real
parley-mcp shim with the official MCP Python SDK (`mcp` 2.3.0), whose client
declares form elicitation, at protocol 2025-11-25 (2026-07-28 forbids the
server's requests).

Usage: python py_elicit.py --expect asked|not-asked SHIM WORKSPACE
  asked      no editor is open on WORKSPACE: the host's user is asked, answers
             "request changes" with a message, and request_review returns
             that verdict within the call
  not-asked  an editor window is open on it: nobody is asked in the host, and
             the call answers pending
WORKSPACE is a git repository with uncommitted changes; PARLEY_SOCKET,
PARLEY_DATA_DIR and PARLEY_DAEMON are handed to the shim.

Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio
from mcp import types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

MESSAGE = "Rename the helper before merging"


async def scenario(expect: str, shim: str, workspace: str) -> list[tuple[str, bool, Any]]:
    env = {name: os.environ[name] for name in ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON")}
    server = StdioServerParameters(command=shim, args=[], env=env, cwd=workspace)
    asked: list[str] = []

    async def answer(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"verdict": "request_changes", "message": MESSAGE})

    results: list[tuple[str, bool, Any]] = []
    async with Client(server, mode="legacy", read_timeout_seconds=30, elicitation_callback=answer) as client:
        wait = 20 if expect == "asked" else 2
        result = await client.call_tool(
            "request_review", {"summary": "Added a helper", "reviewer": "human", "wait_seconds": wait}
        )
        review = result.structured_content or {}
        if expect == "asked":
            results.append(("the host's user was asked once", len(asked) == 1, asked))
            results.append(("the question names the change", bool(asked) and "Added a helper" in asked[0], asked))
            results.append(("the call returns the verdict", review.get("verdict") == "needs_changes", review))
            said = [c.get("comment") for c in review.get("comments", [])]
            results.append(("the message is in the review", MESSAGE in said, said))
        else:
            results.append(("nobody was asked in the host", asked == [], asked))
            results.append(("the call answers pending", review.get("status") == "pending", review))
    return results


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--expect", choices=["asked", "not-asked"], required=True)
    parser.add_argument("shim")
    parser.add_argument("workspace")
    args = parser.parse_args()
    failed = 0
    try:
        with anyio.fail_after(60):
            results = await scenario(args.expect, os.path.abspath(args.shim), os.path.realpath(args.workspace))
    except TimeoutError:
        results = [("the scenario finishes within 60 s", False, "it hung")]
    for name, ok, detail in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": {json.dumps(detail, default=str)}"), flush=True)
        failed += 0 if ok else 1
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and results else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
