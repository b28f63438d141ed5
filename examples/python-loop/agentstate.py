"""What the asyncio Agent (agent.py) and its synchronous twin (syncagent.py) share because it
never waits: the state an Agent exposes, its queues, its refusals and its error turn. Written
from turnstile's contract of pi's Agent (docs/SEMANTICS.md, "The Agent", R-AGENT-*).

An Agent owns a transcript, the executable tools, a steering and a follow-up queue with their
modes, and runs the loop for ``prompt`` and ``continue``; the twins differ only in how a run
waits (``await`` or blocking).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from transcript import Message, declared_tools

# R-AGENT-BUSY: the refusal texts, byte for byte.
BUSY_PROMPT = "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
BUSY_CONTINUE = "Agent is already processing. Wait for completion before continuing."
BUSY_RESET = "Agent is already processing. Wait for completion before resetting."
# R-AGENT-CONTINUE's refusals.
NOTHING_TO_CONTINUE = "No messages to continue from"
CONTINUE_FROM_ASSISTANT = "Cannot continue from message role: assistant"

UNKNOWN_MODEL = {"id": "unknown", "name": "unknown", "api": "unknown", "provider": "unknown"}


class AgentError(Exception):
    """An operation the Agent refuses (busy, nothing to continue); nothing has changed."""


class Signal:
    """A run's abort signal, as the loop reads it (``signal.aborted``)."""

    def __init__(self) -> None:
        self.aborted = False

    def abort(self) -> None:
        """Aborts the run: the loop sees it at its next check."""
        self.aborted = True


class Queue:
    """A queue with a mode: a poll takes the oldest message (one-at-a-time) or every one (all)."""

    def __init__(self, mode: Optional[str]) -> None:
        self.mode = mode or "one-at-a-time"
        self.items: list[Message] = []

    def peek(self) -> list[Message]:
        """What the next poll would take, without taking it."""
        return list(self.items) if self.mode == "all" else self.items[:1]

    def drain(self) -> list[Message]:
        """Takes what a poll takes, by the mode now."""
        taken = self.peek()
        self.items = self.items[len(taken):]
        return taken


