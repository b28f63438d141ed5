"""A session: one scenario's run, its calls, notifications, streams, tool runs and abort signal."""

from __future__ import annotations

import asyncio
import collections
import inspect
import json
import sys
import traceback
from typing import Any, Callable, Iterable

from .agent import AgentHandler, Barriers
from .wire import AdapterError, ProtocolError, Wire

STOPPED = "the simulation session was stopped"


def error_text(err: BaseException) -> str:
    """The text a failed run or a refused operation reports: the exception's message (its
    class name when empty)."""
    return str(err) or type(err).__name__


class CallError(Exception):
    """The harness answered a call with an error: the hook, stream function or execute throws it."""


class SessionStopped(Exception):
    """The session was stopped while the loop waited; every wait raises it from then on."""

    def __init__(self) -> None:
        super().__init__(STOPPED)


class ToolError(Exception):
    """A tool's execution failed in the world (a ``toolResult`` delivery with an error)."""


class DeliveryError(Exception):
    """A delivery names nothing this session knows (or an operation the adapter cannot apply);
    the kit reports it to the harness as an ``error`` for the session. An Agent handler's
    ``operate`` may raise it."""


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


class _Wait:
    """A hook's answer returned later (PROTOCOL.md §13.6): at its ``hookReturn`` delivery, or
    once the signal the loop gave the hook fires (``untilAbort``), whichever comes first."""

    def __init__(self, future: asyncio.Future | None) -> None:
        self.done = False
        self.error: BaseException | None = None
        self._future = future  # asyncio: what hook_async awaits

    def resolve(self) -> None:
        """The hook may return its answer now (the first of the delivery and the abort)."""
        if self.done:
            return
        self.done = True
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    def fail(self, err: BaseException) -> None:
        """The session stopped while the hook waited."""
        if self.done:
            return
        self.done, self.error = True, err
        if self._future is not None and not self._future.done():
            self._future.set_exception(err)


def _waits(msg: dict[str, Any]) -> bool:
    """Whether an answer is returned later (§13.6): it names a wait, or holds until the abort."""
    return isinstance(msg.get("wait"), str) or msg.get("untilAbort") is True


def _answer_data(msg: dict[str, Any]) -> Any:
    """An answer's data; raises CallError with its error."""
    if isinstance(msg.get("error"), str):
        raise CallError(msg["error"])
    return msg.get("data")


