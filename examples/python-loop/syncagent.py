"""The synchronous twin of agent.py: a stateful Agent on the synchronous loop (syncloop.py).

``prompt`` and ``continue_`` run the loop to its end and return (refusing, with AgentError,
while a run is active); listeners are called in subscription order after the Agent has updated
its state for the event. Whatever else happens during a run — steering, aborting, reading the
state, asking to be told when the run is over — comes from code the run's own waits call (under
turnstile: the kit applies the operations that arrive while the loop waits).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from agentstate import AgentState, Signal
from syncloop import Config, Context, run_agent_loop, run_agent_loop_continue
from transcript import Message


class SyncAgent(AgentState):
    """pi's Agent on the synchronous loop. ``stream_fn`` and ``wait_any`` are the loop's; the
    other options are AgentState's."""

    def __init__(self, *, stream_fn: Any, wait_any: Any = None, **options: Any) -> None:
        super().__init__(**options)
        self.stream_fn = stream_fn
        self.wait_any = wait_any
        self._when_idle: list[Callable[[], Any]] = []

    def prompt(self, prompt: Any) -> None:
        """R-AGENT-PROMPT: runs the loop from a text or messages; returns when the run is over."""
        self._run(self.prompts_for(prompt), False)

    def continue_(self) -> None:
        """R-AGENT-CONTINUE: runs the loop from the transcript (or the queues, after an assistant)."""
        prompts, skip = self.continue_plan()
        self._run(prompts, skip)

    def when_idle(self, callback: Callable[[], Any]) -> None:
        """R-AGENT-LISTENERS' waitForIdle: calls back when the active run is over (before its
        prompt returns), at once when idle."""
        if self.is_streaming:
            self._when_idle.append(callback)
        else:
            callback()

    def _run(self, prompts: Optional[list[Message]], skip: bool) -> None:
        """One run of the loop; a failure ends it with the error turn (R-AGENT-ERROR-TURN)."""
        signal = self.begin_run()
        context = Context(list(self.messages), list(self.tools))
        config = Config(**self.config_fields(skip), wait_any=self.wait_any,
                        get_steering_messages=self.poll_steering, get_follow_up_messages=self.poll_follow_up)
        try:
            try:
                if prompts is not None:
                    run_agent_loop(prompts, context, config, self._emit, signal, self.stream_fn)
                else:
                    run_agent_loop_continue(context, config, self._emit, signal, self.stream_fn)
            except Exception as err:
                self._error_turn(err, signal)
        finally:
            self.end_run()
            callbacks, self._when_idle = self._when_idle, []
            for callback in callbacks:
                callback()

    def _emit(self, event: dict[str, Any]) -> None:
        """Updates the state for the event, then calls each listener in turn."""
        self.apply(event)
        for listener in list(self.listeners):
            listener(event)

    def _error_turn(self, err: BaseException, signal: Signal) -> None:
        """R-AGENT-ERROR-TURN: message_start, message_end, turn_end and agent_end of the
        synthetic assistant message."""
        message = self.error_turn_message(err, signal)
        self._emit({"type": "message_start", "message": message})
        self._emit({"type": "message_end", "message": message})
        self._emit({"type": "turn_end", "message": message, "toolResults": []})
        self._emit({"type": "agent_end", "messages": [message]})
