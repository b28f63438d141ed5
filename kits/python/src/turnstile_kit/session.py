"""A session: one scenario's run, its calls, notifications, streams, tool runs and abort signal."""

from __future__ import annotations

import asyncio
import collections
import inspect
import json
from typing import Any, Callable, Iterable

from .wire import ProtocolError, Wire

STOPPED = "the simulation session was stopped"


class CallError(Exception):
    """The harness answered a call with an error: the hook, stream function or execute throws it."""


class SessionStopped(Exception):
    """The session was stopped while the loop waited; every wait raises it from then on."""

    def __init__(self) -> None:
        super().__init__(STOPPED)


class ToolError(Exception):
    """A tool's execution failed in the world (a ``toolResult`` delivery with an error)."""


class DeliveryError(Exception):
    """A delivery names nothing this session knows; the kit reports it to the harness."""


class Clock:
    """The virtual clock: the ``now`` of the latest delivery, in milliseconds; 0 until the first."""

    def __init__(self) -> None:
        self.ms: int | float = 0

    def now(self) -> int | float:
        """Virtual milliseconds (wall clock and monotonic clock alike)."""
        return self.ms

    def seconds(self) -> float:
        """Virtual seconds, for asyncio's loop.time()."""
        return self.ms / 1000


class AbortSignal:
    """The run's abort signal; the ``abort`` delivery fires it. Listeners run at once, in order."""

    def __init__(self) -> None:
        self.aborted = False
        self._listeners: list[Callable[[], Any]] = []

    def add_listener(self, listener: Callable[[], Any]) -> None:
        """Calls listener when the signal fires (at once if it already has)."""
        if self.aborted:
            listener()
        else:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], Any]) -> None:
        """Forgets a listener added with add_listener."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def abort(self) -> None:
        """Fires the signal (once)."""
        if self.aborted:
            return
        self.aborted = True
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()


class Stream:
    """A provider response, fed by ``streamEvent`` / ``streamEnd`` / ``streamFail`` deliveries.

    Iterate it (``async for`` under asyncio, ``for`` in a synchronous loop) to get pi-ai's
    AssistantMessageEvent dicts; after ``done``/``error`` or the end of the iteration,
    :meth:`result` is the final message. A ``streamFail`` makes the iteration raise
    :class:`CallError` with its text.
    """

    def __init__(self, session: "Session", stream_id: str) -> None:
        self.session = session
        self.id = stream_id
        self.queue: collections.deque[dict[str, Any]] = collections.deque()
        self.ended = False
        self.final: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self._waiter: asyncio.Future | None = None

    # a delivery arrived
    def _wake(self) -> None:
        w, self._waiter = self._waiter, None
        if w is not None and not w.done():
            w.set_result(None)

    def _ready(self) -> bool:
        return bool(self.queue) or self.error is not None or self.ended or self.session.stopping

    def _take(self) -> dict[str, Any] | None:
        """The next event, None at the end; raises the stream's failure. Requires _ready()."""
        if self.queue:
            event = self.queue.popleft()
            if event.get("type") in ("done", "error"):
                self.ended = True
                self.final = event.get("message") if event.get("type") == "done" else event.get("error")
            return event
        if self.error is not None:
            raise self.error
        if self.ended:
            return None
        raise SessionStopped()

    def __aiter__(self) -> "Stream":
        return self

    async def __anext__(self) -> dict[str, Any]:
        while not self._ready():
            self._waiter = self.session._loop().create_future()
            await self._waiter
        event = self._take()
        if event is None:
            raise StopAsyncIteration
        return event

    def __iter__(self) -> "Stream":
        return self

    def __next__(self) -> dict[str, Any]:
        self.session._block_until(self._ready)
        event = self._take()
        if event is None:
            raise StopIteration
        return event

    def result(self) -> dict[str, Any]:
        """The final message (of ``done``/``error``, or the one the stream ended with)."""
        if self.final is None:
            raise CallError("the stream ended without a final message")
        return self.final