class Session:
    """One scenario. The adapter's ``run(session)`` builds its loop from :attr:`setup` and runs it.

    Everything the loop asks of the world goes through this object:

    * :meth:`hook` — an installed hook (a ``hook`` call); :meth:`call` for any call;
    * :meth:`open_stream` — a provider request (a ``stream`` call), returning a :class:`Stream`;
    * :meth:`run_tool` / :meth:`start_tool` — a tool's execute (a ``tool`` call) and its result;
    * :meth:`emit` — one loop event, serialised at once (later mutation does not show);
    * :attr:`signal` — the run's abort signal; :meth:`now` — the virtual clock, in ms.

    In an Agent scenario (PROTOCOL.md §13.2) the Agent's listener is :meth:`agent_event` and
    operations report with :meth:`outcome` and :meth:`track`.
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
        self.protocol: int = getattr(kit, "protocol", 1)  # the version negotiated at the hello
        self.agent_handler: AgentHandler | None = None  # an Agent scenario's: what agent(session) returned
        self.barriers = Barriers(setup.get("agent"))  # §13.2: where the listener is held
        self._returns: dict[str, _Wait] = {}  # §13.6: hook answers by the hookReturn that returns them
        # §13.6: hook answers waiting for the abort of their hook's signal, with that signal
        self._held: list[tuple[_Wait, Any]] = []

    # ---- time

    def now(self) -> int | float:
        """The virtual time in milliseconds."""
        return self.clock.now()

    # ---- calls and notifications

    def call(self, kind: str, data: Any, name: str | None = None) -> Any:
        """Makes a call and returns its answer's data; raises CallError with the answer's error.

        Synchronous, as the harness answers at once. After a stop it raises SessionStopped
        without asking the harness. A hook whose answer may wait (§13.6) is called with
        :meth:`hook` or :meth:`hook_async` instead.
        """
        msg = self._exchange(kind, data, name)
        if _waits(msg):
            self._waiting_mistake(name or kind, "call")
        return _answer_data(msg)

    def _waiting_mistake(self, name: str, how: str) -> None:
        self.wire.fatal = AdapterError(
            f"the answer to {name} waits (PROTOCOL.md §13.6), but the adapter called it with {how}: call the hook "
            "with session.hook(name, data, signal=...) in a synchronous loop, await session.hook_async(name, data, "
            "signal=...) under asyncio, or leave out serve(waiting_hooks=True)")
        raise self.wire.fatal

    def _exchange(self, kind: str, data: Any, name: str | None) -> dict[str, Any]:
        """Writes a call and reads its answer message (a standing answer's made up: {"data": …})."""
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
            return {"data": json.loads(standing)}
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
        if msg.get("abort") is True and self.protocol >= 2:
            self.abort_run()  # §13.5: the run is aborted before the hook returns or throws
            self._check_held()
        if self.protocol < 2:
            msg = {k: v for k, v in msg.items() if k not in ("wait", "untilAbort")}
        return msg

    def abort_run(self) -> None:
        """Fires the run's abort: an ``abort`` delivery, or an answer with ``abort: true``
        (§13.5). In a loop scenario it aborts :attr:`signal`; in an Agent scenario it calls the
        handler's ``abort()`` (pi: ``agent.abort()``), or aborts :attr:`signal` when it has none."""
        abort = getattr(self.agent_handler, "abort", None)
        if abort is not None:
            abort()
        else:
            self.signal.abort()

    def hook(self, name: str, data: dict[str, Any], signal: Any = None) -> dict[str, Any]:
        """Calls an installed hook; returns its answer ({} when null); raises CallError.

        ``signal`` is the abort signal the loop gave the hook (None when none: pi gives none to
        the queue polls, convertToLlm, getApiKey and the loop's prepareNextTurn); any object
        with ``aborted`` (its ``add_listener(fn)``, when it has one, as :class:`AbortSignal`,
        is used too; else ``aborted`` is read after each delivery). When the answer
        waits (§13.6, an adapter served with ``waiting_hooks=True``), a synchronous loop blocks
        here until its ``hookReturn``, or until ``signal`` fires for one held until the abort;
        under asyncio use :meth:`hook_async`.
        """
        msg = self._exchange("hook", data, name)
        if _waits(msg):
            if self.vloop is not None:
                self._waiting_mistake(name, "session.hook under asyncio")
            w = self._wait_for(msg, signal, None)
            self._block_until(lambda: w.done)
            if w.error is not None:
                raise w.error
        answer = _answer_data(msg)
        return answer if isinstance(answer, dict) else {}

    async def hook_async(self, name: str, data: dict[str, Any], signal: Any = None) -> dict[str, Any]:
        """:meth:`hook` for an asyncio loop: awaits an answer that waits (§13.6) meanwhile
        letting the loop's other tasks run."""
        msg = self._exchange("hook", data, name)
        if _waits(msg):
            w = self._wait_for(msg, signal, self._loop().create_future())
            if not w.done:
                await w._future
            if w.error is not None:
                raise w.error
        answer = _answer_data(msg)
        return answer if isinstance(answer, dict) else {}

    def _wait_for(self, msg: dict[str, Any], signal: Any, future: asyncio.Future | None) -> _Wait:
        """Registers an answer that waits: for its hookReturn (kept after it returned, so that a
        late delivery is known), and for the abort of ``signal`` (at once when it has fired;
        never when there is none: the adapter must not fire it from the run's signal itself)."""
        w = _Wait(future)
        if isinstance(msg.get("wait"), str):
            self._returns[msg["wait"]] = w
        if msg.get("untilAbort") is True:
            self._held.append((w, signal))
            if signal is not None:
                if getattr(signal, "aborted", False):
                    w.resolve()
                elif callable(getattr(signal, "add_listener", None)):
                    signal.add_listener(w.resolve)
        return w

    def _check_held(self) -> None:
        """Returns every held answer whose signal has fired, and lets go every barrier held until
        its signal's abort whose signal has: for a signal the loop only sets (``aborted``), with no
        listeners, seen after each delivery and each answer's abort, where an abort can happen."""
        for w, signal in self._held:
            if not w.done and signal is not None and getattr(signal, "aborted", False):
                w.resolve()
        self._held = [(w, signal) for w, signal in self._held if not w.done]
        for b in self.barriers.all:
            if b.state == "held" and b.until_abort and b.signal is not None and getattr(b.signal, "aborted", False):
                b.release()

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

    def wants_stream_options(self) -> bool:
        """Whether the setup asks for the stream function's options in ``stream`` calls (§13.4)."""
        return self.protocol >= 2 and self.setup.get("streamOptions") is True

    def open_stream(self, data: dict[str, Any], options: dict[str, Any] | None = None) -> Stream:
        """Makes the ``stream`` call ({model, messages, thinkingLevel, apiKey}); returns its stream.

        ``options`` is what the stream function received besides the model and the context
        (``{sessionId, identity}``, PROTOCOL.md §13.4; a key whose value is None is left out,
        as JavaScript leaves out undefined). It goes into the call's data as ``options`` only
        when the setup says ``streamOptions: true``; then it is required (``{}`` when there are
        none), since a loop that does not pass its options cannot be tested on them.
        """
        if self.wants_stream_options():
            if options is None:
                self.wire.fatal = AdapterError(
                    "the setup asks for stream options (streamOptions: true, PROTOCOL.md §13.4), but open_stream was "
                    "given none: pass what your stream function received besides the model and the context, "
                    "open_stream(data, {\"sessionId\": …, \"identity\": …}), or list \"streamOptions\" in serve(lacks=...)")
                raise self.wire.fatal
            if not isinstance(options, dict):
                self.wire.fatal = AdapterError(f"open_stream's options must be a dict ({{sessionId, identity}}); "
                                               f"got {type(options).__name__}")
                raise self.wire.fatal
            data = {**data, "options": {k: v for k, v in options.items() if v is not None}}
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
        try:
            self._deliver(d)
        finally:
            if self.protocol >= 2:
                self._check_held()

    def _deliver(self, d: dict[str, Any]) -> None:
        if isinstance(d.get("now"), (int, float)):
            self.clock.ms = d["now"]
        kind, target, data = d.get("kind"), d.get("target"), d.get("data")
        data = data if isinstance(data, dict) else {}
        if kind == "abort":
            self.abort_run()
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
            if kind == "toolUpdate":
                # Also after the tool settled, and after the run: the loop's retained on_update
                # decides what to drop (PROTOCOL.md §7).
                if run.on_update is not None and not self.stopping:
                    out = run.on_update(d.get("data"))  # at once, as pi's onUpdate
                    if inspect.isawaitable(out):  # asyncio: the kit applies deliveries inside its loop
                        asyncio.ensure_future(out, loop=self._loop())
            elif run.settled:
                return
            elif isinstance(data.get("error"), str) and data["error"] != "":
                run._settle(error=ToolError(data["error"]))
            else:
                run._settle(result=data.get("result"))
        elif kind == "hookReturn" and self.protocol >= 2:
            w = self._returns.get(target)
            if w is None:
                raise DeliveryError(f'hookReturn for unknown wait "{target}"')
            w.resolve()  # nothing when the abort returned it already
        elif kind == "agent" and self.protocol >= 2:
            self._operate(target, data)
        else:
            raise DeliveryError(f'unknown delivery kind "{kind}"')

    # ---- an Agent scenario (PROTOCOL.md §13.2)

    def agent_event(self, event: dict[str, Any], signal: Any = None) -> Any:
        """The Agent's listener: reports one event, then holds it at a barrier until its release.

        Subscribe it as the Agent's one listener. It notifies the event; when the event is the
        ``nth`` occurrence of a barrier's event type, the run must wait there until the
        barrier's ``release`` operation (or, for a barrier with ``untilAbort``, §13.6, until
        ``signal`` fires: pass the signal your Agent gives its listeners). Under asyncio it then
        returns the future the release resolves (return it from your listener: your Agent must
        await what listeners return); in a synchronous loop it blocks until the release.
        Otherwise (and after a stop) it returns None at once.
        """
        self.emit(event)
        if self.stopping:
            return None
        held = self.barriers.reached(event.get("type") if isinstance(event, dict) else None)
        if signal is not None and getattr(signal, "aborted", False):
            for b in held:
                if b.until_abort:
                    b.state = "released"  # §13.6: a fired signal holds nothing
            held = [b for b in held if not b.until_abort]
        if not held:
            return None
        futures = [b.hold(self.vloop) for b in held]
        if signal is not None:
            for b in held:
                if b.until_abort:
                    b.signal = signal  # seen after each delivery (_check_held), or at once by a listener
                    if callable(getattr(signal, "add_listener", None)):
                        signal.add_listener(lambda b=b: b.release() if b.state == "held" else None)
        if self.vloop is None:
            self._block_until(lambda: all(b.state != "held" for b in held))
            return None
        return futures[0] if len(futures) == 1 else asyncio.gather(*futures)

    def outcome(self, op: dict[str, Any], outcome: str, *, error: str | None = None, state: Any = None) -> None:
        """Reports an operation's outcome (§13.2): ``{id, op, outcome, error?, state?}``.

        ``outcome`` is "accepted" (at once: steer, followUp, abort, the setters, reset,
        ``state`` with ``state=``), "resolved" or "refused" (with ``error=``, the text)."""
        data: dict[str, Any] = {"id": op.get("id"), "op": op.get("op"), "outcome": outcome}
        if error is not None:
            data["error"] = error
        if state is not None:
            data["state"] = state
        self.notify("outcome", data)

    def track(self, op: dict[str, Any], work: Any) -> None:
        """Reports prompt, continue or waitForIdle when it settles: "resolved", or "refused"
        with the exception's text.

        ``work`` is the Agent's awaitable (asyncio: give it at once, so that outcomes come in
        the order your Agent settles them), or a callable the kit calls now: one that raises is
        refused at once (a busy Agent), one that returns an awaitable is tracked, one that
        returns anything else has resolved (a synchronous Agent, whose prompt returns when the
        run is over).
        """
        if callable(work) and not inspect.isawaitable(work):
            try:
                work = work()
            except SystemExit:
                raise
            except Exception as err:
                self.outcome(op, "refused", error=error_text(err))
                return
            if not inspect.isawaitable(work):
                self.outcome(op, "resolved")
                return
        future = asyncio.ensure_future(work, loop=self._loop())

        def settled(f: asyncio.Future) -> None:
            if f.cancelled():
                return
            err = f.exception()
            if err is None:
                self.outcome(op, "resolved")
            elif not isinstance(err, SystemExit):
                self.outcome(op, "refused", error=error_text(err))

        future.add_done_callback(settled)

    def held_barriers(self) -> list[Any]:
        """The ids of the barriers still held (a listener waits for their release)."""
        return [b.id for b in self.barriers.all if b.state == "held"]

    def _operate(self, target: Any, data: dict[str, Any]) -> None:
        """An ``agent`` delivery: ``release`` is the kit's; every other operation the handler's."""
        if self.agent_handler is None:
            raise DeliveryError(f"an agent delivery ({json.dumps(data.get('op'))}), but session {self.id} "
                                "is not an Agent scenario")
        if not isinstance(target, str) or target == "":
            raise DeliveryError("an agent delivery without an operation id (target)")
        op = {**data, "id": target}
        if op.get("op") == "release":
            barrier = self.barriers.held(op.get("barrier"))
            if barrier is None:
                self.outcome(op, "refused", error=f"barrier {op.get('barrier')} is not held")
                return
            self.outcome(op, "accepted")
            barrier.release()
            return
        try:
            self.agent_handler.operate(op)
        except (DeliveryError, SystemExit):
            raise
        except SessionStopped:
            if not self.stopping:
                raise
        except Exception as err:
            traceback.print_exception(err, file=sys.stderr)
            self.wire.fatal = AdapterError(
                f"the agent handler's operate raised {type(err).__name__}: {err} (operation {target}, "
                f"{json.dumps(op.get('op'))}); report a failed operation with session.outcome(op, \"refused\", "
                "error=...), raise kit.DeliveryError for one you cannot apply")
            raise self.wire.fatal from None

    def stop(self) -> None:
        """Stops the session: nothing more is reported, every wait fails, the signal fires; in an
        Agent scenario held barriers let their listeners go and the handler's abort() is called."""
        self.stopping = True
        self.signal.abort()
        self.barriers.release_all()
        abort = getattr(self.agent_handler, "abort", None)
        if abort is not None:
            try:
                abort()
            except SystemExit:
                raise
            except Exception:  # winding down: the harness ignores what follows
                pass
        for w in [*self._returns.values(), *(w for w, _ in self._held)]:
            w.fail(SessionStopped())
        for stream in self.streams.values():
            stream._wake()
        for run in self.tools.values():
            run._settle(error=SessionStopped())

