"""Drives the Windows shim under Wine with the official MCP Python SDK (`mcp` 2.3.0).

A Linux process starting `wine parley-mcp.exe`, as a host on Windows starts
`parley-mcp.exe`: the `initialize` handshake, `tools/list`, then
`present_review` of a review whose references are written both ways
(`src/lib.rs` and `src\\lib.rs`), in a workspace given as a Windows path.

tests/tests/windows/clients.rs runs it against a daemon under Wine; it must
not start, stop or configure a daemon itself.

Usage: python py_wine_client.py WORKSPACE -- COMMAND [ARG]...
  WORKSPACE  the repository as Windows names it (`Z:\\tmp\\...`); it holds
             src/lib.rs of 3 lines
  COMMAND    what starts the shim, e.g. `wine /path/parley-mcp.exe`; it runs
             in the current folder
Environment: every PARLEY_* and WINE* variable is handed to the shim (the SDK
passes only HOME, LOGNAME, PATH, SHELL, TERM and USER plus what it is given).

Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from importlib.metadata import version
from typing import Any

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

SDK_VERSION = "2.3.0"
CALL_TIMEOUT_S = 20.0
SCENARIO_TIMEOUT_S = 90.0


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: Any = "") -> None:
        if ok:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}", flush=True)


REVIEW = (
    "# Review from the Python SDK under Wine\n\n"
    "Slashed: [`src/lib.rs:2`][]\nBackslashed: [`src\\lib.rs:3`][]\nBroken: [`src/lib.rs:99`][]\n"
)


async def scenario(checks: Checks, workspace: str, command: list[str]) -> None:
    check = checks.check
    check(f"the pinned SDK is installed ({SDK_VERSION})", version("mcp") == SDK_VERSION, version("mcp"))
    env = {k: v for k, v in os.environ.items() if k.startswith("PARLEY_") or k.startswith("WINE")}
    server = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=os.getcwd())
    async with Client(server, mode="legacy", read_timeout_seconds=CALL_TIMEOUT_S) as client:
        info = client.server_info
        check("initialize: the server is parley", info is not None and info.name == "parley", info)

        listed = await client.list_tools()
        names = sorted(tool.name for tool in listed.tools)
        check("tools/list: present_review is offered", "present_review" in names, names)
        check("tools/list: get_feedback is offered", "get_feedback" in names, names)

        result = await client.call_tool(
            "present_review", {"content": REVIEW, "baseUri": workspace}
        )
        structured = result.structured_content or {}
        check(
            "present_review: succeeds",
            not result.is_error and structured.get("success") is True,
            result.model_dump_json(),
        )
        check(
            "present_review: baseUri is the Windows folder as given",
            structured.get("baseUri") == workspace,
            json.dumps(structured.get("baseUri")),
        )
        references = structured.get("references") or {}
        check("present_review: both written forms resolved", references.get("resolved") == 2, json.dumps(references))
        unresolved = references.get("unresolved") or []
        check(
            "present_review: the broken reference is reported, forward-slashed",
            len(unresolved) == 1 and "line 99 is past the end of src/lib.rs" in unresolved[0].get("problem", ""),
            json.dumps(unresolved),
        )


async def main() -> int:
    argv = sys.argv[1:]
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    workspace, command = argv[0], argv[2:]
    checks = Checks()
    try:
        with anyio.fail_after(SCENARIO_TIMEOUT_S):
            await scenario(checks, workspace, command)
    except Exception:  # reported as a failed check, with its traceback
        checks.check("the scenario ran to its end", False, "threw " + traceback.format_exc())
    print(f"{checks.passed} passed, {checks.failed} failed", flush=True)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
