"""A stateful Agent on the asyncio loop (agentloop.py), written from turnstile's contract of
pi's Agent (docs/SEMANTICS.md, "The Agent", R-AGENT-*); its synchronous twin is syncagent.py.

``prompt`` and ``continue_`` start a run at once (refusing, with AgentError, while one is
active) and return its task; listeners are awaited, in subscription order, after the Agent has
updated its state for the event. It knows nothing of turnstile.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Optional

from agentloop import Config, Context, run_agent_loop, run_agent_loop_continue
from agentstate import AgentState, Signal
from transcript import Message


class Agent(AgentState):
    """pi's Agent on the asyncio loop. ``stream_fn`` is the loop's stream function; the other
    options are AgentState's. Its methods must be called inside the running event loop."""

    def __init__(self, *, stream_fn: Any, **options: Any) -> None:
        super().__init__(**options)
        self.stream_fn = stream_fn
        self._idle: Optional[asyncio.Future] = None  # resolved when the active run is over

    def prompt(self, prompt: Any) -> asyncio.Task:
        """R-AGENT-PROMPT: starts a run from a text or messages; the task settles when it is over."""
        return self._start(self.prompts_for(prompt), False)

    def continue_(self) -> asyncio.Task:
        """R-AGENT-CONTINUE: starts a run from the transcript (or the queues, after an assistant)."""
        prompts, skip = self.continue_plan()
        return self._start(prompts, skip)

    def wait_for_idle(self) -> asyncio.Future:
        """R-AGENT-LISTENERS: resolves when the active run is over (before its prompt's task
        does), at once when idle."""
        if self._idle is not None:
            return self._idle
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    def _start(self, prompts: Optional[list[Message]], skip_first_steering_poll: bool) -> asyncio.Task:
        """Makes the Agent busy now and starts the run's task."""
        signal = self.begin_run()
        loop = asyncio.get_running_loop()
        self._idle = loop.create_future()
        return loop.create_task(self._run(prompts, skip_first_steering_poll, signal))

    async def _run(self, prompts: Optional[list[Message]], skip: bool, signal: Signal) -> None:
        """One run of the loop; a failure ends it with the error turn (R-AGENT-ERROR-TURN)."""
        context = Context(list(self.messages), list(self.tools))

        async def steering() -> list[Message]:
            return self.poll_steering()

        async def follow_up() -> list[Message]:
            return self.poll_follow_up()

        config = Config(**self.config_fields(skip), get_steering_messages=steering, get_follow_up_messages=follow_up)
        try:
            try:
                if prompts is not None:
                    await run_agent_loop(prompts, context, config, self._emit, signal, self.stream_fn)
                else:
                    await run_agent_loop_continue(context, config, self._emit, signal, self.stream_fn)
            except Exception as err:
                await self._error_turn(err, signal)
        finally:
            self.end_run()
            idle, self._idle = self._idle, None
            if idle is not None and not idle.done():
                idle.set_result(None)  # waitForIdle's waiters first, then this task's own

    async def _emit(self, event: dict[str, Any]) -> None:
        """Updates the state for the event, then awaits each listener in turn."""
        self.apply(event)
        for listener in list(self.listeners):
            out = listener(event)
            if inspect.isawaitable(out):
                await out

    async def _error_turn(self, err: BaseException, signal: Signal) -> None:
        """R-AGENT-ERROR-TURN: message_start, message_end, turn_end and agent_end of the
        synthetic assistant message."""
        message = self.error_turn_message(err, signal)
        await self._emit({"type": "message_start", "message": message})
        await self._emit({"type": "message_end", "message": message})
        await self._emit({"type": "turn_end", "message": message, "toolResults": []})
        await self._emit({"type": "agent_end", "messages": [message]})
