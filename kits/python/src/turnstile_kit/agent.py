"""The Agent side of a session (PROTOCOL.md §13.2): the handler an adapter gives, and barriers.

In an Agent scenario (``setup["entry"] == "agent"``) the kit calls the adapter's
``agent(session)`` instead of ``run(session)``. It returns an :class:`AgentHandler`: every
``agent`` delivery but ``release`` becomes one ``handler.operate(op)``; ``release`` is the
kit's own (it lets a listener held at a barrier go). The Agent's one listener is
:meth:`Session.agent_event`, which holds the run at a barrier until its release.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional, Protocol, runtime_checkable

from .wire import AdapterError


@runtime_checkable
class AgentHandler(Protocol):
    """What ``agent(session)`` returns: ``operate(op)`` for each operation, and ``abort()``.

    ``op`` is the delivery's data with its id: ``{"id": "u1", "op": "prompt", "text": …}``.
    ``abort()`` (optional; pi: ``agent.abort()``) is called for an answer's ``abort: true``
    (§13.5) and at the stop; without it the kit aborts ``session.signal`` instead.
    """

    def operate(self, op: dict[str, Any]) -> None:
        """Applies one operation and reports its outcome (Session.outcome / Session.track)."""


def check_handler(handler: Any) -> AgentHandler:
    """The handler ``agent(session)`` returned, or an AdapterError saying what is wrong with it."""
    if not callable(getattr(handler, "operate", None)):
        raise AdapterError(f"agent(session) must return an object with operate(op) (and optionally abort()); "
                           f"got {type(handler).__name__}")
    if getattr(handler, "abort", None) is not None and not callable(handler.abort):
        raise AdapterError(f"the agent handler's abort must be a method abort(); got {type(handler.abort).__name__}")
    return handler


class Barrier:
    """One barrier of the setup: ``{id, event, nth}``. The listener is held at the ``nth``
    occurrence of ``event`` until the ``release`` operation naming ``id`` (or the stop)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.id = raw.get("id")
        self.event = raw.get("event")
        self.nth = raw.get("nth") or 1
        self.until_abort = raw.get("untilAbort") is True  # §13.6: also released by the listener's signal
        self.signal: Any = None  # that signal, once held
        self.state = "waiting"  # then "held", then "released"
        self._future: Optional[asyncio.Future] = None  # asyncio: what the held listener awaits

    def hold(self, loop: Optional[asyncio.AbstractEventLoop]) -> Optional[asyncio.Future]:
        """Holds the barrier; under asyncio returns the future its release resolves."""
        self.state = "held"
        if loop is not None:
            self._future = loop.create_future()
        return self._future

    def release(self) -> None:
        """Lets the held listener go."""
        self.state = "released"
        if self._future is not None and not self._future.done():
            self._future.set_result(None)


class Barriers:
    """The setup's barriers and the occurrences of each event type seen by the listener."""

    def __init__(self, agent_setup: Any) -> None:
        raw = agent_setup.get("barriers") if isinstance(agent_setup, dict) else None
        self.all = [Barrier(b) for b in raw or [] if isinstance(b, dict)]
        self._seen: dict[Any, int] = {}

    def reached(self, event_type: Any) -> list[Barrier]:
        """Counts one occurrence of the event type; returns the waiting barriers it reaches."""
        if not self.all:
            return []
        n = self._seen.get(event_type, 0) + 1
        self._seen[event_type] = n
        return [b for b in self.all if b.state == "waiting" and b.event == event_type and b.nth == n]

    def held(self, barrier_id: Any) -> Optional[Barrier]:
        """The held barrier with this id, if any."""
        return next((b for b in self.all if b.id == barrier_id and b.state == "held"), None)

    def release_all(self) -> None:
        """The stop: every held barrier lets its listener go."""
        for b in self.all:
            if b.state == "held":
                b.release()
