"""What the Python SDK scenarios in this folder share: the check printer whose
lines the Rust tests read (`ok   NAME` or `FAIL NAME: DETAIL`, then the totals),
and the text of a tool's result."""

from __future__ import annotations

from typing import Any


class Checks:
    """One line per check; the totals at the end."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: Any = "") -> bool:
        if ok:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            suffix = f": {detail}" if detail != "" else ""
            print(f"FAIL {name}{suffix}", flush=True)
        return ok


def text_of(result: Any) -> str:
    """The first text block of a tool's result, or ""."""
    for block in result.content:
        if getattr(block, "type", None) == "text":
            return block.text
    return ""


def texts_of(result: Any) -> str:
    """Every text block of a tool's result, a line apart."""
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")
