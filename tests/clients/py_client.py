"""Drives the real parley-mcp shim with the official MCP Python SDK (`mcp` 2.3.0).

Two eras, chosen on the command line:
  --mode auto    probes `server/discover` and must end on 2026-07-28, the
                 modern stateless era (no `initialize`, no `ping`)
  --mode legacy  the `initialize` handshake at 2025-11-25

tests/tests/sdk_clients.rs runs it against a daemon in a sandbox; it must not
start, stop or configure a daemon itself.

Usage: python py_client.py --mode auto|legacy SHIM WORKSPACE
  SHIM       path of the parley-mcp binary
  WORKSPACE  a git repository holding src/main.rs of 3 lines; the shim runs there
Environment: PARLEY_SOCKET, PARLEY_DATA_DIR and PARLEY_DAEMON are handed to
the shim (the SDK passes only HOME, LOGNAME, PATH, SHELL, TERM and USER plus
what it is given).

Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

import sdk_checks
from sdk_checks import text_of

SDK_VERSION = "2.3.0"
# How long any one request may take before its check fails.
CALL_TIMEOUT_S = 10.0
# How long the whole scenario may take: a hang fails loudly instead of blocking CI.
SCENARIO_TIMEOUT_S = 90.0
SEED_MODE_ERROR = "Mode must be 'replace', 'update-section', or 'append'"
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}


class Checks(sdk_checks.Checks):
    """The shared checks, and a step that fails instead of ending the scenario."""

    async def step(self, name: str, body: Callable[[], Awaitable[None]]) -> bool:
        """Runs one step; an exception fails it instead of ending the scenario."""
        try:
            with anyio.fail_after(CALL_TIMEOUT_S * 2):
                await body()
            return True
        except Exception:  # the failure is reported as a check, with its traceback
            self.check(name, False, "threw " + traceback.format_exc())
            return False


def pinned_tools() -> list[dict[str, Any]]:
    """The MCP tool list as the daemon's tools/list gives it, pinned in
    tests/snapshots/tools.json (tests/tests/mcp_tools.rs checks the live list
    against it)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "snapshots", "tools.json")) as f:
        return json.load(f)


def show(value: Any) -> str:
    return json.dumps(value, default=str)