def current_system_message(messages: list[Message]) -> Optional[Message]:
    """pi-ai's getCurrentSystemMessage: every system message replayed into one (the non-empty
    contents joined by a blank line, sections patched by name, the tools the transcript
    declares, the first one's timestamp); None without a system message or a declared tool."""
    content: list[str] = []
    sections: dict[str, Any] = {}
    timestamp = None
    for m in messages:
        if m.get("role") != "system":
            continue
        if timestamp is None:
            timestamp = m.get("timestamp", 0)
        text = m.get("content")
        if isinstance(text, list):
            text = "\n".join(b.get("text", "") for b in text if isinstance(b, dict) and b.get("type") == "text")
        if text:
            content.append(text)
        for name, value in (m.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    tools = list(declared_tools(messages).values())
    if timestamp is None and not tools:
        return None
    out: Message = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = tools
    out["timestamp"] = timestamp or 0
    return out


class AgentState:
    """The Agent minus its runs: state, queues, listeners and the operations that never wait.

    ``hooks`` are the loop's hooks by Config field name (convert_to_llm, …), in the twin's
    style (async or not); the Agent answers the queue polls itself.
    """

    def __init__(self, *, system_prompt: Optional[str] = None, model: Optional[dict[str, Any]] = None,
                 thinking_level: Optional[str] = None, tools: Optional[list[Any]] = None,
                 messages: Optional[list[Message]] = None, steering_mode: Optional[str] = None,
                 follow_up_mode: Optional[str] = None, tool_execution: Optional[str] = None,
                 session_id: Optional[str] = None, identity: Optional[dict[str, Any]] = None,
                 hooks: Optional[dict[str, Any]] = None, clock: Callable[[], int | float] = lambda: 0) -> None:
        self.model = model or dict(UNKNOWN_MODEL)
        self.thinking_level = thinking_level or "off"
        self.tools = list(tools or [])
        self.messages = list(messages or [])
        prompt = system_prompt or ""
        # R-AGENT-STATE: a leading system message with the prompt and the tools, when the given
        # messages do not start with one and either is non-empty.
        if (not self.messages or self.messages[0].get("role") != "system") and (prompt or self.tools):
            sys_msg: Message = {"role": "system", "content": prompt, "timestamp": 0}
            if self.tools:
                sys_msg["toolsAdded"] = [t.declaration() for t in self.tools]
            self.messages.insert(0, sys_msg)
        self.tool_execution = tool_execution or "parallel"
        self.session_id = session_id
        self.identity = identity
        self.hooks = dict(hooks or {})
        self.clock = clock
        self.steering = Queue(steering_mode)
        self.follow_up_queue = Queue(follow_up_mode)
        self.listeners: list[Callable[[dict[str, Any]], Any]] = []
        self.is_streaming = False
        self.streaming_message: Optional[Message] = None
        self.pending_tool_calls: list[str] = []  # in the order the calls started
        self.error_message: Optional[str] = None
        self.signal: Optional[Signal] = None  # the active run's, None when idle
        self._skip = False  # the active run's first steering poll answers nothing (a continue)

    # ---- listeners and the state they see

    def subscribe(self, listener: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        """Adds a listener; returns the function that removes it."""
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None

    def apply(self, event: dict[str, Any]) -> None:
        """R-AGENT-STATE: the state changes an event makes, before listeners see it."""
        kind = event.get("type")
        if kind in ("message_start", "message_update"):
            self.streaming_message = event.get("message")
        elif kind == "message_end":
            self.streaming_message = None
            self.messages.append(event.get("message"))
        elif kind == "tool_execution_start":
            self.pending_tool_calls.append(event.get("toolCallId"))
        elif kind == "tool_execution_end":
            if event.get("toolCallId") in self.pending_tool_calls:
                self.pending_tool_calls.remove(event.get("toolCallId"))
        elif kind == "turn_end":
            message = event.get("message") or {}
            if message.get("errorMessage") is not None:
                self.error_message = message["errorMessage"]

    # ---- the queues (R-AGENT-QUEUES)

    def steer(self, message: Message) -> None:
        """Queues a steering message: taken at the next steering poll."""
        self.steering.items.append(message)

    def follow_up(self, message: Message) -> None:
        """Queues a follow-up: taken only when the run would otherwise stop."""
        self.follow_up_queue.items.append(message)

    def clear_steering_queue(self) -> None:
        """Drops every queued steering message."""
        self.steering.items = []

    def clear_follow_up_queue(self) -> None:
        """Drops every queued follow-up."""
        self.follow_up_queue.items = []

    def clear_all_queues(self) -> None:
        """Drops every queued message."""
        self.clear_steering_queue()
        self.clear_follow_up_queue()

    def peek_queued_messages(self) -> list[Message]:
        """What the next poll would take: the steering queue's by its mode, else the follow-up's."""
        return self.steering.peek() or self.follow_up_queue.peek()

    def has_queued_messages(self) -> bool:
        """Whether either queue holds a message."""
        return bool(self.steering.items or self.follow_up_queue.items)

    # ---- operations that never wait

    def abort(self) -> None:
        """R-AGENT-ABORT: aborts the active run's signal; nothing when idle."""
        if self.signal is not None:
            self.signal.abort()

    def reset(self) -> None:
        """R-AGENT-RESET: the replayed system message alone; both queues and the error cleared."""
        if self.is_streaming:
            raise AgentError(BUSY_RESET)
        sys_msg = current_system_message(self.messages)
        self.messages = [sys_msg] if sys_msg else []
        self.clear_all_queues()
        self.error_message = None
        self.streaming_message = None
        self.pending_tool_calls = []

    def prompts_for(self, prompt: Any) -> list[Message]:
        """R-AGENT-PROMPT's input: a text (one user message stamped now), a message or messages.
        Refuses while a run is active."""
        if self.is_streaming:
            raise AgentError(BUSY_PROMPT)
        if isinstance(prompt, str):
            return [{"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": self.clock()}]
        return list(prompt) if isinstance(prompt, list) else [prompt]

    def continue_plan(self) -> tuple[Optional[list[Message]], bool]:
        """R-AGENT-CONTINUE: (prompts, skip the first steering poll); prompts None for the loop's
        own continue. Raises AgentError for a refusal."""
        if self.is_streaming:
            raise AgentError(BUSY_CONTINUE)
        if not any(m.get("role") != "system" for m in self.messages):
            raise AgentError(NOTHING_TO_CONTINUE)
        if self.messages[-1].get("role") != "assistant":
            return None, False
        steering = self.steering.drain()
        if steering:
            return steering, True
        follow_ups = self.follow_up_queue.drain()
        if follow_ups:
            return follow_ups, False
        raise AgentError(CONTINUE_FROM_ASSISTANT)

    # ---- a run's beginning and its configuration

    def begin_run(self) -> Signal:
        """Marks the Agent busy (R-AGENT-STATE: a run's start clears the streaming message and
        the error); returns the run's abort signal."""
        self.is_streaming = True
        self.streaming_message = None
        self.error_message = None
        self.signal = Signal()
        return self.signal

    def end_run(self) -> None:
        """The run is over, its agent_end listeners returned: the Agent is idle."""
        self.is_streaming = False
        self.signal = None

    def config_fields(self, skip_first_steering_poll: bool) -> dict[str, Any]:
        """The loop Config's fields for one run, but the queue polls (the twin adds those, with
        :meth:`poll_steering` and :meth:`poll_follow_up`). pi's Agent has no static API key."""
        self._skip = skip_first_steering_poll
        return {"model": self.model, "clock": self.clock, "thinking_level": self.thinking_level,
                "api_key": None, "tool_execution": self.tool_execution, "session_id": self.session_id,
                "identity": self.identity, **self.hooks}

    def poll_steering(self) -> list[Message]:
        """A steering poll of the run: the queue by its mode now (nothing, once, after a continue
        that ran the steering queue as prompts)."""
        if self._skip:
            self._skip = False
            return []
        return self.steering.drain()

    def poll_follow_up(self) -> list[Message]:
        """A follow-up poll of the run: the queue by its mode now."""
        return self.follow_up_queue.drain()

    def error_turn_message(self, err: BaseException, signal: Signal) -> Message:
        """R-AGENT-ERROR-TURN: the synthetic assistant message a failed run ends with."""
        return {"role": "assistant", "content": [{"type": "text", "text": ""}], "api": self.model.get("api"),
                "provider": self.model.get("provider"), "model": self.model.get("id"),
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": "aborted" if signal.aborted else "error", "errorMessage": str(err),
                "timestamp": self.clock()}

    def state(self) -> dict[str, Any]:
        """The observable state (PROTOCOL.md §13.2's ``state``): undefined fields left out."""
        out: dict[str, Any] = {"isStreaming": self.is_streaming, "messages": list(self.messages),
                               "pendingToolCalls": list(self.pending_tool_calls),
                               "queued": self.peek_queued_messages(), "hasQueuedMessages": self.has_queued_messages()}
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        if self.streaming_message is not None:
            out["streamingMessage"] = self.streaming_message
        return out

