"""The adapter's main loop: hello, sessions, deliveries, idle, stop and shutdown."""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
import traceback
from typing import Any, Awaitable, BinaryIO, Callable, Iterable, Union

from .agent import check_handler
from .session import CallError, Clock, DeliveryError, Session, error_text
from .vloop import VirtualLoop
from .wire import AdapterError, ProtocolError, Shutdown, Wire

PROTOCOL = 2  # the newest version this kit speaks (PROTOCOL.md §13)

# The optional features of version 2 (PROTOCOL.md §13): a version-1 hello never names them.
V2_FEATURES = ("agent", "toolResolvesNothing", "streamOptions", "abortInHook", "waitingHooks", "runToolCall", "defaultModel")
# Those this kit has no means for: it has no way to make a Python tool resolve JavaScript's
# undefined (toolResolvesNothing), and no entry for a loop's single-call function (runToolCall,
# §13.7: pi's runToolCall, which Python loops rarely export), and it always hands the adapter
# a model (defaultModel, §13.8: an Agent given none). The others it serves: Agent scenarios when the adapter gives
# serve() an agent function (else the hello lacks "agent"), stream options (§13.4) through
# Session.open_stream's options, and an answer's abort (abortInHook, §13.5): it fires the run's
# abort before the hook returns, and the loop is tested on what it does then. Hook answers that
# wait (waitingHooks, §13.6: a delay, or a hold until the signal the loop gave the hook fires)
# only when the adapter says it passes each hook's signal on (serve(waiting_hooks=True)):
# an adapter that does not would hold a hook for ever.
KIT_LACKS = ("toolResolvesNothing", "runToolCall", "defaultModel")

# Every hook of the protocol, by pi's names.
ALL_HOOKS = (
    "convertToLlm", "transformContext", "getApiKey", "prepareRequest", "prepareNextTurn",
    "finishTurn", "getSteeringMessages", "getFollowUpMessages", "beforeToolCall", "afterToolCall",
)

RunFn = Callable[[Session], Union[Awaitable[Any], Any]]
AgentFn = Callable[[Session], Any]  # builds an Agent scenario's Agent; returns its handler (agent.py)


