"""Review rounds as MCP tasks: drives the real parley-mcp shim with the
official MCP Python SDK (`mcp` 2.3.0) in its default `auto` mode (which
reaches 2026-07-28), whose `Client(extensions=[...])` takes protocol
extensions (SEP-2133). The SDK ships no tasks extension, so this script
declares `io.modelcontextprotocol/tasks` (SEP-2663) through that API: a claim
on `resultType: "task"` that polls `tasks/get` at the task's `pollIntervalMs`
until the task ends, as a host that runs tasks does.

Usage: python py_tasks.py SCENARIO SHIM WORKSPACE
  long     the SDK's own request timeout is 2 s and the reviewer takes longer:
           request_review comes back as a task and gives the finished round;
           await_review of it then answers at once
  plain    the same SDK without the extension: request_review answers
           pending after wait_seconds, as it does for every such host
  cancel   cancelling a request_review task stops its round; cancelling an
           await_review task ends only that wait, and the round's own task
           still gives its review
  restart  a person's round as a task: prints `task REVIEW_ID`, then reads a
           line on stdin (the daemon is restarted meanwhile); the task goes on
           on the new daemon: prints `resumed REVIEW_ID` and polls it to the
           person's verdict
WORKSPACE is a git repository with uncommitted changes; PARLEY_SOCKET,
PARLEY_DATA_DIR, PARLEY_DAEMON (and PARLEY_NO_SPAWN when set) are handed to
the shim.

Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, ClassVar, Literal

import anyio
from mcp import types
from mcp.client.client import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

# The SDK's request timeout: far shorter than the rounds below.
TIMEOUT = 2.0


class TaskHandle(types.Result):
    """`CreateTaskResult`: what tools/call answers when it became a task."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None


class TaskState(types.Result):
    """`tasks/get`'s answer: the task, with its result or error once it ended."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Ack(types.Result):
    """`tasks/cancel`'s empty answer."""


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param: ClassVar[str | None] = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param: ClassVar[str | None] = "taskId"


async def get_task(session: Any, task_id: str) -> TaskState:
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), TaskState)


async def cancel_task(session: Any, task_id: str) -> None:
    await session.send_request(CancelTask(params=TaskParams(task_id=task_id)), Ack)


class TaskFailed(RuntimeError):
    def __init__(self, error: dict[str, Any] | None) -> None:
        super().__init__((error or {}).get("message", "the task failed"))
        self.error = error


class Tasks(ClientExtension):
    """The tasks extension, requester side: waits for a task's end by polling."""

    identifier = "io.modelcontextprotocol/tasks"

    def __init__(self) -> None:
        self.seen: list[TaskHandle] = []
        self.polls: list[TaskState] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, context: ClaimContext) -> types.CallToolResult:
        self.seen.append(handle)
        interval = (handle.poll_interval_ms or 1000) / 1000
        while True:
            await anyio.sleep(interval)
            state = await get_task(context.session, handle.task_id)
            self.polls.append(state)
            interval = (state.poll_interval_ms or 1000) / 1000
            if state.status == "completed":
                return types.CallToolResult.model_validate(state.result or {})
            if state.status in ("failed", "cancelled"):
                raise TaskFailed(state.error)


def server(shim: str, workspace: str) -> StdioServerParameters:
    names = ("PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_DAEMON", "PARLEY_NO_SPAWN")
    env = {name: os.environ[name] for name in names if name in os.environ}
    return StdioServerParameters(command=shim, args=[], env=env, cwd=workspace)


