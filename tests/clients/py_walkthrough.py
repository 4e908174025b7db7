"""Drives the real parley-mcp shim with the official MCP Python SDK (`mcp` 2.3.0)
in `auto` mode (the stateless era, 2026-07-28) through present_walkthrough:
every block kind, good and bad locations (a missing file, a line past the
end, an ambiguous search, a symbol nothing resolves), the comments as threads
get_feedback lists, then a person (the `parley` CLI) replying in a comment's
thread and clicking the walkthrough's button, both reaching this agent.

tests/tests/walkthroughs.rs runs it against a daemon in a sandbox; it must not
start, stop or configure a daemon itself.

Usage: python py_walkthrough.py SHIM WORKSPACE
  SHIM       path of the parley-mcp binary
  WORKSPACE  a git repository of two commits holding src/main.rs (3 lines,
             `fn main` calling `greet`) and src/greet.rs (`pub fn greet`)
Environment: PARLEY_SOCKET, PARLEY_DATA_DIR and PARLEY_DAEMON (the parley
binary, which is also the CLI the person answers with).

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

from sdk_checks import Checks, texts_of

CALL_TIMEOUT_S = 10.0
SCENARIO_TIMEOUT_S = 90.0

CONTENT = """# Greeting

`main` now greets through [`src/greet.rs:1`][].

```mermaid
flowchart TD
  main --> greet
```

```comment
location: src/main.rs:2
icon: lightbulb

The call that changed.
```

```comment
location: findDefinition(`greet`)

Where the greeting is made.
```

```comment
location: search("src", "greet")

Every mention.
```

```comment
location: src/gone.rs:1

A file that is not there.
```

```comment
location: src/main.rs:40

Past the end.
```

```comment
location: findDefinition(`no_such_symbol_anywhere`)

Nothing defines this.
```

```gitdiff
range: HEAD~1..HEAD
```

```action
button: Run the tests

Please run the tests and tell me what fails.
```
"""


async def person(workspace: str, *args: str) -> str:
    """A person at the terminal, as `parley …` does."""
    done = await anyio.run_process([os.environ["PARLEY_DAEMON"], *args], cwd=workspace, check=True)
    return done.stdout.decode()


async def scenario(checks: Checks, shim: str, workspace: str) -> None:
    check = checks.check
    env = {name: os.environ[name] for name in ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON")}
    server = StdioServerParameters(command=shim, args=[], env=env, cwd=workspace)
    async with Client(server, mode="auto", read_timeout_seconds=CALL_TIMEOUT_S) as client:
        check("connect: the stateless era", client.protocol_version == "2026-07-28", client.protocol_version)

        # call_tool checks structured_content against the tool's outputSchema.
        result = await client.call_tool("present_walkthrough", {"content": CONTENT})
        answer = result.structured_content or {}
        check("present_walkthrough: succeeds", not result.is_error, texts_of(result))
        check("present_walkthrough: two comments placed", answer.get("placed") == 2, json.dumps(answer))
        unplaced = {u["index"]: u for u in answer.get("unplaced", [])}
        check("present_walkthrough: four not placed", sorted(unplaced) == [3, 4, 5, 6], json.dumps(answer))
        ambiguous = unplaced.get(3, {})
        check(
            "present_walkthrough: the ambiguous search lists its candidates",
            "matches" in ambiguous.get("reason", "") and len(ambiguous.get("candidates", [])) >= 3,
            json.dumps(ambiguous),
        )
        check(
            "present_walkthrough: the missing file says so",
            "does not exist" in unplaced.get(4, {}).get("reason", ""),
            json.dumps(unplaced.get(4)),
        )
        check(
            "present_walkthrough: the line past the end says so",
            "line 40 is past the end" in unplaced.get(5, {}).get("reason", ""),
            json.dumps(unplaced.get(5)),
        )
        check(
            "present_walkthrough: the symbol nothing resolves says so",
            "no definition of `no_such_symbol_anywhere`" in unplaced.get(6, {}).get("reason", ""),
            json.dumps(unplaced.get(6)),
        )
        check("present_walkthrough: no other problem", not answer.get("problems"), json.dumps(answer))
        walkthrough_id = answer.get("walkthroughId", "")

        listed = await client.call_tool("get_feedback", {})
        threads = (listed.structured_content or {}).get("threads", [])
        bodies = sorted(t["comments"][0]["body"] for t in threads)
        check(
            "get_feedback: the placed comments are threads",
            bodies == ["The call that changed.", "Where the greeting is made."],
            json.dumps(threads),
        )

        # A person answers a comment and clicks the button, at the terminal.
        on_main = next((t for t in threads if t["comments"][0]["body"] == "The call that changed."), None)
        if on_main is not None:
            await person(workspace, "feedback", "reply", on_main["id"], "Why this name?", "--author", "ana")
        clicked = await person(workspace, "walkthrough", "act", walkthrough_id[:8], "8")
        check("parley walkthrough act: clicked", clicked.startswith('Clicked "Run the tests"'), clicked)

        told = await client.call_tool("get_feedback_summary", {})
        said = texts_of(told)
        check("the reply reaches the agent", "Why this name?" in said, said)
        check(
            "the click reaches the agent",
            'clicked "Run the tests"' in said and "tell me what fails" in said,
            said,
        )


async def main() -> int:
    if len(sys.argv) != 3:
        print("usage: python py_walkthrough.py SHIM WORKSPACE", file=sys.stderr)
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