async def scenario(checks: Checks, mode: str, shim: str, workspace: str) -> None:
    check = checks.check
    check(f"the pinned SDK is installed ({SDK_VERSION})", version("mcp") == SDK_VERSION, version("mcp"))

    env = {name: os.environ[name] for name in ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON")}
    if "PARLEY_LOG" in os.environ:
        env["PARLEY_LOG"] = os.environ["PARLEY_LOG"]
    server = StdioServerParameters(command=shim, args=[], env=env, cwd=workspace)

    # Entering the client runs the handshake: `server/discover` (auto) or
    # `initialize` (legacy); leaving it closes the shim's stdin. Both stay in
    # this one block so anyio's cancel scopes nest.
    connected = False
    try:
        async with Client(server, mode=mode, read_timeout_seconds=CALL_TIMEOUT_S) as client:
            connected = True
            await exercise(checks, client, mode, workspace)
    except Exception:  # the failure is reported as a check, with its traceback
        check("close" if connected else "connect", False, "threw " + traceback.format_exc())
    else:
        check("close", True)


async def exercise(checks: Checks, client: Client, mode: str, workspace: str) -> None:
    check = checks.check
    want = EXPECTED_VERSION[mode]
    check(f"connect ({mode}): negotiates {want}", client.protocol_version == want, f"negotiated {client.protocol_version}")
    session = client.session
    if mode == "auto":
        # `auto` falls back to `initialize` on any error or timeout of the probe,
        # so the discover result is what proves the modern era was reached.
        discovered = session.discover_result
        check(
            "connect (auto): server/discover answered and no initialize was sent",
            discovered is not None and session.initialize_result is None,
            f"discover: {discovered}, initialize: {session.initialize_result}",
        )
        check(
            "connect (auto): the server lists 2026-07-28",
            discovered is not None and "2026-07-28" in discovered.supported_versions,
            discovered.supported_versions if discovered else None,
        )
    else:
        check(
            "connect (legacy): initialize answered and no server/discover was sent",
            session.initialize_result is not None and session.discover_result is None,
        )
    info = client.server_info
    check("connect: the server is parley", info is not None and info.name == "parley", info)
    check("connect: the server offers tools", client.server_capabilities.tools is not None)
    check(
        "connect: the instructions explain references",
        "[`path:line`][]" in (client.instructions or ""),
        show(client.instructions),
    )

    async def tools_list() -> None:
        listed = await client.list_tools()
        names = sorted(tool.name for tool in listed.tools)
        expected = sorted(tool["name"] for tool in pinned_tools())
        check("tools/list: every Parley tool", names == expected, names)
        for tool in listed.tools:
            check(
                f"tools/list: {tool.name} has an object inputSchema",
                tool.input_schema.get("type") == "object",
                show(tool.input_schema),
            )
            check(
                f"tools/list: {tool.name} has an object outputSchema",
                (tool.output_schema or {}).get("type") == "object",
                show(tool.output_schema),
            )

    await checks.step("tools/list", tools_list)

    # call_tool validates structured_content against the tool's outputSchema
    # and raises when it does not conform, so a result that arrives at all
    # has passed the SDK's own validation.
    async def present_review() -> None:
        content = (
            f"# Review from the Python SDK ({mode})\n\n"
            "Good: [`src/main.rs:1`][]\nBroken: [`src/main.rs:99`][]\n"
        )
        result = await client.call_tool("present_review", {"content": content})
        structured = result.structured_content or {}
        check(
            "present_review: succeeds",
            not result.is_error and structured.get("success") is True,
            result.model_dump_json(),
        )
        check(
            "present_review: baseUri defaults to the workspace",
            structured.get("baseUri") == workspace,
            show(structured.get("baseUri")),
        )
        references = structured.get("references") or {}
        check("present_review: one reference resolved", references.get("resolved") == 1, show(references))
        unresolved = references.get("unresolved") or []
        check(
            "present_review: the broken reference is reported",
            len(unresolved) == 1
            and "src/main.rs:99" in unresolved[0].get("reference", "")
            and "line 99 is past the end of src/main.rs (3 lines)" in unresolved[0].get("problem", ""),
            show(unresolved),
        )
        try:
            copy = json.loads(text_of(result))
        except ValueError:
            copy = None
        check("present_review: the text block is the same JSON", copy == structured, text_of(result))

    await checks.step("present_review", present_review)

    async def unknown_argument() -> None:
        result = await client.call_tool("present_review", {"content": "x", "mesage": "typo"})
        check(
            "present_review with an unknown argument: a tool error naming the field",
            result.is_error and "unknown field `mesage`" in text_of(result),
            result.model_dump_json(),
        )

    await checks.step("present_review with an unknown argument", unknown_argument)

    async def mode_merge() -> None:
        result = await client.call_tool("present_review", {"content": "x", "mode": "merge"})
        check(
            "present_review with mode merge: the seed error text",
            result.is_error and SEED_MODE_ERROR in text_of(result),
            result.model_dump_json(),
        )

    await checks.step("present_review with mode merge", mode_merge)

    async def get_selection() -> None:
        result = await client.call_tool("get_selection", {})
        structured = result.structured_content or {}
        check("get_selection: succeeds", not result.is_error, result.model_dump_json())
        check(
            "get_selection: nothing selected",
            "selectedText" in structured and structured["selectedText"] is None,
            show(structured),
        )
        check(
            "get_selection: says no editor is connected",
            "No editor window is connected" in (structured.get("message") or ""),
            show(structured.get("message")),
        )

    await checks.step("get_selection", get_selection)

    # The Rust test added one thread ("Print something kinder" on src/main.rs:2).
    async def feedback() -> None:
        summary = await client.call_tool("get_feedback_summary", {})
        structured = summary.structured_content or {}
        check("get_feedback_summary: one thread", structured.get("totalThreads") == 1, show(structured))
        listed = await client.call_tool("get_feedback", {"filePath": "src/main.rs"})
        threads = (listed.structured_content or {}).get("threads", [])
        check(
            "get_feedback: the text copy names the place and the comment",
            "src/main.rs:2 " in listed.content[0].text and ": Print something kinder" in listed.content[0].text,
            listed.content[0].text,
        )
        check(
            "get_feedback: the comment on line 2",
            len(threads) == 1 and threads[0]["comments"][0]["body"] == "Print something kinder"
            and threads[0]["range"]["startLine"] == 2,
            show(threads),
        )
        reply = await client.call_tool("reply_feedback", {"threadId": threads[0]["id"], "body": "Done"})
        check("reply_feedback: replied", (reply.structured_content or {}).get("replied") is True, show(reply.structured_content))
        resolved = await client.call_tool("resolve_feedback", {"threadId": threads[0]["id"]})
        check("resolve_feedback: resolved", (resolved.structured_content or {}).get("resolved") is True, show(resolved.structured_content))

    await checks.step("feedback", feedback)

    if mode == "legacy":
        # ping was removed in 2026-07-28; the SDK allows it only in legacy mode.
        async def ping() -> None:
            await client.session.send_ping()
            check("ping", True)

        await checks.step("ping", ping)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=sorted(EXPECTED_VERSION), required=True)
    parser.add_argument("shim")
    parser.add_argument("workspace")
    args = parser.parse_args()
    missing = [n for n in ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON") if not os.environ.get(n)]
    if missing:
        print(f"{', '.join(missing)} not set: the test passes the sandbox's daemon to the shim through them")
        return 2

    checks = Checks()
    try:
        with anyio.fail_after(SCENARIO_TIMEOUT_S):
            # The shim is spawned in the workspace, so a relative path must not be read from there.
            shim = os.path.abspath(args.shim)
            await scenario(checks, args.mode, shim, os.path.realpath(args.workspace))
    except TimeoutError:
        checks.check(f"the scenario finishes within {SCENARIO_TIMEOUT_S:.0f} s", False, "it hung")
    print(f"{checks.passed} passed, {checks.failed} failed", flush=True)
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
