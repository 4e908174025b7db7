"""An agent host stand-in, driven line by line: it runs the real parley-mcp
through the official MCP Python SDK (`mcp` 2.3.0, the `initialize` wire as
Claude Code and Codex speak it) and runs `parley hook ...` commands as its
own children through a shell, as Claude Code and Codex run their hooks. So
the shim and the hooks share this process as their host, which is how a hook
finds its agent.

Usage: python py_host.py SHIM PARLEY WORKSPACE CLIENT_NAME
Environment: PARLEY_SOCKET, PARLEY_DATA_DIR and PARLEY_DAEMON are handed to
the shim and the hooks.

Prints {"ready": true, "pid": PID} once connected, then answers each command
line on stdin with one JSON line:
  {"call": TOOL, "args": {...}}      -> {"text": ..., "is_error": bool}
  {"hook": NAME, "input": {...}}     -> {"code": N, "stdout": ..., "stderr": ...}
End of input closes the client and exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation

PASSED_ENV = ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON", "PARLEY_LOG", "PARLEY_NO_SPAWN")
CALL_TIMEOUT_S = 30.0


def say(value: dict[str, Any]) -> None:
    print(json.dumps(value), flush=True)


def run_hook(parley: str, workspace: str, name: str, hook_input: Any) -> dict[str, Any]:
    env = {key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ}
    env.update({key: os.environ[key] for key in PASSED_ENV if key in os.environ})
    done = subprocess.run(
        ["/bin/sh", "-c", '"$0" hook "$1"', parley, name],
        input=json.dumps(hook_input),
        capture_output=True,
        text=True,
        cwd=workspace,
        env=env,
        timeout=CALL_TIMEOUT_S,
    )
    return {"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


async def main() -> int:
    shim, parley, workspace, client_name = sys.argv[1:5]
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    server = StdioServerParameters(command=shim, args=[], env=env, cwd=workspace)
    info = Implementation(name=client_name, version="2.1.320")
    stdin = anyio.wrap_file(sys.stdin)
    async with Client(server, mode="legacy", read_timeout_seconds=CALL_TIMEOUT_S, client_info=info) as client:
        say({"ready": True, "pid": os.getpid()})
        async for line in stdin:
            if not line.strip():
                continue
            command = json.loads(line)
            if "call" in command:
                result = await client.call_tool(command["call"], command.get("args", {}))
                text = "".join(block.text for block in result.content if getattr(block, "type", None) == "text")
                say({"text": text, "is_error": bool(result.is_error)})
            elif "hook" in command:
                answer = await anyio.to_thread.run_sync(
                    run_hook, parley, workspace, command["hook"], command["input"]
                )
                say(answer)
            else:
                say({"error": f"unknown command {line.strip()}"})
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