class Kit:
    """Serves one adapter process. Use :func:`serve`; this class is public for tests."""

    def __init__(self, run: RunFn, *, name: str, version: str, tracks: str, hooks: Iterable[str],
                 capabilities: dict[str, Any] | None = None, clock: Clock | None = None,
                 reader: BinaryIO | None = None, writer: BinaryIO | None = None,
                 to_json: Callable[[Any], Any] | None = None, agent: AgentFn | None = None,
                 waiting_hooks: bool = False) -> None:
        if not callable(run):
            raise TypeError(f"turnstile_kit: serve(run, ...) needs run, a function (session) -> the run's new messages; "
                            f"got {type(run).__name__}")
        if agent is not None and not callable(agent):
            raise TypeError(f"turnstile_kit: serve(agent=...) must be a function (session) -> a handler with "
                            f"operate(op); got {type(agent).__name__}")
        self.run = run
        self.agent = agent
        self.waiting_hooks = waiting_hooks  # the adapter passes hooks their signals: it serves §13.6
        self.is_async = inspect.iscoroutinefunction(run)
        self.hello = {"type": "hello", "protocol": PROTOCOL, "name": name, "version": version,
                      "tracks": tracks, "capabilities": {"hooks": list(hooks), "deliveriesAhead": True, "standingAnswers": True,
                                       **(capabilities or {})}}
        self.wire = Wire(reader, writer, to_json)
        self.clock = clock or CLOCK
        self.session: Session | None = None
        self.failed_session: int | None = None  # the session a fatal error ended, for its report
        self.call_id = 0
        self.protocol = 1  # the version spoken, once the hellos are exchanged
        # Deliveries that came ahead, while a call waited for its answer (PROTOCOL.md §14),
        # with their line numbers: each is applied once the session is idle.
        self.queued: list[tuple[dict[str, Any], int]] = []

    def _next_call_id(self) -> int:
        self.call_id += 1
        return self.call_id

    # ---- entry point

    def serve(self) -> int:
        """Serves until shutdown (0) or a protocol error (1, after reporting it)."""
        try:
            while True:
                msg = self.wire.receive()
                kind = msg["type"]
                if kind == "hello":
                    self.wire.send(self._hello_for(msg))
                elif kind == "start":
                    self._session(msg)
                else:
                    raise ProtocolError(f'protocol error at line {self.wire.line}: unexpected "{kind}" message (no session is running)')
        except Shutdown:
            return 0
        except (ProtocolError, AdapterError) as err:
            self.wire.fatal = None
            self._report(str(err), self.failed_session)
            return 1

    def _hello_for(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The hello in the newest version both speak (the harness lists them in ``protocols``,
        or a version-1 harness gives only ``protocol``), PROTOCOL.md §13.1. In version 2 it lacks
        what the kit cannot serve (KIT_LACKS), "agent" without an agent function and
        "waitingHooks" unless the adapter serves it (waiting_hooks=True); in version 1
        it names no version-2 feature."""
        theirs = msg.get("protocols") if isinstance(msg.get("protocols"), list) else [msg.get("protocol")]
        common = [v for v in theirs if isinstance(v, int) and 1 <= v <= PROTOCOL]
        if not common:
            raise ProtocolError(f"the harness speaks protocol {theirs}; this adapter speaks 1 to {PROTOCOL}")
        self.protocol = max(common)
        hello = {**self.hello, "protocol": self.protocol, "capabilities": dict(self.hello["capabilities"])}
        lacks = [f for f in hello["capabilities"].get("lacks", []) if self.protocol >= 2 or f not in V2_FEATURES]
        if self.protocol >= 2:
            kit_lacks = (() if self.agent else ("agent",)) + KIT_LACKS + (() if self.waiting_hooks else ("waitingHooks",))
            lacks += [f for f in kit_lacks if f not in lacks]
        if lacks:
            hello["capabilities"]["lacks"] = lacks
        else:
            hello["capabilities"].pop("lacks", None)
        return hello

    def _report(self, message: str, session: int | None = None) -> None:
        msg: dict[str, Any] = {"type": "error", "message": message}
        if session is not None:
            msg["session"] = session
        try:
            self.wire.send(msg)
        except (OSError, ValueError):
            pass

    # ---- a session

    def _session(self, msg: dict[str, Any]) -> None:
        setup = msg.get("setup")
        if not isinstance(setup, dict) or not isinstance(msg.get("session"), int):
            raise ProtocolError(f"protocol error at line {self.wire.line}: start needs a session number and a setup")
        self.clock.ms = 0
        self.queued.clear()
        s = Session(self, msg["session"], setup, self.wire, self.clock, self._standing_answers(msg))
        self.session = s
        try:
            if self.is_async:
                self._run_async(s)
            else:
                self._run_sync(s)
        except SystemExit:
            self.failed_session = s.id
            raise
        finally:
            self.session = None

    def _standing_answers(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The answers a start promises to every call of a hook (PROTOCOL.md §15), when the hello
        claimed standingAnswers: answer data (objects) by hook name; {} when there are none."""
        answers = msg.get("standingAnswers")
        if answers is None or self.hello["capabilities"].get("standingAnswers") is not True:
            return {}
        if not isinstance(answers, dict) or not all(isinstance(a, dict) for a in answers.values()):
            raise ProtocolError(f"protocol error at line {self.wire.line}: start's standingAnswers must be an object of "
                                "answer data (objects) by hook name")
        return answers

    def _begin_agent(self, s: Session) -> bool:
        """An Agent scenario (version 2, ``entry: "agent"``) starts nothing: the adapter's
        ``agent(session)`` builds the Agent and subscribes its listener, the operations are the
        deliveries, and it has no ``end``. Returns whether the session is one."""
        if s.setup.get("entry") != "agent":
            return False
        if self.protocol < 2 or self.agent is None:
            why = "protocol 1 was negotiated" if self.protocol < 2 else "the adapter gave serve() no agent function"
            raise AdapterError(f'session {s.id} is an Agent scenario (entry "agent"), but {why}')
        s.agent_handler = check_handler(self.agent(s))
        return True

    def _end(self, s: Session, messages: Any = None, error: BaseException | None = None) -> None:
        if error is not None:
            s.notify("end", {"error": error_text(error)})
        else:
            s.notify("end", {"messages": messages if messages is not None else []})

    def _check(self, msg: dict[str, Any], s: Session, line: int) -> None:
        if msg.get("session") != s.id:
            raise ProtocolError(f'protocol error at line {line}: a "{msg["type"]}" for session {msg.get("session")}, but session {s.id} is running')

    def _receive_answer(self) -> dict[str, Any]:
        """The next message for a call waiting for its answer. A delivery sent ahead (§14: the
        hello says ``deliveriesAhead``) is queued, to be applied once the session is idle,
        exactly as if it had come after the idle."""
        while True:
            msg = self.wire.receive()
            if msg["type"] != "deliver":
                return msg
            self.queued.append((msg, self.wire.line))

    def _next(self, s: Session) -> dict[str, Any]:
        """The next deliver or stop of session s, a delivery that came ahead first (anything
        else is a protocol error)."""
        if self.queued:
            msg, line = self.queued.pop(0)
        else:
            msg, line = self.wire.receive(), self.wire.line
        if msg["type"] not in ("deliver", "stop"):
            raise ProtocolError(f'protocol error at line {line}: unexpected "{msg["type"]}" message while session {s.id} runs')
        self._check(msg, s, line)
        return msg

    def _apply(self, s: Session, msg: dict[str, Any]) -> bool:
        """Applies a delivery; False (after reporting it) when it names nothing known."""
        try:
            s.deliver(msg.get("delivery") or {})
            return True
        except DeliveryError as err:
            self._report(str(err), s.id)
            return False

    # asyncio: the run is a task on a VirtualLoop; idle is an empty ready queue.
    def _run_async(self, s: Session) -> None:
        vloop = VirtualLoop(self.clock.seconds)
        s.vloop = vloop
        with vloop.entered():  # the Agent may make futures, events, tasks
            if self._begin_agent(s):
                task = None
            else:
                task = vloop.create_task(self.run(s))
                task.add_done_callback(lambda t: self._done(s, t))

        def settle() -> None:
            vloop.run_until_idle()
            if self.wire.fatal is not None:  # a task met shutdown / a protocol error in a call
                raise self.wire.fatal

        try:
            settle()
            self.wire.send({"type": "idle", "session": s.id})
            while True:
                msg = self._next(s)
                if msg["type"] == "stop":
                    with vloop.entered():
                        s.stop()
                    settle()
                    for t in asyncio.all_tasks(vloop):
                        t.cancel()
                    settle()
                    self.wire.send({"type": "stopped", "session": s.id})
                    return
                with vloop.entered():
                    applied = self._apply(s, msg)
                if applied:
                    settle()
                    self.wire.send({"type": "idle", "session": s.id})
        finally:
            if task is not None and task.done() and not task.cancelled():
                task.exception()  # retrieved: a shutdown met inside the run is not an error to log
            vloop.close()

    def _done(self, s: Session, t: asyncio.Task) -> None:
        """The run's task is over: its messages, or its failure, are the ``end`` notification."""
        if t.cancelled():
            return
        err = t.exception()
        if self.wire.fatal is not None:
            return
        if err is not None and not s.stopping:
            _log_failure(err)
        self._end(s, None if err else t.result(), err)

    # synchronous: the run is called directly; it parks in the kit whenever it waits. An Agent
    # scenario's operations run inside the parks: a prompt's run blocks in its delivery, and the
    # deliveries it waits for (operations too) are applied in the kit's park below it.
    def _run_sync(self, s: Session) -> None:
        if self._begin_agent(s):
            while not s.stopping:
                self._park(s)
            self.wire.send({"type": "stopped", "session": s.id})
            return
        try:
            messages = self.run(s)
            err = None
        except SystemExit:  # Shutdown, ProtocolError, AdapterError
            raise
        except Exception as e:  # the run failed: pi's rejected promise
            messages, err = None, e
            if not s.stopping:
                _log_failure(e)
        if s.stopping:
            self.wire.send({"type": "stopped", "session": s.id})
            return
        self._end(s, messages, err)
        while not s.stopping:
            self._park(s)
        self.wire.send({"type": "stopped", "session": s.id})

    def _park(self, s: Session) -> None:
        """Synchronous loops: report idle, then apply the next delivery, or the stop."""
        self.wire.send({"type": "idle", "session": s.id})
        while True:
            msg = self._next(s)
            if msg["type"] == "stop":
                s.stop()
                return
            if self._apply(s, msg):
                return
            self.wire.send({"type": "idle", "session": s.id})


CLOCK = Clock()


# Exceptions that are almost always a bug in the loop or the adapter rather than a failure
# the loop means to report: a failed run raising one gets its traceback on stderr.
_BUG_TYPES = (LookupError, TypeError, AttributeError, NameError, AssertionError, ZeroDivisionError, RecursionError)


def _log_failure(err: BaseException) -> None:
    """A failed run on stderr, by what it most likely is. A CallError is the harness's own
    scripted error passed on (the provider failed, a hook threw): nothing is logged. A bug
    (KeyError, TypeError, …) gets its traceback; any other exception one line. With
    TURNSTILE_KIT_DEBUG set, every failure gets its traceback."""
    if os.environ.get("TURNSTILE_KIT_DEBUG") or isinstance(err, _BUG_TYPES):
        print(f"turnstile_kit: the run failed with {type(err).__name__}:", file=sys.stderr)
        traceback.print_exception(err, file=sys.stderr)
    elif not isinstance(err, CallError):
        print(f"turnstile_kit: the run failed: {type(err).__name__}: {err}", file=sys.stderr)


def now() -> int | float:
    """The virtual time in milliseconds (the ``now`` of the latest delivery; 0 after start)."""
    return CLOCK.now()


def serve(run: RunFn, *, name: str, version: str = "0.0.0", tracks: str = "1.6.0",
          hooks: Iterable[str] = (), lacks: Iterable[str] = (),
          capabilities: dict[str, Any] | None = None, to_json: Callable[[Any], Any] | None = None,
          agent: AgentFn | None = None, waiting_hooks: bool = False) -> None:
    """Serves the protocol on stdin/stdout and exits: 0 at shutdown, 1 after a protocol error.

    ``run(session)`` builds the loop for ``session.setup`` and runs it, returning the run's new
    messages (the ``end`` notification) or raising (a failed run). Make it ``async def`` for an
    asyncio loop, a plain ``def`` for a synchronous one. ``hooks`` are the hooks you can
    install (the hello's ``capabilities.hooks``); ``lacks`` the optional features your loop
    does not have (``capabilities.lacks``: continue, severalPrompts, customMessages,
    prepareArguments, argumentMutation, throwingHooks, throwingStreams, argumentsError,
    structuredContent, and of version 2 streamOptions and abortInHook; the kit adds
    toolResolvesNothing itself, and agent when there is no ``agent``), whose scenarios the
    harness then skips; ``capabilities`` adds any other key. ``agent(session)`` serves Agent
    scenarios (PROTOCOL.md §13.2, ``setup["entry"] == "agent"``): called instead of ``run``, it
    builds the Agent, subscribes ``session.agent_event`` as its listener and returns a handler
    with ``operate(op)`` and optionally ``abort()`` (see agent.py); Agent sessions run in
    ``run``'s mode (asyncio when it is ``async def``). ``waiting_hooks=True`` says the adapter
    calls each hook with the signal the loop gave it (``session.hook(name, data, signal=...)``,
    ``await session.hook_async(...)`` under asyncio; the Agent's listener
    ``session.agent_event(event, signal)``): the harness may then answer a hook later
    (PROTOCOL.md §13.6, feature waitingHooks); without it the hello lacks waitingHooks.
    ``to_json(obj)`` turns objects ``json`` cannot write (your message classes) into JSON
    values in pi's shapes; without it such an object ends the adapter with a clear error. stdout carries the protocol only: from here on ``print`` writes to stderr.
    """
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr  # print() in the loop or the adapter must not corrupt the protocol
    extra = dict(capabilities or {})
    if lacks:
        extra["lacks"] = list(lacks)
    kit = Kit(run, name=name, version=version, tracks=tracks, hooks=hooks, capabilities=extra,
              writer=protocol_out, to_json=to_json, agent=agent, waiting_hooks=waiting_hooks)
    sys.exit(kit.serve())