class ToolRun:
    """One tool execution in the world, settled by ``toolUpdate`` / ``toolResult`` deliveries.

    Under asyncio, ``await run`` gives the result (or raises :class:`ToolError`); in a
    synchronous loop use :meth:`Session.wait` or :meth:`Session.wait_any`.
    """

    def __init__(self, session: "Session", tool_call_id: str, on_update: Callable[[Any], Any] | None) -> None:
        self.session = session
        self.tool_call_id = tool_call_id
        self.on_update = on_update
        self.settled = False
        self.result: Any = None
        self.error: BaseException | None = None
        self._future: asyncio.Future | None = None

    def _settle(self, result: Any = None, error: BaseException | None = None) -> None:
        if self.settled:
            return
        self.settled = True
        self.result, self.error = result, error
        if self._future is not None and not self._future.done():
            if error is not None:
                self._future.set_exception(error)
            else:
                self._future.set_result(result)

    def outcome(self) -> Any:
        """The result of a settled run; raises its error."""
        if self.error is not None:
            raise self.error
        return self.result

    def __await__(self):
        if not self.settled:
            if self._future is None:
                self._future = self.session._loop().create_future()
            return self._future.__await__()
        return _settled(self).__await__()


async def _settled(run: ToolRun) -> Any:
    return run.outcome()


