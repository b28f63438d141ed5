"""What the asyncio loop (agentloop.py) and its synchronous twin (syncloop.py) share: the
parts of a run that never wait — the exact texts, tool declarations in the transcript, and the
shapes of a tool call's outcome. Written from turnstile's contract (docs/SEMANTICS.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

Message = dict[str, Any]

ABORTED = "Operation aborted"
BLOCKED = "Tool execution was blocked"
LLM_ROLES = ("system", "user", "assistant", "toolResult")


def truncated_text(name: str) -> str:
    """The result text of a tool call in a batch cut by the output token limit."""
    return (f'Tool call "{name}" was not executed: the response hit the output token limit, so its '
            "arguments may be truncated. Re-issue the tool call with complete arguments.")


class LoopError(Exception):
    """The run cannot go on (a refused continue); the run fails with this message."""


# ---- tool declarations in the transcript


def declared_tools(messages: list[Message]) -> dict[str, dict[str, Any]]:
    """The tools a transcript declares: its system messages replayed in order, removals first."""
    tools: dict[str, dict[str, Any]] = {}
    for m in messages:
        if m.get("role") != "system":
            continue
        for r in m.get("toolsRemoved") or []:
            tools.pop(r.get("name"), None)
        for d in m.get("toolsAdded") or []:
            tools[d["name"]] = d
    return tools


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def tool_changes(declared: dict[str, dict[str, Any]], executable: list[dict[str, Any]]) -> dict[str, list]:
    """What turns the declared set into the executable one; a changed tool is removed and added."""
    now = {d["name"]: d for d in executable}
    added = [d for d in executable if d["name"] not in declared or not same(declared[d["name"]], d)]
    removed = [{"name": n} for n, d in declared.items() if n not in now or not same(d, now[n])]
    return {"toolsAdded": added, "toolsRemoved": removed}


def with_changes(system: Message, changes: dict[str, list]) -> Message:
    out = {k: v for k, v in system.items() if k not in ("toolsAdded", "toolsRemoved")}
    for key in ("toolsAdded", "toolsRemoved"):
        if changes[key]:
            out[key] = changes[key]
    return out


def declare_tool_changes(transcript: list[Message], tools: list[Any], batch: list[Message], now: int | float) -> list[Message]:
    """Makes the messages about to join the transcript declare the executable tools exactly.

    The last system message of the batch carries the difference (its own claims replaced);
    without one, a new system message is inserted before the first non-system message when
    anything differs. Messages already in the transcript are never edited.
    """
    executable = [t.declaration() for t in tools]
    last = max((i for i, m in enumerate(batch) if m.get("role") == "system"), default=-1)
    baseline = list(batch)
    if last >= 0:
        baseline[last] = with_changes(batch[last], {"toolsAdded": [], "toolsRemoved": []})
    changes = tool_changes(declared_tools(transcript + baseline), executable)
    empty = not changes["toolsAdded"] and not changes["toolsRemoved"]
    if last >= 0:
        sys_msg = batch[last]
        if empty and not sys_msg.get("toolsAdded") and not sys_msg.get("toolsRemoved"):
            return batch
        baseline[last] = with_changes(sys_msg, changes)
        return baseline
    if empty:
        return batch
    update = with_changes({"role": "system", "content": "", "timestamp": now}, changes)
    at = next((i for i, m in enumerate(batch) if m.get("role") != "system"), len(batch))
    return batch[:at] + [update] + batch[at:]


# ---- a run


def error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "details": {}}


@dataclass
class Outcome:
    call: dict[str, Any]
    result: dict[str, Any]
    is_error: bool
    duration_ms: Optional[int] = None


@dataclass
class Prepared:
    tool: Any = None
    args: Any = None
    immediate: Optional[Outcome] = None


# ---- what the stream function gets besides the context (R-PROVIDER-OPTIONS)

# pi's DEFAULT_AGENT_IDENTITY (1.4.0 and later): attribution to pi.
DEFAULT_IDENTITY = {"attribution": {"name": "pi", "url": "https://pi.dev", "categories": ["cli-agent"]}}


def merge_identity(*identities: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """pi-ai's mergeClientIdentity: field by field (userAgent, attribution, version), later
    ones winning; an absent (or null) field keeps the value before it, but attribution null
    turns the attribution off. None when every identity is None."""
    merged: Optional[dict[str, Any]] = None
    for identity in identities:
        if identity is None:
            continue
        merged = merged if merged is not None else {}
        for key in ("userAgent", "attribution", "version"):
            if identity.get(key) is not None or (key == "attribution" and key in identity):
                merged[key] = identity[key]
    return merged


def request_options(session_id: Optional[str], identity: Optional[dict[str, Any]]) -> dict[str, Any]:
    """The options every request of a run gives the stream function: the session id (left out
    when unset) and pi's default identity merged with the configured one."""
    options: dict[str, Any] = {}
    if session_id is not None:
        options["sessionId"] = session_id
    options["identity"] = merge_identity(DEFAULT_IDENTITY, identity)
    return options