def text(result: types.CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def long(shim: str, workspace: str, check: Any) -> None:
    tasks = Tasks()
    async with Client(server(shim, workspace), extensions=[tasks], read_timeout_seconds=TIMEOUT) as client:
        check("the session is on the 2026-07-28 wire", client.protocol_version == "2026-07-28", client.protocol_version)
        started = time.monotonic()
        result = await client.call_tool("request_review", {"summary": "A change the reviewer takes its time over"})
        took = time.monotonic() - started
        review = result.structured_content or {}
        check("request_review came back as a task", len(tasks.seen) == 1, [h.model_dump() for h in tasks.seen])
        handle = tasks.seen[0] if tasks.seen else None
        check("the task names its review", handle is not None and "parley-review:" in handle.task_id, handle)
        check("while it runs it has no time limit", handle is not None and handle.ttl_ms is None, handle)
        check("the task gives the finished round", review.get("verdict") == "lgtm_with_suggestions", review)
        check("the round took longer than the SDK's timeout", took > TIMEOUT * 2, f"{took:.1f} s")
        said = [p.status_message for p in tasks.polls if p.status == "working"]
        check("the polls said where the round was", any("review" in (s or "") for s in said), said)
        ended = tasks.polls[-1] if tasks.polls else None
        check("the ended task says how long it is kept", ended is not None and (ended.ttl_ms or 0) >= 3_600_000, ended)
        again = await client.call_tool("await_review", {"review_id": review.get("review_id", "")})
        check("await_review of an ended round answers at once", len(tasks.seen) == 1, len(tasks.seen))
        check(
            "with the same round",
            (again.structured_content or {}).get("round") == review.get("round") and not again.is_error,
            again.structured_content,
        )


async def plain(shim: str, workspace: str, check: Any) -> None:
    async with Client(server(shim, workspace), read_timeout_seconds=30) as client:
        check("the session is on the 2026-07-28 wire", client.protocol_version == "2026-07-28", client.protocol_version)
        result = await client.call_tool("request_review", {"summary": "Waited for as before", "wait_seconds": 1})
        review = result.structured_content or {}
        check("request_review answers pending", review.get("status") == "pending" and not result.is_error, review)
        check("and says to call await_review", "await_review" in review.get("message", ""), review)


async def cancel(shim: str, workspace: str, check: Any) -> None:
    tasks = Tasks()
    async with Client(server(shim, workspace), extensions=[tasks], read_timeout_seconds=TIMEOUT) as client:
        session = client.session
        first = await session.call_tool("request_review", {"summary": "Stopped half way"}, allow_claimed=True)
        check("request_review answered with a task", isinstance(first, TaskHandle), first)
        if not isinstance(first, TaskHandle):
            return
        check("it is working", (await get_task(session, first.task_id)).status == "working", first)
        await cancel_task(session, first.task_id)
        state = await get_task(session, first.task_id)
        check("cancelling it ends the task as cancelled", state.status == "cancelled", state)
        review_id = first.task_id.split(":")[1]
        stopped = await client.call_tool("await_review", {"review_id": review_id})
        check("and stopped its round", stopped.is_error and "cancel" in text(stopped), text(stopped))

        # A session whose only round was stopped is not kept: this is a new one.
        second = await session.call_tool("request_review", {"summary": "Let through"}, allow_claimed=True)
        check("the next request is a task too", isinstance(second, TaskHandle), second)
        if not isinstance(second, TaskHandle):
            return
        waiting = await session.call_tool(
            "await_review", {"review_id": second.task_id.split(":")[1]}, allow_claimed=True
        )
        check("await_review of a running round is a task", isinstance(waiting, TaskHandle), waiting)
        if not isinstance(waiting, TaskHandle):
            return
        await cancel_task(session, waiting.task_id)
        check("cancelling the wait ends it", (await get_task(session, waiting.task_id)).status == "cancelled", waiting)
        state = await get_task(session, second.task_id)
        check("the round's own task runs on", state.status == "working", state)
        while state.status == "working":
            await anyio.sleep((state.poll_interval_ms or 1000) / 1000)
            state = await get_task(session, second.task_id)
        review = (state.result or {}).get("structuredContent") or {}
        check("and gives its review", state.status == "completed" and review.get("verdict") == "lgtm_with_suggestions", state)


async def restart(shim: str, workspace: str, check: Any) -> None:
    tasks = Tasks()
    async with Client(server(shim, workspace), extensions=[tasks], read_timeout_seconds=TIMEOUT) as client:
        session = client.session
        asked = await session.call_tool(
            "request_review", {"summary": "For a person", "reviewer": "human"}, allow_claimed=True
        )
        check("a person's round is a task", isinstance(asked, TaskHandle), asked)
        if not isinstance(asked, TaskHandle):
            return
        review_id = asked.task_id.split(":")[1]
        print(f"task {review_id}", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)
        state = await get_task(session, asked.task_id)
        check("after the restart the same task goes on", state.status == "working", state)
        check("waiting for the person", "review" in (state.status_message or ""), state)
        print(f"resumed {review_id}", flush=True)
        while state.status == "working":
            await anyio.sleep((state.poll_interval_ms or 1000) / 1000)
            state = await get_task(session, asked.task_id)
        review = (state.result or {}).get("structuredContent") or {}
        check("and ends with the person's verdict", state.status == "completed" and review.get("verdict") == "lgtm", state)


SCENARIOS = {"long": long, "plain": plain, "cancel": cancel, "restart": restart}


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("shim")
    parser.add_argument("workspace")
    args = parser.parse_args()
    results: list[tuple[str, bool, Any]] = []

    def check(name: str, ok: bool, detail: Any = None) -> None:
        results.append((name, ok, detail))
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": {json.dumps(detail, default=str)}"), flush=True)

    try:
        with anyio.fail_after(120):
            await SCENARIOS[args.scenario](os.path.abspath(args.shim), os.path.realpath(args.workspace), check)
    except TimeoutError:
        check("the scenario finishes within 120 s", False, "it hung")
    except (MCPError, TaskFailed) as error:
        check("no call fails", False, str(error))
    failed = sum(1 for _, ok, _ in results if not ok)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and results else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
