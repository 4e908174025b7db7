"""Drives the real parley-mcp shim with the official MCP Python SDK (`mcp` 2.3.0)
in `auto` mode, which ends on 2026-07-28, the stateless era: there an agent
hears of changes through a `subscriptions/listen` stream rather than
`resources/subscribe`. The scenario listens to Parley's two resources, has a
human comment from the terminal (`parley feedback add`), and expects to be
told; it also reads the prompts and the tools' annotations in this era, and
opens a thread with add_feedback under the name its requests carry.

tests/tests/agent_threads.rs runs it against a daemon in a sandbox; it must
not start, stop or configure a daemon itself.

Usage: python py_threads.py SHIM WORKSPACE
  SHIM       path of the parley-mcp binary
  WORKSPACE  a git repository holding src/main.rs of 3 lines; the shim runs there
Environment: PARLEY_SOCKET, PARLEY_DATA_DIR and PARLEY_DAEMON (the parley
binary, which is also the CLI the human comments with).

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
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import Implementation

from sdk_checks import Checks, text_of

# How long any one request, or the wait for a notification, may take.
CALL_TIMEOUT_S = 10.0
# How long the whole scenario may take: a hang fails loudly instead of blocking CI.
SCENARIO_TIMEOUT_S = 90.0
CLIENT_NAME = "parley-py-sdk-test"
RESOURCES = ["parley://feedback", "parley://review"]


async def human_comments(workspace: str, location: str, body: str) -> None:
    """A person comments from the terminal, as `parley feedback add` does."""
    daemon = os.environ["PARLEY_DAEMON"]
    await anyio.run_process([daemon, "feedback", "add", location, body, "--author", "ana"], cwd=workspace, check=True)


async def scenario(checks: Checks, shim: str, workspace: str) -> None:
    check = checks.check
    env = {name: os.environ[name] for name in ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON")}
    server = StdioServerParameters(command=shim, args=[], env=env, cwd=workspace)
    info = Implementation(name=CLIENT_NAME, version="0.0.0")
    async with Client(server, mode="auto", read_timeout_seconds=CALL_TIMEOUT_S, client_info=info) as client:
        check("connect: the stateless era", client.protocol_version == "2026-07-28", client.protocol_version)
        resources = client.server_capabilities.resources
        check(
            "connect: resources can be subscribed to, and their set never changes",
            resources is not None and resources.subscribe is True and not resources.list_changed,
            resources,
        )

        listed = await client.list_tools()
        unannotated = [t.name for t in listed.tools if t.annotations is None or t.annotations.read_only_hint is None]
        check("tools/list: every tool is annotated", unannotated == [], unannotated)
        untitled = [t.name for t in listed.tools if not t.title]
        check("tools/list: every tool has a title", untitled == [], untitled)

        prompts = await client.list_prompts()
        names = sorted(p.name for p in prompts.prompts)
        check("prompts/list: address-feedback and review-loop", names == ["address-feedback", "review-loop"], names)
        got = await client.get_prompt("review-loop")
        text = got.messages[0].content.text if got.messages else ""
        check("prompts/get review-loop: mentions await_review", "await_review" in text, text)

        async with client.listen(resource_subscriptions=RESOURCES) as subscription:
            honored = sorted(subscription.honored.resource_subscriptions or [])
            check("listen: both resources are honored", honored == sorted(RESOURCES), honored)
            await human_comments(workspace, "src/main.rs:2", "Print something kinder")
            with anyio.fail_after(CALL_TIMEOUT_S):
                event = await subscription.__anext__()
            check(
                "listen: a human's comment is told without polling",
                isinstance(event, ResourceUpdated) and event.uri == "parley://feedback",
                event,
            )
            read = await client.read_resource("parley://feedback")
            threads = json.loads(read.contents[0].text)
            check(
                "listen: reading the resource shows the comment",
                any(t["comments"][0]["body"] == "Print something kinder" for t in threads),
                threads,
            )

        result = await client.call_tool(
            "add_feedback", {"filePath": "src/main.rs", "startLine": 1, "endLine": 3, "body": "Is main complete?"}
        )
        structured = result.structured_content or {}
        thread = structured.get("thread") or {}
        check(
            "add_feedback: quotes the lines and signs with the name the requests carry",
            not result.is_error
            and thread.get("selectedText") == 'fn main() {\n    println!("hi");\n}'
            and thread.get("comments", [{}])[0].get("author") == CLIENT_NAME,
            text_of(result),
        )


async def main() -> int:
    if len(sys.argv) != 3:
        print("usage: python py_threads.py SHIM WORKSPACE", file=sys.stderr)
        return 2
    for name in ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON"):
        if name not in os.environ:
            print(f"{name} is not set: the test passes the sandbox's daemon to the shim through it", file=sys.stderr)
            return 2
    shim, workspace = os.path.abspath(sys.argv[1]), os.path.realpath(sys.argv[2])
    checks = Checks()
    try:
        with anyio.fail_after(SCENARIO_TIMEOUT_S):
            await scenario(checks, shim, workspace)
    except Exception:  # the failure is reported as a check, with its traceback
        checks.check("scenario", False, "threw " + traceback.format_exc())
    print(f"{checks.passed} passed, {checks.failed} failed", flush=True)
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