class Session:
    """One scenario. The adapter's ``run(session)`` builds its loop from :attr:`setup` and runs it.

    Everything the loop asks of the world goes through this object:

    * :meth:`hook` — an installed hook (a ``hook`` call); :meth:`call` for any call;
    * :meth:`open_stream` — a provider request (a ``stream`` call), returning a :class:`Stream`;
    * :meth:`run_tool` / :meth:`start_tool` — a tool's execute (a ``tool`` call) and its result;
    * :meth:`emit` — one loop event, serialised at once (later mutation does not show);
    * :attr:`signal` — the run's abort signal; :meth:`now` — the virtual clock, in ms.
    """

    def __init__(self, kit: Any, session_id: int, setup: dict[str, Any], wire: Wire, clock: Clock,
                 standing_answers: dict[str, Any] | None = None) -> None:
        self._kit = kit
        # The answers the start promised to every call of a hook (PROTOCOL.md §15), as JSON text
        # by hook name: each call of one is written marked standing and not waited for.
        self._standing = {hook: json.dumps(data) for hook, data in (standing_answers or {}).items()}
        self.id = session_id
        self.setup = setup
        self.wire = wire
        self.clock = clock
        self.signal = AbortSignal()
        self.stopping = False
        self.streams: dict[str, Stream] = {}
        self.tools: dict[str, ToolRun] = {}
        self.vloop: Any = None  # the VirtualLoop under asyncio, None in a synchronous loop

    # ---- time

    def now(self) -> int | float:
        """The virtual time in milliseconds."""
        return self.clock.now()

    # ---- calls and notifications

    def call(self, kind: str, data: Any, name: str | None = None) -> Any:
        """Makes a call and returns its answer's data; raises CallError with the answer's error.

        Synchronous, as the harness answers at once. After a stop it raises SessionStopped
        without asking the harness.
        """
        if self.wire.fatal is not None:
            raise self.wire.fatal
        if self.stopping:
            raise SessionStopped()
        call_id = self._kit._next_call_id()
        call: dict[str, Any] = {"kind": kind, "data": data}
        if name:
            call["name"] = name
        standing = self._standing.get(name) if kind == "hook" and name else None
        if standing is not None:
            # §15: the harness answers nothing; the loop gets a fresh copy of the promised answer.
            self.wire.send({"type": "call", "id": call_id, "session": self.id, "call": call, "standing": True})
            return json.loads(standing)
        self.wire.send({"type": "call", "id": call_id, "session": self.id, "call": call})
        msg = self._kit._receive_answer()
        bad = None
        if msg["type"] != "answer":
            bad = f'expected the answer to call {call_id}, got a "{msg["type"]}" message'
        elif msg.get("id") != call_id:
            bad = f"an answer for unknown call id {msg.get('id')} (the outstanding call is {call_id})"
        if bad is not None:
            self.wire.fatal = ProtocolError(f"protocol error at line {self.wire.line}: {bad}")
            raise self.wire.fatal
        if msg.get("abort") is True and self._kit.protocol >= 2:
            self.signal.abort()  # §13.5: the run is aborted before the hook returns or throws
        if isinstance(msg.get("error"), str):
            raise CallError(msg["error"])
        return msg.get("data")

    def hook(self, name: str, data: dict[str, Any]) -> dict[str, Any]:
        """Calls an installed hook; returns its answer ({} when null); raises CallError."""
        answer = self.call("hook", data, name)
        return answer if isinstance(answer, dict) else {}

    def installed(self, hook: str) -> bool:
        """Reports whether the scenario installs this hook (setup.hooks)."""
        return hook in (self.setup.get("hooks") or [])

    def notify(self, kind: str, data: Any) -> None:
        """Writes a notification now (nothing after a stop)."""
        if self.stopping or self.wire.fatal is not None:
            return
        self.wire.send({"type": "notify", "session": self.id, "notification": {"kind": kind, "data": data}})

    def emit(self, event: dict[str, Any]) -> None:
        """Reports one loop event; it is serialised now, so later mutation does not show."""
        self.notify("event", event)

    # ---- the world's side of streams and tools

    def open_stream(self, data: dict[str, Any]) -> Stream:
        """Makes the ``stream`` call ({model, messages, thinkingLevel, apiKey}); returns its stream."""
        answer = self.call("stream", data)
        stream_id = str((answer or {}).get("stream"))
        stream = Stream(self, stream_id)
        self.streams[stream_id] = stream
        return stream

    def start_tool(self, tool_call_id: str, tool_name: str, args: Any,
                   on_update: Callable[[Any], Any] | None = None) -> ToolRun:
        """Makes the ``tool`` call; returns the run, which deliveries settle. Raises CallError."""
        run = ToolRun(self, tool_call_id, on_update)
        self.tools[tool_call_id] = run
        self.call("tool", {"toolCallId": tool_call_id, "toolName": tool_name, "args": args})
        return run

    def run_tool(self, tool_call_id: str, tool_name: str, args: Any,
                 on_update: Callable[[Any], Any] | None = None) -> Any:
        """start_tool, then its result: an awaitable under asyncio, the value in a synchronous loop."""
        run = self.start_tool(tool_call_id, tool_name, args, on_update)
        if self.vloop is not None:
            return run
        return self.wait(run)

    # ---- waiting in a synchronous loop

    def wait(self, run: ToolRun) -> Any:
        """Synchronous loops: blocks until the run settles; returns its result or raises."""
        self._block_until(lambda: run.settled)
        return run.outcome()

    def wait_any(self, runs: Iterable[ToolRun]) -> ToolRun:
        """Synchronous loops: blocks until one of the runs has settled; returns the first settled."""
        runs = list(runs)
        if not runs:
            raise ValueError("wait_any needs at least one run")
        self._block_until(lambda: any(r.settled for r in runs))
        return next(r for r in runs if r.settled)

    def _block_until(self, ready: Callable[[], bool]) -> None:
        if self.vloop is not None:
            raise RuntimeError("a blocking wait inside an asyncio loop: use await / async for")
        while not ready():
            if self.stopping:
                raise SessionStopped()
            # Idle by construction: the only thread of the program is here, blocked.
            self._kit._park(self)

    def _loop(self) -> asyncio.AbstractEventLoop:
        if self.vloop is None:
            raise RuntimeError("an asyncio wait in a synchronous loop: serve an `async def run` for asyncio")
        return self.vloop

    # ---- applying the harness's messages

    def deliver(self, d: dict[str, Any]) -> None:
        """Applies a delivery: sets the clock to its ``now`` first. Raises DeliveryError."""
        if isinstance(d.get("now"), (int, float)):
            self.clock.ms = d["now"]
        kind, target, data = d.get("kind"), d.get("target"), d.get("data")
        data = data if isinstance(data, dict) else {}
        if kind == "abort":
            self.signal.abort()
        elif kind in ("streamEvent", "streamEnd", "streamFail"):
            stream = self.streams.get(target)
            if stream is None:
                raise DeliveryError(f'delivery for unknown stream "{target}"')
            if kind == "streamEvent":
                stream.queue.append(d.get("data"))
            elif kind == "streamEnd":
                stream.ended = True
                stream.final = data.get("message")
            else:
                stream.error = CallError(str(data.get("error", "")))
            stream._wake()
        elif kind in ("toolUpdate", "toolResult"):
            run = self.tools.get(target)
            if run is None:
                raise DeliveryError(f'delivery for unknown tool call "{target}"')
            if run.settled:
                return
            if kind == "toolUpdate":
                if run.on_update is not None:
                    out = run.on_update(d.get("data"))  # at once, as pi's onUpdate
                    if inspect.isawaitable(out):  # asyncio: the kit applies deliveries inside its loop
                        asyncio.ensure_future(out, loop=self._loop())
            elif isinstance(data.get("error"), str) and data["error"] != "":
                run._settle(error=ToolError(data["error"]))
            else:
                run._settle(result=data.get("result"))
        else:
            raise DeliveryError(f'unknown delivery kind "{kind}"')

    def stop(self) -> None:
        """Stops the session: nothing more is reported, every wait fails, the signal fires."""
        self.stopping = True
        self.signal.abort()
        for stream in self.streams.values():
            stream._wake()
        for run in self.tools.values():
            run._settle(error=SessionStopped())

