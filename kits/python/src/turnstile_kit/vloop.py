"""An asyncio event loop with no I/O, no threads and no real time, that knows when it is idle.

The kit runs an asyncio agent loop on a :class:`VirtualLoop`. Such a loop holds exactly one
queue of runnable callbacks (``call_soon``). It has no selector, no executor, no
thread-safe entry and no timers, so a callback can only become runnable because

* another callback ran and scheduled it (a task step, a future's done-callback), or
* the kit resolved a future while applying a delivery or a stop.

:meth:`VirtualLoop.run_until_idle` runs callbacks until the queue is empty. At that point no
callback is queued and none can be queued until the kit itself resolves something: every task
is parked on a future that only a delivery (or a stop) settles, or has finished. That is the
protocol's ``idle``, exactly, with no guessing ("N quiet passes") involved.

What a loop cannot do on it, and why: real timers (``asyncio.sleep(d > 0)``, ``call_later``,
``wait_for`` with a timeout) — time only moves with deliveries; threads
(``run_in_executor``, ``to_thread``, ``call_soon_threadsafe``) and I/O — they would make
progress that the kit cannot see. Each raises :class:`VirtualLoopError` with the reason.

It uses two semi-public pieces of asyncio meant for loop implementations:
``asyncio.events._set_running_loop`` / ``_get_running_loop`` (exported in ``asyncio.events.__all__``)
and ``Handle._run`` (which routes a callback's exception to the exception handler).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import sys
from typing import Any, Callable


class VirtualLoopError(RuntimeError):
    """A loop asked the virtual event loop for something it cannot do (timers, threads, I/O)."""


# The most callbacks run_until_idle runs before it gives up: a loop that keeps itself busy
# forever (a spin on ``await asyncio.sleep(0)``) is reported instead of hanging the adapter.
MAX_STEPS = 10_000_000


class VirtualLoop(asyncio.AbstractEventLoop):
    """An asyncio event loop driven by :meth:`run_until_idle`; ``time()`` is virtual (seconds)."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self._ready: collections.deque[asyncio.Handle] = collections.deque()
        self._clock = clock or (lambda: 0.0)
        self._closed = False
        self._running = False
        self._debug = False
        self._exception_handler = None
        self._task_factory = None
        self.errors: list[str] = []  # unhandled exceptions reported by asyncio, for the kit

    # ---- driving

    def run_until_idle(self) -> None:
        """Runs runnable callbacks until none is left: every task then waits on the kit."""
        if self._closed:
            raise VirtualLoopError("the virtual loop is closed")
        previous = asyncio.events._get_running_loop()
        asyncio.events._set_running_loop(self)
        self._running = True
        try:
            steps = 0
            while self._ready:
                handle = self._ready.popleft()
                if not handle.cancelled():
                    handle._run()
                steps += 1
                if steps > MAX_STEPS:
                    raise VirtualLoopError(f"the loop never became idle ({MAX_STEPS} callbacks in a row)")
        finally:
            self._running = False
            asyncio.events._set_running_loop(previous)

    @contextlib.contextmanager
    def entered(self):
        """Runs a block as if inside the loop (get_running_loop() is this loop), e.g. a delivery's
        callbacks: abort listeners and tool updates may create tasks and futures."""
        previous = asyncio.events._get_running_loop()
        asyncio.events._set_running_loop(self)
        try:
            yield self
        finally:
            asyncio.events._set_running_loop(previous)

    def has_ready(self) -> bool:
        """Reports whether a callback is runnable (False right after run_until_idle)."""
        return bool(self._ready)

    # ---- what tasks and futures use

    def call_soon(self, callback, *args, context: contextvars.Context | None = None) -> asyncio.Handle:
        self._check_closed()
        handle = asyncio.Handle(callback, args, self, context)
        self._ready.append(handle)
        return handle

    def call_later(self, delay, callback, *args, context=None):
        if delay <= 0:
            return self.call_soon(callback, *args, context=context)
        raise VirtualLoopError(
            f"a timer of {delay}s was asked for: under turnstile time only moves with deliveries "
            "(no asyncio.sleep(d > 0), call_later or timeouts in the loop under test)")

    def call_at(self, when, callback, *args, context=None):
        return self.call_later(when - self.time(), callback, *args, context=context)

    def time(self) -> float:
        return self._clock()

    def create_future(self) -> asyncio.Future:
        return asyncio.Future(loop=self)

    def create_task(self, coro, *, name=None, context=None) -> asyncio.Task:
        self._check_closed()
        if self._task_factory is not None:
            return self._task_factory(self, coro, context=context) if context else self._task_factory(self, coro)
        return asyncio.Task(coro, loop=self, name=name, context=context)

    def set_task_factory(self, factory) -> None:
        self._task_factory = factory

    def get_task_factory(self):
        return self._task_factory

    def is_running(self) -> bool:
        return self._running

    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._ready.clear()
        self._closed = True

    def get_debug(self) -> bool:
        return self._debug

    def set_debug(self, enabled: bool) -> None:
        self._debug = enabled

    def default_exception_handler(self, context: dict[str, Any]) -> None:
        message = context.get("message", "unhandled exception in the event loop")
        exc = context.get("exception")
        text = f"{message}: {exc!r}" if exc is not None else message
        self.errors.append(text)
        print(f"turnstile_kit: {text}", file=sys.stderr)

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        if self._exception_handler is not None:
            self._exception_handler(self, context)
        else:
            self.default_exception_handler(context)

    def set_exception_handler(self, handler) -> None:
        self._exception_handler = handler

    def get_exception_handler(self):
        return self._exception_handler

    async def shutdown_asyncgens(self) -> None:
        return None

    async def shutdown_default_executor(self, timeout=None) -> None:
        return None

    # ---- what it refuses

    def _check_closed(self) -> None:
        if self._closed:
            raise VirtualLoopError("the virtual loop is closed")

    def call_soon_threadsafe(self, *args, **kwargs):
        raise VirtualLoopError("threads cannot wake the virtual loop: the kit could not know when it is idle")

    def run_in_executor(self, *args, **kwargs):
        raise VirtualLoopError("run_in_executor / to_thread: threads make progress the kit cannot see")

    def run_forever(self):
        raise VirtualLoopError("the kit drives the virtual loop (run_until_idle); do not run it yourself")

    def run_until_complete(self, future):
        raise VirtualLoopError("the kit drives the virtual loop (run_until_idle); do not run it yourself")

    def stop(self):
        raise VirtualLoopError("the kit drives the virtual loop; it cannot be stopped from inside")
